"""What the user typed in an agent session, read from the agent's own transcript.

Three formats, told apart by their content:

- **Claude Code** keeps a JSONL file per session: a ``user`` line whose ``message.content``
  is a string or a list of ``text`` blocks is what the user typed, unless it is ``isMeta``
  (a caveat, a hook's context), a slash command's echo (``<command-name>`` …), or a tool's
  output (``tool_result`` blocks).
- **Codex** keeps a rollout JSONL file: a ``response_item`` message of role ``user`` whose
  item kind is ``user.text`` (older rollouts have no kinds: then any text that is not a
  harness block such as ``<environment_context>``).
- **opencode**'s plugin hands over the session's messages as its server returns them (a
  JSON array of ``{"info", "parts"}``): the ``text`` parts of ``user`` messages that are
  not ``synthetic`` (what a plugin, ours included, added).

JSONL transcripts only grow: :func:`read_new` reads from a byte offset to the last whole
line and returns the offset to start from next time, so nothing is read twice. opencode's
list is handed over whole each time: the offset is the number of messages already read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MAX_READ_BYTES", "Turn", "read_new", "user_turns_of_messages"]

MAX_READ_BYTES = 4 * 1024 * 1024
"""At most this much of a transcript is read in one run (a resumed session of months);
the rest waits for the next stop."""
HARNESS_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions",
    "<turn_aborted>",
    "<user_shell_command>",
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<system-reminder>",
    "<hook_context>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "# AGENTS.md instructions",
    "Caveat: The messages below",
    "[Request interrupted by user",
    "This session is being continued from a previous conversation",
)
"""Text an agent puts in a ``user`` message that its user did not type."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One message the user typed."""

    text: str
    timestamp: str = ""
    """When it was typed (ISO 8601), when the transcript says."""


def _typed(text: str) -> bool:
    stripped = text.lstrip()
    return bool(stripped) and not stripped.startswith(HARNESS_PREFIXES)


def _claude_turn(record: Mapping[str, Any]) -> str | None:
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return None
    if record.get("isSidechain"):
        return None  # a subagent's conversation: its "user" is the main agent
    message = record.get("message")
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content if _typed(content) else None
    if not isinstance(content, list):
        return None
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return None
    texts = [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    text = "\n".join(t for t in texts if _typed(t))
    return text or None


def _codex_turn(record: Mapping[str, Any]) -> str | None:
    if record.get("type") != "response_item":
        return None
    payload = record.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return None
    if payload.get("role") != "user":
        return None
    meta = payload.get("internal_chat_message_metadata_passthrough")
    kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
    content = payload.get("content")
    if not isinstance(content, list):
        return None
    texts = []
    for n, item in enumerate(content):
        if not isinstance(item, dict) or item.get("type") != "input_text":
            continue
        text = item.get("text")
        if not isinstance(text, str):
            continue
        if isinstance(kinds, list) and n < len(kinds) and kinds[n] != "user.text":
            continue
        if _typed(text):
            texts.append(text)
    return "\n".join(texts) or None


def _turns_of_lines(lines: Iterable[bytes]) -> list[Turn]:
    turns: list[Turn] = []
    for raw in lines:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        text = _claude_turn(record) if "message" in record else _codex_turn(record)
        if text:
            stamp = record.get("timestamp")
            turns.append(Turn(text=text, timestamp=stamp if isinstance(stamp, str) else ""))
    return turns


def user_turns_of_messages(messages: Sequence[Any]) -> list[Turn]:
    """The user's turns among opencode messages (``[{"info", "parts"}]``)."""
    turns: list[Turn] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        info = message.get("info")
        parts = message.get("parts")
        if not isinstance(info, dict) or info.get("role") != "user" or not isinstance(parts, list):
            continue
        texts = [
            p["text"]
            for p in parts
            if isinstance(p, dict)
            and p.get("type") == "text"
            and not p.get("synthetic")
            and not p.get("ignored")
            and isinstance(p.get("text"), str)
            and _typed(p["text"])
        ]
        if texts:
            created = (info.get("time") or {}).get("created")
            stamp = ""
            if isinstance(created, int | float):
                import datetime as dt

                moment = dt.datetime.fromtimestamp(created / 1000, tz=dt.UTC)
                stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
            turns.append(Turn(text="\n".join(texts), timestamp=stamp))
    return turns


def read_new(path: Path, offset: int) -> tuple[list[Turn], int]:
    """The user's turns written to the JSONL transcript ``path`` since byte ``offset``,
    and the offset after the last whole line read.

    A file shorter than ``offset`` was replaced (a new session in its place): it is read
    from the start.

    Raises:
        OSError: the file cannot be read.
    """
    with path.open("rb") as stream:
        stream.seek(0, 2)
        size = stream.tell()
        if offset > size:
            offset = 0
        stream.seek(offset)
        chunk = stream.read(MAX_READ_BYTES)
    end = chunk.rfind(b"\n")
    if end < 0:
        # One line longer than a read (a pasted image): step over what was read; the
        # rest of that line is not JSON and is skipped next time.
        return [], offset + (len(chunk) if len(chunk) == MAX_READ_BYTES else 0)
    whole = chunk[: end + 1]
    return _turns_of_lines(whole.splitlines()), offset + len(whole)
