"""An answer's confidence: how likely its first memory is the answer.

The rules of :mod:`ihmt_navigator._decide` decide FOUND, AMBIGUOUS or NOT FOUND; the
confidence is read from the same :class:`~ihmt_navigator._signals.Signals` by a logistic
model fitted offline on labelled memories of three sources written by different people
(``tools/bench/fit_decision.py --write-confidence``). Its coefficients ship beside this
module as data (``confidence.json``), with the figures of each source left out of the
fit. Without the file, or for an answer that weighed no memory, the confidence is the
old formula: 0.6 x coverage + 0.4 x margin.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["MODEL_FILE", "ConfidenceModel", "confidence_model", "estimate"]

MODEL_FILE = "confidence.json"


@dataclass(frozen=True, slots=True)
class ConfidenceModel:
    """The fitted coefficients: the probability is ``1 / (1 + exp(-z))`` with
    ``z = intercept + sum(weight x signal)``."""

    intercept: float
    weights: Mapping[str, float]

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.intercept + sum(w * signals.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@lru_cache(maxsize=1)
def confidence_model() -> ConfidenceModel | None:
    """The shipped model, or None when its file is missing or unreadable."""
    try:
        text = resources.files("ihmt_navigator").joinpath(MODEL_FILE).read_text("utf-8")
        data = json.loads(text)
        weights = {str(k): float(v) for k, v in data["weights"].items()}
        return ConfidenceModel(intercept=float(data["intercept"]), weights=weights)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def estimate(signals: Mapping[str, float], coverage: float, margin: float) -> float:
    """The confidence of an answer that weighed its best memory (three places)."""
    model = confidence_model()
    if model is None or not signals:
        return round(0.6 * coverage + 0.4 * margin, 3)
    return round(model.probability(signals), 3)
