"""How a memory matches the question, and how two memories compare.

The small predicates every rule of an answer reads: a stray match (:func:`is_stray`),
a rival the question does not tell apart from the best (:func:`indistinct`), two
memories about the same subject or stating the same thing, a project the question
names, a word no memory holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache

from ihmt_navigator._query import Query, rarity
from ihmt_store import Candidate, Entry, terms

__all__ = [
    "NAMESAKE_POOL",
    "NEAR_DUPLICATE",
    "SAME_SUBJECT",
    "TIE_MISSING",
    "indistinct",
    "is_stray",
    "linked",
    "name_pieces",
    "names_project",
    "same_statement",
    "same_subject",
    "timestamp_of",
    "unseen",
]

NEAR_DUPLICATE = 0.7
"""Jaccard of term sets above which two memories are about the same thing."""
TIE_MISSING = 0.1
"""A rival ties only if it lacks at most this share (by weight) of what the best matched."""
NAMESAKE_POOL = 10
SAME_SUBJECT = 0.5
"""Share of the shorter memory's words that a newer one must also hold to be a later
statement about the same thing (and so come first when both answer equally well)."""


def is_stray(
    q: Query,
    best: Candidate,
    coverage: float,
    identifiers: Sequence[tuple[str, ...]] = (),
    credited: frozenset[str] = frozenset(),
) -> bool:
    """NOT FOUND: the best memory shares too little, or only one common word. A memory
    holding an identifier the question names (DEC-11878, cache-dove-20) is never a stray
    match. ``credited``: words asking for a value that the memory holds (the "IP" of a
    memory holding 10.0.4.17), counted as shared once it shares a word of its own."""
    matched = [t for t in best.matched if t in q.q_terms]
    if any(all(t in best.matched for t in ident) for ident in identifiers):
        return False
    if not matched or coverage < 0.3:
        return True
    matched += [t for t in credited if t in q.q_terms and t not in matched]
    if len(matched) == 1 and len(q.q_terms) >= 3:
        return q.weights[matched[0]] < 0.5 * rarity(q.total, 1)
    return False


_CAMEL_WORD = re.compile(r"\w*[a-z][A-Z]\w*")
"""A word with a capital after a small letter: a product's or a code name ("PostgreSQL",
"JavaScript", "OpenSearch")."""


def name_pieces(text: str) -> frozenset[str]:
    """The terms ``text`` holds only as a piece of such a name ("script" of "JavaScript",
    "open" of "OpenSearch"): the index splits names so that "Postgre" finds
    "PostgreSQL", but a memory saying "JavaScript" does not use the word "script"."""
    whole = _CAMEL_WORD.sub(lambda m: m.group().lower(), text)
    return frozenset(terms(text)) - frozenset(terms(whole))


def same_subject(a: Candidate, b: Candidate) -> bool:
    """One corrected the other, or their excerpts share most of their words."""
    if linked(a.entry, b.entry):
        return True
    ta, tb = _excerpt_terms(a.entry.excerpt), _excerpt_terms(b.entry.excerpt)
    if not ta or not tb:
        return False
    return len(ta & tb) / len(ta | tb) >= NEAR_DUPLICATE


def same_statement(
    q: Query,
    first: Candidate,
    other: Candidate,
    scores: dict[str, float],
    tie_floor: float,
) -> bool:
    """``other`` is another current memory of ``first``'s project that answers about as
    well and shares half the shorter one's words: a statement about the same thing."""
    return (
        other is not first
        and scores[other.entry.id] >= tie_floor
        and other.entry.project == first.entry.project
        and not q.is_outdated(other.entry)
        and _overlap(first.entry.excerpt, other.entry.excerpt) >= SAME_SUBJECT
    )


@lru_cache(maxsize=4096)
def _excerpt_terms(excerpt: str) -> frozenset[str]:
    return frozenset(terms(excerpt))


def timestamp_of(entry: Entry) -> float:
    """A memory's time in seconds (0 when it cannot be read), to order memories by it."""
    try:
        return datetime.fromisoformat(entry.timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def indistinct(best: Candidate, rival: Candidate, weights: dict[str, float]) -> bool:
    """True when the question gives nothing that prefers ``best`` over ``rival``."""
    mine = {t for t in best.matched if t in weights}
    total = sum(weights[t] for t in mine)
    missing = sum(weights[t] for t in mine - set(rival.matched))
    return total > 0 and missing <= TIE_MISSING * total


def unseen(groups: Sequence[tuple[str, ...]], df: dict[str, int]) -> bool:
    """True when a word of the question is in no memory at all (``df``: the document
    frequencies of the question's terms)."""
    return any(all(df.get(t, 0) == 0 for t in group) for group in groups)


def linked(a: Entry, b: Entry) -> bool:
    """True when one of the two corrected the other."""
    return a.outdated_by == b.id or b.outdated_by == a.id


def _overlap(a: str, b: str) -> float:
    """Shared terms over the terms of the shorter text."""
    ta, tb = _excerpt_terms(a), _excerpt_terms(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def names_project(project: str, q_terms: Sequence[str]) -> bool:
    """True when the question names ``project`` (every word of its name)."""
    words = terms(project)
    return bool(words) and all(t in q_terms for t in words)
