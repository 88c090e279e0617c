"""The text splitters: narrative, temporal, process and generic.

Each one cuts the text into atomic pieces (a paragraph, a dated entry, a section with
its heading), then packs neighbouring pieces up to the target size without crossing a
hard boundary. Only a piece over ``max_tokens`` that the document type allows to be cut
(a narrative or generic paragraph, an oversized process section) is split again: at
sentences, then at line ends; what still does not fit is kept whole and flagged.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ihmt_chunkers._dates import find_date
from ihmt_chunkers._lines import Lines
from ihmt_chunkers._records import Block
from ihmt_chunkers._regex import LazyRegex

__all__ = ["split_generic", "split_narrative", "split_process", "split_temporal"]

_CHARS_PER_TOKEN = 4

_SEPARATOR = LazyRegex(
    r"^\s*(?:(?:\*\s*){3,}|(?:-\s*){3,}|(?:_\s*){3,}|(?:#\s*){3,}|(?:~\s*){3,})$"
)
_NARRATIVE_HEADING = LazyRegex(
    r"^\s*(?:#{1,6}\s*)?(?:chapter|cap[ií]tulo|part|parte|book|libro|prologue|pr[oó]logo|"
    r"epilogue|ep[ií]logo|interlude|interludio)\b[^\n]{0,80}$",
    re.IGNORECASE,
)
_MARKDOWN_HEADING = LazyRegex(r"^\s{0,3}#{1,6}\s+\S")
_FENCE = LazyRegex(r"^\s{0,3}(```|~~~)")
_SETEXT = LazyRegex(r"^\s{0,3}(?:=+|-+)\s*$")
_LABEL = LazyRegex(r"^\s*[^\s:\-*•\d][^:]{1,58}:\s*$")
_CAPS = LazyRegex(r"^\s*[A-ZÁÉÍÓÚÑÜ][A-ZÁÉÍÓÚÑÜ0-9 &/'().,-]{2,58}\s*$")
_SENTENCE_END = LazyRegex(r"(?<=[.!?…])[\"'”’»)\]]*\s+(?=[\"'“‘«(¿¡—-]?\s?[A-ZÁÉÍÓÚÑÜ0-9])")
_ENTRY_PREFIX = LazyRegex(r"^[\s#>*\[\]|(_~-]*")
_WORD = LazyRegex(r"\w+")


_TextKind = Literal["paragraph", "passage", "entry", "section"]
"""The block kinds of text (a part of :data:`ihmt_chunkers.BlockKind`)."""


@dataclass(slots=True)
class _Piece:
    """An atomic run of text: offsets ``start``..``end`` in the document."""

    start: int
    end: int
    kind: _TextKind
    hard: bool = False
    key: str | None = None
    timestamp: str | None = None
    context: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class _Budget:
    target: int
    limit: int
    pack: bool


def split_generic(
    text: str, *, target_tokens: int, max_tokens: int, pack: bool, doc_type: str
) -> tuple[Block, ...]:
    """Paragraphs (headings ride with the paragraph below) packed to the target."""
    lines = Lines(text)
    budget = _budget(target_tokens, max_tokens, pack)
    pieces: list[_Piece] = []
    for first, last in _paragraphs(lines, 0, lines.count - 1):
        pieces.extend(_cut(lines, first, last, "paragraph", budget, splittable=True))
    return _blocks(lines, pieces, budget, doc_type)


def split_narrative(
    text: str, *, target_tokens: int, max_tokens: int, pack: bool
) -> tuple[Block, ...]:
    """Paragraph-atomic; ``***``/``---`` and Chapter/Capítulo headings are hard boundaries."""
    lines = Lines(text)
    budget = _budget(target_tokens, max_tokens, pack)
    pieces: list[_Piece] = []
    heading = ""
    hard = False
    for first, last in _paragraphs(lines, 0, lines.count - 1, _narrative_break):
        head_line = lines.line(_first_text_row(lines, first, last)).strip()
        if _SEPARATOR.match(head_line):
            # A scene break closes the passage above it.
            if pieces:
                pieces[-1].end = lines.starts[last + 1]
            else:
                pieces.append(_Piece(lines.starts[first], lines.starts[last + 1], "paragraph"))
            hard = True
            continue
        is_heading = bool(_NARRATIVE_HEADING.match(head_line))
        if is_heading:
            heading = head_line
            hard = True
        cut = _cut(lines, first, last, "paragraph", budget, splittable=True)
        for piece in cut:
            piece.context = "" if is_heading else heading
        cut[0].hard = hard
        hard = False
        pieces.extend(cut)
    return _blocks(lines, pieces, budget, "narrative")


def _narrative_break(line: str) -> bool:
    stripped = line.strip()
    return bool(_SEPARATOR.match(stripped) or _NARRATIVE_HEADING.match(stripped))


def split_temporal(
    text: str, *, target_tokens: int, max_tokens: int, pack: bool, dayfirst: bool = True
) -> tuple[Block, ...]:
    """One dated entry is atomic and a block of its own: journal entries of one day are not
    packed together, so a correction of one never touches its neighbours (the timed turns
    of a conversation pack within their day)."""
    lines = Lines(text)
    budget = _budget(target_tokens, max_tokens, pack)
    starts: list[tuple[int, str]] = []
    for row in range(lines.count):
        stamp = _entry_date(lines.line(row), dayfirst)
        if stamp is not None:
            starts.append((row, stamp))
    pieces: list[_Piece] = []
    first_entry = starts[0][0] if starts else lines.count
    if first_entry > 0:
        for first, last in _paragraphs(lines, 0, first_entry - 1):
            pieces.extend(_cut(lines, first, last, "paragraph", budget, splittable=True))
    for index, (row, stamp) in enumerate(starts):
        last = starts[index + 1][0] - 1 if index + 1 < len(starts) else lines.count - 1
        pieces.append(
            _Piece(
                lines.starts[row],
                lines.starts[last + 1],
                "entry",
                hard=True,
                key=stamp[:10],
                timestamp=stamp,
            )
        )
    return _blocks(lines, pieces, budget, "temporal")


def split_process(
    text: str, *, target_tokens: int, max_tokens: int, pack: bool
) -> tuple[Block, ...]:
    """A heading and the steps or ingredients below it form one section, never cut apart."""
    lines = Lines(text)
    budget = _budget(target_tokens, max_tokens, pack)
    headings = _process_headings(lines)
    bounds = [0, *[row for row in headings if row > 0], lines.count]
    pieces: list[_Piece] = []
    for first, end in itertools.pairwise(bounds):
        last = end - 1
        if first > last:
            continue
        heading = lines.line(first).strip() if first in headings else ""
        size = _tokens(lines.starts[last + 1] - lines.starts[first])
        if size <= budget.limit:
            pieces.append(_Piece(lines.starts[first], lines.starts[last + 1], "section"))
            continue
        parts: list[_Piece] = []
        for p_first, p_last in _paragraphs(lines, first, last):
            parts.extend(_cut(lines, p_first, p_last, "section", budget, splittable=True))
        for part in parts[1:]:
            part.context = heading
        pieces.extend(_pack(parts, budget))
    return _blocks(lines, pieces, budget, "process")


# --------------------------------------------------------------------------- pieces


def _budget(target_tokens: int, max_tokens: int, pack: bool) -> _Budget:
    return _Budget(target=target_tokens, limit=max_tokens, pack=pack)


def _tokens(chars: int) -> int:
    return math.ceil(chars / _CHARS_PER_TOKEN)


def _first_text_row(lines: Lines, first: int, last: int) -> int:
    for row in range(first, last + 1):
        if not lines.is_blank(row):
            return row
    return first


def _paragraphs(
    lines: Lines, lo: int, hi: int, is_break: Callable[[str], bool] | None = None
) -> list[tuple[int, int]]:
    """Rows ``lo``..``hi`` as paragraphs, each with the blank lines below it.

    A fenced code block is one paragraph whatever blank lines it holds, and a markdown
    heading rides with the paragraph below it. A row for which ``is_break`` is true
    (a scene break, a chapter heading) is a paragraph of its own.
    """
    spans: list[tuple[int, int]] = []
    start = lo
    seen_text = False
    prev_blank = False
    heading_only = False
    force = False
    fence: str | None = None
    for row in range(lo, hi + 1):
        line = lines.line(row)
        if fence is not None:
            if line.lstrip().startswith(fence):
                fence = None
            continue
        if not line.strip():
            if seen_text:
                prev_blank = True
            continue
        breaking = is_break is not None and is_break(line)
        if seen_text and (force or breaking or (prev_blank and not heading_only)):
            spans.append((start, row - 1))
            start = row
            seen_text = False
        heading_only = bool(_MARKDOWN_HEADING.match(line)) if not seen_text or prev_blank else False
        seen_text = True
        prev_blank = False
        force = breaking
        fenced = _FENCE.match(line)
        if fenced:
            fence = fenced.group(1)
    if start <= hi:
        spans.append((start, hi))
    return spans


def _has_text(lines: Lines, first: int, last: int) -> bool:
    return any(not lines.is_blank(row) for row in range(first, last + 1))


def _cut(
    lines: Lines, first: int, last: int, kind: _TextKind, budget: _Budget, *, splittable: bool
) -> list[_Piece]:
    """One paragraph as a piece, or several when it is over the limit and may be cut."""
    start, end = lines.starts[first], lines.starts[last + 1]
    if _tokens(end - start) <= budget.limit:
        return [_Piece(start, end, kind)]
    if not splittable:
        return [_Piece(start, end, kind, reason=f"a {kind} longer than max_tokens")]
    return _split_long(lines.text, start, end, kind, budget)


def _split_long(text: str, start: int, end: int, kind: _TextKind, budget: _Budget) -> list[_Piece]:
    """Cut an oversized paragraph at sentence ends, then at line ends, packed to target."""
    pieces: list[_Piece] = []
    for s_start, s_end in _boundaries(text, start, end, _sentence_cuts):
        if _tokens(s_end - s_start) <= budget.limit:
            pieces.append(_Piece(s_start, s_end, kind))
            continue
        for l_start, l_end in _boundaries(text, s_start, s_end, _line_cuts):
            reason = ""
            if _tokens(l_end - l_start) > budget.limit:
                reason = "a sentence longer than max_tokens, with no line break to cut at"
            pieces.append(_Piece(l_start, l_end, kind, reason=reason))
    return _pack(pieces, _Budget(budget.target, budget.limit, True))


def _boundaries(
    text: str, start: int, end: int, cuts: Callable[[str, int, int], list[int]]
) -> list[tuple[int, int]]:
    points = [start, *cuts(text, start, end), end]
    return [(a, b) for a, b in itertools.pairwise(points) if b > a]


def _sentence_cuts(text: str, start: int, end: int) -> list[int]:
    return [m.end() for m in _SENTENCE_END.finditer(text, start, end) if start < m.end() < end]


def _line_cuts(text: str, start: int, end: int) -> list[int]:
    cuts = []
    pos = text.find("\n", start, end)
    while pos != -1 and pos + 1 < end:
        cuts.append(pos + 1)
        pos = text.find("\n", pos + 1, end)
    return cuts


def _pack(pieces: list[_Piece], budget: _Budget) -> list[_Piece]:
    """Merge neighbouring pieces up to the target (in pack mode).

    A hard piece starts a new block, except a turn of a conversation or a log (an entry
    stamped with a time of day) following another of the same day: a journal entry,
    dated by its day alone, is always a block of its own; pieces with different keys
    (days) never share a block; a piece that could not be cut to size stays alone.
    """
    if not budget.pack:
        return pieces
    out: list[_Piece] = []
    for piece in pieces:
        if out:
            last = out[-1]
            same_day = piece.key == last.key
            if piece.kind == "entry" and last.kind == "entry":
                # Turns of a conversation or a log (stamped with a time of day) pack
                # within their day; journal entries (a date alone) stand alone.
                joinable = same_day and _timed(piece) and _timed(last)
            else:
                joinable = not piece.hard and same_day
            if (
                joinable
                and not last.reason
                and not piece.reason
                and _tokens(piece.end - last.start) <= budget.target
            ):
                out[-1] = _Piece(
                    last.start,
                    piece.end,
                    _merged_kind(last.kind),
                    hard=last.hard,
                    key=last.key,
                    timestamp=last.timestamp,
                    context=last.context,
                )
                continue
        out.append(piece)
    return out


def _timed(piece: _Piece) -> bool:
    """A dated entry stamped with a time of day (``2024-03-09T10:00``), not a day alone."""
    return piece.timestamp is not None and "T" in piece.timestamp


def _merged_kind(kind: _TextKind) -> _TextKind:
    return "passage" if kind in ("paragraph", "passage") else kind


def _blocks(
    lines: Lines, pieces: list[_Piece], budget: _Budget, doc_type: str
) -> tuple[Block, ...]:
    if not pieces:
        return ()
    packed = _pack(pieces, budget)
    text = lines.text
    tag = f"type:{doc_type}"
    blocks: list[Block] = []
    for piece in packed:
        body = text[piece.start : piece.end]
        start_row = lines.row_of(piece.start)
        end_row = lines.row_of(piece.end - 1)
        tokens = _tokens(piece.end - piece.start)
        oversized = tokens > budget.limit
        reason = ""
        if oversized:
            reason = piece.reason or _default_reason(piece.kind)
        blocks.append(
            Block(
                text=body,
                start_line=start_row + 1,
                end_line=end_row + 1,
                kind=piece.kind,
                tags=(tag,),
                context=piece.context,
                timestamp=piece.timestamp,
                oversized=oversized,
                oversize_reason=reason,
            )
        )
    return tuple(blocks)


def _default_reason(kind: _TextKind) -> str:
    if kind == "entry":
        return "a dated entry is atomic and longer than max_tokens"
    if kind == "section":
        return "a heading with its steps longer than max_tokens and no paragraph to cut at"
    return f"a {kind} longer than max_tokens with nowhere to cut"


# --------------------------------------------------------------------------- dates


def _entry_date(line: str, dayfirst: bool) -> str | None:
    """The ISO date when ``line`` opens a dated entry, else None.

    An entry opens with a date: at the start of the line (after markup such as ``#``,
    ``[`` or ``*``), or after at most two words in a short header line
    (``Session 4 — 8 May 2023``, ``Visita: 3 de marzo de 2024``).
    """
    if len(line) < 6 or not any(map(str.isdigit, line[:80])):
        return None
    lead = _ENTRY_PREFIX.match(line)
    offset = lead.end() if lead else 0
    found = find_date(line, dayfirst=dayfirst, limit=offset + 64)
    if found is None:
        return None
    before = line[offset : found.start]
    if found.start > offset:
        words = _WORD.findall(before)
        if len(words) > 2 or len(line.strip()) > 100:
            return None
    value = found.value
    if isinstance(value, datetime):
        return value.isoformat(timespec="minutes" if value.second == 0 else "seconds")
    return value.isoformat()


# --------------------------------------------------------------------------- process


def _process_headings(lines: Lines) -> set[int]:
    """Rows that open a section: markdown headings, ``Label:`` lines, short ALL CAPS
    lines and setext headings; never inside a fenced block."""
    headings: set[int] = set()
    fence: str | None = None
    previous_blank = True
    for row in range(lines.count):
        line = lines.line(row)
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            previous_blank = False
            continue
        fenced = _FENCE.match(line)
        if fenced:
            fence = fenced.group(1)
            previous_blank = False
            continue
        if not stripped:
            previous_blank = True
            continue
        if (
            _MARKDOWN_HEADING.match(line)
            or (_LABEL.match(line) and len(stripped.split()) <= 8)
            or (previous_blank and _CAPS.match(line) and any(c.isalpha() for c in stripped))
        ) or (
            row + 1 < lines.count
            and _SETEXT.match(lines.line(row + 1))
            and previous_blank
            and len(stripped) <= 80
        ):
            headings.add(row)
        previous_blank = False
    return headings
