"""Broad answers: a question about a subject ("what do we know about falcon?").

Answered by the set of memories about it, current ones first (:func:`broad_order`), with
a note naming the branch of the tree most of them sit under (:func:`broad_branch`,
:func:`branch_notice`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ihmt_navigator._hits import prefetch
from ihmt_navigator._query import Query
from ihmt_store import Candidate, Entry, Store, one_line

__all__ = ["BROAD_MIN_LEAVES", "branch_notice", "broad_branch", "broad_order"]

BROAD_MIN_LEAVES = 3


def broad_order(
    q: Query, ranked: Sequence[Candidate], found: Sequence[Candidate]
) -> list[Candidate]:
    """A broad question is answered by the set of memories about its subject: current
    ones first, those that themselves hold most of the subject ahead (a correction
    that does not name the subject comes after), history last."""
    own = {c.entry.id: (q.coverage(c), c.score) for c in found}
    current = [c for c in ranked if not q.is_outdated(c.entry)]
    current.sort(key=lambda c: own.get(c.entry.id, (0.0, 0.0)), reverse=True)
    history = [c for c in ranked if q.is_outdated(c.entry)]
    return current + history


def broad_branch(
    store: Store,
    q: Query,
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
    prefetch(store, q, good)
    counts: dict[str, int] = {}
    for cand in good:
        for ancestor in q.paths.get(cand.entry.id, [])[:-1]:
            counts[ancestor] = counts.get(ancestor, 0) + 1
    entries = store.entries(list(counts))

    def rank(node: str) -> tuple[int, int, int]:
        entry = entries[node]
        return (counts[node], -entry.layer, -entry.leaf_count)

    node = max((n for n in counts if n in entries), key=rank, default=None)
    if node is None or counts[node] < BROAD_MIN_LEAVES:
        return None
    return entries[node]


def branch_notice(branch: Entry) -> str:
    """The note naming the branch a broad answer's memories sit under (one a bulk ingest
    grouped and has not summarised yet says so)."""
    head = (
        f'These memories sit under "{one_line(branch.title, 80)}" ({branch.id}), '
        f"{branch.leaf_count} memories in all"
    )
    if not branch.excerpt:
        return f"{head}; its summary is not written yet"
    return f"{head}: {one_line(branch.excerpt, 160)}"
