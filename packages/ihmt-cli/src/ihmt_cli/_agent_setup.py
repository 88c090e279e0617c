"""What every agent's setup shares: the :class:`AgentSetup` protocol that each agent's
module implements (``_agent_claude``, ``_agent_codex``, ``_agent_opencode``,
``_agent_gemini``, ``_agent_copilot``, and the editors' ``_agent_cursor``,
``_agent_windsurf``, ``_agent_claude_desktop``, ``_agent_vscode``), the :class:`AgentPaths`
and :class:`ServerSpec` records it works with, and the marks by which a file shows
something ``ihmt install`` added.

Adding an agent is one module implementing :class:`AgentSetup`, its name in
``_types.Agent`` and its entry in ``_install.SETUPS``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ihmt_cli._types import AGENTS, SCOPES, Agent, Scope

if TYPE_CHECKING:
    from ihmt_cli._agent_plan import Step

__all__ = [
    # the marks of what install adds
    "SERVER_NAME",
    "BEGIN_MARKER",
    "END_MARKER",
    "PLUGIN_MARKER",
    "OUR_HOOK",
    "HOOK_EVENTS",
    "CAPTURE_EVENTS",
    # the records
    "AgentPaths",
    "ServerSpec",
    "server_spec",
    "stdio_argv",
    # the protocol
    "AgentSetup",
    "scopes_of",
]

SERVER_NAME = "ihmt-memory"
BEGIN_MARKER = "<!-- ihmt-memory:begin (added by `ihmt install`; `ihmt uninstall` removes it) -->"
END_MARKER = "<!-- ihmt-memory:end -->"
PLUGIN_MARKER = "ihmt-memory: added by `ihmt install opencode`"
"""The line in opencode's plugin file that says the file is ours."""
HOOK_EVENTS = (("SessionStart", "session-start"), ("UserPromptSubmit", "prompt"))
"""The agents' event names and the ``ihmt hook`` event each one runs."""
CAPTURE_EVENTS = (("Stop", "stop"), ("PreCompact", "stop"))
"""Claude Code's events that run the capture (``ihmt hook stop``); Codex has ``Stop``."""
OUR_HOOK = re.compile(rf"\shook (session-start|prompt|stop) --agent ({'|'.join(AGENTS)})\b")
"""A hook handler's command line that runs ``ihmt hook``."""


# ---------------------------------------------------------------------- what to register
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    """The stdio command an agent runs to start the memory server."""

    command: str
    """An absolute path: agents start servers without the user's shell or virtualenv."""
    args: tuple[str, ...] = ()
    ihmt_home: str
    """The ``IHMT_HOME`` passed in the server's environment: which memory it serves."""
    ihmt: tuple[str, ...] = ()
    """The ``ihmt`` command line the hooks run (absolute, like ``command``)."""
    capture: bool = True
    """Register the capture hook (``ihmt hook stop``) with the recall hooks
    (``ihmt install --no-capture``: False)."""

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.command, *self.args)

    @property
    def env(self) -> dict[str, str]:
        return {"IHMT_HOME": self.ihmt_home}

    def hook_argv(self, agent: str, event: str) -> list[str]:
        """The command an agent's hook runs for ``event`` (``session-start``, ``prompt``)."""
        return [*self.ihmt, "hook", event, "--agent", agent, "--home", self.ihmt_home]


def server_spec(home: Path, *, executable: str | None = None) -> ServerSpec:
    """The ``ihmt-mcp`` console script beside this interpreter, else ``python -m ihmt_mcp``."""
    python = Path(executable or sys.executable).absolute()
    ihmt: tuple[str, ...] = (str(python), "-m", "ihmt_cli")
    for name in ("ihmt", "ihmt.exe"):
        if (python.parent / name).is_file():
            ihmt = (str(python.parent / name),)
            break
    for name in ("ihmt-mcp", "ihmt-mcp.exe"):
        script = python.parent / name
        if script.is_file():
            return ServerSpec(command=str(script), ihmt_home=str(home), ihmt=ihmt)
    return ServerSpec(command=str(python), args=("-m", "ihmt_mcp"), ihmt_home=str(home), ihmt=ihmt)


def stdio_argv(entry: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of an entry shaped ``{command, args, env}`` (Claude
    Code's and Codex's)."""
    argv = [str(entry.get("command", "")), *(str(a) for a in entry.get("args", []))]
    env = entry.get("env", {})
    return argv, {str(k): str(v) for k, v in (env or {}).items()}


# ---------------------------------------------------------------------- where agents keep config
@dataclass(frozen=True, slots=True, kw_only=True)
class AgentPaths:
    """The files one agent reads in one scope."""

    agent: Agent
    scope: Scope
    config: Path
    """Where the server registration lives (JSON, or TOML for Codex)."""
    instructions: Path | None
    """The CLAUDE.md / AGENTS.md / GEMINI.md … the usage instructions go into; None for a
    client that reads no such file in this scope (the server's own MCP ``instructions``
    still tell it how to use the memory)."""
    cli: str
    """The agent's own command-line program, looked up on PATH."""
    hooks: Path
    """Where the recall hooks go: Claude Code's settings.json, Codex's hooks.json, the
    opencode plugin file, Gemini CLI's settings.json, Copilot's hooks file (for a client
    without hooks, its config: ``read_hooks`` then returns no event)."""


# ---------------------------------------------------------------------- one agent's setup
class AgentSetup(Protocol):
    """How ``ihmt install``, ``uninstall`` and ``doctor`` handle one agent.

    The methods read the disk and return :class:`~ihmt_cli._agent_plan.Step` s; none of
    them writes (a plan runs the steps, ``--dry-run`` only prints them). A step that
    changes a file backs it up first into ``backups``; what already is as it should be
    goes into ``unchanged``, one line each. The usage instructions go to
    :attr:`AgentPaths.instructions` the same way for every agent (``_agent_instructions``).

    Raises:
        click.ClickException: a config file does not parse, or holds something of the
            wrong shape; the message names the file and says nothing was changed.
    """

    agent: Agent
    """The name ``ihmt install`` takes (``claude-code``)."""
    name: str
    """How messages call the agent (``Claude Code``)."""
    restart: str
    """What the user does after an install so that the agent loads the tools."""
    trust_hint: str
    """What ``ihmt doctor`` tells the user to do when the agent does not trust the hooks
    (empty for an agent that runs hooks without asking)."""

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        """The agent's files in ``scope``, for the user ``home`` and the folder ``project``."""
        ...

    def read_registration(self, paths: AgentPaths) -> dict[str, Any] | None:
        """The ``ihmt-memory`` entry in the agent's config, as plain data, or None."""
        ...

    def registered_argv(self, entry: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
        """The command line and environment the agent's entry starts the server with."""
        ...

    def is_entry_complete(self, entry: Mapping[str, Any]) -> bool:
        """Whether an entry that starts the right server has the rest as install writes it."""
        ...

    def register_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec,
        entry: Mapping[str, Any] | None,
        *,
        backups: list[str],
    ) -> list[Step]:
        """Register the server (``entry``: the registration there now, if any)."""
        ...

    def unregister_steps(self, paths: AgentPaths, *, backups: list[str]) -> list[Step]:
        """Remove the registration there is, keeping everything else in the config."""
        ...

    def read_hooks(self, paths: AgentPaths) -> dict[str, bool]:
        """Which of our hook events are registered for the agent (by agent event name);
        empty for a client without hooks."""
        ...

    def hooks_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec | None,
        *,
        backups: list[str],
        unchanged: list[str],
    ) -> list[Step]:
        """Register (``spec``) or remove (None) the recall hooks; nothing when already so."""
        ...

    def notes(self, paths: AgentPaths, *, hooks: bool) -> list[str]:
        """What the user must know or do after an install of this agent."""
        ...

    def hook_trust(self, paths: AgentPaths, *, cwd: Path) -> bool | None:
        """For ``ihmt doctor``: whether the agent trusts our hooks; None: unknown, or an
        agent that runs hooks without asking."""
        ...


def scopes_of(setup: AgentSetup) -> tuple[Scope, ...]:
    """The scopes a client has: every one, unless its setup names fewer in ``scopes`` (an
    application with one config file for the user, like Claude Desktop or Windsurf). Its
    ``paths`` for a scope it lacks are the user scope's."""
    scopes = getattr(setup, "scopes", SCOPES)
    return tuple(s for s in SCOPES if s in scopes)
