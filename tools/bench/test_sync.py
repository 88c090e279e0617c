"""The sync benchmark runs as one command and writes what it prints (300 memories)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_sync_benchmark_prints_its_table_and_loses_no_pulled_memory(tmp_path: Path) -> None:
    out = tmp_path / "sync.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "sync.py"), "--memories", "300", "--sizes", "1", "20",
         "--runs", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )  # fmt: skip
    assert "| pulled | runs | sync s | fetch s | commit s | merge s | apply s |" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["memories"] == 300
    rows = {row["pulled"]: row for row in report["rows"]}
    assert set(rows) == {1, 20}
    assert rows[1]["runs"] == 2 and rows[20]["runs"] == 1
    for row in rows.values():
        assert row["lost"] == 0
        assert row["total_s"] > 0 and row["apply_s"] > 0 and row["fetch_s"] > 0
    assert rows[1]["cli_s"] > 0 and len(rows[1]["cli_runs"]) == 2
    # Every memory built, then 2 + 20 pulled and 2 pulled by the CLI: all in the clone.
    assert report["leaves_after"] == 300 + 2 + 20 + 2
