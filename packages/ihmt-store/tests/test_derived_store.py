"""A derived store (``Store.open(derived=True)``): what its owner can derive again is
written atomically, without flushing it to disk; a user's store still flushes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ihmt_store import Store
from ihmt_store.testing import make_leaf


def _refuse_flushes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    flushes: list[str] = []
    monkeypatch.setattr(os, "fsync", lambda fd: flushes.append("fsync"))
    monkeypatch.setattr(os, "sync", lambda: flushes.append("sync"))
    return flushes


def _write_and_forget(store: Store) -> list[str]:
    leaves = [make_leaf(f"def f{n}(): return {n}", source="m.py", position=n) for n in range(40)]
    store.put_leaves(leaves)
    with store.batch():
        store.put_leaf(make_leaf("def g(): pass", source="n.py"))
        store.forget(leaves[0].leaf_id)
    store.refresh_root()
    return [leaf.leaf_id for leaf in leaves[1:]]


def test_a_derived_store_writes_without_flushing_and_reads_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(tmp_path / "code", create=True, derived=True)
    flushes = _refuse_flushes(monkeypatch)
    kept = _write_and_forget(store)
    store.close()
    assert flushes == []
    monkeypatch.undo()
    reopened = Store.open(tmp_path / "code")
    assert [leaf.text for leaf in reopened.read_leaves(kept[:2])] == [
        "def f1(): return 1",
        "def f2(): return 2",
    ]
    assert reopened.count("leaf") == 40
    assert reopened.stats().unreachable == 0
    reopened.close()


def test_a_users_store_still_flushes_every_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(tmp_path / "memory", create=True)
    flushes = _refuse_flushes(monkeypatch)
    _write_and_forget(store)
    store.close()
    assert "sync" in flushes and "fsync" in flushes
