"""Other phrasings of a question, given by the asker, are searched too."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ihmt_navigator import InvalidFilterError, Navigator, SearchOptions
from ihmt_store import Store
from ihmt_store.testing import make_leaf

NOTES = [
    "The billing service keeps its ledger in PostgreSQL 16 on db-billing-01.",
    "Lunch on Fridays is at the Thai place on Calle Mayor.",
    "We chose Pulumi over Terraform for the falcon scheduler: typed stacks.",
]


def _store(make_store: Callable[..., Store]) -> Store:
    store = make_store()
    for position, text in enumerate(NOTES, start=1):
        store.put_leaf(make_leaf(text, timestamp="2025-01-01", position=position))
    return store


def test_a_phrasing_that_the_memory_words_answers_when_the_question_does_not(
    make_store: Callable[..., Store],
) -> None:
    navigator = Navigator(_store(make_store))
    asked = "Which DB engine holds the invoices?"
    assert navigator.search(asked).status == "not_found"
    result = navigator.search(
        asked, SearchOptions(alternatives=("database for the billing ledger", "Postgres"))
    )
    assert result.status == "found"
    assert "PostgreSQL 16" in result.results[0].content
    assert result.query == asked
    (said,) = [n for n in result.notices if n.startswith("answered for the phrasing")]
    assert said.endswith(f'of "{asked}"') and "answered for the phrasing" in result.compact


def test_a_question_found_as_asked_answers_as_asked(
    make_store: Callable[..., Store],
) -> None:
    navigator = Navigator(_store(make_store))
    asked = "Where do we eat lunch on Fridays?"
    alone = navigator.search(asked)
    both = navigator.search(asked, SearchOptions(alternatives=(asked, "  ", "Friday lunch")))
    assert both.status == "found" and both.results[0].id == alone.results[0].id
    assert not any("answered for the phrasing" in notice for notice in both.notices)
    assert both.compact == alone.compact


def test_another_phrasing_never_turns_an_ambiguous_answer_into_a_guess(
    make_store: Callable[..., Store],
) -> None:
    store = _store(make_store)
    for position, text in enumerate(
        ["Luis Pardo fixed the printer.", "Luis Soler owns the printer budget."], start=10
    ):
        store.put_leaf(make_leaf(text, timestamp="2025-02-01", position=position))
    navigator = Navigator(store)
    result = navigator.search("What did Luis do?", alternatives=("Luis Pardo printer",))
    assert result.status == "ambiguous"


def test_no_phrasing_answering_leaves_the_questions_own_not_found(
    make_store: Callable[..., Store],
) -> None:
    navigator = Navigator(_store(make_store))
    result = navigator.search(
        "Who is the heron payroll contact?", alternatives=("payroll owner of heron",)
    )
    assert result.status == "not_found"
    assert result.query == "Who is the heron payroll contact?"


def test_too_many_phrasings_or_not_text_is_one_clear_error() -> None:
    with pytest.raises(InvalidFilterError, match="at most 4"):
        SearchOptions(alternatives=("a", "b", "c", "d", "e"))
    with pytest.raises(InvalidFilterError, match="list of phrasings"):
        SearchOptions(alternatives=(1, 2))  # type: ignore[arg-type]
    assert SearchOptions(alternatives=(" x ", "x", "")).alternatives == ("x",)
