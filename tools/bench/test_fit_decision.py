"""The decision's fitting script: its regression, and its forced, recorded searches."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

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
