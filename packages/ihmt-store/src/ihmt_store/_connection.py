"""The connection to ``state/index.sqlite3``: the schema, its version and the shared state.

:class:`IndexConnection` opens the file (WAL mode; on a read-only disk read-only, see
:func:`connect_read_only`), creates and stamps the schema, and holds what the parts of
:class:`~ihmt_store._index.Index` built on it share: the connection, the open
transaction's flag, the statistics not yet written and the statistics caches.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ihmt_store._types import ItemKind

__all__ = ["CHUNK", "SCHEMA_VERSION", "TABLES", "TOKENS", "IndexConnection", "connect_read_only"]

SCHEMA_VERSION = 10
"""Bumped whenever the index layout changes; a mismatch triggers a rebuild."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    layer INTEGER NOT NULL,
    domain TEXT NOT NULL,
    project TEXT NOT NULL,
    parent_id TEXT,
    path TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    time_end TEXT,
    status TEXT NOT NULL,
    outdated_by TEXT,
    outdated_on TEXT,
    source TEXT NOT NULL,
    data_type TEXT NOT NULL,
    title TEXT NOT NULL,
    excerpt TEXT NOT NULL,
    tags TEXT NOT NULL,
    leaf_count INTEGER NOT NULL,
    size INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    indexed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS items_parent ON items(parent_id);
CREATE INDEX IF NOT EXISTS items_loose ON items(layer, domain, timestamp) WHERE parent_id IS NULL;
CREATE INDEX IF NOT EXISTS items_domain_layer ON items(domain, layer);
CREATE TABLE IF NOT EXISTS domains(
    domain TEXT PRIMARY KEY, leaves INTEGER NOT NULL, branches INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS items_corrector ON items(outdated_by) WHERE outdated_by IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, keywords, tags, body, tokenize = 'unicode61 remove_diacritics 0'
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_branches USING fts5(
    title, keywords, tags, body, tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS vocab(term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS members(branch_id TEXT NOT NULL, child_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS members_child ON members(child_id);
CREATE INDEX IF NOT EXISTS members_branch ON members(branch_id);
CREATE TABLE IF NOT EXISTS folded(
    leaf_id TEXT PRIMARY KEY, reason TEXT NOT NULL, extra TEXT NOT NULL
) WITHOUT ROWID;
"""


CHUNK = 500
"""Values per ``IN (...)`` list, well under SQLite's limit on bound parameters."""

TABLES: dict[ItemKind, str] = {"leaf": "fts", "branch": "fts_branches"}
"""The full-text table of each kind of item."""
TOKENS: dict[ItemKind, str] = {"leaf": "indexed_tokens", "branch": "branch_tokens"}
"""The ``meta`` key counting the indexed terms of each kind (average lengths)."""


class IndexConnection:
    """A connection to ``state/index.sqlite3`` and its schema; the base of ``Index``."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        if read_only:
            self.conn = connect_read_only(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            # A deleted or replaced row is overwritten with zeros, not left in a free
            # block: a forgotten memory's words must not stay readable in the file.
            self.conn.execute("PRAGMA secure_delete=ON")
        self.conn.execute("PRAGMA foreign_keys=OFF")
        self._in_tx = False
        self._token_delta: Counter[ItemKind] = Counter()
        self._vocab_delta: Counter[str] = Counter()
        self._tx_key = -1
        self._cache_key = -1
        self._count_key = -1
        self._df_cache: dict[str, int] = {}
        self._count_cache: int | None = None
        self._docs_cache: tuple[int, int] | None = None

    def close(self) -> None:
        self.conn.close()

    def _rows_in(self, sql: str, values: Sequence[Any]) -> Iterator[Any]:
        """Run ``sql`` for every 500 of ``values``, its ``{marks}`` replaced by as many
        placeholders; yield the rows of all the runs."""
        for start in range(0, len(values), CHUNK):
            part = list(values[start : start + CHUNK])
            marks = ", ".join("?" * len(part))
            yield from self.conn.execute(sql.replace("{marks}", marks), part)

    # ---------------------------------------------------------------- schema
    def create_schema(self, *, building: bool = False) -> None:
        """Create the tables if missing and stamp the schema version.

        ``building``: stamp 0 instead, for a file about to be filled by a rebuild, which
        stamps the version in the same transaction as the rows (:meth:`stamp_schema`). A
        rebuild killed half-way leaves 0, which no reader accepts, so the next open
        builds the file again instead of trusting an empty catalog.
        """
        # One transaction: one commit (one flush to disk) for the tables, not one each.
        self.conn.executescript(f"BEGIN;\n{_SCHEMA}\nCOMMIT;")
        self.conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?), ('generation', '0'), "
            "('indexed_tokens', '0'), ('branch_tokens', '0')",
            ("0" if building else str(SCHEMA_VERSION),),
        )

    def stamp_schema(self) -> None:
        """Stamp the schema version (inside the caller's transaction)."""
        self.conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))

    def is_sound(self) -> bool:
        """``PRAGMA quick_check``: every page and record is well formed."""
        try:
            rows = self.conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError:
            return False
        return rows == [("ok",)]

    def schema_version(self) -> int | None:
        """The schema stamped in the file, or None when the file is empty or foreign."""
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.DatabaseError:
            return None
        return int(row[0]) if row else None

    @property
    def in_transaction(self) -> bool:
        return self._in_tx

    def generation(self) -> int:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0


def connect_read_only(path: Path) -> sqlite3.Connection:
    """Open the index of a store on a read-only disk.

    A WAL database is readable read-only while its ``-shm`` file exists; without it
    (a clean close removed it) SQLite must be told the file cannot change: nothing can
    write a read-only disk, so that is true.
    """
    uri = path.resolve().as_uri()
    last: sqlite3.Error | None = None
    for mode in ("mode=ro", "immutable=1"):
        try:
            conn = sqlite3.connect(
                f"{uri}?{mode}",
                uri=True,
                timeout=30.0,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            last = exc
            continue
        return conn
    assert last is not None
    raise last
