"""The real Gemini CLI (pinned in tools/agents/install.sh) with what ``ihmt install
gemini-cli`` registers.

- ``gemini mcp list`` starts each server and says whether it connects: ihmt-memory does,
  in a folder Gemini CLI trusts; in one it does not trust, Gemini CLI keeps every server
  off, and ``ihmt doctor`` says so too. After ``ihmt uninstall`` the listing no longer
  has it and the user's settings.json (comments, other servers) is back byte for byte.
- The recall hooks: ``gemini -p`` runs ``SessionStart`` and ``BeforeAgent`` before its
  first model call; the model is a stub on a loopback port (``model_stub``), and the
  request Gemini CLI sends it holds the project's digest and the recalled answer.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import test_agents_hooks as recall
from agent_helpers import ModelStub, doctor_row, output_of

project = recall.project  # the git project whose memory holds the lynx facts

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
    ]
