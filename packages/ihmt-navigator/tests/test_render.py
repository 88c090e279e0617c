"""The compact text is rendered once, by the navigator, with every note it carries."""

from __future__ import annotations

from collections.abc import Callable

from ihmt_navigator import Navigator, SearchOptions
from ihmt_store import Store, estimate_tokens
from ihmt_store.testing import make_leaf

OTHER_PROJECT_NOTE = (
    "NOTE: this answer comes from project hawk, not the current one ({here}); check it "
    "applies here before relying on it."
)


def _hawk_store(make_store: Callable[..., Store]) -> Store:
    store = make_store()
    store.put_leaf(make_leaf("deploy hawk with the blue green switch", project="hawk", position=1))
    store.put_leaf(make_leaf("lunch is at noon on fridays", project="", position=2))
    return store


def test_an_answer_from_another_project_ends_with_a_note_naming_it(
    make_store: Callable[..., Store],
) -> None:
    store = _hawk_store(make_store)
    nav = Navigator(store)
    asked = SearchOptions(prefer_project="falcon", note_other_project=True)
    result = nav.search("blue green deploy switch", asked)
    assert result.status == "found"
    assert result.compact.endswith("\n" + OTHER_PROJECT_NOTE.format(here="project falcon"))
    assert result.tokens == estimate_tokens(result.compact)
    # the note is the only difference from the same search without it
    plain = nav.search("blue green deploy switch", prefer_project="falcon")
    assert result.compact == plain.compact + "\n" + OTHER_PROJECT_NOTE.format(here="project falcon")


def test_asked_in_no_project_the_note_says_so(make_store: Callable[..., Store]) -> None:
    store = _hawk_store(make_store)
    result = Navigator(store).search("blue green deploy switch", note_other_project=True)
    assert result.compact.endswith("\n" + OTHER_PROJECT_NOTE.format(here="no project"))


def test_no_note_for_the_current_project_a_global_memory_or_no_answer(
    make_store: Callable[..., Store],
) -> None:
    store = _hawk_store(make_store)
    nav = Navigator(store)
    own = nav.search("blue green deploy switch", prefer_project="hawk", note_other_project=True)
    assert own.status == "found" and "NOTE: this answer comes" not in own.compact
    global_memory = nav.search("when is lunch on fridays", note_other_project=True)
    assert global_memory.status == "found"
    assert "NOTE: this answer comes" not in global_memory.compact
    nothing = nav.search("kubernetes helm charts", note_other_project=True)
    assert nothing.status == "not_found" and "NOTE" not in nothing.compact


def test_the_navigator_keeps_no_state_of_a_call(make_store: Callable[..., Store]) -> None:
    store = _hawk_store(make_store)
    nav = Navigator(store)
    before = dict(vars(nav))
    nav.search("blue green deploy switch")
    nav.find_corrected("blue green switch")
    assert vars(nav) == before
    assert set(before) == {"store", "weights", "vectors"}
