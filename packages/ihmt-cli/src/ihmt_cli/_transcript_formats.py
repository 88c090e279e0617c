"""What the user typed in a Gemini CLI or GitHub Copilot CLI session, read from the
session file the agent gives its stop hook (``transcript_path``).

- **Gemini CLI** (0.61) keeps ``~/.gemini/tmp/<project>/chats/session-*.jsonl``: a metadata
  line, then one record per message (``{"id", "timestamp", "type": "user" | "gemini" |
  "info" …, "content", "displayContent"}``), ``{"$set": …}`` records that update the
  metadata, and ``{"$rewindTo": id}``. A message may be written again under the same id,
  ``{"$set": {"messages": […]}}`` replaces the whole list (after a compression: old turns
  again, with the summary and the tools' answers as ``user`` messages), and resuming an
  older ``.json`` chat (one JSON document, rewritten whole on every message) copies every
  message into a new ``.jsonl``. What the user typed is a top-level ``user`` record: its
  ``displayContent`` when there is one (``content`` then also holds the files an ``@path``
  pulled in and the hooks' ``<hook_context>``), else its text parts; never our own nudge
  (``IHMT_CAPTURE=nudge``: the ``AfterAgent`` hook's reason, sent as the next prompt
  and recorded with the first prompt's ``displayContent``).
- **Copilot CLI** (1.0) keeps ``~/.copilot/session-state/<session>/events.jsonl``, an event
  log: a ``user.message`` event from the main agent (no ``agentId``) whose ``data.source``
  is absent or ``user`` and that is no autopilot continuation holds what the user typed in
  ``data.content`` (``data.transformedContent`` is what the model got), unless it is our
  own nudge (``IHMT_CAPTURE=nudge``: the ``Stop`` hook's reason, logged the same way).

Both files mostly grow, but not only: a rewind truncates Copilot's log, and Gemini CLI
writes old messages again. So besides the byte offset (where to read on), each session
keeps the ids of the user messages already read, and a message is read once whatever the
file does: :func:`read_keyed` updates that state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from ihmt_cli._hook_stop import NUDGE_LEAD
from ihmt_cli._transcript import MAX_READ_BYTES, Turn, _typed
from ihmt_cli._types import Agent

__all__ = ["KEYED_AGENTS", "copilot_turn", "gemini_turn", "read_keyed"]

SEEN_KEEP = 2000
"""The ids of this many of a session's latest user messages are kept (older ones are too
far back for a rewrite to bring them again; the memory's own check still holds them)."""
GEMINI_HARNESS = ("<state_snapshot>",)
"""Text Gemini CLI puts in a ``user`` message that its user did not type."""
GEMINI_ADDED = re.compile(r"<(hook_context|session_context)>.*?</\1>\s*", re.DOTALL)
"""A block Gemini CLI adds to the text the user typed: the hooks' context (a
``SessionStart`` hook's goes before the first prompt, in the same part) and the
session's."""
GEMINI_FILES = "--- Content from referenced files ---"
"""Where Gemini CLI appends the files an ``@path`` pulled in."""

Reader = Callable[[Mapping[str, Any]], tuple[str, str] | None]
"""A record → ``(message id, text typed)``, or None when it is no typed user message."""


def _parts_text(parts: Any) -> str:
    if isinstance(parts, str):
        parts = [{"text": parts}]
    if not isinstance(parts, list):
        return ""
    texts = []
    for part in parts:
        text = part.get("text") if isinstance(part, dict) else None
        if not isinstance(text, str):
            continue  # a function call's answer, an image, a file's bytes
        if text.strip().startswith(GEMINI_FILES):
            break
        text = GEMINI_ADDED.sub("", text)
        if _gemini_typed(text):
            texts.append(text)
    return "".join(texts).strip()


def _gemini_typed(text: str) -> bool:
    return _typed(text) and not text.lstrip().startswith(GEMINI_HARNESS)


def gemini_turn(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(id, text)`` of a Gemini CLI message record the user typed, else None."""
    ident = record.get("id")
    if record.get("type") != "user" or not isinstance(ident, str):
        return None
    content = record.get("content")
    parts = content if isinstance(content, list) else [{"text": content}]
    if any(isinstance(p, dict) and str(p.get("text", "")).startswith(NUDGE_LEAD) for p in parts):
        return None  # our nudge, sent as a prompt with the first prompt's displayContent
    shown = record.get("displayContent")
    text = _parts_text(shown if shown is not None else content)
    typed = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    if shown is not None and text not in typed:
        return None  # a hook's continuation, shown as the prompt before it
    return (ident, text) if text else None


def copilot_turn(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(id, text)`` of a Copilot CLI ``user.message`` event the user typed, else None."""
    if record.get("type") != "user.message" or record.get("agentId"):
        return None
    data = record.get("data")
    if not isinstance(data, dict) or data.get("source") not in (None, "user"):
        return None
    if data.get("isAutopilotContinuation"):
        return None
    text, ident = data.get("content"), data.get("messageId") or record.get("id")
    if not isinstance(text, str) or not isinstance(ident, str) or not _typed(text):
        return None
    if text.startswith(NUDGE_LEAD):
        return None  # the stop hook's own nudge, which Copilot CLI sends as the next turn
    return ident, text.strip()


READERS: dict[str, Reader] = {"gemini-cli": gemini_turn, "copilot": copilot_turn}
KEYED_AGENTS: tuple[Agent, ...] = ("gemini-cli", "copilot")
"""The agents whose transcript :func:`read_keyed` reads."""


def _records(path: Path, offset: int) -> tuple[Iterable[Any], int]:
    """The records of ``path`` from byte ``offset`` (from the start when the file is
    shorter: it was rewritten) and the offset after the last whole line read; a ``.json``
    chat is one document, read whole (offset 0)."""
    with path.open("rb") as stream:
        if path.suffix == ".json":
            try:
                document = json.loads(stream.read(MAX_READ_BYTES * 4))
            except ValueError:
                return [], 0
            messages = document.get("messages") if isinstance(document, dict) else None
            return (messages if isinstance(messages, list) else []), 0
        stream.seek(0, 2)
        if offset > stream.tell():
            offset = 0
        stream.seek(offset)
        chunk = stream.read(MAX_READ_BYTES)
    end = chunk.rfind(b"\n")
    if end < 0:  # one line longer than a read: step over it, as read_new does
        return [], offset + (len(chunk) if len(chunk) == MAX_READ_BYTES else 0)
    records = []
    for line in chunk[: end + 1].splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records, offset + end + 1


def read_keyed(agent: str, path: Path, state: MutableMapping[str, Any]) -> list[Turn]:
    """The user's turns in ``agent``'s transcript ``path`` that ``state`` (the session's,
    updated here) has not seen: read on from the byte offset when the file is the same,
    and never a message whose id was read before.

    Raises:
        OSError: the file cannot be read.
    """
    reader = READERS[agent]
    same = state.get("kind") == "keyed" and state.get("path") == str(path)
    seen_list = state.get("seen") if state.get("kind") == "keyed" else None
    seen = [s for s in seen_list if isinstance(s, str)] if isinstance(seen_list, list) else []
    known = set(seen)
    records, offset = _records(path, int(state.get("offset") or 0) if same else 0)
    turns = []
    for record in records:
        found = reader(record) if isinstance(record, dict) else None
        if found is None or found[0] in known:
            continue
        ident, text = found
        known.add(ident)
        seen.append(ident)
        stamp = record.get("timestamp")
        turns.append(Turn(text=text, timestamp=stamp if isinstance(stamp, str) else ""))
    state.update(kind="keyed", path=str(path), offset=offset, seen=seen[-SEEN_KEEP:])
    return turns
