"""Benchmark of the ``ihmt`` command: how fast ``ihmt --help`` answers, and the demo.

    python tools/bench/cli.py [--runs 15]

Runs the installed console script as a subprocess (what a user waits for) and prints a
table of min / median / max wall time. Target (issue 7): ``ihmt --help`` <= 150 ms;
``ihmt demo`` < 10 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IHMT = str(Path(sys.executable).parent / "ihmt")


def _time(args: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([IHMT, *args], capture_output=True, check=True, timeout=120)
        out.append(time.perf_counter() - started)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    rows = [
        ("ihmt --help", _time(["--help"], args.runs), 0.150),
        ("ihmt version", _time(["version"], args.runs), None),
    ]
    with tempfile.TemporaryDirectory() as folder:
        demo = []
        for run in range(3):
            demo += _time(["demo", "--dir", str(Path(folder) / str(run))], 1)
        rows.append(("ihmt demo", demo, 10.0))
    print(f"{'command':<14} {'runs':>4} {'min ms':>8} {'median ms':>10} {'max ms':>8}  target")
    for name, times, target in rows:
        median = statistics.median(times)
        verdict = "" if target is None else ("ok" if median <= target else "MISSED")
        limit = "" if target is None else f"<= {target * 1000:,.0f} ms {verdict}"
        print(
            f"{name:<14} {len(times):>4} {min(times) * 1000:>8.0f} {median * 1000:>10.0f} "
            f"{max(times) * 1000:>8.0f}  {limit}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
