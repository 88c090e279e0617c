"""Session tools: scratch notes, digests of long outputs, and file reads that remember."""

from __future__ import annotations

import difflib
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ihmt_mcp._types import ScratchKind
from ihmt_mcp.errors import FileRefusedError, PathRefusedError
from ihmt_store import estimate_tokens, terms

__all__ = ["DIGEST_CHARS", "MAX_READ_BYTES", "FileReads", "Scratch", "digest"]

DIGEST_CHARS = 2400
MAX_READ_BYTES = 512 * 1024
RECALL_TOKENS = 1500

_NOTEWORTHY = re.compile(
    r"(?i)(\berror|exception\b|traceback|\bfail|fatal|panic|warning|\bwarn\b|denied|refused|"
    r"timed? ?out|segmentation fault|\bundefined\b|cannot|can't|not found)"
)
# The last line of a traceback: "ValueError: …", "pkg.mod.CustomError", "KeyboardInterrupt".
_EXCEPTION = re.compile(r"^\s{0,8}[A-Za-z_][\w.]{0,80}(?:Error|Exception|Exit|Interrupt)\b")
# Test-runner totals only. Counts of requests ("200 OK"), rows or bytes are not totals:
# an access log would otherwise fill the digest with its status lines.
_TOTALS = re.compile(
    r"(?i)(\b\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|tests?|"
    r"examples?|failures?|pending)\b|^ran \d+ tests? in\b|tests? run:|"
    r"^(?:ok|failed) \((?:failures|errors|skipped)=|test result:|^tests?:\s+\d+)"
)
_TOTALS_KEPT = 8
"""Totals lines kept at most (the last ones: a rerun's totals replace the first run's)."""
_LAST_KEPT = 4
"""The last lines are kept whatever else the budget holds: a log ends with its verdict."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Item:
    number: int
    kind: ScratchKind
    """``note`` or ``output``."""
    label: str
    text: str
    at: float


class Scratch:
    """The session's scratch memory: notes and full outputs, gone with the process."""

    def __init__(self) -> None:
        self._items: list[_Item] = []

    def __len__(self) -> int:
        return len(self._items)

    def add(self, text: str, *, kind: ScratchKind = "note", label: str = "") -> int:
        """Keep ``text``; return its number."""
        number = len(self._items) + 1
        self._items.append(_Item(number=number, kind=kind, label=label, text=text, at=time.time()))
        return number

    def recall(self, query: str, clue: str | None = None) -> str:
        """The notes and outputs that best match ``query`` (the best one in full, bounded)."""
        if not query or not query.strip():
            raise ValueError("the query is empty: say what to recall")
        if not self._items:
            return "NOTHING NOTED · this session has no notes or digested outputs yet."
        want = list(dict.fromkeys(terms(f"{query} {clue or ''}")))
        number = re.fullmatch(r"\s*#?(\d+)\s*", query)
        scored: list[tuple[float, _Item]] = []
        total = len(self._items)
        docs = [set(terms(f"{item.label} {item.text}")) for item in self._items]
        for item, bag in zip(self._items, docs, strict=True):
            if number and int(number.group(1)) == item.number:
                scored.append((1e9, item))
                continue
            score = 0.0
            for term in want:
                if term in bag:
                    df = sum(1 for d in docs if term in d)
                    score += math.log(1 + (total - df + 0.5) / (df + 0.5))
            if score > 0:
                scored.append((score + item.number * 1e-6, item))
        if not scored:
            return f'NOT FOUND · no note of this session matches "{query}".'
        scored.sort(key=lambda pair: -pair[0])
        best = scored[0][1]
        text = best.text
        clipped = ""
        if estimate_tokens(text) > RECALL_TOKENS:
            from ihmt_navigator import best_passage

            passage = best_passage(text, want, RECALL_TOKENS)
            text = passage.text
            clipped = f" (lines {passage.start_line}-{passage.end_line} of {passage.total_lines})"
        name = f"{best.kind} #{best.number}" + (f" '{best.label}'" if best.label else "")
        stamp = time.strftime("%H:%M", time.localtime(best.at))
        out = [f"RECALLED {name} from {stamp}{clipped}:", text]
        others = [item for _, item in scored[1:6]]
        if others:
            out.append("Other matches:")
            for item in others:
                flat = " ".join(item.text.split())
                out.append(f"- {item.kind} #{item.number}: {flat[:100]}")
        return "\n".join(out)


def digest(text: str, label: str = "output", *, limit: int = DIGEST_CHARS) -> str:
    """First lines, error/failure/warning lines, test totals and last lines, ≤ ``limit`` chars.

    The budget goes first to the last lines, then to test totals (the last few), then
    to errors and tracebacks (each distinct line once: a repeated error is shown once),
    then to the first lines and the rest of the tail.
    """
    lines = text.splitlines()
    count = len(lines)
    head_n, tail_n = 8, 12
    keep: dict[int, int] = {}

    def want(i: int, rank: int) -> None:
        if 0 <= i < count and rank < keep.get(i, 99):
            keep[i] = rank

    for i in range(max(0, count - _LAST_KEPT), count):
        want(i, 0)
    totals = [i for i, line in enumerate(lines) if _TOTALS.search(line)]
    for i in totals[-_TOTALS_KEPT:]:
        want(i, 1)
    seen: set[str] = set()
    for i, line in enumerate(lines):
        is_exception = bool(_EXCEPTION.match(line))
        if not (is_exception or _NOTEWORTHY.search(line)):
            continue
        shape = line.strip()
        if shape in seen:
            continue  # the same error repeated verbatim is shown once
        seen.add(shape)
        want(i, 2)
        if line.lstrip().startswith("Traceback"):
            # The frame nearest the failure says where it happened.
            for j in range(i + 1, min(count, i + 200)):
                if _EXCEPTION.match(lines[j]):
                    want(j - 2, 3)
                    break
    for i in range(min(head_n, count)):
        want(i, 4)
    for i in range(max(0, count - tail_n), count):
        want(i, 5)
    header = f"DIGEST of {label} · {count:,} lines, {len(text):,} chars"
    # Each gap between kept lines costs a note of about 32 characters; it is paid as the
    # lines are chosen, so the rendered digest never has to be cut (and lose its end).
    budget = limit - len(header) - 40
    chosen: set[int] = set()
    used = 0
    for i in sorted(keep, key=lambda i: (keep[i], i)):
        cost = min(len(lines[i]), 300) + 8  # the line and its number
        if i - 1 not in chosen:
            cost += 32
        if used + cost > budget:
            continue
        chosen.add(i)
        used += cost
    out = [header]
    previous = -1
    for i in sorted(chosen):
        if i != previous + 1:
            out.append(f"  … {i - previous - 1} line(s) omitted …")
        line = lines[i] if len(lines[i]) <= 300 else lines[i][:299] + "…"
        out.append(f"{i + 1:>5}| {line}")
        previous = i
    if previous < count - 1:
        out.append(f"  … {count - 1 - previous} line(s) omitted …")
    return "\n".join(out)[:limit]


class FileReads:
    """``read_file`` with a memory: a repeated read answers UNCHANGED or a unified diff."""

    def __init__(self) -> None:
        self._seen: dict[Path, str] = {}

    def read(self, path: str, roots: tuple[Path, ...], *, force: bool = False) -> str:
        """Read ``path`` (relative paths resolve against the first root).

        Raises:
            PathRefusedError: outside every root.
            FileRefusedError: missing, a folder, binary, or over 512 KiB without ``force``.
        """
        if not path or not path.strip():
            raise ValueError("the path is empty: give a file path")
        raw = Path(path.strip()).expanduser()
        base = roots[0] if roots else Path.cwd()
        full = (raw if raw.is_absolute() else base / raw).resolve()
        if not any(full == r or r in full.parents for r in roots):
            raise PathRefusedError(full, roots)
        if not full.exists():
            raise FileRefusedError(full, "no such file")
        if full.is_dir():
            raise FileRefusedError(full, "it is a folder, not a file")
        if not full.is_file():
            from ihmt_mcp._files import special_kind

            kind = special_kind(full.stat().st_mode)
            raise FileRefusedError(full, f"it is {kind}, not a regular file")
        size = full.stat().st_size
        if size > MAX_READ_BYTES and not force:
            raise FileRefusedError(
                full,
                f"it is {size / 1024:,.0f} KiB (over 512 KiB); use find_code or pass force=true",
            )
        from ihmt_chunkers import BinaryContentError, decode
        from ihmt_mcp._files import read_regular

        try:
            text = decode(read_regular(full)).text
        except BinaryContentError:
            raise FileRefusedError(full, "it is a binary file") from None
        previous = self._seen.get(full)
        self._seen[full] = text
        shown = _display(full, roots)
        if previous is None or force:
            return f"FILE {shown} · {text.count(chr(10)) + 1} lines\n{text}"
        if previous == text:
            return f"UNCHANGED · {shown} is exactly as in your last read; use what you have."
        diff = difflib.unified_diff(
            previous.splitlines(keepends=True),
            text.splitlines(keepends=True),
            fromfile=f"{shown} (your last read)",
            tofile=f"{shown} (now)",
        )
        return "CHANGED since your last read · unified diff:\n" + "".join(diff)


def _display(path: Path, roots: tuple[Path, ...]) -> str:
    for root in roots:
        if root in path.parents:
            return path.relative_to(root).as_posix()
    return str(path)
