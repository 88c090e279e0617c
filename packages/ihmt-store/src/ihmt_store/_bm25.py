"""The BM25 constants and inverse document frequency the index ranks with.

They match FTS5's ``bm25()``, so a score computed here equals the one SQLite computes.
"""

from __future__ import annotations

import math

__all__ = ["B", "IDF_FLOOR", "K1", "idf"]

K1 = 1.2
"""Term-frequency saturation."""
B = 0.75
"""Length normalisation."""
IDF_FLOOR = 1e-6
"""FTS5's floor for the IDF of a term found in more than half the documents."""


def idf(total: int, df: int) -> float:
    """The inverse document frequency of a term found in ``df`` of ``total`` items.

    FTS5's formula: ``log((total - df + 0.5) / (df + 0.5))``, floored at
    :data:`IDF_FLOOR` (a term in more than half the items weighs almost nothing).
    """
    return max(math.log((total - df + 0.5) / (df + 0.5)), IDF_FLOOR)
