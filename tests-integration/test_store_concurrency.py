"""Many writer processes on one store, and writers killed at random moments."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from ihmt_store import Store

WRITER = textwrap.dedent(
    """
    import sys
    from ihmt_store import Store
    from ihmt_store.testing import make_leaf
    path, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = Store.open(path)
    for i in range(count):
        word = f"uniq{worker}x{i}"
        leaf = make_leaf(f"worker {worker} memory {i}: the codename is {word}", position=i,
                         source=f"worker-{worker}", domain=("infra", "personal")[i % 2])
        store.put_leaf(leaf)
        print(leaf.leaf_id, word, flush=True)
    """
)


def _catalog(store: Store) -> list[tuple[object, ...]]:
    return [
        (
            e.id,
            e.kind,
            e.layer,
            e.domain,
            e.parent_id,
            e.path,
            e.timestamp,
            e.status,
            e.title,
            e.size,
        )
        for e in store.iter_entries()
    ]


def test_four_processes_saving_at_once_lose_nothing(tmp_path: Path, python: str) -> None:
    Store.create(tmp_path / "m")
    procs = [
        subprocess.Popen(
            [python, "-c", WRITER, str(tmp_path / "m"), str(w), "250"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    acknowledged: list[tuple[str, str]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        acknowledged += [tuple(line.split()) for line in out.splitlines()]  # type: ignore[misc]
    assert len(acknowledged) == 1000
    store = Store.open(tmp_path / "m")
    assert store.count("leaf") == 1000
    assert store.stats().unreachable == 0
    for leaf_id, word in acknowledged:
        assert store.entry(leaf_id) is not None
        found = store.candidates(word, limit=1)
        assert found and found[0].entry.id == leaf_id, word
    files = sorted(p.stem for p in (tmp_path / "m" / "layer0").rglob("*.txt"))
    assert files == sorted(leaf_id for leaf_id, _ in acknowledged)
    before = _catalog(store)
    store.rebuild()
    assert _catalog(store) == before


CRASHER = textwrap.dedent(
    """
    import sys
    from ihmt_store import Branch, ChildRef, Correction, Store
    from ihmt_store.testing import make_leaf
    path, round_ = sys.argv[1], int(sys.argv[2])
    store = Store.open(path)
    i = 0
    while True:
        word = f"r{round_}w{i}"
        src = f"round-{round_}"
        leaf = make_leaf(f"round {round_} save {i}, keyword {word}", position=i, source=src)
        if i % 7 == 3:
            words = [f"bword{round_}x{i}x{k}" for k in range(5)]
            extra = [make_leaf(f"batch {w}", position=10_000 + i * 10 + k, source=src)
                     for k, w in enumerate(words)]
            with store.batch():
                store.put_leaf(leaf)
                store.put_leaves(extra)
            for e, w in zip(extra, words):
                print("ack", e.leaf_id, w, flush=True)
        else:
            store.put_leaf(leaf)
        print("ack", leaf.leaf_id, word, flush=True)
        if i % 5 == 4:
            store.annotate(leaf.leaf_id, outdated_by=Correction(by=leaf.leaf_id, date="2026-01-01"))
            print("outdated", leaf.leaf_id, flush=True)
        if i % 11 == 10:
            node = f"N1-general-r{round_}i{i}"
            # Format 2: the branch file lists its child (the only record of the
            # parent on disk; the leaf never names it).
            branch = Branch(
                node_id=node, layer=1, domain="general", title="t", summary="s",
                children=(ChildRef(id=leaf.leaf_id, kind="leaf", title="t", excerpt="e"),),
            )  # fmt: skip
            store.put_branch(branch)
            store.set_parent([leaf.leaf_id], node)
            print("parent", leaf.leaf_id, node, flush=True)
        i += 1
    """
)


@pytest.mark.slow
def test_a_writer_killed_at_random_moments_loses_nothing_acknowledged(
    tmp_path: Path, python: str
) -> None:
    rng = random.Random(20261129)
    Store.create(tmp_path / "m")
    acked: dict[str, str] = {}
    outdated: set[str] = set()
    parents: dict[str, str] = {}
    for round_ in range(50):
        proc = subprocess.Popen(
            [python, "-c", CRASHER, str(tmp_path / "m"), str(round_)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout is not None
        # Let it get past start-up, then kill it in the middle of whatever it is doing.
        first = proc.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate()
        for line in [first, *rest.splitlines()]:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "ack" and len(parts) == 3:
                acked[parts[1]] = parts[2]
            elif parts[0] == "outdated" and len(parts) == 2:
                outdated.add(parts[1])
            elif parts[0] == "parent" and len(parts) == 3:
                parents[parts[1]] = parts[2]
        store = Store.open(tmp_path / "m")
        assert not (tmp_path / "m" / "state" / "journal").exists()
        assert list((tmp_path / "m").rglob("*.ihmt-tmp")) == []
        store.close()
    store = Store.open(tmp_path / "m")
    assert len(acked) > 200
    for leaf_id, word in acked.items():
        leaf = store.read_leaf(leaf_id)
        assert word in leaf.text
        found = store.candidates(word, limit=1)
        assert found and found[0].entry.id == leaf_id
    for leaf_id in outdated:
        assert store.entry(leaf_id).status == "outdated"  # type: ignore[union-attr]
    for leaf_id, node in parents.items():
        assert store.entry(leaf_id).parent_id == node  # type: ignore[union-attr]
    on_disk = {p.stem for p in (tmp_path / "m" / "layer0").rglob("*.txt")}
    in_catalog = {e.id for e in store.iter_entries("leaf")}
    assert on_disk == in_catalog, "a leaf file is not in the catalog (orphan) or vice versa"
    for path in (tmp_path / "m" / "layer0").rglob("*.txt"):
        assert path.read_bytes().startswith(b"<<<IHMT-META\n")
    assert store.stats().unreachable == 0
    before = _catalog(store)
    report = store.rebuild()
    assert report.problems == ()
    assert _catalog(store) == before
    print(json.dumps({"rounds": 50, "acknowledged": len(acked), "leaves": len(on_disk)}))


def test_processes_opening_a_store_without_an_index_at_once_lose_nothing(
    tmp_path: Path, python: str
) -> None:
    """Every writer finds no index and wants to build one: only one may, the rest wait."""
    store = Store.create(tmp_path / "m")
    store.close()
    for _ in range(3):
        shutil.rmtree(tmp_path / "m" / "state")
        procs = [
            subprocess.Popen(
                [python, "-c", WRITER, str(tmp_path / "m"), str(w), "20"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for w in range(4)
        ]
        acknowledged = []
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            acknowledged += [line.split()[0] for line in out.splitlines()]
        reopened = Store.open(tmp_path / "m")
        assert {e.id for e in reopened.iter_entries("leaf")} >= set(acknowledged)
        assert reopened.count("leaf") == 80
        reopened.close()


CREATOR = textwrap.dedent(
    """
    import sys
    from ihmt_store import Store
    from ihmt_store.testing import make_leaf
    store = Store.open(sys.argv[1], create=True)
    leaf = make_leaf(f"created by worker {sys.argv[2]}", position=int(sys.argv[2]))
    print(store.put_leaf(leaf).leaf_id, flush=True)
    """
)


def test_processes_creating_one_store_at_once_agree(tmp_path: Path, python: str) -> None:
    procs = [
        subprocess.Popen(
            [python, "-c", CREATOR, str(tmp_path / "fresh"), str(w)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(6)
    ]
    ids = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        ids.append(out.strip())
    store = Store.open(tmp_path / "fresh")
    assert sorted(e.id for e in store.iter_entries("leaf")) == sorted(ids)
