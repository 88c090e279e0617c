"""VS Code's setup: the server in the user profile's ``mcp.json`` (``Code/User/`` in the
system's application config folder, where "MCP: Open User Configuration" opens it) or a
workspace's ``.vscode/mcp.json``, under the top-level ``servers`` with ``"type":
"stdio"``, spliced into the text so that comments stay (VS Code reads it with comments);
the instructions in a workspace's ``.github/copilot-instructions.md``, which Copilot in VS
Code adds to every chat request. No hooks here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ihmt_cli._agent_claude_desktop import app_config_dir
from ihmt_cli._agent_mcp_json import McpJsonSetup
from ihmt_cli._agent_setup import AgentPaths
from ihmt_cli._types import Agent, Scope

__all__ = ["VSCODE", "VSCodeSetup"]


class VSCodeSetup(McpJsonSetup):
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for VS Code (Copilot's agent mode)."""

    agent: Agent = "vscode"
    name = "VS Code"
    restart = (
        "In VS Code, run 'MCP: List Servers' and start ihmt-memory (VS Code asks to trust "
        "a new server before it starts it)."
    )
    servers_key = "servers"
    comments = True
    entry_type = "stdio"

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        if scope == "user":
            config = app_config_dir(home, environ) / "Code" / "User" / "mcp.json"
            instructions = None
        else:
            config = project / ".vscode" / "mcp.json"
            instructions = project / ".github" / "copilot-instructions.md"
        return AgentPaths(
            agent=self.agent,
            scope=scope,
            config=config,
            instructions=instructions,
            cli="code",
            hooks=config,
        )


VSCODE = VSCodeSetup()
