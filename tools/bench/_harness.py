"""The evaluation loop of the scale benchmark, independent of any particular search.

A system under test implements :class:`System` (bulk ingest, one save, a correction, a
search returning an :class:`Answer`). For each size the harness generates a corpus
(``_memories.generate``), ingests it (timed), applies every correction, runs every query
(a few untimed first, so the timings are warm), times single saves of spare memories, and
in the same run ranks the targeted queries with a flat BM25 over the same texts
(``_baseline.Baseline``) so our recall can be read against it.

    python tools/bench/_harness.py --sizes 50 500 5000

runs the flat BM25 itself through the protocol (:class:`FlatBM25System`), which shows what
"no tree, no recency, no abstention" scores. ``scale.py`` drives the real navigator with
:func:`run`.

Metrics per size (``evaluate`` returns them as a JSON-able dict):

- recall@1, recall@5 — targeted queries: the expected memory first / in the first five.
- update accuracy — the newest memory of the chain first AND the one it corrected flagged
  outdated.
- ambiguity detection — a bare shared first name answered ``ambiguous``.
- abstention — a never-stored question answered ``not_found``.
- false abstention — a targeted query that carries the memory's unique detail answered
  ``not_found`` or ``ambiguous``.
- compact tokens (median, p90), warm search ms (p50, p95), files and bytes read per
  query (median, max), save ms (p50, p95), bulk ingest memories/s (by the clock and per
  second of the process's CPU), and — measured beside the store in the same run — how
  many small files per second the disk itself creates (the floor under an ingest that
  writes one file per memory; this machine's shared disk swings between ~25,000/s and
  ~1,000/s).
- the baseline's recall@1/@5 on the same targeted queries and ours minus the baseline's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from _baseline import Baseline
from _memories import (
    AMBIGUOUS,
    FOUND,
    NOT_FOUND,
    QUERY_KINDS,
    Corpus,
    Memory,
    Query,
    generate,
)

from ihmt_store import estimate_tokens

__all__ = [
    "Answer",
    "System",
    "FlatBM25System",
    "evaluate",
    "run",
    "format_table",
    "TARGETS",
]

STATUSES = (FOUND, AMBIGUOUS, NOT_FOUND)
WARMUP_QUERIES = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """What a system answered to one query."""

    status: str
    """``found``, ``ambiguous`` or ``not_found``."""
    ranked_ids: Sequence[str]
    """The system's ids, best first (also when ambiguous: its candidates in order)."""
    outdated_ids: frozenset[str] | set[str] = frozenset()
    """Ids the answer flags as OUTDATED (corrected by a later memory)."""
    tokens: int = 0
    """Tokens of the compact rendering handed to the agent."""
    files_read: int = 0
    bytes_read: int = 0


class System(Protocol):
    """A memory under test. Ids are the system's own; the harness maps them.

    ``ingest`` saves many memories at once and returns one id per memory, in order;
    ``save`` saves one more (the harness times it); ``correct`` records that ``new_id``
    corrects ``old_id`` (the old one becomes OUTDATED); ``search`` answers one query.
    A ``name`` attribute and a ``close()`` method are used when present.
    """

    def ingest(self, memories: Sequence[Memory]) -> list[str]: ...

    def save(self, memory: Memory) -> str: ...

    def correct(self, old_id: str, new_id: str) -> None: ...

    def search(self, query: str) -> Answer: ...


# ------------------------------------------------------------------ the baseline as a system


class FlatBM25System:
    """The flat BM25 baseline behind the :class:`System` protocol.

    Found whenever anything scores above zero, never ambiguous; a hit that was corrected is
    flagged outdated but keeps its BM25 rank. The compact rendering is the best text plus
    one 100-character line per other hit. Nothing is read from disk.
    """

    name = "flat-bm25"

    def __init__(self, k: int = 10) -> None:
        self.k = k
        self._texts: list[str] = []
        self._ids: list[str] = []
        self._text_of: dict[str, str] = {}
        self._index: Baseline | None = None
        self._corrected: set[str] = set()

    def ingest(self, memories: Sequence[Memory]) -> list[str]:
        ids = [m.id_hint for m in memories]
        self._texts += [m.text for m in memories]
        self._ids += ids
        self._text_of.update((m.id_hint, m.text) for m in memories)
        self._index = Baseline(self._texts, self._ids)
        return ids

    def save(self, memory: Memory) -> str:
        # Rebuilt lazily at the next search: a flat list has nothing to maintain.
        self._texts.append(memory.text)
        self._ids.append(memory.id_hint)
        self._text_of[memory.id_hint] = memory.text
        self._index = None
        return memory.id_hint

    def correct(self, old_id: str, new_id: str) -> None:
        self._corrected.add(old_id)

    def search(self, query: str) -> Answer:
        if self._index is None:
            self._index = Baseline(self._texts, self._ids)
        hits = [i for i, _ in self._index.search(query, self.k)]
        if not hits:
            return Answer(status=NOT_FOUND, ranked_ids=[], tokens=estimate_tokens(query))
        text = self._text_of
        compact = "\n".join([text[hits[0]], *(text[i][:100] for i in hits[1:5])])
        return Answer(
            status=FOUND,
            ranked_ids=hits,
            outdated_ids={i for i in hits if i in self._corrected},
            tokens=estimate_tokens(compact),
        )


# ------------------------------------------------------------------ evaluation

TARGETS: dict[str, tuple[str, float]] = {
    "recall_at_1": (">=", 0.95),
    "update_accuracy": (">=", 0.95),
    "ambiguity_detection": (">=", 0.9),
    "abstention": (">=", 0.8),
    "false_abstention": ("<=", 0.05),
    "tokens_p90": ("<=", 900),
    "search_ms_p50": ("<=", 10),
    "search_ms_p95": ("<=", 30),
    "bytes_read_max": ("<=", 200_000),
    "save_ms_p50": ("<=", 10),
    "ingest_per_s": (">=", 2000),
    "recall_at_1_minus_baseline": (">=", -0.02),
}
"""SPEC §1 / issue 5 targets (the latency ones are stated for 50,000 memories)."""


def _pct(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (``q`` in 0..1); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _rate(hits: Iterable[bool]) -> float | None:
    flags = list(hits)
    return sum(flags) / len(flags) if flags else None


@dataclass(slots=True)
class _Run:
    answers: list[tuple[Query, Answer]] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)


def evaluate(
    corpus: Corpus,
    system: System,
    *,
    baseline: bool = True,
    saves: int | None = None,
    misses: int = 12,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run one corpus through ``system`` and return its metrics (JSON-able).

    Args:
        baseline: also rank the targeted queries with a flat BM25 over the same texts.
        saves: how many spare memories to time as single saves (default: all of them).
        misses: how many failed queries to keep, per kind, as examples in the result.
        progress: called with a short line at each step (e.g. ``print`` to stderr).
    """
    say = progress or (lambda _line: None)
    memories = corpus.memories
    say(f"{corpus.size}: ingesting {len(memories)} memories")
    t0, c0 = time.perf_counter(), time.process_time()
    sids = system.ingest(memories)
    ingest_s, ingest_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    if len(sids) != len(memories):
        raise ValueError(f"ingest returned {len(sids)} ids for {len(memories)} memories")
    to_sid = {m.id_hint: sid for m, sid in zip(memories, sids, strict=True)}
    to_hint = {sid: hint for hint, sid in to_sid.items()}

    t0 = time.perf_counter()
    corrections = [m for m in memories if m.supersedes]
    for m in corrections:
        system.correct(to_sid[m.supersedes], to_sid[m.id_hint])  # type: ignore[index]
    correct_s = time.perf_counter() - t0

    queries = corpus.queries
    say(f"{corpus.size}: {len(queries)} queries")
    for q in queries[:WARMUP_QUERIES]:
        system.search(q.text)
    run = _Run()
    for q in queries:
        t0 = time.perf_counter()
        answer = system.search(q.text)
        run.search_ms.append((time.perf_counter() - t0) * 1000)
        run.answers.append((q, answer))

    spare = corpus.extra if saves is None else corpus.extra[:saves]
    save_ms = []
    for m in spare:
        t0 = time.perf_counter()
        system.save(m)
        save_ms.append((time.perf_counter() - t0) * 1000)

    kind_of = {m.id_hint: m.kind for m in memories}
    result = _score(run, to_sid, to_hint, kind_of, misses)
    result.update(
        size=corpus.size,
        seed=corpus.seed,
        memories=len(memories),
        corrections=len(corrections),
        queries={k: sum(q.kind == k for q in queries) for k in QUERY_KINDS},
        ingest_s=ingest_s,
        ingest_per_s=len(memories) / ingest_s if ingest_s > 0 else None,
        ingest_cpu_per_s=len(memories) / ingest_cpu_s if ingest_cpu_s > 0 else None,
        corrections_s=correct_s,
        search_ms_p50=_pct(run.search_ms, 0.5),
        search_ms_p95=_pct(run.search_ms, 0.95),
        save_ms_p50=_pct(save_ms, 0.5),
        save_ms_p95=_pct(save_ms, 0.95),
        saves=len(save_ms),
    )
    if baseline:
        say(f"{corpus.size}: flat BM25 baseline")
        result.update(_baseline_recall(corpus))
        for k in ("recall_at_1", "recall_at_5"):
            ours, theirs = result[k], result[f"baseline_{k}"]
            result[f"{k}_minus_baseline"] = (
                None if ours is None or theirs is None else ours - theirs
            )
    return result


def _score(
    run: _Run,
    to_sid: dict[str, str],
    to_hint: dict[str, str],
    kind_of: dict[str, str],
    keep: int,
) -> dict[str, Any]:
    at1: list[bool] = []
    at5: list[bool] = []
    false_abstain: list[bool] = []
    updates: list[bool] = []
    ambiguous: list[bool] = []
    abstain: list[bool] = []
    by_kind: dict[str, list[bool]] = {}
    statuses = {k: dict.fromkeys(STATUSES, 0) for k in QUERY_KINDS}
    failures: dict[str, list[dict[str, Any]]] = {k: [] for k in QUERY_KINDS}

    def miss(q: Query, a: Answer) -> None:
        if len(failures[q.kind]) < keep:
            failures[q.kind].append(
                {
                    "query": q.text,
                    "expected": q.expected,
                    "status": a.status,
                    "got": [to_hint.get(i, i) for i in list(a.ranked_ids)[:3]],
                }
            )

    for q, a in run.answers:
        statuses[q.kind][a.status] = statuses[q.kind].get(a.status, 0) + 1
        ranked = list(a.ranked_ids)
        if q.kind == "targeted":
            want = to_sid[q.expected]  # type: ignore[index]
            first = bool(ranked) and ranked[0] == want
            at1.append(first)
            at5.append(want in ranked[:5])
            by_kind.setdefault(kind_of[q.expected], []).append(first)  # type: ignore[index]
            if q.names_memory:
                false_abstain.append(a.status in (NOT_FOUND, AMBIGUOUS))
            if not first:
                miss(q, a)
        elif q.kind == "update":
            want = to_sid[q.expected]  # type: ignore[index]
            old = to_sid[q.outdated[0]]
            ok = bool(ranked) and ranked[0] == want and old in a.outdated_ids
            updates.append(ok)
            if not ok:
                miss(q, a)
        elif q.kind == "ambiguous":
            ambiguous.append(a.status == AMBIGUOUS)
            if a.status != AMBIGUOUS:
                miss(q, a)
        else:
            abstain.append(a.status == NOT_FOUND)
            if a.status != NOT_FOUND:
                miss(q, a)

    tokens = [float(a.tokens) for _, a in run.answers]
    files = [float(a.files_read) for _, a in run.answers]
    read = [float(a.bytes_read) for _, a in run.answers]
    return {
        "recall_at_1": _rate(at1),
        "recall_at_5": _rate(at5),
        "update_accuracy": _rate(updates),
        "ambiguity_detection": _rate(ambiguous),
        "abstention": _rate(abstain),
        "false_abstention": _rate(false_abstain),
        "recall_at_1_by_kind": {k: _rate(v) for k, v in sorted(by_kind.items())},
        "tokens_median": _pct(tokens, 0.5),
        "tokens_p90": _pct(tokens, 0.9),
        "files_read_median": _pct(files, 0.5),
        "files_read_max": max(files, default=None),
        "bytes_read_median": _pct(read, 0.5),
        "bytes_read_max": max(read, default=None),
        "statuses": statuses,
        "failures": failures,
    }


def _baseline_recall(corpus: Corpus) -> dict[str, Any]:
    t0 = time.perf_counter()
    flat = Baseline([m.text for m in corpus.memories], [m.id_hint for m in corpus.memories])
    build_s = time.perf_counter() - t0
    at1: list[bool] = []
    at5: list[bool] = []
    for q in corpus.queries:
        if q.kind != "targeted":
            continue
        ranked = [i for i, _ in flat.search(q.text, 5)]
        at1.append(bool(ranked) and ranked[0] == q.expected)
        at5.append(q.expected in ranked)
    return {
        "baseline_recall_at_1": _rate(at1),
        "baseline_recall_at_5": _rate(at5),
        "baseline_build_s": build_s,
    }


# ------------------------------------------------------------------ many sizes, the table

_ROWS: tuple[tuple[str, str, str], ...] = (
    ("recall@1", "recall_at_1", "{:.3f}"),
    ("recall@5", "recall_at_5", "{:.3f}"),
    ("BM25 recall@1", "baseline_recall_at_1", "{:.3f}"),
    ("BM25 recall@5", "baseline_recall_at_5", "{:.3f}"),
    ("recall@1 - BM25", "recall_at_1_minus_baseline", "{:+.3f}"),
    ("recall@5 - BM25", "recall_at_5_minus_baseline", "{:+.3f}"),
    ("update accuracy", "update_accuracy", "{:.3f}"),
    ("ambiguity detected", "ambiguity_detection", "{:.3f}"),
    ("abstention (never stored)", "abstention", "{:.3f}"),
    ("false abstention", "false_abstention", "{:.3f}"),
    ("compact tokens median", "tokens_median", "{:.0f}"),
    ("compact tokens p90", "tokens_p90", "{:.0f}"),
    ("warm search p50 ms", "search_ms_p50", "{:.2f}"),
    ("warm search p95 ms", "search_ms_p95", "{:.2f}"),
    ("files read median", "files_read_median", "{:.0f}"),
    ("files read max", "files_read_max", "{:.0f}"),
    ("KB read median", "bytes_read_median", "kb"),
    ("KB read max", "bytes_read_max", "kb"),
    ("save p50 ms", "save_ms_p50", "{:.2f}"),
    ("save p95 ms", "save_ms_p95", "{:.2f}"),
    ("bulk ingest /s", "ingest_per_s", "{:.0f}"),
    ("bulk ingest /s of CPU", "ingest_cpu_per_s", "{:.0f}"),
    ("disk: new files /s", "disk_files_per_s", "{:.0f}"),
)


def _cell(value: Any, fmt: str) -> str:
    if value is None:
        return "-"
    if fmt == "kb":
        return f"{value / 1000:.1f}"
    return fmt.format(value)


def _target(key: str) -> str:
    if key == "bytes_read_max":
        return "<= 200 KB"
    if key not in TARGETS:
        return ""
    op, value = TARGETS[key]
    return f"{op} {value:g}"


def format_table(results: Sequence[dict[str, Any]], title: str = "") -> str:
    """The metrics as a Markdown table: one row per metric, one column per size."""
    sizes = [f"{r['size']:,}" for r in results]
    head = ["metric", "target", *sizes]
    rows = [
        [label, _target(key), *(_cell(r.get(key), fmt) for r in results)]
        for label, key, fmt in _ROWS
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    out = [title] if title else []
    out += [line(head), rule, *(line(r) for r in rows)]
    return "\n".join(out)


def disk_files_per_s(folder: Path, count: int = 2000, size: int = 700) -> float:
    """How many small files per second this disk creates right now, as a store's batch
    does (a temporary file each, one flush for all, then a rename each).

    The floor under any ingest that keeps one file per memory: measured in the same
    run, beside the store, so a slow or busy disk shows up as such in the table.
    """
    scratch = Path(tempfile.mkdtemp(prefix="disk-", dir=folder))
    data = b"x" * size
    try:
        t0 = time.perf_counter()
        temps = []
        for i in range(count):
            tmp = scratch / f".leaf-{i:05d}.txt.tmp"
            with open(tmp, "wb") as handle:
                handle.write(data)
            temps.append(tmp)
        if hasattr(os, "sync"):
            os.sync()
        for tmp in temps:
            os.replace(tmp, tmp.with_name(tmp.name[1:-4]))
        return count / (time.perf_counter() - t0)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(
    factory: Callable[[Path], System],
    sizes: Sequence[int],
    *,
    seed: int = 0,
    out: Path | None = None,
    baseline: bool = True,
    quiet: bool = False,
) -> dict[str, Any]:
    """Evaluate a fresh system per size (``factory(empty_folder)``), print the table.

    Returns ``{"system": name, "seed": seed, "sizes": [metrics per size]}`` and writes it
    as JSON to ``out`` when given.
    """

    def say(line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr, flush=True)

    results = []
    name = "?"
    for size in sizes:
        t0 = time.perf_counter()
        corpus = generate(size, seed)
        generate_s = time.perf_counter() - t0
        say(f"{size}: generated in {generate_s:.2f} s")
        folder = Path(tempfile.mkdtemp(prefix=f"ihmt-bench-{size}-"))
        try:
            system = factory(folder)
            name = str(getattr(system, "name", type(system).__name__))
            try:
                metrics = evaluate(corpus, system, baseline=baseline, progress=say)
                metrics["disk_files_per_s"] = disk_files_per_s(folder)
            finally:
                close = getattr(system, "close", None)
                if callable(close):
                    close()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        metrics["generate_s"] = generate_s
        results.append(metrics)
    report = {"bench": "scale", "system": name, "seed": seed, "sizes": results}
    print(format_table(results, title=f"scale benchmark: {name} (seed {seed})"))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        say(f"wrote {out}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run the scale benchmark's harness on the flat BM25 baseline."
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 5000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "results" / "scale_flat_bm25.json",
    )
    args = parser.parse_args(argv)
    run(lambda _folder: FlatBM25System(), args.sizes, seed=args.seed, out=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
