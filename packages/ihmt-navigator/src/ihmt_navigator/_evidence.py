"""The part of a long memory that answers: its evidence-bearing lines and sentences.

A long memory (a chat session, a day of notes) answers a question with a sentence or
two; its head is usually chit-chat. :func:`evidence_passage` cuts the memory into
sentences, each keeping the date and speaker that begin its line ("[2023-03-12 18:55]
Ana: …"), scores each by the question's words it holds (by their rarity in the store,
and by how few of the memory's sentences hold them: a speaker's name on every other
line tells none apart) and by the values the question asks for (an IP address for
"what's its IP?"), and keeps the best within a token budget, in the memory's order,
with "…" where something was left out. A memory's heading (its first line, when short)
comes first: it often holds the date and who was there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ihmt_navigator._records import Passage
from ihmt_store import estimate_tokens, terms

__all__ = ["evidence_passage"]

GAP = "…"
"""Marks what was left out between two pieces of a memory."""
HEADING_CHARS = 120
"""A first line this short is the memory's heading (a date, who was there): kept."""

_PREFIX = re.compile(
    r"^\s*(?:[-*•]\s+)?(?:\[[^\]\n]{4,32}\]\s*|\d{4}-\d\d-\d\d[ T][\d:]{4,8}\s+)?"
    r"(?:[^\s:][^:\n]{0,38}:\s+)?"
)
"""What begins a line and belongs to each of its sentences: a timestamp, a speaker."""
_SENTENCE = re.compile(r"(?<=[.!?…])[\"')\]]?\s+(?=[\"'(¿¡]?[A-ZÁÉÍÓÚÑ0-9])")


@dataclass(frozen=True, slots=True)
class _Piece:
    line: int
    """The line (0-based) it sits on."""
    prefix: str
    """The line's timestamp and speaker (for the line's first piece, part of ``text``)."""
    text: str
    first: bool
    """The first sentence of its line."""


def evidence_passage(
    text: str,
    weights: Mapping[str, float],
    shapes: Sequence[re.Pattern[str]],
    budget_tokens: int,
) -> Passage | None:
    """The sentences of ``text`` that hold the question's words (``weights``: the rarity
    of each of its terms) or a value of the ``shapes`` it asks for, best first, within
    ``budget_tokens``, shown in the memory's order; None when no sentence holds any."""
    lines = text.splitlines() or [text]
    pieces = _pieces(lines)
    said = [frozenset(t for t in terms(p.text) if t in weights) for p in pieces]
    who = [frozenset(t for t in terms(p.prefix) if t in weights) for p in pieces]
    count = len(pieces)
    df: dict[str, int] = {}
    for words in said:
        for t in words:
            df[t] = df.get(t, 0) + 1
    for words in who:
        for t in words:
            df[t] = df.get(t, 0) + 1

    def weight(words: frozenset[str]) -> float:
        return sum(weights[t] * math.log(1 + count / df[t]) for t in words)

    shaped = [sum(1 for s in shapes if s.search(p.text)) for p in pieces]
    value = max(weights.values(), default=0.0) * math.log(1 + count / max(sum(shaped), 1))
    # A sentence is evidence when it holds the question's words (or a value asked for)
    # itself; its speaker and date only rank it above another's saying the same.
    scores = [
        weight(words) + values * value + (weight(by) if words or values else 0.0)
        for words, by, values in zip(said, who, shaped, strict=True)
    ]
    order = sorted(range(count), key=lambda i: (-scores[i], i))
    if not order or scores[order[0]] <= 0:
        return None
    chosen: set[int] = set()
    heading = 0 if len(lines) > 1 and 0 < len(lines[0].strip()) <= HEADING_CHARS else None
    if heading is not None:
        chosen.update(i for i, p in enumerate(pieces) if p.line == heading)
    for i in order:
        if scores[i] <= 0:
            break
        trial = chosen | {i}
        if chosen and estimate_tokens(_render(pieces, trial, lines)) > budget_tokens:
            continue
        chosen = trial
    shown = _render(pieces, chosen, lines)
    if estimate_tokens(shown) > budget_tokens:
        shown = shown[: budget_tokens * 4 - 1] + GAP
    picked = sorted({pieces[i].line for i in chosen})
    # The sentence that answers best, for a one-line listing: not the heading, which
    # says when and who but not what.
    said_best = [i for i in order if scores[i] > 0 and pieces[i].line != heading]
    best = pieces[said_best[0] if said_best else order[0]]
    return Passage(
        start_line=picked[0] + 1,
        end_line=picked[-1] + 1,
        total_lines=len(lines),
        text=shown,
        picked=True,
        lead=f"{best.prefix.strip()} {'' if best.first else GAP + ' '}{best.text}".strip(),
    )


def _pieces(lines: Sequence[str]) -> list[_Piece]:
    """Every line's sentences, each with the line's timestamp and speaker."""
    out: list[_Piece] = []
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        prefix = _PREFIX.match(line)
        head = prefix.group() if prefix else ""
        body = line[len(head) :]
        sentences = [s for s in _SENTENCE.split(body) if s.strip()] or [body]
        for index, sentence in enumerate(sentences):
            out.append(_Piece(number, head, sentence.strip(), index == 0))
    return out


def _render(pieces: Sequence[_Piece], chosen: set[int], lines: Sequence[str]) -> str:
    """The chosen pieces in the memory's order: a line's pieces together after its
    timestamp and speaker, a gap marked inside a line and between lines."""
    out: list[str] = []
    last_line = -1
    last_piece = -1
    for i in sorted(chosen):
        piece = pieces[i]
        if piece.line != last_line:
            if piece.line > last_line + 1:
                out.append(GAP)
            lead = "" if piece.first else GAP + " "
            out.append(f"{piece.prefix.strip()} {lead}{piece.text}")
        else:
            joint = " " if i == last_piece + 1 else f" {GAP} "
            out[-1] += joint + piece.text
        last_line, last_piece = piece.line, i
    following = last_piece + 1
    if out and following < len(pieces) and pieces[following].line == last_line:
        out[-1] += " " + GAP
    if last_line < len(lines) - 1:
        out.append(GAP)
    return "\n".join(s.strip() for s in out)
