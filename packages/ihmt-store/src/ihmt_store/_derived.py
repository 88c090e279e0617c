"""Derived per-item data that sibling packages compute (vectors, for one): opaque bytes.

The store keeps it in ``state/derived.sqlite3``, apart from the search index, so that an
index rebuild does not throw away what took minutes to compute. It never looks inside
the bytes: a *space* names who wrote them and how (``vectors/<model>@<version>``), and a
reader that does not know a space ignores it.

Every change gets a sequence number in its space, so a long-running reader (the MCP
server's search) catches up with what other processes wrote by reading only the rows
after the last one it saw. A removed item leaves a row without data (a tombstone) for
the same reason. Clearing a space bumps its *epoch*: readers then start over.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DerivedChanges", "DerivedTable", "check_space"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spaces (
    space TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL DEFAULT 0,
    seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS derived (
    space TEXT NOT NULL,
    item_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data BLOB,
    PRIMARY KEY (space, item_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS derived_by_seq ON derived (space, seq);
"""


@dataclass(frozen=True, slots=True)
class DerivedChanges:
    """What changed in one space after a reader's last look.

    ``reset`` means the reader must drop everything it holds first (the space was
    cleared, or the reader is new). ``rows`` are ``(item_id, data)`` in write order;
    ``data`` is None for an item that was removed.
    """

    epoch: int
    seq: int
    reset: bool
    rows: tuple[tuple[str, bytes | None], ...] = field(default=())


class DerivedTable:
    """The ``state/derived.sqlite3`` file. Writers hold the store's lock; readers do not."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self.lock = threading.RLock()
        """Held around each call: the connection is shared by the process's threads."""

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            # Used from the server's worker threads, one call at a time (the caller's lock).
            conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                # A forgotten memory's vector must not linger in free pages.
                conn.execute("PRAGMA secure_delete=ON")
                conn.executescript(_SCHEMA)
            except sqlite3.Error:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _bump(self, space: str, count: int) -> int:
        """Reserve ``count`` sequence numbers in ``space``; the first one."""
        conn = self.conn
        conn.execute("INSERT OR IGNORE INTO spaces (space) VALUES (?)", (space,))
        conn.execute("UPDATE spaces SET seq = seq + ? WHERE space = ?", (count, space))
        row = conn.execute("SELECT seq FROM spaces WHERE space = ?", (space,)).fetchone()
        return int(row[0]) - count + 1

    def put(self, space: str, items: Mapping[str, bytes]) -> None:
        if not items:
            return
        conn = self.conn
        with _transaction(conn):
            first = self._bump(space, len(items))
            conn.executemany(
                "INSERT OR REPLACE INTO derived (space, item_id, seq, data) VALUES (?, ?, ?, ?)",
                [(space, item, first + i, data) for i, (item, data) in enumerate(items.items())],
            )

    def remove(self, item_ids: Sequence[str], space: str | None = None) -> None:
        """Leave a tombstone for each item that has data (in ``space``, or in every space)."""
        if not item_ids:
            return
        conn = self.conn
        with _transaction(conn):
            spaces = [space] if space is not None else self.spaces()
            for name in spaces:
                held = [
                    item
                    for item in item_ids
                    if conn.execute(
                        "SELECT 1 FROM derived WHERE space = ? AND item_id = ? "
                        "AND data IS NOT NULL",
                        (name, item),
                    ).fetchone()
                ]
                if not held:
                    continue
                first = self._bump(name, len(held))
                conn.executemany(
                    "UPDATE derived SET data = NULL, seq = ? WHERE space = ? AND item_id = ?",
                    [(first + i, name, item) for i, item in enumerate(held)],
                )

    def clear(self, space: str) -> None:
        conn = self.conn
        with _transaction(conn):
            conn.execute("DELETE FROM derived WHERE space = ?", (space,))
            conn.execute("INSERT OR IGNORE INTO spaces (space) VALUES (?)", (space,))
            conn.execute("UPDATE spaces SET epoch = epoch + 1, seq = 0 WHERE space = ?", (space,))

    def keep_only(self, item_ids: Iterable[str]) -> int:
        """Drop the rows of items not in ``item_ids`` (after a rebuild); how many went."""
        keep = set(item_ids)
        conn = self.conn
        gone = [
            (space, item)
            for space, item in conn.execute("SELECT space, item_id FROM derived")
            if item not in keep
        ]
        if gone:
            with _transaction(conn):
                conn.executemany("DELETE FROM derived WHERE space = ? AND item_id = ?", gone)
        return len(gone)

    def spaces(self) -> list[str]:
        return [row[0] for row in self.conn.execute("SELECT space FROM spaces ORDER BY space")]

    def counts(self) -> dict[str, int]:
        """Items holding data, by space."""
        rows = self.conn.execute(
            "SELECT spaces.space, COUNT(derived.data) FROM spaces "
            "LEFT JOIN derived ON derived.space = spaces.space GROUP BY spaces.space"
        )
        return {space: int(count) for space, count in rows}

    def item_ids(self, space: str) -> set[str]:
        rows = self.conn.execute(
            "SELECT item_id FROM derived WHERE space = ? AND data IS NOT NULL", (space,)
        )
        return {row[0] for row in rows}

    def changes(
        self, space: str, epoch: int | None, seq: int, limit: int | None = None
    ) -> DerivedChanges:
        conn = self.conn
        with _transaction(conn, write=False):
            head = conn.execute(
                "SELECT epoch, seq FROM spaces WHERE space = ?", (space,)
            ).fetchone()
            now_epoch, now_seq = (int(head[0]), int(head[1])) if head else (0, 0)
            reset = epoch != now_epoch
            after = 0 if reset else seq
            if limit is not None:  # a page, in the order written; the seq says where it ends
                rows = conn.execute(
                    "SELECT item_id, data, seq FROM derived WHERE space = ? AND seq > ?"
                    + (" AND data IS NOT NULL" if reset else "")
                    + " ORDER BY seq LIMIT ?",
                    (space, after, limit),
                ).fetchall()
                if len(rows) == limit:
                    now_seq = int(rows[-1][2])
                rows = [(item, data) for item, data, _ in rows]
            elif reset:  # everything there is, in the table's own order (one per item)
                rows = conn.execute(
                    "SELECT item_id, data FROM derived WHERE space = ? AND data IS NOT NULL",
                    (space,),
                ).fetchall()
            else:  # what changed since, in the order it was written
                rows = conn.execute(
                    "SELECT item_id, data FROM derived WHERE space = ? AND seq > ? ORDER BY seq",
                    (space, after),
                ).fetchall()
        return DerivedChanges(
            epoch=now_epoch,
            seq=now_seq,
            reset=reset,
            rows=tuple(rows),
        )


class _transaction:
    """BEGIN … COMMIT (IMMEDIATE for a writer), ROLLBACK on any error."""

    def __init__(self, conn: sqlite3.Connection, *, write: bool = True) -> None:
        self.conn = conn
        self.write = write

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE" if self.write else "BEGIN")

    def __exit__(self, kind: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if kind is not None else "COMMIT")


def check_space(space: str) -> None:
    """ValueError unless ``space`` is a usable space name (a non-blank string, at most
    200 characters)."""
    if not isinstance(space, str) or not space.strip() or len(space) > 200:
        raise ValueError(f"invalid derived space name {space!r}")
