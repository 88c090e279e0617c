"""Migration of a format-1 store to format 2, also when killed half-way (SIGKILL)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from ihmt_store import Branch, ChildRef, Correction, Store
from ihmt_store.testing import killed_at_rename, make_leaf


def _v1_leaf_bytes(head: dict[str, object], text: str) -> bytes:
    """A leaf file as format 1 wrote it: ``parent_id`` after ``project``, and
    ``outdated_by`` last once corrected."""
    return ("<<<IHMT-META\n" + json.dumps(head, indent=2) + "\nIHMT-META>>>\n" + text).encode()


def make_v1_store(root: Path, count: int) -> dict[str, tuple[str, object, object]]:
    """A format-1 store of ``count`` leaves: a third corrected, the first half grouped
    under branches that name them. Returns leaf id → (text, parent, correction)."""
    store = Store.create(root)
    leaves = [
        make_leaf(f"memory {i} about host{i % 7} and the word w{i}x", position=i)
        for i in range(count)
    ]
    store.put_leaves(leaves)
    expected: dict[str, tuple[str, object, object]] = {}
    half = leaves[: count // 2]
    groups = [half[i : i + 4] for i in range(0, len(half), 4)]
    parent_of: dict[str, str] = {}
    for n, group in enumerate(groups):
        node = f"N1-general-{n:010d}"
        refs = tuple(ChildRef(id=x.leaf_id, kind="leaf", title="t", excerpt="e") for x in group)
        store.put_branch(
            Branch(node_id=node, layer=1, domain="general", title=f"group {n}", summary="s",
                   children=refs)
        )  # fmt: skip
        for x in group:
            parent_of[x.leaf_id] = node
    store.close()
    # Now the files as format 1 had them: annotations in the headers, no notes.
    for i, leaf in enumerate(leaves):
        head = leaf.header()
        ordered: dict[str, object] = {}
        for key, value in head.items():
            ordered[key] = value
            if key == "project":
                ordered["parent_id"] = parent_of.get(leaf.leaf_id)
        correction = None
        if i % 3 == 1:
            by = leaves[(i + 1) % count].leaf_id
            correction = {"leaf_id": by, "date": "2026-03-04T00:00:00Z", "reason": f"r{i}"}
            ordered["outdated_by"] = correction
        (root / "layer0" / "general" / f"{leaf.leaf_id}.txt").write_bytes(
            _v1_leaf_bytes(ordered, leaf.text)
        )
        expected[leaf.leaf_id] = (leaf.text, parent_of.get(leaf.leaf_id), correction)
    config = root / "ihmt.config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "format_version": 1}))
    for path in (root / "state").iterdir():
        path.unlink()
    return expected


def _check_migrated(root: Path, expected: dict[str, tuple[str, object, object]]) -> None:
    store = Store.open(root)
    with store:
        assert store.config.format_version == 2
        assert json.loads((root / "ihmt.config.json").read_text())["format_version"] == 2
        assert {e.id for e in store.iter_entries("leaf")} == set(expected)
        for leaf_id, (text, parent, correction) in expected.items():
            data = (root / "layer0" / "general" / f"{leaf_id}.txt").read_bytes()
            head = data.split(b"\nIHMT-META>>>\n", 1)[0]
            assert b'"parent_id"' not in head and b'"outdated_by"' not in head
            leaf = store.read_leaf(leaf_id)
            assert leaf.text == text
            assert leaf.parent_id == parent
            notes = sorted((root / "notes" / leaf_id).glob("*.json"))
            if correction is None:
                assert leaf.outdated_by is None and notes == []
            else:
                assert isinstance(correction, dict)
                assert leaf.outdated_by == Correction(
                    by=correction["leaf_id"], date=correction["date"], reason=correction["reason"]
                )
                assert len(notes) == 1  # a re-run never duplicates it
                # FORMAT.md, Migration: at = the correction's date, machine m-format1.
                note = json.loads(notes[0].read_bytes())
                assert (note["machine"], note["at"]) == ("m-format1", "2026-03-04T00:00:00.000Z")
        assert store.stats().unreachable == 0
        assert not list(root.rglob("*.ihmt-tmp"))


def _replicated(root: Path) -> dict[Path, bytes]:
    return {
        p.relative_to(root): p.read_bytes()
        for top in ("layer0", "notes", "forgotten")
        for p in sorted((root / top).rglob("*"))
        if p.is_file()
    }


def test_a_format_1_store_is_migrated_on_open(tmp_path: Path) -> None:
    expected = make_v1_store(tmp_path / "m", 30)
    _check_migrated(tmp_path / "m", expected)
    after = _replicated(tmp_path / "m")
    assert len([p for p in after if p.parts[0] == "notes"]) == 10
    # Run again (as if the number had not been written): nothing changes on disk.
    config = tmp_path / "m" / "ihmt.config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "format_version": 1}))
    _check_migrated(tmp_path / "m", expected)
    assert _replicated(tmp_path / "m") == after


def test_two_copies_of_a_store_migrate_to_the_same_files(tmp_path: Path) -> None:
    """A deterministic migration: two machines migrating the same store write the same
    bytes, so their replicas do not conflict."""
    import shutil

    make_v1_store(tmp_path / "a", 12)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    Store.open(tmp_path / "a").close()
    Store.open(tmp_path / "b").close()
    for top in ("layer0", "notes"):
        a = {
            p.relative_to(tmp_path / "a"): p.read_bytes()
            for p in (tmp_path / "a" / top).rglob("*")
            if p.is_file()
        }
        b = {
            p.relative_to(tmp_path / "b"): p.read_bytes()
            for p in (tmp_path / "b" / top).rglob("*")
            if p.is_file()
        }
        assert a == b and a


# Dies by SIGKILL at the K-th file rename of the migration (the kernel kills the process
# between two renames; only the moment is chosen), or after a random delay.
KILLED_AT = killed_at_rename(
    """
    from ihmt_store import Store
    Store.open(path).close()
    """
)


def test_a_migration_killed_at_any_point_is_finished_by_the_next_open(tmp_path: Path) -> None:
    import shutil

    template = tmp_path / "template"
    # More leaves than one step of the migration moves (512), so a kill lands between
    # steps as well as inside one.
    expected = make_v1_store(template, 600)
    rng = random.Random(18)
    points = sorted({1, 2, 3, *rng.sample(range(4, 1200), 4)})
    kills = 0
    for k in points:
        root = tmp_path / f"k{k}"
        shutil.copytree(template, root)
        done = subprocess.run(
            [sys.executable, "-c", KILLED_AT, str(root), str(k)], capture_output=True, text=True
        )
        if done.returncode == 0:
            continue  # fewer renames than k
        assert done.returncode == -signal.SIGKILL, done.stderr
        kills += 1
        _check_migrated(root, expected)
        shutil.rmtree(root)
    assert kills >= 5
    # And at random moments of the real thing (no patched rename).
    for _ in range(3):
        root = tmp_path / "random"
        shutil.copytree(template, root)
        proc = subprocess.Popen(
            [sys.executable, "-c", f"from ihmt_store import Store; Store.open({str(root)!r})"],
        )
        try:
            proc.wait(timeout=rng.uniform(0.2, 1.2))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        _check_migrated(root, expected)
        shutil.rmtree(root)


# Dies by SIGKILL inside the transaction that fills a new index file, after every row is
# written and before the commit: the worst moment for an index built from scratch.
KILLED_IN_BUILD = textwrap.dedent(
    """
    import os, signal, sys
    from ihmt_store import Store
    from ihmt_store._index import Index
    def die(self):
        os.kill(os.getpid(), signal.SIGKILL)
    Index.detach_orphans = die
    Store.open(sys.argv[1]).close()
    """
)


def test_an_index_build_killed_before_its_commit_is_built_again_on_open(tmp_path: Path) -> None:
    """An index file whose build was killed held the schema stamp and no rows, and was
    taken as sound: every memory was on disk and none could be found until a rebuild."""
    import shutil

    store = Store.create(tmp_path / "m")
    with store:
        store.put_leaves([make_leaf(f"memory {n} about the word w{n}x") for n in range(30)])
        expected = {entry.id for entry in store.iter_entries("leaf")}
    shutil.rmtree(tmp_path / "m" / "state")
    done = subprocess.run(
        [sys.executable, "-c", KILLED_IN_BUILD, str(tmp_path / "m")], capture_output=True, text=True
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert (tmp_path / "m" / "state" / "index.sqlite3").exists()  # the unfinished file
    again = Store.open(tmp_path / "m")
    with again:
        assert {entry.id for entry in again.iter_entries("leaf")} == expected
        assert [c.entry.id for c in again.candidates("w7x", limit=1)] != []
