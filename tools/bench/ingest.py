"""Bulk ingest through the ``ihmt`` command: folders of notes at 5,000 and 50,000 entries.

    python tools/bench/ingest.py [--sizes 5000 50000] [--files 20] [--semantic off]

For each size it writes a folder of ``--files`` Markdown work logs, one dated entry a
line (the memories of ``_memories.py``: made-up people, projects, hosts and decisions,
with their corrections, in date order and all in the past), then times what a user runs,
as subprocesses: ``ihmt init`` and ``ihmt --json ingest FOLDER``. Then the same entries as
one file (at 50,000 it is over the 2 MiB a file is read whole: the streaming path).

Per run: entries and bytes in, memories (leaves) stored, wall and CPU seconds of the
``ingest`` process, entries per second by the clock and per CPU-second, peak memory,
and entries lost (an entry whose line no stored memory holds: must be 0). Beside it,
how many small files a second the shared disk itself creates in the same run (the floor
under an ingest that keeps one file per memory).

Target (issue 17): >= 2,000 entries a second at both sizes, flat in n: the cost of one
more memory does not grow with the store. The semantic extra is off by default
(``--semantic auto`` turns it on as a user's default would): embedding every memory is
the semantic layer's own cost, measured apart.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from _harness import disk_files_per_s
from _memories import generate

IHMT = str(Path(sys.executable).parent / "ihmt")
RESULTS = Path(__file__).resolve().parent / "results" / "ingest.json"
TARGET_PER_S = 2000
FLAT_RATIO = 0.8
"""The rate at the largest size must be at least this share of the rate at the smallest."""


def notes(size: int, seed: int) -> list[str]:
    """``size`` dated entries, oldest first, the newest dated yesterday at the latest."""
    memories = sorted(generate(size, seed).memories, key=lambda m: m.date)
    newest = date.fromisoformat(memories[-1].date)
    shift = max(timedelta(0), newest - (date.today() - timedelta(days=1)))
    lines = []
    for m in memories:
        when = date.fromisoformat(m.date) - shift
        lines.append(f"{when.isoformat()} {' '.join(m.text.split())}\n")
    return lines


def write_folder(folder: Path, entries: list[str], files: int) -> None:
    folder.mkdir(parents=True)
    per = -(-len(entries) // files)
    for part in range(files):
        chunk = entries[part * per : (part + 1) * per]
        if chunk:
            head = f"# Work log, part {part + 1}\n\n"
            (folder / f"worklog-{part + 1:02d}.md").write_text(head + "".join(chunk), "utf-8")


def _children() -> tuple[float, int]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def run_ingest(source: Path, store: Path, env: dict[str, str]) -> dict[str, Any]:
    subprocess.run([IHMT, "--path", str(store), "-q", "init"], check=True, env=env,
                   capture_output=True)  # fmt: skip
    cpu0, _ = _children()
    t0 = time.perf_counter()
    done = subprocess.run(
        [IHMT, "--path", str(store), "--json", "ingest", str(source), "--project", ""],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    cpu1, peak_kb = _children()
    report = json.loads(done.stdout)
    return {"wall_s": wall, "cpu_s": cpu1 - cpu0, "peak_mb": peak_kb / 1024, "report": report}


def lost_entries(store: Path, entries: list[str]) -> int:
    """Entries whose line no stored memory holds."""
    from ihmt_store import Store

    held: set[str] = set()
    opened = Store.open(store)
    try:
        for leaf in opened.iter_leaves():
            held.update(leaf.text.splitlines())
    finally:
        opened.close()
    return sum(1 for line in entries if line.rstrip("\n") not in held)


def measure(size: int, files: int, seed: int, env: dict[str, str]) -> list[dict[str, Any]]:
    entries = notes(size, seed)
    scratch = Path(tempfile.mkdtemp(prefix=f"ihmt-ingest-{size}-"))
    rows = []
    try:
        folder = scratch / "notes"
        write_folder(folder, entries, files)
        single = scratch / "journal.md"
        single.write_text("# Journal\n\n" + "".join(entries), "utf-8")
        for kind, source in ((f"{files} files", folder), ("one file", single)):
            print(f"{size}: ingesting {kind}", file=sys.stderr, flush=True)
            store = scratch / f"store-{len(rows)}"
            run = run_ingest(source, store, env)
            nbytes = sum(p.stat().st_size for p in source.rglob("*") if p.is_file()) if \
                source.is_dir() else source.stat().st_size  # fmt: skip
            rows.append(
                {
                    "size": size,
                    "input": kind,
                    "entries": len(entries),
                    "bytes": nbytes,
                    "memories": run["report"]["leaves"],
                    "skipped": len(run["report"]["skipped"]),
                    "wall_s": run["wall_s"],
                    "cpu_s": run["cpu_s"],
                    "entries_per_s": len(entries) / run["wall_s"],
                    "entries_per_cpu_s": len(entries) / run["cpu_s"] if run["cpu_s"] else None,
                    "memories_per_s": run["report"]["leaves"] / run["wall_s"],
                    "peak_mb": run["peak_mb"],
                    "lost": lost_entries(store, entries),
                    "disk_files_per_s": disk_files_per_s(scratch),
                }
            )
            shutil.rmtree(store, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


ROWS = (
    ("entries in", "entries", "{:,.0f}"),
    ("MB in", "bytes", "mb"),
    ("memories stored", "memories", "{:,.0f}"),
    ("entries lost (must be 0)", "lost", "{:,.0f}"),
    ("wall s", "wall_s", "{:.1f}"),
    ("CPU s", "cpu_s", "{:.1f}"),
    ("entries/s (target >= 2,000)", "entries_per_s", "{:,.0f}"),
    ("entries per CPU-second", "entries_per_cpu_s", "{:,.0f}"),
    ("memories/s", "memories_per_s", "{:,.0f}"),
    ("peak memory MB (any run so far)", "peak_mb", "{:,.0f}"),
    ("disk: new files/s, same run", "disk_files_per_s", "{:,.0f}"),
)


def table(rows: list[dict[str, Any]], title: str) -> str:
    head = ["", *(f"{r['size']:,} · {r['input']}" for r in rows)]
    body = []
    for label, key, fmt in ROWS:
        cells = []
        for r in rows:
            value = r.get(key)
            if value is None:
                cells.append("-")
            elif fmt == "mb":
                cells.append(f"{value / 1e6:.1f}")
            else:
                cells.append(fmt.format(value))
        body.append([label, *cells])
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([title, line(head), rule, *(line(r) for r in body)])


def verdict(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for kind in dict.fromkeys(r["input"] for r in rows):
        runs = [r for r in rows if r["input"] == kind]
        rates = [r["entries_per_s"] for r in runs]
        low = min(rates) >= TARGET_PER_S
        flat = len(runs) < 2 or runs[-1]["entries_per_s"] >= FLAT_RATIO * runs[0]["entries_per_s"]
        lost = sum(r["lost"] for r in runs)
        ratio = runs[-1]["entries_per_s"] / runs[0]["entries_per_s"] if len(runs) > 1 else 1.0
        out.append(
            f"{kind}: >= {TARGET_PER_S:,}/s {'met' if low else 'MISSED'}; "
            f"largest/smallest rate {ratio:.2f} ({'flat' if flat else 'NOT FLAT'}, "
            f">= {FLAT_RATIO}); entries lost {lost}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 50000])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--semantic", choices=("off", "auto"), default="off")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = {**os.environ, "IHMT_SEMANTIC": args.semantic}
    env.pop("IHMT_HOME", None)
    rows = [row for size in args.sizes for row in measure(size, args.files, args.seed, env)]
    rows.sort(key=lambda r: (r["input"] != f"{args.files} files", r["size"]))
    print(
        table(rows, f"ingest benchmark: ihmt ingest (seed {args.seed}, semantic {args.semantic})")
    )
    for line in verdict(rows):
        print(line)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"bench": "ingest", "seed": args.seed, "semantic": args.semantic, "runs": rows}
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
