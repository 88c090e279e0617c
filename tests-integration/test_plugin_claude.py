"""The real Claude Code CLI (pinned in tools/agents/install.sh) validates the ihmt plugin,
installs it from this repository's folder, connects its server, runs its hooks, and
uninstalls it leaving the user's own files as they were.

The memory is ``~/.ihmt`` of the test's HOME (``agent_env`` clears ``IHMT_HOME``): the
plugin names no memory of its own, so it lives nowhere near the plugin's folder."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ihmt_cli._agent_claude import CLAUDE_CODE

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]},
}
USER_NOTES = "# My own rules\n\nAlways answer in English.\n"
FACT = "The staging database of lynx runs PostgreSQL 17."


def _claude(claude: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [claude, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=env["HOME"],
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _ihmt(env: dict[str, str], *args: str) -> None:
    ihmt = str(Path(sys.executable).parent / "ihmt")
    done = subprocess.run(
        [ihmt, *args], capture_output=True, text=True, env=env, cwd=env["HOME"], check=False
    )
    assert done.returncode == 0, done.stderr


def _ours(listing: str) -> str | None:
    return next((x for x in listing.splitlines() if "ihmt-memory:" in x), None)


@pytest.fixture
def claude(agent_cli: Callable[[str], str]) -> str:
    return agent_cli("claude")


def test_claude_validates_the_marketplace_and_the_plugin_strictly(
    claude: str, agent_env: dict[str, str], repo_root: Path
) -> None:
    for path in (repo_root, repo_root / "plugins" / "ihmt"):
        done = _claude(claude, agent_env, "plugin", "validate", "--strict", "--json", str(path))
        assert done.returncode == 0, done.stdout + done.stderr
    provides = json.loads(done.stdout)["provides"]
    assert provides["mcpServers"] == [
        {"name": "ihmt-memory", "type": "stdio", "target": "ihmt", "args": ["mcp", "serve"]}
    ]
    assert [(h["event"], h["command"]) for h in provides["hooks"]] == [
        (event, f"ihmt hook {ours} --agent claude-code") for event, ours in CLAUDE_CODE.hook_events
    ]
    assert ("SessionStart", "session-start") in CLAUDE_CODE.hook_events
    assert provides["skills"] == ["ihmt:memory"]


def test_claude_installs_the_plugin_connects_runs_its_hook_and_uninstalls_cleanly(
    claude: str, agent_env: dict[str, str], repo_root: Path
) -> None:
    home = Path(agent_env["HOME"])
    # Each hook answers by itself, so that no recall server outlives the test.
    agent_env["IHMT_HOOK_SERVER"] = "off"
    settings, notes = home / ".claude" / "settings.json", home / ".claude" / "CLAUDE.md"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    notes.write_text(USER_NOTES)
    _ihmt(agent_env, "init")
    _ihmt(agent_env, "save", FACT)

    added = _claude(claude, agent_env, "plugin", "marketplace", "add", str(repo_root))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = _claude(claude, agent_env, "plugin", "install", "ihmt@ihmt")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # `claude mcp list` exits 0 even when a server fails: the text is the verdict.
    listing = _claude(claude, agent_env, "mcp", "list")
    line = _ours(listing.stdout + listing.stderr)
    assert line is not None, listing.stdout + listing.stderr
    assert line.startswith("plugin:ihmt:ihmt-memory: ihmt mcp serve"), line
    assert "✔ Connected" in line, line
    # Not logged in, `claude -p` still runs the session's hooks before it gives up.
    _claude(claude, agent_env, "-p", "which database does lynx staging run?")
    log = home / ".ihmt" / "hooks" / "hooks.log"
    runs = [
        (r["agent"], r["event"], r["error"]) for r in map(json.loads, log.read_text().splitlines())
    ]
    assert runs[:2] == [("claude-code", "session-start", ""), ("claude-code", "prompt", "")]
    assert {agent for agent, _, _ in runs} == {"claude-code"}
    cache = home / ".claude" / "plugins" / "cache"
    assert not [p for p in cache.rglob("*") if "ihmt_memory" in p.parts or p.name == "hooks.log"]
    assert notes.read_text() == USER_NOTES

    removed = _claude(claude, agent_env, "plugin", "uninstall", "ihmt@ihmt")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    dropped = _claude(claude, agent_env, "plugin", "marketplace", "remove", "ihmt")
    assert dropped.returncode == 0, dropped.stdout + dropped.stderr

    listing = _claude(claude, agent_env, "mcp", "list")
    assert _ours(listing.stdout + listing.stderr) is None, listing.stdout
    assert notes.read_text() == USER_NOTES
    after = json.loads(settings.read_text())
    # Claude Code keeps its own two keys, emptied; everything of the user's is as it was.
    assert after.pop("enabledPlugins") == {} and after.pop("extraKnownMarketplaces") == {}
    assert after == USER_SETTINGS
    found = subprocess.run(
        [str(Path(sys.executable).parent / "ihmt"), "--json", "search", "lynx staging database"],
        capture_output=True,
        text=True,
        env=agent_env,
        check=True,
    )
    assert "PostgreSQL 17" in found.stdout
