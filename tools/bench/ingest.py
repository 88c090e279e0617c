"""Bulk ingest through the ``ihmt`` command: folders of notes at 5,000 and 50,000 entries.

    python tools/bench/ingest.py [--sizes 5000 50000] [--files 20] [--semantic off]
    python tools/bench/ingest.py --semantic auto --vectors --ihmt OTHER/.venv/bin/ihmt ...

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

With ``--vectors`` (and ``--semantic auto``) the words and the vectors are timed apart:
``ihmt ingest --embed-later`` (plain ``ingest`` for a version without the option, which
left a bulk ingest's vectors for later anyway), then ``ihmt index --semantic`` on the same
store; "vectors complete" is the sum. ``--ihmt`` names the command to time (another
checkout's, for a before/after pair in one run: ``--ihmt`` may be given twice).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
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


def _has_option(ihmt: str, command: str, option: str) -> bool:
    shown = subprocess.run([ihmt, command, "--help"], capture_output=True, text=True, check=False)
    return option in shown.stdout


def run_ingest(
    source: Path, store: Path, env: dict[str, str], ihmt: str = IHMT, vectors: bool = False
) -> dict[str, Any]:
    subprocess.run([ihmt, "--path", str(store), "-q", "init"], check=True, env=env,
                   capture_output=True)  # fmt: skip
    later = ["--embed-later"] if vectors and _has_option(ihmt, "ingest", "--embed-later") else []
    cpu0, _ = _children()
    t0 = time.perf_counter()
    done = subprocess.run(
        [ihmt, "--path", str(store), "--json", "ingest", str(source), "--project", "", *later],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    cpu1, peak_kb = _children()
    report = json.loads(done.stdout)
    run = {"wall_s": wall, "cpu_s": cpu1 - cpu0, "peak_mb": peak_kb / 1024, "report": report}
    if vectors:
        t0 = time.perf_counter()
        indexed = subprocess.run(
            [ihmt, "--path", str(store), "--json", "index", "--semantic"],
            check=True,
            env=env,
            capture_output=True,
            text=True,
        )
        run["vectors_s"] = time.perf_counter() - t0
        cpu2, peak_kb = _children()
        run["vectors_cpu_s"] = cpu2 - cpu1
        run["peak_mb"] = peak_kb / 1024
        run["embedded"] = json.loads(indexed.stdout)["embedded"]
    return run


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


def measure(
    size: int,
    files: int,
    seed: int,
    env: dict[str, str],
    ihmts: list[str],
    inputs: str = "both",
    vectors: bool = False,
) -> list[dict[str, Any]]:
    entries = notes(size, seed)
    scratch = Path(tempfile.mkdtemp(prefix=f"ihmt-ingest-{size}-"))
    rows = []
    try:
        folder = scratch / "notes"
        write_folder(folder, entries, files)
        single = scratch / "journal.md"
        single.write_text("# Journal\n\n" + "".join(entries), "utf-8")
        sources = [(f"{files} files", folder), ("one file", single)]
        if inputs != "both":
            sources = sources[:1] if inputs == "files" else sources[1:]
        runs = [(kind, source, ihmt) for kind, source in sources for ihmt in ihmts]
        for kind, source, ihmt in runs:
            if len(ihmts) > 1:
                kind = f"{kind} · {_label(ihmt)}"
            print(f"{size}: ingesting {kind}", file=sys.stderr, flush=True)
            store = scratch / f"store-{len(rows)}"
            run = run_ingest(source, store, env, ihmt, vectors)
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
            if vectors:
                complete = run["wall_s"] + run["vectors_s"]
                rows[-1].update(
                    vectors_s=run["vectors_s"],
                    embedded=run["embedded"],
                    complete_s=complete,
                    complete_per_s=len(entries) / complete,
                    vectors_cpu_s=run["vectors_cpu_s"],
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
    ("vectors: memories embedded", "embedded", "{:,.0f}"),
    ("vectors: wall s (index --semantic)", "vectors_s", "{:.1f}"),
    ("vectors: CPU s", "vectors_cpu_s", "{:.1f}"),
    ("vectors complete: entries/s", "complete_per_s", "{:,.0f}"),
)


def medians(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per size and input: the median of each figure over the rounds."""
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["size"], row["input"]), []).append(row)
    out = []
    for same in groups.values():
        merged = dict(same[0])
        for key, value in same[0].items():
            if isinstance(value, (int, float)) and key not in ("size", "round"):
                merged[key] = statistics.median(r[key] for r in same if r.get(key) is not None)
        merged["rounds"] = len(same)
        out.append(merged)
    return out


def _label(ihmt: str) -> str:
    """A short name for a command: the checkout it belongs to."""
    path = Path(ihmt).resolve()
    return path.parents[2].name if len(path.parents) > 2 else str(path)


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
    for kind in dict.fromkeys(r["input"] for r in rows):  # one line per input and command
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
    parser.add_argument("--inputs", choices=("both", "files", "one"), default="both")
    parser.add_argument("--vectors", action="store_true", help="time the vectors apart")
    parser.add_argument("--ihmt", action="append", help="the command to time (repeatable)")
    parser.add_argument("--runs", type=int, default=1, help="rounds; the table shows medians")
    args = parser.parse_args(argv)
    env = {**os.environ, "IHMT_SEMANTIC": args.semantic}
    env.pop("IHMT_HOME", None)
    ihmts = args.ihmt or [IHMT]
    every = [
        {**row, "round": n}
        for n in range(args.runs)  # rounds alternate the commands, so the load hits both
        for size in args.sizes
        for row in measure(size, args.files, args.seed, env, ihmts, args.inputs, args.vectors)
    ]
    rows = medians(every)
    rows.sort(key=lambda r: (r["input"], r["size"]))
    title = f"ingest benchmark: ihmt ingest (seed {args.seed}, semantic {args.semantic})"
    if args.runs > 1:
        title += f", medians of {args.runs} rounds"
    print(table(rows, title))
    for line in verdict(rows):
        print(line)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "bench": "ingest",
        "seed": args.seed,
        "semantic": args.semantic,
        "runs": rows,
        "rounds": every,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
