"""The tokenizer's table kept as flat blobs answers every lookup as the dict does."""

from __future__ import annotations

import pickle

import pytest

from ihmt_navigator import _prefixes
from ihmt_navigator._prefixes import PrefixTable

TABLE = {"▁": 5, "▁d": 0, "▁de": 17, "a": 3, "ab": 0, "abc": 9, "é": 4, "日本": 12, "日": 0, "ü": 2}
ASKED = [*TABLE, "", "x", "▁dé", "abcd", "日本語", "b", "ab ", "ÿ", "\x00"]


def test_a_table_answers_as_its_dict_does_before_and_after_pickling() -> None:
    table = PrefixTable.of(TABLE)
    again = pickle.loads(pickle.dumps(table, protocol=5))
    assert len(again) == len(TABLE)
    for key in ASKED:
        assert table.get(key) == again.get(key) == TABLE.get(key)
        assert again.get(key, "none") == TABLE.get(key, "none")


def test_a_table_asked_many_keys_becomes_a_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_prefixes, "BUILD_AFTER", 3)
    table = PrefixTable.of(TABLE)
    for key in ASKED:
        assert table.get(key) == TABLE.get(key)
    assert table._full == TABLE
