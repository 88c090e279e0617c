"""The options of a search travel as one validated record; ``Navigator.ask`` is the one
clue loop."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from datetime import date

import pytest

from ihmt_navigator import InvalidFilterError, Navigator, SearchOptions, SearchResult
from ihmt_store import Store

Story = tuple[Store, Navigator, list[str]]


def test_options_are_validated_when_the_record_is_made() -> None:
    with pytest.raises(InvalidFilterError, match="detail") as raised:
        SearchOptions(detail="verbose")  # type: ignore[arg-type]
    assert raised.value.name == "detail" and raised.value.value == "verbose"
    with pytest.raises(InvalidFilterError, match="scope"):
        SearchOptions(scope="everything")  # type: ignore[arg-type]
    with pytest.raises(InvalidFilterError, match="as_of"):
        SearchOptions(as_of="last spring")
    # detail is checked first, then scope, then as_of
    with pytest.raises(InvalidFilterError, match="detail"):
        SearchOptions(detail="x", scope="y", as_of="z")  # type: ignore[arg-type]


def test_as_of_is_read_back_as_the_canonical_timestamp() -> None:
    assert SearchOptions(as_of="2025-01-01").as_of == "2025-01-01T23:59:59Z"
    assert SearchOptions(as_of=date(2025, 1, 1)).as_of == "2025-01-01T00:00:00Z"
    assert SearchOptions(as_of="").as_of is None
    assert SearchOptions().as_of is None


def test_options_are_frozen() -> None:
    options = SearchOptions(project="falcon")
    with pytest.raises(FrozenInstanceError):
        options.project = "heron"  # type: ignore[misc]


def test_a_record_and_loose_keywords_search_alike(story: Story) -> None:
    _, nav, ids = story
    options = SearchOptions(as_of="2025-01-01", detail="full", limit=3)
    by_record = nav.search("where do I live?", options)
    by_keywords = nav.search("where do I live?", as_of="2025-01-01", detail="full", limit=3)
    assert by_record == by_keywords
    assert by_record.best is not None and by_record.best.id == ids[0]
    # keywords go on top of a record
    later = nav.search("where do I live?", options, as_of=None)
    assert later.best is not None and later.best.id == ids[4]


def test_a_first_clue_counts_as_a_round_of_its_own(story: Story) -> None:
    store, nav, _ = story
    asked: list[SearchResult] = []

    def unhelpful(result: SearchResult) -> str:
        asked.append(result)
        return "zzz unrelated"

    result = nav.ask("Luis", unhelpful, clue="qqq nothing")
    assert result.status == "ambiguous"
    assert len(asked) == store.config.max_clue_rounds
    assert result.clues == ("qqq nothing", *["zzz unrelated"] * len(asked))
    assert result.clue_rounds == len(result.clues)
    assert result.clue == " ".join(result.clues)
    assert asked[0].clue == "qqq nothing"


def test_a_first_clue_that_answers_asks_nothing(story: Story) -> None:
    _, nav, ids = story

    def never(_: SearchResult) -> str:
        raise AssertionError("the first clue answered: no clue should be asked for")

    result = nav.ask("Luis", never, clue="  vacaciones en Benidorm ")
    assert result.status == "found"
    assert result.best is not None and result.best.id == ids[1]
    assert result.clues == ("vacaciones en Benidorm",)


def test_the_clue_loop_records_the_clues_it_used(story: Story) -> None:
    _, nav, ids = story
    answers = iter(["cousin", " El Saler "])
    result = nav.ask("Luis", lambda _: next(answers))
    assert result.best is not None and result.best.id == ids[2]
    assert result.clues == ("cousin", "El Saler")
    assert result.clue == "cousin El Saler"
    # a plain search used no clue loop
    assert nav.search("Luis").clues == ()


def test_the_clue_loop_stops_on_white_space(story: Story) -> None:
    _, nav, _ = story
    result = nav.ask("Luis", lambda _: "   ")
    assert result.status == "ambiguous"
    assert result.clues == () and result.clue_rounds == 0


def test_the_clue_loop_runs_the_search_it_is_given(story: Story) -> None:
    _, nav, ids = story
    seen: list[str | None] = []

    def search(clue: str | None) -> SearchResult:
        seen.append(clue)
        return nav.search("Luis", clue=clue, detail="full")

    answers = iter(["cousin", "El Saler"])
    result = nav.ask("Luis", lambda _: next(answers), search=search)
    assert seen == [None, "cousin", "cousin El Saler"]
    assert result.best is not None and result.best.id == ids[2]
    assert "path:" in result.compact  # the given search's detail


def test_the_clue_loop_keeps_its_options_in_every_round(story: Story) -> None:
    _, nav, _ = story
    rounds: list[SearchResult] = []

    def agent(result: SearchResult) -> str:
        rounds.append(result)
        return "cousin"

    nav.ask("Luis", agent, SearchOptions(detail="full"), max_rounds=1)
    assert rounds and all("path:" in r.compact for r in rounds)
