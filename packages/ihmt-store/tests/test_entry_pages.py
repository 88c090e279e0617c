"""Every catalog entry is listed a page at a time, in id order: none twice, none left out,
whatever the page size, branches with leaves when no kind is asked, and a leaf forgotten
between two pages is not listed after."""

from __future__ import annotations

from pathlib import Path

import pytest

from ihmt_store import Branch, ChildRef, Store, _base
from ihmt_store.testing import store_with

LEAVES = 11


@pytest.fixture
def store(tmp_path: Path) -> Store:
    texts = [
        (("general", "decisions")[n % 2], f"note number {n} of the pages") for n in range(LEAVES)
    ]
    opened, stored = store_with(tmp_path / "m", texts)
    members = [leaf for leaf in stored if leaf.domain == "general"]
    opened.put_branch(
        Branch(
            node_id="N1-general-pages",
            layer=1,
            domain="general",
            title="notes",
            summary="notes",
            children=tuple(
                ChildRef(id=x.leaf_id, kind="leaf", title=x.text, excerpt=x.text) for x in members
            ),
        )
    )
    return opened


@pytest.mark.parametrize("page", [1, 3, LEAVES, 2000])
def test_every_leaf_is_listed_once_in_id_order_whatever_the_page(
    store: Store, page: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_base, "ENTRY_PAGE", page)
    entries = list(store.iter_entries("leaf"))
    ids = [entry.id for entry in entries]
    assert len(ids) == LEAVES
    assert ids == sorted(set(ids))
    assert {entry.kind for entry in entries} == {"leaf"}


def test_branches_are_listed_with_the_leaves_when_no_kind_is_asked(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_base, "ENTRY_PAGE", 2)
    ids = [entry.id for entry in store.iter_entries()]
    assert ids == sorted(set(ids))
    assert len(ids) == LEAVES + 1
    assert [e.id for e in store.iter_entries("branch")] == ["N1-general-pages"]


def test_a_leaf_forgotten_between_two_pages_is_not_listed_after(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_base, "ENTRY_PAGE", 2)
    ids = [entry.id for entry in store.iter_entries("leaf")]
    listed = []
    for entry in store.iter_entries("leaf"):
        listed.append(entry.id)
        if len(listed) == 1:
            store.forget(ids[-1])
    assert listed == ids[:-1]
