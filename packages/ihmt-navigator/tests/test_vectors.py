"""The in-memory vectors: quantized, scored on a sketch then exactly, rounded, ties by id.

A stub embedder (a fixed random vector per text) stands in for the model: these tests
are about the index, not about meaning."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from ihmt_navigator import _vectors
from ihmt_navigator._vectors import VectorIndex
from ihmt_store import Store

np = pytest.importorskip("numpy")

DIM = 64


class Stub:
    """Unit vectors drawn from a text's hash, in a space where a few directions carry
    most of the length (as a sentence encoder's do)."""

    name = "stub@1"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> Any:
        out = []
        weights = 1.0 / (1.0 + np.arange(DIM))
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(DIM) * weights
            out.append(v / np.linalg.norm(v))
        return np.asarray(out, dtype=np.float32)


def _filled(store: Store, n: int) -> tuple[VectorIndex, dict[str, str]]:
    index = VectorIndex(store, Stub())
    texts = {f"M-{i:05d}": f"memory number {i}" for i in range(n)}
    index.write(texts)
    return index, texts


def _fitted(index: VectorIndex) -> bool:
    return index._basis is not None


def _exact_top(texts: dict[str, str], question: str, k: int) -> list[str]:
    stub = Stub()
    ids = list(texts)
    matrix = stub.embed([texts[i] for i in ids]).astype(np.float16).astype(np.float32)
    cos = np.round(matrix @ stub.embed([question])[0], 3)
    return [ids[r] for r in sorted(range(len(ids)), key=lambda r: (-cos[r], ids[r]))[:k]]


def test_quantized_scores_rank_as_the_float_vectors_do(
    make_store: Callable[..., Store],
) -> None:
    index, texts = _filled(make_store(), 300)
    index.refresh()
    assert index.size == 300
    for question in ("memory number 7", "something else", "a third question"):
        sims = index.query(question)
        top = sims.top(10)
        assert len(top) == 10
        # Scores are rounded, and the order is by score then id.
        assert all(score == round(score, _vectors.SCORE_DIGITS) for _, score in top)
        assert top == sorted(top, key=lambda p: (-p[1], p[0]))
        # The int8 codes lose less than the rounding: the ten nearest are the float
        # vectors' ten nearest (compared at three decimals).
        assert {i for i, _ in top} == set(_exact_top(texts, question, 10))
        assert sims.of(top[0][0]) == top[0][1]
        assert sims.lowest <= top[-1][1]


def test_a_shorter_top_is_the_head_of_a_longer_one_already_made(
    make_store: Callable[..., Store],
) -> None:
    index, _ = _filled(make_store(), 300)
    index.refresh()
    sims = index.query("memory number 7")
    longer = sims.top(40)
    assert sims.top(10) == longer[:10]
    # The same as a fresh question's own ten: the head of a longer list is no guess.
    assert index.query("memory number 7").top(10) == longer[:10]
    longer.clear()  # a caller's copy: changing it changes nothing kept
    assert len(sims.top(40)) == 40


def test_a_large_index_is_scored_on_its_sketch_then_exactly(
    make_store: Callable[..., Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_vectors, "SKETCH_FROM", 1000)
    monkeypatch.setattr(_vectors, "SKETCH_DIMS", 16)
    monkeypatch.setattr(_vectors, "SHORTLIST", 200)
    store = make_store()
    index, _ = _filled(store, 1500)
    index.refresh()
    # Loaded, it scores every row exactly: a process that asks once never fits.
    first = index.query("memory number 42").top(5)
    assert not _fitted(index) and len(index._sketch) == 0
    small = VectorIndex(store, Stub())
    monkeypatch.setattr(_vectors, "SKETCH_FROM", 10**9)
    small.refresh()
    assert first == small.query("memory number 42").top(5)
    index.query("a second question")  # fits the sketch
    assert _fitted(index) and not _fitted(small)
    assert index._sketch.shape[1] == 16
    for question in ("memory number 42", "another question", "and one more"):
        assert index.query(question).top(5) == small.query(question).top(5)
    # A vector written later joins the sketch with the same components.
    index.write({"M-new": "memory number 42"})
    assert index.query("memory number 42").top(1)[0][0] in {"M-new", "M-00042"}
    assert index.query("memory number 42").of("M-new") == index.query("memory number 42").of(
        "M-00042"
    )


def test_a_forgotten_memory_leaves_the_answers(make_store: Callable[..., Store]) -> None:
    store = make_store()
    index, _ = _filled(store, 20)
    first = index.query("memory number 3").top(1)[0][0]
    index._apply([(first, None)])  # what a forgotten memory's row reads as
    sims = index.query("memory number 3")
    assert sims.of(first) is None
    assert first not in {i for i, _ in sims.top(20)}
    assert len(sims) == 19
