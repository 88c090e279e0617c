"""Memory files another machine wrote, brought in: indexed, then everything derived from
them made current (:meth:`ihmt_mcp.Memory.apply_pulled` calls the two steps, and between
them lets go of a summarizer that a pulled config may have changed)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from ihmt_mcp._parts import MemoryParts
from ihmt_store import AppliedChanges

__all__ = ["derive_pulled", "index_pulled"]

logger = logging.getLogger(__name__)


def index_pulled(memory: MemoryParts, paths: Iterable[str]) -> tuple[AppliedChanges, set[str]]:
    """Index the pulled ``paths`` (store-relative, as ``git diff --name-only`` gives them)
    and fold their facts, under the lock; also the parents of the memories they name,
    whose summaries may list a removed one."""
    store = memory.store
    paths = list(paths)
    with store.locked():
        named = {Path(p).stem for p in paths if p.endswith((".txt", ".json"))}
        parents = {e.parent_id for e in store.entries(sorted(named)).values() if e.parent_id}
        applied = store.apply_changes(paths)
        timeline = memory.timeline
        for leaf_id in applied.removed:
            timeline.forget(leaf_id)
        changed = [*applied.added, *applied.annotated]
        present = store.entries(changed)  # one catalog read, not one per memory
        live = [i for i in changed if i in present]
        if live:
            memory._ingest_facts(live)
    return applied, parents


def derive_pulled(memory: MemoryParts, applied: AppliedChanges, parents: set[str]) -> None:
    """Embed the new memories, rewrite the summaries that listed a removed one and
    consolidate the domains touched."""
    memory._write_vectors(memory.store.read_leaves(list(applied.added)))
    if applied.removed and parents:
        memory._consolidator().refresh(sorted(parents))
    if applied.domains:
        memory._consolidate_domains(set(applied.domains))
    logger.info(
        "applied pulled files: %d new, %d annotated, %d removed",
        len(applied.added),
        len(applied.annotated),
        len(applied.removed),
    )
