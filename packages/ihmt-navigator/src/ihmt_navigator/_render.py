"""Rendering a search result as the text an agent reads: compact (bounded) or full."""

from __future__ import annotations

from collections.abc import Sequence

from ihmt_navigator._records import Hit, Passage
from ihmt_store import estimate_tokens, terms

__all__ = ["best_passage", "render"]

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


def _date(hit: Hit) -> str:
    return hit.timestamp[:10]


def _where(hit: Hit) -> str:
    place = " › ".join([hit.domain, *(t for t in hit.path_titles[-1:] if t)])
    if hit.project:
        place += f" · project {hit.project}"
    return place


def _one_line(hit: Hit, width: int = LINE_CHARS) -> str:
    text = " ".join((hit.excerpt or hit.title).split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    flag = " [OUTDATED]" if hit.outdated else ""
    return f"[{_date(hit)}] {hit.domain}{flag} — {text} ({hit.id})"


def _full_lines(hit: Hit) -> list[str]:
    return [
        f"  id: {hit.id} · kind: {hit.kind} · score {hit.score:.3f}",
        f"  path: {' → '.join(('root', *hit.path))}",
        f"  matched: {', '.join(hit.matched) or '-'}",
    ]


def render(
    *,
    status: str,
    query: str,
    results: Sequence[Hit],
    notices: Sequence[str],
    confidence: float,
    budget: int,
    detail: str,
    broad: bool,
    stray: Sequence[str] = (),
    unknown: Sequence[str] = (),
    lacking: Sequence[str] = (),
    elsewhere: Sequence[Hit] = (),
    project: str = "",
) -> str:
    """The text for an agent; compact stays within ``budget`` estimated tokens."""
    full = detail == "full"
    out: list[str] = []
    if len(query) > QUERY_CHARS:
        query = query[: QUERY_CHARS - 1] + "…"
    if status == "not_found":
        where = f" for project {project}" if elsewhere else " in memory"
        out.append(f'NOT FOUND · nothing{where} answers "{query}".')
        if unknown:
            out.append(
                f"Nothing stored mentions {', '.join(repr(u) for u in unknown)}. "
                "Say you do not know rather than guess."
            )
        elif elsewhere:
            out.append(
                "Other projects hold these memories; if you mention them, say whose they "
                "are and that they may not apply here:"
            )
            for hit in elsewhere:
                line = f"- {_one_line(hit)} · project {hit.project}"
                if estimate_tokens("\n".join([*out, line])) > budget:
                    break
                out.append(line)
        elif lacking:
            about = f" about {', '.join(repr(s) for s in stray)}" if stray else ""
            out.append(
                f"Memories{about} were found, but none holds {' or '.join(lacking)}. "
                "Say you do not know rather than guess."
            )
        elif stray:
            out.append(
                f"The closest memory shares only {', '.join(repr(s) for s in stray)} with the "
                "question, which is not enough to answer it. Say you do not know."
            )
        return "\n".join(out)
    if status == "ambiguous":
        out.append(
            f'AMBIGUOUS · "{query}" matches {len(results)} different memories about equally well '
            f"(confidence {confidence:.2f}). Do not guess: ask the user which one, or search "
            'again with clue="…" (a place, a date, a project, a surname).'
        )
        for number, hit in enumerate(results, 1):
            line = f"{number}. [{_date(hit)}] {_where(hit)} — "
            text = " ".join((hit.excerpt or hit.title).split())
            line += text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"
            line += f" ({hit.id})"
            if estimate_tokens("\n".join([*out, line])) > budget:
                break
            out.append(line)
            if full:
                out.extend(_full_lines(hit))
        return "\n".join(out)
    best = results[0]
    head = f"FOUND · confidence {confidence:.2f}"
    if best.project:
        head += f" · from project {best.project}"
    out.append(head)
    if confidence < LOW_CONFIDENCE and len(results) > 1:
        out.append(
            "Low confidence: the question's words only partly match. Check the other "
            "matches below before relying on the first one."
        )
    out.append(f"Best memory [{_date(best)}] {_where(best)} ({best.id}):")
    if best.passage is not None:
        p = best.passage
        out.append(
            f"(long memory: lines {p.start_line}-{p.end_line} of {p.total_lines}; "
            f"ask for the rest with its id)"
        )
    out.append(best.content.rstrip() or best.excerpt)
    if full:
        out.extend(_full_lines(best))
    for notice in notices:
        line = f"NOTE: {notice}"
        if estimate_tokens("\n".join([*out, line])) > budget:
            break
        out.append(line)
    others = list(results[1:])
    if others:
        out.append("Other matches:" if not broad else "Other memories about it:")
        for hit in others:
            lines = [f"- {_one_line(hit)}"]
            if full:
                lines.extend(_full_lines(hit))
            if estimate_tokens("\n".join([*out, *lines])) > budget:
                break
            out.extend(lines)
        if out[-1] in ("Other matches:", "Other memories about it:"):
            out.pop()
    return "\n".join(out)
