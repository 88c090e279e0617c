"""The ingest benchmark runs as one command and writes what it prints (200 entries)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_ingest_benchmark_prints_its_table_and_loses_no_entry(tmp_path: Path) -> None:
    out = tmp_path / "ingest.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "ingest.py"), "--sizes", "200", "--files", "4",
         "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )  # fmt: skip
    assert "| entries/s (target >= 2,000)" in done.stdout and "entries lost 0" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    runs = {run["input"]: run for run in report["runs"]}
    assert set(runs) == {"4 files", "one file"}
    for run in runs.values():
        assert run["entries"] == 200 and run["lost"] == 0 and run["skipped"] == 0
        # One memory per entry (a day's entries are not packed), and each file's heading.
        assert 200 <= run["memories"] <= 200 + 4
        assert run["entries_per_s"] > 0 and run["disk_files_per_s"] > 0
