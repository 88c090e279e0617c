"""The same memories give the same answer, whatever tree a machine built (issue #18).

Two synced machines hold the same leaves but group them into branches in the order the
leaves reached each of them. Everything an answer says comes from what is replicated
(the leaves, their notes): the verdict, the memories and their order, the confidence,
the OUTDATED notices, where each memory sits (its domain and project). Only two parts
of an answer are the machine's own, by design: the tree path of ``detail="full"`` and a
broad question's NOTE naming the branch that gathers its memories.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ihmt_navigator import Consolidator, Navigator, SearchResult
from ihmt_store import Correction, Store
from ihmt_store.testing import make_leaf

Note = tuple[str, str, str]

EXTRA: list[Note] = [
    ("infra", f"2025-0{1 + n % 9}-1{n % 10}", f"The falcon worker {n} drains queue q{n} nightly.")
    for n in range(14)
]
"""More memories of one domain, so that the two machines' groupings differ."""

QUESTIONS = (
    "why did we pick Pulumi for the scheduler?",
    "Luis",
    "which PostgreSQL version runs on staging?",
    "where do I live?",
    "what do we know about falcon?",
    "what is the wifi password of the office?",
    "nginx TLS",
)


def _machine(
    store: Store,
    group: Callable[[Store], Consolidator],
    notes: list[Note],
    order: list[int],
    *,
    every: int,
) -> Navigator:
    """Save the memories in ``order``, consolidating after every ``every`` saves (what
    a machine does as saves and pulls reach it), then correct the same two memories."""
    ids: dict[int, str] = {}
    for step, i in enumerate(order, start=1):
        domain, when, text = notes[i]
        leaf = make_leaf(text, domain=domain, timestamp=when, position=i)
        ids[i] = store.put_leaf(leaf).leaf_id
        if step % every == 0:
            group(store).consolidate()
    store.annotate(ids[0], outdated_by=Correction(by=ids[4], date="2026-02-03"))
    store.annotate(ids[6], outdated_by=Correction(by=ids[7], date="2026-02-20"))
    return Navigator(store)


def _replicated(result: SearchResult) -> list[str]:
    """The answer less the two parts that are the machine's own (and the cost line)."""
    return [
        line
        for line in result.compact.splitlines()
        if not line.startswith("NOTE: These memories sit under") and not line.startswith("(")
    ]


def test_two_machines_with_different_trees_answer_alike(
    make_store: Callable[..., Store],
    consolidator: Callable[[Store], Consolidator],
    story_notes: list[Note],
) -> None:
    notes = [*story_notes, *EXTRA]
    order = list(range(len(notes)))
    shuffled = order[:]
    random.Random(18).shuffle(shuffled)
    first = _machine(make_store(name="first"), consolidator, notes, order, every=1)
    second = _machine(make_store(name="second"), consolidator, notes, shuffled, every=5)
    trees = [sorted(e.id for e in nav.store.iter_entries("branch")) for nav in (first, second)]
    assert trees[0] != trees[1], "the two machines must have grouped their memories apart"
    for question in QUESTIONS:
        a, b = first.search(question), second.search(question)
        assert (a.status, a.confidence) == (b.status, b.confidence), question
        assert [(h.id, h.score, h.outdated) for h in a.results] == [
            (h.id, h.score, h.outdated) for h in b.results
        ], question
        assert a.notices == b.notices or question.startswith("what do we know"), question
        assert _replicated(a) == _replicated(b), question
    statuses = {first.search(q).status for q in QUESTIONS}
    assert statuses == {"found", "ambiguous", "not_found"}
