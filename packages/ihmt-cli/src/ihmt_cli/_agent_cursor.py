"""Cursor's setup: the server in ``~/.cursor/mcp.json`` or a project's ``.cursor/mcp.json``
under ``mcpServers``, edited in place keeping everything else; the instructions in a
project's AGENTS.md, which Cursor's agent reads (its user rules live in its settings, not
in a file: the server's own instructions stand in for them). Cursor has no CLI to
register with and no recall hooks here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ihmt_cli._agent_mcp_json import McpJsonSetup
from ihmt_cli._agent_setup import AgentPaths
from ihmt_cli._types import Agent, Scope

__all__ = ["CURSOR", "CursorSetup"]


class CursorSetup(McpJsonSetup):
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for Cursor."""

    agent: Agent = "cursor"
    name = "Cursor"
    restart = (
        "Restart Cursor (or reload its window), then check that ihmt-memory is on in "
        "Cursor Settings → MCP."
    )

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        folder = home / ".cursor" if scope == "user" else project / ".cursor"
        return AgentPaths(
            agent=self.agent,
            scope=scope,
            config=folder / "mcp.json",
            instructions=None if scope == "user" else project / "AGENTS.md",
            cli="cursor",
            hooks=folder / "mcp.json",
        )


CURSOR = CursorSetup()
