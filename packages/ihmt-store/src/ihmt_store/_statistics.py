"""The ranking statistics of the index: document frequencies, documents, average lengths.

Only leaves count (see :mod:`ihmt_store._index`). Writes change the statistics in memory
(:meth:`IndexStatistics._add_tokens`, the vocabulary delta) and the commit writes them
once; reads are cached until anything is committed, by this process or another.
"""

from __future__ import annotations

from collections.abc import Sequence

from ihmt_store._connection import TOKENS as _TOKENS
from ihmt_store._connection import IndexConnection
from ihmt_store._types import ItemKind

__all__ = ["IndexStatistics"]


class IndexStatistics(IndexConnection):
    """The vocabulary, token and document counts BM25 ranks with, kept up to date."""

    def _add_tokens(self, kind: ItemKind, delta: int) -> None:
        # Summed in memory and written once at commit: one UPDATE per batch, not per row.
        self._token_delta[kind] += delta

    def _forget_terms(self, rowid: int, kind: ItemKind) -> None:
        """Take the terms of a leaf's current full-text row out of the vocabulary counts
        (only leaves are counted)."""
        if kind != "leaf":
            return
        old = self.conn.execute(
            "SELECT title, keywords, tags, body FROM fts WHERE rowid = ?", (rowid,)
        ).fetchone()
        if old is not None:
            self._vocab_delta.subtract(set(" ".join(old).split()))

    def _flush_vocab(self) -> None:
        # Document frequencies per term, summed in memory and written once at commit.
        changes = [(t, n) for t, n in self._vocab_delta.items() if n]
        self._vocab_delta.clear()
        if not changes:
            return
        self.conn.executemany(
            "INSERT INTO vocab(term, docs) VALUES (?, ?) "
            "ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs",
            changes,
        )
        gone = [(t,) for t, n in changes if n < 0]
        if gone:
            self.conn.executemany("DELETE FROM vocab WHERE term = ? AND docs <= 0", gone)

    def _flush_tokens(self) -> None:
        for kind, delta in self._token_delta.items():
            if delta:
                self.conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = ?",
                    (delta, _TOKENS[kind]),
                )
        self._token_delta.clear()

    def _fresh(self) -> None:
        """Drop the statistics caches when anything was committed since (any process).

        Inside a transaction the committed statistics stay what they were at ``begin``
        (this connection's own changes are pending in memory until the commit), so the
        document-frequency cache survives; the item count does not.
        """
        key = self._tx_key if self._in_tx else self.generation()
        if key != self._cache_key:
            self._df_cache.clear()
            self._cache_key = key
        if key != self._count_key or self._in_tx:
            self._count_cache = None
            self._docs_cache = None
            self._count_key = key

    def term_frequencies(self, query_terms: Sequence[str]) -> dict[str, int]:
        """How many leaves contain each term (document frequency), from the vocabulary
        table the writes keep up to date (plus this transaction's pending changes)."""
        unique = sorted(set(query_terms))
        if not unique:
            return {}
        self._fresh()
        cache = self._df_cache
        missing = [t for t in unique if t not in cache]
        if missing:
            cache.update(dict.fromkeys(missing, 0))
            sql = "SELECT term, docs FROM vocab WHERE term IN ({marks})"
            cache.update(self._rows_in(sql, missing))
        pending = self._vocab_delta
        if pending:
            return {t: cache[t] + pending.get(t, 0) for t in unique}
        return {t: cache[t] for t in unique}

    def total_items(self) -> int:
        self._fresh()
        if self._count_cache is None:
            self._count_cache = int(self.conn.execute("SELECT COUNT(*) FROM items").fetchone()[0])
        return self._count_cache

    def documents(self, kind: ItemKind = "leaf") -> int:
        """How many items of ``kind`` the full-text index ranks (the leaves are the
        documents of every ranking statistic)."""
        self._fresh()
        if self._docs_cache is None:
            row = self.conn.execute(
                "SELECT COALESCE(SUM(leaves), 0), COALESCE(SUM(branches), 0) FROM domains"
            ).fetchone()
            self._docs_cache = (int(row[0]), int(row[1]))
        return self._docs_cache[0 if kind == "leaf" else 1]

    def _average_length(self, kind: ItemKind) -> float:
        """The average number of indexed terms of an item of ``kind`` (BM25's avgdl)."""
        stored = self.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (_TOKENS[kind],)
        ).fetchone()
        tokens = self._token_delta[kind] + int(stored[0] if stored else 0)
        return max(tokens / max(self.documents(kind), 1), 1e-9)
