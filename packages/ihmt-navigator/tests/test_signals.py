"""The signals a decision weighs travel with its answer, and say what decided."""

from __future__ import annotations

from collections.abc import Callable

from ihmt_navigator import Navigator
from ihmt_navigator._signals import FEATURES
from ihmt_store import Store
from ihmt_store.testing import make_leaf


def _fill(store: Store, texts: list[str]) -> None:
    for position, text in enumerate(texts, start=1):
        store.put_leaf(make_leaf(text, timestamp="2025-01-01", position=position))


NOTES = [
    "The office printer is a Brother HL-L2350DW on 10.0.4.17.",
    "We chose Pulumi over Terraform for the falcon scheduler: typed stacks.",
    "The staging host of falcon runs PostgreSQL 15 on port 5432.",
    "Lunch on Fridays is at the Thai place on Calle Mayor.",
]


def test_a_found_answer_carries_every_signal_between_zero_and_one(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _fill(store, NOTES)
    result = Navigator(store).search("what's the printer's IP?")
    assert result.status == "found"
    assert tuple(result.signals) == FEATURES
    assert all(0.0 <= value <= 1.0 for value in result.signals.values())
    # The IP asked for is held: the words asking for it count as held.
    assert result.signals["value_asked"] == 1.0 and result.signals["value_held"] == 1.0
    assert result.signals["matched"] == 1.0 and result.signals["meaning"] == 0.0


def test_a_stray_match_is_not_found_and_says_the_words_did_not_match(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _fill(store, NOTES)
    result = Navigator(store).search("Which scheduler does the heron payroll team prefer?")
    assert result.status == "not_found"
    assert result.signals["matched"] == 0.0
    # "scheduler" is held by one memory, "heron" and "payroll" by none.
    assert result.signals["unseen"] > 0.5


def test_a_rare_word_of_the_question_that_another_memory_holds_is_lacking(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _fill(store, NOTES)
    result = Navigator(store).search("which port does the falcon printer use?")
    # Whichever memory answers, the other one holds a word of the question it lacks.
    assert result.signals["lacking"] > 0.0


def test_a_question_decided_before_any_memory_is_weighed_has_no_signals(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _fill(store, NOTES)
    result = Navigator(store).search("What is the phone number of Zebulon Quarrington?")
    assert result.status == "not_found" and result.signals == {}
