"""Benchmark of ihmt-store: writes, full-text candidates and rebuild, 50 to 500,000 leaves.

    python tools/bench/store.py [--sizes 50 500 5000 50000] [--vectors] [--out results/store.json]
    python tools/bench/store.py --sizes 5000 50000 200000 500000 --vectors   # issue 26
    python tools/bench/store.py --sizes 500000 --vectors --keep /tmp/bench   # kept for reuse

Per size: bulk ingest rate (batches of 1,000; and the rate of the last tenth, to show it
flat as the store grows), p50/p95 of one more single write (each a full locked, flushed,
committed save), p50/p95 of a full-text candidate query that names one memory's unique
detail among words shared with many others, rebuild time, bytes on disk and their ratio
to the memories' text. Beyond 50,000 the generator's memories are used again, each with
a serial number that keeps it unique.

``--vectors`` simulates the semantic layer at that size: a 512-dimension float16 vector
per leaf in the store's derived table (random, drawn with the anisotropy of a sentence
encoder's: a model would take hours to embed 500,000), then, in a fresh process as the
MCP server holds them, the vectors loaded (seconds, resident memory) and the meaning
step of a search (the question's cosine with every vector, the 100 nearest) p50/p95.
The model's own cost (about 7 ms a question, its resident memory) is ``semantic.py``'s.
The peak is that process's own (``VmHWM``): its ``ru_maxrss`` also counts the peak of
this benchmark's process when it started it (Linux keeps it through fork and exec), and
so showed the 500,000-leaf rebuild's 1.7 GB as the vectors'. ``large_store.py`` measures
the real server over a store kept with ``--keep``.

Targets (issue 2): one write at 50,000 <= 10 ms p50 and <= 2x the figure at 50; a
candidate query <= 5 ms p50 at 50,000. Issue 26, at 500,000: a save <= 15 ms, bulk
>= 2,000/s and flat, rebuild <= 3 min, disk <= 2x the text, the server <= 1 GB.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _memories import generate

from ihmt_store import Leaf, Store, leaf_id_for


def _leaf(text: str, index: int, source: str = "bench") -> Leaf:
    domain = ("software.infra", "decisions", "personal", "projects")[index % 4]
    return Leaf(
        leaf_id=leaf_id_for(domain=domain, source=source, position=index, text=text),
        text=text,
        timestamp=f"2025-{1 + index % 12:02d}-{1 + index % 28:02d}",
        domain=domain,
        source=source,
    )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


GENERATED = 50_000
"""The most memories ``generate`` makes; larger sizes reuse them, numbered."""

VECTORS = textwrap.dedent(
    """
    import json, os, resource, statistics, sys, time
    import numpy as np
    from ihmt_navigator import VectorIndex
    from ihmt_store import Store

    class Stub:
        name, dim = "bench@1", 512
        def embed(self, texts):
            rng = np.random.default_rng(len(texts[0]))
            v = rng.standard_normal((len(texts), 512)) / np.sqrt(1 + np.arange(512))
            return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    def peak():  # MB, this process's own peak (Linux: ru_maxrss also counts the parent's
        # peak when it started this process, through fork and exec), else ru_maxrss
        try:
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def resident():  # MB now (Linux), else the peak so far
        try:
            with open("/proc/self/statm") as statm:
                return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except OSError:
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    t0 = time.perf_counter()
    store = Store.open(sys.argv[1])
    opened = {"open_s": time.perf_counter() - t0, "rss_open_peak_mb": peak(),
              "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    before = resident()
    t0 = time.perf_counter()
    index = VectorIndex(store, Stub())
    index.refresh()
    load = time.perf_counter() - t0
    times = []
    for n in range(60):
        t0 = time.perf_counter()
        index.query("question number %d" % n).top(100)
        times.append((time.perf_counter() - t0) * 1000)
    times = sorted(times[10:])
    print(json.dumps({
        "vectors": index.size, "vectors_load_s": load,
        "meaning_p50_ms": statistics.median(times), "meaning_p95_ms": times[int(0.95 * len(times))],
        "rss_mb": peak(),
        "rss_vectors_mb": resident() - before, **opened,
    }))
    """
)


def _texts(size: int) -> list[str]:
    """``size`` memory texts, unique: the generator's, numbered again beyond its range."""
    base = [m.text for m in generate(min(size, GENERATED), seed=size).memories]
    return [
        text if i < len(base) else f"{text} (note {i})"
        for i, text in ((i, base[i % len(base)]) for i in range(size))
    ]


def _put_vectors(store: Store, ids: list[str]) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    weights = 1 / np.sqrt(1 + np.arange(512))
    for start in range(0, len(ids), 5000):
        chunk = ids[start : start + 5000]
        v = rng.standard_normal((len(chunk), 512)) * weights
        v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float16)
        store.put_derived(
            "vectors/bench@1", dict(zip(chunk, (r.tobytes() for r in v), strict=True))
        )


def _vectors(path: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", VECTORS, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def _folder(keep: Path | None, size: int) -> contextlib.AbstractContextManager[str]:
    """Where the store of ``size`` is made: a temporary folder, or ``keep/store-SIZE``
    left in place (for the memory, rebuild and sync benches to reuse)."""
    if keep is None:
        return tempfile.TemporaryDirectory(prefix="ihmt-bench-")
    folder = keep / f"store-{size}"
    if folder.exists():
        raise SystemExit(f"{folder} exists; remove it or keep elsewhere")
    folder.mkdir(parents=True)
    return contextlib.nullcontext(str(folder))


def run_size(
    size: int, probes: int, vectors: bool = False, keep: Path | None = None
) -> dict[str, float]:
    texts = _texts(size)
    corpus = generate(min(size, GENERATED), seed=size).memories
    spare = generate(max(probes, 50), seed=size + 1).memories
    with _folder(keep, size) as tmp:
        store = Store.create(Path(tmp) / "m")
        start = time.perf_counter()
        tail_from, tail_start = (size - size // 10) // 1000 * 1000, start
        ids: list[str] = []
        for chunk in range(0, size, 1000):
            if chunk >= tail_from and tail_start == start:
                tail_start = time.perf_counter()
            with store.batch():
                stored = store.put_leaves(
                    _leaf(t, i) for i, t in enumerate(texts[chunk : chunk + 1000], chunk)
                )
            ids.extend(leaf.leaf_id for leaf in stored)
        bulk = time.perf_counter() - start
        tail = time.perf_counter() - tail_start

        writes = []
        for i in range(size, size + probes):
            leaf = _leaf(spare[(i - size) % len(spare)].text, i, source="probe")
            t0 = time.perf_counter()
            store.put_leaf(leaf)
            writes.append((time.perf_counter() - t0) * 1000)

        rng = random.Random(size)
        targets = rng.sample(corpus[: min(size, GENERATED)], min(probes, size))
        hits = 0
        reads = []
        for m in targets:
            query = f"what did we say about {m.project or ''} {m.unique}"
            t0 = time.perf_counter()
            found = store.candidates(query, limit=20)
            reads.append((time.perf_counter() - t0) * 1000)
            hits += bool(found) and m.unique in found[0].entry.excerpt

        t0 = time.perf_counter()
        store.rebuild()
        rebuild = time.perf_counter() - t0
        disk = _du(Path(tmp) / "m")
        meaning: dict[str, float] = {}
        if vectors:
            _put_vectors(store, ids)
            meaning = _vectors(Path(tmp) / "m")
            meaning["bytes_with_vectors"] = _du(Path(tmp) / "m")
        store.close()
    text_bytes = sum(len(t.encode("utf-8")) for t in texts)
    return {
        "size": size,
        "bulk_per_s": size / bulk,
        "bulk_last_tenth_per_s": (size - tail_from) / tail if tail > 0 else 0.0,
        "text_bytes": text_bytes,
        "disk_per_text": disk / text_bytes,
        **meaning,
        "write_p50_ms": statistics.median(writes),
        "write_p95_ms": _pct(writes, 0.95),
        "query_p50_ms": statistics.median(reads),
        "query_p95_ms": _pct(reads, 0.95),
        "query_hit_at_1": hits / len(targets),
        "rebuild_s": rebuild,
        "bytes_on_disk": disk,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 5000, 50000])
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--vectors", action="store_true", help="simulate the semantic layer")
    parser.add_argument(
        "--keep", type=Path, help="leave each store in KEEP/store-SIZE instead of deleting it"
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "store.json"
    )
    args = parser.parse_args(argv)
    rows = []
    header = (
        f"{'leaves':>7} {'bulk/s':>8} {'write p50':>10} {'write p95':>10} "
        f"{'query p50':>10} {'query p95':>10} {'hit@1':>6} {'rebuild':>8} {'disk MB':>8}"
    )
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        row = run_size(size, args.probes, args.vectors, args.keep)
        rows.append(row)
        print(
            f"{size:>7} {row['bulk_per_s']:>8.0f} {row['write_p50_ms']:>8.2f}ms "
            f"{row['write_p95_ms']:>8.2f}ms {row['query_p50_ms']:>8.2f}ms "
            f"{row['query_p95_ms']:>8.2f}ms {row['query_hit_at_1']:>6.2f} "
            f"{row['rebuild_s']:>7.2f}s {row['bytes_on_disk'] / 1e6:>8.1f}",
            flush=True,
        )
        print(
            f"{'':>7} last tenth {row['bulk_last_tenth_per_s']:,.0f}/s; disk "
            f"{row['disk_per_text']:.1f}x the text ({row['text_bytes'] / 1e6:.1f} MB)",
            flush=True,
        )
        if "vectors" in row:
            print(
                f"{'':>7} vectors: loaded in {row['vectors_load_s']:.1f} s, meaning step "
                f"p50 {row['meaning_p50_ms']:.1f} / p95 {row['meaning_p95_ms']:.1f} ms, "
                f"resident {row['rss_mb']:,.0f} MB ({row['rss_vectors_mb']:,.0f} MB for the "
                f"vectors), disk with vectors {row['bytes_with_vectors'] / 1e6:,.0f} MB",
                flush=True,
            )
    first, last = rows[0], rows[-1]
    verdict = {
        "write_ratio_last_vs_first": last["write_p50_ms"] / first["write_p50_ms"],
        "targets": {
            "write_p50_ms<=10 at largest": last["write_p50_ms"] <= 10,
            "write ratio <= 2": last["write_p50_ms"] <= 2 * first["write_p50_ms"],
            "query_p50_ms<=5 at largest": last["query_p50_ms"] <= 5,
        },
    }
    print(json.dumps(verdict, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"bench": "store", "rows": rows, **verdict}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
