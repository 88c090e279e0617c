"""Fusing words and meaning: one score per candidate from BM25 and the sentence encoder.

Without the semantic layer (or when it fails) the words' scores stand. With it, the
memories nearest in meaning join the candidates and every score becomes a weighted sum
of the two views, meaning weighing less the more of the question BM25's best holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from ihmt_navigator._candidates import with_nearest
from ihmt_navigator._query import Query
from ihmt_navigator._semantic import Similarities
from ihmt_store import Candidate, FieldWeights, Store

__all__ = ["ADAPT", "SEMANTIC_WEIGHT", "with_meaning"]

SEMANTIC_WEIGHT = 0.5
"""Fused score: ``w · cos′ + (1 − w) · bm25′``, the cosine min-max scaled (from the lowest
of any memory to the best candidate's) and BM25 divided by the best (a weighted sum:
see the CHANGELOG for how it was chosen). ``w`` is this weight times the share of the
question that BM25's best memory does *not* hold (see ``ADAPT``)."""
ADAPT = 1.0
"""How much BM25's own coverage of the question lowers the weight of meaning: a memory
holding every rare word asked is not outranked by one that only reads alike."""


def with_meaning(
    store: Store,
    field_weights: FieldWeights,
    q: Query,
    leaves: list[Candidate],
    scores: dict[str, float],
    lexical_best: Candidate | None,
    filtered: bool,
    sims: Similarities | None,
) -> tuple[list[Candidate], dict[str, float], Candidate | None]:
    """With the semantic layer (``sims``: meaning's view of the question), the candidates
    joined by the memories nearest in meaning, their fused scores, and the nearest
    candidate; without it (or when it failed), the words' candidates and scores, and
    None."""
    if sims is None or not len(sims):
        return leaves, scores, None
    leaves = with_nearest(store, field_weights, q, leaves, sims, filtered)
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


def _fused(
    q: Query, leaves: Sequence[Candidate], sims: Similarities, share: float
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
