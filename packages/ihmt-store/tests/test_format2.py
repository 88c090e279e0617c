"""Format 2: leaves written once, annotations as notes, tombstones, and the fold.

Store copies stand for machines; copying files between them is what a merge does.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import shutil
from pathlib import Path

from ihmt_store import Branch, ChildRef, Correction, Store
from ihmt_store._layout import leaf_rel
from ihmt_store._notes import Note, fold, parse_note
from ihmt_store.testing import make_leaf, store_with


def _files(root: Path, top: str) -> dict[str, bytes]:
    folder = root / top
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def _state(store: Store, leaf_id: str) -> tuple[object, ...]:
    entry = store.entry(leaf_id)
    assert entry is not None
    leaf = store.read_leaf(leaf_id)
    extra = json.dumps(leaf.extra, sort_keys=True)
    return (entry.status, entry.outdated_by, entry.outdated_on, leaf.outdated_by, extra)


def _clone(src: Store, dst: Path) -> Store:
    """A second machine: the replicated files only, its own derived state."""
    for top in Store.REPLICATED:
        if (src.path / top).is_dir():
            shutil.copytree(src.path / top, dst / top)
        elif (src.path / top).exists():
            dst.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src.path / top, dst / top)
    return Store.open(dst)


def _pull(src: Store, dst: Store, rels: list[str]) -> None:
    for rel in rels:
        target = dst.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src.path / rel, target)
    dst.apply_changes(rels)


# ------------------------------------------------------------------ leaves written once
def test_annotations_and_consolidation_never_rewrite_a_leaf(tmp_path: Path) -> None:
    store, (old, new) = store_with(
        tmp_path / "m", ["The API listens on port 8080.", "The API listens on port 9090."]
    )
    with store:
        before = _files(store.path, "layer0")
        fix = Correction(by=new.leaf_id, date="2026-05-01", reason="moved")
        store.annotate(old.leaf_id, outdated_by=fix)
        store.annotate(old.leaf_id, extra={"facts": [{"subject": "api"}]})
        refs = tuple(
            ChildRef(id=x.leaf_id, kind="leaf", title="t", excerpt="e") for x in (old, new)
        )
        store.put_branch(
            Branch(node_id="N1-general-aa", layer=1, domain="general", title="t", summary="s",
                   children=refs)
        )  # fmt: skip
        store.set_parent([old.leaf_id, new.leaf_id], "N1-general-aa")
        assert _files(store.path, "layer0") == before
        notes = _files(store.path, "notes")
        assert len(notes) == 2 and all(p.startswith(f"notes/{old.leaf_id}/") for p in notes)
        ops = sorted(json.loads(b)["op"] for b in notes.values())
        assert ops == ["extra", "outdated"]
        got = store.read_leaf(old.leaf_id)
        assert got.outdated_by == Correction(
            by=new.leaf_id, date="2026-05-01T00:00:00Z", reason="moved"
        )
        assert got.parent_id == "N1-general-aa"
        assert got.extra["facts"] == [{"subject": "api"}]
        assert [e.id for e in store.corrections_of(new.leaf_id)] == [old.leaf_id]
        # The same annotation again writes nothing.
        store.annotate(old.leaf_id, outdated_by=fix)
        assert len(_files(store.path, "notes")) == 2
        store.annotate(old.leaf_id, outdated_by=None)
        assert store.read_leaf(old.leaf_id).outdated_by is None
        assert len(_files(store.path, "notes")) == 3
        # A rebuild from leaves + notes + branch files gives the same answers.
        state = _state(store, old.leaf_id)
        store.rebuild()
        assert _state(store, old.leaf_id) == state
        assert store.read_leaf(old.leaf_id).parent_id == "N1-general-aa"


# ------------------------------------------------------------------ the fold
def _notes_from_three_machines(tmp_path: Path) -> tuple[Store, list[Store], str, list[str]]:
    """One memory corrected, restored and annotated on three machines, concurrently."""
    origin, leaves = store_with(
        tmp_path / "origin", [f"The queue holds {n} messages." for n in range(4)]
    )
    target, c1, c2, c3 = (leaf.leaf_id for leaf in leaves)
    machines = [_clone(origin, tmp_path / f"m{i}") for i in range(3)]
    a, b, c = machines
    a.annotate(target, outdated_by=Correction(by=c1, date="2026-01-01", reason="first"))
    b.annotate(target, outdated_by=Correction(by=c2, date="2026-01-02", reason="second"))
    b.annotate(target, extra={"owner": "b", "color": "blue"})
    c.annotate(target, outdated_by=Correction(by=c3, date="2026-01-03"))
    c.annotate(target, outdated_by=None)
    a.annotate(target, extra={"owner": "a"})
    rels = sorted({rel for m in machines for rel in _files(m.path, "notes")})
    return origin, machines, target, rels


def test_a_note_file_is_as_format_md_describes(tmp_path: Path) -> None:
    """FORMAT.md, Notes: one line of JSON, a salt of 16 to 78 hex characters first, a
    name made of ``at``, the machine and random hex; the machine id kept in
    ``state/clock.json``, and a new one once ``state/`` is discarded."""
    store, (old, new) = store_with(tmp_path / "m", ["First said.", "Said better."])
    with store:
        store.annotate(old.leaf_id, outdated_by=Correction(by=new.leaf_id, date="2026-05-01"))
        store.annotate(old.leaf_id, extra={"k": 1})
    machines = set()
    for path in sorted((store.path / "notes" / old.leaf_id).iterdir()):
        data = path.read_bytes()
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        obj = json.loads(data)
        assert next(iter(obj)) == "salt"
        assert re.fullmatch(r"[0-9a-f]{16,78}", obj["salt"])
        assert re.fullmatch(r"m-[0-9a-f]+", obj["machine"])
        stamp = obj["at"].replace("-", "").replace(":", "")
        assert re.fullmatch(rf"{re.escape(stamp)}-{obj['machine']}-[0-9a-f]+\.json", path.name)
        machines.add(obj["machine"])
    clock = json.loads((store.path / "state" / "clock.json").read_text())
    assert machines == {clock["machine"]}
    shutil.rmtree(store.path / "state")
    with Store.open(store.path) as again:
        again.annotate(old.leaf_id, extra={"k": 2})
    later = {json.loads(p.read_bytes())["machine"] for p in (store.path / "notes").rglob("*.json")}
    assert len(later - machines) == 1


def test_the_fold_is_the_same_in_every_order(tmp_path: Path) -> None:
    origin, machines, _, rels = _notes_from_three_machines(tmp_path)
    notes: list[Note] = []
    for rel in rels:
        owner = next(m for m in machines if (m.path / rel).exists())
        notes.append(parse_note((owner.path / rel).read_bytes(), owner.path / rel))
    assert len(notes) == 6
    results = [fold(list(order)) for order in itertools.permutations(notes)]
    assert len(results) == 720 and all(r == results[0] for r in results)
    for m in machines:
        m.close()
    origin.close()


def test_two_copies_merged_in_different_orders_agree(tmp_path: Path) -> None:
    origin, machines, target, rels = _notes_from_three_machines(tmp_path)
    rng = random.Random(18)
    copies = [_clone(origin, tmp_path / f"copy{i}") for i in range(4)]
    owners = {rel: next(m for m in machines if (m.path / rel).exists()) for rel in rels}
    for i, copy in enumerate(copies):
        order = rels[:]
        rng.shuffle(order)
        # Arrivals one by one, or in groups, each group applied as one pull.
        step = 1 + i % 3
        for start in range(0, len(order), step):
            group = order[start : start + step]
            for rel in group:
                (copy.path / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(owners[rel].path / rel, copy.path / rel)
            copy.apply_changes(group)
    states = {_state(copy, target) for copy in copies}
    assert len(states) == 1
    # And each machine, once it holds every note, agrees with the copies.
    for m in machines:
        missing = [rel for rel in rels if not (m.path / rel).exists()]
        for rel in missing:
            _pull(owners[rel], m, [rel])
        assert _state(m, target) in states
    (state,) = states
    # c's restore is among the latest notes, but a's extra note came after it (each
    # machine's clock is past what it wrote): the fold's order decides, and the same
    # everywhere. The extra keys merge, the later note winning "owner".
    assert json.loads(state[4])["color"] == "blue"
    for s in (*copies, *machines, origin):
        s.close()


def test_a_note_written_after_seeing_another_sorts_after_it(tmp_path: Path) -> None:
    """The clock is hybrid: a machine whose wall clock is behind still writes after
    what it has seen."""
    a, (old, new) = store_with(tmp_path / "a", ["port 1", "port 2"])
    b = _clone(a, tmp_path / "b")
    with a, b:
        a.annotate(old.leaf_id, outdated_by=Correction(by=new.leaf_id, date="2026-01-01"))
        (rel,) = _files(a.path, "notes")
        # The note comes from a machine whose clock runs years ahead.
        note = json.loads((a.path / rel).read_text())
        note["at"] = "2031-01-01T00:00:00.000Z"
        future = f"notes/{old.leaf_id}/20310101T000000.000Z-{note['machine']}-00000000.json"
        (a.path / future).write_text(json.dumps(note))
        (a.path / rel).unlink()
        _pull(a, b, [future])
        assert _state(b, old.leaf_id)[0] == "outdated"
        b.annotate(old.leaf_id, outdated_by=None)  # the later decision
        assert _state(b, old.leaf_id)[0] == "active"
        mine = [p for p in _files(b.path, "notes") if p != future]
        assert len(mine) == 1 and mine[0] > future
        _pull(b, a, mine)
        a.apply_changes([future])
        assert _state(a, old.leaf_id)[0] == "active"


# ------------------------------------------------------------------ tombstones
def test_forget_leaves_a_tombstone_without_the_text(tmp_path: Path) -> None:
    store, (leaf, other) = store_with(
        tmp_path / "m", ["The vault password hint is purple-otter.", "Unrelated note."]
    )
    with store:
        store.annotate(leaf.leaf_id, extra={"why": "kept"})
        store.forget(leaf.leaf_id)
        tomb = store.path / "forgotten" / f"{leaf.leaf_id}.json"
        assert json.loads(tomb.read_text()) == {"leaf_id": leaf.leaf_id, "forgotten": True}
        assert not (store.path / leaf_rel(leaf.leaf_id, leaf.domain)).exists()
        assert not (store.path / "notes" / leaf.leaf_id).exists()
        assert store.entry(leaf.leaf_id) is None
        assert store.read_leaf(other.leaf_id).text == "Unrelated note."


def test_a_tombstone_wins_over_what_a_merge_brings_back(tmp_path: Path) -> None:
    a, (leaf, kept, newer) = store_with(
        tmp_path / "a", ["Memory to forget.", "Memory to keep.", "A newer memory."]
    )
    b = _clone(a, tmp_path / "b")
    rel = leaf_rel(leaf.leaf_id, leaf.domain)
    original = (a.path / rel).read_bytes()
    with a, b:
        # b annotates the memory while a forgets it.
        b.annotate(leaf.leaf_id, outdated_by=Correction(by=newer.leaf_id, date="2026-02-02"))
        b.annotate(kept.leaf_id, outdated_by=Correction(by=leaf.leaf_id, date="2026-02-02"))
        a.forget(leaf.leaf_id)
        b_notes = sorted(_files(b.path, "notes"))
        # a merges b's notes: the forgotten memory's note is deleted again, the
        # correction *by* the forgotten memory counts as never made.
        _pull(b, a, b_notes)
        assert not (a.path / "notes" / leaf.leaf_id).exists()
        assert _state(a, kept.leaf_id)[0] == "active"
        # b merges a's tombstone (and a's deletion of the leaf never reached it yet:
        # the leaf file is still there, as a merge can leave it).
        tomb = f"forgotten/{leaf.leaf_id}.json"
        _pull(a, b, [tomb])
        assert not (b.path / leaf_rel(leaf.leaf_id, leaf.domain)).exists()
        assert not (b.path / "notes" / leaf.leaf_id).exists()
        assert b.entry(leaf.leaf_id) is None
        assert _state(b, kept.leaf_id)[0] == "active"
        # A leaf file brought back later is deleted again; nothing else is.
        (b.path / rel).write_bytes(original)
        done = b.apply_changes([rel])
        assert not (b.path / rel).exists()
        assert done.removed == (leaf.leaf_id,)
        assert {e.id for e in b.iter_entries("leaf")} == {kept.leaf_id, newer.leaf_id}
        assert {e.id for e in a.iter_entries("leaf")} == {kept.leaf_id, newer.leaf_id}
        # A rebuild reads the same from leaves, notes and tombstones.
        states = (_state(b, kept.leaf_id), _state(a, kept.leaf_id))
        b.rebuild()
        a.rebuild()
        assert (_state(b, kept.leaf_id), _state(a, kept.leaf_id)) == states


def test_saving_a_forgotten_memory_again_brings_it_back(tmp_path: Path) -> None:
    store, (leaf,) = store_with(tmp_path / "m", ["Said once, forgotten, said again."])
    with store:
        store.forget(leaf.leaf_id)
        store.put_leaf(make_leaf("Said once, forgotten, said again."))
        assert not (store.path / "forgotten" / f"{leaf.leaf_id}.json").exists()
        store.rebuild()
        assert store.read_leaf(leaf.leaf_id).text == "Said once, forgotten, said again."


# ------------------------------------------------------------------ concurrent writers
WRITER = """
import sys
from ihmt_store import Correction, Store
from ihmt_store.testing import make_leaf
path, name, target = sys.argv[1], sys.argv[2], sys.argv[3]
store = Store.open(path)
for i in range(25):
    leaf = store.put_leaf(make_leaf(f"{name} says {i}", source=name, position=i))
    print("leaf", leaf.leaf_id, flush=True)
    store.annotate(target, outdated_by=Correction(by=leaf.leaf_id, date="2026-01-01"))
    print("note", flush=True)
    store.annotate(target, extra={f"{name}-{i}": i})
    print("note", f"{name}-{i}", flush=True)
"""


def test_concurrent_writer_processes_lose_no_note(tmp_path: Path) -> None:
    import subprocess
    import sys

    store, (target,) = store_with(tmp_path / "m", ["The shared memory everyone annotates."])
    store.close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path / "m"), name, target.leaf_id],
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("p1", "p2", "p3")
    ]
    lines = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0
        lines += out.splitlines()
    leaves = {line.split()[1] for line in lines if line.startswith("leaf")}
    keys = {line.split()[1] for line in lines if line.startswith("note ")}
    notes = sum(1 for line in lines if line.startswith("note"))
    assert len(leaves) == 75 and len(keys) == 75 and notes == 150
    with Store.open(tmp_path / "m") as store:
        assert leaves <= {e.id for e in store.iter_entries("leaf")}
        assert len(list((store.path / "notes" / target.leaf_id).glob("*.json"))) == notes
        got = store.read_leaf(target.leaf_id)
        assert keys <= set(got.extra)
        assert got.outdated_by is not None and got.outdated_by.by in leaves
        state = _state(store, target.leaf_id)
        store.rebuild()
        assert _state(store, target.leaf_id) == state


FORGET_KILLED_AT = """
import os, signal, sys
from ihmt_store import Store
path, leaf_id, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
calls = 0
def dying(real):
    def wrapper(*args, **kwargs):
        global calls
        calls += 1
        if calls == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return wrapper
os.replace = dying(os.replace)
os.unlink = dying(os.unlink)
store = Store.open(path)
store.forget(leaf_id)
print(calls)
"""


def test_a_forget_killed_at_any_point_is_all_or_nothing(tmp_path: Path) -> None:
    """Killed between any two renames or deletions, a forget is finished by the next
    writer or not made at all: never a leaf deleted without its tombstone (a replica
    would read that as a deletion by hand), never a tombstone beside its leaf."""
    import subprocess
    import sys

    template = tmp_path / "template"
    store, (leaf, newer) = store_with(template, ["Forget me, with my notes.", "A newer one."])
    with store:
        store.annotate(leaf.leaf_id, outdated_by=Correction(by=newer.leaf_id, date="2026-01-01"))
        store.annotate(leaf.leaf_id, extra={"k": 1})
        store.annotate(newer.leaf_id, outdated_by=Correction(by=leaf.leaf_id, date="2026-01-02"))
    rel = leaf_rel(leaf.leaf_id, leaf.domain)
    kills = 0
    for k in range(1, 40):
        root = tmp_path / f"k{k}"
        shutil.copytree(template, root)
        done = subprocess.run(
            [sys.executable, "-c", FORGET_KILLED_AT, str(root), leaf.leaf_id, str(k)],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            break
        assert done.returncode == -9, done.stderr
        kills += 1
        with Store.open(root) as after:
            after.put_leaf(make_leaf("the next writer", position=7))  # takes the lock
            tomb = (root / "forgotten" / f"{leaf.leaf_id}.json").exists()
            if tomb:
                assert not (root / rel).exists()
                assert not (root / "notes" / leaf.leaf_id).exists()
                assert after.entry(leaf.leaf_id) is None
                assert _state(after, newer.leaf_id)[0] == "active"
            else:
                assert (root / rel).exists()
                assert _state(after, leaf.leaf_id)[0] == "outdated"
                assert len(list((root / "notes" / leaf.leaf_id).iterdir())) == 2
            assert after.read_leaf(newer.leaf_id).text == "A newer one."
            catalog = {e.id for e in after.iter_entries("leaf")}
            after.rebuild()
            assert {e.id for e in after.iter_entries("leaf")} == catalog
        shutil.rmtree(root)
    assert kills >= 4


def test_a_tombstone_that_arrives_removes_the_derived_data_too(tmp_path: Path) -> None:
    """What sibling packages derived from a memory (its vector) goes with it, whether
    it is forgotten here or the forget arrives from another machine."""
    a, (leaf, kept) = store_with(tmp_path / "a", ["Memory to forget.", "Memory to keep."])
    b = _clone(a, tmp_path / "b")
    space = "vectors/test@1"
    with a, b:
        for store in (a, b):
            store.put_derived(space, {leaf.leaf_id: b"\x01\x02", kept.leaf_id: b"\x03\x04"})
        seen = b.derived_changes(space)  # what a running reader of b holds
        a.forget(leaf.leaf_id)
        assert a.derived_ids(space) == {kept.leaf_id}
        _pull(a, b, [f"forgotten/{leaf.leaf_id}.json"])
        assert b.entry(leaf.leaf_id) is None
        assert b.derived_ids(space) == {kept.leaf_id}
        # the reader is told to drop it
        assert b.derived_changes(space, seen.epoch, seen.seq).rows == ((leaf.leaf_id, None),)
