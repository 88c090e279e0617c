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
        ("¿Cada cuánto se rota la clave?", "a frequency"),
        ("How many times a week do we deploy?", "a frequency"),
        ("How long are the logs kept?", "a duration"),
        ("¿Cuánto tiempo dura la garantía?", "a duration"),
        ("How many riders does the coop have?", "a number"),
        ("¿Cuántos nodos tiene el clúster?", "a number"),
        ("How much does the VPS cost per month?", "a price"),
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
        "How much storage does the database use?",  # an amount of anything
    ],
)
def test_questions_that_ask_for_no_shaped_value(question: str) -> None:
    assert asked_for(question) == []


@pytest.mark.parametrize(
    ("kind", "holds", "lacks"),
    [
        ("a frequency", "the dump runs nightly", "one beacon per room, to save battery"),
        ("a frequency", "we call on Sundays", "the call is with Ana"),
        ("a frequency", "se guarda cada 30 s", "se guarda en Postgres"),
        ("a frequency", "restarts twice a day", "restarts when it fails"),
        ("a frequency", "keys rotate with each release", "each room has a beacon"),
        ("a duration", "links stay valid for 10 minutes", "links are signed"),
        ("a duration", "dumps are kept 90 days", "dumps go to R2"),
        ("a duration", "previews live 72 h after the PR closes", "as the file was read"),
        ("a number", "a rider carries up to 3 orders", "riders carry orders"),
        ("a number", "the Trust opened a fourth venue", "the Trust opened a venue"),
        ("a number", "10,000 listings", "incident 2024-10-18 at 13:40 with DNS-01, v1.2, 0.9.0"),
        ("a price", "$3.200 the same zone", "Postgres 15 on GCP"),
        ("a price", "the VPS is 12 EUR", "the VPS is small"),
        ("a time of day", "we call at 11:00", "we call on Sundays"),
        ("a time of day", "offline at lunch", "offline on Fridays"),
        ("a birthday", "su cumpleaños es el 14 de noviembre", "started school in September 2023"),
        ("a birthday", "born on March 3rd", "pick-up is at 13:40, so she blocks 13:15"),
        ("a cloud region", "deployed to GCP us-central1", "deployed to GCP in the US"),
        ("a cloud region", "Azure northeurope", "Azure, in the region we chose"),
        ("a cloud region", "on AWS ap-south-1", "on AWS since 2021"),
        ("a cloud region", "Hetzner hel1", "Hetzner, a dedicated box"),
        ("a cloud region", "hosted on Render, Frankfurt region", "hosted on Render"),
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
        ("moved Postgres from 14 to 16 last week", True),
        ("version 3 of Postgres is out", True),
        ("CRD group example.dev, Postgres version v1alpha1.", True),
        ("Incident 2024-10-18: a Postgres certificate expired", False),
        ("Postgres with TLS-01 and a load balancer that runs 3 replicas", False),
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

    assert name_words("How is the Nx cache set up for kite?") == ["Nx"]
    # acronyms are words, and so is the first word of a sentence
    assert name_words("Is the AI in CI on a DB?") == []
