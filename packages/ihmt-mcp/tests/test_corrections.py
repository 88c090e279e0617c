"""Corrections: ``save(..., replaces=...)`` marks the memory the hint describes, or nothing and
lists the candidates; ``mark_outdated`` refuses cycles; dates stay real.

A wrong OUTDATED mark hides a true memory, which is worse than no mark: these tests hold the
rules on small hand-made stores.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_mcp import Memory
from ihmt_navigator import InvalidFilterError


def _entry_outdated_by(memory: Memory, leaf_id: str) -> str | None:
    entry = memory.store.entry(leaf_id)
    assert entry is not None
    return entry.outdated_by


def test_the_memory_holding_the_hints_version_is_marked_not_one_sharing_the_project_name(
    memory: Memory,
) -> None:
    upgrade = memory.save(
        "Upgraded the heron CI runners; builds are about a third faster.",
        project="heron",
        date="2025-01-10",
    ).ids[0]
    go = memory.save(
        "heron builds with Go 1.21 and golangci-lint 1.55.", project="heron", date="2025-02-01"
    ).ids[0]
    new = memory.save(
        "heron upgraded to Go 1.23; golangci-lint 1.61 came with it.",
        project="heron",
        date="2025-09-01",
        replaces="heron upgraded Go 1.21",
    )
    assert new.replaced.status == "replaced"
    assert new.replaced.replaced == (go,)
    assert _entry_outdated_by(memory, go) == new.ids[0]
    assert _entry_outdated_by(memory, upgrade) is None
    # the answer names what was marked: its id, its date and its first words
    message = new.replaced.message
    assert go in message and "2025-02-01" in message and "heron builds with Go 1.21" in message


def test_a_correction_chain_where_the_third_hint_describes_the_first_memory(
    memory: Memory,
) -> None:
    a = memory.save(
        "The wren nightly export runs at 02:00 from cron on box ash-3.",
        project="wren",
        date="2024-01-05",
    ).ids[0]
    b = memory.save(
        "The wren export moved to a systemd timer on ash-3, still nightly.",
        project="wren",
        date="2024-06-01",
        replaces="wren nightly export cron",
    ).ids[0]
    assert _entry_outdated_by(memory, a) == b
    # C's hint repeats A's words: A is its target although A is already OUTDATED, and
    # so is B, what A's thing said until C: C corrects the export as it stands
    c = memory.save(
        "The wren export runs every hour now, from an Airflow DAG.",
        project="wren",
        date="2025-03-01",
        replaces="wren nightly export 02:00 cron ash-3",
    )
    assert c.replaced.status == "replaced" and c.replaced.replaced == (a, b)
    assert _entry_outdated_by(memory, a) == c.ids[0]
    assert _entry_outdated_by(memory, b) == c.ids[0]
    answer = memory.search("how does the wren export run?", project="wren")
    assert answer.best is not None and answer.best.id == c.ids[0]


def test_two_memories_that_fit_the_hint_equally_are_listed_and_neither_is_marked(
    memory: Memory,
) -> None:
    first = memory.save(
        "kite staging database is Postgres 15 on db-stg-1.", project="kite", date="2024-02-01"
    ).ids[0]
    second = memory.save(
        "kite staging cache is Redis 7 on db-stg-2.", project="kite", date="2024-02-02"
    ).ids[0]
    new = memory.save(
        "kite staging moved to Fly.io.", project="kite", date="2025-01-01", replaces="kite staging"
    )
    assert new.replaced.status == "ambiguous"
    assert set(new.replaced.candidates) >= {first, second}
    assert _entry_outdated_by(memory, first) is None
    assert _entry_outdated_by(memory, second) is None
    assert f'mark_outdated(old_id="{first}", new_id="{new.ids[0]}")' in new.replaced.message


def test_a_hint_that_matches_nothing_marks_nothing_and_says_how_to_settle_it(
    memory: Memory,
) -> None:
    memory.save("lark deploys with Kamal to two VPS.", project="lark", date="2024-01-01")
    new = memory.save(
        "lark logs go to Loki now.",
        project="lark",
        date="2025-01-01",
        replaces="the grafana dashboard password rotation",
    )
    assert new.replaced.status == "not_found" and new.replaced.replaced == ()
    assert "mark_outdated" in new.replaced.message
    assert memory.stats().outdated == 0


def test_a_long_hint_is_not_echoed_whole(memory: Memory) -> None:
    memory.save("swift deploys on Fridays.", project="swift", date="2024-01-01")
    hint = "unrelated words " * 5_000
    new = memory.save("swift deploys on Mondays.", project="swift", replaces=hint)
    assert len(new.replaced.message) < 1_000


def test_a_hint_naming_two_memories_marks_both(memory: Memory) -> None:
    for n in range(20):
        memory.save(f"Lunch note {n}: the canteen serves soup on day {n}.", project="")
    tofu = memory.save(
        "wren-ops migrated from Chef 17.4 to Nomad 1.7 and encrypts its secrets.",
        project="wren-ops",
        date="2024-11-19",
    ).ids[0]
    lock = memory.save(
        "wren-ops keeps job state in Consul with Consul locks on the wren-locks key.",
        project="wren-ops",
        date="2022-06-20",
    ).ids[0]
    memory.save("wren-ops CI runs shellcheck on every PR.", project="wren-ops", date="2023-01-01")
    new = memory.save(
        "wren-ops moved up to Nomad 1.9 and dropped Consul locks for leader election.",
        project="wren-ops",
        date="2025-09-01",
        replaces="wren-ops on Nomad 1.7 with Consul locks",
    )
    assert new.replaced.status == "replaced"
    assert set(new.replaced.replaced) == {tofu, lock}
    assert _entry_outdated_by(memory, tofu) == _entry_outdated_by(memory, lock) == new.ids[0]
    assert tofu in new.replaced.message and lock in new.replaced.message


def test_a_hint_fitting_a_memory_and_its_correction_equally_marks_the_current_one(
    memory: Memory,
) -> None:
    for n in range(20):
        memory.save(f"Lunch note {n}: the canteen serves soup on day {n}.", project="")
    old = memory.save(
        "heron exception: Python indentation uses 4 spaces, not tabs.",
        project="heron",
        date="2025-03-22",
    ).ids[0]
    current = memory.save(
        "From now on use tabs for Python indentation in heron instead of 4 spaces; review "
        "76210 has the reasons and the editorconfig change that goes with it.",
        project="heron",
        date="2025-12-23",
        replaces="heron Python indentation 4 spaces",
    ).ids[0]
    assert _entry_outdated_by(memory, old) == current
    newest = memory.save(
        "heron Python indentation: 2 spaces from now on, no tabs.",
        project="heron",
        date="2026-05-31",
        replaces="use tabs for Python indentation",
    )
    assert newest.replaced.replaced == (current,)


def test_mark_outdated_refuses_a_cycle(memory: Memory) -> None:
    a = memory.save("kite runs on fly.io", project="kite", date="2024-01-01").ids[0]
    b = memory.save("kite runs on render", project="kite", date="2024-06-01").ids[0]
    c = memory.save("kite runs on hetzner", project="kite", date="2025-01-01").ids[0]
    memory.mark_outdated(a, b)
    memory.mark_outdated(b, c)
    with pytest.raises(ValueError, match="cycle"):
        memory.mark_outdated(c, a)
    assert _entry_outdated_by(memory, c) is None
    best = memory.search("where does kite run?", project="kite").best
    assert best is not None and best.id == c


def test_dates_far_in_the_future_are_refused_and_year_one_is_a_date(memory: Memory) -> None:
    with pytest.raises(ValueError, match="in the future"):
        memory.save("a memory from the far future", date="9999-12-31")
    old = memory.save("a memory from long ago", date="0001-01-01")
    assert old.timestamp == "0001-01-01T00:00:00Z"
    with pytest.raises(InvalidFilterError, match="'not a date'"):
        memory.search("memory", as_of="not a date")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(marks=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12))
def test_no_sequence_of_marks_leaves_a_cycle(memory: Memory, marks: list[tuple[int, int]]) -> None:
    ids = [
        memory.save(f"hawk note {memory.store.count()} number {n}", project="hawk").ids[0]
        for n in range(5)
    ]
    for old, new in marks:
        try:
            memory.mark_outdated(ids[old], ids[new])
        except ValueError:
            pass  # itself, or a cycle: refused, nothing changed
    for start in ids:
        seen = {start}
        entry = memory.store.entry(start)
        while entry is not None and entry.outdated_by:
            assert entry.outdated_by not in seen, "a correction chain loops"
            seen.add(entry.outdated_by)
            entry = memory.store.entry(entry.outdated_by)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(day=st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)))
def test_any_date_is_saved_as_four_digit_iso_or_refused_as_the_future(
    memory: Memory, day: date
) -> None:
    text = f"a memory of {day.isoformat()} about herons"
    if day > date.today() + timedelta(days=1):
        with pytest.raises(ValueError, match="in the future"):
            memory.save(text, date=day.isoformat())
    elif day <= date.today():
        saved = memory.save(text, date=day.isoformat())
        assert saved.timestamp == f"{day.isoformat()}T00:00:00Z"


@pytest.mark.parametrize("port", ["6543", "6544", "6545", "6546"])
def test_a_correction_saved_the_same_day_is_the_one_current_memory(
    memory: Memory, port: str
) -> None:
    """Two saves of one day: the fact timeline orders same-day statements by id and may
    take the old memory for the new; ``replaces`` settles it, and the two memories never
    end up each flagged OUTDATED by the other."""
    old = memory.save("The staging database runs on port 5432.", date="2026-01-05").ids[0]
    new = memory.save(
        f"The staging database runs on port {port} now.",
        replaces="staging database port",
        date="2026-01-05",
    ).ids[0]
    assert (_entry_outdated_by(memory, old), _entry_outdated_by(memory, new)) == (new, None)
    best = memory.search("which port does the staging database use?").best
    assert best is not None and best.id == new


def test_a_replaces_correction_outdates_only_the_part_its_hint_describes(
    memory: Memory,
) -> None:
    old = memory.save(
        "Build box hb-3 sits in rack B3; its IP is 10.0.4.17 and the data team owns it.",
        date="2025-01-10",
    ).ids[0]
    new = memory.save(
        "Build box hb-3 moved to rack B7.", date="2025-09-01", replaces="hb-3 rack B3"
    ).ids[0]
    assert _entry_outdated_by(memory, old) == new
    # the timeline lists the correction where the navigator reads it
    (item,) = memory.store.read_leaf(old).extra["corrections"]
    assert (item["by"], item["hint"]) == (new, "hb-3 rack B3")

    rack = memory.search("which rack is hb-3 in?")
    assert [h.id for h in rack.results[:2]] == [new, old] and rack.results[1].outdated
    assert any('"hb-3 rack B3" changed on 2025-09-01' in n for n in rack.notices)
    owner = memory.search("which team owns hb-3?")
    assert owner.results[0].id == old and not owner.results[0].outdated
    assert not any("OUTDATED" in n for n in owner.notices)


def test_each_search_sees_the_saves_and_forgets_made_since_the_last(memory: Memory) -> None:
    # What a search reads (leaves, corrections judged) lasts for that search only.
    question = "when does the orrin nightly export run?"
    old = memory.save(
        "The orrin nightly export runs at 02:00 from cron on box ash-3.",
        project="orrin",
        date="2024-01-05",
    ).ids[0]
    first = memory.search(question, project="orrin")
    assert first.results[0].id == old and not first.results[0].outdated
    new = memory.save(
        "The orrin nightly export now runs at 04:30 from cron on box ash-3.",
        project="orrin",
        date="2024-06-01",
        replaces="orrin nightly export 02:00",
    ).ids[0]
    second = memory.search(question, project="orrin")
    assert second.results[0].id == new
    assert [h.outdated for h in second.results if h.id == old] == [True]
    memory.forget(new)
    third = memory.search(question, project="orrin")
    assert [h.id for h in third.results] == [old] and not third.results[0].outdated


def test_a_correction_of_a_thing_corrected_before_replaces_its_current_statement_too(
    memory: Memory,
) -> None:
    # holds the hint's words too, but not as the hint says them
    chair = memory.save(
        "Ines runs the gym and signs off any change to the plan prices.",
        project="wren",
        date="2022-08-03",
    ).ids[0]
    rates = memory.save(
        "Plan prices for the gym: 25 a month single, 40 for a couple, 60 for a family.",
        project="wren",
        date="2023-01-16",
    ).ids[0]
    one_rate = memory.save(
        "The single plan price goes up to 29 a month from March.",
        project="wren",
        date="2024-03-04",
        replaces="plan prices single",
    )
    assert one_rate.replaced.replaced == (rates,)
    latest = memory.save(
        "Plan prices 2025: 32 single, 45 for a couple, 66 for a family.",
        project="wren",
        date="2025-08-04",
        replaces="plan prices for the gym",
    )
    new = latest.ids[0]
    assert set(latest.replaced.replaced) == {rates, one_rate.ids[0]}
    assert _entry_outdated_by(memory, one_rate.ids[0]) == new
    assert _entry_outdated_by(memory, rates) == new
    assert _entry_outdated_by(memory, chair) is None
