"""The capture benchmark's sessions (``capture_data/sessions.txt``) and their transcripts in
each agent's own format.

``sessions.txt`` says what happened in each session (its header comment says how); this
module reads it and writes the transcript exactly as the agent keeps it:

- **Claude Code**: the session's JSONL file under ``~/.claude/projects/<folder>/``: one
  JSON object a line (``type`` ``user`` / ``assistant`` / ``attachment`` / …), a tool's
  output as a ``tool_result`` block in a ``user`` line, the shapes ``claude`` 2.1.332
  writes (checked against a file it wrote here).
- **Codex**: the rollout file ``~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl``:
  ``session_meta``, ``turn_context``, ``response_item`` (messages, ``function_call``,
  ``function_call_output``, ``custom_tool_call``) and ``event_msg`` lines, the shapes
  ``codex`` 0.171.0 writes (checked against a rollout it wrote here).
- **opencode**: the session's messages as its server returns them
  (``GET /session/<id>/message``, what the plugin hands ``ihmt hook stop``): a JSON array
  of ``{"info", "parts"}`` (checked against ``opencode serve`` 1.18.33).

A transcript is written up to each ``STOP``: the capture hook runs on what the agent had
written by then, and again on what it wrote after.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SESSIONS = HERE / "capture_data" / "sessions.txt"

LABEL = re.compile(r"\[\[(.+?)\]\]((?:\{[^}]*\})*)")
FLAG = re.compile(r"\{([^}]*)\}")


@dataclass(slots=True)
class Label:
    """One durable statement the user made, as marked in ``sessions.txt``."""

    text: str
    held: bool = False
    fix: bool = False
    question: str = ""


@dataclass(slots=True)
class Event:
    kind: str
    """``U`` user, ``A`` assistant, ``T`` tool, ``X`` explicit save, ``STOP``."""
    text: str = ""
    tool: str = ""
    tool_input: str = ""
    output: str = ""


@dataclass(slots=True)
class Session:
    id: str
    agent: str
    split: str
    cwd: str
    date: str
    seeds: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        """The agent's own kind of session id."""
        digest = hashlib.sha256(self.id.encode()).hexdigest()
        if self.agent == "opencode":
            return "ses_" + digest[:26]
        return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"

    @property
    def project(self) -> str:
        return self.cwd.rstrip("/").rsplit("/", 1)[-1]


def _unlabel(text: str, labels: list[Label]) -> str:
    """``text`` as the user typed it, the labels collected into ``labels``."""

    def one(match: re.Match[str]) -> str:
        label = Label(text=match.group(1))
        for flag in FLAG.findall(match.group(2)):
            name, _, value = flag.partition(":")
            if name.strip() == "held":
                label.held = True
            elif name.strip() == "fix":
                label.fix = True
            elif name.strip() == "q":
                label.question = value.strip()
        labels.append(label)
        return match.group(1)

    return LABEL.sub(one, text).replace("\\n", "\n")


def load(path: Path = SESSIONS) -> list[Session]:
    """Every session of ``sessions.txt``, in order."""
    sessions: list[Session] = []
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("# session "):
            head = line.split()
            opts = dict(part.split("=", 1) for part in head[5:])
            sessions.append(
                Session(
                    id=head[2], agent=head[3], split=head[4], cwd=opts["cwd"], date=opts["date"]
                )
            )
            continue
        if not line.strip() or line.startswith("#") or not sessions:
            continue
        s = sessions[-1]
        kind, _, rest = line.partition(":")
        rest = rest.strip()
        if line.strip() == "STOP":
            s.events.append(Event(kind="STOP"))
        elif kind == "S":
            s.seeds.append(rest)
        elif kind == "SECRET":
            s.secrets.append(rest)
        elif kind == "U":
            s.events.append(Event(kind="U", text=_unlabel(rest, s.labels)))
        elif kind in ("A", "X"):
            s.events.append(Event(kind=kind, text=rest))
        elif kind == "T":
            tool, tool_input, output = (p.strip() for p in (rest + " | | ").split(" | ", 2))
            s.events.append(
                Event(kind="T", tool=tool, tool_input=tool_input, output=output.rstrip(" |"))
            )
        else:
            raise ValueError(f"sessions.txt: cannot read {line!r}")
    return sessions


# ---------------------------------------------------------------------- rendering
class _Clock:
    def __init__(self, start: str) -> None:
        self.now = datetime.fromisoformat(start.replace("Z", "+00:00"))

    def tick(self, seconds: int = 7) -> str:
        self.now += timedelta(seconds=seconds)
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"


def _uid(session: Session, n: int, kind: str = "") -> str:
    digest = hashlib.sha256(f"{session.id}:{kind}:{n}".encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"


def _claude_lines(session: Session) -> list[list[str]]:
    """Claude Code's JSONL, one list of lines per stretch between two stops."""
    clock = _Clock(session.date)
    base = {
        "isSidechain": False,
        "userType": "external",
        "entrypoint": "cli",
        "cwd": session.cwd,
        "sessionId": session.session_id,
        "version": "2.1.332",
        "gitBranch": "main",
    }
    parts: list[list[str]] = [[]]
    out = parts[0]
    parent: str | None = None
    n = 0

    def emit(record: dict[str, Any]) -> None:
        nonlocal parent, n
        n += 1
        uuid = _uid(session, n)
        line = {"parentUuid": parent, **record, "uuid": uuid, "timestamp": clock.tick(), **base}
        out.append(json.dumps(line, ensure_ascii=False))
        parent = uuid

    def assistant(content: list[dict[str, Any]]) -> None:
        message = {
            "id": "msg_" + _uid(session, n, "m").replace("-", "")[:24],
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": content,
            "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
            "usage": {"input_tokens": 812, "output_tokens": 64},
        }
        emit({"type": "assistant", "message": message, "requestId": "req_" + str(n)})

    # What Claude Code writes first in an interactive session: a caveat and the hook's
    # context, neither of them typed by the user.
    caveat = (
        "<local-command-caveat>Caveat: The messages below were generated by the user while "
        "running local commands. DO NOT respond to these messages or otherwise consider them "
        "in your response unless the user explicitly asks you to.</local-command-caveat>"
    )
    emit({"type": "user", "message": {"role": "user", "content": caveat}, "isMeta": True})
    emit(
        {
            "type": "attachment",
            "attachment": {
                "type": "hook_additional_context",
                "content": ["Long-term memory (IHMT) knows this about project " + session.project],
                "hookName": "SessionStart:startup",
            },
        }
    )
    typed = 0
    for event in session.events:
        if event.kind == "STOP":
            out = []
            parts.append(out)
        elif event.kind == "U":
            typed += 1
            # Recent versions write a typed prompt as a string, a pasted one (or one with
            # an image) as a list of blocks: both occur.
            content: Any = event.text if typed % 3 else [{"type": "text", "text": event.text}]
            emit({"type": "user", "message": {"role": "user", "content": content}})
        elif event.kind == "A":
            assistant([{"type": "text", "text": event.text}])
        elif event.kind in ("T", "X"):
            tool_id = "toolu_" + _uid(session, n, "t").replace("-", "")[:24]
            if event.kind == "X":
                name, given, output = (
                    "mcp__ihmt-memory__save_memory",
                    {"content": event.text},
                    "Saved 1 memory (general).",
                )
            else:
                key = "command" if event.tool == "Bash" else "file_path"
                name, given, output = event.tool, {key: event.tool_input}, event.output
            assistant([{"type": "tool_use", "id": tool_id, "name": name, "input": given}])
            result = {"type": "tool_result", "tool_use_id": tool_id, "content": output}
            emit(
                {
                    "type": "user",
                    "message": {"role": "user", "content": [result]},
                    "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
                }
            )
    return parts


def _codex_lines(session: Session) -> list[list[str]]:
    """Codex's rollout JSONL, one list of lines per stretch between two stops."""
    clock = _Clock(session.date)
    parts: list[list[str]] = [[]]
    out = parts[0]
    n = 0

    def emit(kind: str, payload: dict[str, Any]) -> None:
        nonlocal n
        out.append(
            json.dumps(
                {"timestamp": clock.tick(), "ordinal": n, "type": kind, "payload": payload},
                ensure_ascii=False,
            )
        )
        n += 1

    def message(role: str, kinds: str, text: str) -> dict[str, Any]:
        item = "input_text" if role != "assistant" else "output_text"
        payload: dict[str, Any] = {
            "type": "message",
            "id": "msg_" + _uid(session, n, "c"),
            "role": role,
            "content": [{"type": item, "text": text}],
        }
        if role != "assistant":
            payload["internal_chat_message_metadata_passthrough"] = {
                "turn_id": _uid(session, 0, "turn"),
                "content_item_kinds": [kinds],
            }
        return payload

    emit(
        "session_meta",
        {
            "session_id": session.session_id,
            "id": session.session_id,
            "timestamp": session.date,
            "cwd": session.cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.171.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, an agent based on GPT-6."},
        },
    )
    emit("response_item", message("developer", "permissions", "<permissions instructions/>"))
    env = (
        f"<environment_context>\n  <cwd>{session.cwd}</cwd>\n  <shell>bash</shell>\n"
        "</environment_context>"
    )
    emit("response_item", message("user", "environments.environment_context", env))
    emit("turn_context", {"cwd": session.cwd, "approval_policy": "on-request", "model": "gpt-6"})
    for event in session.events:
        if event.kind == "STOP":
            emit("event_msg", {"type": "task_complete", "last_agent_message": None})
            out = []
            parts.append(out)
        elif event.kind == "U":
            emit("response_item", message("user", "user.text", event.text))
            emit("event_msg", {"type": "user_message", "message": event.text, "images": []})
        elif event.kind == "A":
            emit("response_item", message("assistant", "", event.text))
            emit("event_msg", {"type": "agent_message", "message": event.text})
        elif event.kind in ("T", "X"):
            call = "call_" + _uid(session, n, "k").replace("-", "")[:24]
            if event.kind == "X":
                emit(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "mcp__ihmt-memory__save_memory",
                        "arguments": json.dumps({"content": event.text}),
                        "call_id": call,
                    },
                )
                output = "Saved 1 memory (general)."
            elif event.tool == "apply_patch":
                patch = f"*** Begin Patch\n*** Update File: {event.tool_input}\n*** End Patch"
                emit(
                    "response_item",
                    {
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call,
                        "name": "apply_patch",
                        "input": patch,
                    },
                )
                emit(
                    "response_item",
                    {"type": "custom_tool_call_output", "call_id": call, "output": event.output},
                )
                continue
            else:
                emit(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": event.tool_input}),
                        "call_id": call,
                    },
                )
                output = event.output
            emit(
                "response_item",
                {"type": "function_call_output", "call_id": call, "output": output},
            )
    return parts


def _opencode_messages(session: Session) -> list[list[dict[str, Any]]]:
    """opencode's messages, cumulated: the list as it stood at each stop."""
    clock = _Clock(session.date)
    messages: list[dict[str, Any]] = []
    stops: list[list[dict[str, Any]]] = []
    n = 0

    def new(role: str) -> dict[str, Any]:
        nonlocal n
        n += 1
        created = int(clock.now.timestamp() * 1000)
        clock.tick()
        info: dict[str, Any] = {
            "id": f"msg_{created:012x}{n:04d}",
            "sessionID": session.session_id,
            "role": role,
            "time": {"created": created},
        }
        if role == "assistant":
            info.update({"modelID": "big-pickle", "providerID": "opencode", "mode": "build"})
        message = {"info": info, "parts": []}
        messages.append(message)
        return message

    def part(message: dict[str, Any], **fields: Any) -> None:
        message["parts"].append(
            {
                "id": f"prt_{len(message['parts']):04d}{message['info']['id'][4:]}",
                "sessionID": session.session_id,
                "messageID": message["info"]["id"],
                **fields,
            }
        )

    current: dict[str, Any] | None = None
    for event in session.events:
        if event.kind == "STOP":
            stops.append(json.loads(json.dumps(messages)))
            current = None
        elif event.kind == "U":
            message = new("user")
            part(message, type="text", text=event.text)
            current = None
        else:
            if current is None:
                current = new("assistant")
                part(current, type="step-start")
            if event.kind == "A":
                part(current, type="text", text=event.text)
            elif event.kind == "X":
                part(
                    current,
                    type="tool",
                    tool="ihmt-memory_save_memory",
                    state={
                        "status": "completed",
                        "input": {"content": event.text},
                        "output": "Saved 1 memory (general).",
                    },
                )
            else:
                part(
                    current,
                    type="tool",
                    tool=event.tool,
                    state={
                        "status": "completed",
                        "input": {"command": event.tool_input},
                        "output": event.output,
                    },
                )
    return stops


def snapshots(session: Session) -> list[str]:
    """The transcript's text as it stood at each stop (a JSONL file grows; opencode's
    message list is handed over whole)."""
    if session.agent == "opencode":
        return [
            json.dumps(messages, ensure_ascii=False, indent=1) + "\n"
            for messages in _opencode_messages(session)
        ]
    parts = _claude_lines(session) if session.agent == "claude-code" else _codex_lines(session)
    stops = sum(1 for e in session.events if e.kind == "STOP")
    out, cumulated = [], ""
    for n in range(stops):
        cumulated += "".join(line + "\n" for line in parts[n])
        out.append(cumulated)
    return out


def suffix(session: Session) -> str:
    return ".json" if session.agent == "opencode" else ".jsonl"


def write_transcripts(sessions: list[Session], folder: Path) -> None:
    """Write each session's whole transcript to ``folder`` (the files kept in the
    repository, for reading and for other tools)."""
    folder.mkdir(parents=True, exist_ok=True)
    for session in sessions:
        path = folder / f"{session.id}.{session.agent}{suffix(session)}"
        path.write_text(snapshots(session)[-1], "utf-8")
