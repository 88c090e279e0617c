from __future__ import annotations

import itertools
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_facts import FactStatus, Timeline
from ihmt_store import Leaf, Store, leaf_id_for

SUBJECTS = ("user", "project:alpha", "project:beta", "host:db01", "patient:ana")
ATTRIBUTES = ("location", "stack")
VALUES = ("Madrid", "Valencia", "madrid", "Go", "Rust")
TEXTS = (
    "I live in {v}.",
    "Vivo en {v}.",
    "We migrated the backend to {v}.",
    "Our stack is {v}.",
    "Nothing to see here.",
)

record_op = st.tuples(
    st.just("record"),
    st.sampled_from(SUBJECTS),
    st.sampled_from(ATTRIBUTES),
    st.sampled_from(VALUES),
    st.integers(min_value=0, max_value=30),  # day
    st.one_of(st.none(), st.integers(min_value=0, max_value=7)),  # source: a fact leaf or a leaf
)
leaf_op = st.tuples(
    st.just("leaf"),
    st.sampled_from(TEXTS),
    st.sampled_from(("Madrid", "Valencia", "Go", "Rust")),
    st.integers(min_value=0, max_value=30),
    st.sampled_from(("", "alpha", "beta")),
)
supersede_op = st.tuples(
    st.just("supersede"),
    st.integers(min_value=0, max_value=7),
    st.integers(min_value=0, max_value=7),
)
restore_op = st.tuples(st.just("restore"), st.integers(min_value=0, max_value=7))
operations = st.lists(
    st.one_of(record_op, record_op, leaf_op, leaf_op, supersede_op, restore_op),
    min_size=1,
    max_size=12,
)
# Forget a leaf (often one that corrected another): the timeline just before the store
# (as Memory does), or just after it. Facts about fewer keys, so that leaves meet.
forget_op = st.tuples(
    st.just("forget"),
    st.integers(min_value=0, max_value=7),
    st.booleans(),  # the timeline first
    st.booleans(),  # pick a leaf that corrected another, when there is one
)
dense_record_op = st.tuples(
    st.just("record"),
    st.just("user"),
    st.just("location"),
    st.sampled_from(("Madrid", "Valencia", "Sevilla")),
    st.integers(min_value=0, max_value=30),
    st.one_of(st.none(), st.integers(min_value=0, max_value=7)),
)
operations_with_forget = st.lists(
    st.one_of(dense_record_op, dense_record_op, leaf_op, supersede_op, restore_op, forget_op),
    min_size=6,
    max_size=20,
)


def _when(day: int) -> str:
    return f"2024-01-{1 + day:02d}"


def _dump(timeline: Timeline) -> tuple[object, ...]:
    return (
        tuple(timeline.history(s) for s in timeline.subjects()),
        timeline.contradictions(),
        timeline.facts(),
    )


def _run(store: Store, timeline: Timeline, ops: list[tuple[object, ...]]) -> set[str]:
    """Apply ``ops``; return the leaves forgotten (and not written again since)."""
    leaves: list[str] = []
    forgotten: set[str] = set()
    for position, op in enumerate(ops):
        kind = op[0]
        if kind == "leaf":
            _, template, value, day, project = op
            text = str(template).format(v=value)
            leaf = Leaf(
                leaf_id=leaf_id_for(domain="notes", source="prop", position=position, text=text),
                text=text,
                timestamp=_when(int(day)),
                domain="notes",
                project=str(project),
            )
            store.put_leaf(leaf)
            timeline.ingest(leaf)
            leaves.append(leaf.leaf_id)
        elif kind == "record":
            _, subject, attribute, value, day, source = op
            source_id = leaves[int(source) % len(leaves)] if source is not None and leaves else None
            recorded = timeline.record_fact(
                str(subject),
                str(attribute),
                str(value),
                timestamp=_when(int(day)),
                source=source_id,
            )
            leaves.append(recorded.fact.source)
        elif kind == "supersede" and len(leaves) >= 2:
            old = leaves[int(op[1]) % len(leaves)]
            new = leaves[int(op[2]) % len(leaves)]
            if old != new:
                timeline.supersede(old, new, "property test")
        elif kind == "restore" and leaves:
            timeline.restore(leaves[int(op[1]) % len(leaves)])
        elif kind == "forget" and leaves:
            pool = [leaf_id for leaf_id in leaves if store.corrections_of(leaf_id)]
            if not op[3] or not pool:
                pool = leaves
            gone = pool[int(op[1]) % len(pool)]
            if op[2]:  # the timeline first
                with store.locked():
                    timeline.forget(gone)
                    store.forget(gone)
            else:
                store.forget(gone)
                timeline.forget(gone)
            leaves = [leaf_id for leaf_id in leaves if leaf_id != gone]
            forgotten.add(gone)
    return {leaf_id for leaf_id in forgotten if store.entry(leaf_id) is None}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(ops=operations)
def test_any_sequence_of_facts_keeps_a_sound_timeline_that_rebuilds_identically(
    ops: list[tuple[object, ...]],
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="ihmt-facts-prop-"))
    try:
        store = Store.create(folder / "memory")
        timeline = Timeline(store)
        _run(store, timeline, ops)

        for subject in timeline.subjects():
            attributes = {s.attribute for s in timeline.history(subject)}
            for attribute in attributes:
                periods = timeline.history(subject, attribute)
                # at most one ACTIVE value, and only as the last period
                active = [p for p in periods if p.status is FactStatus.ACTIVE]
                assert len(active) <= 1
                if active:
                    assert periods[-1] is active[0] and active[0].valid_to is None
                    assert timeline.active(subject, attribute) == active[0]
                # intervals are ordered and never overlap
                for earlier, later in itertools.pairwise(periods):
                    assert earlier.valid_to is not None
                    assert earlier.valid_to <= later.valid_from
                for period in periods:
                    assert period.valid_to is None or period.valid_from <= period.valid_to
                    assert period.valid_from <= period.last_stated
                    # what held at its start is itself (unless it lasted no time at all)
                    if period.valid_to != period.valid_from:
                        assert timeline.at(period.valid_from, subject, attribute) is not None

        incremental = _dump(timeline)
        # the same store seen by a fresh process after its state was lost
        store.state_file("facts.jsonl").unlink()
        assert _dump(Timeline(Store.open(store.path))) == incremental
        assert Timeline(store).rebuild() == timeline.stats()
        assert _dump(timeline) == incremental
        store.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _leaves_named(timeline: Timeline) -> set[str]:
    """Every leaf id the timeline's answers mention."""
    named = {f.source for f in timeline.facts()}
    for subject in timeline.subjects():
        for period in timeline.history(subject):
            named.update(period.sources)
            named.add(period.superseded_by or "")
    for change in timeline.contradictions():
        named.update((*change.old_sources, change.new_source))
    return named


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(ops=operations_with_forget, slack=st.sampled_from((0, 3, 1000)))
def test_forgetting_leaves_one_by_one_gives_the_timeline_a_rebuild_without_them_gives(
    ops: list[tuple[object, ...]], slack: int
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="ihmt-facts-prop-"))
    try:
        with pytest.MonkeyPatch.context() as patch:
            # 0 compacts on nearly every write, 1000 never: removals meet both journals
            patch.setattr("ihmt_facts._timeline._COMPACT_SLACK", slack)
            store = Store.create(folder / "memory")
            timeline = Timeline(store)
            follower = Timeline(Store.open(store.path))  # another reader, loaded up front
            forgotten = _run(store, timeline, ops)

            incremental = _dump(timeline)
            assert not forgotten & _leaves_named(timeline)
            assert _dump(follower) == incremental  # it replayed the removals
            assert _dump(Timeline(Store.open(store.path))) == incremental  # a cold load
            for line in store.state_file("facts.jsonl").read_bytes().splitlines():
                assert not line.strip() or json.loads(line)  # whole lines, or blanked ones
            # a rebuild reads the leaves that are left, without the forgotten files
            assert Timeline(store).rebuild() == timeline.stats()
            assert _dump(timeline) == incremental
            store.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@settings(max_examples=40, deadline=None)
@given(
    facts=st.lists(
        st.tuples(st.sampled_from(VALUES), st.integers(min_value=0, max_value=30)),
        min_size=1,
        max_size=10,
        unique_by=lambda f: f[1],
    )
)
def test_without_corrections_the_active_value_is_the_latest_statement(
    facts: list[tuple[str, int]],
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="ihmt-facts-prop-"))
    try:
        timeline = Timeline(Store.create(folder / "memory"))
        for value, day in facts:
            timeline.record_fact("user", "location", value, timestamp=_when(day))

        latest_value = max(facts, key=lambda f: f[1])[0]
        active = timeline.active("user", "location")
        assert active is not None and active.value.casefold() == latest_value.casefold()
        changes = sum(
            1
            for (a, _), (b, _) in itertools.pairwise(sorted(facts, key=lambda f: f[1]))
            if a.casefold() != b.casefold()
        )
        assert len(timeline.contradictions()) == changes
        timeline.store.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
