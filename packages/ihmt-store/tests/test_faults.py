"""Hostile files and faults on disk (issue #13): what a user, a crash or a damaged disk
leaves in the store, and how the store recovers without deleting or rewriting a leaf."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_store import (
    Branch,
    BranchNotFoundError,
    ChildRef,
    CorruptFileError,
    LeafNotFoundError,
    Store,
    StoreFormatError,
    StoreIOError,
    terms,
)
from ihmt_store._layout import branch_rel, leaf_rel
from ihmt_store.testing import make_leaf, store_with


def _words(i: int) -> str:
    return f"memory {i} keeps the code word qz{i}vork and ordinary filler about the service"


def _find(store: Store, word: str) -> list[str]:
    """The best match (at most one) for a code word."""
    return [c.entry.id for c in store.candidates(word, limit=1)]


def _file_bytes(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root``, as ``strings`` would see them."""
    out = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


# ---------------------------------------------------------------------------- D6
def _traces(root: Path, word: str) -> list[str]:
    needles = {word.encode(), *(t.encode() for t in terms(word) if len(t) >= 6)}
    return sorted(
        name for name, data in _file_bytes(root).items() if any(n in data for n in needles)
    )


def test_forget_leaves_no_trace_of_the_words_in_any_file(tmp_path: Path) -> None:
    # Issue #13 D6: `strings` found a forgotten memory's words in state/index.sqlite3.
    store, leaves = store_with(tmp_path / "m", [_words(i) for i in range(40)])
    victim = leaves[17]
    # Rewritten a few times first, as consolidation and corrections do.
    for round_ in range(3):
        store.annotate(victim.leaf_id, extra={"round": round_})
    assert _traces(tmp_path / "m", "qz17vork")
    store.forget(victim.leaf_id)
    assert _traces(tmp_path / "m", "qz17vork") == []
    assert _find(store, "qz18vork") == [leaves[18].leaf_id]
    store.close()
    assert _traces(tmp_path / "m", "qz17vork") == []


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    count=st.integers(1, 30),
    pick=st.integers(0, 10_000),
    word=st.from_regex(r"[a-z]{3}[0-9]{2}[a-z]{4}", fullmatch=True),
)
def test_any_forgotten_memory_leaves_no_trace(count: int, pick: int, word: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        texts = [f"note {i} about the deploy pipeline and its hosts" for i in range(count)]
        victim = pick % count
        texts[victim] = f"the secret codename is {word} for the release"
        store, leaves = store_with(Path(tmp) / "m", texts)
        store.forget(leaves[victim].leaf_id)
        assert _traces(Path(tmp) / "m", word) == []
        store.close()


# ---------------------------------------------------------------------------- D8
def test_a_leaf_copied_into_a_second_domain_folder_is_reported_and_skipped(
    tmp_path: Path,
) -> None:
    # Issue #13 D8: rebuild failed with UNIQUE constraint failed: items.id.
    store, leaves = store_with(tmp_path / "m", [("infra", _words(1)), ("infra", _words(2))])
    original = tmp_path / "m" / leaf_rel(leaves[0].leaf_id, "infra")
    copy = tmp_path / "m" / "layer0" / "personal" / original.name
    copy.parent.mkdir()
    shutil.copy(original, copy)
    report = store.rebuild()
    assert report.leaves == 2
    assert [p.path for p in report.problems] == ["layer0/personal/" + original.name]
    assert "second copy" in report.problems[0].reason
    assert store.entry(leaves[0].leaf_id).domain == "infra"  # type: ignore[union-attr]
    assert _find(store, "qz1vork") == [leaves[0].leaf_id]
    assert copy.exists() and original.exists()  # recovery deletes nothing
    store.close()
    # A store opened with no index at all (``init --force``) rebuilds the same way.
    shutil.rmtree(tmp_path / "m" / "state")
    reopened = Store.open(tmp_path / "m")
    assert reopened.stats().leaves == 2
    reopened.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(copies=st.lists(st.tuples(st.integers(0, 5), st.sampled_from("abc")), max_size=8))
def test_rebuild_keeps_one_item_per_id_whatever_was_copied_where(
    copies: list[tuple[int, str]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "m"
        store, leaves = store_with(root, [("infra", _words(i)) for i in range(6)])
        for which, folder in copies:
            src = root / leaf_rel(leaves[which].leaf_id, "infra")
            dest = root / "layer0" / folder / src.name
            dest.parent.mkdir(exist_ok=True)
            shutil.copy(src, dest)
        report = store.rebuild()
        assert report.leaves == 6
        assert len(report.problems) == len({(w, f) for w, f in copies})
        assert {e.domain for e in store.iter_entries("leaf")} == {"infra"}
        store.close()


# ---------------------------------------------------------------------------- D9
def _damage(db: Path, rng: random.Random) -> None:
    """Overwrite one whole page (not the first) with noise, as a bad sector or a stray
    write does. (Noise inside a record that still parses is beyond any check short of a
    checksum per row; a damaged page is what SQLite can detect.)"""
    data = bytearray(db.read_bytes())
    page = rng.randrange(1, len(data) // 4096)
    data[page * 4096 : (page + 1) * 4096] = bytes(rng.randrange(256) for _ in range(4096))
    db.write_bytes(bytes(data))


def _closed_index(root: Path) -> Path:
    db = root / "state" / "index.sqlite3"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


@pytest.mark.parametrize("seed", range(16))
def test_an_index_with_damaged_pages_answers_right_and_says_it_was_rebuilt(
    tmp_path: Path, seed: int
) -> None:
    # Issue #13 D9: "database disk image is malformed … report it", or a false NOT FOUND.
    store, leaves = store_with(tmp_path / "m", [_words(i) for i in range(300)])
    store.close()
    db = _closed_index(tmp_path / "m")
    rng = random.Random(seed)
    for _ in range(3):
        _damage(db, rng)
    damaged = Store.open(tmp_path / "m")
    for i in range(0, 300, 13):
        assert _find(damaged, f"qz{i}vork") == [leaves[i].leaf_id]
    assert damaged.stats().leaves == 300
    if damaged.notices:
        assert "rebuilt from the memory files" in damaged.notices[-1]
    damaged.close()


def test_a_damaged_index_met_by_a_read_is_rebuilt_and_the_read_answers(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", [_words(i) for i in range(300)])
    db = tmp_path / "m" / "state" / "index.sqlite3"
    store.close()
    _closed_index(tmp_path / "m")
    # Past the size checked on open, as a large store's index is.
    reader = Store.open(tmp_path / "m")
    data = bytearray(db.read_bytes())
    data[4096 * 3 : 4096 * 40] = b"\xa5" * (4096 * 37)
    db.write_bytes(bytes(data))
    reader.close()
    reader._index = None
    found = [_find(reader, f"qz{i}vork") for i in range(0, 300, 29)]
    assert found == [[leaves[i].leaf_id] for i in range(0, 300, 29)]
    assert any("damaged" in n for n in reader.notices)
    assert reader._check_index()
    reader.close()


# ---------------------------------------------------------------------------- D11, D12
def test_a_leaf_deleted_by_hand_is_no_longer_offered_and_can_be_saved_again(
    tmp_path: Path,
) -> None:
    # Issue #13 D11: search and forget failed with "no memory with id …" until rebuild.
    store, leaves = store_with(tmp_path / "m", [_words(i) for i in range(5)])
    gone = leaves[2]
    (tmp_path / "m" / leaf_rel(gone.leaf_id, gone.domain)).unlink()
    assert gone.leaf_id not in _find(store, "qz2vork")
    assert store.entry(gone.leaf_id) is None
    assert store.stats().leaves == 4
    with pytest.raises(LeafNotFoundError):
        store.forget(gone.leaf_id)
    assert store.put_leaf(gone) == gone
    assert _find(store, "qz2vork") == [gone.leaf_id]
    store.close()


def test_a_leaf_deleted_by_hand_and_read_by_id_leaves_the_catalog(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", [_words(i) for i in range(3)])
    (tmp_path / "m" / leaf_rel(leaves[1].leaf_id, "general")).unlink()
    with pytest.raises(LeafNotFoundError):
        store.read_leaf(leaves[1].leaf_id)
    assert store.entry(leaves[1].leaf_id) is None
    store.close()


def _two_layers(root: Path) -> tuple[Store, list[str], Branch]:
    store, leaves = store_with(root, [_words(i) for i in range(4)])
    ids = [leaf.leaf_id for leaf in leaves]
    refs = tuple(ChildRef(id=i, kind="leaf", title="t", excerpt="e") for i in ids)
    branch = Branch(node_id="N1-general-00000000aa", layer=1, domain="general", title="t",
                    summary="s", children=refs)  # fmt: skip
    store.put_branch(branch)
    store.set_parent(ids, branch.node_id)
    return store, ids, branch


def test_a_branch_deleted_by_hand_is_repaired_by_rebuild(tmp_path: Path) -> None:
    # Issue #13 D12: stats showed unreachable 4 for good.
    store, ids, branch = _two_layers(tmp_path / "m")
    files = [tmp_path / "m" / e.path for e in store.entries(ids).values()]
    before = [f.read_bytes() for f in files]
    (tmp_path / "m" / branch_rel(branch.node_id, 1)).unlink()
    store.rebuild()
    stats = store.stats()
    assert (stats.unreachable, stats.branches, stats.unconsolidated) == (0, 0, 4)
    # The leaves were not rewritten by the repair (format 2: a leaf's file never names
    # its parent; the catalog let go of the branch).
    assert [f.read_bytes() for f in files] == before
    assert all(store.read_leaf(i).parent_id is None for i in ids)
    store.close()


def test_a_branch_deleted_by_hand_is_repaired_when_it_is_next_read(tmp_path: Path) -> None:
    store, ids, branch = _two_layers(tmp_path / "m")
    (tmp_path / "m" / branch_rel(branch.node_id, 1)).unlink()
    with pytest.raises(BranchNotFoundError):
        store.read_branch(branch.node_id)
    assert store.stats().unreachable == 0
    assert sorted(e.id for e in store.unparented()) == sorted(ids)
    store.close()


# ---------------------------------------------------------------------------- D2 (unit)
def test_an_item_naming_a_parent_that_was_never_written_goes_back_to_the_trunk(
    tmp_path: Path,
) -> None:
    # What a writer killed mid-batch by an older version left: a branch naming a parent
    # branch file that does not exist. Neither consolidate nor rebuild repaired it.
    store, _, branch = _two_layers(tmp_path / "m")
    path = tmp_path / "m" / branch_rel(branch.node_id, 1)
    text = path.read_text().replace('"parent_id": null', '"parent_id": "N2-general-ffffffffff"')
    path.write_text(text)
    store.rebuild()
    assert store.stats().unreachable == 0
    assert [e.id for e in store.unparented()] == [branch.node_id]
    store.close()


# ---------------------------------------------------------------------------- D21
def test_a_refused_create_leaves_a_foreign_folder_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(StoreFormatError):
        Store.create(folder)
    assert sorted(os.listdir(folder)) == ["cat.jpg"]


# ---------------------------------------------------------------------------- D22
KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from ihmt_store import Store
    store = Store.open(sys.argv[1])
    real = os.replace
    def die(src, dst):
        os.kill(os.getpid(), signal.SIGKILL)
    os.replace = die
    store.refresh_root()
    """
)


def test_temp_files_of_a_killed_writer_are_removed_by_the_next_writer(tmp_path: Path) -> None:
    # Issue #13 D22: .root.json.<pid>-<rand>.ihmt-tmp stayed for good.
    store, _ = store_with(tmp_path / "m", ["one"])
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(tmp_path / "m")], check=False)
    assert done.returncode == -signal.SIGKILL
    left = [p.name for p in (tmp_path / "m").iterdir() if p.name.endswith(".ihmt-tmp")]
    assert len(left) == 1 and left[0].startswith(".root.json.")
    # A temporary file of a live writer (this process) is not touched.
    mine = tmp_path / "m" / f".config.{os.getpid()}-0000.ihmt-tmp"
    mine.write_bytes(b"in flight")
    store.put_leaf(make_leaf("two", position=1))
    assert [p.name for p in (tmp_path / "m").iterdir() if p.name.endswith(".ihmt-tmp")] == [
        mine.name
    ]
    store.close()


# ---------------------------------------------------------------------------- D24
def test_a_domain_folder_linked_out_of_the_store_is_refused(tmp_path: Path) -> None:
    # Issue #13 D24: a symlinked domain folder made saves write outside the store.
    store, _ = store_with(tmp_path / "m", [("infra", "first")])
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "m" / "layer0" / "personal").symlink_to(outside)
    with pytest.raises(StoreIOError, match="symbolic link"):
        store.put_leaf(make_leaf("my address", domain="personal", position=1))
    assert list(outside.iterdir()) == []
    assert store.stats().leaves == 1
    store.put_leaf(make_leaf("second", domain="infra", position=2))
    report = store.rebuild()
    assert [p.path for p in report.problems] == ["layer0/personal"]
    store.close()


def test_a_leaf_linked_out_of_the_store_is_not_followed_nor_forgotten_by_its_link(
    tmp_path: Path,
) -> None:
    store, leaves = store_with(tmp_path / "m", [_words(1)])
    target = tmp_path / "m" / leaf_rel(leaves[0].leaf_id, "general")
    outside = tmp_path / "outside.txt"
    shutil.move(target, outside)
    target.symlink_to(outside)
    with pytest.raises(CorruptFileError, match="outside the store"):
        store.read_leaf(leaves[0].leaf_id)
    with pytest.raises(StoreIOError, match="symbolic link"):
        store.forget(leaves[0].leaf_id)
    assert outside.exists() and target.is_symlink()
    report = store.rebuild()
    assert report.leaves == 0
    assert "outside the store" in report.problems[0].reason
    store.close()


def test_a_top_branch_deleted_by_hand_leaves_the_catalog_at_the_next_consolidation(
    tmp_path: Path,
) -> None:
    # The next writer after a save (consolidation) starts from the loose items: a top
    # branch whose file is gone is dropped there and its children go back to the trunk.
    store, ids, branch = _two_layers(tmp_path / "m")
    (tmp_path / "m" / branch_rel(branch.node_id, 1)).unlink()
    assert sorted(e.id for e in store.unparented()) == sorted(ids)
    assert store.stats().branches == 0
    store.close()


def test_opening_removes_a_temp_file_a_killed_writer_left_outside_any_batch(
    tmp_path: Path,
) -> None:
    Store.create(tmp_path / "m").close()
    # Killed while replacing the clock: no journal, only its temporary file (pid 2**22+1
    # is above Linux's pid limit, so its writer is surely gone).
    stale = tmp_path / "m" / "state" / f".clock.json.{2**22 + 1}-0a1b2c3d.ihmt-tmp"
    stale.write_bytes(b'{"machine": "x"')
    Store.open(tmp_path / "m").close()
    assert not stale.exists()
