"""Branch summaries after the words: a bulk ingest groups its memories at once, and
summarises the groups afterwards.

Summarising was the largest part of an ingest (a keyword list per memory, a summary per
branch), and nothing reads a summary while an ingest runs: answers come from the
memories, and a branch's text only shows in the tree and in the note naming the branch
a broad answer sits under. So ``ingest`` commits the memories, their facts and their
branches, each branch listing its children (ids, titles, spans, counts) with its summary
still to be written (:data:`ihmt_navigator.PENDING`), and the summaries follow: written by
the command line's ``ingest`` once the words are committed, by the MCP server in the
thread that fills vectors, or by ``ihmt index``; an ingest of at most
:data:`INLINE_SUMMARIES` memories writes them before it returns. Until then such a branch
is titled by its first and last memory, and says it has no summary yet. Summaries are
derived: nothing acknowledged waits on them, and a fill that stops half-way keeps every
batch it committed (the next one finishes the rest).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ihmt_mcp._parts import MemoryParts
    from ihmt_mcp._read_ahead import Found
    from ihmt_mcp._records import IngestReport
    from ihmt_store import Leaf

logger = logging.getLogger(__name__)

__all__ = [
    "INLINE_SUMMARIES",
    "fill_summaries",
    "pending_summaries",
    "store_group_later",
    "summaries_later",
]

INLINE_SUMMARIES = 2048
"""An ingest of at most this many memories writes its branch summaries before it returns
(one group of an ingest: the summaries are then exactly those consolidation writes at
once); a larger one leaves them to the fill."""

_PENDING = "branches of the tree have no summary yet"


def _pending_text(count: int) -> str:
    return (
        f"{count:,} {_PENDING} (the MCP server writes them, or run 'ihmt index'); each is"
        " titled by its first and last memory meanwhile, and every memory is found as usual"
    )


def store_group_later(
    memory: MemoryParts,
    leaves: Sequence[Leaf],
    *,
    consolidate: bool,
    found: Found | None = None,
) -> tuple[list[Leaf], int, tuple[str, ...]]:
    """One group of an ingest, as ``Memory._store_group`` stores it (the leaves and their
    branches in one store batch, then their facts), with the branches' summaries left
    for later. ``found``: what the fact rules found in the leaves, run elsewhere (the
    worker that read the files: ``Timeline.prepare``).

    Returns:
        the leaves stored, the branches created, the facts' notices.
    """
    created = 0
    store = memory.store
    with store.batch():
        stored = store.put_leaves(leaves)
        if consolidate:
            consolidator = memory._consolidator()
            consolidator.deferred = True
            domains = sorted({leaf.domain for leaf in stored})
            created = len(consolidator.consolidate(domains=domains).branches_created)
    timeline = memory.timeline
    with store.locked():
        timeline.prepare(found or {})
        try:
            notices = memory._ingest_facts(stored)
        finally:
            timeline.prepare({})
    return stored, created, notices


def pending_summaries(memory: MemoryParts) -> int:
    """Branches whose summary is still to be written."""
    return len(memory._consolidator().pending())


def summaries_later(memory: MemoryParts, report: IngestReport) -> IngestReport:
    """``report`` of an ingest, its summaries written when it was small (up to
    :data:`INLINE_SUMMARIES` memories), else saying how many branches wait for theirs."""
    if not report.branches_created:
        return report
    if report.leaves <= INLINE_SUMMARIES:
        return fill_summaries(memory, report) or report
    # Counted from the catalog (no branch file opened): every branch without a summary.
    missing = sum(1 for e in memory.store.iter_entries("branch") if not e.excerpt)
    if not missing:
        return report
    return dataclasses.replace(report, warnings=(*report.warnings, _pending_text(missing)))


def fill_summaries(
    memory: MemoryParts,
    report: IngestReport | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    stop: threading.Event | None = None,
) -> IngestReport | None:
    """Write now the branch summaries an ingest left for later; ``report`` as things then
    stand (None when none is given).

    :data:`~ihmt_navigator._consolidate.SUMMARIES_PER_BATCH` branches a commit, lowest
    layer first: ``stop`` ends it after the current batch, every committed summary stays,
    and the report says how many branches still wait for theirs.
    ``progress(done, total)`` follows the branches.
    """
    consolidator = memory._consolidator()
    written = consolidator.summarize_pending(stop=stop, progress=progress)
    if written:
        logger.info("wrote %d branch summary(ies) an ingest left for later", len(written))
    if report is None:
        return None
    kept = tuple(w for w in report.warnings if _PENDING not in w)
    missing = len(consolidator.pending()) if stop is not None and stop.is_set() else 0
    if missing:
        kept = (*kept, _pending_text(missing))
    return dataclasses.replace(report, warnings=kept)
