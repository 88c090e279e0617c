"""A leaf's annotations as the store writes and reads them: notes, folded into the catalog.

A correction, a restore and ``extra`` keys are each written as a note in the write's batch
(:func:`add_note`) and the leaf's notes folded again; the catalog then holds the fold
(:func:`correction_of`), and a leaf read from its file is completed with it
(:func:`complete`). :func:`change_annotations` is the work of ``Store.annotate``. The note
files themselves, their fold and the clock that names them are ``_notes.py``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ihmt_store._batch import Batch
from ihmt_store._index import Entry, Index
from ihmt_store._layout import STATE_DIR
from ihmt_store._notes import CLOCK_FILE, Clock, NoteOp, newest, read_notes, refold
from ihmt_store._records import Correction, Leaf, check_id, normalize_timestamp

__all__ = [
    "UNSET",
    "add_note",
    "change_annotations",
    "complete",
    "completed",
    "correction_of",
    "normalized",
]

UNSET: Any = object()
"""The default of an annotation argument not given (None means "remove it")."""


def normalized(correction: Correction) -> Correction:
    """``correction`` with its date in the canonical form (as a note stores it)."""
    date = normalize_timestamp(correction.date)
    return correction if date == correction.date else dataclasses.replace(correction, date=date)


def correction_of(index: Index, leaf_id: str) -> Correction | None:
    """A leaf's current correction, as the catalog holds the fold of its notes."""
    entry = index.get(leaf_id)
    if entry is None or not entry.outdated_by:
        return None
    reason = index.folded_of([leaf_id]).get(leaf_id, ("", {}))[0]
    return Correction(by=entry.outdated_by, date=entry.outdated_on or "", reason=reason)


def add_note(
    root: Path, clock: Clock, batch: Batch, index: Index, op: NoteOp, leaf_id: str, value: Any
) -> None:
    """Write a note (``outdated`` with a Correction, ``restored``, ``extra`` with a
    dict) and fold the leaf again. The clock moves past the leaf's notes first."""
    on_disk = read_notes(root, leaf_id)  # read once: observed, then folded
    clock.observe(newest([*on_disk, *batch.notes.get(leaf_id, ())]))
    if op == "outdated":
        assert isinstance(value, Correction)
        note = clock.note("outdated", leaf_id, by=value.by, date=value.date, reason=value.reason)
    elif op == "extra":
        note = clock.note("extra", leaf_id, extra=dict(value))
    else:
        note = clock.note("restored", leaf_id)
    # The clock lands with the note, staged first: it never lags behind a note on disk.
    batch.write_raw(f"{STATE_DIR}/{CLOCK_FILE}", clock.to_bytes())
    batch.add_note(note)
    refold(
        root,
        index,
        leaf_id,
        staged=batch.notes.get(leaf_id, ()),
        gone=batch.gone,
        on_disk=on_disk,
    )


def complete(index: Index, leaf: Leaf, entry: Entry | None) -> Leaf:
    """A leaf read from its file, with what the catalog holds about it: its parent,
    its correction and the ``extra`` keys its notes added."""
    if entry is None:
        return leaf
    folded = index.folded_of([leaf.leaf_id]).get(leaf.leaf_id)
    return completed(leaf, entry, folded)


def completed(leaf: Leaf, entry: Entry, folded: tuple[str, dict[str, Any]] | None) -> Leaf:
    """:func:`complete` with the fold already read (``folded``: its reason and extra keys)."""
    reason, more = folded or ("", {})
    outdated = (
        Correction(by=entry.outdated_by, date=entry.outdated_on or "", reason=reason)
        if entry.outdated_by
        else None
    )
    extra = {**leaf.extra, **more} if more else leaf.extra
    return leaf.evolve(parent_id=entry.parent_id, outdated_by=outdated, extra=extra)


def change_annotations(
    root: Path,
    clock: Clock,
    batch: Batch,
    index: Index,
    entry: Entry,
    leaf: Leaf,
    outdated_by: Correction | None,
    parent_id: str | None,
    extra: dict[str, Any] | None,
) -> Leaf:
    """``Store.annotate`` in its batch, for the completed ``leaf`` of ``entry``: a note per
    changed annotation, the catalog's parent changed; the leaf as it is now."""
    leaf_id = entry.id
    if outdated_by is not UNSET and outdated_by is not None:
        outdated_by = normalized(outdated_by)
    if outdated_by is not UNSET and outdated_by != leaf.outdated_by:
        if outdated_by is None:
            add_note(root, clock, batch, index, "restored", leaf_id, None)
        else:
            add_note(root, clock, batch, index, "outdated", leaf_id, outdated_by)
    if parent_id is not UNSET and parent_id != entry.parent_id:
        if parent_id is not None:
            check_id(parent_id, "parent id")
            if index.get(parent_id) is None:
                parent_id = None  # its branch file is gone
        index.set_parent([leaf_id], parent_id)
        batch.changed = True
    if extra:
        changed = {k: v for k, v in extra.items() if leaf.extra.get(k, UNSET) != v}
        if changed:
            add_note(root, clock, batch, index, "extra", leaf_id, changed)
    return complete(index, leaf, index.get(leaf_id))
