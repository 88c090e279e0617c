"""One search call's context: the question read once, the store's figures fetched once.

:class:`Query` holds what every step of a search reads (the question's terms, their
:func:`rarity`, the options, the call's caches) and the rules that apply to a single
memory against it: the filters, the clue and project factors, the share of the question
it holds. :func:`started` and :func:`new_query` make one per call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ihmt_navigator._question import word_groups
from ihmt_navigator._records import SearchOptions
from ihmt_store import Candidate, Entry, IOStats, Leaf, Store

__all__ = [
    "CLUE_BOTH",
    "CLUE_ONE",
    "Change",
    "IN_PERIOD",
    "OTHER_PROJECT",
    "Query",
    "Start",
    "is_test_path",
    "new_query",
    "rarity",
    "started",
]

CLUE_BOTH = 1.6
IN_PERIOD = CLUE_BOTH
"""A memory dated in the period the question names ("in April 2023") matches it as a
memory holding the clue does: the question's time is a clue about which memory."""
CLUE_ONE = 0.7
OTHER_PROJECT = 0.6
"""Score factor for a memory of another project when a current project is given."""


_TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$|"
    r"Tests?\.(java|kt|cs|swift|php)$",
)


def is_test_path(source: str) -> bool:
    """True when ``source`` looks like a test file (``tests/``, ``test_x.py``, ``x_test.go``…)."""
    return bool(_TEST_PATH.search(source.replace("\\", "/")))


def rarity(total: int, df: int) -> float:
    """How much a word found in ``df`` of the store's ``total`` leaves weighs when the
    navigator judges an answer: how much of the question a memory holds (coverage), a
    stray match, a name the store has never seen, a word that points at a project.

    ``log(1 + (total - df + 0.5) / (df + 0.5))``, the always-positive IDF of Lucene's
    BM25. It is deliberately not the index's :func:`ihmt_store.idf` (FTS5's, which ranks
    the candidates): that one floors a word found in half the items or more at almost
    nothing, while here such a word still counts for a little of the question. A word
    found nowhere (``df`` 0) weighs ``rarity(total, 0)``, one found once
    ``rarity(total, 1)``.
    """
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


class Change(NamedTuple):
    """One correction a memory received (:mod:`ihmt_navigator._changes` reads them)."""

    by: str
    """The memory that corrected it."""
    date: str
    """When (canonical timestamp)."""
    what: str
    """What changed, as a phrase that a date can follow ("rack changed to B7", or
    '"the rack is B3" changed' for a ``replaces`` hint), or "" when it is not known."""
    words: frozenset[str]
    """The terms of what changed (its attributes, old values and hint); empty: unknown."""


class Start(NamedTuple):
    """Taken when a call starts, before the store is asked anything else."""

    total: int
    """Leaves in the store (at least 1)."""
    before: IOStats
    """The store's reads so far."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    """One search call: the question read once, the store's figures fetched once, the
    options, and this call's caches. Made when a call starts and dropped when it
    returns: the :class:`~ihmt_navigator.Navigator` itself keeps only its
    configuration."""

    text: str
    """The question as asked."""
    clue: str | None
    options: SearchOptions
    q_terms: list[str]
    """The question's terms (without the words of how it is asked, or its period)."""
    c_terms: list[str] = field(default_factory=list)
    """The clue's terms that are not the question's."""
    total: int
    """Leaves in the store when the call started (at least 1)."""
    df: dict[str, int]
    """How many items hold each of ``q_terms``: fetched once per call."""
    weights: dict[str, float]
    """The :func:`rarity` of each of ``q_terms``."""
    groups: list[tuple[str, ...]]
    """The question's words, each as its terms (:func:`word_groups`)."""
    before: IOStats
    """The store's reads when the call started."""
    paths: dict[str, list[str]] = field(default_factory=dict)
    """Tree paths fetched in this call."""
    texts: dict[str, str] = field(default_factory=dict)
    """Leaf texts read in this call."""
    leaves: dict[str, Leaf] = field(default_factory=dict)
    """Leaves read in this call: a leaf file is read once per call, whichever step
    (the corrections' judge, the decision, the hits) asks for it first."""
    unreadable: set[str] = field(default_factory=set)
    """Leaves whose file the store refused to read in this call (the store says why, once,
    in its notices): they are left out of the hits."""
    corrections: dict[str, Change | None] = field(default_factory=dict)
    """For each corrected memory judged in this call, the correction the question is
    about, or None: none is, and the memory answers it as current."""
    surnames: dict[str, bool] = field(default_factory=dict)
    """Whether the memories use a word only in names, read once per call: the namesakes
    rule and the namesakes signal ask it of the same words."""

    @property
    def as_of(self) -> str | None:
        """The cutoff: a :class:`SearchOptions` record's ``as_of`` is canonical once made."""
        as_of = self.options.as_of
        assert as_of is None or isinstance(as_of, str)
        return as_of

    def coverage(self, cand: Candidate, credited: frozenset[str] = frozenset()) -> float:
        """How much of the question ``cand`` holds (:func:`_coverage`), counting the
        ``credited`` terms as held."""
        return _coverage(cand, self.groups, self.weights, credited)

    def correction_of(self, entry: Entry) -> Change | None:
        """The correction of ``entry`` this question is about (its latest when it was not
        judged in this call), or None."""
        if entry.outdated_by is None:
            return None
        if entry.id in self.corrections:
            return self.corrections[entry.id]
        return Change(entry.outdated_by, entry.outdated_on or "", "", frozenset())

    def is_outdated(self, entry: Entry) -> bool:
        """Corrected in what the question asks (by the cutoff, when there is one)."""
        change = self.correction_of(entry)
        if change is None:
            return False
        as_of = self.as_of
        return as_of is None or change.date <= as_of

    def admits(self, entry: Entry) -> bool:
        """A memory dated by the cutoff, and of the scope asked for (search ranks leaves
        only)."""
        as_of = self.as_of
        if as_of is not None and entry.timestamp > as_of:
            return False
        scope = self.options.scope
        return scope == "all" or (scope == "main") != is_test_path(entry.source)

    def passes(self, entry: Entry) -> bool:
        """The filters BM25's query applies, checked on a catalog entry."""
        if entry.kind != "leaf":
            return False
        options = self.options
        domain = options.domain
        if domain is not None and not (
            entry.domain == domain or entry.domain.startswith(domain + ".")
        ):
            return False
        if options.project is not None and entry.project != options.project:
            return False
        if options.path_prefix is not None and not entry.source.startswith(options.path_prefix):
            return False
        return self.admits(entry)

    def factor(self, cand: Candidate) -> float:
        """What a candidate's score is multiplied by: a clue it holds (or not), another
        project's memory when a current project is given."""
        score = 1.0
        if self.c_terms:
            has_q = any(t in self.q_terms for t in cand.matched)
            has_c = any(t in self.c_terms for t in cand.matched)
            score *= CLUE_BOTH if has_q and has_c else CLUE_ONE
        prefer = self.options.prefer_project
        if prefer and cand.entry.project not in ("", prefer):
            score *= OTHER_PROJECT
        return score


def started(store: Store) -> Start:
    """The store's size (its leaves: every word weight is the leaves' statistic) and
    its reads so far, when a call starts."""
    return Start(max(store.count("leaf"), 1), store.io.snapshot())


def new_query(
    store: Store,
    text: str,
    options: SearchOptions,
    start: Start,
    *,
    clue: str | None = None,
    q_terms: list[str],
    c_terms: list[str] | None = None,
) -> Query:
    """The call's context, once the candidates are in: the document frequencies of
    the question's terms are fetched here, once."""
    total, before = start
    df = store.document_frequencies(q_terms) if q_terms else {}
    return Query(
        text=text,
        clue=clue,
        options=options,
        q_terms=q_terms,
        c_terms=c_terms or [],
        total=total,
        df=df,
        weights={t: rarity(total, df.get(t, 0)) for t in q_terms},
        groups=word_groups(text, q_terms),
        before=before,
    )


def _coverage(
    cand: Candidate,
    groups: Sequence[tuple[str, ...]],
    weights: dict[str, float],
    credited: frozenset[str] = frozenset(),
) -> float:
    """The share of the question's words (weighted by rarity) that ``cand`` holds: a word
    counts once, for the rarest of its terms the memory holds ("DATA-47142" is not held by
    a memory that only says "data")."""
    matched = set(cand.matched) | credited
    total = got = 0.0
    for group in groups:
        total += max(weights.get(t, 0.0) for t in group)
        got += max((weights.get(t, 0.0) for t in group if t in matched), default=0.0)
    return min(1.0, got / total) if total > 0 else 0.0
