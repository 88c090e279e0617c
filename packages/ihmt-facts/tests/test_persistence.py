from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ihmt_facts import JOURNAL_NAME, Timeline
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
    )


def _story(timeline: Timeline, put: PutLeaf) -> None:
    timeline.ingest(put("I live in Madrid and I work at Acme.", "2024-03-11"))
    timeline.ingest(put("I moved to Valencia.", "2026-02-03"))
    timeline.ingest(put("We migrated the backend to Go.", "2025-01-01", project="alpha"))
    timeline.ingest(put("Paciente: Ana Ruiz\nDiagnóstico: asma", "2024-05-05"))
    old = put("Staging runs on PostgreSQL 16.", "2024-01-01", project="alpha")
    timeline.ingest(old)
    note = put("Ops handbook rewritten, see wiki.", "2025-06-01")
    timeline.ingest(note)
    timeline.supersede(old.leaf_id, note.leaf_id, "rewritten")
    timeline.record_fact("user", "location", "Sevilla", timestamp="2025-01-01")
    timeline.record_fact("host:db01", "port", "5432", source=note.leaf_id)


def test_the_timeline_rebuilt_from_the_leaves_equals_the_incremental_one(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    _story(timeline, put)
    incremental = _dump(timeline)

    stats = Timeline(store).rebuild()

    assert _dump(timeline) == incremental
    assert (stats.facts, stats.subjects) == (len(timeline.facts()), len(timeline.subjects()))


def test_losing_the_state_folder_loses_nothing(
    tmp_path: Path, store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    _story(timeline, put)
    incremental = _dump(timeline)
    store.close()
    copy = tmp_path / "elsewhere"
    os.rename(store.path, copy)
    for item in (copy / "state").iterdir():
        item.unlink()

    reopened = Timeline(Store.open(copy))

    assert _dump(reopened) == incremental


def test_a_damaged_journal_is_rebuilt_with_a_warning(
    store: Store, timeline: Timeline, put: PutLeaf, caplog: pytest.LogCaptureFixture
) -> None:
    _story(timeline, put)
    incremental = _dump(timeline)
    journal = store.state_file(JOURNAL_NAME)
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:2]) + b'{"l": broken\n' + b"".join(lines[2:]))

    with caplog.at_level(logging.WARNING, logger="ihmt_facts"):
        reopened = Timeline(store)

    assert _dump(reopened) == incremental
    assert "damaged" in caplog.text


def test_a_journal_from_a_newer_version_is_replaced_not_trusted(
    store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    timeline.ingest(put("I live in Madrid.", "2024-01-01"))
    store.state_file(JOURNAL_NAME).write_text('{"ihmt_facts": 99}\n{"whatever": 1}\n')

    assert Timeline(store).active("user", "location").value == "Madrid"


def test_recording_a_fact_appends_one_line_and_rewrites_nothing(
    store: Store, timeline: Timeline
) -> None:
    for day in range(1, 21):
        timeline.record_fact(
            f"host:h{day}", "port", str(8000 + day), timestamp=f"2024-01-{day:02d}"
        )
    journal = store.state_file(JOURNAL_NAME)
    before = journal.read_bytes()
    inode = journal.stat().st_ino

    timeline.record_fact("host:h99", "port", "9999", timestamp="2024-02-01")

    after = journal.read_bytes()
    assert journal.stat().st_ino == inode
    assert after.startswith(before)
    (line,) = after[len(before) :].splitlines()
    assert json.loads(line)["f"] == [
        ["host:h99", "port", "9999", "2024-02-01T00:00:00Z", "explicit"]
    ]


def test_the_journal_is_compacted_once_it_holds_mostly_history(
    monkeypatch: pytest.MonkeyPatch, store: Store, timeline: Timeline, put: PutLeaf
) -> None:
    monkeypatch.setattr("ihmt_facts._timeline._COMPACT_SLACK", 4)
    old = put("I live in Madrid.", "2024-01-01")
    new = put("Unrelated note.", "2024-06-01")
    timeline.ingest(old)
    other = Timeline(store)  # another reader, holding the old file's position
    inode = store.state_file(JOURNAL_NAME).stat().st_ino
    for _ in range(4):
        timeline.supersede(old.leaf_id, new.leaf_id)
        timeline.restore(old.leaf_id)

    assert store.state_file(JOURNAL_NAME).stat().st_ino != inode
    assert len(store.state_file(JOURNAL_NAME).read_text().splitlines()) <= 1 + 2 * 1 + 4
    timeline.supersede(old.leaf_id, new.leaf_id)
    assert other.active("user", "location") is None  # it followed the rewrite
    assert _dump(other) == _dump(timeline)


def test_an_unfinished_line_left_by_a_killed_writer_is_ignored_then_cut(
    store: Store, timeline: Timeline
) -> None:
    timeline.record_fact("user", "location", "Madrid", timestamp="2024-01-01")
    journal = store.state_file(JOURNAL_NAME)
    with open(journal, "ab") as handle:
        handle.write(b'{"l":"L-facts-0000-aaaaaaaaaa","f":[["user","loc')

    reader = Timeline(store)
    assert reader.active("user", "location").value == "Madrid"

    reader.record_fact("user", "location", "Valencia", timestamp="2025-01-01")

    for line in journal.read_bytes().splitlines():
        json.loads(line)
    assert _dump(Timeline(store)) == _dump(reader)


def test_facts_recorded_through_another_store_object_are_seen_without_restart(
    store: Store, timeline: Timeline
) -> None:
    other = Timeline(Store.open(store.path))
    assert other.subjects() == ()

    timeline.record_fact("person:luis", "employer", "Acme", timestamp="2024-01-01")

    assert other.active("person:luis", "employer").value == "Acme"


_WRITER = textwrap.dedent(
    """
    import sys
    from ihmt_store import Store
    from ihmt_facts import Timeline

    path, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    timeline = Timeline(Store.open(path))
    for i in range(count):
        # one shared timeline all writers fight over, and one of each writer's own
        timeline.record_fact(
            "user", "location", f"City{worker}-{i}",
            timestamp=f"2025-{1 + i % 12:02d}-{1 + worker:02d}T{i % 24:02d}:00:00Z",
        )
        timeline.record_fact(
            f"host:w{worker}", "port", str(1000 + i), timestamp=f"2024-01-{1 + i:02d}"
        )
    print("ok", worker)
    """
)


def test_several_processes_recording_at_once_lose_nothing(
    tmp_path: Path, store: Store, timeline: Timeline
) -> None:
    workers, count = 4, 12
    reader_before = Timeline(Store.open(store.path))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(store.path), str(w), str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.startswith("ok")

    # a reader loaded before the writers started follows what they appended
    facts = reader_before.facts()
    assert len(facts) == workers * count * 2
    assert len(reader_before.facts("user", "location")) == workers * count
    for w in range(workers):
        port = reader_before.active(f"host:w{w}", "port")
        assert port is not None and port.value == str(1000 + count - 1)
    # one ACTIVE value, the latest-dated one, whatever order the writers ran in
    latest = max(reader_before.facts("user", "location"), key=lambda f: f.timestamp)
    assert reader_before.active("user", "location").value == latest.value
    history = reader_before.history("user", "location")
    assert sum(s.is_active for s in history) == 1
    # every line of the journal is whole, and a rebuild from the leaves agrees
    for line in store.state_file(JOURNAL_NAME).read_bytes().splitlines():
        json.loads(line)
    incremental = _dump(reader_before)
    assert _dump(timeline) == incremental
    Timeline(store).rebuild()
    assert _dump(Timeline(Store.open(store.path))) == incremental
