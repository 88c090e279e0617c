"""``MemoryParts``: what a workflow (ingest, import, sync) uses of a ``Memory``.

The workflows take this protocol, never the class: ``Memory`` calls them (importing each
where it is used, so that ``from ihmt_mcp import Memory`` stays cheap) and none of them
imports ``Memory`` back. The dependency points one way: ``_memory`` → the workflows →
this protocol.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ihmt_facts import Timeline
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
