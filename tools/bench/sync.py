"""Benchmark of ``ihmt sync``: the time to pull N changes into a store of M memories.

    python tools/bench/sync.py [--memories 50000] [--sizes 1 100 10000] [--runs 5] [--out FILE]

Two machines share one bare repository on local disk. Machine A's store is built with
``M`` memories (``Store.put_leaves`` and the heuristic consolidation, in batches of
2,000, then the fact timeline; the semantic layer is off), set up with ``Sync.init``
(one commit of every memory, pushed), and machine B is a copy of A's folder with a
machine identity of its own: two clones at the same commit, each with its derived
state built.

For each size N, machine A saves N new memories and syncs (pushes); then machine B
syncs, which pulls them: that sync is timed, in process, and split into

- fetch: ``git fetch`` from the remote;
- commit: one ``git status`` (B wrote nothing: git still stats every file it tracks;
  its untracked cache spares re-reading the folders) and, when it names any, the
  staging of those paths and the commit;
- merge: the merge of the fetched branch (B wrote nothing: a fast-forward, ``git
  read-tree -m -u`` of the two commits and ``git update-ref``);
- apply: ``Memory.apply_pulled``, the refresh of the derived state (catalog, full-text
  index, facts, the consolidation of the domains touched);
- push: nothing to push when B wrote nothing (two ``rev-parse``);
- other: the rest (the recovery checks, ``git diff`` of the pulled paths, following
  purges, the bookkeeping in ``state/sync.json``).

N=1 is run ``--runs`` times (the median is reported, with the fastest and slowest);
every other N once. For N=1 the ``ihmt sync`` command is also timed end to end, as a
user waits for it (a new process: Python's start, opening the memory). Every pulled
memory is checked to be in B's catalog afterwards (``lost`` must be 0).

``--baseline REV`` measures the code of commit REV in the same run, for N=1: a third
machine B0, another copy of A's folder, runs REV's ``ihmt_mcp`` and ``ihmt_cli`` (their
sources exported with ``git archive`` and put first on ``PYTHONPATH``), in process in a
child that stays open across runs (as B's memory does here) and as the ``ihmt sync``
command. Every pull of one memory is made by B and by B0, in alternating order, so
that the load of a shared machine weighs on both alike.

Target (issue #18): pulling one memory costs well under a second.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ["IHMT_SEMANTIC"] = "off"  # before ihmt_mcp reads its settings

from ihmt_mcp import Memory, Settings, Sync
from ihmt_navigator import Consolidator, HeuristicSummarizer
from ihmt_store import Leaf, leaf_id_for

RESULTS = Path(__file__).resolve().parent / "results"
BATCH = 2000
DOMAINS = ("software.infra", "decisions", "preferences", "people", "projects", "general")
SUBJECTS = (
    "the deploy script",
    "the nightly backup",
    "the review rule",
    "the cache layer",
    "the staging database",
    "the release train",
    "the logging format",
    "the on-call",
)
FACTS = ("moved to the second region", "runs every four hours", "needs two approvals",
         "expires entries after an hour", "is reset before each test run",
         "leaves on Thursdays", "is one JSON object per line", "changes every Monday")  # fmt: skip
PHASES = ("fetch", "commit", "merge", "apply", "push", "other")
IHMT = Path(sys.executable).parent / "ihmt"


def leaves_for(start: int, count: int, tag: str) -> list[Leaf]:
    """``count`` distinct memories numbered from ``start`` (text varies by number)."""
    out = []
    for n in range(start, start + count):
        domain = DOMAINS[n % len(DOMAINS)]
        subject = SUBJECTS[(n // 7) % len(SUBJECTS)]
        fact = FACTS[(n // 3) % len(FACTS)]
        text = f"In project p{n % 97}, {subject} {fact} (note {tag}{n}, word zq{tag}{n}x)."
        out.append(
            Leaf(
                leaf_id=leaf_id_for(domain=domain, source="agent", position=n, text=text),
                text=text,
                timestamp=f"2025-{1 + n % 12:02}-{1 + n % 28:02}T10:00:00Z",
                domain=domain,
                source="agent",
                project=f"p{n % 97}",
            )
        )
    return out


def add(memory: Memory, leaves: Sequence[Leaf]) -> None:
    """Save and consolidate, in batches: the same files and derived state as saves."""
    store = memory.store
    consolidator = Consolidator(store, HeuristicSummarizer())
    for start in range(0, len(leaves), BATCH):
        chunk = leaves[start : start + BATCH]
        with store.batch():
            store.put_leaves(chunk)
            consolidator.consolidate(domains={leaf.domain for leaf in chunk})


def timed_sync(memory: Memory, host: str) -> tuple[float, dict[str, float], Any]:
    """One ``Sync.sync`` with its time split by phase (instance methods wrapped)."""
    sync = Sync(memory, host=host)
    spent = dict.fromkeys(PHASES, 0.0)

    def wrap(owner: Any, name: str, bucket: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[bucket] += time.perf_counter() - started

        setattr(owner, name, timed)

    wrap(sync, "_fetch", "fetch")
    wrap(sync, "_commit_into", "commit")
    wrap(sync, "_merge", "merge")
    wrap(sync, "_push", "push")
    wrap(memory, "apply_pulled", "apply")
    started = time.perf_counter()
    report = sync.sync()
    total = time.perf_counter() - started
    del memory.apply_pulled  # the instance attribute; the class's method again
    phases = {p: spent[p] for p in PHASES if p != "other"}
    phases["other"] = total - sum(phases.values())
    return total, phases, report


def settle_git(folder: Path) -> None:
    """Wait for the ``git gc --auto`` that a large commit starts in the background (it
    removes loose objects while a copy would read them), then pack what is loose."""
    deadline = time.monotonic() + 900
    while (folder / ".git" / "gc.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    subprocess.run(["git", "-C", str(folder), "gc", "--quiet"], check=True)


def cli_sync(home: Path, pythonpath: str = "") -> float:
    env = {**os.environ, "IHMT_HOME": str(home), "IHMT_SEMANTIC": "off"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    started = time.perf_counter()
    subprocess.run(
        [str(IHMT), "sync"], env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL
    )
    return time.perf_counter() - started


def export_baseline(rev: str, work: Path) -> str:
    """The ``PYTHONPATH`` that runs commit ``rev``'s ihmt-mcp and ihmt-cli."""
    top = Path(__file__).resolve().parents[2]
    target = work / "baseline"
    target.mkdir()
    wanted = ["packages/ihmt-mcp/src", "packages/ihmt-cli/src"]
    archive = subprocess.run(
        ["git", "-C", str(top), "archive", "--format=tar", rev, *wanted],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return os.pathsep.join(str(target / w) for w in wanted)


class Baseline:
    """A child process running the baseline's code, one timed sync per request."""

    def __init__(self, home: Path, pythonpath: str) -> None:
        env = {**os.environ, "PYTHONPATH": pythonpath, "IHMT_SEMANTIC": "off"}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def sync(self) -> tuple[float, dict[str, float]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("sync\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return answer["total"], answer["phases"]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def serve(home: Path) -> int:
    """``--serve HOME``: open the memory once, then one timed sync per line of stdin."""
    memory = Memory.open(Settings.for_home(home))
    try:
        for _ in sys.stdin:
            total, phases, _report = timed_sync(memory, "b0")
            print(json.dumps({"total": total, "phases": phases}), flush=True)
    finally:
        memory.close()
    return 0


def run(
    memories: int, sizes: Sequence[int], runs: int, work: Path, baseline: str = ""
) -> dict[str, Any]:
    remote = work / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    subprocess.run(
        ["git", "-C", str(remote), "symbolic-ref", "HEAD", "refs/heads/main"], check=True
    )
    home_a, home_b = work / "a", work / "b"
    started = time.perf_counter()
    a = Memory.init(home_a / "ihmt_memory", semantic="off")
    add(a, leaves_for(0, memories, "base"))
    # The fact timeline of those memories, as saves would have built it (its first use
    # would otherwise build it inside the first timed pull).
    a.timeline.rebuild()
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    Sync(a, host="a").init(str(remote))
    init_s = time.perf_counter() - started
    a.close()
    started = time.perf_counter()
    settle_git(home_a / "ihmt_memory")
    home_b0 = work / "b0"
    for home in (home_b, home_b0) if baseline else (home_b,):
        shutil.copytree(home_a, home, symlinks=True)
        (home / "ihmt_memory" / "state" / "clock.json").unlink(missing_ok=True)  # its own id
        # A copied index holds A's file stats: git would hash every file again at the
        # first sync, a cost of the copy that a clone made by 'ihmt sync --init' never pays.
        subprocess.run(
            ["git", "-C", str(home / "ihmt_memory"), "update-index", "-q", "--refresh"],
            check=False,
        )
    copy_s = time.perf_counter() - started
    a = Memory.open(Settings.for_home(home_a))
    b = Memory.open(Settings.for_home(home_b))
    pythonpath = export_baseline(baseline, work) if baseline else ""
    old = Baseline(home_b0, pythonpath) if baseline else None
    if old is not None:
        # One round first: a clone's first sync by a newer version may commit its
        # setup (.gitattributes), which both must have pulled before the timed rounds.
        Sync(b, host="b").sync()
        old.sync()
        Sync(a, host="a").sync()
        Sync(b, host="b").sync()
        old.sync()
    print(
        f"built {memories:,} memories in {build_s:.1f} s; sync --init (commit and push of "
        f"every memory) {init_s:.1f} s; the second clone copied in {copy_s:.1f} s",
        flush=True,
    )
    rows: list[dict[str, Any]] = []
    next_n = memories
    try:
        for size in sizes:
            repeats = runs if size == 1 else 1
            totals: list[float] = []
            phases: list[dict[str, float]] = []
            lost = 0
            before: list[float] = []
            before_phases: list[dict[str, float]] = []
            for run_number in range(repeats):
                new = leaves_for(next_n, size, "new")
                next_n += size
                add(a, new)
                sent = Sync(a, host="a").sync()
                assert sent.pushed and sent.saved == size, sent
                if old is not None and size == 1 and run_number % 2 == 0:
                    old_total, old_split = old.sync()
                total, split, report = timed_sync(b, "b")
                if old is not None and size == 1 and run_number % 2 == 1:
                    old_total, old_split = old.sync()
                if old is not None and size == 1:
                    before.append(old_total)
                    before_phases.append(old_split)
                held = b.store.entries([leaf.leaf_id for leaf in new])
                lost += size - len(held)
                assert set(report.pulled.added) >= set(held), "pulled but not reported"
                totals.append(total)
                phases.append(split)
            row: dict[str, Any] = {
                "pulled": size,
                "runs": repeats,
                "total_s": statistics.median(totals),
                "total_min_s": min(totals),
                "total_max_s": max(totals),
                **{f"{p}_s": statistics.median(s[p] for s in phases) for p in PHASES},
                "lost": lost,
                "each": [{"total_s": t, **s} for t, s in zip(totals, phases, strict=True)],
            }
            if before:
                row["baseline"] = {
                    "rev": baseline,
                    "total_s": statistics.median(before),
                    "total_min_s": min(before),
                    "total_max_s": max(before),
                    **{f"{p}_s": statistics.median(s[p] for s in before_phases) for p in PHASES},
                }
            if size == 1:
                b.close()
                cli: list[float] = []
                cli_before: list[float] = []
                for run_number in range(repeats):
                    add(a, leaves_for(next_n, 1, "cli"))
                    next_n += 1
                    Sync(a, host="a").sync()
                    if old is not None and run_number % 2 == 0:
                        cli_before.append(cli_sync(home_b0, pythonpath))
                    cli.append(cli_sync(home_b))
                    if old is not None and run_number % 2 == 1:
                        cli_before.append(cli_sync(home_b0, pythonpath))
                b = Memory.open(Settings.for_home(home_b))
                row["cli_s"] = statistics.median(cli)
                row["cli_runs"] = cli
                if cli_before:
                    row["baseline"]["cli_s"] = statistics.median(cli_before)
                    row["baseline"]["cli_runs"] = cli_before
            rows.append(row)
            print(format_row(row), flush=True)
        leaves_b = b.stats().leaves
    finally:
        a.close()
        b.close()
        if old is not None:
            old.close()
    return {
        "memories": memories,
        "build_s": build_s,
        "init_s": init_s,
        "leaves_after": leaves_b,
        "rows": rows,
    }


def format_row(row: dict[str, Any]) -> str:
    spread = (
        f" (min {row['total_min_s']:.3f}, max {row['total_max_s']:.3f}, {row['runs']} runs)"
        if row["runs"] > 1
        else ""
    )
    line = f"pulled {row['pulled']:,}: {row['total_s']:.3f} s{spread}"
    if "cli_s" in row:
        line += f"; ihmt sync {row['cli_s']:.3f} s"
    old = row.get("baseline")
    if old:
        line += f"; at {old['rev']}: {old['total_s']:.3f} s"
        if "cli_s" in old:
            line += f", ihmt sync {old['cli_s']:.3f} s"
    return line


def format_table(result: dict[str, Any]) -> str:
    head = ["pulled", "runs", "sync s", *(f"{p} s" for p in PHASES), "ihmt sync s", "lost"]
    lines = [
        [
            f"{r['pulled']:,}",
            str(r["runs"]),
            f"{r['total_s']:.3f}",
            *(f"{r[f'{p}_s']:.3f}" for p in PHASES),
            f"{r['cli_s']:.3f}" if "cli_s" in r else "",
            str(r["lost"]),
        ]
        for r in result["rows"]
    ]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    for r in result["rows"]:
        old = r.get("baseline")
        if old:
            lines.append(
                [
                    f"{r['pulled']:,} at {old['rev'][:8]}",
                    str(r["runs"]),
                    f"{old['total_s']:.3f}",
                    *(f"{old[f'{p}_s']:.3f}" for p in PHASES),
                    f"{old['cli_s']:.3f}" if "cli_s" in old else "",
                    "",
                ]
            )
    widths = [max(len(x) for x in col) for col in zip(head, *lines, strict=True)]
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    title = (
        f"ihmt sync: pulling N new memories into a store of {result['memories']:,} "
        "(target: pulling 1 well under a second)"
    )
    return "\n".join([title, "", line(head), rule, *(line(x) for x in lines)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=50_000, help="memories in the store")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[1, 100, 10_000], help="changes pulled"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs of the 1-change pull")
    parser.add_argument("--out", type=Path, default=RESULTS / "sync.json")
    parser.add_argument(
        "--baseline", default="", metavar="REV", help="also time commit REV's code (N=1)"
    )
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        return serve(args.serve)
    if shutil.which("git") is None:
        raise SystemExit("git is not installed")
    with tempfile.TemporaryDirectory(prefix="ihmt-bench-sync-") as tmp:
        baseline = ""
        if args.baseline:
            top = Path(__file__).resolve().parents[2]
            baseline = subprocess.run(
                ["git", "-C", str(top), "rev-parse", "--verify", f"{args.baseline}^{{commit}}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        result = run(args.memories, args.sizes, max(1, args.runs), Path(tmp), baseline)
    result["machine"] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
    }
    print()
    print(format_table(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
