"""Shaping an answer: hits with their text and place in the tree, and the call's result.

Reads what a search shows and nothing else: the leaves' texts (once per call), their
tree paths and the titles above them (one catalog query each), then renders the
:class:`~ihmt_navigator._render.Answer` once into a :class:`SearchResult`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ihmt_navigator._evidence import evidence_passage
from ihmt_navigator._query import Change, Query
from ihmt_navigator._question import asked_for
from ihmt_navigator._records import Hit, SearchResult
from ihmt_navigator._render import Answer, best_passage, render
from ihmt_store import (
    Candidate,
    CorruptFileError,
    Entry,
    Leaf,
    LeafNotFoundError,
    Store,
    estimate_tokens,
)

__all__ = ["EVIDENCE_SHARE", "build_hits", "finish", "leaf_text", "prefetch", "read_once"]

EVIDENCE_SHARE = 1 / 3
"""A leaf longer than this share of the compact budget is shown as its evidence (the
lines and sentences holding the question's words, with their dates and speakers) within
that share: the answer's head, its notes and one line per other match fit in the rest,
and the whole leaf is one read away by its id."""


def read_once(store: Store, q: Query, entry: Entry) -> Leaf:
    """A leaf, read from its file once per call (from the entry the call already holds).

    Raises:
        LeafNotFoundError, CorruptFileError: as :meth:`ihmt_store.Store.read_leaf` (a
            file it will not read is tried again when asked again).
    """
    leaf = q.leaves.get(entry.id)
    if leaf is None:
        leaf = q.leaves[entry.id] = store.read_leaf(entry)
    return leaf


def leaf_text(store: Store, q: Query, entry: Entry) -> str:
    """A leaf's text, read once per call (from the entry the call already holds); "" for
    a file the store will not read (a damaged header…), which then has no hit."""
    text = q.texts.get(entry.id)
    if text is None:
        try:
            text = read_once(store, q, entry).text
        except (CorruptFileError, LeafNotFoundError):
            q.unreadable.add(entry.id)
            text = ""
        q.texts[entry.id] = text
    return text


def prefetch(store: Store, q: Query, cands: Sequence[Candidate]) -> None:
    """Fetch the tree paths of the hits about to be built, in one query."""
    wanted = [c.entry.id for c in cands if c.entry.id not in q.paths]
    if wanted:
        q.paths.update(store.paths_to(wanted))


def build_hits(
    store: Store, q: Query, cands: Sequence[Candidate], scores: dict[str, float]
) -> list[Hit]:
    """Hits with their text (long leaves as their best passage), best first; the
    titles above them come from one catalog query."""
    budget = store.config.compact_tokens
    shapes = tuple(shape for _, shape in asked_for(q.text))
    prefetch(store, q, cands)
    texts = [leaf_text(store, q, c.entry) for c in cands]
    if q.unreadable:
        kept = [(c, t) for c, t in zip(cands, texts, strict=True) if c.entry.id not in q.unreadable]
        cands, texts = [c for c, _ in kept], [t for _, t in kept]
    paths = [tuple(q.paths.get(c.entry.id) or store.path_to(c.entry.id)) for c in cands]
    above = store.entries(list(dict.fromkeys(i for path in paths for i in path[:-1])))
    return [
        _hit(
            cand,
            scores[cand.entry.id],
            text=text,
            path=path,
            titles=tuple(above[i].title for i in path[:-1] if i in above),
            q=q,
            shapes=shapes,
            budget=budget,
            change=q.correction_of(cand.entry),
        )
        for cand, text, path in zip(cands, texts, paths, strict=True)
    ]


def finish(store: Store, q: Query, answer: Answer) -> SearchResult:
    """The result of a call: ``answer`` rendered once, and what the call read."""
    compact = render(
        answer,
        asked=f"{q.text} + {q.clue}" if q.clue else q.text,
        options=q.options,
        budget=store.config.compact_tokens,
    )
    io, before = store.io, q.before
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
        signals=dict(answer.signals),
    )


def _hit(
    cand: Candidate,
    score: float,
    *,
    text: str,
    path: tuple[str, ...],
    titles: tuple[str, ...],
    q: Query,
    shapes: Sequence[re.Pattern[str]],
    budget: int,
    change: Change | None,
) -> Hit:
    """A hit with its text, or its evidence when the text is long for ``budget`` (for
    code, or when no sentence holds any of the question, a match by meaning: the window
    of lines holding the most of it), flagged OUTDATED by ``change`` (the correction the
    question is about, or None)."""
    entry = cand.entry
    passage = None
    content = text
    share = int(budget * EVIDENCE_SHARE)
    if estimate_tokens(text) > share:
        # Code reads as a whole: a window of its lines, not sentences picked from it.
        code = entry.data_type.upper() == "CODE"
        picked = None if code else evidence_passage(text, q.weights, shapes, share)
        passage = picked or best_passage(text, q.q_terms, share)
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
        outdated=change is not None,
        outdated_by=change.by if change else None,
        corrected_on=(change.date or None) if change else None,
        changed=change.what if change else "",
        passage=passage,
    )
