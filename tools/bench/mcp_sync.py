"""Benchmark of ihmt-mcp: project-index sync on a real codebase, and server startup.

    python tools/bench/mcp_sync.py [--packages mcp starlette pydantic mypy] [--runs 7] [--out FILE]

The installed source of a few packages (>= 1,000 files) is copied to a temporary folder
and indexed with ``ProjectIndex``: the first sync, a sync with nothing changed (target
<= 100 ms) and a sync after one file changed (target <= 300 ms), each the median of
several runs. Then the stdio server: time from spawning ``python -m ihmt_mcp`` to the
``initialize`` result (target <= 0.8 s; the SDK import alone is measured beside it),
and the size of ``tools/list`` at 4 characters a token (target <= 1,500).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ihmt_mcp import ProjectIndex

RESULTS = Path(__file__).resolve().parent / "results"


def _copy_packages(names: list[str], target: Path) -> int:
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"package {name!r} is not installed")
        source = Path(next(iter(spec.submodule_search_locations)))
        shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    return sum(1 for p in target.rglob("*") if p.is_file())


def _sync_figures(root: Path, index_dir: Path, runs: int) -> dict[str, float]:
    index = ProjectIndex(root, index_dir)
    started = time.perf_counter()
    first = index.sync()
    first_s = time.perf_counter() - started
    idle = []
    for _ in range(runs):
        report = index.sync()
        assert not report.changed
        idle.append(report.seconds)
    sources = sorted(p for p in root.rglob("*.py") if p.stat().st_size > 2000)
    changed = []
    refreshed = []
    for n in range(runs):
        path = sources[(n * 37) % len(sources)]
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\ndef bench_added_{n}(value):\n    return value * {n}\n")
        report = index.sync()
        assert len(report.changed) == 1, report.changed
        changed.append(report.seconds)
        refreshed.append(report.branches_refreshed)
    stats = index.store.stats()
    index.close()
    return {
        "files_indexed": first.files,
        "leaves": stats.leaves,
        "branches": stats.branches,
        "unreachable": stats.unreachable,
        "first_sync_s": round(first_s, 2),
        "no_change_p50_ms": round(statistics.median(idle) * 1000, 1),
        "no_change_max_ms": round(max(idle) * 1000, 1),
        "one_change_p50_ms": round(statistics.median(changed) * 1000, 1),
        "one_change_max_ms": round(max(changed) * 1000, 1),
        "branches_rewritten_per_change": statistics.median(refreshed),
    }


def _startup(home: Path, runs: int) -> dict[str, float]:
    times: list[float] = []
    listing: dict[str, int] = {}

    async def once() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "ihmt_mcp"], env={"IHMT_HOME": str(home)}
        )
        started = time.perf_counter()
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            times.append(time.perf_counter() - started)
            tools = await session.list_tools()
            dump = json.dumps(
                {"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in tools.tools]}
            )
            listing["chars"] = len(dump)

    for _ in range(runs):
        anyio.run(once)
    imports = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
        imports.append(time.perf_counter() - started)
    return {
        "startup_to_initialized_p50_s": round(statistics.median(times), 3),
        "startup_to_initialized_min_s": round(min(times), 3),
        "sdk_import_alone_p50_s": round(statistics.median(imports), 3),
        "tools_list_chars": listing["chars"],
        "tools_list_tokens": listing["chars"] // 4,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=["mcp", "starlette", "pydantic", "mypy"])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "mcp_sync.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ihmt-bench-mcp-") as tmp:
        root = Path(tmp) / "codebase"
        root.mkdir()
        files = _copy_packages(args.packages, root)
        sync = _sync_figures(root, Path(tmp) / "indexes", args.runs)
        sync["files_on_disk"] = files
        startup = _startup(Path(tmp) / "home", args.runs)
    print(f"codebase: {', '.join(args.packages)} ({files:,} files on disk)")
    print(
        "| files indexed | leaves | first sync | no change p50 | one change p50 "
        "| branches rewritten |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| {sync['files_indexed']:,} | {sync['leaves']:,} | {sync['first_sync_s']:.1f} s | "
        f"{sync['no_change_p50_ms']:.0f} ms | {sync['one_change_p50_ms']:.0f} ms | "
        f"{sync['branches_rewritten_per_change']:.0f} |"
    )
    print()
    print("| startup → initialized p50 | SDK import alone p50 | tools/list tokens |")
    print("|---|---|---|")
    print(
        f"| {startup['startup_to_initialized_p50_s']:.2f} s | "
        f"{startup['sdk_import_alone_p50_s']:.2f} s | {startup['tools_list_tokens']:,} |"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"sync": sync, "server": startup}, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
