"""Replicated files that changed on disk, brought into the catalog and the full-text index.

:func:`apply_paths` is the work of ``Store.apply_changes`` inside its batch, for the paths
a merge changed (sorted by ``_replicate.sort_changes``): a tombstone wins over a leaf file
or a note a merge brought back, a leaf file is indexed as it is now (:func:`apply_leaf`),
and a leaf whose notes changed is folded again. :class:`Applied` collects what changed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ihmt_store._batch import Batch
from ihmt_store._files import load_leaf
from ihmt_store._index import Entry, Index
from ihmt_store._layout import misplaced_leaf
from ihmt_store._lifecycle import Problem
from ihmt_store._notes import Clock, index_leaf, is_tombstoned, note_files, refold
from ihmt_store._records import Branch
from ihmt_store._replicate import AppliedChanges, Changed
from ihmt_store._stats import IOStats
from ihmt_store._tombstones import bury_leaf
from ihmt_store._writes import leave_parent
from ihmt_store.errors import CorruptFileError

# Logged under the Store's module, where this work was done before it had a module of
# its own: ``ihmt -v`` prints the logger's name, and its output stays the same.
logger = logging.getLogger("ihmt_store._store")

__all__ = ["Applied", "apply_leaf", "apply_paths"]


@dataclass(slots=True)
class Applied:
    """What one ``apply_changes`` did, collected while its batch runs."""

    added: set[str] = field(default_factory=set)
    annotated: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    domains: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)

    def changes(self, *, config: bool) -> AppliedChanges:
        """The record ``apply_changes`` returns (a leaf added or removed is not also
        listed as annotated)."""
        annotated = self.annotated - (self.added | self.removed)
        return AppliedChanges(
            added=tuple(sorted(self.added)),
            annotated=tuple(sorted(annotated)),
            removed=tuple(sorted(self.removed)),
            domains=tuple(sorted(self.domains)),
            problems=tuple(self.problems),
            config=config,
        )


def apply_paths(
    root: Path,
    clock: Clock,
    io: IOStats,
    batch: Batch,
    index: Index,
    changed: Changed,
    read_branch: Callable[[str], Branch],
) -> Applied:
    """Bring the catalog in step with the changed replicated files, in this batch.

    Args:
        io: counts the leaf files read.
        read_branch: reads a branch's file (through the batch, not counted).
    """
    applied = Applied()
    added, annotated, removed = applied.added, applied.annotated, applied.removed
    domains, problems = applied.domains, applied.problems
    ids = {*changed.leaves.values(), *changed.notes, *changed.tombstones}
    known = {k: v for k, v in index.get_many(sorted(ids)).items() if v.kind == "leaf"}
    # A tombstone wins over a leaf file or a note a merge brought back.
    tombstoned = {leaf_id for leaf_id in ids if is_tombstoned(root, leaf_id)}
    for leaf_id in sorted(tombstoned):
        entry = known.get(leaf_id)
        files = {rel for rel, i in changed.leaves.items() if i == leaf_id}
        files = {rel for rel in files if os.path.lexists(root / rel)}
        if entry is not None:
            files.add(entry.path)
            leave_parent(batch, index, entry, read_branch)
            domains.add(entry.domain)
        if files or note_files(root, leaf_id):
            batch.scrub = batch.scrub or entry is not None
            bury_leaf(root, batch, index, leaf_id, sorted(files))
        if entry is not None or files:
            removed.add(leaf_id)
    for rel, leaf_id in sorted(changed.leaves.items()):
        if leaf_id in tombstoned:
            continue
        outcome = apply_leaf(
            root, clock, io, batch, index, rel, leaf_id, known.get(leaf_id), problems, read_branch
        )
        if outcome is not None:
            verdict, domain = outcome
            domains.add(domain)
            {"added": added, "annotated": annotated, "removed": removed}[verdict].add(leaf_id)
    for leaf_id in sorted(changed.notes - set(changed.leaves.values()) - tombstoned):
        entry = index.get(leaf_id)
        if entry is None or entry.kind != "leaf":
            continue  # its leaf has not arrived: folded when it does
        before = (entry.outdated_by, entry.outdated_on, index.folded_of([leaf_id]))
        folded = refold(root, index, leaf_id)
        if folded is None:
            continue
        clock.observe(folded.newest)
        after = index.get(leaf_id)
        assert after is not None
        if before != (after.outdated_by, after.outdated_on, index.folded_of([leaf_id])):
            batch.changed = True
            annotated.add(leaf_id)
            domains.add(entry.domain)
    return applied


def apply_leaf(
    root: Path,
    clock: Clock,
    io: IOStats,
    batch: Batch,
    index: Index,
    rel: str,
    leaf_id: str,
    existing: Entry | None,
    problems: list[Problem],
    read_branch: Callable[[str], Branch],
) -> tuple[str, str] | None:
    """Index the leaf file at ``rel`` as it is now, or drop its row if it is gone;
    ``(verdict, domain)``, or None when nothing changed."""
    full = root / rel
    try:
        leaf, data, _ = load_leaf(full, root)
    except FileNotFoundError:
        if existing is None or existing.path != rel:
            return None
        batch.note(rel)
        leave_parent(batch, index, existing, read_branch)
        index.delete(leaf_id)
        batch.scrub = True
        return "removed", existing.domain
    except (CorruptFileError, OSError) as exc:
        logger.warning("%s; left as it is and kept out of the index", exc)
        problems.append(Problem(path=rel, reason=str(exc)))
        return None
    io.files_read += 1
    io.bytes_read += len(data)
    io.leaf_reads += 1
    if existing is not None and existing.path != rel:
        problems.append(
            Problem(
                path=rel,
                reason=f"a second copy of {leaf_id} (the one at {existing.path} is used); "
                "skipped, delete it",
            )
        )
        return None
    misplaced = misplaced_leaf(rel, leaf_id, leaf.domain)
    if misplaced:  # indexed all the same, as a rebuild does
        logger.warning("%s: %s", rel, misplaced)
        problems.append(Problem(path=rel, reason=misplaced))
    # The catalog's parent, not the file's: consolidation is local to each machine.
    before = index.indexed_fields(leaf_id) if existing is not None else None
    folded_before = index.folded_of([leaf_id]) if existing is not None else {}
    row, folded = index_leaf(root, index, leaf, rel, len(data))
    clock.observe(folded.newest)
    fields = index.indexed_fields(leaf_id)
    if existing is None or (
        before != fields or existing.excerpt != row.excerpt or existing.tokens != row.tokens
    ):
        verdict = "added"
    elif (existing.status, existing.outdated_by, existing.outdated_on) != (
        row.status,
        row.outdated_by,
        row.outdated_on,
    ) or folded_before != index.folded_of([leaf_id]):
        verdict = "annotated"
    elif existing == row:
        return None
    else:
        verdict = ""
    batch.note(rel)
    return (verdict, leaf.domain) if verdict else None
