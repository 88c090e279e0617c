"""The vectors' snapshot: a new process maps what an earlier one held instead of reading
and quantizing every vector again, and answers exactly as if it had read them all.

The stub embedder of ``test_vectors.py`` stands in for the model."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from ihmt_navigator import _vectors
from ihmt_navigator._vector_snapshot import snapshot_path
from ihmt_navigator._vectors import VectorIndex
from ihmt_store import Store

np = pytest.importorskip("numpy")


class Stub:
    """Unit vectors drawn from a text's hash (``test_vectors.py``'s)."""

    name = "stub@1"
    dim = 64

    def embed(self, texts: Sequence[str]) -> Any:
        weights = 1.0 / (1.0 + np.arange(self.dim))
        out = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim) * weights
            out.append(v / np.linalg.norm(v))
        return np.asarray(out, dtype=np.float32)


QUESTIONS = ("memory number 42", "memory number 7", "something else", "a third question")


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_vectors.VectorIndex, "snapshot_from", 200)
    monkeypatch.setattr(_vectors, "SKETCH_FROM", 400)
    monkeypatch.setattr(_vectors, "SKETCH_DIMS", 16)
    monkeypatch.setattr(_vectors, "SHORTLIST", 100)


def _write(store: Store, start: int, stop: int) -> None:
    VectorIndex(store, Stub()).write(
        {f"M-{i:05d}": f"memory number {i}" for i in range(start, stop)}
    )


def _answers(index: VectorIndex) -> list[list[tuple[str, float]]]:
    return [index.query(question).top(10) for question in QUESTIONS]


def _from_table(store: Store) -> list[list[tuple[str, float]]]:
    """The answers of an index that reads every vector from the store's table."""
    snapshot_path(store, VectorIndex(store, Stub()).space).unlink(missing_ok=True)
    index = VectorIndex(store, Stub())
    index._from_snapshot = lambda: None  # type: ignore[method-assign]
    return _answers(index)


@pytest.mark.parametrize("size", [300, 600])  # held as float32 below SKETCH_FROM; sketched above
def test_a_new_index_maps_the_snapshot_and_answers_as_from_the_table(
    make_store: Callable[..., Store], size: int
) -> None:
    store = make_store()
    _write(store, 0, size)
    first = VectorIndex(store, Stub())
    first.refresh()  # read the table: it writes the snapshot
    path = snapshot_path(store, first.space)
    assert path.exists()
    mapped = VectorIndex(store, Stub())
    mapped.refresh()
    assert isinstance(mapped._codes.base, np.memmap) and mapped.size == size
    assert _answers(mapped) == _answers(first) == _from_table(store)


def test_what_was_written_after_the_snapshot_is_read_from_the_table(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _write(store, 0, 300)
    VectorIndex(store, Stub()).refresh()
    _write(store, 300, 350)  # another process's saves, after the snapshot
    _write(store, 0, 1)  # and one vector written again
    mapped = VectorIndex(store, Stub())
    mapped._from_snapshot()
    assert len(mapped._ids) == 300  # the snapshot's rows, then the table's newer ones
    mapped.refresh()
    assert mapped.size == 350
    assert mapped.query("memory number 320").top(1)[0][0] == "M-00320"
    assert _answers(mapped) == _from_table(store)


def test_a_forgotten_vector_does_not_stay_in_the_snapshot(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _write(store, 0, 300)
    VectorIndex(store, Stub()).refresh()
    path = snapshot_path(store, VectorIndex(store, Stub()).space)
    VectorIndex.drop_snapshots(store)  # what forgetting a memory does
    assert not path.exists()
    # A tombstone read over a snapshot writes it again, without the row.
    VectorIndex(store, Stub()).refresh()
    index = VectorIndex(store, Stub())
    index.refresh()
    index._apply([("M-00042", None)])
    index._snapshot()
    again = VectorIndex(store, Stub())
    again._from_snapshot()
    assert not again._live[again._row["M-00042"]]


def test_a_damaged_or_foreign_snapshot_is_not_used(make_store: Callable[..., Store]) -> None:
    store = make_store()
    _write(store, 0, 300)
    VectorIndex(store, Stub()).refresh()
    path = snapshot_path(store, VectorIndex(store, Stub()).space)
    data = path.read_bytes()
    path.write_bytes(data[:-10])  # truncated
    index = VectorIndex(store, Stub())
    index.refresh()
    assert not isinstance(index._codes.base, np.memmap) and index.size == 300
    assert path.exists()  # written again by that load
    # The table cleared and filled anew with other vectors: the old snapshot's rows and
    # position no longer describe it.
    store.clear_derived(index.space)
    _write(store, 1000, 1250)
    fresh = VectorIndex(store, Stub())
    fresh.refresh()
    assert fresh.size == 250 and "M-00001" not in {i for i, _ in fresh.query("memory").top(250)}
    assert _answers(fresh) == _from_table(store)
