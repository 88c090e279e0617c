"""The real Claude Code CLI (pinned in tools/agents/install.sh) connects to ihmt-mcp."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def _mcp_list(claude: str, env: dict[str, str], cwd: str) -> str:
    done = subprocess.run(
        [claude, "mcp", "list"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    # `claude mcp list` exits 0 even when a server fails: the text is the verdict.
    return done.stdout + done.stderr


def test_claude_mcp_list_shows_ihmt_memory_connected(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    claude = agent_cli("claude")
    home = agent_env["HOME"]

    installed = ihmt_install("install", "claude-code", "--home", f"{home}/memory")

    assert "register ihmt-memory with Claude Code" in installed.stdout
    listing = _mcp_list(claude, agent_env, home)
    line = next((x for x in listing.splitlines() if x.startswith("ihmt-memory:")), None)
    assert line is not None, listing
    assert "✔ Connected" in line, listing
    assert Path(home, ".claude", "CLAUDE.md").read_text().count("ihmt-memory:begin") == 1


def test_claude_no_longer_lists_it_after_uninstall(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    claude = agent_cli("claude")
    ihmt_install("install", "claude-code")

    ihmt_install("uninstall", "claude-code")

    listing = _mcp_list(claude, agent_env, agent_env["HOME"])
    assert "ihmt-memory" not in listing
    if "No MCP servers configured" not in listing:
        pytest.fail(f"unexpected listing: {listing}")
