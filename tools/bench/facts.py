"""Benchmark of ihmt-facts: recording one fact into timelines of 100 to 10,000 facts, and rebuild.

    python tools/bench/facts.py [--sizes 100 1000 10000] [--probes 200] [--out results/facts.json]

Per size: a store is filled with that many facts (about four dated values per
(subject, attribute), so most are real changes with a flagged leaf), then each probe is
one full ``record_fact`` call in its own locked, flushed, committed step:

- ``new``: a fact about a new (subject, attribute): one small fact leaf + one journal line;
- ``change``: a later, different value for an existing key: the fact leaf, the OUTDATED
  flag on the superseded leaf (with its notice), one journal line per leaf;
- ``on leaf``: a fact recorded about an existing leaf (kept in its header).

Also: cold load of the timeline by a new process (journal read), ``active`` query time,
``rebuild`` from the leaves, the journal's size, and the baseline the design avoids —
rewriting the whole timeline as one JSON file on every record (what the original does
with ``facts.json``). Target (issue 4): ``new`` p50 <= 5 ms at 10,000 facts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from ihmt_facts import JOURNAL_NAME, Fact, Timeline
from ihmt_store import Store

CITIES = ("Madrid", "Valencia", "Sevilla", "Bilbao", "Lisbon", "Porto", "Berlin", "Dublin")
ATTRIBUTES = ("location", "employer", "editor", "team")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _when(step: int) -> str:
    return f"{2020 + step // 336:04d}-{1 + step // 28 % 12:02d}-{1 + step % 28:02d}"


def _fill(timeline: Timeline, size: int, rng: random.Random) -> int:
    """Record ``size`` facts, four dated values per key; return the number of keys."""
    keys = max(1, size // 4)
    facts = [
        Fact(
            subject=f"person:p{index % keys}",
            attribute=ATTRIBUTES[index % keys % len(ATTRIBUTES)],
            value=rng.choice(CITIES),
            timestamp=_when(index // keys),
            source="",
        )
        for index in range(size)
    ]
    for start in range(0, size, 1000):
        timeline.record_facts(facts[start : start + 1000])
    return keys


def _timed(action: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    action()
    return (time.perf_counter() - t0) * 1000


def run_size(size: int, probes: int) -> dict[str, float]:
    rng = random.Random(size)
    with tempfile.TemporaryDirectory(prefix="ihmt-bench-facts-") as tmp:
        store = Store.create(Path(tmp) / "m")
        timeline = Timeline(store)
        t0 = time.perf_counter()
        keys = _fill(timeline, size, rng)
        fill = time.perf_counter() - t0
        stats = timeline.stats()

        new, change, on_leaf = [], [], []
        leaf_ids = [e.id for e in store.iter_entries("leaf")]
        record = timeline.record_fact
        for i in range(probes):
            new.append(
                _timed(
                    partial(record, f"host:probe{i}", "port", str(1024 + i), timestamp="2030-01-01")
                )
            )
            key = rng.randrange(keys)
            later = f"2031-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
            attribute = ATTRIBUTES[key % len(ATTRIBUTES)]
            change.append(
                _timed(partial(record, f"person:p{key}", attribute, f"City {i}", timestamp=later))
            )
            leaf = rng.choice(leaf_ids)
            on_leaf.append(_timed(partial(record, f"project:probe{i}", "stack", "Go", source=leaf)))

        reads = []
        for _ in range(probes):
            key = rng.randrange(keys)
            subject, attribute = f"person:p{key}", ATTRIBUTES[key % len(ATTRIBUTES)]
            reads.append(_timed(partial(timeline.active, subject, attribute)))

        cold = _timed(lambda: Timeline(Store.open(store.path)))
        rebuild = _timed(lambda: Timeline(store).rebuild()) / 1000
        journal = store.state_file(JOURNAL_NAME).stat().st_size

        # The baseline: every record rewrites the whole timeline as one JSON file.
        everything = [
            {"subject": f.subject, "attribute": f.attribute, "value": f.value, "ts": f.timestamp}
            for f in timeline.facts()
        ]
        target = Path(tmp) / "facts.json"

        def rewrite_all() -> None:
            temp = target.with_suffix(".tmp")
            with open(temp, "w", encoding="utf-8") as handle:
                json.dump(everything, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)

        baseline = [_timed(rewrite_all) for _ in range(min(probes, 50))]
        store.close()
    return {
        "facts": stats.facts,
        "keys": stats.keys,
        "contradictions": stats.contradictions,
        "fill_facts_per_s": size / fill,
        "new_p50_ms": statistics.median(new),
        "new_p95_ms": _pct(new, 0.95),
        "change_p50_ms": statistics.median(change),
        "change_p95_ms": _pct(change, 0.95),
        "on_leaf_p50_ms": statistics.median(on_leaf),
        "on_leaf_p95_ms": _pct(on_leaf, 0.95),
        "active_p50_ms": statistics.median(reads),
        "cold_load_ms": cold,
        "rebuild_s": rebuild,
        "journal_bytes": journal,
        "baseline_rewrite_p50_ms": statistics.median(baseline),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "facts.json"
    )
    args = parser.parse_args(argv)
    header = (
        f"{'facts':>6} {'new p50':>8} {'new p95':>8} {'chg p50':>8} {'chg p95':>8} "
        f"{'leaf p50':>8} {'active':>7} {'cold':>8} {'rebuild':>8} {'journal':>8} "
        f"{'rewrite-all':>11}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    for size in args.sizes:
        row = run_size(size, args.probes)
        rows.append({"size": size, **row})
        print(
            f"{size:>6} {row['new_p50_ms']:>6.2f}ms {row['new_p95_ms']:>6.2f}ms "
            f"{row['change_p50_ms']:>6.2f}ms {row['change_p95_ms']:>6.2f}ms "
            f"{row['on_leaf_p50_ms']:>6.2f}ms {row['active_p50_ms']:>5.3f}ms "
            f"{row['cold_load_ms']:>6.1f}ms {row['rebuild_s']:>7.2f}s "
            f"{row['journal_bytes'] / 1e6:>6.2f}MB {row['baseline_rewrite_p50_ms']:>9.2f}ms",
            flush=True,
        )
    largest = rows[-1]
    verdict = {
        "targets": {
            f"new_p50_ms<=5 at {largest['size']}": largest["new_p50_ms"] <= 5,
            "new p50 at largest <= 2x smallest": largest["new_p50_ms"] <= 2 * rows[0]["new_p50_ms"],
        }
    }
    print(json.dumps(verdict, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"bench": "facts", "rows": rows, **verdict}, indent=2))
    return 0 if all(verdict["targets"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
