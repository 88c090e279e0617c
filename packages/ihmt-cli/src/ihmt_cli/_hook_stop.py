"""``ihmt hook stop``: save what the user said that lasts, when the agent stops.

Claude Code runs it on ``Stop`` and ``PreCompact``, Codex on ``Stop``, Gemini CLI on
``AfterAgent`` and ``SessionEnd``, Copilot CLI on ``Stop``, opencode's plugin when a session
goes idle. It reads the part of the session's transcript it has not read yet (an offset
per session under ``IHMT_HOME/hooks/capture``; for Gemini CLI and Copilot CLI also the ids
of the messages read, :mod:`ihmt_cli._transcript_formats`), keeps the durable
statements the user made (:mod:`ihmt_cli._capture`: rules, no language model), and saves
each through :meth:`Memory.save` with ``source="session"`` and a ``session:<id>`` tag:

- **Never twice.** A statement the memory already holds (the best memories the search
  finds for it hold :data:`HELD_SHARE` of its words) is not saved again.
- **Corrections.** A statement that says something changed ("we moved staging to
  PostgreSQL 17") is saved with ``replaces=`` the words it shares with the nearest
  earlier memory, when those words describe that memory and no other; otherwise it is
  saved and marks nothing (a wrong mark hides a true memory).
- **No secrets**: a save refuses them, and the rules never take a sentence about a
  password, a token or a key.
- **Opt out**: ``IHMT_CAPTURE=off`` in the agent's environment, or a file named
  :data:`OPT_OUT_FILE` at the project's root; ``ihmt install --no-capture`` leaves the
  hook out. ``IHMT_CAPTURE=nudge`` saves nothing and instead asks the agent, once per
  session, to save what the user said (the ``decision: block`` of Claude Code, Codex,
  Gemini CLI and Copilot CLI).

Like the recall hooks it never breaks the agent: every failure exits 0 with no output and
is logged to ``hooks.log``. With the warm recall server running, the work happens there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ihmt_cli._types import Agent

if TYPE_CHECKING:
    from ihmt_cli._capture import Statement
    from ihmt_mcp import Memory

__all__ = [
    "HELD_SHARE",
    "OPT_OUT_FILE",
    "STOP_EVENTS",
    "Captured",
    "StopInput",
    "capture_into",
    "capture_mode",
    "capture_text",
    "last_capture",
    "nudge_reason",
    "parse_stop_input",
    "project_tag",
    "run_stop",
]

STOP_EVENTS = ("stop", "Stop", "PreCompact", "session-idle")
"""The ``ihmt hook`` events that capture: ours, and the agents' own names."""
OPT_OUT_FILE = ".ihmt-no-capture"
"""A file of this name at a project's root turns capture off in that project."""
HELD_SHARE = 0.7
"""A memory holding this share of a statement's words already says it."""
HELD_LOOK = 3
"""How many of the search's first memories are compared with the statement."""
MAX_STATEMENTS = 12
"""At most this many statements are saved in one stop (a pasted document is no
conversation); the rest are dropped, and the log says how many."""
NUDGE_ITEMS = 5
NUDGE_CHARS = 120
LAST_NAME = "capture-last.json"
NUDGE_LEAD = "IHMT memory: the user said things worth keeping"
"""How the nudge begins: Gemini CLI and Copilot CLI log it as a user message, which is not
the user's."""
NUDGE_AGENTS: tuple[Agent, ...] = ("claude-code", "codex", "gemini-cli", "copilot")
"""The agents whose stop hook can ask for one more turn: ``{"decision": "block",
"reason"}`` (Gemini CLI's ``AfterAgent`` and Copilot CLI's ``Stop`` take Claude Code's
answer and say ``stop_hook_active`` on the stop that follows)."""
NO_NUDGE_EVENTS = ("PreCompact", "SessionEnd")
"""Stops that cannot ask for a turn (the conversation is compacted, or over)."""
SESSION_DAYS = 30
"""A session's read offset is forgotten after this many days without a stop."""

CHANGE_WORDS = """
moved move moves migrated migrate switched switch changed change replaced replace upgraded
upgrade downgraded renamed ported rewrote dropped now no longer anymore any more last week
weeks month months year years ago since yesterday today recently new old instead used use uses
ahora ya desde hemos cambiado migrado movido pasado semana mes año nuevo antes
"""
"""Words of the change itself ("we moved … last week"): a correction's hint is made of the
other words it shares with the memory it corrects (what changed, not how it was said)."""

Mode = Literal["on", "off", "nudge"]
_WORD = re.compile(r"[\w][\w.+#-]*[\w+#]|\w")


# ---------------------------------------------------------------------- input
@dataclass(frozen=True, slots=True, kw_only=True)
class StopInput:
    """What the agent sent on stdin when it stopped."""

    session_id: str
    cwd: str
    transcript_path: str = ""
    event: str = ""
    """``Stop``, ``PreCompact`` or ``session.idle``."""
    stop_hook_active: bool = False
    """True when this stop follows a block of ours (Claude Code, Codex): never block again."""
    messages: tuple[Any, ...] | None = None
    """opencode: the session's messages, handed over by the plugin."""


def parse_stop_input(raw: bytes | str) -> StopInput:
    """The hook's stdin as a :class:`StopInput`.

    Raises:
        ValueError: not a JSON object, ``session_id`` or ``cwd`` missing, or neither a
            transcript nor messages given.
    """
    from ihmt_cli._hook import read_hook_json

    data, session, cwd = read_hook_json(raw)
    path = data.get("transcript_path")
    messages = data.get("messages")
    if not isinstance(messages, list) and not (isinstance(path, str) and path):
        raise ValueError("stdin has neither transcript_path nor messages")
    event = data.get("hook_event_name")
    return StopInput(
        session_id=session,
        cwd=cwd,
        transcript_path=path if isinstance(path, str) else "",
        event=event if isinstance(event, str) else "",
        stop_hook_active=data.get("stop_hook_active") is True,
        messages=tuple(messages) if isinstance(messages, list) else None,
    )


def _project_root(cwd: Path) -> Path | None:
    """The git root at or above ``cwd`` (where a project opts out), or None."""
    try:
        here = cwd.expanduser().resolve()
    except OSError:
        return None
    return next((f for f in (here, *here.parents) if (f / ".git").exists()), None)


def capture_mode(environ: Mapping[str, str], project_root: Path | None) -> Mode:
    """``on`` (the default), ``off`` (``IHMT_CAPTURE=off``, or the project opted out) or
    ``nudge``."""
    wanted = (environ.get("IHMT_CAPTURE") or "on").strip().lower()
    if wanted in ("off", "0", "no", "false"):
        return "off"
    if project_root is not None and (project_root / OPT_OUT_FILE).exists():
        return "off"
    return "nudge" if wanted == "nudge" else "on"


# ---------------------------------------------------------------------- saving
@dataclass(slots=True, kw_only=True)
class Captured:
    """What one stop did with the statements it found."""

    saved: list[str] = field(default_factory=list)
    """Ids of the memories saved."""
    replaced: list[str] = field(default_factory=list)
    """Ids of the earlier memories they flagged OUTDATED."""
    held: int = 0
    """Statements the memory already held."""
    refused: int = 0
    """Statements a save refused (a secret)."""
    pending: list[str] = field(default_factory=list)
    """Nudge mode: the statements the memory does not hold, left for the agent to save."""

    def to_json(self) -> dict[str, Any]:
        return {
            "saved": self.saved,
            "replaced": self.replaced,
            "held": self.held,
            "refused": self.refused,
            "pending": self.pending,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Captured:
        def strings(key: str) -> list[str]:
            value = data.get(key)
            return [str(v) for v in value] if isinstance(value, list) else []

        return cls(
            saved=strings("saved"),
            replaced=strings("replaced"),
            held=int(data.get("held") or 0),
            refused=int(data.get("refused") or 0),
            pending=strings("pending"),
        )


def _share_held(statement: str, text: str) -> float:
    from ihmt_store import terms

    wanted = set(terms(statement))
    if not wanted:
        return 1.0
    return len(wanted & set(terms(text))) / len(wanted)


def _nearest(memory: Memory, text: str, project: str) -> list[tuple[str, str]]:
    """``(id, text)`` of the current memories of the project (and the global ones) that
    share most words with ``text`` (BM25, no answer decided: a statement is no question)."""
    found = []
    for scope in dict.fromkeys((project, "")):
        found += memory.store.candidates(
            text, project=scope, kinds=("leaf",), limit=HELD_LOOK, exact=HELD_LOOK
        )
    found.sort(key=lambda c: -c.score)
    ids = [c.entry.id for c in found if not c.entry.outdated_by][:HELD_LOOK]
    leaves = {leaf.leaf_id: leaf.text for leaf in memory.store.read_leaves(ids)}
    return [(i, leaves[i]) for i in ids if i in leaves]


def _correction_hint(
    memory: Memory, text: str, project: str, nearest: Sequence[tuple[str, str]]
) -> str:
    """The ``replaces`` hint for a statement that says something changed: the words it
    shares with the nearest memory that shares at least two, when those words describe
    that memory and no other (:meth:`Navigator.find_corrected`); else '' (mark nothing)."""
    from ihmt_store import terms

    cue = set(terms(CHANGE_WORDS))
    for leaf_id, body in nearest:
        held = set(terms(body)) - cue
        shared = [w for w in dict.fromkeys(_WORD.findall(text)) if set(terms(w)) & held]
        if len(shared) < 2:
            continue
        hint = " ".join(shared)
        try:
            found = memory.navigator.find_corrected(hint, project=project, limit=3)
        except ValueError:
            return ""
        targets = [h.id for h in found.targets]
        return hint if found.status == "found" and targets == [leaf_id] else ""
    return ""


def project_tag(text: str, project: str) -> tuple[str, ...]:
    """``project:<name>`` when ``text`` does not name the project it was said in.

    What a user says in a session leaves its project unsaid ("use pnpm in this repo",
    "our ETL runs on Airflow"), where a save written for later names it ("lynx uses
    pnpm"). The memory is saved under the project either way, but a question naming
    the project ("which package manager does lynx use?") is matched by words: the tag
    (tags are searched) gives the memory the project's name."""
    from ihmt_store import terms

    named = set(terms(project))
    if not named or named <= set(terms(text)):
        return ()
    return (f"project:{project}",)


_FIRST_PERSON = re.compile(r"\bI\b|\bI['’](?:m|ve|d|ll)\b|(?i:\b(?:my|me|mine|myself|yo|mi|mis)\b)")
"""A statement in the first person singular: what it says is about who said it."""
_NO_ONE = frozenset({"root"})
"""Login names that name no person."""


def speaker(environ: Mapping[str, str]) -> str:
    """Who a session's "I" is: the login name the hook runs under (``LOGNAME``,
    ``USER``…, then the account's, as :func:`getpass.getuser` reads them); "" when it
    names no one."""
    logins = ("LOGNAME", "USER", "LNAME", "USERNAME")
    name = next((environ[key] for key in logins if environ.get(key)), "")
    if not name:
        import getpass

        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            return ""
    return "" if name in _NO_ONE else name


def speaker_tag(text: str, who: str) -> tuple[str, ...]:
    """``by:<name>`` for a statement in the first person singular ("I prefer CTEs"):
    in a memory read later, by the same person or by others it is shared with, "I" no
    longer says who; the tag (tags are searched) does ("how does kenji like SQL
    written?")."""
    return (f"by:{who}",) if who and _FIRST_PERSON.search(text) else ()


def capture_into(
    memory: Memory,
    statements: Sequence[Statement],
    *,
    project: str,
    session: str,
    save: bool = True,
    who: str = "",
) -> Captured:
    """Save the ``statements`` the memory does not hold yet (``save=False``: only list
    them in ``pending``); ``who`` said them (:func:`speaker`)."""
    from ihmt_cli._capture import is_change
    from ihmt_mcp import SecretRefusedError

    out = Captured()
    for statement in statements[:MAX_STATEMENTS]:
        text = statement.text
        nearest = _nearest(memory, text, project)
        if any(_share_held(text, body) >= HELD_SHARE for _, body in nearest):
            out.held += 1
            continue
        if not save:
            out.pending.append(text)
            continue
        hint = _correction_hint(memory, text, project, nearest) if is_change(statement) else ""
        tags = (
            f"session:{session}",
            f"kind:{statement.kind}",
            *project_tag(text, project),
            *speaker_tag(text, who),
        )
        try:
            result = memory.save(text, replaces=hint, project=project, tags=tags, source="session")
        except SecretRefusedError:
            out.refused += 1
            continue
        except ValueError:
            continue  # empty after cleaning, or a form a save refuses: nothing to keep
        out.saved.extend(result.ids)
        out.replaced.extend(result.replaced.replaced)
    return out


def nudge_reason(pending: Sequence[str]) -> str:
    """The one line asking the agent to save what the user said."""
    from ihmt_store import one_line

    items = "; ".join(f'"{one_line(p, NUDGE_CHARS)}"' for p in pending[:NUDGE_ITEMS])
    more = f" (and {len(pending) - NUDGE_ITEMS} more)" if len(pending) > NUDGE_ITEMS else ""
    return (
        f"{NUDGE_LEAD} that the memory does not hold: "
        f"{items}{more}. Save each that lasts with save_memory (with replaces= when it "
        "corrects an earlier memory), then stop."
    )


# ---------------------------------------------------------------------- per session
def _state_file(home: Path, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:24]
    return home / "hooks" / "capture" / f"{digest}.json"


def _read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(dict(data), ensure_ascii=False), "utf-8")
    os.replace(tmp, path)


def _prune(home: Path, now: float) -> None:
    try:
        entries = list(os.scandir(home / "hooks" / "capture"))
    except OSError:
        return
    for entry in entries[:2000]:
        try:
            if now - entry.stat().st_mtime > SESSION_DAYS * 86400:
                os.unlink(entry.path)
        except OSError:
            continue


def last_capture(home: Path) -> dict[str, Any] | None:
    """What the last stop that found something did, for ``ihmt doctor``: ``time``,
    ``agent``, ``project``, ``saved`` (each ``{id, text}``: the memory's first words, or
    ``forgotten`` when it is gone), ``replaced``, ``held``, ``refused``, ``pending``; None
    when nothing was ever captured."""
    data = _read_state(home / "hooks" / LAST_NAME)
    if not data:
        return None
    ids = [str(i) for i in data.get("saved") or [] if isinstance(i, str)]
    texts: dict[str, str] = {}
    try:
        from ihmt_mcp import Settings
        from ihmt_store import Store, one_line

        store = Store.open(Settings.for_home(home).store_path)
        try:
            entries = store.entries(ids)
            texts = {i: one_line(e.excerpt or e.title, 80) for i, e in entries.items()}
        finally:
            store.close()
    except Exception:  # noqa: BLE001 — the store's own check reports what is wrong
        texts = {}
    data["saved"] = [{"id": i, "text": texts.get(i, "forgotten")} for i in ids]
    return data


def capture_text(data: Mapping[str, Any] | None) -> str:
    """``ihmt doctor``'s line about the last capture."""
    if not data:
        return "capture: nothing captured yet"
    saved = data.get("saved") or []
    head = (
        f"capture: last {data.get('time', '?')} ({data.get('agent', '?')}, project "
        f"{data.get('project') or '-'}): saved {len(saved)}, held {data.get('held', 0)}, "
        f"corrected {len(data.get('replaced') or [])}"
    )
    if data.get("pending"):
        head += f", left to the agent {len(data['pending'])}"
    return "\n".join([head, *(f'  {s["id"]} "{s["text"]}"' for s in saved[:5])])


# ---------------------------------------------------------------------- the run
def run_stop(agent: Agent, raw: bytes, *, home: Path) -> str:
    """Everything ``ihmt hook stop`` does; returns what to print. Never raises."""
    from ihmt_cli._hook import _log

    started = time.perf_counter()
    record: dict[str, Any] = {}
    output = ""
    try:
        output = _stop(agent, raw, home, record)
    except Exception as exc:  # noqa: BLE001 — a hook must never break the agent
        record["error"] = f"{type(exc).__name__}: {exc}"[:300]
        output = ""
    head = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "agent": agent,
        "event": "stop",
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    record.setdefault("error", "")
    _log(home, head | record)
    return output


def _stop(agent: Agent, raw: bytes, home: Path, record: dict[str, Any]) -> str:
    from ihmt_cli import _recall_server as server
    from ihmt_cli._capture import durable_statements
    from ihmt_cli._transcript import read_new, user_turns_of_messages
    from ihmt_cli._transcript_formats import KEYED_AGENTS, read_keyed
    from ihmt_mcp import Settings
    from ihmt_store import Store

    given = parse_stop_input(raw)
    environ = dict(os.environ)
    settings = Settings.from_env({**environ, "IHMT_HOME": str(home)}, cwd=Path(given.cwd))
    mode = capture_mode(environ, _project_root(Path(given.cwd)))
    if mode == "off":
        record["outcome"] = "capture off"
        return ""
    if not Store.exists(settings.store_path):
        record["outcome"] = "no store yet"
        return ""
    state_path = _state_file(home, given.session_id)
    state = _read_state(state_path)
    if given.messages is not None:
        start = int(state.get("offset") or 0) if state.get("kind") == "messages" else 0
        start = start if start <= len(given.messages) else 0
        turns = user_turns_of_messages(given.messages[start:])
        state.update(kind="messages", offset=len(given.messages))
    elif agent in KEYED_AGENTS:
        turns = read_keyed(agent, Path(given.transcript_path), state)
    else:
        path = Path(given.transcript_path)
        same = state.get("kind") == "file" and state.get("path") == str(path)
        turns, offset = read_new(path, int(state.get("offset") or 0) if same else 0)
        state.update(kind="file", path=str(path), offset=offset)
    state["time"] = time.time()
    _write_json(state_path, state)  # read once: a failure below never re-reads it
    statements = [s for turn in turns for s in durable_statements(turn.text)]
    record["turns"] = len(turns)
    record["statements"] = len(statements)
    if not statements:
        record["outcome"] = "nothing durable"
        return ""
    project = settings.default_project()
    who = speaker(environ)
    request = {
        "event": "capture",
        "project": project,
        "session": given.session_id,
        "speaker": who,
        "save": mode == "on",
        "statements": [{"text": s.text, "kind": s.kind} for s in statements],
    }
    answer = server.ask(home, request, environ) if server.is_wanted(environ) else None
    if answer is not None and isinstance(answer.get("captured"), dict):
        captured = Captured.from_json(answer["captured"])
        record["via"] = "server"
    else:
        if server.is_wanted(environ):
            server.start(home, environ)
        captured = _capture_here(settings, statements, project, given.session_id, mode == "on", who)
        record["via"] = "process"
    record.update(
        saved=len(captured.saved),
        replaced=len(captured.replaced),
        held=captured.held,
        refused=captured.refused,
        pending=len(captured.pending),
        outcome="saved" if captured.saved else "nothing new",
    )
    if captured.saved or captured.pending:
        _write_json(
            home / "hooks" / LAST_NAME,
            {
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "agent": agent,
                "project": project,
                "session": given.session_id,
                **captured.to_json(),
            },
        )
    _prune(home, time.time())
    if mode != "nudge" or not captured.pending or agent not in NUDGE_AGENTS:
        return ""
    if given.stop_hook_active or given.event in NO_NUDGE_EVENTS or state.get("nudged"):
        return ""
    state["nudged"] = True
    _write_json(state_path, state)
    reason = nudge_reason(captured.pending)
    from ihmt_store import estimate_tokens

    record.update(outcome="nudged", tokens=estimate_tokens(reason))
    return json.dumps({"decision": "block", "reason": reason}, ensure_ascii=False) + "\n"


def _capture_here(
    settings: Any,
    statements: Sequence[Statement],
    project: str,
    session: str,
    save: bool,
    who: str,
) -> Captured:
    """The capture in this process, searching by words only (the sentence encoder would
    cost seconds; the server's vectors catch up with ``ihmt index --semantic``)."""
    from dataclasses import replace

    from ihmt_mcp import Memory

    memory = Memory.open(replace(settings, semantic="off"))
    memory.hand_edit_check_s = None
    try:
        return capture_into(
            memory, statements, project=project, session=session, save=save, who=who
        )
    finally:
        memory.close()


def answer_capture(memory: Memory, request: Mapping[str, Any]) -> dict[str, Any]:
    """The recall server's answer to a ``capture`` request."""
    from ihmt_cli._capture import Statement

    statements = [
        Statement(text=str(s["text"]), kind=s.get("kind") or "fact")
        for s in request.get("statements") or []
        if isinstance(s, dict) and isinstance(s.get("text"), str)
    ]
    captured = capture_into(
        memory,
        statements,
        project=str(request.get("project") or ""),
        session=str(request.get("session") or ""),
        save=request.get("save") is not False,
        who=str(request.get("speaker") or ""),
    )
    return {"reason": "captured", "captured": captured.to_json()}
