"""A project index's first map with its store derived (nothing flushed) or flushing, in turn.

    python tools/bench/derived_store.py [--codebases rich click] [--pairs 5] [--out FILE]

Each pair maps the same pinned codebase (``_codebases.py``) into two empty indexes, one
whose store is opened ``derived=True`` (as ``ProjectIndex`` opens it) and one opened as a
user's store (every batch flushed), the order swapped from pair to pair. Both run in one
process, one right after the other: on a shared machine the cost of creating files swings
with other processes' disk work from one minute to the next, and alternating is what keeps
that swing out of the comparison. Wall-clock seconds, this process's CPU seconds and the
kernel's share of them; medians over the pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _codebases import CODEBASES, source

from ihmt_mcp import ProjectIndex
from ihmt_store import Store

RESULTS = Path(__file__).resolve().parent / "results"
_OPEN = Store.open.__func__  # type: ignore[attr-defined]
_DERIVED = {"on": True}


def _open(cls: type[Store], path: Any, **kwargs: Any) -> Store:
    kwargs["derived"] = _DERIVED["on"]
    return _OPEN(cls, path, **kwargs)  # type: ignore[no-any-return]


def run_codebase(name: str, pairs: int) -> dict[str, Any]:
    runs: dict[str, list[tuple[float, float, float]]] = {"derived": [], "flushing": []}
    with tempfile.TemporaryDirectory(prefix="ihmt-bench-derived-") as tmp:
        folder = Path(tmp) / name
        shutil.copytree(source(CODEBASES[name]), folder)
        ProjectIndex(folder, Path(tmp) / "warm").map()  # imports and plugins loaded once
        for pair in range(pairs):
            order = ("derived", "flushing") if pair % 2 == 0 else ("flushing", "derived")
            for side in order:
                _DERIVED["on"] = side == "derived"
                base = Path(tmp) / f"{side}-{pair}"
                started, cpu, kernel = time.perf_counter(), time.process_time(), os.times().system
                index = ProjectIndex(folder, base)
                index.map()
                index.close()
                runs[side].append(
                    (
                        time.perf_counter() - started,
                        time.process_time() - cpu,
                        os.times().system - kernel,
                    )
                )
                shutil.rmtree(base, ignore_errors=True)
    out: dict[str, Any] = {"codebase": CODEBASES[name].label, "pairs": pairs}
    for side, rows in runs.items():
        out[side] = {
            "first_map_s": round(statistics.median(r[0] for r in rows), 2),
            "first_map_s_all": [round(r[0], 2) for r in rows],
            "cpu_s": round(statistics.median(r[1] for r in rows), 2),
            "sys_s": round(statistics.median(r[2] for r in rows), 2),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codebases", nargs="+", default=list(CODEBASES), choices=CODEBASES)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "derived_store.json")
    args = parser.parse_args(argv)
    Store.open = classmethod(_open)  # type: ignore[method-assign,assignment]
    results = [run_codebase(name, args.pairs) for name in args.codebases]
    print("| codebase | first map, derived (CPU, kernel) | first map, flushing (CPU, kernel) |")
    print("|---|---|---|")
    for r in results:
        d, f = r["derived"], r["flushing"]
        print(
            f"| {r['codebase']} | {d['first_map_s']:.2f} s ({d['cpu_s']:.2f}, {d['sys_s']:.2f}) "
            f"| {f['first_map_s']:.2f} s ({f['cpu_s']:.2f}, {f['sys_s']:.2f}) |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"bench": "derived_store", "results": results}, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
