"""The capture benchmark: what ``ihmt hook stop`` saves from real-format agent transcripts.

    python tools/bench/capture.py                  # quality on both parts, latency at 50,000
    python tools/bench/capture.py --sizes 5000     # quicker latency
    python tools/bench/capture.py --skip-latency   # quality only
    python tools/bench/capture.py --semantic off   # questions by words only
    python tools/bench/capture.py --keep DIR       # keep the memories (and answers.jsonl)

**Quality.** The 32 sessions of ``capture_data/sessions.txt`` (20 ``train``, 12
``heldout``; see ``_capture_sessions.py``), written by hand before the rules, are
rendered in their agent's own format (Claude Code JSONL, Codex rollout, opencode's
messages). Each person's sessions share one memory (``ihmt init`` in a fresh
``IHMT_HOME``; the session's ``S:`` memories and the agent's own ``X:`` saves go in
with ``ihmt save`` first); at each ``STOP`` the transcript as written so far is handed to
a real ``ihmt hook stop`` process, as the agent would (``IHMT_HOOK_SERVER=off``: the
process does the work). Then, per part:

- **precision**: saved memories that state a marked durable statement (it holds at least
  :data:`MATCH` of the statement's words), over all saved;
- **recall**: marked statements the memory did not hold before that a memory now states,
  over those statements;
- **duplicates**: saved memories stating what the memory already held (an ``S:``/``X:``
  memory, an earlier capture, or another memory saved in the same stop);
- **secrets saved**: memories holding a ``SECRET:`` of the session;
- **corrections**: ``{fix}`` statements whose session's ``S:`` memory is now OUTDATED;
  **wrong marks**: any other memory flagged OUTDATED;
- **found**: the ``{q: …}`` questions of captured statements asked with ``ihmt search
  --json`` in the session's project: FOUND with the statement's memory first. As
  installed (``--semantic auto``, the default) the semantic layer is on: the saves
  write their vectors, and the vectors of what a stop saved without the recall server
  are filled in (``ihmt index --semantic``, what the MCP server does when it starts)
  before the questions; ``--semantic off`` asks by words only. Each miss is counted by
  why: the answer's status, where the statement's memory stood in it (a NOT FOUND
  names its closest memories), whether it was saved under the session's project, and
  whether it holds any word of the question.

**Latency** (``--sizes``): a store of N generated memories (``hooks.py``'s builder), the
warm recall server started by a first hook; each timed run is a new ``ihmt hook stop``
process reading a new session's transcript (two durable statements among chatter), what
users get. p50/p95 wall-clock; and the nudge mode's ``reason`` in estimated tokens.

Results go to ``tools/bench/results/capture.json`` (figures, and the statements missed or
saved wrongly in the train part only: the held-out part is reported as totals).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _capture_sessions import Label, Session, load, snapshots, suffix  # noqa: E402

IHMT = str(Path(sys.executable).parent / "ihmt")
MATCH = 0.6
"""A memory states a marked statement when it holds this share of its words."""
OUT = HERE / "results" / "capture.json"


def _terms(text: str) -> set[str]:
    from ihmt_store import terms

    return set(terms(text))


def _holds(memory: str, statement: str) -> bool:
    wanted = _terms(statement)
    return bool(wanted) and len(wanted & _terms(memory)) / len(wanted) >= MATCH


def _run(args: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> str:
    done = subprocess.run(
        [IHMT, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"ihmt {args[0]} exited {done.returncode}: {done.stderr}")
    return done.stdout


def _leaves(env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    """Every memory of the store, with its source and OUTDATED mark."""
    out = _run(["export", "--format", "jsonl"], env, cwd)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _person(session: Session) -> str:
    parts = session.cwd.strip("/").split("/")
    return parts[1] if len(parts) > 1 else parts[0]


def _why(
    answer: dict[str, Any], label: Label, session: Session, leaves: list[dict[str, Any]]
) -> str:
    """Why a question about a captured statement was not answered with it: the answer,
    where the statement's memory stood in it, whether the memory is saved under the
    session's project, and how many of the question's words it holds."""
    memory = next(
        (m for m in leaves if m.get("source") == "session" and _holds(m["content"], label.text)),
        None,
    )
    if memory is None:
        return "the statement's memory is gone"
    # A NOT FOUND answer lists no results, but names its closest memories in its text.
    ids = [r["id"] for r in answer["results"]] or re.findall(r"\((L-[^)\s]+)\)", answer["compact"])
    where = (
        "first" if ids[:1] == [memory["id"]] else "listed" if memory["id"] in ids else "not listed"
    )
    project = _terms(session.project)
    asked = _terms(label.question) - project
    shared = asked & _terms(memory["content"])
    parts = [f"{answer['status']}, its memory {where}"]
    if memory.get("project") != session.project:
        parts.append("saved without the session's project")
    if project and project <= _terms(label.question):
        parts.append("the question names the project")
    parts.append("no word of the question held" if not shared else "some words held")
    return "; ".join(parts)


def quality(folder: Path, semantic: str = "auto") -> dict[str, Any]:
    sessions = load()
    base = {k: v for k, v in os.environ.items() if not k.startswith("IHMT_")}
    totals: dict[str, dict[str, Any]] = {}
    homes: dict[str, Path] = {}
    for session in sessions:
        split = totals.setdefault(
            session.split,
            {
                "sessions": 0,
                "saved": 0,
                "right": 0,
                "statements": 0,
                "recalled": 0,
                "duplicates": 0,
                "secrets_saved": 0,
                "fixes": 0,
                "fixed": 0,
                "wrong_marks": 0,
                "questions": 0,
                "found": 0,
                "hook_errors": 0,
                "missed": [],
                "wrong": [],
                "unanswered": [],
                "misses": {},
                "stop_ms": [],
            },
        )
        split["sessions"] += 1
        person = _person(session)
        home = homes.get(person)
        env = {**base, "IHMT_HOOK_SERVER": "off", "IHMT_SEMANTIC": semantic}
        env.update(LOGNAME=person, USER=person)  # the session's user, as an agent runs it
        work = folder / "work" / person / session.project
        (work / ".git").mkdir(parents=True, exist_ok=True)
        if home is None:
            home = homes[person] = folder / "homes" / person
            _run(
                ["init", "--path", str(home / "ihmt_memory")], {**env, "IHMT_HOME": str(home)}, work
            )
        env["IHMT_HOME"] = str(home)
        before = {leaf["id"] for leaf in _leaves(env, work)}
        held_texts = [leaf["content"] for leaf in _leaves(env, work)]
        seed_ids = []
        for text in [*session.seeds, *(e.text for e in session.events if e.kind == "X")]:
            saved = json.loads(_run(["--json", "save", text], env, work))
            seed_ids += saved["ids"]
            held_texts.append(text)
        seeds_of_session = set(seed_ids[: len(session.seeds)])
        live = folder / "live" / f"{session.id}{suffix(session)}"
        live.parent.mkdir(parents=True, exist_ok=True)
        for text in snapshots(session):
            payload: dict[str, Any] = {
                "session_id": session.session_id,
                "cwd": str(work),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            }
            if session.agent == "opencode":
                payload["messages"] = json.loads(text)
                payload["hook_event_name"] = "session.idle"
            else:
                live.write_text(text, "utf-8")
                payload["transcript_path"] = str(live)
            started = time.perf_counter()
            _run(["hook", "stop", "--agent", session.agent], env, work, json.dumps(payload))
            split["stop_ms"].append((time.perf_counter() - started) * 1000)
        after = _leaves(env, work)
        captured = [
            leaf for leaf in after if leaf["id"] not in before and leaf.get("source") == "session"
        ]
        split["saved"] += len(captured)
        stated: list[Label] = []
        for leaf in captured:
            text = leaf["content"]
            label = next((lb for lb in session.labels if _holds(text, lb.text)), None)
            if any(_holds(text, h) or _holds(h, text) for h in held_texts):
                split["duplicates"] += 1
            elif label is None:
                if session.split == "train":
                    split["wrong"].append(f"{session.id}: {text}")
            elif label in stated:
                split["duplicates"] += 1
            else:
                split["right"] += 1
                stated.append(label)
            held_texts.append(text)
        for label in session.labels:
            if label.held:
                continue
            split["statements"] += 1
            if label in stated:
                split["recalled"] += 1
            elif session.split == "train":
                split["missed"].append(f"{session.id}: {label.text}")
        split["secrets_saved"] += sum(
            1 for leaf in after for secret in session.secrets if secret in leaf["content"]
        )
        outdated = {leaf["id"] for leaf in after if leaf.get("outdated_by")}
        fixes = [lb for lb in session.labels if lb.fix]
        split["fixes"] += len(fixes)
        if fixes:
            split["fixed"] += bool(seeds_of_session & outdated)
        split["wrong_marks"] += len(
            {i for i in outdated if i not in before} - (seeds_of_session if fixes else set())
        )
        if semantic != "off":
            # As installed: the MCP server (or ``ihmt index --semantic``) fills in the
            # vectors of what a stop saved without its server, before anyone asks.
            _run(["index", "--semantic"], env, work)
        for label in session.labels:
            if not label.question or label not in stated:
                continue
            split["questions"] += 1
            answer = json.loads(_run(["--json", "search", label.question], env, work))
            with (folder / "answers.jsonl").open("a", encoding="utf-8") as asked:
                row = {"session": session.id, "split": session.split, "answer": answer}
                asked.write(json.dumps(row, ensure_ascii=False) + "\n")
            first = answer["results"][0]["content"] if answer["results"] else ""
            right = answer["status"] == "found" and _holds(first, label.text)
            split["found"] += right
            if not right:
                why = _why(answer, label, session, after)
                split["misses"][why] = split["misses"].get(why, 0) + 1
                if session.split == "train":
                    split["unanswered"].append(
                        f"{session.id}: {label.question}: {answer['status']} ({why})"
                    )
        log = home / "hooks" / "hooks.log"
        records = (
            [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        )
        errors = [r["error"] for r in records[-len(snapshots(session)) :] if r.get("error")]
        split["hook_errors"] += len(errors)
        if errors and session.split == "train":
            split["wrong"] += [f"{session.id}: hook error {e}" for e in errors]
    out = {}
    for name, s in totals.items():
        ms = sorted(s.pop("stop_ms"))
        out[name] = {
            **s,
            "precision": s["right"] / s["saved"] if s["saved"] else None,
            "recall": s["recalled"] / s["statements"] if s["statements"] else None,
            "found_share": s["found"] / s["questions"] if s["questions"] else None,
            "stop_p50_ms": statistics.median(ms),
            "stop_p95_ms": ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))],
        }
        if name != "train":
            for key in ("missed", "wrong", "unanswered"):
                out[name].pop(key)
    return out


# ---------------------------------------------------------------------- latency
CHATTER = [
    "can you run the tests again?",
    "thanks, looks good",
    "why does the linter complain about line 40?",
]


WORDS = (
    "amber",
    "basil",
    "cedar",
    "delta",
    "ember",
    "falcon",
    "garnet",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lagoon",
    "maple",
    "nectar",
    "onyx",
    "pepper",
    "quartz",
    "raven",
    "saffron",
    "tundra",
    "umber",
    "violet",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "anvil",
    "beacon",
    "canyon",
    "dune",
    "estuary",
    "fjord",
    "glacier",
    "heron",
    "island",
    "jetty",
    "knoll",
    "lantern",
    "meadow",
)


def _said(n: int) -> list[str]:
    """Chatter and two durable statements of run ``n``: a rule and a change, with words of
    their own (so that none is held already, and no earlier memory is what they change)."""
    import random

    rng = random.Random(n)
    a, b, c, d, e, f = rng.sample(WORDS, 6)
    return [
        *CHATTER,
        f"From now on the {a} {b} reports go to the {c.title()} channel on host {d}{n}.",
        f"We switched the {e} exporter to {f.title()}{n} last week.",
    ]


def _transcript(path: Path, n: int, cwd: Path) -> None:
    """A Claude Code transcript with chatter and two durable statements."""
    lines = []
    said = _said(n)
    for k, text in enumerate(said):
        lines.append(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "uuid": f"u{n}-{k}",
                "sessionId": f"lat{n}",
                "cwd": str(cwd),
            }
        )
        lines.append(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "OK."}]},
                "uuid": f"a{n}-{k}",
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")


def latency(size: int, runs: int, folder: Path) -> dict[str, Any]:
    from hooks import _build_store, _server_pid

    home = folder / f"h{size}"
    home.mkdir()
    _corpus, project = _build_store(size, 7, home)
    cwd = folder / f"work-{size}" / project
    (cwd / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("IHMT_")}
    env.update({"IHMT_HOME": str(home), "IHMT_HOOK_SERVER": "auto"})
    warm = {"session_id": "warm", "cwd": str(cwd), "prompt": "hello there"}
    _run(["hook", "prompt", "--home", str(home)], env, cwd, json.dumps(warm))
    deadline = time.monotonic() + 600
    while _server_pid(home) is None:
        if time.monotonic() > deadline:
            raise SystemExit("the recall server did not start within 600 s")
        time.sleep(0.2)
    times = []
    try:
        for n in range(runs):
            path = folder / f"t{size}-{n}.jsonl"
            _transcript(path, n, cwd)
            payload = {"session_id": f"lat{n}", "cwd": str(cwd), "transcript_path": str(path)}
            started = time.perf_counter()
            _run(["hook", "stop", "--home", str(home)], env, cwd, json.dumps(payload))
            times.append((time.perf_counter() - started) * 1000)
        log = (home / "hooks" / "hooks.log").read_text().splitlines()[-runs:]
        records = [json.loads(line) for line in log]
    finally:
        pid = _server_pid(home)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
    ordered = sorted(times)
    return {
        "size": size,
        "runs": runs,
        "stop_p50_ms": statistics.median(ordered),
        "stop_p95_ms": ordered[min(runs - 1, round(0.95 * (runs - 1)))],
        "hook_inner_p50_ms": statistics.median(float(r["ms"]) for r in records),
        "hook_inner_p95_ms": sorted(float(r["ms"]) for r in records)[round(0.95 * (runs - 1))],
        "via_server": sum(r.get("via") == "server" for r in records),
        "saved": sum(int(r.get("saved") or 0) for r in records),
        "held": sum(int(r.get("held") or 0) for r in records),
        "replaced": sum(int(r.get("replaced") or 0) for r in records),
        "errors": sum(bool(r.get("error")) for r in records),
    }


def nudge_tokens() -> dict[str, Any]:
    """The token cost of the nudge's reason, for one and for five pending statements."""
    from ihmt_cli._hook_stop import nudge_reason
    from ihmt_store import estimate_tokens

    one = nudge_reason(["We moved staging to PostgreSQL 17 last week"])
    five = nudge_reason([f"Statement number {n} about the deploy host h{n}" for n in range(5)])
    return {"one_statement": estimate_tokens(one), "five_statements": estimate_tokens(five)}


def table(result: dict[str, Any]) -> str:
    rows = [
        "part      sessions saved precision recall dup secrets fixed wrong_marks found "
        "p95_ms errors"
    ]
    for name in ("train", "heldout"):
        r = result["quality"][name]
        fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        rows.append(
            f"{name:9} {r['sessions']:8} {r['saved']:5} {fmt(r['precision']):>9} "
            f"{fmt(r['recall']):>6} {r['duplicates']:3} {r['secrets_saved']:7} "
            f"{r['fixed']}/{r['fixes']:<3} {r['wrong_marks']:11} "
            f"{r['found']}/{r['questions']:<3} {r['stop_p95_ms']:6.0f} {r['hook_errors']:6}"
        )
    rows.append("targets: precision >= 0.90, recall >= 0.70, 0 duplicates, 0 secrets saved")
    rows.append(
        "questions asked "
        + ("by words only" if result.get("semantic") == "off" else "as installed (meaning on)")
    )
    for name in ("train", "heldout"):
        for why, count in sorted(result["quality"][name]["misses"].items()):
            rows.append(f"  {name} missed {count}: {why}")
    for lat in result.get("latency", []):
        rows.append(
            f"latency at {lat['size']:,}: p50 {lat['stop_p50_ms']:.0f} ms, p95 "
            f"{lat['stop_p95_ms']:.0f} ms ({lat['via_server']}/{lat['runs']} through the "
            f"server; target p95 <= 1000 ms); inside the hook p50 "
            f"{lat['hook_inner_p50_ms']:.0f} ms, p95 {lat['hook_inner_p95_ms']:.0f} ms; "
            f"saved {lat['saved']}, held {lat['held']}, corrected {lat['replaced']}"
        )
    nudge = result["nudge_tokens"]
    rows.append(
        f"nudge reason: {nudge['one_statement']} tokens for one statement, "
        f"{nudge['five_statements']} for five"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[50_000])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument(
        "--semantic",
        choices=("auto", "off"),
        default="auto",
        help="auto: as installed (meaning vectors filled before the questions); off: words only",
    )
    parser.add_argument("--keep", type=Path, help="keep the memories and transcripts here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ihmt-capture-") as tmp:
        folder = Path(tmp) if args.keep is None else args.keep.resolve()
        folder.mkdir(parents=True, exist_ok=True)
        result: dict[str, Any] = {
            "semantic": args.semantic,
            "quality": quality(folder, args.semantic),
            "nudge_tokens": nudge_tokens(),
        }
        if not args.skip_latency:
            result["latency"] = [latency(size, args.runs, folder) for size in args.sizes]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
