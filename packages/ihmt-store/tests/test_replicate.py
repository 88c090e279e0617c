"""Replication: what a store asks an engine to track, and ``apply_changes`` after a pull.

Two stores stand for two machines; copying files between them is what a merge does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ihmt_store import Correction, CorruptFileError, ReplicaFile, Store
from ihmt_store._layout import leaf_rel
from ihmt_store.testing import make_leaf, store_with


def _copy(src: Store, dst: Store, rels: list[str]) -> list[str]:
    """Copy (or delete) replicated files from one store to another, as a merge would."""
    for rel in rels:
        source, target = src.path / rel, dst.path / rel
        if source.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        elif target.exists():
            target.unlink()
    return rels


def _ids(store: Store) -> set[str]:
    return {e.id for e in store.iter_entries("leaf")}


def _found(store: Store, query: str) -> list[str]:
    return [c.entry.id for c in store.candidates(query, limit=5)]


def test_replicated_and_unreplicated_paths_cover_the_store(tmp_path: Path) -> None:
    assert Store.REPLICATED == ("ihmt.config.json", "layer0", "notes", "forgotten")
    assert {"/layers/", "/root.json", "/state/", "/ihmt.lock", "*.ihmt-tmp"} <= set(
        Store.UNREPLICATED
    )
    store, _ = store_with(tmp_path / "a", [("state", "A domain named state is still data.")])
    with store:
        top = {p.name for p in store.path.iterdir()}
        replicated = {p.split("/")[0] for p in Store.REPLICATED}
        ignored = {p.strip("/") for p in Store.UNREPLICATED if not p.startswith("*")}
        # Everything the store wrote at its top is either tracked or ignored.
        assert top <= replicated | ignored
        # Anchored patterns: layer0/state/ is a domain, not the derived state.
        assert (store.path / "layer0" / "state").is_dir()
        assert "state/" not in Store.UNREPLICATED


def test_pulled_leaves_are_indexed_and_searchable(tmp_path: Path) -> None:
    a, leaves = store_with(
        tmp_path / "a",
        [
            ("infra", "The staging host runs PostgreSQL 15 on port 5432."),
            ("process", "Deploys go out on Tuesdays after the standup."),
        ],
    )
    b = Store.create(tmp_path / "b")
    with a, b:
        rels = [leaf_rel(leaf.leaf_id, leaf.domain) for leaf in leaves]
        before = b.generation
        done = b.apply_changes(_copy(a, b, rels))
        assert set(done.added) == {leaf.leaf_id for leaf in leaves}
        assert done.domains == ("infra", "process")
        assert not done.removed and not done.annotated and not done.problems
        assert _ids(b) == _ids(a)
        assert b.generation > before
        assert _found(b, "when do deploys go out") == [leaves[1].leaf_id]
        assert b.read_leaf(leaves[0].leaf_id) == a.read_leaf(leaves[0].leaf_id)
        # The same paths again: nothing to do.
        again = b.apply_changes(rels)
        assert not again and again.added == ()


def test_cost_is_that_of_the_paths_given(tmp_path: Path) -> None:
    a, leaves = store_with(
        tmp_path / "a", [f"memory number {n} about topic {n}" for n in range(40)]
    )
    b = Store.create(tmp_path / "b")
    with a, b:
        rels = [leaf_rel(leaf.leaf_id, leaf.domain) for leaf in leaves]
        b.apply_changes(_copy(a, b, rels))
        new = a.put_leaf(make_leaf("one more memory about caching", position=99))
        b.io.files_read = 0
        done = b.apply_changes(_copy(a, b, [leaf_rel(new.leaf_id, new.domain)]))
        assert done.added == (new.leaf_id,)
        assert b.io.files_read == 1
        assert b.count("leaf") == 41


def test_a_correction_made_elsewhere_is_an_annotation(tmp_path: Path) -> None:
    a, (old, new) = store_with(
        tmp_path / "a", ["The API listens on port 8080.", "The API listens on port 9090."]
    )
    b = Store.create(tmp_path / "b")
    with a, b:
        rels = [leaf_rel(x.leaf_id, x.domain) for x in (old, new)]
        b.apply_changes(_copy(a, b, rels))
        a.annotate(
            old.leaf_id,
            outdated_by=Correction(by=new.leaf_id, date="2026-05-01", reason="moved"),
        )
        done = b.apply_changes(_copy(a, b, a_changed(a, old.leaf_id)))
        assert done.annotated == (old.leaf_id,)
        assert not done.added
        entry = b.entry(old.leaf_id)
        assert entry is not None and entry.status == "outdated"
        assert [e.id for e in b.corrections_of(new.leaf_id)] == [old.leaf_id]
        outdated = b.read_leaf(old.leaf_id).outdated_by
        assert outdated is not None and outdated.by == new.leaf_id


def a_changed(store: Store, leaf_id: str) -> list[str]:
    """The replicated paths of one memory: its leaf and its notes."""
    entry = store.entry(leaf_id)
    assert entry is not None
    notes = store.path / "notes" / leaf_id
    rels = [entry.path]
    if notes.is_dir():
        rels += [p.relative_to(store.path).as_posix() for p in sorted(notes.iterdir())]
    return rels


def test_a_leaf_whose_text_changed_is_indexed_again(tmp_path: Path) -> None:
    a, (leaf,) = store_with(tmp_path / "a", ["The cache holds entries for ten minutes."])
    b = Store.create(tmp_path / "b")
    with a, b:
        rel = leaf_rel(leaf.leaf_id, leaf.domain)
        b.apply_changes(_copy(a, b, [rel]))
        path = b.path / rel
        path.write_bytes(path.read_bytes().replace(b"ten minutes", b"two hours"))
        done = b.apply_changes([rel])
        assert done.added == (leaf.leaf_id,)
        assert _found(b, "two hours") == [leaf.leaf_id]
        assert _found(b, "ten minutes") == []


def test_a_leaf_gone_from_disk_leaves_the_catalog_and_its_branch(tmp_path: Path) -> None:
    from ihmt_store import Branch, ChildRef

    b, leaves = store_with(tmp_path / "b", ["first note on lexers", "second note on parsers"])
    with b:
        branch = Branch(
            node_id="N1-general-0000000001",
            layer=1,
            domain="general",
            title="two notes",
            summary="two notes",
            children=tuple(
                ChildRef(id=x.leaf_id, kind="leaf", title=x.text, excerpt=x.text) for x in leaves
            ),
            leaf_count=2,
            created="2026-01-01T00:00:00Z",
        )
        b.put_branch(branch)
        b.set_parent([x.leaf_id for x in leaves], branch.node_id)
        rel = leaf_rel(leaves[0].leaf_id, leaves[0].domain)
        (b.path / rel).unlink()
        done = b.apply_changes([rel])
        assert done.removed == (leaves[0].leaf_id,)
        assert done.domains == ("general",)
        assert b.entry(leaves[0].leaf_id) is None
        assert [c.id for c in b.read_branch(branch.node_id).children] == [leaves[1].leaf_id]
        assert _found(b, "lexers") == []
        # Nothing else was deleted.
        assert (b.path / leaf_rel(leaves[1].leaf_id, leaves[1].domain)).exists()


def test_unreadable_and_foreign_paths_are_reported_or_ignored(tmp_path: Path) -> None:
    b, (leaf,) = store_with(tmp_path / "b", ["kept as it is"])
    with b:
        broken = "layer0/general/L-general-0009-0000000000.txt"
        (b.path / broken).write_text("not a leaf", encoding="utf-8")
        done = b.apply_changes(
            [broken, "README.md", "../outside.txt", "/etc/passwd", "layers/1/x.json"]
        )
        assert [p.path for p in done.problems] == [broken]
        assert not done
        assert (b.path / broken).read_text(encoding="utf-8") == "not a leaf"
        assert _ids(b) == {leaf.leaf_id}
        with pytest.raises(TypeError):
            b.apply_changes("layer0/general/x.txt")


def test_a_pulled_config_is_read_again(tmp_path: Path) -> None:
    a = Store.create(tmp_path / "a")
    b = Store.create(tmp_path / "b")
    with a, b:
        a.update_config(beam_width=5)
        done = b.apply_changes(_copy(a, b, ["ihmt.config.json"]))
        assert done.config and b.config.beam_width == 5


def test_replica_file_says_what_a_replicated_path_holds(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "s")
    leaf = store.put_leaf(make_leaf("The release train leaves on Thursdays.", domain="work"))
    rel = store.entry(leaf.leaf_id).path  # type: ignore[union-attr]
    assert ReplicaFile.of(rel) == ReplicaFile("leaf", leaf.leaf_id)
    data = (store.path / rel).read_bytes()
    assert ReplicaFile.text(data) == b"The release train leaves on Thursdays."
    assert ReplicaFile.leaf(data).text == leaf.text
    assert ReplicaFile.leaf(data).domain == "work"
    with pytest.raises(CorruptFileError):
        ReplicaFile.leaf(b"no header at all")
    assert ReplicaFile.text(b"no header at all") == b"no header at all"
    store.forget(leaf.leaf_id)
    tomb = ReplicaFile.tombstone_path(leaf.leaf_id)
    assert (store.path / tomb).is_file()
    assert ReplicaFile.of(tomb) == ReplicaFile("tombstone", leaf.leaf_id)
    assert ReplicaFile.of("ihmt.config.json").kind == "config"
    for other in (".gitignore", "layers/1/N1-x.json", "state/index.sqlite3", "layer0/a.txt"):
        assert ReplicaFile.of(other).kind == "other", other
    assert ReplicaFile.memory_globs(leaf.leaf_id) == (
        f"layer0/*/{leaf.leaf_id}.txt",
        f"notes/{leaf.leaf_id}",
    )
    store.close()


def test_replica_file_reads_the_operation_of_a_note(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "s")
    old, new = make_leaf("v1", position=1), make_leaf("v2", position=2)
    store.put_leaves([old, new])
    store.annotate(old.leaf_id, outdated_by=Correction(by=new.leaf_id, date="2026-01-01"))
    notes = sorted((store.path / "notes" / old.leaf_id).iterdir())
    assert len(notes) == 1
    rel = notes[0].relative_to(store.path).as_posix()
    assert ReplicaFile.of(rel) == ReplicaFile("note", old.leaf_id)
    assert ReplicaFile.note_op(notes[0].read_bytes()) == "outdated"
    assert ReplicaFile.note_op(b"[1, 2]") == ReplicaFile.note_op(b"{not json") == ""
    store.close()
