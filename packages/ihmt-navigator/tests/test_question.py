"""Reading a question: the terms of what it is about, its language, what it asks for."""

from __future__ import annotations

import pytest

from ihmt_navigator._question import asked_for, language_of, question_terms
from ihmt_navigator._shapes import ANSWER_TYPES, AnswerType
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


def _kind(name: str) -> AnswerType:
    return next(kind for kind in ANSWER_TYPES if kind.name == name)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How often are the backups tested?", "a frequency"),
        ("¿Cada cuánto rotamos la clave?", "a frequency"),
        ("How many times a week do we deploy?", "a frequency"),
        ("How long does the test suite take?", "a duration"),
        ("¿Cuánto tiempo dura la garantía?", "a duration"),
        ("How many riders does the coop have?", "a number"),
        ("¿Cuántos nodos tiene el clúster?", "a number"),
        ("How much does the VPS cost?", "a price"),
        ("¿Cuánto cuesta el envío?", "a price"),
        ("What time is the standup?", "a time of day"),
        ("When is Ana's birthday?", "a birthday"),
        ("Which cloud region hosts the shop?", "a cloud region"),
    ],
)
def test_a_question_asks_for_a_kind_of_value(question: str, kind: str) -> None:
    assert [name for name, _ in asked_for(question)] == [kind]


@pytest.mark.parametrize(
    "question",
    [
        "How long ago did we move the office?",  # a date, which every memory has
        "What time zone is the team in?",
        "How much memory does the worker need?",  # an amount of anything
    ],
)
def test_questions_that_ask_for_no_shaped_value(question: str) -> None:
    assert asked_for(question) == []


@pytest.mark.parametrize(
    ("kind", "holds", "lacks"),
    [
        ("a frequency", "the dump runs nightly", "one lamp per desk, to save power"),
        ("a frequency", "we meet on Mondays", "the meeting is with Ana"),
        ("a frequency", "se copia cada semana", "se copia a un disco"),
        ("a frequency", "restarts twice a day", "restarts when it fails"),
        ("a frequency", "keys rotate with each release", "each desk has a lamp"),
        ("a duration", "tokens stay valid for 15 minutes", "tokens are signed"),
        ("a duration", "logs are kept 30 days", "logs go to S3"),
        ("a duration", "the suite takes 48 h on the old box", "as the file was read"),
        ("a number", "a worker takes up to 4 jobs", "workers take jobs"),
        ("a number", "the firm opened a third office", "the firm opened an office"),
        ("a number", "12,000 users", "outage 2025-02-11 at 09:15 with ACME-02, v1.2, 0.4.0"),
        ("a price", "$12 a seat", "Postgres 16 on GCP"),
        ("a price", "the VPS is 12 EUR", "the VPS is small"),
        ("a time of day", "we meet at 09:30", "we meet on Mondays"),
        ("a time of day", "away at noon", "away on Fridays"),
        ("a birthday", "cumple años el 3 de mayo", "moved house in May 2021"),
        ("a birthday", "born on March 3rd", "the gym is at 17:30, so she leaves at 17:00"),
        ("a cloud region", "deployed to GCP us-east4", "deployed to GCP in the US"),
        ("a cloud region", "Azure westus3", "Azure, in the region we chose"),
        ("a cloud region", "on AWS eu-north-1", "on AWS since 2020"),
        ("a cloud region", "Hetzner nbg1", "Hetzner, a dedicated box"),
        ("a cloud region", "hosted on Fly, the Dublin region", "hosted on Fly"),
    ],
)
def test_what_a_memory_giving_the_value_holds(kind: str, holds: str, lacks: str) -> None:
    shape = _kind(kind).shape
    assert shape.search(holds)
    assert not shape.search(lacks)


@pytest.mark.parametrize(
    ("text", "gives"),
    [
        ("the cluster runs Postgres 15", True),
        ("moved Postgres from 15 to 17 last week", True),
        ("version 3 of Postgres is out", True),
        ("schema group example.dev, Postgres version v2beta3.", True),
        ("Outage 2025-02-11: a Postgres certificate expired", False),
        ("Postgres with ACME-02 and a load balancer that runs 3 replicas", False),
        ("Postgres's version is 15", True),
        ("the Postgres version in the chart is now 16", True),
        ("Postgres version: see the chart. It has 3 replicas", False),
    ],
)
def test_a_version_is_a_number_beside_the_thing(text: str, gives: bool) -> None:
    [(_, shape)] = asked_for("Which Postgres version do we run?")
    assert bool(shape.search(text)) is gives


def test_a_two_letter_name_is_one_written_as_a_name() -> None:
    from ihmt_navigator._question import name_words

    assert name_words("Where are the Nx cache settings of kite?") == ["Nx"]
    # acronyms are words, and so is the first word of a sentence
    assert name_words("Is the AI in CI on a DB?") == []
