"""A leaf edited by hand on two machines: the merge driver, through ``Sync`` with real git.

Every test runs real git with a bare repository in tmp_path as the remote; the clones'
commit times are set through ``GIT_COMMITTER_DATE`` so that which edit is the later one
is known.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ihmt_mcp import Memory, Sync, SyncError
from ihmt_mcp.sync._clone import LEAF_MERGE_ATTRIBUTE
from ihmt_mcp.sync._leaf_merge import blob_id, merge_leaf

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ORIGINAL = "The staging database listens on port 5432 and is backed up nightly."
EDIT_A = "The staging database listens on port 6432 (pgbouncer) and is backed up nightly."
EDIT_B = "The staging database listens on port 5433 since the upgrade; backups run hourly."


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def sync_at(memory: Memory, when: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sync with this machine's commits dated ``when`` (the later edit is known)."""
    monkeypatch.setenv("GIT_COMMITTER_DATE", when)
    try:
        assert Sync(memory).sync().pushed
    finally:
        monkeypatch.delenv("GIT_COMMITTER_DATE")


def edit_by_hand(memory: Memory, leaf_id: str, text: str) -> None:
    """Replace a leaf's text in place, as an editor does (the header stays)."""
    path = next(memory.store.path.glob(f"layer0/*/{leaf_id}.txt"))
    header, marker, _ = path.read_bytes().partition(b"\nIHMT-META>>>\n")
    path.write_bytes(header + marker + text.encode())


def leaf_texts(memory: Memory) -> dict[str, str]:
    return {leaf.leaf_id: leaf.text for leaf in memory.store.iter_leaves()}


def marks(memory: Memory) -> dict[str, str | None]:
    return {e.id: e.outdated_by for e in memory.store.iter_entries("leaf")}


def answer(memory: Memory, query: str) -> list[tuple[str, str | None]]:
    """The search's memories, best first, with the correction each is flagged by."""
    return [(hit.id, hit.outdated_by) for hit in memory.search(query).results]


def no_markers(memory: Memory) -> bool:
    files = list(memory.store.path.glob("layer0/**/*.txt"))
    return not any(b"<<<<<<<" in p.read_bytes() or b">>>>>>>" in p.read_bytes() for p in files)


def settle(*memories: Memory) -> None:
    """Sync every machine in turn until a whole round sends and receives nothing (a
    pulled memory can make the facts of another machine write a note of their own)."""
    for _ in range(6):
        reports = [Sync(m).sync() for m in memories]
        if not any(r.commit or r.pulled for r in reports):
            return
    raise AssertionError("the machines did not settle in six rounds")


def two_machines_edit(
    machine: Callable[[str], Memory], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Memory, Memory, str]:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    leaf_id = a.save(ORIGINAL, domain="infra").ids[0]
    Sync(a).sync()
    Sync(b).init(str(remote))
    edit_by_hand(a, leaf_id, EDIT_A)
    edit_by_hand(b, leaf_id, EDIT_B)
    return a, b, leaf_id


# ---------------------------------------------------------------------- the choice
def test_the_choice_is_the_same_whichever_side_merges() -> None:
    base = b"<<<IHMT-META\n{}\nIHMT-META>>>\nold"
    x = b"<<<IHMT-META\n{}\nIHMT-META>>>\nfirst edit"
    y = b"<<<IHMT-META\n{}\nIHMT-META>>>\nsecond edit"
    # Later commit wins, from either side.
    assert merge_leaf(base, x, y, "p", ours_at=1, theirs_at=2) == (y, x)
    assert merge_leaf(base, y, x, "p", ours_at=2, theirs_at=1) == (y, x)
    # Equal (or unknown) times: the blob ids decide, the same way from either side.
    assert merge_leaf(base, x, y, "p") == merge_leaf(base, y, x, "p")
    kept, other = merge_leaf(base, x, y, "p")
    assert {kept, other} == {x, y} and blob_id(kept) < blob_id(other)  # type: ignore[arg-type]
    # One side changed only its header: the text edit is kept, nothing to save apart.
    resaved = b'<<<IHMT-META\n{"tags": ["a"]}\nIHMT-META>>>\nold'
    assert merge_leaf(base, resaved, x, "p", ours_at=9, theirs_at=1) == (x, None)
    assert merge_leaf(base, x, resaved, "p") == (x, None)
    # The same text under two headers: one file, chosen by blob id; nothing saved apart.
    same = b'<<<IHMT-META\n{"x": 1}\nIHMT-META>>>\nfirst edit'
    assert merge_leaf(b"", x, same, "p")[1] is None
    assert merge_leaf(b"", x, same, "p") == merge_leaf(b"", same, x, "p")


# ---------------------------------------------------------------------- end to end
@pytest.mark.parametrize("first", ["a", "b"])
def test_two_hand_edits_keep_both_texts_and_the_later_is_current(
    machine: Callable[[str], Memory],
    remote: Path,
    monkeypatch: pytest.MonkeyPatch,
    first: str,
) -> None:
    """Whichever machine pushes first, the later edit (b's) stays in the leaf and the
    earlier (a's) becomes a memory it corrects, on every machine."""
    a, b, leaf_id = two_machines_edit(machine, remote, monkeypatch)
    when = {"a": "2026-06-01T10:00:00Z", "b": "2026-06-01T12:00:00Z"}
    order = [a, b] if first == "a" else [b, a]
    for memory in order:
        sync_at(memory, when["a" if memory is a else "b"], monkeypatch)
    c = machine("c")
    Sync(c).init(str(remote))
    settle(a, b, c)
    for memory in (a, b, c):
        texts = leaf_texts(memory)
        assert texts[leaf_id] == EDIT_B
        (other,) = [i for i, t in texts.items() if t == EDIT_A]
        assert ORIGINAL not in texts.values()  # replaced by hand on both: in history only
        assert marks(memory)[other] == leaf_id and marks(memory)[leaf_id] is None
        assert no_markers(memory)
        assert git(memory.store.path, "status", "--porcelain") == ""
        assert not list((memory.store.path / ".git" / "ihmt").glob("leaf-merges/*"))
    answers = [answer(m, "staging database port backups") for m in (a, b, c)]
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][0] == (leaf_id, None)
    assert (other, leaf_id) in answers[0]
    heads = {git(m.store.path, "rev-parse", "HEAD") for m in (a, b, c)}
    assert heads == {git(remote, "rev-parse", "main")}


def test_three_machines_editing_one_leaf_keep_every_text_and_agree(
    machine: Callable[[str], Memory], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, leaf_id = two_machines_edit(machine, remote, monkeypatch)
    c = machine("c")
    Sync(c).init(str(remote))
    edit_c = "The staging database moved to its own host, staging-db-2, port 5432."
    edit_by_hand(c, leaf_id, edit_c)
    sync_at(c, "2026-06-01T15:00:00Z", monkeypatch)  # the latest edit, pushed first
    sync_at(a, "2026-06-01T10:00:00Z", monkeypatch)
    sync_at(b, "2026-06-01T12:00:00Z", monkeypatch)
    settle(c, a, b)
    views = [leaf_texts(m) for m in (a, b, c)]
    assert views[0] == views[1] == views[2]
    assert views[0][leaf_id] == edit_c
    assert {EDIT_A, EDIT_B} <= set(views[0].values())
    flags = [marks(m) for m in (a, b, c)]
    assert flags[0] == flags[1] == flags[2]
    assert flags[0][leaf_id] is None
    # Each earlier edit is OUTDATED (by the leaf, or by the other edit when the facts of
    # a machine saw the two disagree: a chain that ends at the leaf).
    for text in (EDIT_A, EDIT_B):
        (other,) = [i for i, t in views[0].items() if t == text]
        assert flags[0][other] is not None
    answers = [answer(m, "staging database host port") for m in (a, b, c)]
    assert answers[0] == answers[1] == answers[2] and answers[0][0] == (leaf_id, None)
    assert all(no_markers(m) for m in (a, b, c))
    assert all(git(m.store.path, "status", "--porcelain") == "" for m in (a, b, c))


def test_a_merge_killed_before_the_other_version_was_saved_saves_it_next_time(
    machine: Callable[[str], Memory], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, leaf_id = two_machines_edit(machine, remote, monkeypatch)
    sync_at(a, "2026-06-01T12:00:00Z", monkeypatch)

    class Killed(Exception):
        pass

    class DiesAfterItsMerge(Sync):
        def _settle_leaf_merges(self) -> list[str]:
            if (self.folder / ".git" / "MERGE_HEAD").exists() or self.git.rev("HEAD") == before:
                return super()._settle_leaf_merges()
            raise Killed  # the merge is committed, the stash not yet saved

    before = git(b.store.path, "rev-parse", "HEAD").strip()
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-06-01T10:00:00Z")
    with pytest.raises(Killed):
        DiesAfterItsMerge(b).sync()
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    assert list((b.store.path / ".git" / "ihmt" / "leaf-merges").glob("*.json"))
    assert leaf_texts(b)[leaf_id] == EDIT_A  # a's edit is the later one
    assert EDIT_B not in leaf_texts(b).values()  # only in the stash and in git so far
    settle(b, a)
    for memory in (a, b):
        texts = leaf_texts(memory)
        (other,) = [i for i, t in texts.items() if t == EDIT_B]
        assert texts[leaf_id] == EDIT_A and marks(memory)[other] == leaf_id
        assert no_markers(memory)
    assert not list((b.store.path / ".git" / "ihmt" / "leaf-merges").glob("*.json"))


def test_a_merge_undone_for_another_conflict_saves_nothing_and_loses_nothing(
    machine: Callable[[str], Memory], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, leaf_id = two_machines_edit(machine, remote, monkeypatch)
    for memory, text in ((a, "from a\n"), (b, "from b\n")):
        (memory.store.path / "NOTES.md").write_text(text)
        git(memory.store.path, "add", "NOTES.md")
        git(memory.store.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    sync_at(a, "2026-06-01T10:00:00Z", monkeypatch)
    with pytest.raises(Exception, match="conflict"):
        Sync(b).sync()
    assert leaf_texts(b)[leaf_id] == EDIT_B and EDIT_A not in leaf_texts(b).values()
    assert not list((b.store.path / ".git" / "ihmt" / "leaf-merges").glob("*.json"))
    assert no_markers(b)


def test_a_clone_set_up_before_the_driver_gets_it_on_its_next_sync(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    attributes = a.store.path / ".gitattributes"
    assert LEAF_MERGE_ATTRIBUTE in attributes.read_text().splitlines()
    attributes.write_text("* -text\n")
    git(a.store.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "old")
    git(a.store.path, "config", "--remove-section", "merge.ihmt-leaf")
    Sync(a).sync()
    assert LEAF_MERGE_ATTRIBUTE in attributes.read_text().splitlines()
    driver = git(a.store.path, "config", "--get", "merge.ihmt-leaf.driver")
    assert "-m ihmt_mcp.sync._leaf_merge %O %A %B %P" in driver
    assert git(a.store.path, "status", "--porcelain") == ""
    assert LEAF_MERGE_ATTRIBUTE in git(remote, "show", "main:.gitattributes")


def test_a_driver_that_cannot_run_stops_the_merge_in_one_line_and_the_next_sync_merges(
    machine: Callable[[str], Memory], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, leaf_id = two_machines_edit(machine, remote, monkeypatch)
    sync_at(a, "2026-06-01T10:00:00Z", monkeypatch)
    with monkeypatch.context() as patched:
        patched.setattr("sys.executable", str(b.store.path / "no-such-python"))
        with pytest.raises(SyncError) as caught:
            Sync(b).sync()
    assert caught.value.reason == "conflict" and "\n" not in str(caught.value)
    assert any(p.endswith(f"{leaf_id}.txt") for p in caught.value.paths)
    assert leaf_texts(b)[leaf_id] == EDIT_B and no_markers(b)
    assert not (b.store.path / ".git" / "MERGE_HEAD").exists()
    sync_at(b, "2026-06-01T12:00:00Z", monkeypatch)  # the driver's Python is back
    settle(a, b)
    assert leaf_texts(a) == leaf_texts(b)
    assert leaf_texts(a)[leaf_id] == EDIT_B and EDIT_A in leaf_texts(a).values()
