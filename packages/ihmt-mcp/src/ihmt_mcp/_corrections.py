"""Corrections: a memory flagged OUTDATED by a later one, the flag undone, and the list of
every correction (``ihmt corrections``). What :class:`~ihmt_mcp.Memory`'s
``mark_outdated``, ``restore`` and ``corrections`` run."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ihmt_mcp._records import CorrectionRecord, RestoreResult
from ihmt_store import LeafNotFoundError, one_line

if TYPE_CHECKING:
    from ihmt_mcp._parts import MemoryParts

logger = logging.getLogger(__name__)

__all__ = ["flag_outdated", "list_corrections", "undo_correction"]


def flag_outdated(memory: MemoryParts, old_id: str, new_id: str, reason: str = "") -> str:
    """What :meth:`Memory.mark_outdated` does (its docstring says what it raises)."""
    from ihmt_mcp._replaces import hint_of  # it loads the navigator: only when marking

    for leaf_id in (old_id, new_id):
        if memory.store.entry(leaf_id) is None:
            raise LeafNotFoundError(leaf_id)
    if old_id == new_id:
        raise ValueError("a memory cannot replace itself: give two different ids")
    # Following what corrected new_id must never lead back to old_id: A→B, B→C, C→A
    # would leave every one of them OUTDATED and none current.
    seen = {new_id}
    current = memory.store.entry(new_id)
    while current is not None and current.outdated_by and current.outdated_by not in seen:
        if current.outdated_by == old_id:
            raise ValueError(
                f"{new_id} is itself corrected (through {len(seen)} step(s)) by {old_id}: "
                f"marking {old_id} OUTDATED by it would make a cycle with no current "
                "memory. Restore one of them first if the chain is wrong."
            )
        seen.add(current.outdated_by)
        current = memory.store.entry(current.outdated_by)
    correction = memory.timeline.supersede(
        old_id, new_id, reason=reason or "marked outdated", hint=hint_of(reason)
    )
    logger.info("%s marked outdated by %s", old_id, new_id)
    return (
        f"{old_id} is now OUTDATED, corrected by {new_id} on {correction.date[:10]}; searches "
        "answer with the new memory first and relay the correction."
    )


def undo_correction(
    memory: MemoryParts, memory_id: str, corrected_by: str | None = None
) -> RestoreResult:
    """What :meth:`Memory.restore` does (its docstring says what it raises)."""
    entry = memory.store.entry(memory_id)
    if entry is None or entry.kind != "leaf":
        raise LeafNotFoundError(memory_id)
    marked_by = memory.store.read_leaf(memory_id).outdated_by
    if corrected_by and marked_by is not None and marked_by.by != corrected_by:
        raise ValueError(
            f"{memory_id} is flagged OUTDATED by {marked_by.by}, not by {corrected_by}: "
            f"nothing changed; to undo that mark, give new_id={marked_by.by}"
        )
    removed = memory.timeline.restore(memory_id)
    if removed is None:
        return RestoreResult(id=memory_id, restored=False)
    logger.info("%s restored (had been corrected by %s)", memory_id, removed.by)
    return RestoreResult(
        id=memory_id,
        restored=True,
        corrected_by=removed.by,
        corrected_on=removed.date,
        reason=removed.reason,
    )


def list_corrections(
    memory: MemoryParts, subject: str | None = None
) -> tuple[CorrectionRecord, ...]:
    """What :meth:`Memory.corrections` lists."""
    store = memory.store
    flagged = [e for e in store.iter_entries("leaf") if e.outdated_by]
    if not flagged:
        return ()
    shown = {
        (old, change.new_source)
        for change in memory.timeline.contradictions()
        for old in change.old_sources
    }
    wanted: set[str] | None = None
    project = None
    if subject is not None:
        wanted = {f.source for f in memory.timeline.facts(subject)}
        kind, _, name = subject.strip().lower().partition(":")
        project = name.strip() if kind == "project" and name.strip() else None
    newer = store.entries([e.outdated_by for e in flagged if e.outdated_by])
    out: list[CorrectionRecord] = []
    for entry in flagged:
        by = entry.outdated_by or ""
        if (entry.id, by) in shown:
            continue
        if wanted is not None and not (
            entry.id in wanted or by in wanted or (project and entry.project == project)
        ):
            continue
        new = newer.get(by)
        correction = store.read_leaf(entry.id).outdated_by
        out.append(
            CorrectionRecord(
                old_id=entry.id,
                old_date=entry.timestamp,
                old_text=one_line(entry.excerpt or entry.title, 100),
                new_id=by,
                new_date=entry.outdated_on or (new.timestamp if new else ""),
                new_text=one_line(new.excerpt or new.title, 100) if new else "",
                project=entry.project,
                reason=correction.reason if correction else "",
            )
        )
    return tuple(sorted(out, key=lambda c: (c.new_date, c.old_id)))
