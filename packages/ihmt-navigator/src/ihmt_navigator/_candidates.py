"""Gathering a search's candidates: BM25's from the store's index, and meaning's nearest.

:func:`gather` asks the store's full-text index for the leaves that hold the question's
(and the clue's) words, :func:`admitted` keeps those the cutoff and scope admit with their
clue and project factors, and :func:`with_nearest` adds the memories nearest in meaning
when the semantic layer is on.
"""

from __future__ import annotations

from dataclasses import replace

from ihmt_navigator._match import timestamp_of
from ihmt_navigator._query import Query
from ihmt_navigator._records import SearchOptions
from ihmt_navigator._semantic import Similarities
from ihmt_store import Candidate, FieldWeights, Store, terms

__all__ = [
    "CANDIDATES",
    "COMMON_TERMS",
    "SEMANTIC_POOL",
    "admitted",
    "gather",
    "in_named_projects",
    "with_nearest",
]

CANDIDATES = 30
COMMON_TERMS = 0.05
"""A question word found in more than this share of the memories (and in at least 1,000 of
them) ranks only memories that also hold a rarer word of it (it still counts in their
scores): ranking every match of such words would be most of a search's time in a large
store (see the CHANGELOG for the measurements)."""
SEMANTIC_POOL = 30
"""With the semantic layer, the memories nearest in meaning that join BM25's candidates
(four times as many when a filter may drop some). Every memory passing the filters is
scored; these are the ones that can still reach the answer."""


def gather(
    store: Store,
    field_weights: FieldWeights,
    words: list[str],
    options: SearchOptions,
    *,
    filtered: bool,
) -> list[Candidate]:
    """BM25's candidates for ``words`` (the question's terms, then the clue's) under the
    filters the index applies itself."""
    # Leaves only: what answers is a memory, and a branch summary (each machine's own
    # grouping) must not take a leaf's place among the candidates.
    return store.candidates(
        words,
        limit=CANDIDATES * (4 if filtered else 1),
        weights=field_weights,
        kinds=("leaf",),
        domain=options.domain,
        project=options.project,
        source_prefix=options.path_prefix,
        common=COMMON_TERMS,
    )


def admitted(
    q: Query, found: list[Candidate]
) -> tuple[list[Candidate], dict[str, float], Candidate | None]:
    """The candidates the cutoff and scope admit, their scores by words (with the clue and
    project factors), and the best of them."""
    leaves = [c for c in found if q.admits(c.entry)]
    scores = {c.entry.id: c.score * q.factor(c) for c in leaves}
    # Whether to answer at all is the words' decision (cosines do not tell a question
    # the memory cannot answer from one it can): it is taken on BM25's best.
    lexical_best = max(
        leaves, key=lambda c: (scores[c.entry.id], timestamp_of(c.entry), c.entry.id), default=None
    )
    return leaves, scores, lexical_best


def with_nearest(
    store: Store,
    field_weights: FieldWeights,
    q: Query,
    leaves: list[Candidate],
    sims: Similarities,
    filtered: bool,
) -> list[Candidate]:
    """BM25's candidates and the memories nearest in meaning that pass the filters;
    those get their BM25 score too (zero when they share no word)."""
    have = {c.entry.id for c in leaves}
    pool = SEMANTIC_POOL * (4 if filtered or q.options.project is not None else 1)
    near = [item for item, _ in sims.top(pool) if item not in have]
    if not near:
        return leaves
    entries = store.entries(near)
    keep = [entries[item] for item in near if item in entries and q.passes(entries[item])][
        :SEMANTIC_POOL
    ]
    if not keep:
        return leaves
    lexical = {
        c.entry.id: c
        for c in store.candidates(
            q.q_terms + q.c_terms,
            limit=len(keep),
            weights=field_weights,
            kinds=("leaf",),
            within=[e.id for e in keep],
        )
    }
    return [
        *leaves,
        *(lexical.get(e.id) or Candidate(entry=e, score=0.0, matched=()) for e in keep),
    ]


def in_named_projects(q: Query, leaves: list[Candidate]) -> list[Candidate]:
    """``leaves``, each memory of a project the question names holding that name: a
    memory saved in a project is about it, whether its words say so or not ("use pnpm,
    never npm", said in orbit, answers "which package manager does orbit use?")."""
    named: dict[str, tuple[str, ...]] = {}
    for project in {c.entry.project for c in leaves if c.entry.project}:
        words = tuple(terms(project))
        if words and all(t in q.q_terms for t in words):
            named[project] = words
    if not named:
        return leaves
    out = []
    for cand in leaves:
        extra = tuple(t for t in named.get(cand.entry.project, ()) if t not in cand.matched)
        out.append(replace(cand, matched=cand.matched + extra) if extra else cand)
    return out
