"""What the semantic layer costs as the store grows: backfill, server search and save, CLI.

    python tools/bench/semantic.py [--sizes 5000 50000] [--queries 200] [--journal] [--out FILE]
    python tools/bench/semantic.py --recall 20000      # the sketch against a full scan

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

The machine is shared: compare the two modes of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
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


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _server_timings(
    home: Path, semantic: str, queries: list[str], saves: list[str]
) -> dict[str, float]:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
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
                await session.call_tool("search_memory", {"query": query})
                search_ms.append((time.perf_counter() - started) * 1000)
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


def _cli_ms(home: Path, semantic: str, query: str, runs: int = 5) -> float:
    ihmt = str(Path(sys.executable).parent / "ihmt")
    env = {**os.environ, "IHMT_HOME": str(home), "IHMT_SEMANTIC": semantic, "IHMT_PROJECT": ""}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([ihmt, "search", query], env=env, capture_output=True, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(size: int, n_queries: int, journal: bool = False) -> dict[str, Any]:
    from ihmt_mcp import Memory, Settings
    from ihmt_store import Store

    corpus = generate(size, 0)
    row: dict[str, Any] = {"size": size, "corpus": "journal" if journal else "synthetic"}
    queries = [q.text for q in corpus.queries][:n_queries]
    with tempfile.TemporaryDirectory(prefix=f"ihmt-semantic-{size}-") as tmp:
        folder = Path(tmp)
        home = folder / "home"
        home.mkdir()
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

        saves = [m.text for m in corpus.extra][:40]
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
    args = parser.parse_args(argv)
    if args.recall:
        print(json.dumps(sketch_recall(args.recall), indent=1))
        return 0
    rows = [measure(size, args.queries, args.journal) for size in args.sizes]
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
