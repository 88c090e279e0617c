"""Fit a model of the search decision on labelled memories, and measure it against the rules.

    python tools/bench/fit_decision.py                    # collect, fit, report
    python tools/bench/fit_decision.py --cache FILE       # keep (or reuse) what was collected

Three sources, each written by other hands: the two realistic dev sets (``--data``, each
run twice: with the semantic layer and without it) and an independent generator of notes
(``--harness``: the folder holding its ``evalharness`` package, 500 saves). Every question
is asked with the decision forced to answer, and the :class:`ihmt_navigator._signals.Signals`
of its best memory are recorded with what the question is and the rules' own verdict
(``matched``). Two L2-regularised logistic regressions are fitted on them:

- ``answers``: do the memories hold an answer at all (an answerable question whose memory
  is in the first five, or an ambiguous one) or is it never stored? Only the questions
  it would decide count (a later rule does not answer NOT FOUND anyway); the classes
  weigh the same, a wrong NOT FOUND costing what a wrong FOUND does;
- ``right``: is the first memory the answer? Its probability would be the confidence.

For each source, the table compares the rules that decide today, the model fitted on the
other sources only (what to expect on memories nobody fitted on), and the model fitted
on all of them. A model replaces the rules only when it beats them on every source left
out; the sources themselves stay outside the repository. JSON in
``tools/bench/results/decision_fit.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ihmt_navigator._signals import FEATURES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
SHARED = ROOT.parent / "shared"
RESULTS = ROOT / "tools" / "bench" / "results" / "decision_fit.json"
CONFIDENCE_FILE = (
    ROOT / "packages" / "ihmt-navigator" / "src" / "ihmt_navigator" / "confidence.json"
)
ANSWERABLE_GENERATED = ("fact", "person", "update")
L2 = 1.0
CONFIDENT = 0.7
WRONG_WEIGHT = 3.0
"""In the confidence model, a wrong answer weighs three right ones: an agent that acts
on a confident wrong answer loses more than one that checks a doubtful right one, so
the confidence errs low (0.7 or more should mean right nine times in ten)."""
KINDS = ("answerable", "ambiguous", "never")


class _Collector:
    """Forces the decision to answer, and keeps each question's signals with the rules'
    own verdict in ``matched``."""

    def __init__(self) -> None:
        self.asked: str | None = None
        self.stray = False
        self.seen: list[tuple[str, tuple[float, ...]]] = []

    def record(self, signals: Any) -> None:
        if self.asked is None:
            return
        # The rules' exceptions to a stray match by words (see _decide.decide).
        vouched = signals.picked and (
            signals.cross_lingual or (signals.agree and signals.held_words and not signals.unseen)
        )
        verdict = replace(signals, matched=float(not (self.stray and not vouched)))
        self.seen.append((self.asked, verdict.vector()))

    def take(self, query: str) -> tuple[float, ...] | None:
        """The first signals recorded for ``query`` (each is taken once)."""
        for i, (asked, vector) in enumerate(self.seen):
            if asked == query:
                del self.seen[i]
                return vector
        return None


@contextmanager
def _collecting() -> Iterator[_Collector]:
    import ihmt_navigator._decide as decide_module
    from ihmt_navigator import Navigator

    collector = _Collector()
    original_search = Navigator._search
    saved = (decide_module.is_stray, decide_module.read_signals)

    def search(self: Any, query: str, clue: str | None, options: Any) -> Any:
        collector.asked = query
        try:
            return original_search(self, query, clue, options)
        finally:
            collector.asked = None

    def is_stray(*args: Any, **kwargs: Any) -> bool:
        collector.stray = saved[0](*args, **kwargs)
        return False

    def read_signals(*args: Any, **kwargs: Any) -> Any:
        signals = saved[1](*args, **kwargs)
        collector.record(signals)
        return signals

    decide_module.is_stray = is_stray
    decide_module.read_signals = read_signals
    Navigator._search = search  # type: ignore[method-assign]
    try:
        yield collector
    finally:
        decide_module.is_stray, decide_module.read_signals = saved
        Navigator._search = original_search  # type: ignore[method-assign]


def _row(source: str, vector: tuple[float, ...] | None, scored: dict[str, Any], kind: str) -> Any:
    """One question's signals and labels (None: decided before any memory was weighed)."""
    if vector is None:
        return None
    answers = {"answerable": 1 if scored.get("r5") else None, "ambiguous": 1, "never": 0}[kind]
    return {
        "source": source,
        "x": list(vector),
        "kind": kind,
        "answers": answers,
        "right": int(kind == "answerable" and bool(scored.get("r1"))),
        "status": scored["status"],
        "confidence": scored.get("confidence"),
    }


def collect_realistic(path: Path, semantic: str) -> list[dict[str, Any]]:
    """Rows from a realistic set: its memories saved, every question asked."""
    from realistic import ANSWERABLE, Run

    data = json.loads(path.read_text(encoding="utf-8"))
    source = f"{path.stem}" + ("" if semantic == "auto" else " (words only)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, _collecting() as collector:
        run = Run(data, Path(tmp), semantic=semantic)
        run.save_all()
        for scored in run.ask(data["queries"]):
            kind = scored["kind"]
            kind = "answerable" if kind in ANSWERABLE else kind.replace("unanswerable", "never")
            row = _row(source, collector.take(scored["query"]), scored, kind)
            if row:
                rows.append(row)
        run.memory.close()
    print(f"  {source}: {len(rows)} questions weighed", flush=True)
    return rows


def collect_generated(harness: Path, size: int) -> list[dict[str, Any]]:
    """Rows from the independent generator: ``size`` notes saved one by one."""
    from second_generator import _adapter_class

    adapter_class = _adapter_class(harness)
    from evalharness.scale import run_scale  # type: ignore[import-not-found]

    options = argparse.Namespace(
        sizes=[size],
        seed=7,
        limit=300,
        top_k=5,
        branch_factor=None,
        scale_ingest="save",
        save_max=10**9,
        no_domains=False,
        progress=False,
        cold_samples=0,
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp, _collecting() as collector:
        work = Path(tmp)
        (work / "cwd").mkdir()
        adapter = adapter_class({"cwd": str(work / "cwd")})
        try:
            result = run_scale(adapter, options, work / "ihmt")
        finally:
            adapter.close()
        for scored in result["per_size"][0]["per_query"]:
            kind = scored["kind"]
            if kind in ANSWERABLE_GENERATED:
                kind = "answerable"
            kind = kind.replace("unanswerable", "never")
            row = _row("generator", collector.take(scored["query"]), scored, kind)
            if row:
                rows.append(row)
    print(f"  generator ({size} notes): {len(rows)} questions weighed", flush=True)
    return rows


def family_of(row: dict[str, Any]) -> str:
    """The source a row comes from, whether meaning took part or not."""
    return str(row["source"]).split(" (")[0]


def fit_logistic(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, l2: float = L2
) -> tuple[float, np.ndarray]:
    """Intercept and weights minimising the weighted log loss plus ``l2``·|w|² (Newton)."""
    design = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -30, 30)))
        gradient = design.T @ (weight * (p - y)) + penalty * beta
        hessian = (design * (weight * p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return float(beta[0]), beta[1:]


def _predict(part: tuple[float, np.ndarray], x: np.ndarray) -> np.ndarray:
    intercept, weights = part
    return 1.0 / (1.0 + np.exp(-np.clip(intercept + x @ weights, -30, 30)))


def fit(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[float, np.ndarray]]:
    """Both models on ``rows``. ``answers`` learns only from the questions it decides:
    those that a later rule (the value asked is held by none, only another project
    answers) does not answer NOT FOUND anyway."""
    usable = [r for r in rows if r["answers"] is not None and r["status"] != "not_found"]
    x = np.array([r["x"] for r in usable], dtype=float)
    y = np.array([r["answers"] for r in usable], dtype=float)
    positives = max(1.0, float(y.sum()))
    negatives = max(1.0, float(len(y) - y.sum()))
    weight = np.where(y == 1, len(y) / (2 * positives), len(y) / (2 * negatives))
    every = np.array([r["x"] for r in rows], dtype=float)
    right = np.array([r["right"] for r in rows], dtype=float)
    return {
        "answers": fit_logistic(x, y, weight),
        "right": fit_logistic(every, right, np.ones(len(rows))),
    }


def evaluate(
    models: dict[str, tuple[float, np.ndarray]], rows: Sequence[dict[str, Any]], threshold: float
) -> dict[str, Any]:
    """The figures of the fitted models on ``rows``."""
    x = np.array([r["x"] for r in rows], dtype=float)
    answers = _predict(models["answers"], x) >= threshold
    return outcome(rows, answers.tolist(), _predict(models["right"], x).tolist())


def rules(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of the rules that decide today (their verdict is ``matched``), with
    the confidence the answers reported (0.6 x coverage + 0.4 x margin)."""
    at = FEATURES.index("matched")
    return outcome(rows, [r["x"][at] == 1.0 for r in rows], [r["confidence"] for r in rows])


def answered(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows the rules answer FOUND: those a confidence is given for."""
    at = FEATURES.index("matched")
    return [r for r in rows if r["status"] == "found" and r["x"][at] == 1.0]


def formula(row: dict[str, Any]) -> float:
    """The confidence before the model, 0.6 x coverage + 0.4 x margin, from the signals
    (the answer's own coverage is lower where words and meaning disagree; the recorded
    confidence is whatever model was shipped when the rows were collected)."""
    return 0.6 * row["x"][FEATURES.index("coverage")] + 0.4 * row["x"][FEATURES.index("margin")]


def fit_confidence(
    rows: Sequence[dict[str, Any]], l2: float = L2, wrong: float = WRONG_WEIGHT
) -> tuple[float, np.ndarray]:
    """The confidence model: is the first memory of a FOUND answer the answer? A wrong
    answer weighs ``wrong`` times a right one."""
    found = answered(rows)
    x = np.array([r["x"] for r in found], dtype=float)
    y = np.array([r["right"] for r in found], dtype=float)
    return fit_logistic(x, y, np.where(y == 1, 1.0, wrong), l2)


def calibration(rows: Sequence[dict[str, Any]], confidence: Sequence[float]) -> dict[str, Any]:
    """How far a confidence can be trusted on FOUND ``rows``: the share right among
    those of 0.7 or more, how many those are, the mean confidence against the share
    right, and the Brier score (mean squared error; lower is better)."""
    p = np.array(confidence, dtype=float)
    y = np.array([r["right"] for r in rows], dtype=float)
    sure = p >= CONFIDENT
    return {
        "found": len(rows),
        "right": round(float(y.mean()), 3) if len(y) else None,
        "mean_confidence": round(float(p.mean()), 3) if len(p) else None,
        "confident_answers": int(sure.sum()),
        "confident_right": round(float(y[sure].mean()), 3) if sure.any() else None,
        "brier": round(float(np.mean((p - y) ** 2)), 3) if len(y) else None,
    }


def confidence_report(
    rows: Sequence[dict[str, Any]], l2: float, wrong: float = WRONG_WEIGHT
) -> dict[str, dict[str, Any]]:
    """Per source: the formula, the model fitted on the other sources, and the model
    fitted on every source, each judged on that source's FOUND answers."""
    everything = fit_confidence(rows, l2, wrong)
    report: dict[str, dict[str, Any]] = {}
    for family in sorted({family_of(r) for r in rows}):
        testing = answered([r for r in rows if r["source"] == family])
        left_out = fit_confidence([r for r in rows if family_of(r) != family], l2, wrong)
        x = np.array([r["x"] for r in testing], dtype=float)
        report[family] = {
            "formula": calibration(testing, [formula(r) for r in testing]),
            "model, this source left out": calibration(testing, _predict(left_out, x).tolist()),
            "model, fitted on every source": calibration(testing, _predict(everything, x).tolist()),
        }
    return report


def _confidence_table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| confidence by | FOUND | right | mean confidence | ≥ 0.7: right (n) | Brier |",
        "|---|---|---|---|---|---|",
    ]
    for source, f in results.items():
        lines.append(
            f"| {source} | {f['found']} | {f['right']} | {f['mean_confidence']} | "
            f"{f['confident_right']} ({f['confident_answers']}) | {f['brier']} |"
        )
    return "\n".join(lines)


def write_confidence(
    rows: Sequence[dict[str, Any]], l2: float, wrong: float, report: dict[str, Any]
) -> Path:
    """The model fitted on every source, as the data file the navigator reads, with the
    figures of each source left out."""
    intercept, weights = fit_confidence(rows, l2, wrong)
    data = {
        "about": "The confidence of a FOUND answer: a logistic model of whether its first "
        "memory is the answer, fitted by tools/bench/fit_decision.py --write-confidence.",
        "l2": l2,
        "wrong_weight": wrong,
        "fitted_on": {f: len(answered([r for r in rows if family_of(r) == f])) for f in report},
        "intercept": round(intercept, 4),
        "weights": {f: round(float(w), 4) for f, w in zip(FEATURES, weights, strict=True)},
        "left_out": {f: figures["model, this source left out"] for f, figures in report.items()},
    }
    CONFIDENCE_FILE.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return CONFIDENCE_FILE


def outcome(
    rows: Sequence[dict[str, Any]], answers: Sequence[bool], confidence: Sequence[float | None]
) -> dict[str, Any]:
    """The whole decision's figures (``answers``: the best memory is no stray match; the
    rules after it as they were): never-stored questions answered NOT FOUND (or
    AMBIGUOUS), answerable ones answered NOT FOUND or AMBIGUOUS, ambiguous ones still
    AMBIGUOUS, and calibration: among FOUND answers of confidence 0.7 or more, the share
    whose first memory is right."""
    status = [r["status"] if answers[i] else "not_found" for i, r in enumerate(rows)]
    of = {kind: [i for i, r in enumerate(rows) if r["kind"] == kind] for kind in KINDS}
    sure = [
        i for i in range(len(rows)) if status[i] == "found" and (confidence[i] or 0.0) >= CONFIDENT
    ]

    def share(items: list[int], test: Callable[[int], bool]) -> float | None:
        return round(sum(1 for i in items if test(i)) / len(items), 3) if items else None

    return {
        "questions": len(rows),
        "never_stored_not_found": share(of["never"], lambda i: status[i] != "found"),
        "false_abstention": share(of["answerable"], lambda i: status[i] != "found"),
        "ambiguous_detected": share(of["ambiguous"], lambda i: status[i] == "ambiguous"),
        "confident_answers": len(sure) if any(c is not None for c in confidence) else None,
        "confident_right": share(sure, lambda i: rows[i]["right"] == 1),
    }


def _table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| decided by | questions | never stored → NOT FOUND | false abstention | ambiguous "
        "→ AMBIGUOUS | confidence ≥ 0.7: right (n) |",
        "|---|---|---|---|---|---|",
    ]
    for source, figures in results.items():
        lines.append(
            f"| {source} | {figures['questions']} | {figures['never_stored_not_found']} | "
            f"{figures['false_abstention']} | {figures['ambiguous_detected']} | "
            f"{figures['confident_right']} ({figures['confident_answers']}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", type=Path, nargs="+", default=None)
    parser.add_argument("--harness", type=Path, default=SHARED / "eval")
    parser.add_argument("--size", type=int, default=500, help="the generator's notes")
    parser.add_argument("--cache", type=Path, help="read the signals from it, or write them to it")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--l2", type=float, default=L2, help="the confidence model's penalty")
    parser.add_argument(
        "--wrong-weight",
        type=float,
        default=WRONG_WEIGHT,
        help="what a wrong FOUND answer weighs in the confidence model, a right one weighing 1",
    )
    parser.add_argument(
        "--write-confidence",
        action="store_true",
        help=f"write the confidence model fitted on every source to {CONFIDENCE_FILE.name}",
    )
    args = parser.parse_args(argv)
    if args.cache is not None and args.cache.exists():
        rows = json.loads(args.cache.read_text(encoding="utf-8"))
        if any(len(r["x"]) != len(FEATURES) for r in rows):
            print(f"fit_decision: {args.cache} holds other signals: collect again", file=sys.stderr)
            return 2
    else:
        data = args.data or [
            SHARED / "data" / "realistic_dev.json",
            SHARED / "data" / "realistic_dev2.json",
        ]
        missing = [p for p in [*data, args.harness / "evalharness"] if not p.exists()]
        if missing:
            print(f"fit_decision: not found: {', '.join(map(str, missing))}", file=sys.stderr)
            return 2
        print("collecting the signals of every question…", flush=True)
        rows = []
        for path in data:
            rows += collect_realistic(path, "auto")
            rows += collect_realistic(path, "off")
        rows += collect_generated(args.harness, args.size)
        if args.cache is not None:
            args.cache.write_text(json.dumps(rows), encoding="utf-8")
    families = sorted({family_of(r) for r in rows})
    report: dict[str, Any] = {"threshold": args.threshold, "sources": {}}
    for family in families:
        training = [r for r in rows if family_of(r) != family]
        testing = [r for r in rows if r["source"] == family]
        report["sources"][family] = {
            "rules": rules(testing),
            "model, this source left out": evaluate(fit(training), testing, args.threshold),
            "model, fitted on every source": evaluate(fit(rows), testing, args.threshold),
        }
    for family, results in report["sources"].items():
        print(f"\n{family} (with meaning):")
        print(_table(results))
    models = fit(rows)
    report["model"] = {
        name: {
            "intercept": round(intercept, 4),
            "weights": {f: round(float(w), 4) for f, w in zip(FEATURES, weights, strict=True)},
        }
        for name, (intercept, weights) in models.items()
    }
    report["confidence"] = confidence_report(rows, args.l2, args.wrong_weight)
    for family, results in report["confidence"].items():
        print(f"\n{family}: the confidence of FOUND answers")
        print(_confidence_table(results))
    if args.write_confidence:
        written = write_confidence(rows, args.l2, args.wrong_weight, report["confidence"])
        print(f"\nwrote {written.relative_to(ROOT)}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
