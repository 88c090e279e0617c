"""Reading a question: the terms of what it is about, its language, what it asks for."""

from __future__ import annotations

from ihmt_navigator._question import (
    ANSWER_TYPES,
    AnswerType,
    asked_for,
    language_of,
    question_terms,
)
from ihmt_store import terms


def test_the_terms_leave_out_how_it_is_asked_and_its_period() -> None:
    span, about = question_terms("Please tell me about the falcon billing outage in April 2023")
    assert span == ("2023-04-01", "2023-04-30")
    assert about == list(terms("falcon billing outage"))


def test_a_question_that_is_only_a_period_keeps_its_words() -> None:
    span, about = question_terms("2023")
    assert span is None
    assert about == list(terms("2023"))


def test_the_language_is_told_only_when_clear() -> None:
    assert language_of("What is the port of the staging database?") == "en"
    assert language_of("¿Cuál es el puerto de la base de datos de staging?") == "es"
    assert language_of("PostgreSQL 17") == ""


def test_answer_types_are_named_records_of_a_cue_and_a_shape() -> None:
    email = next(kind for kind in ANSWER_TYPES if kind.name == "an email address")
    assert isinstance(email, AnswerType)
    assert email.cue.search("What's Paula's EMAIL?")
    assert email.shape.search("paula@example.org")
    ip = next(kind for kind in ANSWER_TYPES if kind.name == "an IP address")
    assert ip.cue.search("the IP of the box") and not ip.cue.search("a zip file")
    assert ip.shape.search("FE80::1:2") and ip.shape.search("10.0.0.12")


def test_a_yes_no_question_asks_for_no_value() -> None:
    assert [name for name, _ in asked_for("What's the staging port?")] == ["a port"]
    assert asked_for("Is the staging port 5432?") == []
