"""The realistic benchmark runs as one command on ten questions and writes what it prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DEV_SET = HERE.parents[2] / "shared" / "data" / "realistic_dev.json"


def test_realistic_benchmark_on_ten_questions_prints_and_writes_every_figure(
    tmp_path: Path,
) -> None:
    if not DEV_SET.is_file():
        pytest.skip(f"the realistic dev set is not beside this clone ({DEV_SET})")
    out = tmp_path / "realistic.json"
    done = subprocess.run(
        [
            *(sys.executable, str(HERE / "realistic.py"), "--data", str(DEV_SET)),
            *("--limit", "10", "--out", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "| answerable R@1 " in done.stdout and "| kind " in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    figures = report["figures"]
    assert figures["queries"] == 10 and len(report["rows"]) == 10
    assert figures["memories"] > 200
    for row in report["rows"]:
        assert row["status"] in ("found", "ambiguous", "not_found")
    audit = figures["audit"]
    # every memory saved with a replaces hint left a mark, a list or nothing: never a wrong mark
    assert audit["wrong"] == [] and audit["right"] > 0


def test_two_sets_are_printed_side_by_side_with_their_gap() -> None:
    sys.path.insert(0, str(HERE))
    from realistic import side_by_side

    one = {"answerable": {"r1": 0.8, "r5": 0.9}, "by_kind": {"update": {"ku_acc": 0.5}}}
    two = {"answerable": {"r1": 0.6, "r5": 0.9}, "by_kind": {}}
    lines = side_by_side({"one.json": one, "two.json": two}).splitlines()
    assert [c.strip() for c in lines[0].split("|")[2:5]] == ["one.json", "two.json", "gap"]
    r1 = next(line for line in lines if "answerable R@1" in line)
    assert [c.strip() for c in r1.split("|")[2:5]] == ["0.80", "0.60", "0.20"]
    update = next(line for line in lines if line.startswith("| update"))
    assert [c.strip() for c in update.split("|")[2:5]] == ["0.50", "-", "-"]
