"""``MemoryParts``: what a workflow (save, forget, corrections, ingest, import, sync) uses
of a ``Memory``.

The workflows take this protocol, never the class: ``Memory`` calls them (importing each
where it is used, so that ``from ihmt_mcp import Memory`` stays cheap) and none of them
imports ``Memory`` back. The dependency points one way: ``_memory`` → the workflows →
this protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ihmt_facts import Timeline
    from ihmt_navigator import ConsolidationReport, Consolidator, CorrectionMatch
    from ihmt_store import AppliedChanges, Leaf, Store

__all__ = ["MemoryParts"]


class MemoryParts(Protocol):
    """A memory as a workflow writes through it (:class:`~ihmt_mcp.Memory` is one).

    Every write goes through these calls, so the store, the fact timeline, the vectors
    and the summaries above a leaf stay in step whichever workflow wrote it.
    """

    @property
    def store(self) -> Store:
        """The open store the memory lives in."""
        ...

    @property
    def timeline(self) -> Timeline:
        """The fact timeline (loaded on first use)."""
        ...

    # The steps every write shares (private to the package: the workflows call them,
    # nothing outside ihmt_mcp does).
    def _project(self, project: str | None) -> str:
        """The project a call names, or the current one ('' is global)."""
        ...

    def _write_vectors(self, leaves: Sequence[Leaf]) -> None:
        """Embed newly stored leaves (a failure is logged: vectors are derived)."""
        ...

    def vectors_missing(self) -> int | None:
        """Memories without a vector, or None when the semantic layer is off."""
        ...

    def index_semantic(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every memory that has no vector yet; how many were embedded."""
        ...

    def _ingest_facts(self, ids: Iterable[Leaf | str]) -> tuple[str, ...]:
        """Read the facts of the leaves ``ids``; the notices to relay."""
        ...

    def _consolidate_domains(self, domains: set[str]) -> ConsolidationReport:
        """Consolidate the pending leaves of ``domains``."""
        ...

    def _consolidator(self) -> Consolidator:
        """A consolidator with the memory's summarizer."""
        ...

    def _find_replaced(self, words: str, project: str) -> CorrectionMatch:
        """The earlier memories of ``project`` that ``words`` describes."""
        ...

    def _supersede(self, old_id: str, new_id: str, reason: str, hint: str = "") -> None:
        """Flag ``old_id`` OUTDATED by ``new_id`` in the timeline (a ``replaces=``)."""
        ...

    def _store_group(
        self, leaves: Sequence[Leaf], *, consolidate: bool
    ) -> tuple[list[Leaf], int, tuple[str, ...]]:
        """Store one group of leaves, consolidated, embedded and read for facts: the
        leaves stored, the branches created, the facts' notices."""
        ...

    def mark_outdated(self, old_id: str, new_id: str, reason: str = "") -> str:
        """Flag ``old_id`` OUTDATED, corrected by ``new_id``; a sentence saying so."""
        ...

    def apply_pulled(self, paths: Iterable[str]) -> AppliedChanges:
        """Bring everything derived in step with memory files another machine wrote."""
        ...

    def close(self) -> None:
        """Close the store (the background sync opens a memory per round)."""
        ...
