"""The navigator's weight of a word is its own, named quantity, not the index's IDF."""

from __future__ import annotations

import math

import pytest

from ihmt_navigator._query import rarity
from ihmt_store import idf


def test_rarity_is_lucenes_always_positive_idf() -> None:
    assert rarity(100, 1) == math.log(1 + (100 - 0.5) / 1.5)
    assert rarity(100, 0) == math.log(1 + (100 + 0.5) / 0.5)
    assert rarity(100, 0) > rarity(100, 1) > rarity(100, 50) > rarity(100, 100) > 0


def test_a_common_word_still_counts_in_coverage_while_bm25_floors_it() -> None:
    assert idf(100, 80) == pytest.approx(1e-6)
    assert rarity(100, 80) > 0.2
    # for rare words the two differ by a little, never in their order
    assert rarity(100, 3) > idf(100, 3) > idf(100, 4)
