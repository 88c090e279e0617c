"""Claude Desktop's setup: the server in ``claude_desktop_config.json`` under
``mcpServers`` — in ``~/Library/Application Support/Claude`` on macOS, ``%APPDATA%\\Claude``
on Windows, ``$XDG_CONFIG_HOME/Claude`` (``~/.config/Claude``) on Linux — edited in place
keeping everything else (its ``preferences`` too). One file for the user: no project
scope, no instructions file, no hooks.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from ihmt_cli._agent_mcp_json import McpJsonSetup, xdg_config
from ihmt_cli._agent_setup import AgentPaths
from ihmt_cli._types import Agent, Scope

__all__ = ["CLAUDE_DESKTOP", "ClaudeDesktopSetup", "app_config_dir"]


def app_config_dir(home: Path, environ: Mapping[str, str]) -> Path:
    """Where desktop applications keep their per-user config on this system."""
    if sys.platform == "darwin":
        return home / "Library" / "Application Support"
    if sys.platform == "win32" and environ.get("APPDATA"):
        return Path(environ["APPDATA"])
    return xdg_config(home, environ)


class ClaudeDesktopSetup(McpJsonSetup):
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for Claude Desktop."""

    agent: Agent = "claude-desktop"
    name = "Claude Desktop"
    restart = "Quit Claude Desktop completely and open it again so the memory tools load."
    scopes: tuple[Scope, ...] = ("user",)

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        config = app_config_dir(home, environ) / "Claude" / "claude_desktop_config.json"
        return AgentPaths(
            agent=self.agent,
            scope="user",
            config=config,
            instructions=None,
            cli="claude-desktop",
            hooks=config,
        )


CLAUDE_DESKTOP = ClaudeDesktopSetup()
