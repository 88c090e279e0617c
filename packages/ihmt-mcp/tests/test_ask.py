"""``Memory.ask``: the clue loop over a real memory, with everything ``search`` does."""

from __future__ import annotations

import pytest

from ihmt_mcp import Memory
from ihmt_navigator import SearchResult

NOTES = [  # (who, domain, date, text)
    ("", "personal", "2024-03-11", "I live in Madrid, in a flat near Retiro park."),
    ("Pardo", "personal", "2024-07-22", "Vacaciones en Benidorm con Luis Pardo, mi primo."),
    ("Soler", "personal", "2025-08-30", "Fin de semana en El Saler con Luis Soler y su perro."),
    ("Marín", "work", "2024-11-30", "Cierre de trimestre: Luis Marín revisó el pull request."),
    ("", "decisions", "2025-05-02", "We decided to use Pulumi for the falcon scheduler."),
    ("", "infra", "2025-01-10", "The staging host of falcon runs PostgreSQL 15 on port 5432."),
]


@pytest.fixture
def luis(memory: Memory) -> dict[str, str]:
    """Three people called Luis (and a few other memories): each one's memory id."""
    ids = {}
    for who, domain, when, text in NOTES:
        saved = memory.save(text, domain=domain, date=when, project="")
        if who:
            ids[who] = saved.ids[0]
    memory.consolidate(force=True)
    return ids


def test_three_namesakes_are_ambiguous_to_a_plain_search(
    memory: Memory, luis: dict[str, str]
) -> None:
    result = memory.search("Luis")
    assert result.status == "ambiguous"
    assert {hit.id for hit in result.results} == set(luis.values())


def test_a_clue_the_provider_gives_separates_the_namesakes(
    memory: Memory, luis: dict[str, str]
) -> None:
    asked: list[SearchResult] = []

    def provider(result: SearchResult) -> str:
        asked.append(result)
        return "vacaciones en Benidorm"

    result = memory.ask("Luis", provider)
    assert result.status == "found"
    assert result.best is not None and result.best.id == luis["Pardo"]
    assert result.clue_rounds == 1
    assert result.clues == ("vacaciones en Benidorm",)
    assert [r.status for r in asked] == ["ambiguous"]
    # The same answer as a search given that clue.
    assert result.compact == memory.search("Luis", clue="vacaciones en Benidorm").compact


def test_clues_accumulate_round_after_round(memory: Memory, luis: dict[str, str]) -> None:
    clues = iter(["zzz nothing", "El Saler"])
    result = memory.ask("Luis", lambda _: next(clues))
    assert result.best is not None and result.best.id == luis["Soler"]
    assert result.clue_rounds == 2
    assert result.clues == ("zzz nothing", "El Saler")
    assert result.clue == "zzz nothing El Saler"


def test_a_provider_that_returns_nothing_leaves_the_answer_ambiguous(
    memory: Memory, luis: dict[str, str]
) -> None:
    for silent in (None, "", "   "):
        result = memory.ask("Luis", lambda _, silent=silent: silent)
        assert result.status == "ambiguous"
        assert result.clue_rounds == 0
        assert result.clues == ()
        assert {hit.id for hit in result.results} == set(luis.values())


def test_the_loop_stops_after_max_rounds(memory: Memory, luis: dict[str, str]) -> None:
    calls: list[int] = []

    def unhelpful(_: SearchResult) -> str:
        calls.append(1)
        return f"unrelated{len(calls)}"

    result = memory.ask("Luis", unhelpful, max_rounds=2)
    assert result.status == "ambiguous"
    assert len(calls) == 2 and result.clue_rounds == 2
    calls.clear()
    result = memory.ask("Luis", unhelpful)
    assert len(calls) == memory.store.config.max_clue_rounds
    assert result.clue_rounds == memory.store.config.max_clue_rounds


def test_a_first_clue_is_used_before_any_is_asked(memory: Memory, luis: dict[str, str]) -> None:
    def never(_: SearchResult) -> str:
        raise AssertionError("the first clue was enough: nothing to ask")

    result = memory.ask("Luis", never, clue="Cierre de trimestre")
    assert result.best is not None and result.best.id == luis["Marín"]
    assert result.clues == ("Cierre de trimestre",)
    assert result.clue_rounds == 1
    # A first clue that does not separate them is one round more than max_rounds.
    calls: list[int] = []
    result = memory.ask("Luis", lambda _: calls.append(1) or "zzz", clue="unrelated", max_rounds=1)
    assert len(calls) == 1 and result.clue_rounds == 2


def test_ask_notes_an_answer_from_another_project_as_search_does(memory: Memory) -> None:
    memory.save("The falcon staging database is PostgreSQL 17.", project="falcon")
    memory.project = "osprey"
    asked = memory.ask("which PostgreSQL does the falcon staging database run?", lambda _: None)
    searched = memory.search("which PostgreSQL does the falcon staging database run?")
    assert asked.status == searched.status == "found"
    assert "NOTE: this answer comes from project falcon" in asked.compact
    assert asked.compact == searched.compact


def test_ask_takes_the_keywords_of_search(memory: Memory, luis: dict[str, str]) -> None:
    before = memory.ask("Luis", lambda _: None, as_of="2024-12-31")
    assert before.status == "ambiguous"
    assert {hit.id for hit in before.results} == {luis["Pardo"], luis["Marín"]}
    assert before.compact == memory.search("Luis", as_of="2024-12-31").compact
    full = memory.ask("Luis", lambda _: "Benidorm", detail="full", project="osprey")
    assert full.compact == memory.search("Luis", "Benidorm", "full", project="osprey").compact
    assert f"id: {luis['Pardo']}" in full.compact


@pytest.mark.parametrize("bad", [{"detail": "everything"}, {"as_of": "next tuesday"}])
def test_an_empty_question_is_refused_before_its_options_are_read(
    memory: Memory, bad: dict[str, str]
) -> None:
    """The order the navigator checks in: the question first, then the filters."""
    with pytest.raises(ValueError, match="the query is empty"):
        memory.search("  ", **bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the query is empty"):
        memory.ask("", lambda result: None, **bad)  # type: ignore[arg-type]
