"""Read-only views of a memory's tree: its outline (``ihmt tree``) and its totals
(``ihmt stats``). What :meth:`Memory.tree` and :meth:`Memory.stats` return."""

from __future__ import annotations

from collections.abc import Sequence

from ihmt_mcp._records import MemoryStats, TreeItem
from ihmt_store import Store

__all__ = ["memory_stats", "outline"]


def outline(store: Store, depth: int = 2) -> tuple[TreeItem, ...]:
    """The outline :meth:`Memory.tree` returns."""
    out: list[TreeItem] = []

    def walk(ids: Sequence[str], level: int) -> None:
        entries = store.entries(list(ids))
        for item in ids:
            entry = entries.get(item)
            if entry is None:
                continue
            out.append(
                TreeItem(
                    level=level,
                    id=entry.id,
                    kind=entry.kind,
                    domain=entry.domain,
                    title=entry.title,
                    leaf_count=entry.leaf_count if entry.kind == "branch" else 1,
                    outdated=entry.outdated_by is not None,
                )
            )
            if entry.kind == "branch" and level < depth:
                walk([c.id for c in store.children(entry.id)], level + 1)

    for trunk in store.trunk().domains:
        walk(trunk.top, 0)
    return tuple(out)


def memory_stats(store: Store) -> MemoryStats:
    """The totals :meth:`Memory.stats` returns."""
    raw = store.stats()
    return MemoryStats(
        leaves=raw.leaves,
        branches=raw.branches,
        depth=raw.depth,
        domains=tuple(sorted(raw.domains.items())),
        unconsolidated=raw.unconsolidated,
        unreachable=raw.unreachable,
        outdated=raw.outdated,
        bytes=raw.bytes,
        generation=raw.generation,
        path=str(store.path),
    )
