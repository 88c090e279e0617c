"""Which sentences a user typed are durable (``_capture``), and reading the user's turns
from the agents' transcripts (``_transcript``). The transcripts are in the shapes the
pinned agents wrote here (Claude Code 2.1.332, Codex 0.171.0, opencode 1.18.33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ihmt_cli._capture import durable_statements, is_change
from ihmt_cli._transcript import read_new, user_turns_of_messages

DURABLE = [
    ("Remember that Olumide is the on-call lead this quarter.", "remember"),
    ("From now on use pnpm, never npm.", "rule"),
    ("We moved the nightly build to the ci-02 runner last month.", "change"),
    ("We decided to keep Riverpod because the team already knows it.", "decision"),
    ("I prefer table-driven tests in Go.", "preference"),
    ("Our staging cluster runs on k3s 1.30 on two NUCs.", "fact"),
    ("Ana Ruiz owns the billing service.", "fact"),
    ("a partir de ahora escribe los commits en español", "rule"),
    ("ya no usamos Jenkins, el CI está en Buildkite", "change"),
]
NOT_DURABLE = [
    "can you fix the failing test?",
    "which port does the API listen on?",
    "thanks, looks good!",
    "run the linter and push it",
    "the build is failing again",
    "maybe the cache is stale",
    "here's the log",
    "the staging password is hunter2, use it for the test",
    "ok",
    "¿puedes revisar el cron?",
    "I like this approach a lot",
    "I want the tests to pass before lunch",
    "We should use Redis 7 for the cache here",
    "I'm going to refactor the parser in parser.py",
    "Let me know when it's done",
]


@pytest.mark.parametrize(("text", "kind"), DURABLE)
def test_a_durable_statement_is_kept_with_its_cue(text: str, kind: str) -> None:
    found = durable_statements(text)
    assert [s.kind for s in found] == [kind]


@pytest.mark.parametrize("text", NOT_DURABLE)
def test_requests_questions_chatter_the_moment_and_credentials_are_not(text: str) -> None:
    assert durable_statements(text) == []


def test_code_blocks_and_log_lines_are_never_taken() -> None:
    text = (
        "The ETL broke, log:\n```\nTraceback (most recent call last):\n"
        "  File \"run.py\", line 8\nKeyError: 'region'\n```\n"
        "Our ETL runs on Airflow 2.9, scheduled at 01:00 JST."
    )
    assert [s.text for s in durable_statements(text)] == [
        "Our ETL runs on Airflow 2.9, scheduled at 01:00 JST."
    ]


def test_a_sentence_is_cleaned_of_interjections_and_the_remember_cue() -> None:
    found = durable_statements("thanks. remember that the designer is Adaeze Obi")
    assert [s.text for s in found] == ["The designer is Adaeze Obi"]


def test_a_sentence_typed_in_lower_case_is_cut_from_the_chatter_before_it() -> None:
    found = durable_statements("thanks, that works. remember that the nightly job runs at 02:30")
    assert [s.text for s in found] == ["The nightly job runs at 02:30"]
    found = durable_statements("we use pnpm here, e.g. for the workspace. ok thanks")
    assert [s.text for s in found] == ["We use pnpm here, e.g. for the workspace."]


def test_a_title_before_a_name_does_not_cut_the_sentence() -> None:
    found = durable_statements("My advisor is Prof. Ingrid Halvorsen; she wants PDF plots.")
    assert len(found) == 1 and "Ingrid Halvorsen" in found[0].text


def test_a_change_is_told_apart_from_a_plain_fact() -> None:
    change, fact = durable_statements(
        "We switched from nrfjprog to west flash. The board is an nRF52840."
    )
    assert is_change(change) and not is_change(fact)


# ---------------------------------------------------------------------- transcripts
def _claude_line(**fields: object) -> str:
    base = {"parentUuid": None, "isSidechain": False, "sessionId": "s1", "cwd": "/w"}
    return json.dumps({**base, **fields}) + "\n"


def test_claude_code_turns_skip_meta_tool_results_commands_and_the_assistant(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        _claude_line(
            type="user",
            isMeta=True,
            message={
                "role": "user",
                "content": "<local-command-caveat>Caveat</local-command-caveat>",
            },
        ),
        _claude_line(type="user", message={"role": "user", "content": "first typed"}),
        _claude_line(
            type="assistant",
            message={"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
        ),
        _claude_line(
            type="user",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "output"}],
            },
        ),
        _claude_line(
            type="user",
            message={"role": "user", "content": "<command-name>/clear</command-name>"},
        ),
        _claude_line(
            type="user",
            message={"role": "user", "content": [{"type": "text", "text": "second typed"}]},
        ),
        _claude_line(
            type="user",
            isSidechain=True,
            message={"role": "user", "content": "a subagent's task"},
        ),
    ]
    path.write_text("".join(lines))
    turns, offset = read_new(path, 0)
    assert [t.text for t in turns] == ["first typed", "second typed"]
    assert offset == path.stat().st_size


def test_a_transcript_is_read_from_its_offset_and_a_half_written_line_waits(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_claude_line(type="user", message={"role": "user", "content": "one"}))
    turns, offset = read_new(path, 0)
    assert [t.text for t in turns] == ["one"]
    half = _claude_line(type="user", message={"role": "user", "content": "two"})
    with path.open("a") as out:
        out.write(half[:20])
    assert read_new(path, offset) == ([], offset)
    with path.open("a") as out:
        out.write(half[20:])
    turns, end = read_new(path, offset)
    assert [t.text for t in turns] == ["two"] and end == path.stat().st_size


def test_a_replaced_file_shorter_than_the_offset_is_read_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_claude_line(type="user", message={"role": "user", "content": "new"}))
    turns, _ = read_new(path, 10_000)
    assert [t.text for t in turns] == ["new"]


def test_codex_turns_are_the_user_text_items_only(tmp_path: Path) -> None:
    def item(role: str, kind: str, text: str) -> str:
        payload = {
            "type": "message",
            "role": role,
            "content": [{"type": "input_text", "text": text}],
            "internal_chat_message_metadata_passthrough": {"content_item_kinds": [kind]},
        }
        return json.dumps({"type": "response_item", "payload": payload}) + "\n"

    path = tmp_path / "rollout.jsonl"
    path.write_text(
        json.dumps({"type": "session_meta", "payload": {"id": "x", "cwd": "/w"}})
        + "\n"
        + item("developer", "permissions", "<permissions instructions/>")
        + item("user", "environments.environment_context", "<environment_context/>")
        + item("user", "user.text", "Our CI runs on Buildkite now.")
        + json.dumps({"type": "event_msg", "payload": {"type": "user_message", "message": "x"}})
        + "\n"
        + json.dumps(
            {
                "type": "response_item",
                "payload": {"type": "function_call_output", "call_id": "c", "output": "ok"},
            }
        )
        + "\n"
    )
    turns, _ = read_new(path, 0)
    assert [t.text for t in turns] == ["Our CI runs on Buildkite now."]


def test_opencode_turns_skip_synthetic_parts_and_the_assistant() -> None:
    messages = [
        {
            "info": {"id": "msg_1", "role": "user", "time": {"created": 1796204829860}},
            "parts": [
                {"type": "text", "text": "Ana owns billing."},
                {"type": "text", "text": "Recalled from long-term memory", "synthetic": True},
            ],
        },
        {
            "info": {"id": "msg_2", "role": "assistant", "time": {"created": 1796204830000}},
            "parts": [{"type": "text", "text": "Noted."}],
        },
    ]
    turns = user_turns_of_messages(messages)
    assert [t.text for t in turns] == ["Ana owns billing."]
    assert turns[0].timestamp.startswith("2026-")
