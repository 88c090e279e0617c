"""The timeline refolds only where a leaf's events fall: the same result as folding all.

``reference`` below is the fold the timeline used to run over a key's whole history on
every leaf (which made a bulk ingest quadratic in the statements of one key). Every
incremental step must give exactly what it gives, and report as new exactly the
changes it holds with the leaf and did not hold without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ihmt_facts import Contradiction, Fact, FactState, FactStatus, Timeline
from ihmt_facts._fold import State, change_id
from ihmt_facts._journal import LeafRecord, Outdated
from ihmt_facts._records import value_key
from ihmt_store import Leaf, Store, StoreConfig, leaf_id_for

KEYS = (("user", "location"), ("user", "editor"), ("project:alpha", "stack"))
VALUES = ("Madrid", "madrid", "Valencia", "Vim", "Go")
LEAVES = tuple(f"leaf-{i}" for i in range(8))


def _day(n: int) -> str:
    return f"2024-01-{1 + n:02d}T00:00:00Z"


@dataclass
class _Run:
    value: str
    start: str
    sources: list[str]
    last: str
    count: int
    live: set[tuple[str, int]]


def reference(
    state: State, key: tuple[str, str]
) -> tuple[tuple[FactState, ...], list[Contradiction]]:
    """Fold every event of ``key`` from scratch (the timeline's former algorithm)."""
    events: list[tuple[str, int, str, int, Fact, str | None]] = []
    for leaf_id in state.by_key.get(key, ()):
        record = state.leaves[leaf_id]
        retire = record.outdated
        if retire is not None and state.explained(leaf_id, retire[0]):
            retire = None
        for index, f in enumerate(record.facts):
            if (f.subject, f.attribute) != key:
                continue
            events.append((f.timestamp, 0, leaf_id, index, f, None))
            if retire is not None:
                events.append((max(retire[1], f.timestamp), 1, leaf_id, index, f, retire[0]))
    events.sort(key=lambda e: e[:4])
    states: list[FactState] = []
    changes: list[Contradiction] = []
    current: _Run | None = None

    def state_of(run: _Run, end: str | None, by: str | None) -> FactState:
        return FactState(
            subject=key[0],
            attribute=key[1],
            value=run.value,
            status=FactStatus.ACTIVE if end is None else FactStatus.HISTORICAL,
            valid_from=run.start,
            valid_to=end,
            superseded_by=by,
            sources=tuple(run.sources),
            last_stated=run.last,
            statements=run.count,
        )

    for moment, kind, leaf_id, index, f, by in events:
        if kind == 1:
            if current is not None and (leaf_id, index) in current.live:
                current.live.discard((leaf_id, index))
                if not current.live:
                    states.append(state_of(current, moment, by))
                    current = None
            continue
        if current is not None and value_key(current.value) == value_key(f.value):
            current.live.add((leaf_id, index))
            if leaf_id not in current.sources:
                current.sources.append(leaf_id)
            current.last = moment
            current.count += 1
            continue
        if current is not None:
            states.append(state_of(current, moment, leaf_id))
            changes.append(
                Contradiction(
                    subject=key[0],
                    attribute=key[1],
                    old_value=current.value,
                    new_value=f.value,
                    old_date=current.last,
                    new_date=moment,
                    old_sources=tuple(current.sources),
                    new_source=leaf_id,
                )
            )
        current = _Run(f.value, moment, [leaf_id], moment, 1, {(leaf_id, index)})
    if current is not None:
        states.append(state_of(current, None, None))
    return tuple(states), changes


fact = st.tuples(
    st.sampled_from(KEYS), st.sampled_from(VALUES), st.integers(min_value=0, max_value=20)
)
record = st.tuples(
    st.sampled_from(LEAVES),
    st.lists(fact, max_size=3),
    st.one_of(
        st.none(),
        st.tuples(st.sampled_from(LEAVES), st.integers(min_value=0, max_value=25)),
    ),
)


def _record(
    leaf_id: str, facts: list[tuple[tuple[str, str], str, int]], outdated: object
) -> LeafRecord:
    made: list[Fact] = []
    for (subject, attribute), value, day in facts:
        f = Fact(
            subject=subject, attribute=attribute, value=value, timestamp=_day(day), source=leaf_id
        )
        if f not in made:
            made.append(f)
    correction = None
    if isinstance(outdated, tuple) and outdated[0] != leaf_id:
        correction = Outdated(str(outdated[0]), _day(int(outdated[1])))
    return LeafRecord(leaf_id, tuple(made), correction)


@settings(max_examples=400, deadline=None)
@given(st.lists(record, min_size=1, max_size=25))
def test_every_incremental_step_equals_a_fold_from_scratch(
    ops: list[tuple[str, list[tuple[tuple[str, str], str, int]], object]],
) -> None:
    state = State()
    for leaf_id, facts, outdated in ops:
        new = _record(leaf_id, facts, outdated)
        keys = set(KEYS)
        before = {k: {change_id(c) for c in reference(state, k)[1]} for k in keys}
        moved = state.put(new)
        for key in keys:
            states, changes = reference(state, key)
            assert state.timeline(key).states == states
            assert list(state.timeline(key).changes) == changes
            gained = moved.get(key, ([], []))
            reported = {change_id(c) for c in gained[1]} - {change_id(c) for c in gained[0]}
            assert reported == {change_id(c) for c in changes} - before[key]
    # A state loaded in one pass holds the same timelines.
    loaded = State.load(state.leaves.values())
    for key in KEYS:
        assert loaded.timeline(key) == state.timeline(key)


def test_statements_appended_in_date_order_gain_one_change_per_switch() -> None:
    """One key stated 5,000 times, each leaf dated after the last (a journal read in order)."""
    state = State()
    for i in range(5000):
        value = "Madrid" if (i // 100) % 2 == 0 else "Valencia"
        leaf = f"leaf-{i:05d}"
        when = f"20{10 + i // 365:02d}-01-01T00:00:00Z"
        moved = state.put(
            LeafRecord(
                leaf,
                (
                    Fact(
                        subject="user",
                        attribute="location",
                        value=value,
                        timestamp=when,
                        source=leaf,
                    ),
                ),
                None,
            )
        )
        lost, gained = moved.get(("user", "location"), ([], []))
        assert lost == []
        assert len(gained) == (1 if i % 100 == 0 and i else 0)
    timeline = state.timeline(("user", "location"))
    assert len(timeline.states) == 50
    assert len(timeline.changes) == 49
    assert timeline.states[-1].statements == 100


def test_ingesting_many_leaves_at_once_equals_ingesting_them_one_by_one(tmp_path: Path) -> None:
    """One lock and one store commit for a bulk ingest: the same outcomes, timeline and
    OUTDATED flags on disk as one call per leaf (out of date order, with changes)."""
    texts = [
        ("I live in Madrid.", "2024-03-01"),
        ("Our stack is Go.", "2024-01-01"),
        ("I moved to Valencia.", "2025-02-01"),
        ("I live in Madrid.", "2024-06-01"),
        ("Our stack is Rust.", "2024-09-01"),
        ("Nothing to see here.", "2024-07-01"),
        ("I moved to Sevilla.", "2024-12-01"),
    ]
    outcomes = []
    dumps = []
    flags = []
    for name, bulk in (("single", False), ("bulk", True)):
        store = Store.create(tmp_path / name, StoreConfig())
        timeline = Timeline(store)
        leaves = [
            store.put_leaf(
                Leaf(
                    leaf_id=leaf_id_for(domain="personal", source="t", position=i, text=text),
                    text=text,
                    timestamp=when,
                    domain="personal",
                    source="t",
                    project="alpha",
                )
            )
            for i, (text, when) in enumerate(texts)
        ]
        if bulk:
            results = list(timeline.ingest_many(leaves))
        else:
            results = [timeline.ingest(leaf) for leaf in leaves]
        outcomes.append([[(r.outcome, r.notices) for r in rs] for rs in results])
        dumps.append(
            (
                tuple(timeline.history(s) for s in timeline.subjects()),
                timeline.contradictions(),
                timeline.facts(),
            )
        )
        flags.append([store.read_leaf(leaf.leaf_id).outdated_by for leaf in leaves])
        assert _dump_reloaded(store) == dumps[-1]
        store.close()
    assert outcomes[0] == outcomes[1]
    assert dumps[0] == dumps[1]
    assert flags[0] == flags[1]
    assert any(flag is not None for flag in flags[0])


def _dump_reloaded(store: Store) -> tuple[object, ...]:
    fresh = Timeline(Store.open(store.path))
    return (
        tuple(fresh.history(s) for s in fresh.subjects()),
        fresh.contradictions(),
        fresh.facts(),
    )
