"""The note clock lands with the batch that writes its notes (one file per batch, not one
per note), and a writer killed between two renames of that batch leaves a clock that is
past every note on disk: acknowledged notes stay, and the next note sorts after them."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ihmt_store import Store
from ihmt_store._notes import _ms, read_notes
from ihmt_store.testing import killed_at_rename, store_with

LEAVES = 30

ANNOTATE_ALL = """
from ihmt_store import Store
store = Store.open(path)
ids = sorted(e.id for e in store.iter_entries("leaf"))
with store.batch():
    for n, leaf_id in enumerate(ids):
        store.annotate(leaf_id, extra={"round": 2, "n": n})
store.close()
"""


def _clock_last(root: Path) -> int:
    return int(json.loads((root / "state" / "clock.json").read_text())["last"])


def _note_times(store: Store) -> list[int]:
    return [
        _ms(note.at)
        for entry in store.iter_entries("leaf")
        for note in read_notes(store.path, entry.id)
    ]


def test_a_batch_of_notes_writes_the_clock_once(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", [f"memory number {n}" for n in range(LEAVES)])
    with store.batch():
        for leaf in leaves:
            store.annotate(leaf.leaf_id, extra={"round": 1})
    assert _clock_last(store.path) == max(_note_times(store))
    assert all(store.read_leaf(leaf.leaf_id).extra["round"] == 1 for leaf in leaves)
    store.close()


@pytest.mark.parametrize("kill_at", [1, 2, 3, 17, LEAVES, LEAVES + 1])
def test_a_writer_killed_mid_batch_leaves_the_clock_past_every_note(
    tmp_path: Path, kill_at: int
) -> None:
    root = tmp_path / "m"
    store, leaves = store_with(root, [f"memory number {n}" for n in range(LEAVES)])
    with store.batch():  # acknowledged: committed before the killed writer starts
        for leaf in leaves:
            store.annotate(leaf.leaf_id, extra={"round": 1})
    store.close()

    killed = subprocess.run(
        [sys.executable, "-c", killed_at_rename(ANNOTATE_ALL), str(root), str(kill_at)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    store = Store.open(root)
    try:
        times = _note_times(store)
        assert _clock_last(root) >= max(times)
        for leaf in leaves:  # every acknowledged note is there; the killed round, all or part
            assert store.read_leaf(leaf.leaf_id).extra["round"] in (1, 2)
        # The next note sorts after every note on disk.
        store.annotate(leaves[0].leaf_id, extra={"round": 3})
        newest = max(_note_times(store))
        assert newest > max(times) and _clock_last(root) == newest
        assert store.read_leaf(leaves[0].leaf_id).extra["round"] == 3
    finally:
        store.close()
