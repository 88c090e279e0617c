"""Vectors after the words: a bulk ingest stores its memories first, meaning later.

Embedding is the slow part of a bulk ingest (a few hundred texts a second on one core,
against thousands of memories a second for the rest). So ``ingest`` stores the memories,
their facts and their branches, and leaves their vectors to be computed afterwards: by
the command line's ``ingest`` itself once the words are committed (:func:`fill_vectors`),
by the MCP server, which fills every missing vector in a thread of its own from the
moment it starts, or by ``ihmt index --semantic``. Until then those memories are found by their
words, and every answer says how many are not yet searchable by meaning. Vectors are
derived state: nothing acknowledged waits on them, and a fill that stops half-way
(the server ends) keeps every batch it committed.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ihmt_mcp._memory import Memory
    from ihmt_mcp._parts import MemoryParts
    from ihmt_mcp._records import IngestReport
    from ihmt_navigator import SearchResult

logger = logging.getLogger(__name__)

INLINE_VECTORS = 256
"""An ingest that leaves at most this many memories without a vector embeds them before
it returns (about a second); a larger one leaves them to the fill."""

__all__ = [
    "VectorFill",
    "fill_vectors",
    "pending_vectors",
    "vectors_later",
    "with_pending_vectors",
]


def pending_vectors(memory: Memory) -> int:
    """Memories that have no vector yet, counted cheaply (memories less vectors held in
    memory, as of the last search); 0 when the semantic layer is off."""
    vectors = memory.vectors
    if vectors is None:
        return 0
    return max(0, memory.store.count("leaf") - vectors.size)


_PENDING = "memories are not yet searchable by meaning"


def _pending_text(count: int) -> str:
    return (
        f"{count:,} {_PENDING} (their vectors are being"
        " computed: the MCP server fills them in, or run 'ihmt index --semantic'); they"
        " are found by their words meanwhile"
    )


def vectors_later(memory: MemoryParts, report: IngestReport) -> IngestReport:
    """``report`` of an ingest, its vectors computed when they are few (up to
    :data:`INLINE_VECTORS`), else saying how many memories wait for theirs."""
    if not report.leaves:
        return report
    missing = memory.vectors_missing() or 0
    if 0 < missing <= INLINE_VECTORS:
        missing -= memory.index_semantic()
    if missing <= 0:
        return report
    return dataclasses.replace(report, warnings=(*report.warnings, _pending_text(missing)))


def fill_vectors(
    memory: Memory,
    report: IngestReport,
    progress: Callable[[int, int], None] | None = None,
    *,
    stop: threading.Event | None = None,
) -> IngestReport:
    """Compute now the vectors an ingest left for later; ``report`` as things then stand.

    What the command line's ``ingest`` does once the words are committed: a user who
    never starts the MCP server expects the memories to be searchable by meaning when
    the command ends. Texts are embedded :data:`~ihmt_navigator.BATCH` at a time, each
    batch one commit: ``stop`` (set from a Ctrl-C handler) ends the fill after the
    current batch, every committed vector stays, and the report says how many memories
    still wait for theirs (the MCP server or ``ihmt index --semantic`` fills them).
    ``progress(done, total)`` follows the memories embedded.
    """
    vectors = memory.vectors
    if vectors is None or not report.leaves:
        return report
    store = memory.store

    def texts(chunk: Sequence[str]) -> dict[str, str]:
        return {leaf.leaf_id: leaf.text for leaf in store.read_leaves(chunk)}

    ids = [entry.id for entry in store.iter_entries("leaf")]
    vectors.backfill(texts, ids, progress, stop=stop)
    kept = tuple(w for w in report.warnings if _PENDING not in w)
    missing = memory.vectors_missing() or 0
    if missing:
        kept = (*kept, _pending_text(missing))
    return dataclasses.replace(report, warnings=kept)


def with_pending_vectors(memory: Memory, result: SearchResult) -> SearchResult:
    """``result``, saying so when some memories could not be weighed by meaning."""
    missing = pending_vectors(memory)
    if not missing:
        return result
    from ihmt_store import estimate_tokens

    said = _pending_text(missing)
    compact = f"{result.compact}\nNOTE: {said}." if result.compact else result.compact
    return dataclasses.replace(
        result,
        notices=(*result.notices, said),
        compact=compact,
        tokens=estimate_tokens(compact) if compact else result.tokens,
    )


class VectorFill:
    """Writes the branch summaries an ingest left for later (:mod:`ihmt_mcp._summary_fill`),
    then fills in every missing vector, in a daemon thread (the MCP server's), with a
    :class:`~ihmt_mcp.Memory` of its own opened by ``open_memory``: the store lock
    serialises its commits (one per :data:`~ihmt_navigator.BATCH` memories) with the
    server's saves. A failure is logged; it never ends the server."""

    def __init__(self, open_memory: Callable[[], Memory]) -> None:
        self._open_memory = open_memory
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.filled = 0
        """Vectors computed so far."""

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="ihmt-vectors", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to end after its current batch, and wait for it (bounded)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        try:
            memory = self._open_memory()
            try:
                # The branch summaries an ingest left for later first: the fastest, and
                # what the tree and the broad answers' notes show.
                from ihmt_mcp._summary_fill import fill_summaries

                fill_summaries(memory, stop=self._stop)
                if self._stop.is_set():
                    return
                vectors = memory.vectors
                if vectors is None or not memory.vectors_missing():
                    return
                store = memory.store
                ids = [entry.id for entry in store.iter_entries("leaf")]

                def texts(chunk: Sequence[str]) -> dict[str, str]:
                    return {leaf.leaf_id: leaf.text for leaf in store.read_leaves(chunk)}

                self.filled = vectors.backfill(texts, ids, stop=self._stop)
            finally:
                memory.close()
        except Exception as exc:  # noqa: BLE001 (vectors are derived: words still answer)
            logger.warning("the missing summaries or vectors were not computed: %s", exc)
            return
        if self.filled:
            logger.info("computed %d missing vector(s)", self.filled)
