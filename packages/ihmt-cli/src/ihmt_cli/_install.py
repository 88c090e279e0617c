"""``ihmt install`` / ``ihmt uninstall``: register the MCP server with an agent.

An install is a :class:`~ihmt_cli._agent_plan.Plan` of steps — run the agent's own CLI,
or write one config, hooks or instructions file — computed from what is on disk now, so
a second run finds nothing to do. ``--dry-run`` prints each step's exact command or file
fragment and writes nothing. Before its first change a file is copied once to
``<file>.bak-ihmt`` (later runs never overwrite that copy of the original), and an
uninstall deletes the copy when the file it leaves is byte-identical to it.

Besides the MCP server, install registers the recall hooks (``ihmt hook``): Claude Code's
``SessionStart``/``UserPromptSubmit`` in its settings.json, the same two events in Codex's
hooks.json, a plugin file for opencode, ``SessionStart``/``BeforeAgent`` in Gemini CLI's
settings.json, and a hooks file for Copilot CLI. The editors (Cursor, Windsurf, Claude
Desktop, VS Code) get the server only.

This module holds the registry of agents (:data:`SETUPS`, one
:class:`~ihmt_cli._agent_setup.AgentSetup` each) and the plans; what differs between
agents lives in their own modules.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_claude import CLAUDE_CODE
from ihmt_cli._agent_claude_desktop import CLAUDE_DESKTOP
from ihmt_cli._agent_codex import CODEX
from ihmt_cli._agent_copilot import COPILOT
from ihmt_cli._agent_cursor import CURSOR
from ihmt_cli._agent_files import Kept, backup, backup_of
from ihmt_cli._agent_gemini import GEMINI_CLI
from ihmt_cli._agent_instructions import instructions_steps
from ihmt_cli._agent_opencode import OPENCODE
from ihmt_cli._agent_plan import Plan, Step
from ihmt_cli._agent_setup import SERVER_NAME, AgentPaths, AgentSetup, ServerSpec, scopes_of
from ihmt_cli._agent_vscode import VSCODE
from ihmt_cli._agent_windsurf import WINDSURF
from ihmt_cli._types import AGENTS, Agent, Scope

__all__ = [
    # the agents
    "SETUPS",
    "setup_of",
    "agent_paths",
    "read_hooks",
    "read_registration",
    "registered_argv",
    # the plans
    "install_plan",
    "uninstall_plan",
]

SETUPS: dict[Agent, AgentSetup] = {
    "claude-code": CLAUDE_CODE,
    "codex": CODEX,
    "opencode": OPENCODE,
    "gemini-cli": GEMINI_CLI,
    "copilot": COPILOT,
    "cursor": CURSOR,
    "windsurf": WINDSURF,
    "claude-desktop": CLAUDE_DESKTOP,
    "vscode": VSCODE,
}
"""Every agent ``ihmt install`` knows, in the order of ``_types.AGENTS``."""


def setup_of(agent: str) -> AgentSetup:
    """The setup of ``agent``.

    Raises:
        ValueError: ``agent`` is not one ``ihmt install`` knows.
    """
    setup = next((setup for name, setup in SETUPS.items() if name == agent), None)
    if setup is None:
        raise ValueError(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")
    return setup


def agent_paths(
    agent: Agent,
    scope: Scope,
    *,
    home: Path | None = None,
    project: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> AgentPaths:
    """Config and instructions files of ``agent`` in ``scope`` (``user`` or ``project``)."""
    env = os.environ if environ is None else environ
    user_home = home or Path.home()
    project_dir = project or Path.cwd()
    return setup_of(agent).paths(scope, home=user_home, project=project_dir, environ=env)


def read_registration(paths: AgentPaths) -> dict[str, Any] | None:
    """The ``ihmt-memory`` entry in the agent's config, as plain data, or None."""
    return setup_of(paths.agent).read_registration(paths)


def read_hooks(paths: AgentPaths) -> dict[str, bool]:
    """Which of our hook events are registered for the agent (by agent event name)."""
    return setup_of(paths.agent).read_hooks(paths)


def registered_argv(agent: str, entry: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment an agent's entry starts the server with."""
    return setup_of(agent).registered_argv(entry)


def _check_scope(setup: AgentSetup, agent: Agent, scope: Scope) -> None:
    """Refuse a scope the client does not have (Claude Desktop, Windsurf: one user file)."""
    if scope not in scopes_of(setup):
        config = agent_paths(agent, "user").config
        raise click.UsageError(
            f"{setup.name} has no {scope} scope: it reads {config} only; use --scope user"
        )


def _same_server(setup: AgentSetup, entry: Mapping[str, Any] | None, spec: ServerSpec) -> bool:
    if entry is None:
        return False
    argv, env = setup.registered_argv(entry)
    if tuple(argv) != spec.argv or env != spec.env:
        return False
    return setup.is_entry_complete(entry)


def _notes(setup: AgentSetup, paths: AgentPaths, *, hooks: bool) -> list[str]:
    notes = setup.notes(paths, hooks=hooks)
    if paths.scope == "project":
        notes.append(
            f"{paths.config} now holds absolute paths of this machine (the server and "
            "IHMT_HOME): do not commit it; add it to .gitignore."
        )
    from ihmt_cli._doctor_plugins import plugin_note

    twice = plugin_note(setup.agent)
    return [*notes, twice] if twice else notes


def install_plan(
    agent: Agent,
    scope: Scope,
    spec: ServerSpec,
    *,
    paths: AgentPaths | None = None,
    hooks: bool = True,
) -> Plan:
    """Everything ``ihmt install AGENT`` still has to do (nothing when already installed).

    Args:
        hooks: register the recall hooks too (False removes ours if an earlier install
            added them).
    """
    setup = setup_of(agent)
    _check_scope(setup, agent, scope)
    paths = paths or agent_paths(agent, scope)
    backups: list[str] = []
    unchanged: list[str] = []
    entry = read_registration(paths)
    steps: list[Step] = []
    if _same_server(setup, entry, spec):
        unchanged.append(f"{SERVER_NAME} is already registered in {paths.config}")
    else:
        steps += setup.register_steps(paths, spec, entry, backups=backups)
    steps += setup.hooks_steps(paths, spec if hooks else None, backups=backups, unchanged=unchanged)
    steps += instructions_steps(
        paths.instructions, install=True, backups=backups, unchanged=unchanged
    )
    for step in steps:
        if step.path is not None and backup_of(step.path).exists():
            backup(step.path, backups)  # name the copy of the original that is kept
    return Plan(
        agent=agent,
        scope=scope,
        ihmt_home=spec.ihmt_home,
        steps=tuple(steps),
        unchanged=tuple(unchanged),
        backups=backups,
        notes=tuple(_notes(setup, paths, hooks=hooks)),
    )


def uninstall_plan(agent: Agent, scope: Scope, *, paths: AgentPaths | None = None) -> Plan:
    """Everything ``ihmt uninstall AGENT`` has to do: unregister, remove the hooks and the
    instructions; then drop each backup whose file is back to its original bytes."""
    setup = setup_of(agent)
    _check_scope(setup, agent, scope)
    paths = paths or agent_paths(agent, scope)
    backups: list[str] = Kept()
    unchanged: list[str] = []
    steps: list[Step] = []
    entry = read_registration(paths)
    if entry is None:
        unchanged.append(f"{SERVER_NAME} is not registered in {paths.config}")
    else:
        steps += setup.unregister_steps(paths, backups=backups)
    steps += setup.hooks_steps(paths, None, backups=backups, unchanged=unchanged)
    shared = [
        other
        for other in AGENTS
        if other != agent
        and paths.instructions is not None
        and (o := agent_paths(other, scope)).instructions == paths.instructions
        and read_registration(o) is not None
    ]
    if shared:
        unchanged.append(
            f"kept the memory instructions in {paths.instructions}: "
            f"{', '.join(shared)} still uses them"
        )
    else:
        steps += instructions_steps(
            paths.instructions, install=False, backups=backups, unchanged=unchanged
        )
    return Plan(
        agent=agent,
        scope=scope,
        ihmt_home=None,
        steps=tuple(steps),
        unchanged=tuple(unchanged),
        backups=backups,
        tidy=tuple(step.path for step in steps if step.path is not None),
    )
