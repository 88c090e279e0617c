"""The decision's fitting script: its regression, and its forced, recorded searches."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_decision import FEATURES, _collecting, fit_logistic, outcome


def test_the_regression_learns_a_rule_the_data_follows() -> None:
    rng = np.random.default_rng(3)
    x = rng.random((400, 3))
    y = (x[:, 0] > 0.5).astype(float)
    intercept, weights = fit_logistic(x, y, np.ones(len(y)), l2=0.01)
    predicted = (intercept + x @ weights) > 0
    assert (predicted == (y == 1)).mean() > 0.95
    assert weights[0] > 5 * max(abs(weights[1]), abs(weights[2]))


def test_outcome_counts_what_a_later_rule_decides_and_what_the_model_does() -> None:
    rows = [
        {"kind": "answerable", "status": "found", "right": 1},
        {"kind": "answerable", "status": "found", "right": 0},
        {"kind": "never", "status": "found", "right": 0},
        {"kind": "never", "status": "not_found", "right": 0},
        {"kind": "ambiguous", "status": "ambiguous", "right": 0},
    ]
    figures = outcome(rows, [True, False, False, True, True], [0.9, 0.9, 0.1, 0.1, 0.1])
    assert figures["false_abstention"] == 0.5
    assert figures["never_stored_not_found"] == 1.0
    assert figures["ambiguous_detected"] == 1.0
    assert figures["confident_answers"] == 1 and figures["confident_right"] == 1.0


def test_collecting_forces_an_answer_and_records_the_rules_verdict(tmp_path: Path) -> None:
    from ihmt_mcp import Memory

    memory = Memory.init(tmp_path / "store", semantic="off")
    try:
        memory.save("The office printer is a Brother HL-L2350DW on 10.0.4.17.")
        memory.save("We chose Pulumi over Terraform for the falcon scheduler: typed stacks.")
        stray = "Which scheduler does the heron payroll team prefer?"
        assert memory.search(stray).status == "not_found"
        with _collecting() as collector:
            forced = memory.search(stray)
        assert forced.status == "found"
        vector = collector.take(stray)
        assert vector is not None and len(vector) == len(FEATURES)
        assert vector[FEATURES.index("matched")] == 0.0
        # Outside the context the rules decide again.
        assert memory.search(stray).status == "not_found"
    finally:
        memory.close()


def _rows(rng: np.random.Generator, source: str, n: int) -> list[dict[str, object]]:
    """FOUND answers whose first memory is right when their margin is wide."""
    rows: list[dict[str, object]] = []
    margin = FEATURES.index("margin")
    for _ in range(n):
        x = [float(v) for v in rng.random(len(FEATURES))]
        x[FEATURES.index("matched")] = 1.0
        right = int(x[margin] > 0.4)
        rows.append(
            {"source": source, "x": x, "kind": "answerable", "status": "found", "right": right}
            | {"confidence": None, "answers": 1}
        )
    return rows


def test_the_confidence_is_judged_on_each_source_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import fit_decision

    rng = np.random.default_rng(5)
    rows = _rows(rng, "one", 200) + _rows(rng, "two", 200) + _rows(rng, "two (words only)", 50)
    rows.append({**rows[0], "status": "not_found"})  # not FOUND: no confidence to judge
    report = fit_decision.confidence_report(rows, l2=0.1, wrong=1.0)
    assert set(report) == {"one", "two"}
    left_out = report["two"]["model, this source left out"]
    assert left_out["found"] == 200  # the source as asked with meaning, FOUND only
    assert left_out["confident_right"] > 0.9
    assert left_out["brier"] < report["two"]["formula"]["brier"]

    monkeypatch.setattr(fit_decision, "CONFIDENCE_FILE", tmp_path / "confidence.json")
    written = fit_decision.write_confidence(rows, 0.1, 1.0, report)
    data = json.loads(written.read_text(encoding="utf-8"))
    assert set(data["weights"]) == set(FEATURES)
    assert data["weights"]["margin"] > 1.0
    assert data["fitted_on"] == {"one": 200, "two": 250}
