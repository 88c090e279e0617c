from __future__ import annotations

import json
import select
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from ihmt_facts import JOURNAL_NAME, FactStatus, Timeline
from ihmt_store import Store

if TYPE_CHECKING:
    from conftest import PutLeaf


def _dump(timeline: Timeline) -> tuple[object, ...]:
    """Everything a reader can ask, in a comparable form."""
    return (
        timeline.subjects(),
        tuple(timeline.history(s) for s in timeline.subjects()),
        timeline.contradictions(),
        timeline.facts(),
        timeline.stats(),
    )


def _forget(store: Store, timeline: Timeline, leaf_id: str) -> int:
    """Forget a leaf the way ``ihmt_mcp.Memory.forget`` does: the timeline, then the leaf."""
    with store.locked():
        dropped = timeline.forget(leaf_id)
        store.forget(leaf_id)
    return dropped


# ------------------------------------------------------------------ what goes
def test_forgetting_a_leaf_drops_its_facts_from_facts_history_and_contradictions(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    madrid = put("I live in Madrid.", "2024-03-11")
    valencia = put("I moved to Valencia and I work at Globex.", "2026-02-03")
    timeline.ingest(madrid)
    timeline.ingest(valencia)
    assert len(timeline.contradictions()) == 1

    assert _forget(store, timeline, valencia.leaf_id) == 2

    assert timeline.facts_of(valencia.leaf_id) == ()
    assert [(f.value, f.source) for f in timeline.facts()] == [("Madrid", madrid.leaf_id)]
    assert timeline.contradictions() == ()
    assert timeline.history("user", "employer") == ()
    (only,) = timeline.history("user")
    assert (only.value, only.status, only.valid_to, only.superseded_by) == (
        "Madrid",
        FactStatus.ACTIVE,
        None,
        None,
    )
    stats = timeline.stats()
    assert (stats.leaves, stats.facts, stats.keys, stats.contradictions) == (1, 1, 1, 0)
    # the flag the change had set is gone from the leaf, and the timeline agrees with it
    assert store.read_leaf(madrid.leaf_id).outdated_by is None
    assert Timeline(store).rebuild() == stats


def test_a_value_the_forgotten_leaf_had_superseded_is_current_again(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    timeline.ingest(put("I live in Madrid.", "2024-01-01"))
    valencia = put("I moved to Valencia.", "2025-01-01")
    timeline.ingest(valencia)
    assert timeline.active("user", "location").value == "Valencia"

    _forget(store, timeline, valencia.leaf_id)

    active = timeline.active("user", "location")
    assert active is not None and active.value == "Madrid"
    assert timeline.at("2025-06-01", "user", "location").value == "Madrid"


def test_a_value_another_leaf_also_supersedes_stays_superseded(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    madrid = put("I live in Madrid.", "2024-01-01")
    first = put("I moved to Valencia.", "2025-01-01")
    again = put("I live in Valencia.", "2025-06-01")
    for leaf in (madrid, first, again):
        timeline.ingest(leaf)

    _forget(store, timeline, first.leaf_id)

    old, new = timeline.history("user", "location")
    assert (old.value, old.status, old.superseded_by) == (
        "Madrid",
        FactStatus.HISTORICAL,
        again.leaf_id,
    )
    assert (new.value, new.valid_from, new.sources) == (
        "Valencia",
        "2025-06-01T00:00:00Z",
        (again.leaf_id,),
    )
    (change,) = timeline.contradictions()
    assert change.new_source == again.leaf_id


def test_forgetting_a_middle_value_joins_its_neighbours_into_one_change(
    store: Store, timeline: Timeline
) -> None:
    timeline.record_fact("host:db01", "port", "5432", timestamp="2024-01-01")
    middle = timeline.record_fact("host:db01", "port", "6432", timestamp="2024-06-01")
    last = timeline.record_fact("host:db01", "port", "7432", timestamp="2025-01-01")

    _forget(store, timeline, middle.fact.source)

    (change,) = timeline.contradictions()
    assert (change.old_value, change.new_value, change.new_source) == (
        "5432",
        "7432",
        last.fact.source,
    )


def test_facts_a_forgotten_correction_had_retired_are_current_again(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    old = put("I work at Acme.", "2024-01-01")
    note = put("Correction: that changed, see the new notes.", "2025-01-01")
    timeline.ingest(old)
    timeline.ingest(note)
    timeline.supersede(old.leaf_id, note.leaf_id)
    assert timeline.active("user", "employer") is None

    # the correcting leaf holds no fact: nothing to drop, but its correction goes
    assert _forget(store, timeline, note.leaf_id) == 0

    active = timeline.active("user", "employer")
    assert active is not None and (active.value, active.superseded_by) == ("Acme", None)
    assert store.entry(old.leaf_id).status == "active"
    assert _dump(Timeline(Store.open(store.path))) == _dump(timeline)


def test_forgetting_a_leaf_the_timeline_holds_nothing_about_is_a_no_op(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    timeline.ingest(put("I live in Madrid.", "2024-01-01"))
    plain = put("The weekly sync moved to Thursdays.", "2024-02-01")
    assert timeline.ingest(plain) == ()
    journal = store.state_file(JOURNAL_NAME)
    before = (journal.read_bytes(), journal.stat().st_ino)
    state = _dump(timeline)

    assert timeline.forget(plain.leaf_id) == 0
    assert timeline.forget("L-nowhere-0000-0000000000") == 0

    assert (journal.read_bytes(), journal.stat().st_ino) == before
    assert _dump(timeline) == state


def test_forgetting_twice_drops_the_facts_once(timeline: Timeline, put: PutLeaf) -> None:
    leaf = put("I live in Madrid.", "2024-01-01")
    timeline.ingest(leaf)

    assert timeline.forget(leaf.leaf_id) == 1
    assert timeline.forget(leaf.leaf_id) == 0
    assert timeline.facts() == ()


# ------------------------------------------------------------------ the order of the two calls
@pytest.mark.parametrize("timeline_first", [True, False], ids=["before", "after"])
def test_forgetting_before_or_after_the_store_gives_the_timeline_a_rebuild_gives(
    store: Store, timeline: Timeline, put: PutLeaf, timeline_first: bool
) -> None:
    madrid = put("I live in Madrid and I work at Acme.", "2024-01-01")
    gone = put("I moved to Valencia.", "2025-01-01")
    note = put("Paciente: Ana Ruiz\nDiagnóstico: asma", "2025-02-01")
    for leaf in (madrid, gone, note):
        timeline.ingest(leaf)
    timeline.supersede(note.leaf_id, gone.leaf_id, "wrong patient")
    timeline.record_fact("user", "editor", "Helix", source=gone.leaf_id)
    assert timeline.active("patient:ana ruiz", "diagnosis") is None

    if timeline_first:
        dropped = _forget(store, timeline, gone.leaf_id)
    else:
        store.forget(gone.leaf_id)
        dropped = timeline.forget(gone.leaf_id)

    assert dropped == 2
    assert timeline.active("user", "location").value == "Madrid"
    assert timeline.active("patient:ana ruiz", "diagnosis").value == "asma"
    assert timeline.active("user", "editor") is None
    incremental = _dump(timeline)
    assert _dump(Timeline(Store.open(store.path))) == incremental  # replaying the journal
    Timeline(store).rebuild()
    assert _dump(Timeline(Store.open(store.path))) == incremental  # reading every leaf


# ------------------------------------------------------------------ the journal
def test_forgetting_appends_one_line_per_leaf_touched_and_rewrites_nothing(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    for day in range(1, 21):
        timeline.record_fact(
            f"host:h{day}", "port", str(8000 + day), timestamp=f"2024-01-{day:02d}"
        )
    madrid = put("I live in Madrid.", "2024-03-11")
    gone = put("I moved to Valencia.", "2026-02-03")
    timeline.ingest(madrid)
    timeline.ingest(gone)
    journal = store.state_file(JOURNAL_NAME)
    before = journal.read_bytes()
    inode = journal.stat().st_ino

    _forget(store, timeline, gone.leaf_id)

    after = journal.read_bytes()
    assert journal.stat().st_ino == inode
    # the earlier lines stay where they were; only the forgotten leaf's is blanked
    changed = [
        (old, new)
        for old, new in zip(before.splitlines(), after[: len(before)].splitlines(), strict=True)
        if old != new
    ]
    assert [json.loads(old)["l"] for old, _ in changed] == [gone.leaf_id]
    assert all(len(new) == len(old) and not new.strip() for old, new in changed)
    added = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert sorted((item["l"], bool(item["f"]), item["o"]) for item in added) == sorted(
        [(madrid.leaf_id, True, None), (gone.leaf_id, False, None)]
    )


def test_the_forgotten_values_leave_the_journal_file(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    timeline.ingest(put("I live in Madrid.", "2024-03-11"))
    gone = put("I work at Zanzibarquux Labs.", "2025-01-01")
    timeline.ingest(gone)
    timeline.record_fact("user", "editor", "Quuxedit", source=gone.leaf_id)  # a second line
    journal = store.state_file(JOURNAL_NAME)
    original = journal.read_bytes()
    assert original.count(b"Zanzibarquux") == 2 and b"Quuxedit" in original

    _forget(store, timeline, gone.leaf_id)

    data = journal.read_bytes()
    assert b"Zanzibarquux" not in data and b"Quuxedit" not in data
    # overwritten in place: every earlier line keeps its length and place
    lengths = [len(line) for line in original.split(b"\n")]
    assert [len(line) for line in data[: len(original)].split(b"\n")] == lengths
    assert _dump(Timeline(Store.open(store.path))) == _dump(timeline)


def test_a_forgotten_leaf_stays_forgotten_through_compaction(
    monkeypatch: pytest.MonkeyPatch, store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    monkeypatch.setattr("ihmt_facts._timeline._COMPACT_SLACK", 3)
    madrid = put("I live in Madrid.", "2024-01-01")
    gone = put("I moved to Valencia.", "2025-01-01")
    note = put("Unrelated note.", "2025-06-01")
    for leaf in (madrid, gone, note):
        timeline.ingest(leaf)
    reader = Timeline(Store.open(store.path))  # holds the file's position before compaction
    assert reader.active("user", "location").value == "Valencia"
    _forget(store, timeline, gone.leaf_id)
    journal = store.state_file(JOURNAL_NAME)
    header = journal.read_bytes().splitlines()[0]  # a compaction writes a new epoch

    for _ in range(4):  # lines without new leaves, until the journal is compacted
        timeline.supersede(madrid.leaf_id, note.leaf_id)
        timeline.restore(madrid.leaf_id)

    assert journal.read_bytes().splitlines()[0] != header
    assert timeline.active("user", "location").value == "Madrid"
    assert _dump(reader) == _dump(timeline)
    assert _dump(Timeline(Store.open(store.path))) == _dump(timeline)
    Timeline(store).rebuild()
    assert _dump(Timeline(Store.open(store.path))) == _dump(timeline)


# ------------------------------------------------------------------ other processes
_FOLLOWER = textwrap.dedent(
    """
    import json
    import sys
    from ihmt_store import Store
    from ihmt_facts import Timeline

    def view(timeline):
        active = timeline.active("user", "location")
        return {
            "active": active.value if active else None,
            "facts": sorted(f.value for f in timeline.facts()),
            "changes": len(timeline.contradictions()),
        }

    follower = Timeline(Store.open(sys.argv[1]))
    print(json.dumps(view(follower)), flush=True)
    sys.stdin.readline()  # the test forgets a leaf meanwhile
    fresh = Timeline(Store.open(sys.argv[1]))
    print(json.dumps({"follower": view(follower), "fresh": view(fresh)}), flush=True)
    """
)


def _read_line(proc: subprocess.Popen[str], timeout: float = 60) -> Any:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline() if ready else ""
    if not line:
        proc.kill()
        _, err = proc.communicate(timeout=timeout)
        pytest.fail(f"the other process said nothing: {err}")
    return json.loads(line)


def test_another_process_sees_the_removal(store: Store, timeline: Timeline, put: PutLeaf) -> None:
    timeline.ingest(put("I live in Madrid.", "2024-03-11"))
    gone = put("I moved to Valencia.", "2026-02-03")
    timeline.ingest(gone)
    proc = subprocess.Popen(
        [sys.executable, "-c", _FOLLOWER, str(store.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert _read_line(proc) == {
            "active": "Valencia",
            "facts": ["Madrid", "Valencia"],
            "changes": 1,
        }

        _forget(store, timeline, gone.leaf_id)
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()

        after = {"active": "Madrid", "facts": ["Madrid"], "changes": 0}
        assert _read_line(proc) == {"follower": after, "fresh": after}
    finally:
        proc.kill()
        proc.communicate(timeout=60)


def test_a_process_that_forgets_leaves_others_a_journal_they_can_extend(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    madrid = put("I live in Madrid.", "2024-03-11")
    gone = put("I moved to Valencia.", "2026-02-03")
    timeline.ingest(madrid)
    timeline.ingest(gone)
    other = Timeline(Store.open(store.path))

    _forget(store, timeline, gone.leaf_id)
    other.record_fact("user", "location", "Sevilla", timestamp="2026-06-01")

    assert _dump(timeline) == _dump(other)
    assert [s.value for s in timeline.history("user", "location")] == ["Madrid", "Sevilla"]
