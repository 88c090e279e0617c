"""The scale benchmark runs as one command and writes what it prints (size 50 only)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_scale_benchmark_prints_its_table_and_writes_every_metric(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    done = subprocess.run(
        [sys.executable, str(HERE / "scale.py"), "--sizes", "50", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "| recall@1 " in done.stdout and "| disk: new files /s " in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    (size,) = report["sizes"]
    assert report["system"] == "ihmt-navigator" and size["size"] == 50
    for key in ("recall_at_1", "baseline_recall_at_1", "update_accuracy", "abstention"):
        assert 0.0 <= size[key] <= 1.0, key
    # The quality a 50-memory store must reach whatever the machine's speed.
    assert size["recall_at_1"] >= 0.9 and size["abstention"] >= 0.8
    for key in ("ingest_per_s", "ingest_cpu_per_s", "disk_files_per_s", "search_ms_p50"):
        assert size[key] > 0, key
