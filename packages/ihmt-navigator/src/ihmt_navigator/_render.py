"""Rendering a search result as the text an agent reads: compact (bounded) or full.

A search decides an :class:`Answer`; :func:`render` turns it into the text once, with
every note the answer carries (a composition adds nothing afterwards).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ihmt_navigator._confidence import estimate
from ihmt_navigator._records import Hit, Passage, SearchOptions, Status
from ihmt_store import estimate_tokens, one_line, terms

__all__ = ["Answer", "best_passage", "render"]

LINE_CHARS = 150
QUERY_CHARS = 200
"""A question is echoed up to this many characters (a 1 MB question is not repeated)."""
LOW_CONFIDENCE = 0.4
"""Below this, a FOUND answer says its confidence is low (under two thirds of the
question's weight matched, with no margin over the next memory)."""


def best_passage(text: str, query_terms: Sequence[str], budget_tokens: int) -> Passage:
    """The window of whole lines that holds most query terms within ``budget_tokens``."""
    lines = text.splitlines() or [text]
    wanted = set(query_terms)
    value = [len(wanted.intersection(terms(line))) for line in lines]
    limit = budget_tokens * 4
    best = (-1.0, 0, 0)
    start = 0
    size = 0
    hits = 0
    for end, line in enumerate(lines):
        size += len(line) + 1
        hits += value[end]
        while size > limit and start < end:
            size -= len(lines[start]) + 1
            hits -= value[start]
            start += 1
        score = hits - start * 1e-6
        if score > best[0]:
            best = (score, start, end)
    _, first, last = best
    piece = "\n".join(lines[first : last + 1])
    if len(piece) > limit:
        piece = piece[: limit - 1] + "…"
    return Passage(start_line=first + 1, end_line=last + 1, total_lines=len(lines), text=piece)


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """What a search decided, before it is rendered."""

    status: Status
    hits: tuple[Hit, ...] = ()
    """Best first; for ``ambiguous``, the candidates to choose among."""
    notices: tuple[str, ...] = ()
    """Corrections to relay (OUTDATED) and other remarks, rendered as NOTE lines."""
    coverage: float = 0.0
    margin: float = 0.0
    broad: bool = False
    """A broad question: the other hits are "memories about it"."""
    stray: tuple[str, ...] = ()
    """NOT FOUND: the only words the closest memory shares with the question."""
    unknown: tuple[str, ...] = ()
    """NOT FOUND: names in the question that nothing stored mentions."""
    lacking: tuple[str, ...] = ()
    """NOT FOUND: the values asked for that no memory about the subject holds."""
    elsewhere: tuple[Hit, ...] = ()
    """NOT FOUND for the current project: what other projects hold."""
    nearest: tuple[Hit, ...] = ()
    """NOT FOUND: the closest memories, listed as not an answer."""
    unnamed: tuple[str, ...] = ()
    """NOT FOUND: the name the question is about, which the memories that answer its
    other words do not mention."""
    signals: Mapping[str, float] = field(default_factory=dict)
    """What the decision weighed (:class:`~ihmt_navigator._signals.Signals`), by name."""

    @property
    def confidence(self) -> float:
        """How likely the first memory is the answer, read from the signals by the
        fitted model (:mod:`ihmt_navigator._confidence`); 0 for NOT FOUND. For AMBIGUOUS,
        at most one chance in as many as the memories to choose among: the question
        does not tell them apart (the model is fitted on FOUND answers)."""
        if self.status == "not_found":
            return 0.0
        weighed = estimate(self.signals, self.coverage, self.margin)
        if self.status == "ambiguous" and self.hits:
            return min(weighed, round(1 / len(self.hits), 2))
        return weighed


def _date(hit: Hit) -> str:
    return hit.timestamp[:10]


def _where(hit: Hit) -> str:
    """Where a memory sits, from what is replicated with it: its domain and project.

    Not the title of the branch above it: each machine groups memories into branches in
    the order they reached it, so a synced memory sits under different branches on two
    machines, and the answer must read the same on both (``detail="full"`` shows this
    machine's path). A branch title is also other memories' words, which a reader takes
    for this memory's."""
    place = hit.domain
    if hit.project:
        place += f" · project {hit.project}"
    return place


def _gist(hit: Hit) -> str:
    """The hit's excerpt (or title) on one line, clipped; for a long memory, the
    sentence of it that answers best (its head is often something else)."""
    lead = hit.passage.lead if hit.passage is not None else ""
    return one_line(lead or hit.excerpt or hit.title, LINE_CHARS)


def _listed(hit: Hit) -> str:
    flag = " [OUTDATED]" if hit.outdated else ""
    return f"[{_date(hit)}] {hit.domain}{flag} — {_gist(hit)} ({hit.id})"


def _full_lines(hit: Hit) -> list[str]:
    return [
        f"  id: {hit.id} · kind: {hit.kind} · score {hit.score:.3f}",
        f"  path: {' → '.join(('root', *hit.path))}",
        f"  matched: {', '.join(hit.matched) or '-'}",
    ]


def render(answer: Answer, *, asked: str, options: SearchOptions, budget: int) -> str:
    """The text for an agent; compact stays within ``budget`` estimated tokens.

    Args:
        asked: the question as shown (with its clue).
        options: ``detail``; ``prefer_project`` (the current project, named when
            nothing in it answers); ``note_other_project`` (a FOUND answer from another
            project ends with a NOTE saying so).
    """
    query = asked if len(asked) <= QUERY_CHARS else asked[: QUERY_CHARS - 1] + "…"
    if answer.status == "not_found":
        return "\n".join(_not_found(answer, query, options.prefer_project or "", budget))
    full = options.detail == "full"
    if answer.status == "ambiguous":
        return "\n".join(_ambiguous(answer, query, full, budget))
    out = _found(answer, full, budget)
    best = answer.hits[0]
    current = options.prefer_project or ""
    if options.note_other_project and best.project and best.project != current:
        here = f"project {current}" if current else "no project"
        out.append(
            f"NOTE: this answer comes from project {best.project}, not the current "
            f"one ({here}); check it applies here before relying on it."
        )
    return "\n".join(out)


def _not_found(answer: Answer, query: str, project: str, budget: int) -> list[str]:
    """NOT FOUND, and why: unknown names, other projects' memories, a value no memory
    holds, or a stray shared word."""
    elsewhere, stray = answer.elsewhere, answer.stray
    where = f" for project {project}" if elsewhere else " in memory"
    out = [f'NOT FOUND · nothing{where} answers "{query}".']
    if answer.unknown:
        out.append(
            f"Nothing stored mentions {', '.join(repr(u) for u in answer.unknown)}. "
            "Say you do not know rather than guess."
        )
    elif elsewhere:
        out.append(
            "Other projects hold these memories; if you mention them, say whose they "
            "are and that they may not apply here:"
        )
        for hit in elsewhere:
            line = f"- {_listed(hit)} · project {hit.project}"
            if estimate_tokens("\n".join([*out, line])) > budget:
                break
            out.append(line)
    elif answer.unnamed:
        about = f" about {', '.join(repr(s) for s in stray)}" if stray else ""
        out.append(
            f"Memories{about} were found, but none of them mentions "
            f"{', '.join(repr(u) for u in answer.unnamed)}: they are about something else. "
            "Say you do not know rather than guess."
        )
    elif answer.lacking:
        about = f" about {', '.join(repr(s) for s in stray)}" if stray else ""
        out.append(
            f"Memories{about} were found, but none holds {' or '.join(answer.lacking)}. "
            "Say you do not know rather than guess."
        )
    elif stray:
        out.append(
            f"The closest memory shares only {', '.join(repr(s) for s in stray)} with the "
            "question, which is not enough to answer it. Say you do not know."
        )
    if answer.nearest and not elsewhere:
        out.extend(_nearest(answer.nearest))
    return out


NEAREST_TOKENS = 60
"""The most the closest memories of a NOT FOUND answer may take, all lines together."""


def _nearest(hits: tuple[Hit, ...]) -> list[str]:
    """The closest memories, one clipped line each, labelled as not an answer."""
    out = ["Closest memories, not an answer:"]
    share = (NEAREST_TOKENS - estimate_tokens(out[0])) // len(hits)
    for hit in hits:
        head = f"- [{_date(hit)}] "
        tail = f" ({hit.id})"
        room = max(16, share * 4 - len(head) - len(tail))
        out.append(head + one_line(hit.excerpt or hit.title, room) + tail)
    return out


def _ambiguous(answer: Answer, query: str, full: bool, budget: int) -> list[str]:
    """AMBIGUOUS: one numbered line per candidate, and how to tell them apart."""
    results = answer.hits
    out = [
        f'AMBIGUOUS · "{query}" matches {len(results)} different memories about equally well '
        f"(confidence {answer.confidence:.2f}). Do not guess: ask the user which one, or "
        'search again with clue="…" (a place, a date, a project, a surname).'
    ]
    for number, hit in enumerate(results, 1):
        line = f"{number}. [{_date(hit)}] {_where(hit)} — {_gist(hit)} ({hit.id})"
        if estimate_tokens("\n".join([*out, line])) > budget:
            break
        out.append(line)
        if full:
            out.extend(_full_lines(hit))
    return out


def _found(answer: Answer, full: bool, budget: int) -> list[str]:
    """FOUND: the best memory in full (or its best passage), the notes, the others."""
    results, confidence = answer.hits, answer.confidence
    best = results[0]
    head = f"FOUND · confidence {confidence:.2f}"
    if best.project:
        head += f" · from project {best.project}"
    out = [head]
    if confidence < LOW_CONFIDENCE and len(results) > 1:
        out.append(
            "Low confidence: the question's words only partly match. Check the other "
            "matches below before relying on the first one."
        )
    out.append(f"Best memory [{_date(best)}] {_where(best)} ({best.id}):")
    if best.passage is not None:
        p = best.passage
        shown = "what answers from lines" if p.picked else "lines"
        out.append(
            f"(long memory: {shown} {p.start_line}-{p.end_line} of {p.total_lines}; "
            f"ask for the rest with its id)"
        )
    out.append(best.content.rstrip() or best.excerpt)
    if full:
        out.extend(_full_lines(best))
    for notice in answer.notices:
        line = f"NOTE: {notice}"
        if estimate_tokens("\n".join([*out, line])) > budget:
            break
        out.append(line)
    others = results[1:]
    if others:
        heading = "Other matches:" if not answer.broad else "Other memories about it:"
        out.append(heading)
        for hit in others:
            lines = [f"- {_listed(hit)}"]
            if full:
                lines.extend(_full_lines(hit))
            if estimate_tokens("\n".join([*out, *lines])) > budget:
                break
            out.extend(lines)
        if out[-1] == heading:
            out.pop()
    return out
