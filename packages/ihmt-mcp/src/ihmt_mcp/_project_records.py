"""What a project index keeps about each file, and what one sync found and did."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ihmt_navigator import CodeSymbol
from ihmt_store import Leaf

__all__ = ["FileRecord", "Plan", "Skipped", "SyncReport"]

Skipped = Literal["", "too large", "binary", "holds a secret"]
"""Why a file of the project is not in its index ('' when it is)."""


@dataclass(slots=True, kw_only=True)
class FileRecord:
    size: int
    mtime_ns: int
    sha: str
    tokens: int = 0
    leaves: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    """A digest of each leaf as written (beside ``leaves``): an unchanged symbol of an
    edited file is not written (nor read back to compare) again."""
    symbols: list[list[Any]] = field(default_factory=list)
    """``[qualified name, kind, first line, last line, leaf id]`` per block."""
    skipped: Skipped = ""
    """Why the file is left out of the index ('' when it is in)."""
    _code: tuple[CodeSymbol, ...] | None = field(default=None, repr=False, compare=False)

    def code_symbols(self, rel: str) -> tuple[CodeSymbol, ...]:
        """Its symbols as find_code ranks them (made once: a record's symbols never change)."""
        if self._code is None:
            self._code = tuple(CodeSymbol(rel, row[0], row[1], row[4]) for row in self.symbols)
        return self._code

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "sha": self.sha,
            "tokens": self.tokens,
            "leaves": self.leaves,
            "keys": self.keys,
            "symbols": self.symbols,
            "skipped": self.skipped,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileRecord:
        return cls(
            size=int(data["size"]),
            mtime_ns=int(data["mtime_ns"]),
            sha=str(data["sha"]),
            tokens=int(data.get("tokens", 0)),
            leaves=list(data.get("leaves", [])),
            keys=list(data.get("keys", [])),
            symbols=list(data.get("symbols", [])),
            # As this module wrote it (a reason it does not know still leaves it out).
            skipped=cast(Skipped, str(data.get("skipped", ""))),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncReport:
    """What one sync of a project index did."""

    files: int
    """Files in the project (after ignores)."""
    hashed: int
    """Files whose size or mtime moved, so their content was hashed."""
    changed: tuple[str, ...] = ()
    """Files re-chunked (new or changed)."""
    removed: tuple[str, ...] = ()
    branches_refreshed: int = 0
    branches_created: int = 0
    seconds: float = 0.0


@dataclass(slots=True, kw_only=True)
class Plan:
    """What one sync found the files ask of the index, before anything is written."""

    generation: int
    """The store's generation the plan was made against."""
    stamp: tuple[int, int] | None
    """The manifest file's stamp it was made from."""
    files: int
    hashed: int = 0
    removed: list[tuple[str, FileRecord]] = field(default_factory=list)
    """Files gone, with the records they had."""
    changed: list[tuple[str, FileRecord | None, FileRecord, list[Leaf]]] = field(
        default_factory=list
    )
    """New or changed files: the record they had (if any), their new one, its leaves."""
    dirty: bool = False
    """The manifest changed (a touched file's new mtime, a file gone)."""

    def report(self, started: float, **branches: int) -> SyncReport:
        return SyncReport(
            files=self.files,
            hashed=self.hashed,
            changed=tuple(rel for rel, *_ in self.changed),
            removed=tuple(rel for rel, _ in self.removed),
            seconds=time.perf_counter() - started,
            **branches,
        )
