"""Reachability and idempotence under any sequence of saves, consolidations and forgets."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_navigator import Consolidator, HeuristicSummarizer
from ihmt_store import Store, StoreConfig
from ihmt_store.testing import make_leaf

op = st.one_of(
    st.tuples(
        st.just("save"), st.sampled_from(["infra", "personal", "decisions"]), st.integers(0, 10_000)
    ),
    st.tuples(st.just("consolidate"), st.booleans(), st.just(0)),
    st.tuples(st.just("forget"), st.just(""), st.integers(0, 10_000)),
)


def _check(store: Store) -> None:
    stats = store.stats()
    assert stats.unreachable == 0
    tops = {e.id for e in store.unparented()}
    for entry in store.iter_entries():
        chain = store.path_to(entry.id)
        assert chain[0] in tops
        for parent, child in itertools.pairwise(chain):
            assert store.entry(child).parent_id == parent  # type: ignore[union-attr]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=40), factor=st.integers(2, 4))
def test_every_item_stays_reachable_from_the_trunk(
    ops: list[tuple[str, object, int]], factor: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.create(Path(tmp) / "m", StoreConfig(branch_factor=factor))
        cons = Consolidator(store, HeuristicSummarizer())
        saved: list[str] = []
        for kind, arg, number in ops:
            if kind == "save":
                leaf = make_leaf(
                    f"note {number} about {arg} things", domain=str(arg), position=number
                )
                saved.append(store.put_leaf(leaf).leaf_id)
            elif kind == "consolidate":
                cons.consolidate(force=bool(arg))
            elif saved:
                victim = saved.pop(number % len(saved))
                if store.entry(victim) is not None:
                    store.forget(victim)
            _check(store)
        cons.consolidate(force=True)
        _check(store)
        generation = store.generation
        assert not cons.consolidate(force=True).changed
        assert store.generation == generation
        store.close()
