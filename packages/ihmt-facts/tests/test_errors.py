from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ihmt_facts import (
    FactError,
    InvalidDateError,
    InvalidFactError,
    Timeline,
    UnknownLeafError,
)
from ihmt_facts._records import normalize_subject, parse_key
from ihmt_store import IhmtError, Store

if TYPE_CHECKING:
    from conftest import PutLeaf


def _snapshot(timeline: Timeline) -> tuple[object, ...]:
    return (*(timeline.history(s) for s in timeline.subjects()), timeline.contradictions())


@pytest.mark.parametrize(
    ("subject", "attribute", "value", "field"),
    [
        ("user", "location", "", "value"),
        ("user", "location", "   \n\t ", "value"),
        ("user", "location", "!!! ???", "value"),
        ("user", "location", "x" * 201, "value"),
        ("user", "location", "Mad\x00rid", "value"),
        ("user", "", "Madrid", "attribute"),
        ("user", "a::b", "Madrid", "attribute"),
        ("user", "x" * 81, "Madrid", "attribute"),
        ("planet:mars", "location", "Madrid", "subject"),
        ("project:", "stack", "Go", "subject"),
        ("luis", "location", "Madrid", "subject"),
        ("user:me", "location", "Madrid", "subject"),
    ],
)
def test_an_absurd_fact_is_refused_and_the_timeline_is_untouched(
    store: Store, timeline: Timeline, subject: str, attribute: str, value: str, field: str
) -> None:
    timeline.record_fact("user", "location", "Madrid", timestamp="2024-03-11")
    before = _snapshot(timeline)
    leaves = store.count("leaf")

    with pytest.raises(InvalidFactError) as caught:
        timeline.record_fact(subject, attribute, value, timestamp="2025-01-01")

    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, FactError) and isinstance(caught.value, IhmtError)
    assert _snapshot(timeline) == before
    assert store.count("leaf") == leaves
    assert _snapshot(Timeline(store)) == before


def test_a_bulk_record_with_one_bad_item_writes_nothing(store: Store, timeline: Timeline) -> None:
    leaves = store.count("leaf")
    with pytest.raises(InvalidFactError):
        timeline.record_facts(
            [
                ("user", "location", "Madrid", "2024-01-01", None),
                ("user", "location", "", "2024-02-01", None),
            ]
        )
    assert store.count("leaf") == leaves
    assert timeline.facts() == ()


@pytest.mark.parametrize("when", ["yesterday", "2024-13-40", "31/12/2024", "", "2024-03-11T25:00"])
def test_an_unparseable_date_is_refused(timeline: Timeline, when: str) -> None:
    with pytest.raises(InvalidDateError) as caught:
        timeline.record_fact("user", "location", "Madrid", timestamp=when)
    assert caught.value.value == when
    assert isinstance(caught.value, ValueError)
    with pytest.raises(InvalidDateError):
        timeline.at(when, "user", "location")
    assert timeline.facts() == ()


@pytest.mark.parametrize("leaf_id", ["L-personal-0000-0000000000", "../../etc/passwd", ""])
def test_an_unknown_leaf_is_a_clear_lookup_error(
    store: Store, timeline: Timeline, leaf_id: str
) -> None:
    with pytest.raises(UnknownLeafError) as caught:
        timeline.record_fact("user", "location", "Madrid", source=leaf_id)
    assert caught.value.leaf_id == leaf_id
    assert isinstance(caught.value, LookupError)
    assert str(caught.value) == f"no memory with id {leaf_id!r}"
    with pytest.raises(UnknownLeafError):
        timeline.ingest(leaf_id)
    with pytest.raises(UnknownLeafError):
        timeline.restore(leaf_id)
    assert timeline.facts() == ()
    assert store.count("leaf") == 0


def test_supersede_needs_two_known_distinct_leaves(timeline: Timeline, put: PutLeaf) -> None:
    leaf = put("I live in Madrid.", "2024-01-01")
    with pytest.raises(UnknownLeafError):
        timeline.supersede(leaf.leaf_id, "L-personal-0001-ffffffffff")
    with pytest.raises(UnknownLeafError):
        timeline.supersede("L-personal-0001-ffffffffff", leaf.leaf_id)
    with pytest.raises(ValueError, match="cannot supersede itself"):
        timeline.supersede(leaf.leaf_id, leaf.leaf_id)


def test_a_malformed_explicit_fact_in_a_leaf_header_is_skipped(
    timeline: Timeline, put: PutLeaf
) -> None:
    leaf = put(
        "Notes from the call.",
        "2024-01-01",
        extra={
            "facts": [
                {"subject": "user", "attribute": "location", "value": "Madrid"},
                {"subject": "martian:zork", "attribute": "x", "value": "y"},
                {"subject": "user", "value": "no attribute"},
                {"subject": "user", "attribute": "employer", "value": "Acme", "timestamp": "never"},
                "not even an object",
            ]
        },
    )

    (only,) = timeline.ingest(leaf)

    assert (only.fact.attribute, only.fact.value) == ("location", "Madrid")
    assert only.fact.timestamp == "2024-01-01T00:00:00Z"


def test_wrong_argument_types_are_type_errors_outside_the_tree(timeline: Timeline) -> None:
    with pytest.raises(TypeError):
        timeline.record_fact(42, "location", "Madrid")
    with pytest.raises(TypeError):
        timeline.add_pattern("I live in (?P<value>.+)")


def test_keys_and_subjects_normalise_or_explain() -> None:
    assert normalize_subject("  Project:  Falcon  ") == "project:falcon"
    assert parse_key("User::Location") == ("user", "location")
    with pytest.raises(InvalidFactError, match="subject::attribute"):
        parse_key("user.location")
