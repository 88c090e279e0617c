"""A large kept store (``store.py --keep``): what the server holds, rebuild, one sync.

    python tools/bench/store.py --sizes 500000 --vectors --keep /tmp/bench   # once
    python tools/bench/large_store.py consolidate /tmp/bench/store-500000/m  # once
    python tools/bench/large_store.py memory /tmp/bench/store-500000/m [--trace]
    python tools/bench/large_store.py server /tmp/bench/store-500000/m
    python tools/bench/large_store.py rebuild /tmp/bench/store-500000/m [--profile FILE]
    python tools/bench/large_store.py sync /tmp/bench/store-500000/m [--work DIR]

``consolidate``: group the store's leaves into branches, as saves and ingests do
(``store.py`` writes them loose; a first save in a domain of 125,000 loose leaves would
group them all). The figures below are of a consolidated store.

``memory``: in a fresh process, resident memory (``VmRSS``, its anonymous and file-backed
parts, and the peak ``VmHWM``) after each step of what a server does with the store:
open it, load the vectors (from the table, then in a second process from the snapshot the
first wrote), answer questions through ``Memory.search`` with a stand-in encoder (the
simulated vectors are random; the model's own cost is ``semantic.py``'s), save memories.
``--trace`` also runs it under ``tracemalloc`` and prints the lines that hold the most.

``server``: the real stdio server (``python -m ihmt_mcp``, the shipped model) over the
store, the simulated vectors copied into the model's space first: warm ``search_memory``
and ``save_memory`` p50/p95 and the server's resident memory, read from ``/proc``.

``rebuild``: ``Store.rebuild`` timed (under cProfile with ``--profile``).

``sync``: a copy of the store's files made a clone of a bare remote (``ihmt sync
--init``, once, kept in ``--work`` with a second clone copied from it), then, ``--runs``
times, one new memory saved on the first clone (``ihmt save``), its ``ihmt sync``
(commit and push) timed, then the second clone's (the pull): medians, wall clock.

The saves of ``memory`` and ``server`` are added to the kept store (``sync`` works on
copies of its files).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

BENCH_SPACE = "vectors/bench@1"
"""The space ``store.py --vectors`` writes the simulated vectors to."""

STEPS = textwrap.dedent(
    """
    import json, os, sys, time, tracemalloc
    trace = sys.argv[2] == "trace"
    if trace:
        tracemalloc.start(8)

    def status():
        out = {}
        with open("/proc/self/status") as file:
            for line in file:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                    out[key] = int(value.split()[0]) // 1024
        return out

    steps = []
    started = time.perf_counter()
    def step(name):
        row = {"step": name, "s": round(time.perf_counter() - started, 2), **status()}
        if trace:
            row["traced_mb"], row["traced_peak_mb"] = (
                round(v / 2**20) for v in tracemalloc.get_traced_memory())
        steps.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)

    step("python")
    import numpy as np
    from ihmt_mcp import Memory
    from ihmt_navigator import VectorIndex, SemanticMode
    from ihmt_store import Store
    step("imports")

    class Stub:
        name, dim = "bench@1", 512
        def embed(self, texts):
            rng = np.random.default_rng(len(texts[0]))
            v = rng.standard_normal((len(texts), 512)) / np.sqrt(1 + np.arange(512))
            return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    store = Store.open(sys.argv[1])
    step("store open")
    memory = Memory(store, semantic="on")
    memory._vectors = VectorIndex(store, Stub())
    memory._mode = SemanticMode(True, Stub.name, "")
    memory.vectors.refresh()
    step("vectors loaded")
    questions = ["what did we decide about the deploy %d" % n for n in range(40)]
    memory.search(questions[0])
    step("first search")
    memory.search(questions[1])
    step("second search (sketch fitted)")
    times = []
    for q in questions[2:]:
        t0 = time.perf_counter()
        memory.search(q)
        times.append((time.perf_counter() - t0) * 1000)
    step("40 searches")
    saves = []
    for n in range(10):
        t0 = time.perf_counter()
        memory.save("a new note number %d about the memory bench at %f" % (n, time.time()))
        saves.append((time.perf_counter() - t0) * 1000)
    step("10 saves")
    top = []
    if trace:
        snap = tracemalloc.take_snapshot()
        for stat in snap.statistics("lineno")[:15]:
            frame = stat.traceback[0]
            top.append([f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}",
                        round(stat.size / 2**20, 1), stat.count])
    times.sort()
    print(json.dumps({"steps": steps, "search_p50_ms": times[len(times) // 2],
                      "search_p95_ms": times[int(0.95 * len(times))],
                      "save_p50_ms": sorted(saves)[len(saves) // 2], "top": top}))
    """
)


def _memory(store: Path, trace: bool) -> dict[str, object]:
    """Two fresh processes in turn (the first loads the vectors from the table and writes
    the snapshot, unless one is there; the second maps it), then a traced one."""
    from ihmt_store import Store

    snapshot = Store.open(store).state_file("vectors_bench_1.vectors")
    snapshot.unlink(missing_ok=True)
    out: dict[str, object] = {}
    runs = [("from the table", "plain"), ("from the snapshot", "plain")]
    if trace:
        runs.append(("traced, from the snapshot", "trace"))
    for label, mode in runs:
        done = subprocess.run(
            [sys.executable, "-c", STEPS, str(store), mode],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(done.stdout.strip().splitlines()[-1])
        out[label] = row
        print(f"\n{label}: search p50 {row['search_p50_ms']:.1f} / p95 "
              f"{row['search_p95_ms']:.1f} ms, save p50 {row['save_p50_ms']:.1f} ms")  # fmt: skip
        print(f"  {'step':<32} {'s':>6} {'RSS':>6} {'anon':>6} {'file':>6} {'peak':>6}"
              + ("  traced (peak)" if mode == "trace" else ""))  # fmt: skip
        for s in row["steps"]:
            extra = f"  {s['traced_mb']} ({s['traced_peak_mb']})" if "traced_mb" in s else ""
            print(f"  {s['step']:<32} {s['s']:>6.1f} {s['VmRSS']:>6} {s['RssAnon']:>6} "
                  f"{s['RssFile']:>6} {s['VmHWM']:>6}{extra}")  # fmt: skip
        for where, mb, count in row["top"]:
            print(f"    {mb:>8.1f} MB {count:>9,} blocks  {where}")
    return out


def _model_space(store: Path) -> str:
    """Copy the simulated vectors into the shipped model's space (once), so that the real
    server loads them; its space's name."""
    import sqlite3

    from ihmt_navigator import load_embedder

    embedder, mode = load_embedder("on")
    if embedder is None:
        raise SystemExit(f"the semantic layer is not available: {mode.reason}")
    space = f"vectors/{embedder.name}"
    conn = sqlite3.connect(store / "state" / "derived.sqlite3")
    with conn:
        if not conn.execute("SELECT 1 FROM spaces WHERE space = ?", (space,)).fetchone():
            conn.execute(
                "INSERT INTO derived SELECT ?, item_id, seq, data FROM derived WHERE space = ?",
                (space, BENCH_SPACE),
            )
            conn.execute(
                "INSERT INTO spaces SELECT ?, epoch, seq FROM spaces WHERE space = ?",
                (space, BENCH_SPACE),
            )
    conn.close()
    return space


def _status(pid: int) -> dict[str, int]:
    """``VmRSS``, ``RssAnon``, ``RssFile`` and ``VmHWM`` of process ``pid``, in MB."""
    out = {}
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0]) // 1024
    return out


def _child_server() -> int:
    """The pid of this process's child running ``ihmt_mcp``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                ppid = int(file.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                command = file.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"ihmt_mcp" in command:
            return int(entry)
    raise RuntimeError("the server process was not found")


def _server(store: Path, questions: int) -> dict[str, object]:
    """The real stdio server over the store (a home folder linking to it), the shipped
    model on: warm search and save p50/p95, the server's memory after each phase."""
    import tempfile

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    space = _model_space(store)
    out: dict[str, object] = {"space": space}
    with tempfile.TemporaryDirectory(prefix="ihmt-large-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "ihmt_memory").symlink_to(store.resolve())
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ihmt_mcp"],
            env={"IHMT_HOME": str(home), "IHMT_SEMANTIC": "on"},
            cwd=tmp,
        )
        asked = [f"what did we decide about the deploy {n}?" for n in range(questions + 5)]

        async def drive() -> None:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                started = time.perf_counter()
                await session.initialize()
                pid = _child_server()
                out["started"] = _status(pid)
                for query in asked[:5]:  # warm: the model, the vectors, the sketch
                    await session.call_tool("search_memory", {"query": query})
                out["warm_s"] = round(time.perf_counter() - started, 1)
                out["warm"] = _status(pid)
                search_ms = []
                for query in asked[5:]:
                    t0 = time.perf_counter()
                    await session.call_tool("search_memory", {"query": query})
                    search_ms.append((time.perf_counter() - t0) * 1000)
                out["searched"] = _status(pid)
                save_ms = []
                for n in range(10):
                    t0 = time.perf_counter()
                    await session.call_tool(
                        "save_memory",
                        {"content": f"The bench host b{n} runs the nightly job at {n} am."},
                    )
                    save_ms.append((time.perf_counter() - t0) * 1000)
                out["saved"] = _status(pid)
                for query in asked[:5]:
                    await session.call_tool("search_memory", {"query": query})
                out["after"] = _status(pid)
                search_ms.sort()
                save_ms.sort()
                out.update(
                    search_p50_ms=statistics.median(search_ms),
                    search_p95_ms=search_ms[int(0.95 * (len(search_ms) - 1))],
                    save_p50_ms=statistics.median(save_ms),
                    save_p95_ms=save_ms[int(0.95 * (len(save_ms) - 1))],
                )

        anyio.run(drive)
    print(f"server: search p50 {out['search_p50_ms']:.1f} / p95 {out['search_p95_ms']:.1f} ms, "
          f"save p50 {out['save_p50_ms']:.1f} / p95 {out['save_p95_ms']:.1f} ms, "
          f"warm in {out['warm_s']} s")  # fmt: skip
    print(f"  {'phase':<10} {'RSS':>6} {'anon':>6} {'file':>6} {'peak':>6}")
    for phase in ("started", "warm", "searched", "saved", "after"):
        row = out[phase]
        assert isinstance(row, dict)
        print(f"  {phase:<10} {row['VmRSS']:>6} {row['RssAnon']:>6} {row['RssFile']:>6} "
              f"{row['VmHWM']:>6}")  # fmt: skip
    return out


def _ihmt(home: Path, *args: str) -> float:
    """Run ``ihmt ARGS`` on the memory in ``home`` (words only); its wall time."""
    env = {**os.environ, "IHMT_HOME": str(home), "IHMT_SEMANTIC": "off"}
    started = time.perf_counter()
    subprocess.run(
        [str(Path(sys.executable).parent / "ihmt"), *args],
        env=env,
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def _sync(store: Path, work: Path, runs: int) -> dict[str, object]:
    """``ihmt sync`` of one new memory: pushed by the clone that saved it (A), then
    pulled by another (B, a copy of A's folder), ``runs`` times each (wall, median)."""
    remote, home_a, home_b = work / "remote.git", work / "a", work / "b"
    out: dict[str, object] = {}
    if not (home_a / "ihmt_memory" / ".git").exists():
        (home_a / "ihmt_memory").mkdir(parents=True)
        started = time.perf_counter()
        # The files and the index; the vectors are derived and not synced.
        subprocess.run(
            f"tar -C {store} --exclude='./state/derived.sqlite3*' --exclude='./state/*.vectors'"
            f" -cf - . | tar -C {home_a / 'ihmt_memory'} -xf -",
            shell=True,
            check=True,
        )
        subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
        subprocess.run(["git", "-C", str(remote), "symbolic-ref", "HEAD", "refs/heads/main"],
                       check=True)  # fmt: skip
        out["init_s"] = _ihmt(home_a, "sync", "--init", str(remote))
        out["copy_s"] = time.perf_counter() - started - out["init_s"]
    if not home_b.exists():
        started = time.perf_counter()
        subprocess.run(["cp", "-a", str(home_a), str(home_b)], check=True)
        (home_b / "ihmt_memory" / "state" / "clock.json").unlink(missing_ok=True)  # its own id
        # A copied index holds A's file stats: git would hash every file again at the
        # first sync, which a clone made by 'ihmt sync --init' never pays.
        subprocess.run(["git", "-C", str(home_b / "ihmt_memory"), "update-index", "-q",
                        "--refresh"], check=False)  # fmt: skip
        _ihmt(home_b, "sync")
        out["second_clone_s"] = time.perf_counter() - started
    push, pull = [], []
    for n in range(runs):
        _ihmt(home_a, "save", f"The bench host s{n} at {time.time():.0f} runs its backups hourly.")
        push.append(_ihmt(home_a, "sync"))
        pull.append(_ihmt(home_b, "sync"))
        print(f"  run {n + 1}: push {push[-1]:.2f} s, pull {pull[-1]:.2f} s", flush=True)
    out.update(push_s=push, pull_s=pull, push_p50_s=statistics.median(push),
               pull_p50_s=statistics.median(pull))  # fmt: skip
    print(f"ihmt sync of one new memory: push p50 {out['push_p50_s']:.2f} s, "
          f"pull p50 {out['pull_p50_s']:.2f} s")  # fmt: skip
    return out


def _consolidate(store: Path) -> dict[str, object]:
    from ihmt_mcp import Memory
    from ihmt_store import Store

    with Memory(Store.open(store), semantic="off") as memory:
        started = time.perf_counter()
        report = memory.consolidate()
        spent = time.perf_counter() - started
    print(f"{len(report.branches_created):,} branches in {spent:.0f} s")
    return {"branches": len(report.branches_created), "consolidate_s": spent}


def _rebuild(store: Path, profile: Path | None) -> dict[str, object]:
    """``Store.rebuild`` of the kept store, timed (wall and CPU), in this process."""
    from ihmt_store import Store

    opened = Store.open(store)
    try:
        profiler = None
        if profile is not None:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        wall, cpu = time.perf_counter(), time.process_time()
        report = opened.rebuild()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if profiler is not None and profile is not None:
            profiler.disable()
            profiler.dump_stats(profile)
            import pstats

            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    finally:
        opened.close()
    print(f"rebuild of {report.leaves:,} leaves and {report.branches:,} branches: "
          f"{wall:.1f} s ({cpu:.1f} s CPU)")  # fmt: skip
    return {"leaves": report.leaves, "branches": report.branches, "rebuild_s": wall,
            "rebuild_cpu_s": cpu}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["consolidate", "memory", "server", "rebuild", "sync"])
    parser.add_argument("store", type=Path, help="a store kept by store.py --keep")
    parser.add_argument("--trace", action="store_true", help="memory: also under tracemalloc")
    parser.add_argument("--questions", type=int, default=40, help="server: timed searches")
    parser.add_argument("--profile", type=Path, help="rebuild: cProfile's stats to FILE")
    parser.add_argument("--work", type=Path, default=Path("/tmp/ihmt-large-sync"),
                        help="sync: the clones and the remote, kept for the next run")  # fmt: skip
    parser.add_argument("--runs", type=int, default=5, help="sync: new memories pushed")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    started = time.time()
    if args.what == "consolidate":
        result = _consolidate(args.store)
    elif args.what == "memory":
        result = _memory(args.store, args.trace)
    elif args.what == "server":
        result = _server(args.store, args.questions)
    elif args.what == "sync":
        result = _sync(args.store, args.work, args.runs)
    elif args.what == "rebuild":
        result = _rebuild(args.store, args.profile)
    else:
        raise SystemExit(f"{args.what}: not yet")
    result = {"bench": f"large_store {args.what}", "store": str(args.store),
              "load": os.getloadavg(), "started": started, **result}  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
