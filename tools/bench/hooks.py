"""The recall hooks' benchmark: how fast ``ihmt hook`` answers, and how often it speaks.

    python tools/bench/hooks.py                        # sizes 500 5000 50000, the dev set
    python tools/bench/hooks.py --sizes 500 --runs 20  # quicker
    python tools/bench/hooks.py --skip-latency         # only the shares of prompts

**Latency.** A store of N memories from ``_memories.generate`` (built like
``scale.py``'s navigator system: batched leaves, consolidated), in a project folder (a
git root named after one of the corpus's projects). Every run is a new ``ihmt hook``
process, exactly what an agent starts: ``prompt`` with the corpus's queries (each in a
new session) and ``session-start``. Wall-clock per process, p50/p95, two ways:

- ``server``: what users get: the first hook starts the warm recall server (its start is
  not timed: the bench waits until it listens), the timed hooks ask it;
- ``alone``: ``IHMT_HOOK_SERVER=off``, each hook opens the memory itself (the first
  hooks of a session before the server is up), after one warm-up run.

**Share of prompts that get context** (in process, the same ``recall_for`` the command
and the server call), with the server's search (meaning and words, when the
``[semantic]`` extra is installed) and with the words-only search of a hook alone:

- a realistic set's answerable questions (``--data``, the format of ``realistic.py``,
  saved as it does), each asked in a new session in its project: the
  share that gets any context, and the share whose context holds an expected memory
  (its key phrase in the text). Target >= 0.80.
- :data:`PLAIN_PROMPTS`, 50 everyday coding requests that no memory answers, asked in
  each of the dev set's projects: the share that gets any context. Target <= 0.10.

**What every session pays for** before the first prompt: the usage rules ``ihmt install``
appends to CLAUDE.md/AGENTS.md plus the server's ``tools/list`` (read through the MCP
SDK's stdio client from a real ``ihmt-mcp``), and at most what the hooks add (the
digest, then each prompt's recall), in estimated tokens (four characters a token, the
estimate used everywhere in IHMT).

Results go to ``tools/bench/results/hooks.json`` (ids and figures; no question text).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realistic import ANSWERABLE, DEV_SET, Keys, norm, table  # noqa: E402

IHMT = str(Path(sys.executable).parent / "ihmt")

PLAIN_PROMPTS = (
    "run the tests",
    "fix the failing test",
    "add type hints to this function",
    "rename the variable x to count everywhere in this file",
    "why does this loop never end?",
    "write a unit test for parse_args",
    "refactor this class into two smaller ones",
    "explain what this regular expression matches",
    "make this function async",
    "remove the unused imports",
    "format the code with the project's formatter",
    "the build is failing with a syntax error on line 42, can you look?",
    "add a docstring to every public method",
    "convert this dict comprehension into a plain for loop",
    "what does this error mean: KeyError: 'name'",
    "split this long function into helpers",
    "add logging to the retry loop",
    "make the CLI print a usage message when no argument is given",
    "sort the list by date, newest first",
    "add a --verbose flag",
    "why is this test flaky?",
    "commit these changes with a good message",
    "update the README with the new options",
    "replace the print calls with the logger",
    "handle the case where the file does not exist",
    "write a dataclass for a user with a name and an email",
    "make this SQL query use a parameter instead of string formatting",
    "add pagination to the list endpoint",
    "show me the diff",
    "undo the last change",
    "speed up this nested loop",
    "add a progress bar to the download",
    "what is the time complexity of this function?",
    "extract the magic numbers into constants",
    "write a bash script that renames all .txt files to .md",
    "check the code for off-by-one errors",
    "add input validation to the form handler",
    "make the tests run in parallel",
    "generate a .gitignore for a Python project",
    "implement binary search",
    "the linter complains about line length, fix it",
    "add a retry with exponential backoff around the HTTP call",
    "write a regex that matches an ISO date",
    "create a new branch for this feature",
    "add a health check endpoint that returns 200",
    "why is mypy complaining about Optional here?",
    "translate these comments into English",
    "add a context manager for the temporary directory",
    "read the config from an environment variable instead",
    "delete the dead code in utils",
)
"""Everyday requests to a coding agent that no memory answers: they must get nothing."""


# ---------------------------------------------------------------------- latency
def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _build_store(size: int, seed: int, home: Path) -> tuple[Any, str]:
    """A consolidated store of ``size`` generated memories at ``home/ihmt_memory``."""
    from _memories import generate
    from scale import NavigatorSystem

    corpus = generate(size, seed)
    system = NavigatorSystem(home / "build")
    started = time.perf_counter()
    system.ingest(list(corpus.memories))
    system.store.close()
    (home / "build" / "memory").rename(home / "ihmt_memory")
    projects = Counter(m.project for m in corpus.memories if m.project)
    print(
        f"  built {size:,} memories in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return corpus, projects.most_common(1)[0][0]


def _run_hook(
    home: Path, cwd: Path, event: str, payload: dict[str, Any], env: dict[str, str]
) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [IHMT, "hook", event, "--home", str(home)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"ihmt hook exited {done.returncode}: {done.stderr}")
    return elapsed, done.stdout


def _server_pid(home: Path) -> int | None:
    try:
        return int(json.loads((home / "hooks" / "server.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def _time_runs(
    home: Path, cwd: Path, queries: Sequence[str], runs: int, env: dict[str, str], tag: str
) -> dict[str, Any]:
    prompt_ms, added = [], 0
    for n, text in enumerate(queries):
        payload = {"session_id": f"{tag}p{n}", "cwd": str(cwd), "prompt": text}
        ms, out = _run_hook(home, cwd, "prompt", payload, env)
        prompt_ms.append(ms)
        added += bool(out)
    start_ms = []
    for n in range(max(5, runs // 4)):
        payload = {"session_id": f"{tag}s{n}", "cwd": str(cwd), "source": "startup"}
        start_ms.append(_run_hook(home, cwd, "session-start", payload, env)[0])
    log = (home / "hooks" / "hooks.log").read_text().splitlines()[-(len(queries) + len(start_ms)) :]
    via = Counter(json.loads(line).get("via") for line in log)
    return {
        "prompt_p50_ms": statistics.median(prompt_ms),
        "prompt_p95_ms": _percentile(prompt_ms, 0.95),
        "start_p50_ms": statistics.median(start_ms),
        "start_p95_ms": _percentile(start_ms, 0.95),
        "prompts_with_context": added / len(prompt_ms),
        "via": dict(via),
    }


def latency(size: int, seed: int, runs: int, folder: Path) -> dict[str, Any]:
    home = folder / f"h{size}"
    home.mkdir()
    corpus, project = _build_store(size, seed, home)
    cwd = folder / f"work-{size}" / project
    (cwd / ".git").mkdir(parents=True)
    queries = [q.text for q in corpus.queries][:runs]
    base = {k: v for k, v in os.environ.items() if not k.startswith("IHMT_HOOK")}
    alone_env = {**base, "IHMT_HOOK_SERVER": "off"}
    _run_hook(home, cwd, "session-start", {"session_id": "warm", "cwd": str(cwd)}, alone_env)
    alone = _time_runs(home, cwd, queries, runs, alone_env, "a")
    server_env = {**base, "IHMT_HOOK_SERVER": "auto"}
    _run_hook(home, cwd, "prompt", {"session_id": "w", "cwd": str(cwd), "prompt": "hi"}, server_env)
    started = time.perf_counter()
    deadline = time.monotonic() + 600
    while _server_pid(home) is None:
        if time.monotonic() > deadline:
            raise SystemExit("the recall server did not start within 600 s")
        time.sleep(0.2)
    ready_s = time.perf_counter() - started
    try:
        served = _time_runs(home, cwd, queries, runs, server_env, "s")
        mode = json.loads((home / "hooks" / "server.json").read_text())["mode"]
    finally:
        pid = _server_pid(home)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
    return {
        "size": size,
        "runs": len(queries),
        "server_ready_s": ready_s,
        "server_mode": mode,
        "server": served,
        "alone": alone,
    }


def _interpreter_ms(runs: int = 10) -> float:
    """A bare ``python -c pass``: the floor no command can go under."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


# ---------------------------------------------------------------------- shares
def shares(data: dict[str, Any], folder: Path, semantic: str) -> dict[str, Any]:
    from ihmt_cli._hook import recall_for
    from ihmt_mcp import Memory
    from ihmt_store import IhmtError

    memory = Memory.init(folder / f"dev-store-{semantic}", semantic=semantic)
    try:
        for mem in sorted(data["memories"], key=lambda m: (m["date"], m["id"])):
            try:
                memory.save(
                    mem["text"],
                    domain=mem["domain"],
                    date=mem["date"],
                    replaces=mem.get("replaces") or "",
                    project=mem.get("project") or "",
                )
            except IhmtError:
                continue
        memory.consolidate(force=True)
        keys = Keys(data["memories"])
        rows = []
        for query in data["queries"]:
            if query["kind"] not in ANSWERABLE:
                continue
            recall = recall_for(memory, query["text"], project=query.get("project") or "")
            expected = query["expect_ids"]
            right = any(norm(keys.by_id[m]["key"]) in norm(recall.text) for m in expected)
            rows.append(
                {
                    "id": query["id"],
                    "kind": query["kind"],
                    "context": bool(recall.text),
                    "right": right,
                    "why": recall.reason,
                }
            )
        projects = sorted({m.get("project") or "" for m in data["memories"]})
        plain = []
        for n, prompt in enumerate(PLAIN_PROMPTS):
            for project in projects:
                recall = recall_for(memory, prompt, project=project)
                plain.append({"prompt": n, "context": bool(recall.text), "why": recall.reason})
    finally:
        memory.close()
    by_kind = {
        kind: {
            "n": len(r := [x for x in rows if x["kind"] == kind]),
            "context": sum(x["context"] for x in r) / len(r),
            "right": sum(x["right"] for x in r) / len(r),
        }
        for kind in ANSWERABLE
        if any(x["kind"] == kind for x in rows)
    }
    return {
        "search": memory.semantic_mode.to_json()["mode"],
        "answerable": len(rows),
        "answerable_with_context": sum(r["context"] for r in rows) / len(rows),
        "answerable_with_right_memory": sum(r["right"] for r in rows) / len(rows),
        "plain": len(plain),
        "plain_with_context": sum(p["context"] for p in plain) / len(plain),
        "plain_prompts_with_context": sorted({p["prompt"] for p in plain if p["context"]}),
        "by_kind": by_kind,
        "misses": [r["id"] + ":" + r["why"] for r in rows if not r["right"]],
    }


# ---------------------------------------------------------------------- fixed cost
def session_cost(folder: Path) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from ihmt_cli._agent_instructions import instructions_block
    from ihmt_cli._hook import DIGEST_TOKENS, PROMPT_TOKENS
    from ihmt_store import estimate_tokens

    async def listed() -> str:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ihmt_mcp"],
            env={"IHMT_HOME": str(folder / "cost-home"), "IHMT_SEMANTIC": "off"},
        )
        with (folder / "cost-server.log").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = (await session.list_tools()).tools
        return json.dumps(
            [t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in tools],
            separators=(",", ":"),
        )

    tools = anyio.run(listed)
    rules = instructions_block()
    return {
        "rules_tokens": estimate_tokens(rules),
        "tools_list_tokens": estimate_tokens(tools),
        "tools": tools.count('"name"'),
        "digest_max_tokens": DIGEST_TOKENS,
        "prompt_recall_max_tokens": PROMPT_TOKENS,
    }


# ---------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000, 50000])
    parser.add_argument("--runs", type=int, default=40, help="prompt runs per size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DEV_SET)
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "hooks.json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"measured": time.strftime("%Y-%m-%d"), "latency": []}
    with tempfile.TemporaryDirectory(prefix="ihmt-hooks-") as tmp:
        folder = Path(tmp)
        results["session_cost"] = session_cost(folder)
        if args.data.is_file():
            data = json.loads(args.data.read_text(encoding="utf-8"))
            results["shares"] = shares(data, folder, "auto")
            results["shares_words_only"] = shares(data, folder, "off")
        else:
            print(f"no dataset at {args.data}: shares skipped", file=sys.stderr)
        if not args.skip_latency:
            results["python_floor_ms"] = _interpreter_ms()
            for size in args.sizes:
                print(f"size {size:,}", file=sys.stderr)
                results["latency"].append(latency(size, args.seed, args.runs, folder))
    cost = results["session_cost"]
    print(
        table(
            ["every session pays", "estimated tokens"],
            [
                ["usage rules in CLAUDE.md / AGENTS.md", cost["rules_tokens"]],
                [f"tools/list ({cost['tools']} tools)", cost["tools_list_tokens"]],
                ["session-start digest, at most", cost["digest_max_tokens"]],
                ["each prompt's recall, at most", cost["prompt_recall_max_tokens"]],
            ],
        )
    )
    print()
    for key in ("shares", "shares_words_only"):
        if key not in results:
            continue
        s = results[key]
        print(f"search: {s['search']}")
        print(
            table(
                ["share of prompts", "target", "value"],
                [
                    [f"answerable questions ({s['answerable']}) with context", "", s[
                        "answerable_with_context"]],
                    ["… holding an expected memory", ">= 0.80", s["answerable_with_right_memory"]],
                    [f"plain coding prompts ({s['plain']}) with context", "<= 0.10", s[
                        "plain_with_context"]],
                ],
            )
        )  # fmt: skip
        print()
        print(
            table(
                ["kind", "n", "with context", "right memory"],
                [[k, v["n"], v["context"], v["right"]] for k, v in s["by_kind"].items()],
            )
        )
        print()
    if results["latency"]:
        print(f"python -c pass: {results['python_floor_ms']:.0f} ms")
        rows = []
        for r in results["latency"]:
            for way in ("server", "alone"):
                t = r[way]
                rows.append(
                    [
                        f"{r['size']:,}",
                        way if way == "alone" else f"server ({r['server_mode']})",
                        round(t["prompt_p50_ms"]),
                        round(t["prompt_p95_ms"]),
                        round(t["start_p50_ms"]),
                        round(t["start_p95_ms"]),
                        r["runs"],
                    ]
                )
        print(
            table(
                ["memories", "hook", "prompt p50 ms", "p95", "session-start p50 ms", "p95", "runs"],
                rows,
            )
        )
        for r in results["latency"]:
            print(
                f"  {r['size']:,}: the server was ready {r['server_ready_s']:.1f} s after "
                "the first hook"
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
