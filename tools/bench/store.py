"""Benchmark of ihmt-store: writes, full-text candidates and rebuild from 50 to 50,000 leaves.

    python tools/bench/store.py [--sizes 50 500 5000 50000] [--out results/store.json]

Per size: bulk ingest rate (one batch), p50/p95 of one more single write (each a full
locked, flushed, committed save), p50/p95 of a full-text candidate query that names one
memory's unique detail among words shared with many others, rebuild time, bytes on disk.
Targets (issue 2): one write at 50,000 <= 10 ms p50 and <= 2x the figure at 50; a
candidate query <= 5 ms p50 at 50,000.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
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


def run_size(size: int, probes: int) -> dict[str, float]:
    corpus = generate(size, seed=size).memories
    spare = generate(max(probes, 50), seed=size + 1).memories
    with tempfile.TemporaryDirectory(prefix="ihmt-bench-") as tmp:
        store = Store.create(Path(tmp) / "m")
        start = time.perf_counter()
        for chunk in range(0, size, 1000):
            with store.batch():
                store.put_leaves(
                    _leaf(m.text, i) for i, m in enumerate(corpus[chunk : chunk + 1000], chunk)
                )
        bulk = time.perf_counter() - start

        writes = []
        for i in range(size, size + probes):
            leaf = _leaf(spare[(i - size) % len(spare)].text, i, source="probe")
            t0 = time.perf_counter()
            store.put_leaf(leaf)
            writes.append((time.perf_counter() - t0) * 1000)

        rng = random.Random(size)
        targets = rng.sample(corpus[:size], min(probes, size))
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
        store.close()
    return {
        "size": size,
        "bulk_per_s": size / bulk,
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
        row = run_size(size, args.probes)
        rows.append(row)
        print(
            f"{size:>7} {row['bulk_per_s']:>8.0f} {row['write_p50_ms']:>8.2f}ms "
            f"{row['write_p95_ms']:>8.2f}ms {row['query_p50_ms']:>8.2f}ms "
            f"{row['query_p95_ms']:>8.2f}ms {row['query_hit_at_1']:>6.2f} "
            f"{row['rebuild_s']:>7.2f}s {row['bytes_on_disk'] / 1e6:>8.1f}",
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
