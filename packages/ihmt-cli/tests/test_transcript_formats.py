"""Reading the user's turns from session files the real Gemini CLI 0.61.0 and GitHub
Copilot CLI 1.0.102 wrote.

- ``fixtures/gemini-cli-0.61.0-chat.jsonl``: four ``gemini -m … -p`` runs in one session
  (the later three through ``--resume latest``) against a stub model on a loopback port,
  with a ``SessionStart`` hook's context (Gemini CLI puts it before the prompt, in the
  same text part) and a ``BeforeAgent`` hook's (a part of its own): a statement, ``list
  the files here`` (the stub answered with a ``list_directory`` call, so a tool's answer
  is recorded as a ``user`` message), a rule naming ``@notes.txt`` (the file's content is
  pulled into the message), and ``/compress``. Gemini CLI wrote ``{"$set": {"messages":
  […]}}`` on each resume, holding the earlier turns again, and one message twice under
  one id.
- ``fixtures/copilot-1.0.102-events.jsonl``: three ``copilot -p`` runs in one session (the
  later two through ``--resume``), its bring-your-own-model mode pointed at a stub.

Both shrunk: strings cut to their first 240 characters, paths made neutral, and in
Copilot's log only the hooks ihmt registers kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ihmt_cli._hook_stop import nudge_reason
from ihmt_cli._transcript_formats import SEEN_KEEP, copilot_turn, gemini_turn, read_keyed
from ihmt_mcp import Memory

FIXTURES = Path(__file__).parent / "fixtures"
GEMINI = FIXTURES / "gemini-cli-0.61.0-chat.jsonl"
COPILOT = FIXTURES / "copilot-1.0.102-events.jsonl"
STATEMENT = (
    "Remember that the sprinkler controller runs on the Raspberry Pi in the shed, on port 9123."
)
RULE = "From now on we water the greenhouse at 06:00, never at noon."
GEMINI_TYPED = [STATEMENT, "list the files here", f"{RULE} Details in @notes.txt", "/compress"]
COPILOT_TYPED = [STATEMENT, "what does the shed hold?", RULE]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _append(path: Path, *records: dict[str, Any]) -> None:
    with path.open("a") as out:
        out.writelines(json.dumps(r) + "\n" for r in records)


# ---------------------------------------------------------------------- Gemini CLI
def test_gemini_gives_what_the_user_typed_once_each() -> None:
    state: dict[str, Any] = {}

    turns = read_keyed("gemini-cli", GEMINI, state)

    assert [t.text for t in turns] == GEMINI_TYPED  # no context, tool answer or file content
    assert turns[0].timestamp == "2026-12-07T18:43:21.389Z"
    assert state["offset"] == GEMINI.stat().st_size and len(state["seen"]) == 4
    assert read_keyed("gemini-cli", GEMINI, state) == []


def test_gemini_reads_on_from_where_the_last_stop_ended(tmp_path: Path) -> None:
    chat = _write(tmp_path / "session.jsonl", _lines(GEMINI))
    state: dict[str, Any] = {}
    read_keyed("gemini-cli", chat, state)
    turn = {"id": "u-5", "timestamp": "2026-12-07T19:00:00Z", "type": "user"}

    _append(chat, {**turn, "content": [{"text": "We moved the controller to port 9200."}]})

    assert [t.text for t in read_keyed("gemini-cli", chat, state)] == [
        "We moved the controller to port 9200."
    ]


def test_gemini_writing_old_messages_again_never_reads_them_twice(tmp_path: Path) -> None:
    records = _lines(GEMINI)
    messages = [r for r in records if "id" in r and "type" in r]
    state: dict[str, Any] = {}
    read_keyed("gemini-cli", GEMINI, state)
    # What Gemini CLI does when it resumes an older .json chat, or when it cannot read
    # the file back: a metadata line and every message again, in a new or shorter file.
    rewritten = _write(tmp_path / "session.jsonl", [records[0], *messages[:3]])

    assert read_keyed("gemini-cli", rewritten, state) == []
    assert state["path"] == str(rewritten)
    shorter = _write(tmp_path / "copy.jsonl", [records[0], messages[0]])
    state.update(path=str(shorter), offset=10_000_000)  # further than the file goes now
    assert read_keyed("gemini-cli", shorter, state) == []


def test_gemini_json_chat_rewritten_whole_gives_only_its_new_messages(tmp_path: Path) -> None:
    """Gemini CLI before the JSONL files kept one document per chat, rewritten on every
    message; its loader still reads it (``sessionId``, ``projectHash``, ``messages``)."""
    records = _lines(GEMINI)
    messages = [r for r in records if "id" in r and "type" in r]
    chat = tmp_path / "session-2026-12-07T18-30-bf762fd4.json"
    chat.write_text(json.dumps({**records[0], "messages": messages[:2]}, indent=2))
    state: dict[str, Any] = {}

    assert [t.text for t in read_keyed("gemini-cli", chat, state)] == [STATEMENT]

    chat.write_text(json.dumps({**records[0], "messages": messages}, indent=2))
    texts = [t.text for t in read_keyed("gemini-cli", chat, state)]
    assert texts == GEMINI_TYPED[1:]


def test_gemini_turn_without_display_content_stops_at_the_files_pulled_in() -> None:
    records = [r for r in _lines(GEMINI) if r.get("type") == "user" and "id" in r]
    pulled = next(r for r in records if "referenced files" in json.dumps(r.get("content")))
    answer = next(r for r in records if "functionResponse" in json.dumps(r.get("content")))

    bare = {k: v for k, v in pulled.items() if k != "displayContent"}

    assert gemini_turn(bare) == (pulled["id"], f"{RULE} Details in @notes.txt")
    assert gemini_turn(answer) is None  # a tool's answer, recorded as a user message
    # The stop hook's nudge, sent as the next prompt: Gemini CLI records it with the
    # displayContent of the prompt before it.
    nudged = {**pulled, "content": [{"text": nudge_reason([RULE])}]}
    assert gemini_turn(nudged) is None
    # Another hook's continuation, recorded the same way, is no prompt of the user's either.
    other = {**pulled, "content": [{"text": "Run the linter before you stop."}]}
    assert gemini_turn(other) is None


# ---------------------------------------------------------------------- Copilot CLI
def test_copilot_gives_what_the_user_typed_once_each() -> None:
    state: dict[str, Any] = {}

    turns = read_keyed("copilot", COPILOT, state)

    assert [t.text for t in turns] == COPILOT_TYPED
    assert turns[0].timestamp.startswith("2026-12-07T18:31:")
    assert read_keyed("copilot", COPILOT, state) == []


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"agentId": "task-1"}, "a sub-agent's prompt"),
        ({"data": {"source": "skill-pdf"}}, "a skill's hidden injection"),
        ({"data": {"source": "agent-7"}}, "an inter-agent prompt"),
        ({"data": {"isAutopilotContinuation": True}}, "autopilot's continuation"),
        ({"data": {"content": nudge_reason([RULE])}}, "the stop hook's nudge, sent back"),
    ],
)
def test_copilot_skips_what_the_user_did_not_type(change: dict[str, Any], why: str) -> None:
    record = next(r for r in _lines(COPILOT) if r["type"] == "user.message")
    assert copilot_turn(record) is not None
    changed = {**record, **change}
    if "data" in change:
        changed["data"] = {**record["data"], **change["data"]}

    assert copilot_turn(changed) is None, why


def test_copilot_log_cut_back_by_a_rewind_never_gives_old_turns_again(tmp_path: Path) -> None:
    records = _lines(COPILOT)
    log = _write(tmp_path / "events.jsonl", records)
    state: dict[str, Any] = {}
    read_keyed("copilot", log, state)
    second = [n for n, r in enumerate(records) if r["type"] == "user.message"][1]
    _write(log, records[:second])  # rewound to before the second turn
    fresh = {**records[second], "id": "e-new"}
    fresh["data"] = {**records[second]["data"], "messageId": "m-new", "content": "We use zone 4."}

    _append(log, fresh)

    assert [t.text for t in read_keyed("copilot", log, state)] == ["We use zone 4."]


def test_the_ids_kept_per_session_are_bounded(tmp_path: Path) -> None:
    chat = tmp_path / "s.jsonl"
    many = [
        {"id": f"u{n}", "type": "user", "content": [{"text": f"turn {n}"}]}
        for n in range(SEEN_KEEP + 5)
    ]
    state: dict[str, Any] = {}

    assert len(read_keyed("gemini-cli", _write(chat, many), state)) == SEEN_KEEP + 5
    assert len(state["seen"]) == SEEN_KEEP and state["seen"][-1] == f"u{SEEN_KEEP + 4}"


# ---------------------------------------------------------------------- through ihmt hook stop
@pytest.mark.parametrize(
    ("agent", "fixture", "payload"),
    [
        ("gemini-cli", GEMINI, {"hook_event_name": "AfterAgent", "stop_hook_active": False}),
        ("copilot", COPILOT, {"hook_event_name": "Stop", "stop_hook_active": False}),
    ],
)
def test_the_stop_hook_saves_the_statements_once(
    tmp_path: Path, agent: str, fixture: Path, payload: dict[str, Any]
) -> None:
    home, project = tmp_path / "ihmt-home", tmp_path / "garden"
    (project / ".git").mkdir(parents=True)
    Memory.init(home / "ihmt_memory", semantic="off").close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IHMT_")}
    env.update(IHMT_HOOK_SERVER="off", IHMT_SEMANTIC="off")
    stdin = json.dumps(
        {
            **payload,
            "session_id": "bf762fd4-b535-411f-a9c0-b51a7638aaba",
            "transcript_path": str(fixture),
            "cwd": str(project),
        }
    )

    def stop() -> subprocess.CompletedProcess[str]:
        ihmt = str(Path(sys.executable).parent / "ihmt")
        argv = [ihmt, "hook", "stop", "--agent", agent, "--home", str(home)]
        return subprocess.run(
            argv, input=stdin, capture_output=True, text=True, env=env, cwd=project, timeout=120
        )

    first, second = stop(), stop()

    assert first.returncode == second.returncode == 0 and first.stdout == second.stdout == ""
    memory = Memory.init(home / "ihmt_memory", semantic="off")
    try:
        saved = list(memory.export())
    finally:
        memory.close()
    assert sorted(m.text for m in saved) == [
        RULE,
        "The sprinkler controller runs on the Raspberry Pi in the shed, on port 9123.",
    ]
    assert {m.source for m in saved} == {"session"}
    log = [json.loads(line) for line in (home / "hooks" / "hooks.log").read_text().splitlines()]
    assert [(r["agent"], r["turns"], r.get("saved")) for r in log] == [
        (agent, len(GEMINI_TYPED if agent == "gemini-cli" else COPILOT_TYPED), 2),
        (agent, 0, None),
    ]
