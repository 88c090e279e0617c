"""Corrections at the level of facts: a memory is OUTDATED only for what its correction
changed (the corrections are written the way the facts timeline writes them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from ihmt_navigator import Navigator, SearchOptions
from ihmt_navigator._changes import CORRECTIONS_KEY, changed_words, changes_of, judge
from ihmt_navigator._query import Query, new_query, started
from ihmt_navigator._question import question_terms
from ihmt_store import Correction, Store
from ihmt_store.testing import make_leaf

OLD = (
    "Server atlas-7 sits in rack B3 of the Madrid datacenter; its IP is 10.0.4.17 and the "
    "platform team owns it."
)


def _corrected(
    make_store: Callable[..., Store], new_text: str, item: dict[str, Any] | None
) -> tuple[Store, str, str]:
    """A store with OLD and ``new_text``, the first corrected by the second; ``item`` is
    what the correction recorded (None: nothing, a flag set by hand)."""
    store = make_store()
    old = store.put_leaf(make_leaf(OLD, timestamp="2026-03-01T00:00:00Z", position=1))
    new = store.put_leaf(make_leaf(new_text, timestamp="2026-10-02T00:00:00Z", position=2))
    extra = {} if item is None else {CORRECTIONS_KEY: [{"by": new.leaf_id, **item}]}
    store.annotate(
        old.leaf_id,
        outdated_by=Correction(by=new.leaf_id, date="2026-10-02T00:00:00Z"),
        extra=extra,
    )
    return store, old.leaf_id, new.leaf_id


HINTED = {"date": "2026-10-02T00:00:00Z", "hint": "atlas-7 rack B3"}
FACT = {
    "date": "2026-10-02T00:00:00Z",
    "changed": [{"attribute": "rack", "from": "B3", "to": "B7"}],
}


@pytest.mark.parametrize("item", [HINTED, FACT], ids=["hint", "fact"])
def test_a_question_about_what_changed_gets_the_correction_and_a_notice_naming_it(
    make_store: Callable[..., Store], item: dict[str, Any]
) -> None:
    store, old, new = _corrected(make_store, "Server atlas-7 moved to rack B7.", item)
    result = Navigator(store).search("which rack is atlas-7 in?")
    assert [h.id for h in result.results] == [new, old]
    flagged = result.results[1]
    assert flagged.outdated and flagged.outdated_by == new
    assert flagged.changed  # what changed, named
    (notice,) = result.notices
    assert notice.startswith("OUTDATED: ") and new in notice and old in notice
    assert "on 2026-10-02" in notice
    named = '"atlas-7 rack B3" changed' if item is HINTED else "rack changed to B7"
    assert named in notice and named == flagged.changed


@pytest.mark.parametrize("item", [HINTED, FACT], ids=["hint", "fact"])
@pytest.mark.parametrize("question", ["which team owns atlas-7?", "atlas-7 IP address"])
def test_a_question_about_what_did_not_change_is_answered_by_the_older_memory(
    make_store: Callable[..., Store], item: dict[str, Any], question: str
) -> None:
    store, old, _ = _corrected(make_store, "Server atlas-7 moved to rack B7.", item)
    result = Navigator(store).search(question)
    assert result.status == "found"
    assert result.results[0].id == old
    assert not any(h.outdated for h in result.results)
    assert result.notices == ()
    assert "OUTDATED" not in result.compact


def test_a_correction_that_recorded_nothing_outdates_the_whole_memory(
    make_store: Callable[..., Store],
) -> None:
    store, old, new = _corrected(make_store, "Server atlas-7 moved to rack B7.", None)
    result = Navigator(store).search("which team owns atlas-7?")
    assert [h.id for h in result.results] == [new, old]
    assert result.results[1].outdated and result.results[1].changed == ""


def test_a_restatement_of_what_still_holds_is_not_a_change(
    make_store: Callable[..., Store],
) -> None:
    store, old, _ = _corrected(
        make_store,
        "Server atlas-7 moved to rack B7; the platform team still owns it.",
        HINTED,
    )
    result = Navigator(store).search("which team owns atlas-7?")
    kept = next(h for h in result.results if h.id == old)
    assert not kept.outdated and result.notices == ()


def test_a_correction_after_the_cutoff_outdates_nothing_then(
    make_store: Callable[..., Store],
) -> None:
    store, old, _ = _corrected(make_store, "Server atlas-7 moved to rack B7.", HINTED)
    result = Navigator(store).search("which rack is atlas-7 in?", as_of="2026-06-01")
    assert [h.id for h in result.results] == [old]
    assert not result.results[0].outdated and result.notices == ()


def test_of_two_corrections_the_one_the_question_is_about_answers(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    old = store.put_leaf(make_leaf(OLD, timestamp="2026-03-01T00:00:00Z", position=1))
    rack = store.put_leaf(
        make_leaf("atlas-7 moved to rack B7.", timestamp="2026-10-02T00:00:00Z", position=2)
    )
    owner = store.put_leaf(
        make_leaf("The data team took atlas-7 over.", timestamp="2026-11-20T00:00:00Z", position=3)
    )
    store.annotate(
        old.leaf_id,
        outdated_by=Correction(by=owner.leaf_id, date="2026-11-20T00:00:00Z"),
        extra={
            CORRECTIONS_KEY: [
                {"by": rack.leaf_id, "date": "2026-10-02T00:00:00Z", "hint": "rack B3"},
                {"by": owner.leaf_id, "date": "2026-11-20T00:00:00Z", "hint": "platform team"},
            ]
        },
    )
    result = Navigator(store).search("which rack holds atlas-7?")
    assert [h.id for h in result.results[:2]] == [rack.leaf_id, old.leaf_id]
    assert result.results[1].outdated_by == rack.leaf_id
    ip = Navigator(store).search("atlas-7 IP address")
    assert ip.results[0].id == old.leaf_id and not ip.results[0].outdated


def test_malformed_corrections_are_skipped_and_the_flag_still_counts() -> None:
    leaf = make_leaf("x").evolve(
        outdated_by=Correction(by="L-b", date="2026-01-02T00:00:00Z"),
        extra={CORRECTIONS_KEY: ["nonsense", {"by": ""}, {"by": "L-a", "date": 5}]},
    )
    assert [(c.by, c.what, c.words) for c in changes_of(leaf)] == [("L-b", "", frozenset())]


def test_changed_words_leave_out_clauses_saying_what_did_not_change() -> None:
    words = changed_words(
        "Team sync moved to Wednesdays; the monthly demo day doesn't change. "
        "Los otros dos precios no cambian (still 45 min)."
    )
    assert "sync" in words and "wednesday" in words
    assert not {"demo", "precio", "45"} & words


def test_a_question_that_finds_only_the_subject_in_the_old_memory_keeps_the_flag(
    make_store: Callable[..., Store],
) -> None:
    store, old, _ = _corrected(make_store, "Server atlas-7 moved to rack B7.", HINTED)
    # nothing of the old memory but its subject answers: no sign it is about what held
    result = Navigator(store).search("which operating system is installed on atlas-7?")
    (flagged,) = [h for h in result.results if h.id == old]
    assert flagged.outdated


NAS = "The NAS sits in rack B3 of the basement; its IP is 10.0.9.5 and Marta looks after it."


def _nas(make_store: Callable[..., Store], new_text: str) -> tuple[Store, str, str]:
    """A store with NAS corrected by ``new_text`` through a hint naming the rack."""
    store = make_store()
    old = store.put_leaf(make_leaf(NAS, timestamp="2026-03-01T00:00:00Z", position=1))
    new = store.put_leaf(make_leaf(new_text, timestamp="2026-10-02T00:00:00Z", position=2))
    item = {"by": new.leaf_id, "date": "2026-10-02T00:00:00Z", "hint": "NAS rack B3"}
    store.annotate(
        old.leaf_id,
        outdated_by=Correction(by=new.leaf_id, date="2026-10-02T00:00:00Z"),
        extra={CORRECTIONS_KEY: [item]},
    )
    return store, old.leaf_id, new.leaf_id


def test_a_value_asked_for_that_the_correction_left_alone_is_answered_as_current(
    make_store: Callable[..., Store],
) -> None:
    store, old, new = _nas(make_store, "The NAS moved to rack B7 upstairs.")
    result = Navigator(store).search("What's the NAS's IP?")
    assert result.status == "found", result.compact
    assert result.results[0].id == old and not result.results[0].outdated
    assert "OUTDATED" not in result.compact
    # What it did change is still flagged.
    rack = Navigator(store).search("Which rack is the NAS in?")
    assert rack.results[0].id == new
    assert [h.outdated for h in rack.results if h.id == old] == [True]


def test_a_correction_giving_a_new_value_of_the_shape_asked_keeps_the_flag(
    make_store: Callable[..., Store],
) -> None:
    store, old, new = _nas(make_store, "The NAS moved to rack B7 and is now on 10.0.9.8.")
    result = Navigator(store).search("What's the NAS's IP?")
    assert result.results[0].id == new
    assert [h.outdated for h in result.results if h.id == old] == [True]


def test_a_correction_restating_versions_leaves_no_older_version_current(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    old = store.put_leaf(
        make_leaf(
            "The shop runs Django 4.2 on Python 3.10; its database is Postgres 14.",
            timestamp="2026-03-01T00:00:00Z",
            position=1,
        )
    )
    new = store.put_leaf(
        make_leaf(
            "The shop moved to Django 5.1 on Python 3.12.",
            timestamp="2026-10-02T00:00:00Z",
            position=2,
        )
    )
    item = {"by": new.leaf_id, "date": "2026-10-02T00:00:00Z", "hint": "shop Django 4.2"}
    store.annotate(
        old.leaf_id,
        outdated_by=Correction(by=new.leaf_id, date="2026-10-02T00:00:00Z"),
        extra={CORRECTIONS_KEY: [item]},
    )
    # Which versions it restated is in doubt: the older memory's Postgres 14 is not
    # given as current.
    result = Navigator(store).search("Which Postgres version does the shop use?")
    assert result.status == "not_found", result.compact
    assert "none holds a Postgres version" in result.compact
    assert old.leaf_id not in result.compact


def _chain(make_store: Callable[..., Store]) -> tuple[Store, list[str]]:
    """A store where atlas-7's rack was corrected twice (B3 → B5 → B7), each correction
    recorded with the hint that chose it: the ids, oldest first."""
    store = make_store()
    texts = (
        "Server atlas-7 sits in rack B3 of the Madrid datacenter.",
        "Server atlas-7 moved to rack B5.",
        "Server atlas-7 moved to rack B7.",
    )
    dates = ("2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z", "2026-10-02T00:00:00Z")
    ids = [
        store.put_leaf(make_leaf(text, timestamp=date, position=i)).leaf_id
        for i, (text, date) in enumerate(zip(texts, dates, strict=True))
    ]
    for old, new, date in ((ids[0], ids[1], dates[1]), (ids[1], ids[2], dates[2])):
        item = {"by": new, "date": date, "hint": "atlas-7 rack"}
        store.annotate(
            old, outdated_by=Correction(by=new, date=date), extra={CORRECTIONS_KEY: [item]}
        )
    return store, ids


def _query(store: Store, text: str) -> Query:
    _, q_terms = question_terms(text)
    return new_query(store, text, SearchOptions(), started(store), q_terms=q_terms)


def test_judging_a_chain_of_corrections_reads_each_leaf_once(
    make_store: Callable[..., Store],
) -> None:
    store, (first, second, third) = _chain(make_store)
    q = _query(store, "which rack is atlas-7 in?")
    reads = store.io.leaf_reads
    # The first one's correction is read to judge it (its text says what changed); then
    # that correction is judged in turn, from the leaf already read.
    judge(store, q, [store.entries([first])[first]])
    judge(store, q, [store.entries([second])[second]])
    assert store.io.leaf_reads - reads == 3
    assert set(q.leaves) == {first, second, third}
    assert q.corrections[first].by == second and q.corrections[second].by == third


def test_a_corrected_memory_the_question_finds_nothing_in_keeps_its_latest_correction(
    make_store: Callable[..., Store],
) -> None:
    store, (first, second, _) = _chain(make_store)
    older = store.put_leaf(
        make_leaf("atlas-7 was racked by Dana.", timestamp="2026-01-01T00:00:00Z", position=9)
    )
    later = "2026-11-01T00:00:00Z"
    store.annotate(
        first,
        outdated_by=Correction(by=older.leaf_id, date=later),
        extra={
            CORRECTIONS_KEY: [
                {"by": second, "date": "2026-06-01T00:00:00Z", "hint": "atlas-7 rack"},
                {"by": older.leaf_id, "date": later, "hint": "atlas-7 racked"},
            ]
        },
    )
    q = _query(store, "what did the check of the greenhouse heaters find?")
    reads = store.io.leaf_reads
    judge(store, q, [store.entries([first])[first]])
    # Every correction weighs the same for a question the memory holds none of: the
    # latest holds, as when each is weighed, and no correcting memory is read for it.
    assert q.corrections[first] is not None and q.corrections[first].by == older.leaf_id
    assert store.io.leaf_reads - reads == 1
    early = _query(store, "what did the check of the greenhouse heaters find?")
    early = replace(early, options=SearchOptions(as_of="2026-07-01"))
    judge(store, early, [store.entries([first])[first]])
    assert early.corrections[first] is not None and early.corrections[first].by == second
