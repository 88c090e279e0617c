"""Search: the :class:`Navigator` façade, and one search call read top to bottom.

:meth:`Navigator.search` validates the options once, reads the question
(:mod:`ihmt_navigator._question`), then runs four steps: *gather* BM25's candidates
(:mod:`ihmt_navigator._candidates`) into the call's context (:mod:`ihmt_navigator._query`),
*fuse* them with meaning when the semantic layer is on (:mod:`ihmt_navigator._fusion`),
*decide* found, ambiguous or not found (:mod:`ihmt_navigator._decide`), and *shape* the
answer's hits and notices (:mod:`ihmt_navigator._hits`, :mod:`ihmt_navigator._corrections`,
:mod:`ihmt_navigator._broad`), rendered once (:func:`~ihmt_navigator._render.render`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ihmt_navigator._aliases import with_aliases
from ihmt_navigator._broad import branch_notice, broad_branch
from ihmt_navigator._candidates import admitted, gather, in_named_projects
from ihmt_navigator._changes import judge
from ihmt_navigator._corrections import (
    earlier_statements,
    find_corrected,
    mark_earlier,
    outdated_notices,
    restored_against,
)
from ihmt_navigator._decide import Found, decide
from ihmt_navigator._fusion import with_meaning
from ihmt_navigator._hits import build_hits, finish
from ihmt_navigator._query import Query, new_query, started
from ihmt_navigator._question import question_terms
from ihmt_navigator._records import CorrectionMatch, SearchOptions, SearchResult
from ihmt_navigator._render import Answer
from ihmt_navigator._semantic import Similarities, VectorIndex
from ihmt_store import FieldWeights, Store, terms

logger = logging.getLogger(__name__)

__all__ = ["ClueProvider", "Navigator"]

ClueProvider = Callable[[SearchResult], "str | None"]
"""Given an AMBIGUOUS result, return a clue (or None/empty to stop)."""


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
        return find_corrected(self.store, self.weights, words, project=project, limit=limit)

    # ------------------------------------------------------------------ the pipeline
    def _search(self, query: str, clue: str | None, options: SearchOptions) -> SearchResult:
        if not options.alternatives:
            return finish(self.store, *self._answer(query, clue, options))
        return self._search_phrasings(query, clue, options)

    def _search_phrasings(
        self, query: str, clue: str | None, options: SearchOptions
    ) -> SearchResult:
        """The question, and when it is NOT FOUND its other phrasings: the surest of
        their answers (FOUND over AMBIGUOUS, then by confidence, the earlier on a tie)
        answers, saying which phrasing it answered; its reads count every phrasing's.
        A question that is FOUND or AMBIGUOUS as asked answers as asked: another
        phrasing never turns an AMBIGUOUS answer into a guess."""
        single = replace(options, alternatives=())
        first = self._answer(query, clue, single)
        if first[1].status != "not_found":
            return finish(self.store, *first)
        phrasings = [p for p in options.alternatives if p != query]
        tried = [self._answer(phrasing, clue, single) for phrasing in phrasings]
        order = {"found": 2, "ambiguous": 1, "not_found": 0}
        best = max(
            range(len(tried)),
            key=lambda i: (order[tried[i][1].status], tried[i][1].confidence, -i),
            default=None,
        )
        if best is None or tried[best][1].status == "not_found":
            q, answer = first
        else:
            q, answer = tried[best]
            said = f'answered for the phrasing "{phrasings[best]}" of "{query}"'
            answer = replace(answer, notices=(*answer.notices, said))
        result = finish(self.store, replace(q, before=first[0].before), answer)
        return replace(result, query=query)

    def _answer(self, query: str, clue: str | None, options: SearchOptions) -> tuple[Query, Answer]:
        """One phrasing's decision, before it is rendered."""
        store = self.store
        start = started(store)
        span, q_terms = question_terms(query)
        c_terms = [t for t in dict.fromkeys(terms(clue or "")) if t not in q_terms]
        if not q_terms:
            q = new_query(store, query, options, start, clue=clue, q_terms=q_terms, c_terms=c_terms)
            return q, Answer(status="not_found")
        filtered = bool(options.as_of) or options.scope != "all"
        # Gather: BM25's candidates, and the call's context once they are in.
        found = gather(store, self.weights, q_terms + c_terms, options, filtered=filtered)
        q = new_query(store, query, options, start, clue=clue, q_terms=q_terms, c_terms=c_terms)
        leaves, scores, lexical_best = admitted(q, found)
        # Fuse: with the semantic layer, meaning's nearest join and the scores blend.
        sims = self._similarities(f"{q.text} {q.clue}" if q.clue else q.text)
        leaves, scores, nearest = with_meaning(
            store, self.weights, q, leaves, scores, lexical_best, filtered, sims
        )
        agree = nearest is None or (
            lexical_best is not None and nearest.entry.id == lexical_best.entry.id
        )
        if not leaves:
            return q, Answer(status="not_found")
        # A project the question names: its memories hold its name.
        leaves = in_named_projects(q, leaves)
        # What the store learned from its memories: a project called by what it is, an
        # abbreviation spelled out.
        q, leaves = with_aliases(store, q, leaves, scores)
        named = {c.entry.id: c for c in leaves}
        if lexical_best is not None:
            lexical_best = named.get(lexical_best.entry.id, lexical_best)
        if nearest is not None:
            nearest = named.get(nearest.entry.id, nearest)
        # Which corrections the question is about: a memory corrected in another of its
        # facts answers as current.
        judge(store, q, [c.entry for c in sorted(leaves, key=lambda c: -scores[c.entry.id])])
        # Decide: found, ambiguous or not found.
        decision = decide(
            store,
            q,
            span,
            leaves,
            scores,
            lexical_best=lexical_best,
            nearest=nearest,
            agree=agree,
            meaning=sims,
        )
        if isinstance(decision, Answer):
            return q, decision
        # Shape: the found memories' hits, with their notices.
        return q, _shape(store, q, decision)

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


def _shape(store: Store, q: Query, found: Found) -> Answer:
    """A FOUND answer: the first memories' hits, a notice for each correction (recorded,
    or inferred from a newer statement of the same thing), and for a broad question the
    branch they sit under."""
    ranked, scores, broad = found.ranked, found.scores, found.broad
    hits = build_hits(store, q, ranked[: q.options.limit], scores)
    if not hits:  # every file found was one the store will not read (it says why)
        return Answer(status="not_found")
    notices = outdated_notices(store, q, hits)
    earlier = set() if broad else earlier_statements(q, ranked, scores, found.tie_floor)
    earlier |= found.earlier
    earlier -= restored_against(store, ranked[0].entry.id, earlier)
    if earlier and hits[0].id == ranked[0].entry.id:
        hits, probable = mark_earlier(hits, earlier)
        notices += probable
    branch = broad_branch(store, q, ranked[:20], scores) if broad else None
    if branch is not None:
        notices.append(branch_notice(branch))
    return Answer(
        status="found",
        hits=tuple(hits),
        notices=tuple(notices),
        coverage=found.coverage,
        margin=found.margin,
        broad=broad,
        signals=found.signals.shown(),
    )


def _options(options: SearchOptions | None, loose: dict[str, Any]) -> SearchOptions:
    """``options`` with the fields given as keywords on top (validated once, here)."""
    if options is None:
        return SearchOptions(**loose)
    return replace(options, **loose) if loose else options
