"""Consolidations killed with SIGKILL at every point (issue #13 D2).

Invariant: after any kill at any point, the next writer or ``rebuild`` leaves nothing
unreachable from the trunk, loses no leaf and changes no leaf's text.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ihmt_navigator import Consolidator, HeuristicSummarizer
from ihmt_store import Store, StoreConfig
from ihmt_store.testing import killed_at_rename, make_leaf

# Dies by SIGKILL at the K-th file rename of a forced consolidation: the fault is real
# (the kernel kills the process between two renames); only the moment is chosen.
KILLED_AT = killed_at_rename(
    """
    from ihmt_navigator import Consolidator, HeuristicSummarizer
    from ihmt_store import Store
    store = Store.open(path)
    Consolidator(store, HeuristicSummarizer()).consolidate(force=True)
    """
)


def _texts(store: Store) -> dict[str, str]:
    return {leaf.leaf_id: leaf.text for leaf in store.iter_leaves()}


def _check(root: Path, texts: dict[str, str]) -> None:
    """The invariant, for the next writer and for rebuild."""
    store = Store.open(root)
    Consolidator(store, HeuristicSummarizer()).consolidate(force=True)
    stats = store.stats()
    assert stats.unreachable == 0
    assert _texts(store) == texts
    tops = {e.id for e in store.unparented()}
    for entry in store.iter_entries():
        assert store.path_to(entry.id)[0] in tops
    parents = {e.id: e.parent_id for e in store.iter_entries()}
    report = store.rebuild()
    assert report.problems == ()
    assert store.stats().unreachable == 0
    # Rebuild and incremental maintenance agree.
    assert {e.id: e.parent_id for e in store.iter_entries()} == parents
    store.close()


def _template(root: Path, *, consolidated: int, loose: int) -> dict[str, str]:
    store = Store.create(root, StoreConfig(branch_factor=2))
    leaves = [
        make_leaf(f"note {i} keeps the word kw{i}x about hosts", domain="infra", position=i)
        for i in range(consolidated + loose)
    ]
    store.put_leaves(leaves[:consolidated])
    if consolidated:
        Consolidator(store, HeuristicSummarizer()).consolidate(force=True)
    store.put_leaves(leaves[consolidated:])
    texts = _texts(store)
    store.close()
    return texts


# Format 2 writes no leaf during consolidation (a parent lives in the catalog), so a
# run moves only branch files: 17 loose leaves give it as many renames as 9 did.
@pytest.mark.parametrize(("consolidated", "loose"), [(0, 17), (9, 7)])
def test_a_consolidation_killed_at_any_rename_leaves_nothing_unreachable(
    tmp_path: Path, python: str, consolidated: int, loose: int
) -> None:
    template = tmp_path / "template"
    texts = _template(template, consolidated=consolidated, loose=loose)
    kills = 0
    for k in range(1, 200):
        root = tmp_path / f"k{k}"
        shutil.copytree(template, root)
        done = subprocess.run(
            [python, "-c", KILLED_AT, str(root), str(k)], capture_output=True, text=True
        )
        if done.returncode == 0:
            break  # the run has fewer than k renames: every point was covered
        assert done.returncode == -signal.SIGKILL, done.stderr
        kills += 1
        _check(root, texts)
        shutil.rmtree(root)
    assert kills >= 10, "the consolidation should move many files in one batch"


WRITES = textwrap.dedent(
    """
    import sys
    from ihmt_store import Store
    from ihmt_store.testing import make_leaf
    path, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = Store.open(path)
    store.put_leaves(
        make_leaf(f"note {i} keeps the word kw{i}x about hosts", domain="infra", position=i)
        for i in range(start, start + count)
    )
    """
)


@pytest.mark.slow
def test_cli_consolidations_killed_at_random_moments_leave_nothing_unreachable(
    tmp_path: Path, python: str
) -> None:
    ihmt = str(Path(sys.executable).parent / "ihmt")
    root = tmp_path / "m"
    Store.create(root, StoreConfig(branch_factor=3)).close()
    rng = random.Random(1313)
    env = {**os.environ, "HOME": str(tmp_path), "IHMT_HOME": str(tmp_path / ".ihmt")}
    saved = 0
    killed = 0
    for _ in range(25):
        count = rng.randint(5, 40)
        subprocess.run([python, "-c", WRITES, str(root), str(saved), str(count)], check=True)
        saved += count
        proc = subprocess.Popen(
            [ihmt, "--path", str(root), "-q", "consolidate", "--force"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        # The kill lands while files move: when the batch's journal appears (or at a
        # random moment of the run, every third round), plus a random few milliseconds.
        journal = root / "state" / "journal"
        if rng.random() < 0.67:
            while proc.poll() is None and not journal.exists():
                time.sleep(0.0005)
            time.sleep(rng.uniform(0.0, 0.004))
        else:
            time.sleep(rng.uniform(0.0, 0.4))
        proc.kill()
        killed += proc.wait() == -signal.SIGKILL
        store = Store.open(root)
        # A reader opening after the kill already sees nothing unreachable.
        assert store.stats().unreachable == 0
        store.close()
    print(f"{killed} of 25 consolidations killed while running")
    store = Store.open(root)
    texts = _texts(store)
    store.close()
    assert len(texts) == saved
    _check(root, texts)
