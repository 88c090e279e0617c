"""``ihmt doctor`` sees the ihmt plugin that the real Claude Code and Codex CLIs (pinned
in tools/agents/install.sh) installed from this repository's folder: which plugin, its
version, whether it is enabled, the server it starts (and that it answers), the hooks it
brings; and it warns when ``ihmt install`` set the memory up as well, which makes the
agent run two servers (``claude mcp list`` shows both) and every hook twice.

Each agent runs in an empty temporary HOME, with no login and no model reached. The
plugin names no memory, so doctor checks ``~/.ihmt`` of that HOME, the memory its server
opens.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ihmt_cli._agent_claude import CLAUDE_CODE
from ihmt_cli._agent_codex import CODEX


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=env,
        cwd=env["HOME"],
        timeout=240,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _ok(argv: list[str], env: dict[str, str]) -> str:
    done = _run(argv, env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _doctor(env: dict[str, str], *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``ihmt doctor --json ARGS``: the whole report, and the given agent's user row."""
    done = _run([str(Path(sys.executable).parent / "ihmt"), "doctor", "--json", *args], env)
    data = json.loads(done.stdout)
    assert (done.returncode == 0) is data["ok"]
    return data, {r["agent"]: r for r in data["agents"] if r["scope"] == "user"}


def _version(repo_root: Path, manifest: str) -> str:
    plugin = repo_root / "plugins" / "ihmt" / manifest / "plugin.json"
    return str(json.loads(plugin.read_text())["version"])


def test_doctor_reports_the_claude_plugin_and_a_second_setup_by_install(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    repo_root: Path,
) -> None:
    claude = agent_cli("claude")
    home = Path(agent_env["HOME"])
    _ok([claude, "plugin", "marketplace", "add", str(repo_root)], agent_env)
    _ok([claude, "plugin", "install", "ihmt@ihmt"], agent_env)

    data, rows = _doctor(agent_env)

    assert data["ok"], data
    row = rows["claude-code"]
    assert not row["registered"] and "warnings" not in row
    [plugin] = row["plugins"]
    assert (plugin["plugin"], plugin["version"], plugin["scope"]) == (
        "ihmt@ihmt",
        _version(repo_root, ".claude-plugin"),
        "user",
    )
    assert plugin["enabled"] and plugin["applies"]
    assert Path(plugin["path"]).is_relative_to(home / ".claude" / "plugins" / "cache")
    assert plugin["servers"] == {"ihmt-memory": ["ihmt", "mcp", "serve"]}
    assert list(plugin["hooks"]) == [event for event, _ in CLAUDE_CODE.hook_events]
    assert plugin["hooks"]["SessionStart"] == ["ihmt hook session-start --agent claude-code"]
    assert plugin["ihmt_home"] == str(home / ".ihmt") and plugin["same_memory"]
    assert plugin["probe"]["connects"] and "search_memory" in plugin["probe"]["tools"]
    text = _run([str(Path(sys.executable).parent / "ihmt"), "doctor", "--no-connect"], agent_env)
    assert "claude-code (user): set up by its plugin (not by ihmt install)" in text.stdout
    assert "plugin ihmt@ihmt" in text.stdout and "(user, enabled)" in text.stdout

    _ok([claude, "plugin", "disable", "ihmt@ihmt", "--scope", "user"], agent_env)
    _, rows = _doctor(agent_env, "--no-connect")
    assert [p["enabled"] for p in rows["claude-code"]["plugins"]] == [False]
    _ok([claude, "plugin", "enable", "ihmt@ihmt", "--scope", "user"], agent_env)

    done = ihmt_install("install", "claude-code", "--home", str(home / ".ihmt"))
    _, rows = _doctor(agent_env, "--no-connect")

    assert "Note: the plugin ihmt@ihmt already gives claude-code the memory" in done.stdout

    row = rows["claude-code"]
    assert row["registered"] and row["hooks"]["present"]
    [warning] = row["warnings"]
    assert "set up twice for claude-code" in warning and "every memory hook twice" in warning
    listing = _run([claude, "mcp", "list"], agent_env)
    servers = [x for x in (listing.stdout + listing.stderr).splitlines() if "ihmt-memory:" in x]
    assert len(servers) == 2, listing.stdout  # what the warning is about


def test_doctor_reports_the_codex_plugin_and_that_its_hooks_are_not_trusted(
    agent_cli: Callable[[str], str], agent_env: dict[str, str], repo_root: Path
) -> None:
    codex = agent_cli("codex")
    home = Path(agent_env["HOME"])
    _ok([codex, "plugin", "marketplace", "add", str(repo_root)], agent_env)
    _ok([codex, "plugin", "add", "ihmt@ihmt"], agent_env)

    data, rows = _doctor(agent_env)

    assert data["ok"], data
    row = rows["codex"]
    assert not row["registered"] and "warnings" not in row
    [plugin] = row["plugins"]
    assert (plugin["plugin"], plugin["version"], plugin["enabled"]) == (
        "ihmt@ihmt",
        _version(repo_root, ".codex-plugin"),
        True,
    )
    assert Path(plugin["path"]).is_relative_to(home / ".codex" / "plugins" / "cache")
    assert plugin["servers"] == {"ihmt-memory": ["ihmt", "mcp", "serve"]}
    assert list(plugin["hooks"]) == [event for event, _ in CODEX.hook_events]
    assert plugin["hooks_trusted"] is False  # Codex's own word: no one trusted them yet
    assert plugin["probe"]["connects"]
    assert "claude-code" not in [r["agent"] for r in data["agents"] if r.get("plugins")]
