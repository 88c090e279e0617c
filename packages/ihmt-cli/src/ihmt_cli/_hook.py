"""``ihmt hook EVENT``: what an agent's lifecycle hook adds to the model's context.

Claude Code and Codex run ``ihmt hook session-start`` / ``ihmt hook prompt`` as command
hooks (``SessionStart`` / ``UserPromptSubmit``): the agent's JSON arrives on stdin and the
answer goes back as ``hookSpecificOutput.additionalContext``, the one output shape both
agents document. opencode's plugin (``templates/opencode-plugin.js``) runs the same
command with ``--agent opencode`` and reads plain text. Gemini CLI runs it on
``SessionStart`` / ``BeforeAgent`` and reads the same JSON; Copilot CLI on its
VS Code-compatible ``SessionStart`` / ``UserPromptSubmit`` (Claude Code's input fields)
and reads a top-level ``additionalContext``.

The rules:

- **On a prompt**, search the memory with it in the prompt's project (the git root of its
  ``cwd``). Add the compact answer, clipped to :data:`PROMPT_TOKENS`, only when it is
  FOUND with confidence at least :data:`MIN_CONFIDENCE`, AMBIGUOUS, or relays an OUTDATED
  correction, and — for a request rather than a question — the memory shares more than
  everyday coding words with it (:data:`CODING_WORDS`); otherwise add nothing at all.
- **On session start**, a digest of the project (its latest corrections and current
  facts), at most :data:`DIGEST_TOKENS`; nothing when the memory knows nothing of it.
- **Never twice in a session**: the ids already added are kept per session under
  ``IHMT_HOME/hooks/sessions``.
- **It never breaks the agent**: any failure exits 0 with no output and is logged (one
  JSON line, never a memory's text nor the prompt) to ``IHMT_HOME/hooks/hooks.log``,
  which ``ihmt doctor`` reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ihmt_cli._types import Agent

if TYPE_CHECKING:
    from ihmt_mcp import Memory, Settings
    from ihmt_navigator import SearchResult

__all__ = [
    "DIGEST_TOKENS",
    "EVENTS",
    "HOOK_AGENTS",
    "LOG_NAME",
    "MIN_CONFIDENCE",
    "PROMPT_TOKENS",
    "HookInput",
    "HookRun",
    "Recall",
    "digest_for",
    "hook_log",
    "last_runs",
    "parse_input",
    "recall_for",
    "render_output",
    "run_hook",
]

Event = Literal["session-start", "prompt"]
EVENTS: dict[str, Event] = {
    "session-start": "session-start",
    "SessionStart": "session-start",
    "prompt": "prompt",
    "UserPromptSubmit": "prompt",
}
"""The command's event argument: ours, or the agents' own names."""
EVENT_NAMES: dict[Event, str] = {"session-start": "SessionStart", "prompt": "UserPromptSubmit"}
HOOK_AGENTS: tuple[Agent, ...] = ("claude-code", "codex", "opencode", "gemini-cli", "copilot")
"""The agents with hooks (the editors ``ihmt install`` sets up have none)."""

PROMPT_TOKENS = 300
DIGEST_TOKENS = 200
MIN_CONFIDENCE = 0.15
"""A FOUND answer below this adds nothing (unless it relays a correction); the CHANGELOG
says how ``tools/bench/hooks.py`` chose it."""
MIN_PROMPT_CHARS = 8
MAX_PROMPT_CHARS = 1000
"""Only the start of a long prompt (a pasted log) is searched."""
CODING_WORDS = """
add build bug call change check class clean code commit compile config const create debug
delete diff doc docstring edit endpoint error except exception explain fail failing file
fix flag format function generate handle hint implement import install lint linter list
log logging loop make merge method module move name parallel pass print project refactor
remove rename replace return run script show sort speed split style test tests type
typo undo unit unused update use variable warning write
"""
"""Words of everyday coding requests ("run the tests", "remove the unused imports"): a
memory that shares only these with a request is not what the request is about. A
question ("how do I run the tests?") asks what the memory knows, so it is not held to
this."""
QUESTION_WORDS = frozenset(
    [
        "how",
        "what",
        "what's",
        "whats",
        "which",
        "where",
        "who",
        "when",
        "why",
        "is",
        "are",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "cómo",
        "qué",
        "cuál",
        "cuáles",
        "dónde",
        "quién",
        "cuándo",
        "por",
    ]
)
DIGEST_FACTS = 6
DIGEST_CORRECTIONS = 3
DIGEST_RECENT = 4
DIGEST_SCAN = 200
"""The digest looks at this many of the project's memories that name the project."""
SESSION_DAYS = 7
"""A session's list of added memories is deleted after this many days without use."""
LOG_NAME = "hooks.log"
LOG_BYTES = 512 * 1024
"""The log is rotated (to ``hooks.log.1``) past this size."""

PROMPT_HEAD = (
    "Recalled from long-term memory (IHMT) for this prompt by an automatic search; it may "
    "be irrelevant: use it only if it applies, and call search_memory for more."
)
DIGEST_HEAD = (
    "Long-term memory (IHMT) knows this about project {project}; it may be out of date: "
    "call search_memory before relying on details."
)


# ---------------------------------------------------------------------- input
@dataclass(frozen=True, slots=True, kw_only=True)
class HookInput:
    """What the agent sent on stdin (Claude Code's and Codex's field names)."""

    session_id: str
    cwd: str
    prompt: str = ""
    source: str = ""
    """``startup``, ``resume``, ``clear``, ``compact`` (and ``fork`` for Codex, ``new``
    for Copilot CLI)."""


HOOK_CONTEXT, HOOK_CONTEXT_END = "<hook_context>", "</hook_context>"
"""How Gemini CLI marks, in a prompt, what a SessionStart hook added before it."""


def read_hook_json(raw: bytes | str) -> tuple[dict[str, Any], str, str]:
    """A hook's stdin: the JSON object, its session id and its working directory
    (``session_id``/``cwd``, or opencode's ``sessionID``/``directory``).

    Raises:
        ValueError: not a JSON object, or the session id or the directory missing.
    """
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"stdin is not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("stdin is not a JSON object")
    session = data.get("session_id") or data.get("sessionID")
    cwd = data.get("cwd") or data.get("directory")
    if not isinstance(session, str) or not session:
        raise ValueError("stdin has no session_id")
    if not isinstance(cwd, str) or not cwd:
        raise ValueError("stdin has no cwd")
    return data, session, cwd


def parse_input(raw: bytes | str) -> HookInput:
    """The hook's stdin as a :class:`HookInput`.

    Raises:
        ValueError: not a JSON object, or ``session_id`` / ``cwd`` missing.
    """
    data, session, cwd = read_hook_json(raw)
    prompt = data.get("prompt")
    source = data.get("source")
    if isinstance(prompt, str) and prompt.startswith(HOOK_CONTEXT):
        # Gemini CLI without a terminal puts what SessionStart added before the prompt
        end = prompt.find(HOOK_CONTEXT_END)
        prompt = prompt[end + len(HOOK_CONTEXT_END) :].lstrip() if end >= 0 else prompt
    return HookInput(
        session_id=session,
        cwd=cwd,
        prompt=prompt if isinstance(prompt, str) else "",
        source=source if isinstance(source, str) else "",
    )


# ---------------------------------------------------------------------- what to add
@dataclass(frozen=True, slots=True, kw_only=True)
class Recall:
    """What a hook adds: the text (empty: nothing) and the memories it names."""

    text: str = ""
    ids: tuple[str, ...] = ()
    reason: str = ""
    """Why, in a word: ``found``, ``ambiguous``, ``outdated``, ``digest``, or why not."""


def _fit(text: str, budget: int) -> str:
    """Whole lines of ``text`` within ``budget`` estimated tokens; a long line is clipped."""
    from ihmt_store import estimate_tokens

    out: list[str] = []
    for line in text.splitlines():
        if estimate_tokens("\n".join([*out, line])) <= budget:
            out.append(line)
            continue
        room = budget * 4 - len("\n".join(out)) - 2
        if room > 60:
            out.append(line[: room - 1] + "…")
        break
    return "\n".join(out)


def _generic_terms() -> frozenset[str]:
    from ihmt_store import terms

    return frozenset(terms(CODING_WORDS))


def _is_specific(result: SearchResult) -> bool:
    """The answer shares with the prompt at least one word beyond everyday coding words."""
    generic = _generic_terms()
    hits = result.results if result.status == "ambiguous" else result.results[:1]
    return any(term not in generic for hit in hits for term in hit.matched)


def _asks(prompt: str) -> bool:
    """A question rather than a request: "how do I run the tests?" vs "run the tests"."""
    text = prompt.strip().casefold()
    first = text.split(maxsplit=1)[0] if text else ""
    return text.endswith("?") or text.startswith("¿") or first in QUESTION_WORDS


def _relays_correction(result: SearchResult) -> bool:
    return any(n.startswith(("OUTDATED", "PROBABLY OUTDATED")) for n in result.notices)


def recall_for(memory: Memory, prompt: str, *, project: str, seen: Iterable[str] = ()) -> Recall:
    """The context a prompt gets: a confident, ambiguous or correcting answer, else none."""
    from ihmt_store import one_line

    query = one_line(prompt)[:MAX_PROMPT_CHARS]
    if len(query) < MIN_PROMPT_CHARS or query.startswith("/"):
        return Recall(reason="too short or a command")
    result = memory.search(query, project=project)
    if result.status == "not_found" or not result.results:
        return Recall(reason="not found")
    if not _is_specific(result) and not _asks(query):
        return Recall(reason="a request sharing only everyday coding words")
    correction = _relays_correction(result)
    if result.status == "ambiguous":
        reason = "ambiguous"
        ids = tuple(hit.id for hit in result.results)
    elif result.confidence >= MIN_CONFIDENCE:
        reason = "found"
        ids = (result.results[0].id,)
    elif correction:
        reason = "outdated"
        ids = (result.results[0].id,)
    else:
        return Recall(reason=f"low confidence {result.confidence:.2f}")
    already = set(seen)
    if already.issuperset(ids):
        return Recall(reason="already added in this session")
    from ihmt_store import estimate_tokens

    body = _fit(result.compact, PROMPT_TOKENS - estimate_tokens(PROMPT_HEAD) - 1)
    return Recall(text=f"{PROMPT_HEAD}\n{body}", ids=ids, reason=reason)


def digest_for(memory: Memory, *, project: str, seen: Iterable[str] = ()) -> Recall:
    """The session-start digest of ``project``: its latest corrections, its current facts
    (stack and the like, from the fact timeline), then its most recent memories, among
    the memories filed under the project that name it."""
    if not project:
        return Recall(reason="no project")
    from ihmt_facts import FactStatus
    from ihmt_store import one_line

    already = set(seen)
    # The project's memories that name it: an index query, where listing every memory
    # of a large store to pick the project's would cost most of a second.
    found = memory.store.candidates(
        project, project=project, kinds=("leaf",), limit=DIGEST_SCAN, exact=DIGEST_SCAN
    )
    mine = [c.entry for c in found]
    lines: list[str] = []
    ids: list[str] = []

    def add(line: str, item: str) -> None:
        if item not in already and item not in ids:
            lines.append(line)
            ids.append(item)

    flagged = sorted(
        (e for e in mine if e.outdated_by),
        key=lambda e: e.outdated_on or e.timestamp,
        reverse=True,
    )[:DIGEST_CORRECTIONS]
    newer = memory.store.entries([e.outdated_by for e in flagged if e.outdated_by])
    for old in flagged:
        new = newer.get(old.outdated_by or "")
        if new is not None:
            add(
                f'- corrected {(old.outdated_on or new.timestamp)[:10]}: "'
                f'{one_line(new.excerpt or new.title, 90)}" (replaces "'
                f'{one_line(old.excerpt or old.title, 60)}")',
                new.id,
            )
    subject = f"project:{project.casefold()}"
    current = [s for s in memory.timeline.history(subject) if s.status == FactStatus.ACTIVE]
    current.sort(key=lambda s: s.last_stated or s.valid_from, reverse=True)
    for state in current[:DIGEST_FACTS]:
        source = state.sources[-1] if state.sources else f"{subject}::{state.attribute}"
        add(
            f"- {state.attribute}: {one_line(state.value, 80)} (since {state.valid_from[:10]})",
            source,
        )
    recent = sorted((e for e in mine if not e.outdated_by), key=lambda e: e.timestamp)
    for entry in reversed(recent[-DIGEST_RECENT:]):
        add(f"- [{entry.timestamp[:10]}] {one_line(entry.excerpt or entry.title, 110)}", entry.id)
    if not lines:
        return Recall(reason="nothing new known of the project")
    head = DIGEST_HEAD.format(project=project)
    text = _fit("\n".join([head, *lines]), DIGEST_TOKENS)
    kept = text.count("\n")
    if kept == 0:
        return Recall(reason="nothing fits")
    return Recall(text=text, ids=tuple(ids[:kept]), reason="digest")


def render_output(agent: Agent, event: Event, text: str) -> str:
    """What the hook prints: JSON for Claude Code, Codex and Gemini CLI (Copilot CLI's
    shape for it), plain text for opencode."""
    if not text:
        return ""
    if agent == "opencode":
        return text + "\n"
    if agent == "copilot":
        return json.dumps({"additionalContext": text}, ensure_ascii=False) + "\n"
    payload = {
        "hookSpecificOutput": {"hookEventName": EVENT_NAMES[event], "additionalContext": text}
    }
    return json.dumps(payload, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------- session memory
def _session_file(home: Path, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:24]
    return home / "hooks" / "sessions" / f"{digest}.json"


def _seen(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return []
    ids = data.get("ids") if isinstance(data, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _remember(path: Path, ids: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"ids": list(dict.fromkeys(ids))}), "utf-8")
    os.replace(tmp, path)


def _prune_sessions(home: Path, now: float) -> None:
    folder = home / "hooks" / "sessions"
    try:
        names = list(os.scandir(folder))
    except OSError:
        return
    for entry in names[:2000]:
        try:
            if now - entry.stat().st_mtime > SESSION_DAYS * 86400:
                os.unlink(entry.path)
        except OSError:
            continue


# ---------------------------------------------------------------------- the log
def hook_log(home: Path) -> Path:
    """The file every hook run appends one JSON line to."""
    return home / "hooks" / LOG_NAME


def _log(home: Path, record: Mapping[str, Any]) -> None:
    path = hook_log(home)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_BYTES:
            os.replace(path, path.with_name(LOG_NAME + ".1"))
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(dict(record), ensure_ascii=False) + "\n")
    except OSError:
        pass  # nowhere to say it: the agent must still go on


def last_runs(home: Path) -> dict[str, dict[str, Any]]:
    """Per agent: the last run and the last error, from the end of the hook log."""
    path = hook_log(home)
    try:
        with path.open("rb") as stream:
            stream.seek(0, os.SEEK_END)
            size = stream.tell()
            stream.seek(max(0, size - 64 * 1024))
            tail = stream.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for line in tail:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("agent") not in HOOK_AGENTS:
            continue
        row = out.setdefault(str(record["agent"]), {"last_run": None, "last_error": None})
        row["last_run"] = record
        if record.get("error"):
            row["last_error"] = record
    return out


# ---------------------------------------------------------------------- the run
@dataclass(slots=True, kw_only=True)
class HookRun:
    """One run of the hook, for the log."""

    agent: Agent
    event: Event
    started: float = field(default_factory=time.perf_counter)
    record: dict[str, Any] = field(default_factory=dict)


def run_hook(event: Event, agent: Agent, raw: bytes, *, home: Path) -> str:
    """Everything ``ihmt hook`` does; returns what to print. Never raises."""
    run = HookRun(agent=agent, event=event)
    output = ""
    try:
        output = _run(run, raw, home)
    except Exception as exc:  # noqa: BLE001 — a hook must never break the agent
        run.record["error"] = f"{type(exc).__name__}: {exc}"[:300]
        output = ""
    run.record.update(
        {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "agent": agent,
            "event": event,
            "ms": round((time.perf_counter() - run.started) * 1000, 1),
        }
    )
    run.record.setdefault("error", "")
    _log(home, {k: run.record[k] for k in ("time", "agent", "event", "ms")} | run.record)
    return output


def _run(run: HookRun, raw: bytes, home: Path) -> str:
    from ihmt_cli import _recall_server as server
    from ihmt_mcp import Settings
    from ihmt_store import Store

    given = parse_input(raw)
    environ = dict(os.environ)
    settings = Settings.from_env({**environ, "IHMT_HOME": str(home)}, cwd=Path(given.cwd))
    if not Store.exists(settings.store_path):
        run.record["outcome"] = "no store yet"
        return ""
    project = settings.default_project()
    session = _session_file(home, given.session_id)
    if run.event == "session-start" and given.source in ("startup", "new", "clear", "compact", ""):
        session.unlink(missing_ok=True)  # a new context: nothing of ours is in it yet
        _prune_sessions(home, time.time())
    seen = _seen(session)
    answer = None
    wanted = server.is_wanted(environ)
    if wanted:
        request = {"event": run.event, "project": project, "prompt": given.prompt, "seen": seen}
        answer = server.ask(home, request, environ)
    if answer is not None:
        recall = Recall(
            text=str(answer.get("text") or ""),
            ids=tuple(str(i) for i in answer.get("ids") or ()),
            reason=str(answer["reason"]),
        )
        run.record["via"] = "server"
    else:
        if wanted:
            server.start(home, environ)
        recall = _recall_here(run.event, replace(settings, semantic="off"), given, project, seen)
        run.record["via"] = "process"
    run.record["outcome"] = recall.reason
    run.record["added"] = len(recall.ids) if recall.text else 0
    if not recall.text:
        return ""
    _remember(session, [*seen, *recall.ids])
    from ihmt_store import estimate_tokens

    run.record["tokens"] = estimate_tokens(recall.text)
    return render_output(run.agent, run.event, recall.text)


def _recall_here(
    event: Event, settings: Settings, given: HookInput, project: str, seen: Sequence[str]
) -> Recall:
    """The recall computed in this process, with words only: loading the sentence encoder
    would cost seconds on every prompt (the recall server keeps it warm)."""
    from ihmt_mcp import Memory

    memory = Memory.open(settings)
    # A hook alone must answer fast: the scan for hand edits (a stat per memory) is left
    # to the recall server and to searches.
    memory.hand_edit_check_s = None
    try:
        if event == "prompt":
            return recall_for(memory, given.prompt, project=project, seen=seen)
        return digest_for(memory, project=project, seen=seen)
    finally:
        memory.close()
