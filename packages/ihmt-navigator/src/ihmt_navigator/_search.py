"""Search: find exactly with the store's full-text index, then answer with the tree.

One call reads in one sitting: :meth:`Navigator.search` validates the options once,
reads the question (:mod:`ihmt_navigator._question`), asks the store for candidates,
fetches the store's figures once into a :class:`_Query` (the call's context), ranks,
decides (found, ambiguous or not found) into an :class:`~ihmt_navigator._render.Answer`,
and renders that once (:func:`~ihmt_navigator._render.render`).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from ihmt_navigator._question import (
    ANSWER_TYPES,
    QUERY_FLUFF,
    asked_for,
    bare_names,
    identifiers,
    is_broad,
    language_of,
    name_terms,
    name_words,
    question_terms,
    word_groups,
)
from ihmt_navigator._records import (
    CorrectionMatch,
    Hit,
    SearchOptions,
    SearchResult,
)
from ihmt_navigator._render import Answer, best_passage, render
from ihmt_navigator._semantic import Similarities, VectorIndex
from ihmt_store import (
    Candidate,
    Entry,
    FieldWeights,
    IOStats,
    Store,
    estimate_tokens,
    one_line,
    terms,
)

logger = logging.getLogger(__name__)

__all__ = ["ClueProvider", "Navigator", "is_test_path"]

ClueProvider = Callable[[SearchResult], "str | None"]
"""Given an AMBIGUOUS result, return a clue (or None/empty to stop)."""

CANDIDATES = 30
COMMON_TERMS = 0.05
"""A question word found in more than this share of the memories (and in at least 1,000 of
them) ranks only memories that also hold a rarer word of it (it still counts in their
scores): ranking every match of such words would be most of a search's time in a large
store (see the CHANGELOG for the measurements)."""
CLUE_BOTH = 1.6
IN_PERIOD = CLUE_BOTH
"""A memory dated in the period the question names ("in April 2023") matches it as a
memory holding the clue does: the question's time is a clue about which memory."""
CLUE_ONE = 0.7
OTHER_PROJECT = 0.6
"""Score factor for a memory of another project when a current project is given."""
NEAR_DUPLICATE = 0.7
"""Jaccard of term sets above which two memories are about the same thing."""
BROAD_MIN_LEAVES = 3
TIE_MISSING = 0.1
"""A rival ties only if it lacks at most this share (by weight) of what the best matched."""
NAMESAKE_POOL = 10
SEMANTIC_POOL = 30
"""With the semantic layer, the memories nearest in meaning that join BM25's candidates
(four times as many when a filter may drop some). Every memory passing the filters is
scored; these are the ones that can still reach the answer."""
SEMANTIC_WEIGHT = 0.5
"""Fused score: ``w · cos′ + (1 − w) · bm25′``, the cosine min-max scaled (from the lowest
of any memory to the best candidate's) and BM25 divided by the best (a weighted sum:
see the CHANGELOG for how it was chosen). ``w`` is this weight times the share of the
question that BM25's best memory does *not* hold (see ``ADAPT``)."""
ADAPT = 1.0
"""How much BM25's own coverage of the question lowers the weight of meaning: a memory
holding every rare word asked is not outranked by one that only reads alike."""
DISAGREE = 0.8
"""Confidence factor when BM25 and the embeddings put different memories first: agreement
is right far more often than either alone."""
CROSS_LINGUAL_COVERAGE = 0.3
"""The word coverage credited to a memory that meaning found for a question in another
language (the least that is not a stray match: the answer shows as LOW CONFIDENCE)."""
SAME_SUBJECT = 0.5
"""Share of the shorter memory's words that a newer one must also hold to be a later
statement about the same thing (and so come first when both answer equally well)."""


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


class _Start(NamedTuple):
    """Taken when a call starts, before the store is asked anything else."""

    total: int
    """Leaves in the store (at least 1)."""
    before: IOStats
    """The store's reads so far."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Query:
    """One search call: the question read once, the store's figures fetched once, the
    options, and this call's caches. Made when a call starts and dropped when it
    returns: the :class:`Navigator` itself keeps only its configuration."""

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

    @property
    def as_of(self) -> str | None:
        """The cutoff: a :class:`SearchOptions` record's ``as_of`` is canonical once made."""
        as_of = self.options.as_of
        assert as_of is None or isinstance(as_of, str)
        return as_of

    def coverage(self, cand: Candidate) -> float:
        """How much of the question ``cand`` holds (:func:`_coverage`)."""
        return _coverage(cand, self.groups, self.weights)

    def is_outdated(self, entry: Entry) -> bool:
        """Corrected (by the cutoff, when there is one)."""
        if entry.outdated_by is None:
            return False
        as_of = self.as_of
        return as_of is None or (entry.outdated_on or "") <= as_of

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


class Navigator:
    """Searches a store and answers with the tree.

    Args:
        store: an open :class:`ihmt_store.Store`.
        weights: BM25 field weights (title, keywords, tags, text).
        vectors: the semantic layer, or None: words only.
    """

    def __init__(
        self,
        store: Store,
        *,
        weights: FieldWeights | None = None,
        vectors: VectorIndex | None = None,
    ) -> None:
        self.store = store
        self.weights = weights or FieldWeights()
        self.vectors = vectors
        """The semantic layer (:mod:`ihmt_navigator._semantic`), or None: words only."""

    # ------------------------------------------------------------------ public
    def search(
        self,
        query: str,
        options: SearchOptions | None = None,
        *,
        clue: str | None = None,
        **loose: Any,
    ) -> SearchResult:
        """Find the memory that answers ``query`` and say how sure the answer is.

        Args:
            options: the filters and preferences (by default: no filter, ``compact``,
                five results).
            clue: what tells apart the candidates of an AMBIGUOUS answer (a place, a
                date, a surname).
            loose: fields of :class:`SearchOptions` as keywords (``detail="full"``,
                ``as_of=…``), on top of ``options``.

        Raises:
            ValueError: ``query`` is empty.
            InvalidFilterError: a bad ``as_of``, ``scope`` or ``detail``.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError("the query is empty: say what to look for")
        return self._search(query, clue or None, _options(options, loose))

    def ask(
        self,
        query: str,
        clue_provider: ClueProvider,
        options: SearchOptions | None = None,
        *,
        clue: str | None = None,
        max_rounds: int | None = None,
        search: Callable[[str | None], SearchResult] | None = None,
        **loose: Any,
    ) -> SearchResult:
        """Search, and while the answer is AMBIGUOUS ask ``clue_provider`` for a clue.

        The one clue loop (the CLI's ``ihmt ask`` and ``Memory.ask`` run it). Clues
        accumulate: each round searches with all of them joined. The loop stops after
        ``max_rounds`` clues (the store's ``max_clue_rounds`` by default), or when the
        provider returns nothing (None, or only white space). An ambiguous answer is
        never turned into a confident one without a clue that separates the
        candidates.

        Args:
            clue: a first clue given up front: the first search uses it, and it is one
                round more than ``max_rounds``.
            search: what each round runs, given the clues so far joined (None before
                any): by default this navigator's :meth:`search` of ``query`` with
                ``options`` (a composition passes its own, which may do more around it).
            options, loose: as for :meth:`search`; with ``search``, that search's own
                options are the ones that count.

        Returns:
            The last round's result, with ``clues`` (every clue used, in order) and
            ``clue_rounds`` (how many).
        """
        run: Callable[[str | None], SearchResult]
        if search is None:
            chosen = _options(options, loose)
            run = lambda joined: self.search(query, chosen, clue=joined)  # noqa: E731
        else:
            run = search
        rounds = max_rounds if max_rounds is not None else self.store.config.max_clue_rounds
        if clue:
            rounds += 1  # a first clue given up front is a round of its own
        clues = [clue.strip()] if clue and clue.strip() else []
        result = run(" ".join(clues) or None)
        while result.status == "ambiguous" and len(clues) < rounds:
            given = clue_provider(result)
            if not given or not given.strip():
                break
            clues.append(given.strip())
            result = run(" ".join(clues))
        return replace(result, clue_rounds=len(clues), clues=tuple(clues))

    def find_corrected(
        self, words: str, *, project: str | None = None, limit: int = 5
    ) -> CorrectionMatch:
        """The earlier memories that ``words`` (a ``replaces`` hint) describes.

        Every memory of ``project`` is a candidate whatever its status: a memory can be
        corrected more than once. The one that holds most of the hint (by rarity) wins,
        BM25 breaking ties. Memories that come close hold either the same words (then
        the hint cannot tell them apart: ``ambiguous``, mark none, since a wrong mark
        hides a true memory) or each a different part of it (then the hint describes
        all of them: each is a target). ``not_found`` when nothing holds more than a
        stray word of the hint, with the nearest memories as candidates.

        Raises:
            ValueError: ``words`` is empty.
        """
        if not isinstance(words, str) or not words.strip():
            raise ValueError("the hint is empty: say which memory is corrected")
        start = self._started()
        q_terms = [t for t in dict.fromkeys(terms(words)) if t not in QUERY_FLUFF]
        found = (
            self.store.candidates(
                q_terms, limit=CANDIDATES, weights=self.weights, kinds=("leaf",), project=project
            )
            if q_terms
            else []
        )
        if not found:
            return CorrectionMatch(status="not_found")
        q = self._query(words, SearchOptions(project=project, limit=limit), start, q_terms=q_terms)
        weights = q.weights
        scores = {c.entry.id: c.score for c in found}
        cover = {c.entry.id: q.coverage(c) for c in found}
        # Equal fit, the current statement first: a hint that fits a memory and the one
        # that corrected it equally describes what is true now.
        ranked = sorted(
            found,
            key=lambda c: (
                -round(cover[c.entry.id], 6),
                c.entry.outdated_by is not None,
                -scores[c.entry.id],
                c.entry.id,
            ),
        )
        best = ranked[0]
        top = cover[best.entry.id]
        if self._is_stray(q, best, top):
            hits = self._hits(q, ranked[:limit], scores)
            return CorrectionMatch(status="not_found", candidates=tuple(hits), coverage=top)
        s1 = scores[best.entry.id]
        close = [
            c
            for c in ranked[1:]
            if not _linked(best.entry, c.entry)
            and cover[c.entry.id] >= top - TIE_MISSING
            and scores[c.entry.id] >= s1 * (1 - self.store.config.ambiguity_margin)
        ]
        apart = all(
            not _indistinct(a, b, weights) and not _indistinct(b, a, weights)
            for i, a in enumerate([best, *close])
            for b in close[i:]
            if a is not b
        )
        targets = [best, *close] if apart else [best]
        hits = self._hits(q, [*targets, *(c for c in ranked[:limit] if c not in targets)], scores)
        if close and not apart:
            return CorrectionMatch(status="ambiguous", candidates=tuple(hits), coverage=top)
        union = tuple(dict.fromkeys(t for c in targets for t in c.matched))
        together = q.coverage(replace(best, matched=union))
        return CorrectionMatch(
            status="found",
            targets=tuple(hits[: len(targets)]),
            candidates=tuple(hits[len(targets) :]),
            coverage=round(together, 3),
        )

    # ------------------------------------------------------------------ the call's context
    def _started(self) -> _Start:
        """The store's size (its leaves: every word weight is the leaves' statistic) and
        its reads so far, when a call starts."""
        return _Start(max(self.store.count("leaf"), 1), self.store.io.snapshot())

    def _query(
        self,
        text: str,
        options: SearchOptions,
        start: _Start,
        *,
        clue: str | None = None,
        q_terms: list[str],
        c_terms: list[str] | None = None,
    ) -> _Query:
        """The call's context, once the candidates are in: the document frequencies of
        the question's terms are fetched here, once."""
        total, before = start
        df = self.store.document_frequencies(q_terms) if q_terms else {}
        return _Query(
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

    # ------------------------------------------------------------------ the pipeline
    def _search(self, query: str, clue: str | None, options: SearchOptions) -> SearchResult:
        store = self.store
        config = store.config
        limit = options.limit
        start = self._started()
        span, q_terms = question_terms(query)
        c_terms = [t for t in dict.fromkeys(terms(clue or "")) if t not in q_terms]
        if not q_terms:
            q = self._query(query, options, start, clue=clue, q_terms=q_terms, c_terms=c_terms)
            return self._finish(q, Answer(status="not_found"))
        filtered = bool(options.as_of) or options.scope != "all"
        # Leaves only: what answers is a memory, and a branch summary (each machine's own
        # grouping) must not take a leaf's place among the candidates.
        found = store.candidates(
            q_terms + c_terms,
            limit=CANDIDATES * (4 if filtered else 1),
            weights=self.weights,
            kinds=("leaf",),
            domain=options.domain,
            project=options.project,
            source_prefix=options.path_prefix,
            common=COMMON_TERMS,
        )
        q = self._query(query, options, start, clue=clue, q_terms=q_terms, c_terms=c_terms)
        leaves = [c for c in found if q.admits(c.entry)]
        scores = {c.entry.id: c.score * q.factor(c) for c in leaves}
        # Whether to answer at all is the words' decision (cosines do not tell a question
        # the memory cannot answer from one it can): it is taken on BM25's best.
        lexical_best = max(
            leaves, key=lambda c: (scores[c.entry.id], _ts(c.entry), c.entry.id), default=None
        )
        leaves, scores, nearest = self._with_meaning(q, leaves, scores, lexical_best, filtered)
        agree = nearest is None or (
            lexical_best is not None and nearest.entry.id == lexical_best.entry.id
        )
        if not leaves:
            return self._finish(q, Answer(status="not_found"))
        if span is not None and q.as_of is None:
            for cand in leaves:
                if span[0] <= cand.entry.timestamp[:10] <= span[1]:
                    scores[cand.entry.id] *= IN_PERIOD
        elsewhere: set[str] = set()
        if options.prefer_project:
            elsewhere = self._in_scope_first(q, leaves, scores)
        ranked = sorted(leaves, key=lambda c: (-scores[c.entry.id], -_ts(c.entry), c.entry.id))
        ranked = self._corrections_first(q, ranked, scores)
        best = ranked[0]
        judged = max(
            dict.fromkeys(c for c in (best, lexical_best) if c is not None), key=q.coverage
        )
        coverage = q.coverage(judged)
        shared = tuple(t for t in judged.matched if t in q_terms)

        unknown = self._unknown_names(q)
        if unknown:
            return self._finish(q, Answer(status="not_found", coverage=coverage, unknown=unknown))
        stray = self._is_stray(q, judged, coverage, identifiers(query))
        # Meaning's first memory is the answer (or was, until this one corrected it).
        picked = nearest is not None and (nearest is best or _linked(nearest.entry, best.entry))
        if stray and picked and self._across_languages(q, best):
            # Asked in one language about a memory in another: sharing no words is no sign
            # that it does not answer. Meaning picked it (names were checked above): say
            # so with a low confidence instead of NOT FOUND.
            stray, agree = False, False
            coverage = max(coverage, CROSS_LINGUAL_COVERAGE)
        elif stray and picked and agree and shared and not _unseen(q.groups, q.df):
            # Words and meaning pick the same memory, which holds some of the question's
            # words, and every other word of the question is one the memory knows: a
            # paraphrase, not a stray match. Answer, with the low confidence of the words'
            # coverage. (A word no memory holds says the question is about something
            # never stored.)
            stray = False
        if best.entry.id in elsewhere and not stray:
            # Asked in a project, answered only by another project's memory about something
            # the question does not name: that is not this project's answer. Say so, and
            # show what the other projects hold.
            others = [c for c in ranked[:limit] if c.entry.id in elsewhere]
            shown = tuple(self._hits(q, others[:3], scores))
            return self._finish(q, Answer(status="not_found", coverage=coverage, elsewhere=shown))
        if stray:
            return self._finish(q, Answer(status="not_found", coverage=coverage, stray=shared))
        s1 = scores[best.entry.id]
        tie_floor = s1 * (1 - config.ambiguity_margin)
        rivals = self._rivals(q, best, ranked, scores, tie_floor)
        s2 = scores[rivals[0].entry.id] if rivals else 0.0
        margin = max(0.0, min(1.0, (s1 - s2) / s1)) if s1 > 0 else 0.0
        if not agree:
            coverage *= DISAGREE
        broad = is_broad(query)

        # Ask only when the candidates are about different referents the question does not
        # tell apart: several people sharing the name it uses, or projects that each answer
        # it while the asker named none. Many memories about one thing are not ambiguity.
        # A clue that no candidate holds does not tell them apart.
        separated = any(t in c_terms for c in leaves for t in c.matched)
        if not separated:
            split = self._namesakes(q, ranked)
            if len(split) < 2 and not broad:
                split = self._project_split(q, best, ranked, scores)
            if len(split) >= 2:
                among = tuple(self._hits(q, split[:8], scores))
                ambiguous = Answer(status="ambiguous", hits=among, coverage=coverage, margin=margin)
                return self._finish(q, ambiguous)

        if broad:
            ranked = self._broad_order(q, ranked, leaves)
        else:
            ranked = self._newer_among_ties(q, best, ranked, scores, tie_floor)
            asked = asked_for(query)
            if asked:
                holder = self._holder(q, ranked[:limit], asked)
                if holder is None:
                    lacking = tuple(name for name, _ in asked)
                    return self._finish(
                        q,
                        Answer(
                            status="not_found", coverage=coverage, lacking=lacking, stray=shared
                        ),
                    )
                ranked = [holder, *(c for c in ranked if c is not holder)]
        hits = self._hits(q, ranked[:limit], scores)
        notices = self._notices(q, hits)
        earlier = set() if broad else self._earlier_statements(q, ranked, scores, tie_floor)
        if earlier:
            first = hits[0]
            hits = [
                replace(h, outdated=True, outdated_by=first.id) if h.id in earlier else h
                for h in hits
            ]
            notices += [
                f'PROBABLY OUTDATED: "{one_line(h.excerpt, 100)}" ({h.timestamp[:10]}, {h.id}) '
                f'says the same thing as the newer "{one_line(first.excerpt, 100)}" '
                f"({first.timestamp[:10]}, {first.id}), which answers first. No correction was "
                "recorded: if the old one still holds, say both."
                for h in hits
                if h.id in earlier
            ]
        branch = self._broad_branch(q, ranked[:20], scores) if broad else None
        if branch is not None:
            notices.append(
                f'These memories sit under "{one_line(branch.title, 80)}" ({branch.id}), '
                f"{branch.leaf_count} memories in all: {one_line(branch.excerpt, 160)}"
            )
        found_it = Answer(
            status="found",
            hits=tuple(hits),
            notices=tuple(notices),
            coverage=coverage,
            margin=margin,
            broad=broad,
        )
        return self._finish(q, found_it)

    # ------------------------------------------------------------------ steps
    def _similarities(self, text: str) -> Similarities | None:
        """Meaning's view of the question, or None: without the layer, or when it fails
        (a full disk, a damaged vectors file), search goes on by words."""
        if self.vectors is None:
            return None
        try:
            return self.vectors.query(text)
        except Exception as exc:  # noqa: BLE001 (meaning is a bonus; words still answer)
            logger.warning("searching by words only: the vectors failed (%s)", exc)
            return None

    def _with_meaning(
        self,
        q: _Query,
        leaves: list[Candidate],
        scores: dict[str, float],
        lexical_best: Candidate | None,
        filtered: bool,
    ) -> tuple[list[Candidate], dict[str, float], Candidate | None]:
        """With the semantic layer, the candidates joined by the memories nearest in
        meaning, their fused scores, and the nearest candidate; without it (or when it
        fails), the words' candidates and scores, and None."""
        sims = self._similarities(f"{q.text} {q.clue}" if q.clue else q.text)
        if sims is None or not len(sims):
            return leaves, scores, None
        leaves = self._with_nearest(q, leaves, sims, filtered)
        # The more of the question BM25's best memory holds, the less meaning has to add:
        # a memory holding every rare word asked is not outranked by one that only reads
        # alike.
        explained = q.coverage(lexical_best) if lexical_best else 0.0
        share = SEMANTIC_WEIGHT * (1 - ADAPT * explained)
        scores = _fused(q, leaves, sims, share)
        if not leaves:
            return leaves, scores, None
        nearest = max(leaves, key=lambda c: (sims.of(c.entry.id) or -1.0, c.entry.id))
        return leaves, scores, nearest

    def _with_nearest(
        self, q: _Query, leaves: list[Candidate], sims: Similarities, filtered: bool
    ) -> list[Candidate]:
        """BM25's candidates and the memories nearest in meaning that pass the filters;
        those get their BM25 score too (zero when they share no word)."""
        have = {c.entry.id for c in leaves}
        pool = SEMANTIC_POOL * (4 if filtered or q.options.project is not None else 1)
        near = [item for item, _ in sims.top(pool) if item not in have]
        if not near:
            return leaves
        entries = self.store.entries(near)
        keep = [entries[item] for item in near if item in entries and q.passes(entries[item])][
            :SEMANTIC_POOL
        ]
        if not keep:
            return leaves
        lexical = {
            c.entry.id: c
            for c in self.store.candidates(
                q.q_terms + q.c_terms,
                limit=len(keep),
                weights=self.weights,
                kinds=("leaf",),
                within=[e.id for e in keep],
            )
        }
        return [
            *leaves,
            *(lexical.get(e.id) or Candidate(entry=e, score=0.0, matched=()) for e in keep),
        ]

    def _across_languages(self, q: _Query, cand: Candidate) -> bool:
        """True when the question and the memory are clearly in different languages."""
        asked = language_of(q.text)
        if not asked:
            return False
        written = language_of(self._text(q, cand.entry))
        return bool(written) and written != asked

    def _corrections_first(
        self, q: _Query, ranked: list[Candidate], scores: dict[str, float]
    ) -> list[Candidate]:
        """Move each OUTDATED leaf's current version (following the chain) right above it."""
        store = self.store
        by_id = {c.entry.id: c for c in ranked}
        out: list[Candidate] = []
        placed: set[str] = set()
        for cand in ranked:
            if cand.entry.id in placed:
                continue
            chain: list[Candidate] = []
            current = cand
            seen = {cand.entry.id}
            while q.is_outdated(current.entry) and len(chain) < 10:
                nxt_id = current.entry.outdated_by
                assert nxt_id is not None
                if nxt_id in seen:
                    break
                seen.add(nxt_id)
                nxt = by_id.get(nxt_id)
                if nxt is None:
                    entry = store.entry(nxt_id)
                    if entry is None or not q.admits(entry):
                        break
                    nxt = Candidate(entry=entry, score=cand.score, matched=())
                # The current version answers what its outdated version matched.
                inherited = tuple(dict.fromkeys((*nxt.matched, *current.matched)))
                nxt = Candidate(entry=nxt.entry, score=nxt.score, matched=inherited)
                by_id[nxt_id] = nxt
                chain.append(nxt)
                current = nxt
            for newer in reversed(chain):
                if newer.entry.id not in placed:
                    scores[newer.entry.id] = max(
                        scores.get(newer.entry.id, 0.0), scores[cand.entry.id]
                    )
                    out.append(newer)
                    placed.add(newer.entry.id)
            out.append(cand)
            placed.add(cand.entry.id)
        return out

    def _is_stray(
        self,
        q: _Query,
        best: Candidate,
        coverage: float,
        identifiers: Sequence[tuple[str, ...]] = (),
    ) -> bool:
        """NOT FOUND: the best memory shares too little, or only one common word. A memory
        holding an identifier the question names (DEC-11878) is never a stray match."""
        matched = [t for t in best.matched if t in q.q_terms]
        if any(all(t in best.matched for t in ident) for ident in identifiers):
            return False
        if not matched or coverage < 0.3:
            return True
        if len(matched) == 1 and len(q.q_terms) >= 3:
            return q.weights[matched[0]] < 0.5 * rarity(q.total, 1)
        return False

    def _rivals(
        self,
        q: _Query,
        best: Candidate,
        ranked: Sequence[Candidate],
        scores: dict[str, float],
        tie_floor: float,
    ) -> list[Candidate]:
        """Current memories about another subject that come close to the best one.

        An OUTDATED memory is history, not a rival; a near-duplicate of the best is the
        same subject. Stops at the first rival below the tie floor (enough for the margin).
        """
        out: list[Candidate] = []
        for cand in ranked[1:]:
            if q.is_outdated(cand.entry) or _same_subject(best, cand):
                continue
            out.append(cand)
            if scores[cand.entry.id] < tie_floor:
                break
        return out

    def _unknown_names(self, q: _Query) -> tuple[str, ...]:
        """Names in the question (an identifier, a capitalised word inside a sentence, a
        number) of which the store holds no trace at all: the memory cannot be about them."""
        never = rarity(q.total, 0)
        weights = q.weights
        found: list[str] = []
        for word in name_words(q.text):
            if any(cue.fullmatch(word) for _, cue, _ in ANSWER_TYPES):
                continue  # "URL" or "IP" says what is asked for, not about what
            parts = [t for t in terms(word) if t in weights]
            if not parts:
                continue
            numbered = [t for t in parts if any(ch.isdigit() for ch in t)]
            # An identifier's number is what names it: PLAT-15826 is unknown even though
            # PLAT is everywhere.
            if all(weights[t] >= never for t in numbered or parts):
                found.append(word)
        return tuple(found)

    def _namesakes(self, q: _Query, ranked: Sequence[Candidate]) -> list[Candidate]:
        """Candidates in which a bare name of the question belongs to different people.

        "Luis" asked alone, while good matches say "Luis Carrasco" and "Luis Sato", has
        several referents; "Luis Sato" in the question has one.
        """
        names = bare_names(q.text)
        if not names:
            return []
        # Every candidate that holds the name counts, however well it matches the rest:
        # "Greta's email" is a question about one of the Gretas even if only one of them
        # has an email stored.
        pool = [c for c in ranked[:NAMESAKE_POOL] if not q.is_outdated(c.entry)]
        for name in names:
            mention = re.compile(rf"\b{re.escape(name)}\b")
            follower = re.compile(rf"\b{re.escape(name)}\s+([A-ZÁÉÍÓÚÑ][\w'-]+)")
            people: set[str] = set()
            holders: list[Candidate] = []
            for cand in pool:
                if not mention.search(cand.entry.excerpt):
                    continue
                holders.append(cand)
                match = follower.search(cand.entry.excerpt)
                if match:
                    people.add(match.group(1).removesuffix("'s").removesuffix("’s"))
            if len(people) >= 2:
                return holders
        return []

    def _in_scope_first(
        self, q: _Query, leaves: Sequence[Candidate], scores: dict[str, float]
    ) -> set[str]:
        """The current project's memories and global ones rank above other projects'.

        A project the question names counts as current (asked in falcon, "what runs
        heron's staging?" is about heron). Another project's memory comes before an
        in-scope one that answers only when the question points at it: it holds a name
        of the question, or a word no other memory holds, that nothing in scope holds
        ("the osprey staging host", asked in falcon, is heron's); even then, not before
        in-scope memories that hold as much of the question.

        Returns:
            The other projects' memories the question does not point at: they may be
            listed, but they do not answer a question asked in this project.
        """
        q_terms, weights = q.q_terms, q.weights
        named = {p for p in {c.entry.project for c in leaves} if _names(p, q_terms)}

        def in_scope(cand: Candidate) -> bool:
            project = cand.entry.project
            return project in ("", q.options.prefer_project) or project in named

        inside = [c for c in leaves if in_scope(c)]
        held_inside = {t for c in inside for t in c.matched}
        cover = {c.entry.id: q.coverage(c) for c in leaves}
        answering = [
            scores[c.entry.id] for c in inside if not self._is_stray(q, c, cover[c.entry.id])
        ]
        unique = rarity(q.total, 1)  # the weight of a word one memory holds
        names = set(name_terms(q.text))
        covered = [(cover[c.entry.id], scores[c.entry.id]) for c in inside]
        unpointed: set[str] = set()
        for cand in leaves:
            if in_scope(cand):
                continue
            score = scores[cand.entry.id]
            pointed = any(
                t in q_terms
                and t not in held_inside
                and (t in names or weights.get(t, 0.0) >= unique - 1e-9)
                for t in cand.matched
            )
            if not pointed:
                unpointed.add(cand.entry.id)
            if pointed or not answering:
                mine = cover[cand.entry.id]
                cap = min((s for cov, s in covered if cov >= mine - 1e-9), default=None)
            else:
                cap = min(answering)
            scores[cand.entry.id] = score if cap is None else min(score, cap * 0.999)
        return unpointed

    def _project_split(
        self, q: _Query, best: Candidate, ranked: Sequence[Candidate], scores: dict[str, float]
    ) -> list[Candidate]:
        """Memories of different projects that answer the question equally well, when the
        asker is in no project and names none: the best of each project."""
        options, weights = q.options, q.weights
        if options.prefer_project or options.project or not best.entry.project:
            return []
        if _names(best.entry.project, list(weights)):
            return []
        per_project: dict[str, Candidate] = {}
        for cand in ranked:
            project = cand.entry.project
            if not project or project in per_project or q.is_outdated(cand.entry):
                continue
            if scores[cand.entry.id] < 0.5 * scores[best.entry.id] or not _indistinct(
                best, cand, weights
            ):
                continue
            if cand is not best and _same_subject(best, cand):
                continue
            per_project[project] = cand
        return list(per_project.values()) if len(per_project) >= 2 else []

    def _newer_among_ties(
        self,
        q: _Query,
        best: Candidate,
        ranked: list[Candidate],
        scores: dict[str, float],
        tie_floor: float,
    ) -> list[Candidate]:
        """Among current memories of one scope that answer the question equally well, the
        newest comes first: the later of two statements about one thing is the one that
        still holds (a correction saved without ``replaces``)."""
        if q.is_outdated(best.entry):
            return ranked
        ties = [
            c
            for c in ranked[:NAMESAKE_POOL]
            if _same_statement(q, best, c, scores, tie_floor)
            and set(best.matched) <= set(c.matched)
        ]
        newest = max(ties, key=lambda c: c.entry.timestamp, default=None)
        if newest is None or newest.entry.timestamp <= best.entry.timestamp:
            return ranked
        return [newest, *(c for c in ranked if c is not newest)]

    def _text(self, q: _Query, entry: Entry) -> str:
        """A leaf's text, read once per call (from the entry the call already holds)."""
        text = q.texts.get(entry.id)
        if text is None:
            text = q.texts[entry.id] = self.store.read_leaf(entry).text
        return text

    def _holder(
        self,
        q: _Query,
        window: Sequence[Candidate],
        asked: Sequence[tuple[str, re.Pattern[str]]],
    ) -> Candidate | None:
        """The best memory that holds every value the question asks for (an email, a
        port…): the first one, or a current one that matched as much of the question;
        None when none holds them (the memories are about the subject, not about what is
        asked)."""
        first = window[0]
        for cand in window:
            current = cand is first or (
                not q.is_outdated(cand.entry) and _indistinct(first, cand, q.weights)
            )
            text = self._text(q, cand.entry)
            if current and all(shape.search(text) for _, shape in asked):
                return cand
        return None

    def _earlier_statements(
        self,
        q: _Query,
        ranked: Sequence[Candidate],
        scores: dict[str, float],
        tie_floor: float,
    ) -> set[str]:
        """Older current memories that state what the first one states (same project,
        same question words, half the shorter one's words shared): it corrects them
        although nobody said so. Inferred for this answer only; nothing is recorded."""
        first = ranked[0]
        if q.is_outdated(first.entry):
            return set()
        return {
            c.entry.id
            for c in ranked[1:NAMESAKE_POOL]
            if _same_statement(q, first, c, scores, tie_floor)
            and c.entry.timestamp < first.entry.timestamp
            and set(c.matched) == set(first.matched)
        }

    def _broad_order(
        self, q: _Query, ranked: Sequence[Candidate], found: Sequence[Candidate]
    ) -> list[Candidate]:
        """A broad question is answered by the set of memories about its subject: current
        ones first, those that themselves hold most of the subject ahead (a correction
        that does not name the subject comes after), history last."""
        own = {c.entry.id: (q.coverage(c), c.score) for c in found}
        current = [c for c in ranked if not q.is_outdated(c.entry)]
        current.sort(key=lambda c: own.get(c.entry.id, (0.0, 0.0)), reverse=True)
        history = [c for c in ranked if q.is_outdated(c.entry)]
        return current + history

    def _broad_branch(
        self,
        q: _Query,
        ranked: Sequence[Candidate],
        scores: dict[str, float],
    ) -> Entry | None:
        """The branch that holds most of the good matches of a broad question, if any
        holds at least ``BROAD_MIN_LEAVES`` of them."""
        if not ranked:
            return None
        top = scores[ranked[0].entry.id]
        good = [c for c in ranked if scores[c.entry.id] >= 0.5 * top]
        if len(good) < BROAD_MIN_LEAVES:
            return None
        self._prefetch(q, good)
        counts: dict[str, int] = {}
        for cand in good:
            for ancestor in q.paths.get(cand.entry.id, [])[:-1]:
                counts[ancestor] = counts.get(ancestor, 0) + 1
        entries = self.store.entries(list(counts))

        def rank(node: str) -> tuple[int, int, int]:
            entry = entries[node]
            return (counts[node], -entry.layer, -entry.leaf_count)

        node = max((n for n in counts if n in entries), key=rank, default=None)
        if node is None or counts[node] < BROAD_MIN_LEAVES:
            return None
        return entries[node]

    # ------------------------------------------------------------------ building hits
    def _prefetch(self, q: _Query, cands: Sequence[Candidate]) -> None:
        """Fetch the tree paths of the hits about to be built, in one query."""
        wanted = [c.entry.id for c in cands if c.entry.id not in q.paths]
        if wanted:
            q.paths.update(self.store.paths_to(wanted))

    def _hits(self, q: _Query, cands: Sequence[Candidate], scores: dict[str, float]) -> list[Hit]:
        """Hits with their text (long leaves as their best passage), best first; the
        titles above them come from one catalog query."""
        budget = self.store.config.compact_tokens
        self._prefetch(q, cands)
        texts = [self._text(q, c.entry) for c in cands]
        paths = [tuple(q.paths.get(c.entry.id) or self.store.path_to(c.entry.id)) for c in cands]
        above = self.store.entries(list(dict.fromkeys(i for path in paths for i in path[:-1])))
        return [
            _hit(
                cand,
                scores[cand.entry.id],
                text=text,
                path=path,
                titles=tuple(above[i].title for i in path[:-1] if i in above),
                q_terms=q.q_terms,
                budget=budget,
            )
            for cand, text, path in zip(cands, texts, paths, strict=True)
        ]

    def _notices(self, q: _Query, hits: Sequence[Hit]) -> list[str]:
        """An OUTDATED notice for each corrected hit (by the cutoff), naming the memory
        that corrected it (the correcting entries in one catalog query)."""
        as_of = q.as_of
        corrected = [
            hit
            for hit in hits
            if hit.outdated
            and hit.outdated_by is not None
            and (as_of is None or (hit.corrected_on or "") <= as_of)
        ]
        newer = self.store.entries([h.outdated_by or "" for h in corrected]) if corrected else {}
        notices: list[str] = []
        for hit in corrected:
            by = newer.get(hit.outdated_by or "")
            newer_text = one_line(by.excerpt if by else "", 120)
            notices.append(
                f'OUTDATED: "{one_line(hit.excerpt, 100)}" ({hit.timestamp[:10]}, {hit.id}) was '
                f'corrected on {(hit.corrected_on or "")[:10]} by "{newer_text}" '
                f"({hit.outdated_by}). Answer with the current version and relay the correction."
            )
        return notices

    def _finish(self, q: _Query, answer: Answer) -> SearchResult:
        """The result of a call: ``answer`` rendered once, and what the call read."""
        compact = render(
            answer,
            asked=f"{q.text} + {q.clue}" if q.clue else q.text,
            options=q.options,
            budget=self.store.config.compact_tokens,
        )
        io, before = self.store.io, q.before
        return SearchResult(
            query=q.text,
            clue=q.clue,
            status=answer.status,
            results=answer.hits,
            notices=answer.notices,
            confidence=answer.confidence,
            coverage=round(answer.coverage, 3),
            margin=round(answer.margin, 3),
            compact=compact,
            tokens=estimate_tokens(compact),
            files_read=io.files_read - before.files_read,
            bytes_read=io.bytes_read - before.bytes_read,
            node_reads=io.branch_reads - before.branch_reads,
            leaf_reads=io.leaf_reads - before.leaf_reads,
            broad=answer.broad,
        )


def _options(options: SearchOptions | None, loose: dict[str, Any]) -> SearchOptions:
    """``options`` with the fields given as keywords on top (validated once, here)."""
    if options is None:
        return SearchOptions(**loose)
    return replace(options, **loose) if loose else options


def _hit(
    cand: Candidate,
    score: float,
    *,
    text: str,
    path: tuple[str, ...],
    titles: tuple[str, ...],
    q_terms: Sequence[str],
    budget: int,
) -> Hit:
    """A hit with its text, or its best passage when the text is long for ``budget``."""
    entry = cand.entry
    passage = None
    content = text
    if estimate_tokens(text) > budget * 0.6:
        passage = best_passage(text, q_terms, int(budget * 0.55))
        content = passage.text
    return Hit(
        id=entry.id,
        kind=entry.kind,
        content=content,
        title=entry.title,
        excerpt=entry.excerpt,
        timestamp=entry.timestamp,
        domain=entry.domain,
        project=entry.project,
        source=entry.source,
        path=path,
        path_titles=titles,
        score=round(score, 6),
        matched=cand.matched,
        outdated=entry.outdated_by is not None,
        outdated_by=entry.outdated_by,
        corrected_on=entry.outdated_on,
        passage=passage,
    )


def _fused(
    q: _Query, leaves: Sequence[Candidate], sims: Similarities, share: float
) -> dict[str, float]:
    """``share · cos′ + (1 − share) · bm25′`` over the candidates, then the same factors
    as BM25's scores get (a clue, another project)."""
    cos = {c.entry.id: sims.of(c.entry.id) for c in leaves}
    known = [v for v in cos.values() if v is not None]
    # Scaled from the lowest cosine of any memory, so that no candidate scores zero.
    low, high = (sims.lowest, max(known)) if known else (0.0, 0.0)
    span = high - low
    raw = {c.entry.id: c.score for c in leaves}
    top = max(raw.values(), default=0.0)
    out: dict[str, float] = {}
    for cand in leaves:
        item = cand.entry.id
        factor = q.factor(cand)
        c = cos[item]
        cos_part = (c - low) / span if c is not None and span > 0 else 0.0
        bm25_part = raw[item] / top if top > 0 else 0.0
        out[item] = factor * (share * cos_part + (1 - share) * bm25_part)
    return out


def _same_subject(a: Candidate, b: Candidate) -> bool:
    """One corrected the other, or their excerpts share most of their words."""
    if _linked(a.entry, b.entry):
        return True
    ta, tb = _excerpt_terms(a.entry.excerpt), _excerpt_terms(b.entry.excerpt)
    if not ta or not tb:
        return False
    return len(ta & tb) / len(ta | tb) >= NEAR_DUPLICATE


def _same_statement(
    q: _Query,
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


def _ts(entry: Entry) -> float:
    try:
        return datetime.fromisoformat(entry.timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _indistinct(best: Candidate, rival: Candidate, weights: dict[str, float]) -> bool:
    """True when the question gives nothing that prefers ``best`` over ``rival``."""
    mine = {t for t in best.matched if t in weights}
    total = sum(weights[t] for t in mine)
    missing = sum(weights[t] for t in mine - set(rival.matched))
    return total > 0 and missing <= TIE_MISSING * total


def _coverage(
    cand: Candidate, groups: Sequence[tuple[str, ...]], weights: dict[str, float]
) -> float:
    """The share of the question's words (weighted by rarity) that ``cand`` holds: a word
    counts once, for the rarest of its terms the memory holds ("DATA-47142" is not held by
    a memory that only says "data")."""
    matched = set(cand.matched)
    total = got = 0.0
    for group in groups:
        total += max(weights.get(t, 0.0) for t in group)
        got += max((weights.get(t, 0.0) for t in group if t in matched), default=0.0)
    return min(1.0, got / total) if total > 0 else 0.0


def _unseen(groups: Sequence[tuple[str, ...]], df: dict[str, int]) -> bool:
    """True when a word of the question is in no memory at all (``df``: the document
    frequencies of the question's terms)."""
    return any(all(df.get(t, 0) == 0 for t in group) for group in groups)


def _linked(a: Entry, b: Entry) -> bool:
    """True when one of the two corrected the other."""
    return a.outdated_by == b.id or b.outdated_by == a.id


def _overlap(a: str, b: str) -> float:
    """Shared terms over the terms of the shorter text."""
    ta, tb = _excerpt_terms(a), _excerpt_terms(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def _names(project: str, q_terms: Sequence[str]) -> bool:
    """True when the question names ``project`` (every word of its name)."""
    words = terms(project)
    return bool(words) and all(t in q_terms for t in words)
