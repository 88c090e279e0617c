"""An environment that moved is a fact about the system, never about a person."""

from __future__ import annotations


def test_an_environment_that_moved_is_not_a_person_who_moved() -> None:
    from ihmt_facts import extract

    found = extract("Staging moved to PostgreSQL 17 on port 5433.")
    assert all(not f.subject.startswith("person:") for f in found)
    assert [f.subject for f in extract("Marta moved to Lisbon.")] == ["person:marta"]
