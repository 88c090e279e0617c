"""The catalog: the ``items`` table and what hangs off it, written and read.

Writes insert, replace and delete items with their full-text rows (keeping the
statistics and the per-domain counts in step), change parents, the OUTDATED flag and the
fold of a leaf's notes, and record which branch lists which child. Reads answer by id,
by parent, by layer and domain, and walk the chain of parents.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterator, Sequence
from typing import Any

from ihmt_store._connection import CHUNK as _CHUNK
from ihmt_store._connection import TABLES as _TABLES
from ihmt_store._counts import IndexCounts
from ihmt_store._rows import COLUMNS as _COLUMNS
from ihmt_store._rows import FIELDS as _FIELDS
from ihmt_store._rows import ROWID_MASK as _ROWID_MASK
from ihmt_store._rows import Entry, Fields
from ihmt_store._rows import row_values as _values
from ihmt_store._rows import stable_rowid as _stable_rowid
from ihmt_store._statistics import IndexStatistics
from ihmt_store._types import ItemKind

__all__ = ["Catalog"]

_first = operator.itemgetter(0)


class Catalog(IndexStatistics, IndexCounts):
    """The catalog's writes and reads; every method is one short statement or a few."""

    def upsert(self, row: Entry, fields: Fields, members: Sequence[str] = ()) -> None:
        """Insert or replace one item, its full-text fields and, for a branch, its children
        as the branch file lists them."""
        if row.kind == "branch":
            self.conn.execute("DELETE FROM members WHERE branch_id = ?", (row.id,))
            self.conn.executemany(
                "INSERT INTO members(branch_id, child_id) VALUES (?, ?)",
                [(row.id, child) for child in members],
            )
        cur = self.conn.execute("SELECT rowid, indexed FROM items WHERE id = ?", (row.id,))
        found = cur.fetchone()
        if found is None:
            self.insert_new([(row, fields)])
            return
        rowid, was_indexed = found
        indexed = sum(len(f.split()) for f in fields)
        table = _TABLES[row.kind]
        if row.kind == "leaf":
            self._vocab_delta.update(set(" ".join(fields).split()))
        self._add_tokens(row.kind, indexed - was_indexed)
        self._forget_terms(rowid, row.kind)
        self.conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        self.conn.execute(
            f"UPDATE items SET ({_COLUMNS}, indexed) = ({', '.join('?' * (len(_FIELDS) + 1))}) "
            "WHERE rowid = ?",
            (*_values(row), indexed, rowid),
        )
        self.conn.execute(
            f"INSERT INTO {table}(rowid, title, keywords, tags, body) VALUES (?, ?, ?, ?, ?)",
            (rowid, *fields),
        )

    def insert_new(self, items: Sequence[tuple[Entry, Fields]]) -> None:
        """Insert items the catalog does not hold yet, in a handful of statements for all
        of them (a bulk ingest's leaves; :meth:`upsert` of one new item comes here too).

        Row ids derive from item ids; a 63-bit collision takes the next free one.
        """
        if not items:
            return
        wanted = [_stable_rowid(row.id) for row, _ in items]
        taken = {
            r[0] for r in self._rows_in("SELECT rowid FROM items WHERE rowid IN ({marks})", wanted)
        }
        rowids = []
        for rowid in wanted:
            while rowid in taken:
                rowid = (rowid + 1) & _ROWID_MASK
                if self.conn.execute("SELECT 1 FROM items WHERE rowid = ?", (rowid,)).fetchone():
                    taken.add(rowid)
            taken.add(rowid)
            rowids.append(rowid)
        catalog = []
        texts: dict[ItemKind, list[tuple[Any, ...]]] = {"leaf": [], "branch": []}
        per_domain: dict[tuple[str, ItemKind], int] = {}
        vocab = self._vocab_delta
        for rowid, (row, fields) in zip(rowids, items, strict=True):
            indexed = sum(len(f.split()) for f in fields)
            self._add_tokens(row.kind, indexed)
            catalog.append((rowid, *_values(row), indexed))
            texts[row.kind].append((rowid, *fields))
            if row.kind == "leaf":
                vocab.update(set(" ".join(fields).split()))
            key = (row.domain, row.kind)
            per_domain[key] = per_domain.get(key, 0) + 1
        # In rowid order: FTS5 flushes its pending terms to a new segment whenever a
        # rowid is lower than the last one (hashed ids come in no order: a rebuild of
        # 500,000 made a segment every other row), and the table's b-tree is appended to.
        catalog.sort(key=_first)
        marks = ", ".join("?" * (len(_FIELDS) + 2))
        self.conn.executemany(
            f"INSERT INTO items(rowid, {_COLUMNS}, indexed) VALUES ({marks})", catalog
        )
        for kind, rows in texts.items():
            if rows:
                rows.sort(key=_first)
                self.conn.executemany(
                    f"INSERT INTO {_TABLES[kind]}(rowid, title, keywords, tags, body) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
        for (domain, kind), count in per_domain.items():
            self._count_domain(domain, kind, count)

    def set_parent(self, item_ids: Sequence[str], parent_id: str | None) -> None:
        """Change only the items' parent: their indexed text is unchanged."""
        self.conn.executemany(
            "UPDATE items SET parent_id = ? WHERE id = ?", [(parent_id, i) for i in item_ids]
        )

    def set_status(self, leaf_id: str, outdated_by: str | None, outdated_on: str | None) -> None:
        """Change only a leaf's OUTDATED flag (the fold of its notes decides it)."""
        self.conn.execute(
            "UPDATE items SET status = ?, outdated_by = ?, outdated_on = ? WHERE id = ?",
            ("outdated" if outdated_by else "active", outdated_by, outdated_on, leaf_id),
        )

    def set_folded(self, leaf_id: str, reason: str, extra: dict[str, Any]) -> None:
        """Keep what the fold of a leaf's notes gives beyond the catalog row: the reason
        of its correction and the ``extra`` keys notes added (none: no row)."""
        if not reason and not extra:
            self.conn.execute("DELETE FROM folded WHERE leaf_id = ?", (leaf_id,))
            return
        self.conn.execute(
            "INSERT INTO folded(leaf_id, reason, extra) VALUES (?, ?, ?) "
            "ON CONFLICT(leaf_id) DO UPDATE SET reason = excluded.reason, extra = excluded.extra",
            (leaf_id, reason, json.dumps(extra, ensure_ascii=False, sort_keys=True)),
        )

    def folded_of(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """``(reason, extra)`` of each leaf of ``ids`` whose notes give either."""
        out: dict[str, tuple[str, dict[str, Any]]] = {}
        sql = "SELECT leaf_id, reason, extra FROM folded WHERE leaf_id IN ({marks})"
        for leaf_id, reason, extra in self._rows_in(sql, ids):
            out[leaf_id] = (reason, json.loads(extra))
        return out

    def all_folded(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """:meth:`folded_of` for every leaf (one row per leaf whose notes give either)."""
        rows = self.conn.execute("SELECT leaf_id, reason, extra FROM folded")
        return {leaf_id: (reason, json.loads(extra)) for leaf_id, reason, extra in rows}

    def listing_branch(self, child_id: str) -> str | None:
        """The branch whose file lists ``child_id`` among its children (the lowest layer,
        then the smallest id, when an interrupted consolidation left two), or None."""
        row = self.conn.execute(
            "SELECT m.branch_id FROM members m JOIN items b ON b.id = m.branch_id "
            "WHERE m.child_id = ? ORDER BY b.layer, m.branch_id LIMIT 1",
            (child_id,),
        ).fetchone()
        return str(row[0]) if row else None

    def adopt_listed(self, branch_id: str, child_ids: Sequence[str]) -> None:
        """Give the loose leaves among ``child_ids`` the branch that lists them."""
        if not child_ids:
            return
        for start in range(0, len(child_ids), _CHUNK):
            part = list(child_ids[start : start + _CHUNK])
            marks = ", ".join("?" * len(part))
            # By id: left to itself the planner walks the partial index of loose items,
            # every loose leaf once per branch, thousands per branch during a bulk ingest.
            self.conn.execute(
                f"UPDATE items SET parent_id = ? WHERE id IN ({marks}) AND +layer = 0 "
                "AND +parent_id IS NULL",
                (branch_id, *part),
            )

    def parents_from_members(self) -> None:
        """Give every leaf the parent its branch files name (a rebuild: leaves do not
        carry their parent from format 2 on)."""
        self.conn.execute(
            "UPDATE items SET parent_id = (SELECT m.branch_id FROM members m JOIN items b "
            "ON b.id = m.branch_id WHERE m.child_id = items.id ORDER BY b.layer, m.branch_id "
            "LIMIT 1) WHERE layer = 0"
        )

    def set_sizes(self, sizes: Sequence[tuple[int, str]]) -> None:
        """Record the file size of each ``(size, id)`` (known once the files are made)."""
        if sizes:
            self.conn.executemany("UPDATE items SET size = ? WHERE id = ?", sizes)

    def detach_children(self, parent_id: str) -> int:
        """Make the items naming ``parent_id`` loose (its file is gone); return how many."""
        cur = self.conn.execute(
            "UPDATE items SET parent_id = NULL WHERE parent_id = ?", (parent_id,)
        )
        return cur.rowcount

    def detach_orphans(self, ids: Sequence[str] | None = None) -> list[str]:
        """Make loose every item (of ``ids``, or all) whose parent is not in the catalog.

        A leaf or branch file may name a parent whose file was never written (a writer
        killed mid-batch by an older version) or was deleted by hand: the trunk then
        references the item directly, and the next consolidation groups it again.
        Returns the ids changed.
        """
        sql = (
            "SELECT a.id FROM items a WHERE a.parent_id IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM items b WHERE b.id = a.parent_id)"
        )
        if ids is None:
            found = [r[0] for r in self.conn.execute(sql)]
        else:
            found = [r[0] for r in self._rows_in(sql + " AND a.id IN ({marks})", ids)]
        self.set_parent(found, None)
        return found

    def delete(self, item_id: str) -> bool:
        """Remove one item and its full-text row; True if it was there."""
        found = self.conn.execute(
            "SELECT rowid, indexed, domain, kind FROM items WHERE id = ?", (item_id,)
        ).fetchone()
        if found is None:
            return False
        rowid, indexed, domain, kind = found
        self._count_domain(domain, kind, -1)
        self._add_tokens(kind, -indexed)
        self._forget_terms(rowid, kind)
        self.conn.execute("DELETE FROM members WHERE branch_id = ?", (item_id,))
        self.conn.execute("DELETE FROM folded WHERE leaf_id = ?", (item_id,))
        self.conn.execute(f"DELETE FROM {_TABLES[kind]} WHERE rowid = ?", (rowid,))
        self.conn.execute("DELETE FROM items WHERE rowid = ?", (rowid,))
        return True

    def clear(self) -> None:
        """Drop every item (inside the caller's transaction)."""
        self.conn.execute("DELETE FROM items")
        self.conn.execute("DELETE FROM domains")
        for table in _TABLES.values():
            self.conn.execute(f"DELETE FROM {table}")
        self.conn.execute("DELETE FROM members")
        self.conn.execute("DELETE FROM folded")
        self.conn.execute("DELETE FROM vocab")
        self.conn.execute(
            "UPDATE meta SET value = '0' WHERE key IN ('indexed_tokens', 'branch_tokens')"
        )
        self._token_delta.clear()
        self._vocab_delta.clear()
        self._cache_key = -3  # the cached counts were of what was just deleted

    # ---------------------------------------------------------------- reads
    def get(self, item_id: str) -> Entry | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM items WHERE id = ?", (item_id,)).fetchone()
        return Entry._from_row(row) if row else None

    def get_many(self, ids: Sequence[str]) -> dict[str, Entry]:
        """The entries of ``ids`` that are in the catalog, by id."""
        out: dict[str, Entry] = {}
        for row in self._rows_in(f"SELECT {_COLUMNS} FROM items WHERE id IN ({{marks}})", ids):
            entry = Entry._from_row(row)
            out[entry.id] = entry
        return out

    def children(self, parent_id: str) -> list[Entry]:
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM items WHERE parent_id = ? ORDER BY timestamp, id",
            (parent_id,),
        )
        return [Entry._from_row(r) for r in rows]

    def loose(self, layer: int | None, domain: str | None) -> list[Entry]:
        """Items without a parent, oldest first, optionally of one layer and domain."""
        # The partial index holds only loose items: a handful, whatever the store size.
        sql = f"SELECT {_COLUMNS} FROM items INDEXED BY items_loose WHERE parent_id IS NULL"
        args: list[Any] = []
        if layer is not None:
            sql += " AND layer = ?"
            args.append(layer)
        if domain is not None:
            sql += " AND domain = ?"
            args.append(domain)
        sql += " ORDER BY layer, domain, timestamp, id"
        return [Entry._from_row(r) for r in self.conn.execute(sql, args)]

    def open_branch(self, domain: str, layer: int, below: int) -> Entry | None:
        """A branch of ``domain`` on ``layer`` with fewer than ``below`` children: a top
        one first, then the most recent."""
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM items b WHERE b.domain = ? AND b.layer = ? "
            "AND b.kind = 'branch' "
            "AND (SELECT COUNT(*) FROM items c WHERE c.parent_id = b.id) < ? "
            "ORDER BY b.parent_id IS NULL DESC, b.time_end DESC, b.id LIMIT 1",
            (domain, layer, below),
        ).fetchone()
        return Entry._from_row(row) if row else None

    def listed_in(self, child_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each child id, the branches whose files list it as a child."""
        out: dict[str, list[str]] = {}
        sql = (
            "SELECT branch_id, child_id FROM members WHERE child_id IN ({marks}) ORDER BY branch_id"
        )
        for branch, child in self._rows_in(sql, child_ids):
            out.setdefault(child, []).append(branch)
        return out

    def indexed_fields(self, item_id: str) -> Fields | None:
        """The four full-text fields an item is indexed with now, or None."""
        found = self.conn.execute(
            "SELECT rowid, kind FROM items WHERE id = ?", (item_id,)
        ).fetchone()
        if found is None:
            return None
        row = self.conn.execute(
            f"SELECT title, keywords, tags, body FROM {_TABLES[found[1]]} WHERE rowid = ?",
            (found[0],),
        ).fetchone()
        return (str(row[0]), str(row[1]), str(row[2]), str(row[3])) if row else None

    def corrected_by(self, leaf_id: str) -> list[Entry]:
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM items WHERE outdated_by = ? ORDER BY timestamp", (leaf_id,)
        )
        return [Entry._from_row(r) for r in rows]

    def entries_after(self, kind: ItemKind | None, after: str, limit: int) -> list[Entry]:
        """The first ``limit`` entries (of ``kind``, or both kinds) whose id sorts after
        ``after``, in id order: a page of :meth:`iter_entries`, by the id's own index."""
        sql = f"SELECT {_COLUMNS} FROM items WHERE id > ?"
        args: tuple[Any, ...] = (after,)
        if kind is not None:
            sql += " AND kind = ?"
            args += (kind,)
        rows = self.conn.execute(sql + " ORDER BY id LIMIT ?", (*args, limit))
        return [Entry._from_row(r) for r in rows]

    def iter_entries(self, kind: ItemKind | None = None) -> Iterator[Entry]:
        sql = f"SELECT {_COLUMNS} FROM items"
        args: tuple[Any, ...] = ()
        if kind is not None:
            sql += " WHERE kind = ?"
            args = (kind,)
        sql += " ORDER BY id"
        for row in self.conn.execute(sql, args):
            yield Entry._from_row(row)

    def ancestors(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each id in the catalog, its chain of parents, nearest first (one recursive
        query; ids not in the catalog are left out)."""
        out: dict[str, list[str]] = {}
        if not ids:
            return out
        marks = ", ".join("?" * len(ids))
        rows = self.conn.execute(
            f"WITH RECURSIVE up(start, id, parent, depth) AS ("
            f" SELECT id, id, parent_id, 0 FROM items WHERE id IN ({marks})"
            " UNION ALL SELECT up.start, items.id, items.parent_id, up.depth + 1"
            " FROM items JOIN up ON items.id = up.parent WHERE up.depth < 64)"
            " SELECT start, id, depth FROM up ORDER BY start, depth",
            list(ids),
        )
        for start, item, depth in rows:
            if depth:
                out[start].append(item)
            else:
                out[start] = []
        return out

    def leaf_sizes(self) -> list[tuple[str, int]]:
        """``(path, size)`` of every leaf, as the catalog knows them."""
        rows = self.conn.execute("SELECT path, size FROM items WHERE kind = 'leaf'")
        return rows.fetchall()
