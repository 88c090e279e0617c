"""The forget workflow: one memory deleted for good, with every trace of its text in the
tree, its facts and its corrections. What :meth:`Memory.forget` runs."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ihmt_mcp._records import ForgetResult
from ihmt_store import LeafNotFoundError

if TYPE_CHECKING:
    from ihmt_mcp._parts import MemoryParts

logger = logging.getLogger(__name__)

__all__ = ["forget_memory"]


def forget_memory(memory: MemoryParts, memory_id: str, reason: str = "") -> ForgetResult:
    """What :meth:`Memory.forget` does (its docstring says what it raises)."""
    store = memory.store
    entry = store.entry(memory_id)
    if entry is None or entry.kind != "leaf":
        raise LeafNotFoundError(memory_id)
    timeline = memory.timeline
    corrected = len(store.corrections_of(memory_id))
    parent = entry.parent_id
    characters = len(store.read_leaf(memory_id).text)
    # The timeline lets go first, the leaf second, under one lock: should the process
    # die in between, the leaf is still there and forgetting it again finishes the job.
    with store.locked():
        facts = timeline.forget(memory_id)
        store.forget(memory_id)
    from ihmt_navigator import VectorIndex

    VectorIndex.drop_snapshots(store)  # its vector, quantized, must not stay in one
    refreshed: tuple[str, ...] = ()
    if parent is not None:
        refreshed = memory._consolidator().refresh([parent])
    logger.info("forgot %s (%d branch(es) refreshed)", memory_id, len(refreshed))
    from ihmt_mcp.sync import is_synced  # the git driver loads only when it is used

    return ForgetResult(
        in_git_history=is_synced(store.path),
        id=memory_id,
        domain=entry.domain,
        project=entry.project,
        timestamp=entry.timestamp,
        characters=characters,
        branches_refreshed=refreshed,
        facts_removed=facts,
        corrections_cleared=corrected,
        reason=reason,
    )
