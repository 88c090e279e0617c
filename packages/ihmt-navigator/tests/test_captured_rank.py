"""A memory someone saved outranks one captured from a conversation on an equal match."""

from __future__ import annotations

from collections.abc import Callable

from ihmt_navigator import Navigator
from ihmt_store import Store
from ihmt_store.testing import make_leaf

STATEMENT = "The lumen frontend is styled with Tailwind and tokens from tailwind.config.ts."


def _put(store: Store, text: str, *, source: str, when: str, position: int = 0) -> str:
    leaf = make_leaf(
        text, source=source, timestamp=when, position=position, project="lumen", domain="web"
    )
    return store.put_leaf(leaf).leaf_id


def _filler(store: Store) -> None:
    for n in range(6):
        _put(store, f"lumen note {n}: the weekly sync moved to room {n}", source="agent",
             when="2025-01-01", position=10 + n)  # fmt: skip


def test_a_saved_memory_comes_before_an_equal_captured_one_even_when_older(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _filler(store)
    saved = _put(store, STATEMENT, source="agent", when="2025-03-01")
    captured = _put(store, STATEMENT, source="session", when="2025-06-01", position=1)

    result = Navigator(store).search("how is lumen styled?", prefer_project="lumen")

    assert result.status == "found"
    assert [h.id for h in result.results[:2]] == [saved, captured]


def test_between_two_captured_memories_the_newer_still_comes_first(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _filler(store)
    older = _put(store, STATEMENT, source="session", when="2025-03-01")
    newer = _put(store, STATEMENT, source="session", when="2025-06-01", position=1)

    result = Navigator(store).search("how is lumen styled?", prefer_project="lumen")

    assert [h.id for h in result.results[:2]] == [newer, older]
