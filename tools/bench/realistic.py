"""Realistic quality benchmark, in process: hand-written memories through ``Memory``.

    python tools/bench/realistic.py                      # both dev sets, side by side
    python tools/bench/realistic.py --show-failures 40   # and what came first where it went wrong
    python tools/bench/realistic.py --data F --limit 10  # a seeded sample of ten questions

The sets are kept outside the repository; ``--data`` names one or more (by default the two
dev sets, each written by other people: one engineer's memories and a four-person studio's).
With several, a last table gives each headline figure per set and the gap between them: a
change that moves one set and not the other is fitted to it, not found. An evaluator that drives the
``ihmt`` command on the same format (one process per call) takes minutes; this runs the same
steps and the same metric definitions in process, in seconds. Every memory is saved in date
order with its domain, date, project and ``replaces`` hint, the memory is consolidated
(``force``), then every question is asked with its project and ``as_of`` date, top 5. A result
*is* a dataset memory when the memory's key phrase is in the result's content, exactly as the
CLI's ``search --json`` would give it.

It also audits the OUTDATED marks left in the store against the dataset's ``supersedes``: a mark
on a memory that the correcting memory does not supersede is a wrong mark (it hides a true one).
The rows written to ``--out`` hold each answer whole (status, ids in order, OUTDATED flags,
compact text): two versions' files are diffed row by row to show that a change kept every answer.

Figures (answerable = every kind that has an expected memory):
  R@1 / R@5         an expected memory is result 1 / in the top 5
  false abstention  an answerable question answered not_found or ambiguous
  KU acc            questions with outdated memories: current first, every old one returned flagged
  ambiguity         ambiguous questions answered ambiguous
  abstention        never-stored questions answered not_found (or ambiguous)
  other project 1st project questions whose first result is another project's memory
  compact hit       the expected key phrase is in the text handed to an agent
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEV_SET = HERE.parents[2] / "shared" / "data" / "realistic_dev.json"
DEV_SETS = (DEV_SET, DEV_SET.with_name("realistic_dev2.json"))
ANSWERABLE = ("direct", "paraphrase", "spanish", "update", "as_of", "broad", "project_scoped")
KINDS = (*ANSWERABLE, "ambiguous", "unanswerable")
ABSTAIN = ("not_found", "ambiguous")
TOP_K = 5

_SPACES = re.compile(r"\s+")
_QUOTES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "`": None, "*": None}
)


def norm(text: str | None) -> str:
    """NFKC, casefold, straight quotes, no backticks or asterisks, single spaces."""
    folded = unicodedata.normalize("NFKC", text or "").translate(_QUOTES).casefold()
    return _SPACES.sub(" ", folded).strip()


class Keys:
    """Which dataset memories a piece of returned text is (by their key phrases)."""

    def __init__(self, memories: Sequence[dict[str, Any]]) -> None:
        self.keys = [(m["id"], norm(m["key"])) for m in memories]
        self.by_id = {m["id"]: m for m in memories}

    def ids_in(self, text: str | None) -> set[str]:
        flat = norm(text)
        return {mid for mid, key in self.keys if key in flat} if flat else set()


def _rate(rows: Iterable[dict[str, Any]], key: str) -> float | None:
    values = [1.0 if r[key] else 0.0 for r in rows if r.get(key) is not None]
    return sum(values) / len(values) if values else None


def score(query: dict[str, Any], result: Any, keys: Keys) -> dict[str, Any]:
    """One row: what came back for ``query`` and whether it is right."""
    ranks = [keys.ids_in(hit.content) for hit in result.results]
    top1 = ranks[0] if ranks else set()
    kind = query["kind"]
    row: dict[str, Any] = {
        "id": query["id"],
        "kind": kind,
        "query": query["text"],
        "project": query.get("project"),
        "as_of": query.get("as_of"),
        "cross_lingual": bool(query.get("cross_lingual")),
        "status": result.status,
        "confidence": result.confidence,
        "returned": [sorted(r) for r in ranks],
        "first": (result.results[0].content or result.results[0].excerpt)[:140]
        if result.results
        else None,
        "tokens": result.tokens,
        # The whole answer, so that two versions' outputs can be compared answer by answer.
        "ids": [hit.id for hit in result.results],
        "outdated": [hit.outdated for hit in result.results],
        "compact": result.compact,
    }
    if kind in ANSWERABLE:
        expected = set(query["expect_ids"])
        row["expect"] = sorted(expected)
        row["r1"] = bool(expected & top1)
        row["r5"] = any(expected & r for r in ranks[:TOP_K])
        row["false_abstain"] = result.status in ABSTAIN
        row["compact_hit"] = any(
            norm(keys.by_id[m]["key"]) in norm(result.compact) for m in expected
        )
        if query.get("outdated_ids"):
            old = set(query["outdated_ids"])
            old_at = [i for i, r in enumerate(ranks) if old & r and not expected & r]
            flagged = all(result.results[i].outdated for i in old_at)
            row["ku_ok"] = row["r1"] and flagged
            row["old_first"] = bool(top1 & old) and not top1 & expected
    elif kind == "ambiguous":
        row["status_ok"] = result.status == "ambiguous"
        row["expect"] = sorted(query["candidate_ids"])
    else:
        row["status_ok"] = result.status in ABSTAIN
    if query.get("project") and top1:
        row["other_project_first"] = all(
            keys.by_id[m].get("project") not in (None, query["project"]) for m in top1
        )
    return row


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a group of rows."""
    answerable = [r for r in rows if r["kind"] in ANSWERABLE]
    return {
        "n": len(rows),
        "r1": _rate(answerable, "r1"),
        "r5": _rate(answerable, "r5"),
        "false_abstain": _rate(answerable, "false_abstain"),
        "ku_acc": _rate(rows, "ku_ok"),
        "old_first": _rate(rows, "old_first"),
        "status_ok": _rate(rows, "status_ok"),
        "other_project_first": _rate(rows, "other_project_first"),
        "compact_hit": _rate(answerable, "compact_hit"),
    }


class Run:
    """Saves a dataset's memories into a fresh memory and asks its questions."""

    def __init__(self, data: dict[str, Any], folder: Path, semantic: str = "auto") -> None:
        from ihmt_mcp import Memory

        self.data = data
        self.memory = Memory.init(folder / "store", semantic=semantic)
        self.leaf_of: dict[str, str] = {}
        self.replace_outcomes: dict[str, int] = {}
        self.refused: list[str] = []

    def save_all(self) -> float:
        from ihmt_store import IhmtError

        started = time.perf_counter()
        memories = sorted(self.data["memories"], key=lambda m: (m["date"], m["id"]))
        for mem in memories:
            try:
                result = self.memory.save(
                    mem["text"],
                    domain=mem["domain"],
                    date=mem["date"],
                    replaces=mem.get("replaces") or "",
                    project=mem.get("project") or "",
                )
            except IhmtError as exc:  # the command line would print it and go on
                self.refused.append(f"{mem['id']}: {exc}")
                continue
            self.leaf_of[mem["id"]] = result.ids[0]
            if mem.get("replaces"):
                status = result.replaced.status
                self.replace_outcomes[status] = self.replace_outcomes.get(status, 0) + 1
        self.memory.consolidate(force=True)
        return time.perf_counter() - started

    def ask(self, queries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = Keys(self.data["memories"])
        rows = []
        for query in queries:
            result = self.memory.search(
                query["text"],
                project=query.get("project") or "",
                as_of=query.get("as_of"),
                limit=TOP_K,
            )
            rows.append(score(query, result, keys))
        return rows

    def audit_marks(self) -> dict[str, Any]:
        """Each OUTDATED mark in the store against the dataset's ``supersedes``."""
        memory_of = {leaf: mid for mid, leaf in self.leaf_of.items()}
        should = {
            (old, m["id"]) for m in self.data["memories"] for old in m.get("supersedes") or ()
        }
        right, wrong = [], []
        store = self.memory.store
        for mid, leaf in self.leaf_of.items():
            entry = store.entry(leaf)
            if entry is None or entry.outdated_by is None:
                continue
            pair = (mid, memory_of.get(entry.outdated_by, entry.outdated_by))
            (right if pair in should else wrong).append(pair)
        marked = set(right)
        return {
            "marks": len(right) + len(wrong),
            "right": len(right),
            "wrong": sorted(wrong),
            "missed": sorted(should - marked),
            "should": len(should),
        }

    def close(self) -> None:
        self.memory.close()


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers], *[[_fmt(v) for v in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def report(rows: Sequence[dict[str, Any]], audit: dict[str, Any]) -> dict[str, Any]:
    answerable = [r for r in rows if r["kind"] in ANSWERABLE]
    same = [r for r in answerable if not r["cross_lingual"]]
    return {
        "answerable": summarize(answerable),
        "same_language": summarize(same),
        "cross_lingual": summarize([r for r in answerable if r["cross_lingual"]]),
        "by_kind": {k: summarize([r for r in rows if r["kind"] == k]) for k in KINDS},
        "project_scoped_other_first": _rate(
            [r for r in rows if r["kind"] == "project_scoped"], "other_project_first"
        ),
        "audit": audit,
    }


def render(figures: dict[str, Any]) -> str:
    ans, same, audit = figures["answerable"], figures["same_language"], figures["audit"]
    kinds = figures["by_kind"]
    headline = [
        ["answerable R@1", ans["r1"]],
        ["answerable R@5", ans["r5"]],
        ["same-language R@1", same["r1"]],
        ["answerable false abstention", ans["false_abstain"]],
        ["same-language false abstention", same["false_abstain"]],
        ["update: current first, old flagged", kinds["update"]["ku_acc"]],
        ["ambiguous → AMBIGUOUS", kinds["ambiguous"]["status_ok"]],
        ["never stored → NOT FOUND", kinds["unanswerable"]["status_ok"]],
        ["direct R@1", kinds["direct"]["r1"]],
        ["broad R@1", kinds["broad"]["r1"]],
        ["project-scoped: other project first", figures["project_scoped_other_first"]],
        ["compact hit", ans["compact_hit"]],
        [
            "OUTDATED marks right / all / should",
            f"{audit['right']} / {audit['marks']} / {audit['should']}",
        ],
    ]
    per_kind = [
        [
            k,
            v["n"],
            v["r1"],
            v["r5"],
            v["false_abstain"],
            v["status_ok"],
            v["ku_acc"],
            v["other_project_first"],
        ]
        for k, v in kinds.items()
        if v["n"]
    ]
    return (
        table(["figure", "value"], headline)
        + "\n\n"
        + table(
            ["kind", "n", "R@1", "R@5", "false abst", "status ok", "KU acc", "other proj 1st"],
            per_kind,
        )
    )


def failures(rows: Sequence[dict[str, Any]], limit: int) -> str:
    out = []
    for r in rows:
        bad = r.get("r1") is False or r.get("status_ok") is False or r.get("ku_ok") is False
        if not bad:
            continue
        when = f" as of {r['as_of']}" if r["as_of"] else ""
        out.append(
            f"{r['id']} {r['kind']} [{r['project'] or '-'}{when}] "
            f"{r['query']!r}\n    status {r['status']} conf {r['confidence']:.2f}; expected "
            f"{r.get('expect')}; returned {r['returned']}\n    first: {r['first']!r}"
        )
        if len(out) >= limit:
            break
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", default=None)
    parser.add_argument("--limit", type=int, default=0, help="a seeded sample of N questions")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show-failures", type=int, default=0, metavar="N")
    parser.add_argument(
        "--semantic",
        choices=("auto", "off"),
        default="auto",
        help="off: words only, as without the [semantic] extra",
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "realistic.json")
    args = parser.parse_args(argv)
    if args.data is None:
        args.data = [path for path in DEV_SETS if path.is_file()]
        if not args.data:
            print(f"realistic: skipped, no dev set beside this clone ({DEV_SET.parent})")
            return 0
    missing = [path for path in args.data if not path.is_file()]
    if missing:
        print(f"no dataset at {missing[0]}: give one with --data", file=sys.stderr)
        return 2
    results = {}
    for path in args.data:
        results[path.name] = run_set(path, args)
    if len(results) > 1:
        print()
        print(side_by_side({name: figures for name, (figures, _) in results.items()}))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if len(results) == 1:
        ((figures, rows),) = results.values()
        written: dict[str, Any] = {"figures": figures, "rows": rows}
    else:
        written = {"sets": {n: {"figures": f, "rows": r} for n, (f, r) in results.items()}}
    args.out.write_text(json.dumps(written, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


HEADLINE = (
    ("answerable R@1", ("answerable", "r1")),
    ("answerable R@5", ("answerable", "r5")),
    ("answerable false abstention", ("answerable", "false_abstain")),
    ("update: current first, old flagged", ("by_kind", "update", "ku_acc")),
    ("ambiguous → AMBIGUOUS", ("by_kind", "ambiguous", "status_ok")),
    ("never stored → NOT FOUND", ("by_kind", "unanswerable", "status_ok")),
    ("paraphrase R@1", ("by_kind", "paraphrase", "r1")),
    ("direct R@1", ("by_kind", "direct", "r1")),
    ("compact hit", ("answerable", "compact_hit")),
)


def side_by_side(sets: dict[str, dict[str, Any]]) -> str:
    """The headline figures of each set in one table, with the widest gap between them."""
    rows = []
    for label, keys in HEADLINE:
        values = []
        for figures in sets.values():
            value: Any = figures
            for key in keys:
                value = value.get(key) if isinstance(value, dict) else None
            values.append(value)
        numbers = [v for v in values if isinstance(v, (int, float))]
        gap = round(max(numbers) - min(numbers), 3) if len(numbers) > 1 else None
        rows.append([label, *values, gap])
    return table(["figure", *sets, "gap"], rows)


def run_set(path: Path, args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One set saved and asked, its tables printed: its figures and rows."""
    data = json.loads(path.read_text(encoding="utf-8"))
    queries = list(data["queries"])
    if args.limit:
        keep = {
            q["id"] for q in random.Random(args.seed).sample(queries, min(args.limit, len(queries)))
        }
        queries = [q for q in queries if q["id"] in keep]
    with tempfile.TemporaryDirectory(prefix="ihmt-realistic-") as tmp:
        run = Run(data, Path(tmp), semantic=args.semantic)
        try:
            save_s = run.save_all()
            started = time.perf_counter()
            rows = run.ask(queries)
            ask_s = time.perf_counter() - started
            audit = run.audit_marks()
        finally:
            run.close()
    figures = report(rows, audit)
    figures.update(
        dataset=path.name,
        memories=len(data["memories"]),
        queries=len(rows),
        save_s=round(save_s, 2),
        search_ms_mean=round(1000 * ask_s / max(len(rows), 1), 2),
        replace_outcomes=run.replace_outcomes,
        refused=run.refused,
    )
    print(
        f"{path.name}: {len(data['memories'])} memories saved in {save_s:.1f} s, "
        f"{len(rows)} questions at {figures['search_ms_mean']} ms each"
    )
    print(render(figures))
    print(
        f"replaces= outcomes {run.replace_outcomes}; wrong marks (old, by): {audit['wrong']}; "
        f"missed: {audit['missed']}"
    )
    for line in run.refused:
        print(f"refused: {line}")
    if args.show_failures:
        print()
        print(failures(rows, args.show_failures))
    return figures, rows


if __name__ == "__main__":
    sys.exit(main())
