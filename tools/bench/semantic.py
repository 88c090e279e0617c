"""What the semantic layer costs as the store grows: backfill, server search and save, CLI.

    python tools/bench/semantic.py [--sizes 5000 50000] [--queries 200] [--journal] [--out FILE]
    python tools/bench/semantic.py --recall 20000      # the sketch against a full scan
    python tools/bench/semantic.py --sizes 50000 --journal --keep DIR \
        --before WORKTREE [--after WORKTREE] [--rounds 3] [--cli-runs 3]
    python tools/bench/semantic.py --sizes 50000 --journal --keep DIR --in-process \
        [--rounds 3] [--answers FILE] [--profile FILE]

For each size, the synthetic corpus of ``_memories.generate`` is stored words-only (fast,
through the store and the navigator, as ``scale.py`` does) — with ``--journal``, the same
memories as a folder of 20 dated journals (``ingest.py``'s) through ``Memory.ingest``,
asked about by each entry's own detail ("what did I note about OPS-48213?") — then:

- **backfill**: ``Memory.index_semantic`` — what ``ihmt index --semantic`` runs on a store
  that had no vectors — timed, with its rate;
- **server**: the real stdio server (``python -m ihmt_mcp``) through the MCP SDK's
  client, once with ``IHMT_SEMANTIC=off`` and once with ``on``: warm ``search_memory``
  p50/p95 over the corpus's queries (a few asked first, untimed) and ``save_memory``
  p50/p95 of new memories, in the same run so the two modes meet the same machine;
- **CLI**: a one-shot ``ihmt search`` in a fresh process, words only and with the layer
  (its model read back from the user's cache folder), median of five;
- **resident memory**: the peak of any process the run started so far (the server with
  its vectors loaded is the largest), after each mode.

``--recall N`` embeds N journal entries with the model and asks 200 questions (entries by
their detail, and the generator's queries) of the in-memory index, which from 16,384
vectors scores a sketch first: how often its first memory, and its 30 nearest, are those of
a full scan of the float16 vectors (cosines rounded alike, ties by id).

``--keep DIR`` builds each size's store (and its vectors) in ``DIR`` once and uses it
again after (a run copies it first: its saves never change it). ``--before WORKTREE``
compares two versions of the code on copies of that store instead, with meaning, in
turns (the order alternates each round): ``WORKTREE``'s ``.venv`` (e.g. ``git worktree
add /tmp/base <commit>`` then ``uv sync`` there) against ``--after``'s (this checkout by
default), each with a model cache of its own. Per version, the medians over ``--rounds``
of: warm server search p50/p95 and save p50, and a one-shot ``ihmt search`` of the
first three questions, ``--cli-runs`` times each (wall and CPU). Every answer text is
kept: the server's to each question and the CLI's (but for its last line, how many files
it read); the run says how many are the same in both versions and exits 1 when one
differs.

``--in-process`` asks the kept store's questions of ``Memory.search`` in this process
instead (no server, no CLI): after five untimed questions, every question ``--rounds``
times, wall and CPU time of each (p50/p95); ``--answers FILE`` writes each answer (status,
ids in order, OUTDATED flags, compact text) as a JSON line, ``--profile FILE`` runs
cProfile over the first 100 questions and prints where the time went. Run it with each
version's interpreter (``/tmp/base/.venv/bin/python tools/bench/semantic.py …``) in turns
to compare two versions on one store, and diff their answer files.

The machine is shared: compare the two modes of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _memories import generate
from ingest import notes, write_folder
from scale import NavigatorSystem

RESULTS = Path(__file__).resolve().parent / "results"
_READS = re.compile(r"\(\d[\d,]* tokens · read \d+ branch and \d+ leaf file\(s\), [\d,]+ bytes\)")
"""The CLI's last line, what the search read: a measure, not the answer (left out when
two versions' answers are compared)."""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _server_timings(
    home: Path,
    semantic: str,
    queries: list[str],
    saves: list[str],
    python: str = sys.executable,
    answers: list[str] | None = None,
) -> dict[str, float]:
    """Warm search and save through the real stdio server run by ``python``; each
    search's answer text is appended to ``answers`` when given."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=python,
        args=["-m", "ihmt_mcp"],
        env={"IHMT_HOME": str(home), "IHMT_SEMANTIC": semantic},
        cwd=str(home.parent),
    )
    out: dict[str, float] = {}

    async def drive() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for query in queries[:5]:  # warm: the model, the vectors, the caches
                await session.call_tool("search_memory", {"query": query})
            search_ms = []
            for query in queries:
                started = time.perf_counter()
                answer = await session.call_tool("search_memory", {"query": query})
                search_ms.append((time.perf_counter() - started) * 1000)
                if answers is not None:
                    answers.append(_text_of(answer))
            save_ms = []
            for text in saves:
                started = time.perf_counter()
                await session.call_tool("save_memory", {"content": text})
                save_ms.append((time.perf_counter() - started) * 1000)
            out.update(
                search_p50=statistics.median(search_ms),
                search_p95=_pct(search_ms, 0.95),
                save_p50=statistics.median(save_ms),
                save_p95=_pct(save_ms, 0.95),
            )

    anyio.run(drive)
    return out


def _text_of(answer: Any) -> str:
    return "\n".join(getattr(part, "text", "") for part in answer.content)


def _cli_ms(
    home: Path,
    semantic: str,
    query: str,
    runs: int = 5,
    python: str = sys.executable,
    answers: list[str] | None = None,
    cpu: list[float] | None = None,
    cache: Path | None = None,
) -> float:
    """Median wall time of a one-shot ``ihmt search`` (the console script beside
    ``python``, its model cache in ``cache`` when given); its output is appended to
    ``answers`` and its CPU time (user + system, ms) to ``cpu`` when given."""
    ihmt = str(Path(python).parent / "ihmt")
    env = {**os.environ, "IHMT_HOME": str(home), "IHMT_SEMANTIC": semantic, "IHMT_PROJECT": ""}
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [ihmt, "search", query], env=env, capture_output=True, check=True, text=True
        )
        times.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if cpu is not None:
            used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            cpu.append(used * 1000)
        if answers is not None:
            answers.append(done.stdout)
    return statistics.median(times)


def _build(folder: Path, size: int, n_queries: int, journal: bool) -> dict[str, Any]:
    """Store the corpus words only in ``folder/home`` and backfill its vectors; return
    the build's figures, with the questions and the new memories a run asks and saves
    (``folder/questions.json``: a folder built before is used as it is)."""
    from ihmt_mcp import Memory, Settings
    from ihmt_store import Store

    kept = folder / "questions.json"
    if kept.exists():
        return dict(json.loads(kept.read_text("utf-8")))
    corpus = generate(size, 0)
    row: dict[str, Any] = {"size": size, "corpus": "journal" if journal else "synthetic"}
    queries = [q.text for q in corpus.queries][:n_queries]
    home = folder / "home"
    home.mkdir(parents=True)
    started = time.perf_counter()
    if journal:
        write_folder(folder / "journal", notes(size, 0), 20)
        with Memory.init(home / "ihmt_memory", semantic="off") as words:
            words.ingest([folder / "journal"], project="")
        picked = random.Random(size).sample(list(corpus.memories), min(n_queries, size))
        queries = [f"what did I note about {m.unique}?" for m in picked]
    else:
        system = NavigatorSystem(folder)
        system.ingest(list(corpus.memories))
        system.close()
        (folder / "memory").rename(home / "ihmt_memory")
    row["store_words_only_s"] = round(time.perf_counter() - started, 1)

    settings = Settings.for_home(home, cwd=folder)
    memory = Memory(Store.open(settings.store_path), settings=settings, semantic="on")
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if time.perf_counter() - last[0] > 15:
            last[0] = time.perf_counter()
            print(f"  {size}: embedded {done:,} of {total:,}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    embedded = memory.index_semantic(progress)
    backfill_s = time.perf_counter() - started
    row.update(
        backfill_s=round(backfill_s, 1),
        backfill_per_s=round(embedded / backfill_s, 1),
        embedded=embedded,
    )
    memory.close()
    print(f"  {size}: backfill {backfill_s:.0f} s", file=sys.stderr, flush=True)
    row["queries"] = queries
    row["saves"] = [m.text for m in corpus.extra][:40]
    kept.write_text(json.dumps(row), "utf-8")
    return row


def measure(
    size: int, n_queries: int, journal: bool = False, keep: Path | None = None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"ihmt-semantic-{size}-") as tmp:
        folder = keep / str(size) if keep is not None else Path(tmp)
        row = _build(folder, size, n_queries, journal)
        queries, saves = row.pop("queries"), row.pop("saves")
        pristine = folder / "home"
        home = Path(tmp) / "run" / "home"
        shutil.copytree(pristine, home)  # the saves below never change a kept store
        for mode in ("off", "on"):
            timings = _server_timings(
                home, mode, queries, saves[:20] if mode == "off" else saves[20:]
            )
            row.update({f"server_{mode}_{k}": round(v, 1) for k, v in timings.items()})
            row[f"cli_search_{mode}_ms"] = round(_cli_ms(home, mode, queries[0]), 0)
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            row[f"peak_rss_{mode}_mb"] = round(peak)
            print(
                f"  {size}: server and CLI with IHMT_SEMANTIC={mode}", file=sys.stderr, flush=True
            )
    return row


def compare(
    size: int,
    n_queries: int,
    journal: bool,
    keep: Path | None,
    before: Path,
    rounds: int,
    cli_runs: int,
    after: Path | None = None,
) -> dict[str, Any]:
    """The code of the worktree ``before`` against ``after``'s (this checkout's by
    default), with meaning, on copies of one store, in turns (who goes first
    alternates): the server's warm search p50/p95 and a one-shot ``ihmt search`` (wall
    and CPU), each the median over ``rounds``; and whether every answer (the server's to
    each question, the CLI's to the first three) is the same text in both."""
    versions = {
        "before": str(before / ".venv" / "bin" / "python"),
        "after": str(after / ".venv" / "bin" / "python") if after else sys.executable,
    }
    with tempfile.TemporaryDirectory(prefix=f"ihmt-compare-{size}-") as tmp:
        folder = keep / str(size) if keep is not None else Path(tmp) / "built"
        built = _build(folder, size, n_queries, journal)
        queries, saves = built["queries"], built["saves"]
        # Each version its own model cache (their layouts differ), filled before timing,
        # and a first one-shot search that writes what a version keeps for the next.
        caches = {label: Path(tmp) / f"cache-{label}" for label in versions}
        for label, python in versions.items():
            home = Path(tmp) / "warm" / "home"
            shutil.copytree(folder / "home", home)
            _cli_ms(home, "on", queries[0], 1, python, cache=caches[label])
            shutil.rmtree(home.parent)
        figures: dict[str, dict[str, list[float]]] = {v: {} for v in versions}
        answers: dict[str, list[str]] = {v: [] for v in versions}
        loads = []
        for turn in range(rounds):
            order = list(versions) if turn % 2 == 0 else list(versions)[::-1]
            for label in order:
                python = versions[label]
                home = Path(tmp) / "run" / "home"
                shutil.copytree(folder / "home", home)
                loads.append(os.getloadavg()[0])
                said: list[str] = []
                timings = _server_timings(home, "on", queries, saves[:20], python, said)
                cpu: list[float] = []
                cli = [
                    _cli_ms(home, "on", q, cli_runs, python, said, cpu, caches[label])
                    for q in queries[:3]
                ]
                timings["cli_search_ms"] = statistics.median(cli)
                timings["cli_cpu_ms"] = statistics.median(cpu)
                for key, value in timings.items():
                    figures[label].setdefault(key, []).append(value)
                said = [_READS.sub("", text) for text in said]
                if turn == 0:
                    answers[label] = said
                elif said != answers[label]:
                    print(f"  {label}: round {turn} answered otherwise", file=sys.stderr)
                shutil.rmtree(home.parent)
                print(
                    f"  {size}: round {turn + 1} of {rounds}, {label}: "
                    f"search p50 {timings['search_p50']:.1f} ms, "
                    f"CLI {timings['cli_search_ms']:.0f} ms",
                    file=sys.stderr,
                    flush=True,
                )
    same = sum(a == b for a, b in zip(answers["before"], answers["after"], strict=True))
    row: dict[str, Any] = {
        "size": size,
        "corpus": "journal" if journal else "synthetic",
        "rounds": rounds,
        "answers": len(answers["after"]),
        "answers_same": same,
        "load_min": round(min(loads), 2),
        "load_max": round(max(loads), 2),
    }
    for label, values in figures.items():
        for key, runs in values.items():
            row[f"{label}_{key}"] = round(statistics.median(runs), 1)
            row[f"{label}_{key}_runs"] = [round(v, 1) for v in runs]
    return row


def in_process(
    size: int,
    n_queries: int,
    journal: bool,
    keep: Path | None,
    rounds: int,
    answers: Path | None = None,
    profile: Path | None = None,
) -> dict[str, Any]:
    """Warm ``Memory.search`` in this process (with meaning) on a copy of the store:
    wall and CPU ms per question, p50/p95 over ``rounds`` passes; each answer written to
    ``answers`` (JSON lines) and a cProfile of the first 100 questions to ``profile``
    when given."""
    from ihmt_mcp import Memory, Settings
    from ihmt_store import Store

    with tempfile.TemporaryDirectory(prefix=f"ihmt-in-process-{size}-") as tmp:
        folder = keep / str(size) if keep is not None else Path(tmp) / "built"
        queries = _build(folder, size, n_queries, journal)["queries"]
        home = Path(tmp) / "run" / "home"
        shutil.copytree(folder / "home", home)  # a search may write state files
        settings = Settings.for_home(home, cwd=home.parent)
        memory = Memory(Store.open(settings.store_path), settings=settings, semantic="on")
        try:
            for query in queries[:5]:  # warm: the model, the vectors, the caches
                memory.search(query)
            if answers is not None:
                with answers.open("w", encoding="utf-8") as out:
                    for query in queries:
                        result = memory.search(query)
                        said = {
                            "query": query,
                            "status": result.status,
                            "ids": [hit.id for hit in result.results],
                            "outdated": [hit.outdated for hit in result.results],
                            "compact": result.compact,
                        }
                        out.write(json.dumps(said, ensure_ascii=False) + "\n")
            if profile is not None:
                import cProfile
                import pstats

                profiler = cProfile.Profile()
                profiler.runcall(lambda: [memory.search(q) for q in queries[:100]])
                profiler.dump_stats(str(profile))
                stats = pstats.Stats(profiler, stream=sys.stderr)
                stats.sort_stats("tottime").print_stats(30)
                stats.sort_stats("cumulative").print_stats(50)
            wall, cpu = [], []
            loads = [os.getloadavg()[0]]
            for _ in range(rounds):
                for query in queries:
                    started, used = time.perf_counter(), time.process_time()
                    memory.search(query)
                    cpu.append((time.process_time() - used) * 1000)
                    wall.append((time.perf_counter() - started) * 1000)
                loads.append(os.getloadavg()[0])
        finally:
            memory.close()
    return {
        "size": size,
        "corpus": "journal" if journal else "synthetic",
        "searches": len(wall),
        "wall_p50": round(statistics.median(wall), 2),
        "wall_p95": round(_pct(wall, 0.95), 2),
        "cpu_p50": round(statistics.median(cpu), 2),
        "cpu_p95": round(_pct(cpu, 0.95), 2),
        "load_min": round(min(loads), 2),
        "load_max": round(max(loads), 2),
    }


def _print_compare(rows: list[dict[str, Any]]) -> None:
    labels = [
        ("server search p50 ms", "search_p50", "<= 15"),
        ("server search p95 ms", "search_p95", "<= 40"),
        ("server save p50 ms", "save_p50", "<= 30"),
        ("one-shot CLI search ms", "cli_search_ms", "<= 500"),
        ("one-shot CLI search, CPU ms", "cli_cpu_ms", ""),
    ]
    print("| figure (with meaning) | target | " + " | ".join(
        f"{r['size']:,} before | {r['size']:,} after" for r in rows) + " |")  # fmt: skip
    print("|---|---|" + "---|---|" * len(rows))
    for label, key, target in labels:
        cells = " | ".join(f"{r[f'before_{key}']} | {r[f'after_{key}']}" for r in rows)
        print(f"| {label} | {target} | {cells} |")
    for r in rows:
        print(
            f"{r['size']:,}: {r['answers_same']} of {r['answers']} answers the same text, "
            f"medians of {r['rounds']} rounds, load average {r['load_min']}–{r['load_max']}"
        )


def sketch_recall(size: int) -> dict[str, float]:
    import numpy as np

    from ihmt_navigator import VectorIndex, load_embedder
    from ihmt_store import Store

    embedder, mode = load_embedder("on")
    if embedder is None:
        raise SystemExit(f"--recall: {mode.reason}")
    corpus = generate(size, 0)
    picked = random.Random(1).sample(list(corpus.memories), 100)
    questions = [f"what did I note about {m.unique}?" for m in picked]
    questions += [q.text for q in corpus.queries[:100]]
    with tempfile.TemporaryDirectory(prefix="ihmt-recall-") as tmp:
        store = Store.create(Path(tmp) / "m")
        index = VectorIndex(store, embedder)
        started = time.perf_counter()
        index.write({f"L-{i:06d}": line[11:] for i, line in enumerate(notes(size, 0))})
        embed_s = time.perf_counter() - started
        rows = store.derived_changes(index.space).rows
        ids = [item for item, _ in rows]
        full = np.stack([np.frombuffer(data or b"", dtype=np.float16) for _, data in rows])
        first = overlap = 0.0
        times = []
        for question in questions:
            started = time.perf_counter()
            top = index.query(question).top(30)
            times.append((time.perf_counter() - started) * 1000)
            cos = np.round(full.astype(np.float32) @ embedder.embed([question])[0], 4)
            best = sorted(range(len(ids)), key=lambda r: (-cos[r], ids[r]))[:30]
            first += top[0][0] == ids[best[0]]
            overlap += len({i for i, _ in top} & {ids[r] for r in best}) / 30
        store.close()
    return {
        "size": size,
        "embedded_per_s": round(size / embed_s, 1),
        "same_first": round(first / len(questions), 3),
        "top30_overlap": round(overlap / len(questions), 3),
        "query_p50_ms": round(statistics.median(times), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 50000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--journal", action="store_true", help="a folder of dated journals")
    parser.add_argument("--out", type=Path, default=RESULTS / "semantic.json")
    parser.add_argument("--recall", type=int, default=0, help="the sketch against a full scan")
    parser.add_argument(
        "--keep", type=Path, help="build each size's store here once, and reuse it after"
    )
    parser.add_argument(
        "--before", type=Path, help="a worktree (with its .venv) to compare, with meaning"
    )
    parser.add_argument("--after", type=Path, help="with --before: the worktree to compare it with")
    parser.add_argument("--rounds", type=int, default=3, help="with --before: turns each")
    parser.add_argument("--cli-runs", type=int, default=3, help="with --before: per question")
    parser.add_argument(
        "--in-process", action="store_true", help="Memory.search in this process, timed"
    )
    parser.add_argument("--answers", type=Path, help="with --in-process: each answer, JSON lines")
    parser.add_argument("--profile", type=Path, help="with --in-process: cProfile's stats file")
    args = parser.parse_args(argv)
    if args.recall:
        print(json.dumps(sketch_recall(args.recall), indent=1))
        return 0
    if args.in_process:
        rows = [
            in_process(size, args.queries, args.journal, args.keep, args.rounds,
                       args.answers, args.profile)
            for size in args.sizes
        ]  # fmt: skip
        for row in rows:
            print(json.dumps(row))
        return 0
    if args.before is not None:
        rows = [
            compare(size, args.queries, args.journal, args.keep, args.before, args.rounds,
                    args.cli_runs, args.after)
            for size in args.sizes
        ]  # fmt: skip
        _print_compare(rows)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"bench": "semantic-compare", "sizes": rows}, indent=1))
        return 0 if all(r["answers_same"] == r["answers"] for r in rows) else 1
    rows = [measure(size, args.queries, args.journal, args.keep) for size in args.sizes]
    labels = [
        ("store words only, s", "store_words_only_s", ""),
        ("backfill (index --semantic), s", "backfill_s", "<= 300 at 50,000"),
        ("backfill, memories/s", "backfill_per_s", ""),
        ("server search p50 ms, words only", "server_off_search_p50", ""),
        ("server search p50 ms, with meaning", "server_on_search_p50", "<= 15"),
        ("server search p95 ms, words only", "server_off_search_p95", ""),
        ("server search p95 ms, with meaning", "server_on_search_p95", "<= 40"),
        ("server save p50 ms, words only", "server_off_save_p50", ""),
        ("server save p50 ms, with meaning", "server_on_save_p50", "<= 30"),
        ("server save p95 ms, with meaning", "server_on_save_p95", ""),
        ("one-shot CLI search ms, words only", "cli_search_off_ms", ""),
        ("one-shot CLI search ms, with meaning", "cli_search_on_ms", "<= 500"),
        ("peak resident MB, words only", "peak_rss_off_mb", ""),
        ("peak resident MB, with meaning", "peak_rss_on_mb", "<= 1,000"),
    ]
    print("| figure | target | " + " | ".join(f"{r['size']:,}" for r in rows) + " |")
    print("|---|---|" + "---|" * len(rows))
    for label, key, target in labels:
        print(f"| {label} | {target} | " + " | ".join(str(r.get(key, "")) for r in rows) + " |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"bench": "semantic", "sizes": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
