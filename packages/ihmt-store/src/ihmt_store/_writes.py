"""Leaves and branches staged in a write's batch and indexed in the same step.

:func:`stage_leaves` is the work of ``Store.put_leaves``: new leaves go to the catalog
together, a changed one is rewritten, and the annotations a caller gave become a catalog
change and a note (:func:`settle`). :func:`stage_branch` and :func:`set_parents` are the
work of ``put_branch`` and ``set_parent``. :func:`write_leaf` and :func:`write_branch`
stage one file and index it; :func:`leave_parent` drops a departing leaf from its branch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ihmt_store._annotations import UNSET, add_note, complete, correction_of, normalized
from ihmt_store._batch import Batch
from ihmt_store._files import MAX_LEAF_BYTES
from ihmt_store._index import Entry, Fields, Index, branch_row, leaf_row
from ihmt_store._layout import FORGOTTEN_DIR, NOTES_DIR, branch_rel, leaf_rel
from ihmt_store._notes import Clock, index_leaf
from ihmt_store._records import Branch, Leaf, check_id, latest_date
from ihmt_store._tombstones import unbury_leaf
from ihmt_store.errors import BranchNotFoundError, LeafNotFoundError

__all__ = [
    "check_writable",
    "leave_parent",
    "set_parents",
    "settle",
    "stage_branch",
    "stage_leaves",
    "write_branch",
    "write_leaf",
]


def stage_leaves(
    root: Path,
    clock: Clock,
    batch: Batch,
    index: Index,
    leaves: Iterable[Leaf],
    read_leaf: Callable[[str], Leaf],
) -> tuple[list[Leaf], dict[str, Leaf]]:
    """``Store.put_leaves`` in its batch: the leaves stored, in order, and the completed
    record of each that was settled (annotations, notes), by id.

    Args:
        read_leaf: reads a catalogued leaf's file (through the batch, not counted).
    """
    stored: list[Leaf] = []
    leaves = list(leaves)
    latest = latest_date()
    for leaf in leaves:
        check_writable(leaf, latest)
    known = index.get_many([leaf.leaf_id for leaf in leaves])
    # Which leaves have a tombstone or notes on disk, listed once for all of them (under
    # the store lock nothing else adds either meanwhile) instead of two lookups a leaf.
    buried = _names(root / FORGOTTEN_DIR)
    noted = _names(root / NOTES_DIR)
    # New leaves go to the index together, at the end (or before a repeat).
    fresh: dict[str, tuple[Entry, Fields]] = {}
    later: list[tuple[Leaf, Leaf]] = []
    for leaf in leaves:
        rel = leaf_rel(leaf.leaf_id, leaf.domain)
        bare = leaf.evolve(parent_id=None, outdated_by=None)
        if leaf.leaf_id in fresh:
            index.insert_new(list(fresh.values()))
            fresh.clear()
            existing = index.get(leaf.leaf_id)
        else:
            existing = known.get(leaf.leaf_id)
        if leaf.leaf_id in batch.gone or f"{leaf.leaf_id}.json" in buried:
            unbury_leaf(root, batch, leaf.leaf_id)
        if existing is None:
            batch.note(rel)
            batch.write(rel, bare)
            if leaf.leaf_id in noted:
                later.append((leaf, bare))  # its notes are folded in below
            else:
                fresh[leaf.leaf_id] = leaf_row(bare, rel, 0)
                if leaf.parent_id is not None or leaf.outdated_by is not None:
                    later.append((leaf, bare))
            stored.append(leaf)
            continue
        if existing.path != rel:
            raise ValueError(f"leaf {leaf.leaf_id} already exists in domain {existing.domain}")
        try:
            old = read_leaf(existing.path)
        except LeafNotFoundError:
            # Its file was deleted by hand (the catalog just let go of it).
            write_leaf(root, batch, index, bare, rel, parent=None)
            later.append((leaf, bare))
            stored.append(leaf)
            continue
        if old.evolve(parent_id=None, outdated_by=None) != bare:
            write_leaf(root, batch, index, bare, rel)
        later.append((leaf, bare))
        stored.append(leaf)
    index.insert_new(list(fresh.values()))
    done: dict[str, Leaf] = {}
    for leaf, bare in later:
        settle(root, clock, batch, index, leaf, bare)
    for _, bare in later:
        done[bare.leaf_id] = complete(index, bare, index.get(bare.leaf_id))
    return stored, done


def _names(folder: Path) -> frozenset[str]:
    """The names in ``folder`` (none when it does not exist)."""
    try:
        return frozenset(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return frozenset()


def check_writable(leaf: Leaf, latest: str) -> None:
    """Refuse a leaf the store would not read back (``_files.load_leaf``): dated later
    than ``latest`` (:func:`~ihmt_store._records.check_date`'s rule), or a text larger than
    :data:`~ihmt_store._files.MAX_LEAF_BYTES`.

    Raises:
        ValueError: either; nothing of the batch is written.
    """
    if leaf.timestamp > latest:
        raise ValueError(
            f"memory {leaf.leaf_id}: the date {leaf.timestamp[:10]} is in the future: date a "
            "memory when what it says became true (today or earlier)"
        )
    # Four bytes a character at most: most texts are checked without encoding them.
    if len(leaf.text) * 4 > MAX_LEAF_BYTES - 65536 and (
        len(leaf.text.encode("utf-8")) > MAX_LEAF_BYTES - 65536
    ):
        raise ValueError(
            f"memory {leaf.leaf_id}: its text is too large for one memory (the limit is "
            f"{MAX_LEAF_BYTES // 2**20} MiB); ingest it, which stores it in pieces"
        )


def settle(root: Path, clock: Clock, batch: Batch, index: Index, leaf: Leaf, bare: Leaf) -> None:
    """After a leaf is staged: index it with its notes, and turn the annotations the
    caller gave (a parent, a correction) into a catalog change and a note."""
    rel = leaf_rel(leaf.leaf_id, leaf.domain)
    entry = index.get(leaf.leaf_id)
    if entry is None:  # a catalogued leaf already holds the fold of its notes
        write_leaf(root, batch, index, bare, rel, index_only=True)
        entry = index.get(leaf.leaf_id)
    assert entry is not None
    parent = leaf.parent_id
    if parent is not None and parent != entry.parent_id and index.get(parent) is not None:
        index.set_parent([leaf.leaf_id], parent)
    wanted = normalized(leaf.outdated_by) if leaf.outdated_by is not None else None
    if wanted is not None and correction_of(index, leaf.leaf_id) != wanted:
        add_note(root, clock, batch, index, "outdated", leaf.leaf_id, wanted)


def write_leaf(
    root: Path,
    batch: Batch,
    index: Index,
    leaf: Leaf,
    rel: str,
    *,
    parent: str | None = UNSET,
    index_only: bool = False,
) -> None:
    """Stage a leaf's file (unless ``index_only``) and index it with its notes; its
    parent is the catalog's unless ``parent`` is given."""
    # The file's bytes are made once, at commit; the index learns its size then.
    batch.note(rel)
    if not index_only:
        batch.write(rel, leaf.evolve(parent_id=None, outdated_by=None))
    size = 0  # a staged file's size is learnt at commit
    if not batch.staged(rel):
        try:
            size = (root / rel).stat().st_size
        except OSError:
            size = 0
    keep: dict[str, Any] = {} if parent is UNSET else {"parent": parent}
    index_leaf(
        root,
        index,
        leaf.evolve(outdated_by=None),
        rel,
        size,
        staged=batch.notes.get(leaf.leaf_id, ()),
        gone=batch.gone,
        **keep,
    )


def stage_branch(batch: Batch, index: Index, branch: Branch) -> Branch:
    """``Store.put_branch`` in its batch: the branch keeps the parent the catalog gives
    it unless it names one, and the loose leaves it lists take it as their parent."""
    rel = branch_rel(branch.node_id, branch.layer)
    existing = index.get(branch.node_id)
    if existing is not None and branch.parent_id is None and existing.parent_id:
        branch = branch.evolve(parent_id=existing.parent_id)
    write_branch(batch, index, branch, rel)
    index.adopt_listed(branch.node_id, [c.id for c in branch.children if c.kind == "leaf"])
    return branch


def set_parents(
    batch: Batch,
    index: Index,
    child_ids: Sequence[str],
    parent_id: str | None,
    read_item: Callable[[str, type[Leaf | Branch]], Leaf | Branch],
) -> None:
    """``Store.set_parent`` in its batch: the catalog's parent changes, and a branch's
    file is stamped with it.

    Args:
        read_item: reads an item's file (through the batch, not counted).
    """
    if parent_id is not None:
        check_id(parent_id, "parent id")
    known = index.get_many(child_ids)
    moved = []
    for child in child_ids:
        entry = known.get(child)
        if entry is None:
            raise LeafNotFoundError(child)
        if entry.parent_id == parent_id:
            continue
        moved.append(child)
        if entry.kind == "leaf":
            batch.changed = True
            continue  # a leaf's parent lives in the catalog (format 2)
        # Only the header changes: the file is rewritten, the full-text row stays.
        kind = Branch
        record = read_item(entry.path, kind).evolve(parent_id=parent_id)
        batch.note(entry.path)
        batch.write(entry.path, record)
    index.set_parent(moved, parent_id)


def write_branch(batch: Batch, index: Index, branch: Branch, rel: str) -> None:
    """Stage a branch's file and index it with the children it lists."""
    batch.note(rel)
    batch.write(rel, branch)
    row, fields = branch_row(branch, rel, 0)
    index.upsert(row, fields, [c.id for c in branch.children])


def leave_parent(
    batch: Batch, index: Index, entry: Entry, read_branch: Callable[[str], Branch]
) -> None:
    """Drop a departing leaf from its parent branch's children (and the excerpt the
    branch embedded); summaries above are the caller's to refresh.

    Args:
        read_branch: reads a branch's file (through the batch, not counted).
    """
    if not entry.parent_id:
        return
    parent = index.get(entry.parent_id)
    if parent is None:
        return
    try:
        branch = read_branch(parent.path)
    except BranchNotFoundError:
        return
    kept = tuple(c for c in branch.children if c.id != entry.id)
    if len(kept) == len(branch.children):
        return
    write_branch(
        batch,
        index,
        branch.evolve(children=kept, leaf_count=max(0, branch.leaf_count - 1)),
        parent.path,
    )
