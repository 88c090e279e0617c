"""Session tools: scratch notes, digests of long outputs, and file reads that remember."""

from __future__ import annotations

import difflib
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

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
_TOTALS = re.compile(
    r"(?i)(\b\d+ (passed|failed|skipped|errors?|warnings?|xfailed|xpassed|deselected|tests?|"
    r"examples?|failures?|pending|ok)\b|^ran \d+ tests?|tests? run:|^(ok|failed)\b.*\(|"
    r"test result:|^tests?:\s+\d+|\bin \d+(\.\d+)?s\b)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Item:
    number: int
    kind: str
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

    def add(self, text: str, *, kind: str = "note", label: str = "") -> int:
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
    """First lines, error/failure/warning lines, test totals and last lines, ≤ ``limit`` chars."""
    lines = text.splitlines()
    count = len(lines)
    head_n, tail_n = 8, 12
    keep: dict[int, str] = {}
    for i in range(min(head_n, count)):
        keep[i] = "head"
    for i in range(max(0, count - tail_n), count):
        keep.setdefault(i, "tail")
    for i, line in enumerate(lines):
        if _TOTALS.search(line):
            keep.setdefault(i, "total")
    for i, line in enumerate(lines):
        if _NOTEWORTHY.search(line):
            keep.setdefault(i, "issue")
    header = f"DIGEST of {label} · {count:,} lines, {len(text):,} chars"
    budget = limit - len(header) - 80
    # Lines are added by priority (totals, head, issues, tail) until the budget is spent.
    priority = {"total": 0, "head": 1, "issue": 2, "tail": 3}
    chosen: set[int] = set()
    used = 0
    for i in sorted(keep, key=lambda i: (priority[keep[i]], i)):
        line = lines[i] if len(lines[i]) <= 300 else lines[i][:299] + "…"
        cost = len(line) + 8
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
        if not full.is_file():
            raise FileRefusedError(full, "it is a folder, not a file")
        size = full.stat().st_size
        if size > MAX_READ_BYTES and not force:
            raise FileRefusedError(
                full,
                f"it is {size / 1024:,.0f} KiB (over 512 KiB); use find_code or pass force=true",
            )
        from ihmt_chunkers import BinaryContentError, decode

        try:
            text = decode(full.read_bytes()).text
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
