"""A flat BM25 over the same leaves with the same tokenizer: what our search must beat.

The ranking is ``bm25s`` (Lucene's BM25 variant, k1 = 1.2, b = 0.75) over the token lists
that :func:`ihmt_store.terms` gives for each text and for the query, so both sides see
exactly the words the store indexes: accent-folded, CamelCase- and snake_case-split, stop
words dropped, lightly stemmed. No tree, no fields, no recency: one flat list of texts.

``bm25s`` is a benchmark-only dependency (the root ``dev`` group), never a package's.
"""

from __future__ import annotations

from collections.abc import Sequence

import bm25s  # type: ignore[import-untyped]  # ships no type information

from ihmt_store import terms

__all__ = ["Baseline"]


class Baseline:
    """Rank ``texts`` by BM25 for a query; ids are returned in place of positions."""

    def __init__(
        self, texts: Sequence[str], ids: Sequence[str], *, k1: float = 1.2, b: float = 0.75
    ) -> None:
        if len(texts) != len(ids):
            raise ValueError(f"{len(texts)} texts but {len(ids)} ids")
        self.ids = list(ids)
        self._model = bm25s.BM25(k1=k1, b=b, method="lucene")
        if self.ids:
            self._model.index([terms(t) for t in texts], show_progress=False)

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` best ids with their scores, best first; ids scoring 0 are left out.

        Ties are broken by position (the earlier text first), so results are stable.
        """
        tokens = terms(query)
        n = len(self.ids)
        if not tokens or n == 0 or k <= 0:
            return []
        scores = self._model.get_scores(tokens)
        k = min(k, n)
        if k == n:
            top = range(n)
        else:
            # Everything scoring at least the k-th best, so ties at the cut stay stable.
            kth = scores[scores.argpartition(n - k)[n - k :]].min()
            top = (scores >= kth).nonzero()[0]
        ranked = sorted(((float(scores[i]), int(i)) for i in top), key=lambda t: (-t[0], t[1]))
        return [(self.ids[i], score) for score, i in ranked[:k] if score > 0.0]
