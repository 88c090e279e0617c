"""Windsurf's setup: the server in ``~/.codeium/windsurf/mcp_config.json`` under
``mcpServers`` (Windsurf has no project MCP file: the user scope only), edited in place
keeping everything else; the instructions in its global rules,
``~/.codeium/windsurf/memories/global_rules.md``. No CLI to register with, no hooks here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ihmt_cli._agent_mcp_json import McpJsonSetup
from ihmt_cli._agent_setup import AgentPaths
from ihmt_cli._types import Agent, Scope

__all__ = ["WINDSURF", "WindsurfSetup"]


class WindsurfSetup(McpJsonSetup):
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for Windsurf."""

    agent: Agent = "windsurf"
    name = "Windsurf"
    restart = "Refresh the MCP servers in Windsurf's Cascade panel (or restart Windsurf)."
    scopes: tuple[Scope, ...] = ("user",)

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        folder = home / ".codeium" / "windsurf"
        return AgentPaths(
            agent=self.agent,
            scope="user",
            config=folder / "mcp_config.json",
            instructions=folder / "memories" / "global_rules.md",
            cli="windsurf",
            hooks=folder / "mcp_config.json",
        )


WINDSURF = WindsurfSetup()
