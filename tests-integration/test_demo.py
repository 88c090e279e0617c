"""`make demo` runs tools/demo.py: it must work from a clean state and show every status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_walks_through_every_answer_kind(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "demo.py"), "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for expected in ("FOUND", "AMBIGUOUS", "OUTDATED", "NOT FOUND", "Summary of", "unreachable 0"):
        assert expected in out, expected
    assert "Traceback" not in result.stderr
    assert (tmp_path / "ihmt_memory" / "ihmt.config.json").exists()
