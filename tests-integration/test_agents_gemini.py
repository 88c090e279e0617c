"""The real Gemini CLI (pinned in tools/agents/install.sh) with what ``ihmt install
gemini-cli`` registers.

- ``gemini mcp list`` starts each server and says whether it connects: ihmt-memory does,
  in a folder Gemini CLI trusts; in one it does not trust, Gemini CLI keeps every server
  off, and ``ihmt doctor`` says so too. After ``ihmt uninstall`` the listing no longer
  has it and the user's settings.json (comments, other servers) is back byte for byte.
- The recall hooks: ``gemini -p`` runs ``SessionStart`` and ``BeforeAgent`` before its
  first model call; the model is a stub on a loopback port (``model_stub``), and the
  request Gemini CLI sends it holds the project's digest and the recalled answer.
- The capture hook: with a stub that answers, the turn ends, Gemini CLI runs
  ``AfterAgent`` and then ``SessionEnd`` with its chat file, and what the user said that
  lasts is in the memory once (``source: session``), found by ``ihmt search``; a second
  turn in the same session (``--resume latest``, which writes the earlier messages into
  the file again) saves nothing twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import test_agents_hooks as recall
from agent_helpers import ModelStub, doctor_row, output_of

project = recall.project  # the git project whose memory holds the lynx facts
IHMT = str(Path(sys.executable).parent / "ihmt")

USER_SETTINGS = """\
{
  // the user's own settings: Gemini CLI reads them with comments
  "privacy": { "usageStatisticsEnabled": false },
  "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false },
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "mcpServers": {
    "other": { "command": "other-mcp-not-installed" } // theirs
  }
}
"""


def _settings(home: Path) -> Path:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(USER_SETTINGS)
    return path


def _trust(home: Path, folder: Path) -> None:
    """What Gemini CLI records when the user trusts a folder in its dialog."""
    rules = home / ".gemini" / "trustedFolders.json"
    rules.write_text(json.dumps({str(folder): "TRUST_FOLDER"}))


def _mcp_list(gemini: str, env: dict[str, str], cwd: Path) -> str:
    """``gemini mcp list``: it gives each server 5 s to answer (a session waits longer),
    which a loaded test machine can miss as ihmt-mcp starts: asked up to three times."""
    for _ in range(3):
        listing = output_of([gemini, "mcp", "list"], env, cwd)
        if "Disconnected" not in listing.split("ihmt-memory", 1)[-1].split("\n", 1)[0]:
            break
    return listing


def test_gemini_mcp_list_shows_ihmt_memory_connected_in_a_trusted_folder(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    gemini = agent_cli("gemini")
    home = Path(agent_env["HOME"])
    settings = _settings(home)

    installed = ihmt_install("install", "gemini-cli", "--home", f"{home}/memory")

    assert "register ihmt-memory in" in installed.stdout and "folders you trust" in installed.stdout
    untrusted = _mcp_list(gemini, agent_env, home)
    assert "untrusted" in untrusted and "ihmt-memory" in untrusted, untrusted
    assert "Connected" not in untrusted
    row = doctor_row(agent_env, home, "gemini-cli")
    assert row["probe"]["connects"] and row["hooks"]["present"]
    assert row["hooks"]["trusted"] is False  # what Gemini CLI itself says above

    _trust(home, home)
    listing = _mcp_list(gemini, agent_env, home)

    line = next((x for x in listing.splitlines() if "ihmt-memory" in x), None)
    assert line is not None, listing
    assert "✓" in line and "Connected" in line, listing
    assert doctor_row(agent_env, home, "gemini-cli")["hooks"]["trusted"] is True
    text = settings.read_text()
    assert "// the user's own settings" in text and "// theirs" in text
    assert (home / ".gemini" / "GEMINI.md").read_text().count("ihmt-memory:begin") == 1

    ihmt_install("uninstall", "gemini-cli")

    assert "ihmt-memory" not in _mcp_list(gemini, agent_env, home)
    assert settings.read_text() == USER_SETTINGS
    assert not list(settings.parent.glob("*.bak-ihmt"))
    assert not (home / ".gemini" / "GEMINI.md").exists()


def test_gemini_runs_both_hooks_and_sends_their_context_to_the_model(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> None:
    gemini = agent_cli("gemini")
    home = Path(agent_env["HOME"])
    _settings(home)
    _trust(home, project)
    ihmt_install("install", "gemini-cli", "--home", str(home / "memory"))

    with ModelStub() as stub:
        env = {**agent_env, "GEMINI_API_KEY": "a-test-key", "GOOGLE_GEMINI_BASE_URL": stub.url}
        output_of([gemini, "-p", recall.QUESTION], env, project)  # exits 1: refused

    sent = "\n".join(stub.bodies)
    assert stub.bodies, "Gemini CLI never called the model"
    assert "Long-term memory (IHMT) knows this about project lynx" in sent
    assert "Recalled from long-term memory (IHMT)" in sent and "vega-3" in sent
    runs = [(r["agent"], r["event"], r["outcome"]) for r in recall._hook_log(agent_env)]
    assert runs == [
        ("gemini-cli", "session-start", "digest"),
        ("gemini-cli", "prompt", "found"),
        ("gemini-cli", "stop", "nothing durable"),  # SessionEnd: the question lasts not
    ]


STATEMENT = "Remember that the sprinkler controller runs on the Raspberry Pi in the shed."
MODEL = ("-m", "gemini-2.5-flash")
"""A model named: with none, Gemini CLI first asks a model to choose one, in a JSON form
the stub does not speak, and retries for a minute and a half."""


def test_gemini_capture_saves_what_the_user_said_once(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> None:
    gemini = agent_cli("gemini")
    home = Path(agent_env["HOME"])
    _settings(home)
    _trust(home, project)
    ihmt_install("install", "gemini-cli", "--home", str(home / "memory"))
    memory = {**agent_env, "IHMT_HOME": str(home / "memory"), "IHMT_SEMANTIC": "off"}

    with ModelStub(answer="OK.") as stub:
        env = {**agent_env, "GEMINI_API_KEY": "a-test-key", "GOOGLE_GEMINI_BASE_URL": stub.url}
        first = output_of([gemini, *MODEL, "-p", STATEMENT], env, project)
        found = output_of(
            [IHMT, "search", "where does the sprinkler controller run?"], memory, project
        )
        again = [gemini, *MODEL, "--resume", "latest", "-p", "and what else is in the shed?"]
        second = output_of(again, env, project)

    assert "OK." in first and "OK." in second, (first, second)
    stops = [r for r in recall._hook_log(agent_env) if r["event"] == "stop"]
    assert [(r["turns"], r["outcome"]) for r in stops] == [
        (1, "saved"),  # AfterAgent of the first turn
        (0, "nothing durable"),  # its SessionEnd: nothing new
        (1, "nothing durable"),  # the second turn: its question only, no old turn again
        (0, "nothing durable"),
    ]
    exported = subprocess.run(
        [IHMT, "export"], env=memory, cwd=project, capture_output=True, text=True, check=True
    )
    captured = [
        m for m in map(json.loads, exported.stdout.splitlines()) if m["source"] == "session"
    ]
    assert [m["content"] for m in captured] == [
        "The sprinkler controller runs on the Raspberry Pi in the shed."
    ]
    assert captured[0]["project"] == "lynx"
    assert found.startswith("FOUND") and "Raspberry Pi in the shed" in found, found


def test_gemini_nudge_asks_the_agent_once_to_save_and_saves_nothing(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> None:
    """``IHMT_CAPTURE=nudge``: ``AfterAgent`` answers ``decision: block``, Gemini CLI sends
    the reason to the model as the next prompt, and the ``AfterAgent`` after it
    (``stop_hook_active``) lets the agent stop."""
    gemini = agent_cli("gemini")
    home = Path(agent_env["HOME"])
    _settings(home)
    _trust(home, project)
    ihmt_install("install", "gemini-cli", "--home", str(home / "memory"))

    with ModelStub(answer="OK.") as stub:
        env = {**agent_env, "GEMINI_API_KEY": "a-test-key", "GOOGLE_GEMINI_BASE_URL": stub.url}
        output_of([gemini, *MODEL, "-p", STATEMENT], {**env, "IHMT_CAPTURE": "nudge"}, project)

    assert len(stub.bodies) == 2, stub.paths
    nudge = stub.bodies[1].split("IHMT memory: the user said things worth keeping", 1)
    assert len(nudge) == 2 and "Raspberry Pi in the shed" in nudge[1]
    stops = [r for r in recall._hook_log(agent_env) if r["event"] == "stop"]
    # the nudge, sent as a prompt and written to the chat file, is not read as the user's
    assert [(r["outcome"], r["turns"]) for r in stops] == [
        ("nudged", 1),
        ("nothing durable", 0),  # AfterAgent again, stop_hook_active
        ("nothing durable", 0),  # SessionEnd
    ]
