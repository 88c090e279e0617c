"""Each correction a leaf receives is listed in its header with what it changed, so that a
search flags the leaf only for questions about that part (the seed: the leaf stays true on
its own date; only what changed can no longer be read as current)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ihmt_facts import Timeline
from ihmt_facts._outdating import CORRECTIONS_KEY
from ihmt_store import Store

if TYPE_CHECKING:
    from conftest import PutLeaf


def _listed(store: Store, leaf_id: str) -> list[dict[str, Any]]:
    items = store.read_leaf(leaf_id).extra.get(CORRECTIONS_KEY)
    assert isinstance(items, list)
    return items


def test_supersede_lists_the_correction_with_its_hint_and_the_facts_it_changed(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    old = put("I live in Madrid and I work at Acme.", "2024-01-01")
    new = put("I moved to Valencia.", "2025-01-01")
    timeline.ingest(old)
    timeline.ingest(new)

    timeline.supersede(old.leaf_id, new.leaf_id, "replaced: my home", hint=" my  home ")

    (item,) = _listed(store, old.leaf_id)
    assert item == {
        "by": new.leaf_id,
        "date": "2025-01-01T00:00:00Z",
        "changed": [{"attribute": "location", "from": "Madrid", "to": "Valencia"}],
        "hint": "my home",
    }
    # the flag is the leaf's as before; the employer still holds
    assert store.entry(old.leaf_id).outdated_by == new.leaf_id
    assert timeline.active("user", "employer").value == "Acme"


def test_a_second_correction_is_listed_beside_the_first_and_restore_drops_only_it(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    old = put("The printer is on the second floor; the guest wifi is lobby-net.", "2024-01-01")
    floor = put("The office printer moved to the third floor.", "2025-01-01")
    wifi = put("The guest wifi is now called visitors-5g.", "2025-06-01")
    timeline.supersede(old.leaf_id, floor.leaf_id, hint="printer second floor")
    timeline.supersede(old.leaf_id, wifi.leaf_id, hint="wifi lobby-net")

    hints = {i["by"]: i.get("hint") for i in _listed(store, old.leaf_id)}
    assert hints == {floor.leaf_id: "printer second floor", wifi.leaf_id: "wifi lobby-net"}
    # saying it again updates the entry instead of adding one
    timeline.supersede(old.leaf_id, wifi.leaf_id, hint="guest wifi")
    hints = {i["by"]: i.get("hint") for i in _listed(store, old.leaf_id)}
    assert hints == {floor.leaf_id: "printer second floor", wifi.leaf_id: "guest wifi"}

    assert timeline.restore(old.leaf_id) is not None
    assert [i["by"] for i in _listed(store, old.leaf_id)] == [floor.leaf_id]
    assert store.entry(old.leaf_id).outdated_by is None


def test_a_change_found_by_the_timeline_lists_the_attribute_that_moved(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    old = put("I live in Madrid and I work at Acme.", "2024-01-01")
    new = put("I live in Valencia and I work at Acme.", "2025-01-01")
    timeline.ingest(old)
    timeline.ingest(new)

    assert store.entry(old.leaf_id).outdated_by == new.leaf_id
    (item,) = _listed(store, old.leaf_id)
    assert item["by"] == new.leaf_id and "hint" not in item
    assert item["changed"] == [{"attribute": "location", "from": "Madrid", "to": "Valencia"}]
