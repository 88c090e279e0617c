"""``ihmt hook``: the recall the agents' lifecycle hooks add, run as the agents run it.

Each test builds a real memory under tmp_path and runs the real ``ihmt hook`` process
with the JSON an agent sends on stdin. The payloads are the ones the pinned agents sent
in captured runs (Claude Code 2.1.332) or that their own schemas require (Codex 0.171.0:
``session-start.command.input`` / ``user-prompt-submit.command.input``); the real
clients running the hook are in tests-integration/test_agents_*.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ihmt_mcp import Memory

IHMT = str(Path(sys.executable).parent / "ihmt")
PROJECT = "lynx"


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str

    def context(self) -> str:
        """The additionalContext of a Claude Code / Codex answer ('' when none)."""
        if not self.out:
            return ""
        data = json.loads(self.out)
        return str(data["hookSpecificOutput"]["additionalContext"])


@dataclass(frozen=True)
class World:
    home: Path
    project: Path
    hook: Callable[..., Ran]

    def log(self) -> list[dict[str, Any]]:
        path = self.home / "hooks" / "hooks.log"
        return [json.loads(line) for line in path.read_text().splitlines()]


def claude_prompt(world: World, prompt: str, session: str = "3b6d99cc") -> dict[str, Any]:
    """What Claude Code 2.1.332 sent to a UserPromptSubmit hook in a captured run."""
    return {
        "session_id": session,
        "transcript_path": f"{world.home}/.claude/projects/x/{session}.jsonl",
        "cwd": str(world.project),
        "prompt_id": "1bf35859-2988-478a-86f1-db71f073ac3b",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def claude_start(
    world: World, session: str = "3b6d99cc", source: str = "startup"
) -> dict[str, Any]:
    """What Claude Code 2.1.332 sent to a SessionStart hook in a captured run."""
    return {
        "session_id": session,
        "transcript_path": f"{world.home}/.claude/projects/x/{session}.jsonl",
        "cwd": str(world.project),
        "hook_event_name": "SessionStart",
        "source": source,
    }


def codex_prompt(world: World, prompt: str) -> dict[str, Any]:
    """Every field Codex 0.171.0's user-prompt-submit.command.input schema requires."""
    return {
        "session_id": "01a2327e-f9aa-7843-a320-263de4f7c66d",
        "turn_id": "01a2327e-f9c2-7221-b251-8d9799b043a3",
        "transcript_path": None,
        "cwd": str(world.project),
        "hook_event_name": "UserPromptSubmit",
        "model": "gpt-6.2-sol",
        "permission_mode": "default",
        "prompt": prompt,
    }


@pytest.fixture
def world(tmp_path: Path) -> World:
    home = tmp_path / "ihmt-home"
    project = tmp_path / "work" / PROJECT
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IHMT_")}
    env["IHMT_HOOK_SERVER"] = "off"  # each hook alone: test_hook_server.py covers the server

    def hook(event: str, payload: dict[str, Any] | str, *args: str, cwd: Path | None = None) -> Ran:
        raw = payload if isinstance(payload, str) else json.dumps(payload)
        done = subprocess.run(
            [IHMT, "hook", event, "--home", str(home), *args],
            input=raw,
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd or project,
            timeout=120,
            check=False,
        )
        return Ran(done.returncode, done.stdout, done.stderr)

    return World(home=home, project=project, hook=hook)


def remember(world: World, *items: tuple[str, str]) -> list[str]:
    """Save ``(text, replaces)`` pairs in the world's project; their ids."""
    memory = Memory.init(world.home / "ihmt_memory")
    try:
        return [
            memory.save(text, project=PROJECT, replaces=replaces, date="2026-03-0" + str(n)).ids[0]
            for n, (text, replaces) in enumerate(items, 1)
        ]
    finally:
        memory.close()


DEPLOY = "We deploy lynx to the staging host vega-3 with make ship, never on Fridays."


# ---------------------------------------------------------------------- on a prompt
def test_a_confident_answer_becomes_additional_context(world: World) -> None:
    (deploy,) = remember(world, (DEPLOY, ""))

    ran = world.hook("prompt", claude_prompt(world, "which host do we deploy lynx to?"))

    assert ran.code == 0 and ran.err == ""
    data = json.loads(ran.out)
    assert data["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = ran.context()
    assert context.startswith("Recalled from long-term memory (IHMT)")
    assert "may be irrelevant" in context
    assert "FOUND · confidence" in context and "vega-3" in context and deploy in context
    assert len(context) <= 300 * 4


def test_a_plain_coding_prompt_adds_nothing(world: World) -> None:
    remember(world, (DEPLOY, ""), ("Our stack is Go and PostgreSQL.", ""))

    for prompt in ("run the tests", "rename this variable to count", "fix the lint errors"):
        ran = world.hook("prompt", claude_prompt(world, prompt))
        assert (ran.code, ran.out, ran.err) == (0, "", ""), prompt
    assert [r["outcome"] for r in world.log()][-3:] != ["found"] * 3
    assert all(r["added"] == 0 for r in world.log())


def test_a_question_about_the_tests_gets_the_memory_a_request_does_not(world: World) -> None:
    (tests,) = remember(world, ("Run the lynx tests with make check, never plain pytest.", ""))

    request = world.hook("prompt", claude_prompt(world, "run the tests", session="s-1"))
    question = world.hook("prompt", claude_prompt(world, "how do I run the tests?", session="s-2"))

    assert request.out == ""
    assert world.log()[0]["outcome"] == "a request sharing only everyday coding words"
    assert "make check" in question.context() and tests in question.context()


def test_a_memory_is_never_added_twice_in_a_session(world: World) -> None:
    remember(world, (DEPLOY, ""))
    question = "which host do we deploy lynx to?"

    first = world.hook("prompt", claude_prompt(world, question, session="s-1"))
    again = world.hook("prompt", claude_prompt(world, "deploy host for lynx?", session="s-1"))
    other = world.hook("prompt", claude_prompt(world, question, session="s-2"))

    assert "vega-3" in first.context()
    assert again.out == "" and world.log()[1]["outcome"] == "already added in this session"
    assert "vega-3" in other.context()


def test_a_cleared_conversation_may_recall_it_again(world: World) -> None:
    remember(world, (DEPLOY, ""))
    question = "which host do we deploy lynx to?"
    assert world.hook("prompt", claude_prompt(world, question, session="s-1")).out

    resumed = world.hook("session-start", claude_start(world, session="s-1", source="resume"))
    cleared = world.hook("session-start", claude_start(world, session="s-1", source="clear"))

    assert resumed.out == ""  # still in the context it resumes
    assert "vega-3" in cleared.context()  # /clear emptied the context


def test_an_outdated_correction_is_relayed(world: World) -> None:
    old, new = remember(
        world,
        ("The lynx database is PostgreSQL 15.", ""),
        ("The lynx database is now PostgreSQL 17.", "lynx database is PostgreSQL 15"),
    )

    context = world.hook("prompt", claude_prompt(world, "what database does lynx use?")).context()

    assert "PostgreSQL 17" in context and new in context
    assert "OUTDATED" in context and old in context


def test_an_ambiguous_question_adds_the_candidates(world: World) -> None:
    remember(
        world,
        ("Ana Lindqvist from the payments team reviews the lynx schema changes.", ""),
        ("Ana Brandt from the mobile team owns the lynx release notes.", ""),
    )

    context = world.hook("prompt", claude_prompt(world, "what does Ana do?")).context()

    assert context.startswith("Recalled from long-term memory")
    assert "AMBIGUOUS" in context and "Lindqvist" in context and "Brandt" in context


def test_codex_gets_the_same_json_from_its_own_payload(world: World) -> None:
    remember(world, (DEPLOY, ""))

    ran = world.hook(
        "UserPromptSubmit",
        codex_prompt(world, "which host do we deploy lynx to?"),
        "--agent",
        "codex",
    )

    assert ran.code == 0 and "vega-3" in ran.context()
    assert world.log()[-1]["agent"] == "codex"


def test_opencode_gets_plain_text(world: World) -> None:
    remember(world, (DEPLOY, ""))
    payload = {"session_id": "ses_1", "cwd": str(world.project), "prompt": "lynx deploy host?"}

    ran = world.hook("prompt", payload, "--agent", "opencode")

    assert ran.code == 0
    assert ran.out.startswith("Recalled from long-term memory") and "vega-3" in ran.out


# ---------------------------------------------------------------------- on session start
def test_session_start_gives_a_short_digest_of_the_project(world: World) -> None:
    remember(
        world,
        ("Our stack is Go and PostgreSQL.", ""),
        (DEPLOY, ""),
        ("The lynx database is PostgreSQL 15.", ""),
        ("The lynx database is now PostgreSQL 17.", "lynx database is PostgreSQL 15"),
    )

    ran = world.hook("session-start", claude_start(world))

    assert ran.code == 0
    assert json.loads(ran.out)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    digest = ran.context()
    assert digest.startswith("Long-term memory (IHMT) knows this about project lynx")
    assert 'corrected 2026-03-04: "The lynx database is now PostgreSQL 17' in digest
    assert "stack: Go and PostgreSQL" in digest and "vega-3" in digest
    assert len(digest) <= 200 * 4


def test_session_start_says_nothing_about_an_unknown_project(world: World, tmp_path: Path) -> None:
    remember(world, (DEPLOY, ""))
    elsewhere = tmp_path / "work" / "other"
    (elsewhere / ".git").mkdir(parents=True)

    ran = world.hook("session-start", {"session_id": "s", "cwd": str(elsewhere)}, cwd=elsewhere)

    assert (ran.code, ran.out) == (0, "")


def test_what_the_digest_gave_is_not_repeated_on_a_prompt(world: World) -> None:
    remember(world, (DEPLOY, ""))

    assert "vega-3" in world.hook("session-start", claude_start(world)).context()
    ran = world.hook("prompt", claude_prompt(world, "which host do we deploy lynx to?"))

    assert ran.out == ""


# ---------------------------------------------------------------------- it never breaks the agent
@pytest.mark.parametrize(
    ("stdin", "error"),
    [
        ("not json at all", "stdin is not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"cwd": "/tmp"}', "no session_id"),
        ("", "stdin is not JSON"),
    ],
)
def test_bad_input_exits_0_silently_and_is_logged(world: World, stdin: str, error: str) -> None:
    remember(world, (DEPLOY, ""))

    ran = world.hook("prompt", stdin)

    assert (ran.code, ran.out, ran.err) == (0, "", "")
    assert error in world.log()[-1]["error"]


def test_without_a_store_it_adds_nothing_and_creates_nothing(world: World) -> None:
    ran = world.hook("prompt", claude_prompt(world, "which host do we deploy lynx to?"))

    assert (ran.code, ran.out, ran.err) == (0, "", "")
    assert not (world.home / "ihmt_memory").exists()
    assert world.log()[-1]["outcome"] == "no store yet"


def test_a_damaged_store_exits_0_and_doctor_shows_the_error(world: World) -> None:
    remember(world, (DEPLOY, ""))
    config = world.home / "ihmt_memory" / "ihmt.config.json"
    config.write_text("{ not json", encoding="utf-8")

    ran = world.hook("prompt", claude_prompt(world, "which host do we deploy lynx to?"))

    assert (ran.code, ran.out, ran.err) == (0, "", "")
    record = world.log()[-1]
    assert record["error"] and record["agent"] == "claude-code"
    assert "vega-3" not in json.dumps(record)  # the log never holds a memory's text


def test_the_log_never_holds_the_prompt_or_a_memory(world: World) -> None:
    remember(world, (DEPLOY, ""))

    world.hook("prompt", claude_prompt(world, "which host do we deploy lynx to? secret-word"))

    text = (world.home / "hooks" / "hooks.log").read_text()
    assert "secret-word" not in text and "vega-3" not in text
    record = world.log()[-1]
    assert record["outcome"] == "found" and record["added"] == 1 and record["ms"] > 0
