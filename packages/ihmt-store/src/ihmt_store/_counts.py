"""Totals the catalog derives for ``stats`` and the trunk: items per domain, reachability.

The ``domains`` table keeps each domain's leaf and branch counts as items come and go, so
the trunk never scans the catalog; :meth:`IndexCounts.counts` and
:meth:`IndexCounts.reachable` are the totals ``ihmt stats`` shows.
"""

from __future__ import annotations

from typing import Any

from ihmt_store._connection import IndexConnection
from ihmt_store._types import ItemKind

__all__ = ["IndexCounts"]


class IndexCounts(IndexConnection):
    """Counts of the catalog: per domain (kept as items change) and overall."""

    def _count_domain(self, domain: str, kind: ItemKind, delta: int) -> None:
        leaves, branches = (delta, 0) if kind == "leaf" else (0, delta)
        self.conn.execute(
            "INSERT INTO domains(domain, leaves, branches) VALUES (?, ?, ?) "
            "ON CONFLICT(domain) DO UPDATE SET leaves = leaves + excluded.leaves, "
            "branches = branches + excluded.branches",
            (domain, leaves, branches),
        )

    def domain_counts(self) -> list[tuple[str, int, int, int]]:
        """(domain, leaves, branches, depth) per domain, without scanning the catalog."""
        out = []
        for domain, leaves, branches in self.conn.execute(
            "SELECT domain, leaves, branches FROM domains WHERE leaves + branches > 0 "
            "ORDER BY domain"
        ).fetchall():
            depth = self.conn.execute(
                "SELECT MAX(layer) FROM items WHERE domain = ?", (domain,)
            ).fetchone()[0]
            out.append((domain, int(leaves), int(branches), int(depth or 0)))
        return out

    def reachable(self) -> int:
        """Items whose chain of parents reaches the trunk (one recursive query)."""
        return int(
            self.conn.execute(
                "WITH RECURSIVE up(id) AS (SELECT id FROM items WHERE parent_id IS NULL "
                "UNION SELECT items.id FROM items JOIN up ON items.parent_id = up.id) "
                "SELECT COUNT(*) FROM up"
            ).fetchone()[0]
        )

    def counts(self) -> dict[str, Any]:
        """Totals used by ``stats``."""
        conn = self.conn
        leaves, leaf_bytes = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM items WHERE kind = 'leaf'"
        ).fetchone()
        branches, branch_bytes = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM items WHERE kind = 'branch'"
        ).fetchone()
        depth = conn.execute("SELECT COALESCE(MAX(layer), 0) FROM items").fetchone()[0]
        domains = dict(
            conn.execute(
                "SELECT domain, COUNT(*) FROM items WHERE kind = 'leaf' GROUP BY domain"
            ).fetchall()
        )
        loose_leaves = conn.execute(
            "SELECT COUNT(*) FROM items WHERE kind = 'leaf' AND parent_id IS NULL"
        ).fetchone()[0]
        outdated = conn.execute("SELECT COUNT(*) FROM items WHERE status = 'outdated'").fetchone()[
            0
        ]
        dangling = conn.execute(
            "SELECT COUNT(*) FROM items a WHERE a.parent_id IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM items b WHERE b.id = a.parent_id)"
        ).fetchone()[0]
        return {
            "leaves": leaves,
            "branches": branches,
            "depth": depth,
            "domains": domains,
            "unconsolidated": loose_leaves,
            "outdated": outdated,
            "dangling": dangling,
            "bytes": leaf_bytes + branch_bytes,
        }
