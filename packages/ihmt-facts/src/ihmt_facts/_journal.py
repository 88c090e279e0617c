"""The timeline's cache on disk: an append-only journal of per-leaf fact sets.

``state/facts.jsonl`` starts with a header line (format and a random epoch) followed by one
JSON line per change: a leaf's complete fact set and its correction, the last line for a
leaf winning. Recording a fact appends one line; compaction (and rebuild) rewrite the
file atomically with one line per leaf. Other processes follow by reading what was
appended since their last look, and reload from scratch when the epoch changed. When a
leaf is forgotten, a line saying it holds nothing is appended and its earlier lines are
overwritten with spaces in place (readers skip blank lines): no value drawn from it waits
on disk for the next compaction.

The file is derived: it can be deleted at any time and is rebuilt from the leaves.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ihmt_facts._records import Fact

logger = logging.getLogger(__name__)

__all__ = ["FORMAT", "Journal", "JournalDamagedError", "LeafRecord", "Outdated"]

FORMAT = 1
"""Version of the journal's line format; another number means: rebuild it."""


class JournalDamagedError(Exception):
    """The journal cannot be read (missing header, foreign format, a broken line)."""


class Outdated(NamedTuple):
    """A leaf's correction: the leaf that corrected it, and when."""

    by: str
    date: str


@dataclass(frozen=True, slots=True)
class LeafRecord:
    """What the timeline knows about one leaf: its facts and its correction."""

    leaf_id: str
    facts: tuple[Fact, ...]
    outdated: Outdated | None
    """Its correction, or None."""

    def to_line(self) -> bytes:
        data: dict[str, Any] = {
            "l": self.leaf_id,
            "f": [[f.subject, f.attribute, f.value, f.timestamp, f.origin] for f in self.facts],
            "o": list(self.outdated) if self.outdated else None,
        }
        return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    @classmethod
    def from_json(cls, data: Any) -> LeafRecord:
        leaf_id = data["l"]
        facts = tuple(
            Fact(subject=s, attribute=a, value=v, timestamp=t, source=leaf_id, origin=o)
            for s, a, v, t, o in data["f"]
        )
        out = data.get("o")
        return cls(leaf_id, facts, Outdated(str(out[0]), str(out[1])) if out else None)


class Journal:
    """Reads and appends ``state/facts.jsonl``; tracks how far this process has read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._header = b""
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self.lines = 0
        """Change lines in the file (for compaction)."""
        self._spans: dict[str, list[tuple[int, int]]] = {}
        """Leaf id -> (offset, length without the newline) of each of its lines, oldest
        first: what :meth:`blank` overwrites."""

    @property
    def exists(self) -> bool:
        return self.path.exists()

    def is_current(self) -> bool:
        """True when nothing was appended or replaced since the last read (one ``stat``)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        return (st.st_ino, st.st_dev) == self._identity and st.st_size == self._offset

    def read_all(self) -> list[LeafRecord]:
        """Read the whole file.

        Raises:
            FileNotFoundError: no journal yet.
            JournalDamagedError: it cannot be trusted; rebuild it.
        """
        with open(self.path, "rb") as handle:
            st = os.fstat(handle.fileno())
            header = handle.readline()
            try:
                head = json.loads(header)
            except ValueError:
                raise JournalDamagedError("unreadable header") from None
            if not isinstance(head, dict) or head.get("ihmt_facts") != FORMAT:
                raise JournalDamagedError("foreign or newer journal format")
            self._header = header
            self._identity = (st.st_ino, st.st_dev)
            self._offset = len(header)
            self.lines = 0
            self._spans = {}
            return self._read_tail(handle)

    def read_new(self) -> list[LeafRecord] | None:
        """What other processes appended since the last read; None when a full reload is due.

        Raises:
            JournalDamagedError: an appended line is broken.
        """
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed below, on every path
        except FileNotFoundError:
            return None
        with handle:
            st = os.fstat(handle.fileno())
            if (st.st_ino, st.st_dev) != self._identity or st.st_size < self._offset:
                return None
            if handle.readline() != self._header:
                return None
            if st.st_size == self._offset:
                return []
            handle.seek(self._offset)
            return self._read_tail(handle)

    def _read_tail(self, handle: Any) -> list[LeafRecord]:
        data = handle.read()
        end = data.rfind(b"\n") + 1
        lines: list[bytes] = []
        starts: list[int] = []
        position = self._offset
        for raw in data[:end].split(b"\n")[:-1]:
            if raw.strip():  # a blanked line (a forgotten leaf's) is skipped
                lines.append(raw)
                starts.append(position)
            position += len(raw) + 1
        try:
            # One parse for the whole tail is several times faster than one per line.
            raw_records = json.loads(b"[" + b",".join(lines) + b"]")
        except ValueError:
            raise JournalDamagedError(f"a broken line after byte {self._offset}") from None
        latest: dict[str, Any] = {}
        for item in raw_records:
            if not isinstance(item, dict) or not isinstance(item.get("l"), str):
                raise JournalDamagedError(f"a foreign line after byte {self._offset}")
            latest.pop(item["l"], None)
            latest[item["l"]] = item  # the last line of a leaf wins; keep the order of change
        try:
            records = [LeafRecord.from_json(item) for item in latest.values()]
        except (ValueError, KeyError, TypeError, IndexError):
            raise JournalDamagedError(f"a malformed line after byte {self._offset}") from None
        spans = self._spans
        for item, start, raw in zip(raw_records, starts, lines, strict=True):
            spans.setdefault(item["l"], []).append((start, len(raw)))
        self.lines += len(lines)
        self._offset += end
        return records

    def append(self, records: Iterable[LeafRecord]) -> None:
        """Append change lines; the caller holds the store's lock and has read to the end.

        A partial last line (a writer killed mid-append) is cut off first: it was never
        acknowledged.
        """
        lines = [(r.leaf_id, r.to_line()) for r in records]
        payload = b"".join(line for _, line in lines)
        if not payload:
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            if os.fstat(fd).st_size != self._offset:
                logger.warning("cutting an unfinished line off %s", self.path)
                os.ftruncate(fd, self._offset)
            written = 0
            while written < len(payload):
                written += os.write(fd, payload[written:])
        finally:
            os.close(fd)
        self._note_spans(lines, self._offset)
        self._offset += len(payload)
        self.lines += len(lines)

    def blank(self, leaf_id: str) -> int:
        """Overwrite every line of ``leaf_id`` but its last one with spaces, in place.

        The caller holds the store's lock, has read to the end, and has just appended the
        leaf's last line (the one that now says what the timeline holds from it). The file
        keeps its size and identity: readers that had read those lines keep what they
        parsed and follow the last line; readers that had not skip the blanks.

        Returns:
            How many lines were blanked.
        """
        spans = self._spans.get(leaf_id)
        if not spans or len(spans) < 2:
            return 0
        earlier, last = spans[:-1], spans[-1]
        fd = os.open(self.path, os.O_WRONLY)
        try:
            st = os.fstat(fd)
            if (st.st_ino, st.st_dev) != self._identity:
                return 0  # replaced since it was read: the spans point elsewhere
            for start, length in earlier:
                if hasattr(os, "pwrite"):
                    os.pwrite(fd, b" " * length, start)
                else:  # Windows has no pwrite
                    os.lseek(fd, start, os.SEEK_SET)
                    os.write(fd, b" " * length)
            os.fsync(fd)  # a forgotten value must not linger on the disk
        finally:
            os.close(fd)
        self._spans[leaf_id] = [last]
        self.lines -= len(earlier)
        return len(earlier)

    def _note_spans(self, lines: list[tuple[str, bytes]], offset: int) -> None:
        spans = self._spans
        for leaf_id, line in lines:
            spans.setdefault(leaf_id, []).append((offset, len(line) - 1))
            offset += len(line)

    def rewrite(self, records: Iterable[LeafRecord]) -> None:
        """Replace the file atomically with a fresh epoch and one line per record."""
        header = (
            json.dumps({"ihmt_facts": FORMAT, "epoch": secrets.token_hex(16)}) + "\n"
        ).encode()
        lines = [(r.leaf_id, r.to_line()) for r in records]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            with open(temp, "wb") as handle:
                handle.write(header)
                handle.writelines(line for _, line in lines)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        st = os.stat(self.path)
        self._header = header
        self._identity = (st.st_ino, st.st_dev)
        self._offset = st.st_size
        self.lines = len(lines)
        self._spans = {}
        self._note_spans(lines, len(header))
