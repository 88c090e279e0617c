"""``ihmt hook stop``: what the user said that lasts is saved when the agent stops.

Each test builds a real memory under tmp_path, writes a transcript in the agent's own
shape, and runs the real ``ihmt hook stop`` process with the JSON the agent sends
(Claude Code's ``Stop``: ``session_id``, ``transcript_path``, ``cwd``,
``stop_hook_active``). The real clients running it are in
tests-integration/test_agents_hooks.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ihmt_mcp import Memory

IHMT = str(Path(sys.executable).parent / "ihmt")
PROJECT = "lynx"
SESSION = "5c8fc302-d9f0-43e8-af1e-8a335455e9a1"


@dataclass
class World:
    home: Path
    project: Path
    transcript: Path
    env: dict[str, str]

    def say(self, *texts: str) -> None:
        """Append the user's messages (and an assistant answer to each) to the transcript."""
        with self.transcript.open("a", encoding="utf-8") as out:
            for text in texts:
                user = {"type": "user", "message": {"role": "user", "content": text}}
                answer = {
                    "type": "assistant",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "OK"}]},
                }
                for record in (user, answer):
                    out.write(json.dumps({**record, "sessionId": SESSION}) + "\n")

    def stop(self, *, active: bool = False, **env: str) -> subprocess.CompletedProcess[str]:
        payload = {
            "session_id": SESSION,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project),
            "hook_event_name": "Stop",
            "stop_hook_active": active,
        }
        return self.run(json.dumps(payload), **env)

    def run(self, stdin: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [IHMT, "hook", "stop", "--home", str(self.home), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **env},
            cwd=self.project,
            timeout=120,
            check=False,
        )

    def ask(self, question: str) -> dict[str, Any]:
        """The question through ``ihmt --json search``, as the user would ask it here."""
        asked = subprocess.run(
            [IHMT, "--json", "search", question],
            capture_output=True,
            text=True,
            env={**self.env, "IHMT_HOME": str(self.home)},
            cwd=self.project,
            timeout=120,
            check=True,
        )
        answer: dict[str, Any] = json.loads(asked.stdout)
        return answer

    def log(self) -> list[dict[str, Any]]:
        path = self.home / "hooks" / "hooks.log"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def memories(self) -> list[Any]:
        memory = Memory.init(self.home / "ihmt_memory", semantic="off")
        try:
            return list(memory.export())
        finally:
            memory.close()


@pytest.fixture
def world(tmp_path: Path) -> World:
    home = tmp_path / "ihmt-home"
    project = tmp_path / "work" / PROJECT
    (project / ".git").mkdir(parents=True)
    Memory.init(home / "ihmt_memory", semantic="off").close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("IHMT_")}
    env["IHMT_HOOK_SERVER"] = "off"  # each hook alone: test_hook_server.py covers the server
    env["IHMT_SEMANTIC"] = "off"
    return World(home=home, project=project, transcript=tmp_path / "t.jsonl", env=env)


def _save(world: World, text: str) -> str:
    memory = Memory.init(world.home / "ihmt_memory", semantic="off")
    try:
        return memory.save(text, project=PROJECT, date="2026-01-05").ids[0]
    finally:
        memory.close()


def test_a_durable_statement_is_saved_as_a_session_memory(world: World) -> None:
    world.say("can you fix the flaky test?", "Our CI runs on Buildkite with four agents.")
    done = world.stop()
    assert done.returncode == 0 and done.stdout == ""
    [saved] = world.memories()
    assert saved.text == "Our CI runs on Buildkite with four agents."
    assert saved.source == "session" and saved.project == PROJECT
    assert f"session:{SESSION}" in saved.tags
    assert world.log()[-1]["saved"] == 1


def test_nothing_is_read_twice_and_a_later_stop_reads_only_what_is_new(world: World) -> None:
    world.say("Our CI runs on Buildkite with four agents.")
    world.stop()
    world.stop()
    assert world.log()[-1]["turns"] == 0
    world.say("From now on, name release branches release/X.Y.")
    world.stop()
    assert world.log()[-1]["turns"] == 1
    assert len(world.memories()) == 2


def test_a_statement_the_memory_holds_is_not_saved_again(world: World) -> None:
    _save(world, "Our CI runs on Buildkite with four agents, since March.")
    world.say("our CI runs on Buildkite with four agents")
    world.stop()
    assert len(world.memories()) == 1
    assert world.log()[-1]["held"] == 1


def test_a_change_is_saved_as_the_correction_of_what_it_changes(world: World) -> None:
    old = _save(world, "Staging for lynx runs PostgreSQL 15 on db-stg-1.")
    _save(world, "The lynx API answers on port 8443 behind the ingress.")
    world.say("We moved staging to PostgreSQL 17 last week, so MERGE is fine there.")
    world.stop()
    by_id = {m.id: m for m in world.memories()}
    assert len(by_id) == 3
    new = next(m for m in by_id.values() if m.source == "session")
    assert by_id[old].outdated_by == new.id
    assert world.log()[-1]["replaced"] == 1


def test_a_statement_that_leaves_its_project_unsaid_is_found_by_the_project_name(
    world: World,
) -> None:
    _save(world, "The lynx release notes are written by hand in CHANGES.md.")
    world.say(
        "The logo is by Dana Ruiz, credit her on the about page.",
        "Lynx deploys to Fly.io from the main branch.",
    )
    world.stop()
    captured = {m.text: m for m in world.memories() if m.source == "session"}
    unsaid = captured["The logo is by Dana Ruiz, credit her on the about page."]
    said = captured["Lynx deploys to Fly.io from the main branch."]
    assert unsaid.project == said.project == PROJECT
    assert f"project:{PROJECT}" in unsaid.tags
    assert not any(tag.startswith("project:") for tag in said.tags)
    answer = world.ask("who drew the logo of lynx?")
    assert answer["status"] == "found"
    assert answer["results"][0]["id"] == unsaid.id


def test_a_statement_in_the_first_person_is_found_by_who_said_it(world: World) -> None:
    world.say(
        "I prefer CTEs over nested subqueries in SQL, they are easier to review.",
        "Lynx deploys to Fly.io from the main branch.",
    )
    world.stop(LOGNAME="kenji", USER="kenji")
    captured = {m.text: m for m in world.memories() if m.source == "session"}
    mine = captured["I prefer CTEs over nested subqueries in SQL, they are easier to review."]
    assert "by:kenji" in mine.tags
    assert not any(
        t.startswith("by:") for t in captured["Lynx deploys to Fly.io from the main branch."].tags
    )
    answer = world.ask("what does kenji prefer in SQL?")
    assert answer["status"] == "found"
    assert answer["results"][0]["id"] == mine.id


def test_root_says_no_one_is_speaking(world: World) -> None:
    world.say("I prefer tabs over spaces in every repository.")
    world.stop(LOGNAME="root", USER="root")
    (mine,) = [m for m in world.memories() if m.source == "session"]
    assert not any(t.startswith("by:") for t in mine.tags)


def test_a_secret_is_refused_as_a_save_refuses_it(world: World) -> None:
    token = "ghp_" + "Zr4Xq9Lm2Vt7Wn8Kp3Hs6Bd1Fg5Jc0Ye2Ua4"
    world.say(f"Remember that the release bot signs in as {token} on GitHub.")
    world.stop()
    assert world.memories() == []
    assert world.log()[-1]["refused"] == 1
    assert token not in (world.home / "hooks" / "hooks.log").read_text()


@pytest.mark.parametrize("how", ["file", "env"])
def test_a_project_that_opts_out_saves_nothing(world: World, how: str) -> None:
    env = {}
    if how == "file":
        (world.project / ".ihmt-no-capture").write_text("")
    else:
        env["IHMT_CAPTURE"] = "off"
    world.say("Our CI runs on Buildkite with four agents.")
    assert world.stop(**env).returncode == 0
    assert world.memories() == []
    assert world.log()[-1]["outcome"] == "capture off"


def test_nudge_mode_asks_the_agent_once_per_session_and_saves_nothing(world: World) -> None:
    world.say("Our CI runs on Buildkite with four agents.")
    done = world.stop(IHMT_CAPTURE="nudge")
    answer = json.loads(done.stdout)
    assert answer["decision"] == "block"
    assert '"Our CI runs on Buildkite with four agents."' in answer["reason"]
    assert world.memories() == []
    assert world.log()[-1]["tokens"] > 0
    # the agent went on (stop_hook_active); later stops of the session never block again
    assert world.stop(active=True, IHMT_CAPTURE="nudge").stdout == ""
    world.say("From now on, name release branches release/X.Y.")
    assert world.stop(IHMT_CAPTURE="nudge").stdout == ""


def test_opencode_hands_over_its_messages(world: World) -> None:
    messages = [
        {
            "info": {"id": "msg_1", "role": "user", "time": {"created": 1796204829860}},
            "parts": [{"type": "text", "text": "Ana Ruiz owns the billing service."}],
        }
    ]
    payload = {"session_id": "ses_1", "cwd": str(world.project), "messages": messages}
    assert world.run(json.dumps(payload), "--agent", "opencode").returncode == 0
    assert [m.text for m in world.memories()] == ["Ana Ruiz owns the billing service."]
    world.run(json.dumps(payload), "--agent", "opencode")
    assert world.log()[-1]["turns"] == 0


@pytest.mark.parametrize(
    ("stdin", "error"),
    [
        ("not json", "stdin is not JSON"),
        ('{"session_id": "s", "cwd": "/"}', "neither transcript_path nor messages"),
        ('{"session_id": "s", "cwd": "/", "transcript_path": "/nope.jsonl"}', "FileNotFoundError"),
    ],
)
def test_bad_input_exits_0_silently_and_is_logged(world: World, stdin: str, error: str) -> None:
    done = world.run(stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert error in world.log()[-1]["error"]


@pytest.mark.skipif(sys.platform == "win32", reason="the recall server listens on a Unix socket")
def test_with_the_warm_server_running_the_server_saves(tmp_path: Path) -> None:
    import signal
    import time

    # a short home: a Unix socket path must stay under ~100 bytes
    home = Path(tempfile.mkdtemp(prefix="ihmt-"))
    world = World(
        home=home,
        project=tmp_path / "lynx",
        transcript=tmp_path / "t.jsonl",
        env={k: v for k, v in os.environ.items() if not k.startswith("IHMT_")},
    )
    (world.project / ".git").mkdir(parents=True)
    Memory.init(home / "ihmt_memory", semantic="off").close()
    world.env.update(IHMT_SEMANTIC="off", IHMT_HOOK_SERVER="auto")
    status = home / "hooks" / "server.json"
    try:
        world.say("Our CI runs on Buildkite with four agents.")
        world.stop()  # saves by itself and starts the server
        deadline = time.monotonic() + 120
        while not status.exists():
            assert time.monotonic() < deadline, "the recall server did not start"
            time.sleep(0.1)
        world.say("Mei Lin owns the lynx API contract.")
        world.stop()
        assert world.log()[-1]["via"] == "server" and world.log()[-1]["saved"] == 1
        assert {m.text for m in world.memories()} == {
            "Our CI runs on Buildkite with four agents.",
            "Mei Lin owns the lynx API contract.",
        }
    finally:
        if status.exists():
            os.kill(int(json.loads(status.read_text())["pid"]), signal.SIGTERM)
        shutil.rmtree(home, ignore_errors=True)


def test_doctor_shows_what_the_last_stop_captured(world: World) -> None:
    world.say("Our CI runs on Buildkite with four agents.")
    world.stop()
    done = subprocess.run(
        [IHMT, "doctor", "--home", str(world.home), "--no-connect", "--json"],
        capture_output=True,
        text=True,
        env={**world.env, "HOME": str(world.project.parent)},
        cwd=world.project,
        timeout=120,
        check=False,
    )
    capture = json.loads(done.stdout)["capture"]
    assert capture["agent"] == "claude-code" and capture["project"] == PROJECT
    assert [s["text"] for s in capture["saved"]] == ["Our CI runs on Buildkite with four agents."]
    text = subprocess.run(
        [IHMT, "doctor", "--home", str(world.home), "--no-connect"],
        capture_output=True,
        text=True,
        env={**world.env, "HOME": str(world.project.parent)},
        cwd=world.project,
        timeout=120,
        check=False,
    ).stdout
    assert "capture: last " in text and '"Our CI runs on Buildkite with four agents."' in text
