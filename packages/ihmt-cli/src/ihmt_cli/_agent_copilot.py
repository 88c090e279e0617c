"""GitHub Copilot CLI's setup: the server in ``mcp-config.json`` (``$COPILOT_HOME``, else
``~/.copilot``) or a project's ``.github/mcp.json`` under ``mcpServers`` (``.mcp.json``,
which Copilot CLI reads too, is Claude Code's: a second entry there would be theirs to
fight over); the recall hooks in a hooks file of their own, ``hooks/ihmt-memory.json``
beside it (a project's ``.github/hooks/``), which Copilot CLI loads with the user's; the
instructions in ``copilot-instructions.md`` (a project's ``.github/``).

The hooks use Copilot CLI's VS Code-compatible event names (``SessionStart``,
``UserPromptSubmit``), whose input has Claude Code's field names; Copilot CLI adds the
``additionalContext`` the hook prints to the model's context. The capture hook (``ihmt hook
stop``, left out by ``--no-capture``) runs on ``Stop`` (its ``agentStop``: the agent ends a
turn), whose input names the session's event log (``transcript_path``,
``session-state/<id>/events.jsonl``, read by :mod:`ihmt_cli._transcript_formats`);
``SessionEnd`` names none, and a compaction keeps the log whole, so nothing else is
needed.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_files import read_jsonc
from ihmt_cli._agent_json_hooks import HOOK_TIMEOUT
from ihmt_cli._agent_mcp_json import McpJsonSetup
from ihmt_cli._agent_plan import Step, own_file_steps
from ihmt_cli._agent_setup import OUR_HOOK, SERVER_NAME, AgentPaths, ServerSpec
from ihmt_cli._types import Agent, Scope

__all__ = ["COPILOT", "CopilotSetup"]

COPILOT_EVENTS = (
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "prompt"),
    ("Stop", "stop"),
)
"""Copilot CLI's VS Code-compatible event names (each gets Claude Code's snake_case input)
and the ``ihmt hook`` event each one runs."""


class CopilotSetup(McpJsonSetup):
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for GitHub Copilot CLI."""

    agent: Agent = "copilot"
    name = "Copilot CLI"
    restart = "Start a new Copilot CLI session (copilot) so the memory tools load."
    trust_hint = "start copilot in this folder and trust it"
    entry_type = "local"
    hook_events = COPILOT_EVENTS

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        if scope == "user":
            folder = Path(environ["COPILOT_HOME"]) if environ.get("COPILOT_HOME") else None
            folder = folder or home / ".copilot"
            config = folder / "mcp-config.json"
        else:
            folder = project / ".github"
            config = folder / "mcp.json"
        return AgentPaths(
            agent=self.agent,
            scope=scope,
            config=config,
            instructions=folder / "copilot-instructions.md",
            cli="copilot",
            hooks=folder / "hooks" / f"{SERVER_NAME}.json",
        )

    def entry(self, spec: ServerSpec) -> dict[str, Any]:
        return {**super().entry(spec), "tools": ["*"]}

    def read_hooks(self, paths: AgentPaths) -> dict[str, bool]:
        data = _ours(paths.hooks)
        hooks = data.get("hooks") if data else None
        return {
            event: isinstance(hooks, dict) and bool(hooks.get(event)) for event, _ in COPILOT_EVENTS
        }

    def hooks_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec | None,
        *,
        backups: list[str],
        unchanged: list[str],
    ) -> list[Step]:
        """Write (``spec``) or delete (None) the hooks file; nothing when already so."""
        return own_file_steps(
            paths.hooks,
            None if spec is None else _hooks_text(paths, spec),
            ours=_ours(paths.hooks) is not None,
            what="recall hooks file",
            added=f"add the hooks ({_names(spec)}) in {paths.hooks}",
            unchanged=unchanged,
        )

    def hook_trust(self, paths: AgentPaths, *, cwd: Path) -> bool | None:
        """A project's hooks and servers run only in a folder Copilot CLI trusts (its
        ``config.json`` ``trusted_folders``); the user's run everywhere (None)."""
        if paths.scope == "user":
            return None
        home = os.environ.get("COPILOT_HOME") or str(Path.home() / ".copilot")
        try:
            trusted = read_jsonc(Path(home) / "config.json").get("trusted_folders")
        except click.ClickException:
            return None
        here = cwd.resolve()
        listed = trusted if isinstance(trusted, list) else []
        folders = [Path(f).resolve() for f in listed if isinstance(f, str)]
        return any(here == f or f in here.parents for f in folders)

    def notes(self, paths: AgentPaths, *, hooks: bool) -> list[str]:
        if paths.scope == "user":
            return []
        return [
            "Copilot CLI loads a project's MCP servers and hooks only in a folder you "
            "trust; in prompt mode (copilot -p) it loads a project's MCP servers only "
            "with GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP=true.",
            f"{paths.hooks} holds absolute paths of this machine too: do not commit it.",
        ]


COPILOT = CopilotSetup()


def _hooks_text(paths: AgentPaths, spec: ServerSpec) -> str:
    def handler(event: str) -> dict[str, Any]:
        command = shlex.join(spec.hook_argv(paths.agent, event))
        return {"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT}

    hooks = {name: [handler(event)] for name, event in _events(spec)}
    return json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n"


def _events(spec: ServerSpec | None) -> list[tuple[str, str]]:
    """The hooks an install writes: the capture hook only when ``spec`` captures."""
    capture = spec is not None and spec.capture
    return [(name, event) for name, event in COPILOT_EVENTS if capture or event != "stop"]


def _names(spec: ServerSpec | None) -> str:
    return ", ".join(name for name, _ in _events(spec))


def _ours(path: Path) -> dict[str, Any] | None:
    """The hooks file's data when it is ours (it runs ``ihmt hook``), else None."""
    try:
        text = path.read_text("utf-8")
        data = json.loads(text)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and OUR_HOOK.search(text) else None
