"""The confidence of an answer: the shipped model, read from the answer's signals."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ihmt_navigator import Navigator, _confidence
from ihmt_navigator._confidence import ConfidenceModel, confidence_model, estimate
from ihmt_navigator._signals import FEATURES
from ihmt_store import Store
from ihmt_store.testing import make_leaf


def test_the_shipped_model_reads_only_signals_an_answer_has() -> None:
    model = confidence_model()
    assert model is not None
    assert set(model.weights) <= set(FEATURES)
    # Its figures on the sources it was fitted on travel with it.
    strong = dict.fromkeys(FEATURES, 1.0) | {"lacking": 0.0, "lacking_name": 0.0, "unseen": 0.0}
    weak = dict.fromkeys(FEATURES, 0.0) | {"matched": 1.0, "coverage": 0.3, "held_words": 0.3}
    assert 0.0 <= estimate(weak, 0.3, 0.0) < estimate(strong, 1.0, 1.0) <= 1.0


def test_a_wide_lead_over_every_rival_raises_the_confidence() -> None:
    model = ConfidenceModel(intercept=-1.0, weights={"margin": 3.0})
    assert model.probability({"margin": 0.0}) == pytest.approx(0.2689, abs=1e-4)
    assert model.probability({"margin": 1.0}) == pytest.approx(0.8808, abs=1e-4)
    assert model.probability({}) == model.probability({"margin": 0.0})


def test_without_the_model_the_confidence_is_the_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_confidence, "confidence_model", lambda: None)
    assert estimate({"margin": 1.0}, coverage=0.5, margin=0.25) == 0.4
    # An answer that weighed no memory has no signals: the formula too.
    monkeypatch.undo()
    assert estimate({}, coverage=1.0, margin=1.0) == 1.0


def test_a_found_answer_carries_the_confidence_its_signals_give(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for n, text in enumerate(
        [
            "The office printer is a Brother laser on the second floor.",
            "Lunch on Fridays is at the noodle place across the street.",
            "The staging database runs PostgreSQL 16 on port 6543.",
        ]
    ):
        store.put_leaf(make_leaf(text, position=n + 1))
    result = Navigator(store).search("Which port does the staging database listen on?")
    assert result.status == "found"
    assert result.confidence == estimate(result.signals, 0.0, 0.0)
    assert f"confidence {result.confidence:.2f}" in result.compact
