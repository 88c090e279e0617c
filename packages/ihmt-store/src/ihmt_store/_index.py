"""The derived index: one SQLite file holding the catalog and two FTS5 full-text tables.

It is a cache of the leaves and branch files, never the source of truth: ``rebuild``
recreates it from them and incremental maintenance must produce the same rows.
WAL mode lets many processes read while the lock holder writes.

Leaves and branches have a full-text table each, and every ranking statistic (the number
of documents, each term's document frequency, the average length) is the leaves' alone.
A branch summary repeats its children's words, and each machine groups leaves into
branches in the order it received them: counting the summaries would make the same
question rank differently on two machines that hold the same memories (issue #18).
Branches are ranked against the leaves' statistics.

The file's parts live in their own modules and :class:`Index` puts them together:
``_connection.py`` (the connection and the schema), ``_rows.py`` (an item's catalog row
and full-text fields), ``_catalog.py`` (the catalog's writes and reads),
``_fulltext.py`` (BM25 search), ``_statistics.py`` (the ranking statistics) and
``_counts.py`` (totals per domain and overall). Here: transactions and compaction.
"""

from __future__ import annotations

import logging
import sqlite3

from ihmt_store._catalog import Catalog
from ihmt_store._connection import SCHEMA_VERSION
from ihmt_store._connection import TABLES as _TABLES
from ihmt_store._fulltext import Candidate, FieldWeights, FullText
from ihmt_store._rows import Entry, Fields, branch_row, leaf_row

logger = logging.getLogger(__name__)

__all__ = [
    "SCHEMA_VERSION",
    "Candidate",
    "Entry",
    "FieldWeights",
    "Fields",
    "Index",
    "branch_row",
    "leaf_row",
]


class Index(Catalog, FullText):
    """A connection to ``state/index.sqlite3``; every method is one short statement."""

    # ---------------------------------------------------------------- transactions
    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        self._in_tx = True
        # The committed statistics cannot change under this transaction: keep their cache.
        self._tx_key = self.generation()

    def commit(self, *, changed: bool = True) -> None:
        """Commit; ``generation`` grows only when something was written."""
        self._flush_tokens()
        self._flush_vocab()
        if changed:
            self.conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
            )
        self.conn.execute("COMMIT")
        self._in_tx = False

    def rollback(self) -> None:
        """Abandon the open transaction; never raises (the disk may be what failed)."""
        self._token_delta.clear()
        self._vocab_delta.clear()
        if self._in_tx:
            self._in_tx = False
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                logger.warning("rollback of %s failed: %s", self.path, exc)

    def scrub(self) -> None:
        """Leave no trace of deleted rows in the file: merge the full-text segments (the
        deleted terms go), zero freed pages, and empty the write-ahead log.

        Outside a transaction; best effort against other processes' open snapshots (a
        checkpoint cannot pass a reader; the next one finishes it).
        """
        conn = self.conn
        try:
            for table in _TABLES.values():
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        except sqlite3.OperationalError as exc:
            logger.warning("could not compact %s yet: %s", self.path, exc)
        for mode in ("TRUNCATE", "PASSIVE"):
            row = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            if row is not None and row[0] == 0:
                break
