"""What a store reports about itself, computed from the catalog.

:class:`IOStats` counts the files one ``Store`` object read; :class:`StoreStats` holds the
totals ``ihmt stats`` shows (:func:`store_stats` computes them); :func:`live_trunk` is the
trunk as the catalog has it now (each domain's counts and its items without a parent),
and :func:`with_keywords` gives its domains the keywords consolidation chose.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ihmt_store._index import Index
from ihmt_store._records import DomainTrunk, Root, now_timestamp

__all__ = ["IOStats", "StoreStats", "live_trunk", "store_stats", "with_keywords"]


@dataclass(slots=True)
class IOStats:
    """Files and bytes this ``Store`` object has read from leaves and branches."""

    files_read: int = 0
    bytes_read: int = 0
    leaf_reads: int = 0
    branch_reads: int = 0

    def snapshot(self) -> IOStats:
        """A copy to subtract from later."""
        return dataclasses.replace(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreStats:
    """Totals for ``ihmt stats``."""

    leaves: int
    branches: int
    depth: int
    """Highest layer reached (0: leaves only)."""
    domains: dict[str, int] = field(default_factory=dict)
    """Leaves per domain."""
    unconsolidated: int = 0
    """Leaves without a parent branch (referenced straight from the trunk)."""
    unreachable: int = 0
    """Items whose parent chain does not reach the trunk; must be 0."""
    outdated: int = 0
    bytes: int = 0
    """Bytes of every leaf and branch file."""
    generation: int = 0

    def to_json(self) -> dict[str, Any]:
        """Every field, in order, as JSON values."""
        return dataclasses.asdict(self)


def store_stats(index: Index) -> StoreStats:
    """Totals, including how many items cannot be reached from the trunk (must be 0)."""
    counts = index.counts()
    reachable = index.reachable()
    return StoreStats(
        leaves=counts["leaves"],
        branches=counts["branches"],
        depth=counts["depth"],
        domains=counts["domains"],
        unconsolidated=counts["unconsolidated"],
        unreachable=index.total_items() - reachable,
        outdated=counts["outdated"],
        bytes=counts["bytes"],
        generation=index.generation(),
    )


def live_trunk(index: Index) -> Root:
    """The trunk computed from the catalog: each domain's items without a parent."""
    tops: dict[str, list[str]] = {}
    for entry in index.loose(None, None):
        tops.setdefault(entry.domain, []).append(entry.id)
    per_domain = index.domain_counts()
    domains = tuple(
        DomainTrunk(
            domain=dom,
            top=tuple(tops.get(dom, ())),
            leaves=int(leaves or 0),
            branches=int(branches or 0),
            depth=int(depth or 0),
        )
        for dom, leaves, branches, depth in sorted(per_domain)
    )
    return Root(domains=domains, generation=index.generation(), updated=now_timestamp())


def with_keywords(root: Root, keywords: dict[str, tuple[str, ...]] | None) -> Root:
    """``root`` with the ``keywords`` given for its domains (the others keep theirs)."""
    if keywords:
        domains = tuple(
            dataclasses.replace(d, keywords=tuple(keywords.get(d.domain, d.keywords)))
            for d in root.domains
        )
        root = dataclasses.replace(root, domains=domains)
    return root
