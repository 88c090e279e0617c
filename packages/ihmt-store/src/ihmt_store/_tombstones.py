"""Forgetting a leaf inside a write's batch, and saving a forgotten one again.

:func:`bury_leaf` writes the leaf's tombstone (``forgotten/<id>``), removes its files and
notes and its catalog row, and folds again the leaves it had corrected;
:func:`unbury_leaf` lifts a tombstone when the same memory is saved again. Applying a
tombstone found on disk outside a batch (recovery) is ``_batch.bury``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ihmt_store._batch import Batch
from ihmt_store._files import unlink_quietly
from ihmt_store._index import Index
from ihmt_store._layout import NOTES_DIR
from ihmt_store._notes import note_files, note_rel, refold, tombstone_bytes, tombstone_rel

__all__ = ["bury_leaf", "unbury_leaf"]


def bury_leaf(root: Path, batch: Batch, index: Index, leaf_id: str, rels: Iterable[str]) -> None:
    """Forget ``leaf_id`` in this batch: its tombstone is written (unless there), its
    leaf files ``rels`` and its notes go, its row goes, and the leaves it corrected
    fold again without its corrections. Deletes nothing a tombstone does not name."""
    tomb = tombstone_rel(leaf_id)
    if not (root / tomb).is_file() and not batch.staged(tomb):
        batch.note(tomb)
        batch.write_raw(tomb, tombstone_bytes(leaf_id))
    batch.gone.add(leaf_id)
    for rel in rels:
        batch.note(rel)
        batch.remove(rel)
    for rel in note_files(root, leaf_id):
        batch.note(rel)
        batch.remove(rel)
    for note in batch.notes.pop(leaf_id, []):
        batch.remove(note_rel(note))
    batch.prune.add(f"{NOTES_DIR}/{leaf_id}")
    index.delete(leaf_id)
    for other in index.corrected_by(leaf_id):
        refold(root, index, other.id, staged=batch.notes.get(other.id, ()), gone=batch.gone)


def unbury_leaf(root: Path, batch: Batch, leaf_id: str) -> None:
    """A forgotten memory saved again: its tombstone goes (the save wins).

    Deleted now, before the batch lands its files: recovery applies a tombstone it
    finds, and must not delete the leaf this save is writing."""
    rel = tombstone_rel(leaf_id)
    if leaf_id in batch.gone:
        batch.gone.discard(leaf_id)
        batch.remove(rel)
    if (root / rel).exists():
        batch.note(rel)
        unlink_quietly(root / rel)
