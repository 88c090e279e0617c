"""The real GitHub Copilot CLI (pinned in tools/agents/install.sh) with what ``ihmt install
copilot`` registers, with no account: its bring-your-own-model mode pointed at a stub on a
loopback port (``model_stub``, ``COPILOT_OFFLINE=true``).

- ``copilot mcp list`` lists the registration; ``copilot -p --output-format json``
  reports, event by event, the server connected and its ten tools loaded. After ``ihmt
  uninstall`` the listing is empty again and the user's file is back byte for byte.
- The recall hooks: Copilot CLI runs ``SessionStart`` and ``UserPromptSubmit`` from the
  hooks file before its first model call, and the request it sends holds the project's
  digest and the recalled answer.
- Project scope: Copilot CLI lists a project's server only once the folder is trusted,
  and ``ihmt doctor`` says the same.
- The capture hook: with a stub that answers, the turn ends, Copilot CLI runs ``Stop``
  (its ``agentStop``) with the session's event log, and what the user said that lasts is
  in the memory once (``source: session``), found by ``ihmt search``; a second turn in
  the same session (``--continue``) saves nothing twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import test_agents_hooks as recall
from agent_helpers import ModelStub, doctor_row, output_of

project = recall.project  # the git project whose memory holds the lynx facts

USER_CONFIG = """\
{
    "mcpServers": {
        "other": {
            "type": "local",
            "command": "other-mcp-not-installed",
            "args": [],
            "tools": ["*"]
        }
    }
}
"""


def _copilot(copilot: str, env: dict[str, str], cwd: Path, *args: str) -> str:
    return output_of([copilot, *args], env, cwd)


def _prompt(
    copilot: str,
    env: dict[str, str],
    cwd: Path,
    stub: ModelStub,
    prompt: str = recall.QUESTION,
    *more: str,
) -> list[Any]:
    """``copilot -p`` against the stub: the session's events, one JSON object a line."""
    offline = {
        **env,
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": f"{stub.url}/v1",
        "COPILOT_MODEL": "gpt-4o",
    }
    args = ("-p", prompt, *more, "--allow-all-tools", "--output-format", "json")
    out = _copilot(copilot, offline, cwd, *args, "--no-ask-user", "--disable-builtin-mcps")
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_copilot_lists_ihmt_memory_and_connects_to_its_ten_tools(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    copilot = agent_cli("copilot")
    home = Path(agent_env["HOME"])
    config = home / ".copilot" / "mcp-config.json"
    config.parent.mkdir()
    config.write_text(USER_CONFIG)

    installed = ihmt_install("install", "copilot", "--home", f"{home}/memory")

    assert "register ihmt-memory in" in installed.stdout
    listing = _copilot(copilot, agent_env, home, "mcp", "list")
    assert "ihmt-memory (local)" in listing and "other (local)" in listing, listing
    with ModelStub() as stub:
        events = _prompt(copilot, agent_env, home, stub)
    ours = [e["data"] for e in events if (e.get("data") or {}).get("serverName") == "ihmt-memory"]
    assert {"serverName": "ihmt-memory", "toolCount": 10} in ours, events
    assert any(d.get("status") == "connected" for d in ours), ours
    assert (home / ".copilot" / "copilot-instructions.md").read_text().count("ihmt-memory:begin")

    ihmt_install("uninstall", "copilot")

    listing = _copilot(copilot, agent_env, home, "mcp", "list")
    assert "ihmt-memory" not in listing and "other (local)" in listing, listing
    assert config.read_text() == USER_CONFIG
    assert not list(config.parent.rglob("*ihmt*"))


def test_copilot_runs_both_hooks_and_sends_their_context_to_the_model(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> None:
    copilot = agent_cli("copilot")
    home = Path(agent_env["HOME"])
    ihmt_install("install", "copilot", "--home", str(home / "memory"))

    with ModelStub() as stub:
        _prompt(copilot, agent_env, project, stub)

    sent = "\n".join(stub.bodies)
    assert stub.bodies, "Copilot CLI never called the model"
    assert "Long-term memory (IHMT) knows this about project lynx" in sent
    assert "Recalled from long-term memory (IHMT)" in sent and "vega-3" in sent
    # Copilot CLI may start its sessionStart hook and its first prompt's hook together,
    # so the log holds both in whichever order they finished.
    runs = sorted((r["agent"], r["event"], r["outcome"]) for r in recall._hook_log(agent_env))
    assert runs == [("copilot", "prompt", "found"), ("copilot", "session-start", "digest")]


def test_copilot_lists_a_project_server_once_the_folder_is_trusted(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    project: Path,
) -> None:
    copilot = agent_cli("copilot")
    home = Path(agent_env["HOME"])
    ihmt = str(Path(sys.executable).parent / "ihmt")
    subprocess.run(["git", "init", "-q", str(project)], check=True, capture_output=True)

    def ihmt_here(*args: str) -> str:
        done = subprocess.run(
            [ihmt, *args], capture_output=True, text=True, env=agent_env, cwd=project, check=True
        )
        return done.stdout

    ihmt_here("install", "copilot", "--scope", "project", "--home", str(home / "memory"))

    assert "ihmt-memory" not in _copilot(copilot, agent_env, project, "mcp", "list")
    assert doctor_row(agent_env, project, "copilot", "project")["hooks"]["trusted"] is False
    # What Copilot CLI records when the user trusts the folder on its first launch there.
    state = home / ".copilot" / "config.json"
    state.parent.mkdir(exist_ok=True)
    state.write_text(json.dumps({"trusted_folders": [str(project)]}))
    listing = _copilot(copilot, agent_env, project, "mcp", "list")
    assert "Workspace servers:" in listing and "ihmt-memory (local)" in listing, listing
    assert doctor_row(agent_env, project, "copilot", "project")["hooks"]["trusted"] is True

    ihmt_here("uninstall", "copilot", "--scope", "project")

    assert "ihmt-memory" not in _copilot(copilot, agent_env, project, "mcp", "list")
    left = [p for p in (project / ".github").rglob("*") if p.is_file()]
    assert left == []


STATEMENT = "Remember that the sprinkler controller runs on the Raspberry Pi in the shed."


def test_copilot_capture_saves_what_the_user_said_once(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> None:
    copilot = agent_cli("copilot")
    home = Path(agent_env["HOME"])
    ihmt_install("install", "copilot", "--home", str(home / "memory"))
    memory = {**agent_env, "IHMT_HOME": str(home / "memory"), "IHMT_SEMANTIC": "off"}
    ihmt = str(Path(sys.executable).parent / "ihmt")

    def run(*args: str) -> str:
        done = subprocess.run(
            [ihmt, *args], env=memory, cwd=project, capture_output=True, text=True, check=True
        )
        return done.stdout

    with ModelStub(answer="OK.") as stub:
        first = _prompt(copilot, agent_env, project, stub, STATEMENT)
        found = run("search", "where does the sprinkler controller run?")
        second = _prompt(
            copilot, agent_env, project, stub, "what else is in the shed?", "--continue"
        )

    answers = [e["data"]["content"] for e in first + second if e["type"] == "assistant.message"]
    assert answers == ["OK.", "OK."], first + second
    stops = [r for r in recall._hook_log(agent_env) if r["event"] == "stop"]
    assert [(r["turns"], r["outcome"]) for r in stops] == [
        (1, "saved"),
        (1, "nothing durable"),  # the second turn: its question only, no old turn again
    ]
    captured = [m for m in map(json.loads, run("export").splitlines()) if m["source"] == "session"]
    assert [m["content"] for m in captured] == [
        "The sprinkler controller runs on the Raspberry Pi in the shed."
    ]
    assert captured[0]["project"] == "lynx"
    assert found.startswith("FOUND") and "Raspberry Pi in the shed" in found, found


def test_copilot_nudge_asks_the_agent_once_to_save_and_saves_nothing(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> None:
    """``IHMT_CAPTURE=nudge``: ``Stop`` answers ``decision: block``, Copilot CLI sends the
    reason to the model as the next turn, and the stop after it (``stop_hook_active``)
    lets the agent stop."""
    copilot = agent_cli("copilot")
    home = Path(agent_env["HOME"])
    ihmt_install("install", "copilot", "--home", str(home / "memory"))
    nudge = {**agent_env, "IHMT_CAPTURE": "nudge"}

    with ModelStub(answer="OK.") as stub:
        events = _prompt(copilot, nudge, project, stub, STATEMENT)

    answers = [e for e in events if e["type"] == "assistant.message"]
    assert len(stub.bodies) == len(answers) == 2, events
    assert "IHMT memory: the user said things worth keeping" in stub.bodies[1]
    assert "Raspberry Pi in the shed" in stub.bodies[1].split("IHMT memory:", 1)[1]
    stops = [r for r in recall._hook_log(agent_env) if r["event"] == "stop"]
    # the second stop reads the nudge, which Copilot CLI logs as a user.message: not the
    # user's, so no turn
    assert [(r["outcome"], r["turns"]) for r in stops] == [("nudged", 1), ("nothing durable", 0)]
