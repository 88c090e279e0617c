"""The commands for agents: ``install``, ``uninstall`` and ``doctor`` set them up;
``hook`` (and its warm ``hook-server``) recalls for them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_plan import Plan
from ihmt_cli._agent_setup import server_spec
from ihmt_cli._base import State, command, pass_state
from ihmt_cli._hook import EVENTS, HOOK_AGENTS
from ihmt_cli._hook_stop import STOP_EVENTS
from ihmt_cli._install import install_plan, setup_of, uninstall_plan
from ihmt_cli._types import AGENTS, SCOPES, Agent, Scope

__all__ = [
    "doctor_command",
    "hook_command",
    "hook_server_command",
    "install_command",
    "uninstall_command",
]


def _ihmt_home(state: State, home: Path | None) -> Path:
    """The folder to register as IHMT_HOME: --home, else --path's parent, else $IHMT_HOME."""
    from ihmt_cli._base import store_under
    from ihmt_mcp import Settings

    if home is not None:
        return home.expanduser().resolve()
    if state.is_explicit_path:
        given = state.path.expanduser().resolve()
        expected = store_under(given.parent)
        if expected == given:
            return given.parent
        raise click.UsageError(
            f"the server finds its store at IHMT_HOME/{expected.name}"
            f", and {state.path} is not named so; pass --home DIR instead of --path"
        )
    return Settings.from_env().home.expanduser().resolve()


def _plan_json(plan: Plan, *, dry_run: bool) -> dict[str, Any]:
    return {
        "agent": plan.agent,
        "scope": plan.scope,
        "ihmt_home": plan.ihmt_home,
        "dry_run": dry_run,
        "changed": bool(plan.steps) and not dry_run,
        "steps": [step.to_json() for step in plan.steps],
        "unchanged": list(plan.unchanged),
        "backups": list(plan.backups),
        "backups_removed": list(plan.dropped),
        "notes": list(plan.notes),
    }


def _plan_text(plan: Plan, *, verb: str, dry_run: bool) -> str:
    setup = setup_of(plan.agent)
    head = f"ihmt {verb} {plan.agent} ({plan.scope} scope)"
    if plan.ihmt_home:
        head += f" · memory: IHMT_HOME={plan.ihmt_home}"
    lines = [head]
    if dry_run:
        if not plan.steps:
            lines.append("Nothing to do; --dry-run wrote nothing.")
        else:
            lines.append("--dry-run: nothing was written. It would:")
            for step in plan.steps:
                lines.append(f"- {step.summary}:")
                lines.extend(f"    {line}" for line in step.preview.rstrip("\n").splitlines())
    else:
        lines.extend(f"- done: {step.summary}" for step in plan.steps)
        if not plan.steps:
            lines.append("Nothing to do: already done.")
    lines.extend(f"- unchanged: {what}" for what in plan.unchanged)
    if plan.backups:
        lines.append("Backups of the original files: " + ", ".join(plan.backups))
    if plan.dropped:
        lines.append(
            "Removed backups (the files are back to their originals): " + ", ".join(plan.dropped)
        )
    lines.extend(f"Note: {note}" for note in plan.notes)
    if verb == "install" and not dry_run:
        lines.append(f"{setup.restart} Check it with 'ihmt doctor'.")
    elif verb == "uninstall" and not dry_run and plan.steps:
        lines.append(f"{setup.name} no longer has the memory; the memory itself is untouched.")
    return "\n".join(lines)


_agent_argument = click.argument("agent", type=click.Choice(AGENTS), metavar="AGENT")
_scope_option = click.option(
    "--scope",
    type=click.Choice(SCOPES),
    default="user",
    show_default=True,
    help="user: every project of this user; project: the current folder only.",
)
_dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Print the exact command or JSON/TOML; write nothing."
)


@command("install", configures_logging=False)
@_agent_argument
@_scope_option
@_dry_run_option
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    help="The IHMT_HOME the server uses (default: $IHMT_HOME, else ~/.ihmt).",
)
@click.option(
    "--no-hooks",
    is_flag=True,
    help="Leave out the recall hooks (and remove ones an earlier install added).",
)
@click.option(
    "--no-capture",
    is_flag=True,
    help="Leave out the capture hook ('ihmt hook stop', docs/capture.md) and keep recall.",
)
@pass_state
def install_command(
    state: State,
    agent: Agent,
    scope: Scope,
    dry_run: bool,
    home: Path | None,
    no_hooks: bool,
    no_capture: bool,
) -> None:
    """Register the memory server and its recall hooks with AGENT (an agent or an editor).

    AGENT is claude-code, codex, opencode, gemini-cli or copilot, or one of the editors
    cursor, windsurf, claude-desktop and vscode (docs/clients.md lists each one's files).
    Uses the agent's own CLI when it is on PATH (Claude Code, Codex), else edits its
    config file keeping everything else (comments too); adds the recall hooks ('ihmt
    hook': Claude Code's settings.json, Codex's hooks.json, an opencode plugin, Gemini
    CLI's settings.json, a Copilot CLI hooks file; the editors have none) so that the
    agent gets what the memory knows without calling a tool, and the capture hook ('ihmt
    hook stop' on Claude Code's Stop and PreCompact, Codex's Stop, opencode's idle
    session) that saves the durable statements the user made; appends the usage
    instructions to its CLAUDE.md / AGENTS.md / GEMINI.md / copilot-instructions.md
    once. Claude Desktop and Windsurf have the user scope only. Before its first change
    a file is copied once to <file>.bak-ihmt. Running it again changes nothing. Install
    several agents with the same IHMT_HOME and they share one memory.

    --json: {agent, scope, ihmt_home, dry_run, changed, steps, unchanged, backups,
    backups_removed, notes}; "notes" says what the user must know or do (trust Codex's
    hooks with /hooks, which tools Codex approves, files not to commit).
    """
    spec = server_spec(_ihmt_home(state, home))
    if no_capture:
        spec = replace(spec, capture=False)
    plan = install_plan(agent, scope, spec, hooks=not no_hooks)
    if not dry_run:
        plan.run()
    state.emit(_plan_json(plan, dry_run=dry_run), _plan_text(plan, verb="install", dry_run=dry_run))


@command("uninstall", configures_logging=False)
@_agent_argument
@_scope_option
@_dry_run_option
@pass_state
def uninstall_command(state: State, agent: Agent, scope: Scope, dry_run: bool) -> None:
    """Unregister the memory server from AGENT; remove its hooks and usage instructions.

    Removes exactly what install added (a file it created is deleted), and each
    <file>.bak-ihmt whose file is back to its original bytes ("backups_removed" in
    --json). The memory itself is never touched.
    """
    plan = uninstall_plan(agent, scope)
    if not dry_run:
        plan.run()
    state.emit(
        _plan_json(plan, dry_run=dry_run), _plan_text(plan, verb="uninstall", dry_run=dry_run)
    )


MAX_HOOK_INPUT = 4 * 1024 * 1024
"""A hook reads at most this much of stdin (a prompt with a pasted log is still whole)."""


# A hook logs to IHMT_HOME/hooks/hooks.log and must never write to the agent's stderr.
@command("hook", configures_logging=False)
@click.argument("event", type=click.Choice(sorted({*EVENTS, *STOP_EVENTS})), metavar="EVENT")
@click.option(
    "--agent",
    type=click.Choice(HOOK_AGENTS),
    default="claude-code",
    show_default=True,
    help="Who calls: claude-code, codex and gemini-cli get hookSpecificOutput JSON, copilot "
    "a top-level additionalContext, opencode plain text.",
)
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    help="The IHMT_HOME to recall from (default: $IHMT_HOME, else ~/.ihmt).",
)
def hook_command(event: str, agent: Agent, home: Path | None) -> None:
    """Recall or capture for an agent's lifecycle hook: EVENT is session-start, prompt or
    stop.

    Reads the agent's hook JSON on stdin (session_id, cwd, prompt, source). On a prompt it
    prints the memory's compact answer only when it is confident, ambiguous or relays a
    correction, and never a memory already added in this session; on session start, a
    short digest of the project. On stop (Stop, PreCompact; Gemini CLI's AfterAgent,
    SessionEnd) it reads the new part of the session's transcript and saves the durable
    statements the user made, never twice (docs/capture.md). Prints nothing otherwise,
    always exits 0, and logs each run to IHMT_HOME/hooks/hooks.log ('ihmt doctor' shows
    the last one). 'ihmt install' registers it.
    """
    import sys

    from ihmt_cli._hook import run_hook
    from ihmt_mcp import Settings

    target = home.expanduser().resolve() if home is not None else Settings.from_env().home
    try:
        raw = b"" if sys.stdin.isatty() else sys.stdin.buffer.read(MAX_HOOK_INPUT)
    except (OSError, ValueError):
        raw = b""
    if event in STOP_EVENTS:
        from ihmt_cli._hook_stop import run_stop

        output = run_stop(agent, raw, home=target)
    else:
        output = run_hook(EVENTS[event], agent, raw, home=target)
    if output:
        sys.stdout.write(output)
        sys.stdout.flush()


@command("hook-server", hidden=True, configures_logging=False)
@click.option("--home", type=click.Path(path_type=Path, file_okay=False), required=True)
@click.option("--idle", type=click.FloatRange(min=1), default=None)
def hook_server_command(home: Path, idle: float | None) -> None:
    """The warm recall server ``ihmt hook`` starts in the background (see _recall_server)."""
    import os

    from ihmt_cli._recall_server import IDLE_SECONDS, serve

    if idle is None:
        try:
            idle = float(os.environ.get("IHMT_HOOK_IDLE") or IDLE_SECONDS)
        except ValueError:
            idle = IDLE_SECONDS
    serve(home.expanduser().resolve(), dict(os.environ), idle=max(1.0, idle))


@command("doctor", configures_logging=False)
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    help="The IHMT_HOME to check (default: $IHMT_HOME, else ~/.ihmt).",
)
@click.option("--no-connect", is_flag=True, help="Do not start the registered servers.")
@pass_state
def doctor_command(state: State, home: Path | None, no_connect: bool) -> None:
    """Check the store, which agents have the server registered, and that each connects.

    Starts each registered server as its agent would and lists its tools through the MCP
    SDK's stdio client; reports each agent's recall hooks: present, trusted (Codex, asked
    through codex app-server), last run and last error (from IHMT_HOME/hooks/hooks.log).
    --json: each registered agent's row has "hooks": {path, present (the recall hooks),
    capture (the capture hook, null for an agent without), events, trusted, last_run,
    last_outcome, last_error}; "recall_server" is {pid, since, mode} while the
    hooks' warm server runs, else null; "capture" is what the last stop captured ({time,
    agent, project, session, saved: [{id, text}], replaced, held, refused, pending}), or
    null. A Claude Code or Codex plugin that brings the memory is listed under its agent's
    user row as "plugins": [{plugin, version, scope, project, enabled, applies, path,
    servers, hooks, memory_server, ihmt_home, same_memory, hooks_trusted, probe}], and
    "warnings" says when both a plugin and ihmt install set the memory up. Exits 1 when
    the store is damaged or a registered server (or an enabled plugin's) does not answer.
    """
    from ihmt_cli._base import store_under
    from ihmt_cli._doctor import agent_rows, doctor_text, store_health

    ihmt_home = _ihmt_home(state, home)
    health = store_health(store_under(ihmt_home))
    agents = agent_rows(ihmt_home, no_connect=no_connect)
    failed = not health.ok or any(
        a.get("error") or (a.get("probe") and not a["probe"]["connects"]) for a in agents
    )
    failed = failed or any(  # an enabled plugin whose server does not answer
        p.get("probe") and not p["probe"]["connects"] for a in agents for p in a.get("plugins", ())
    )
    from ihmt_cli._hook_stop import last_capture
    from ihmt_cli._recall_server import server_status

    data = {
        "ok": not failed,
        "ihmt_home": str(ihmt_home),
        "store": health.to_json(),
        "recall_server": server_status(ihmt_home),
        "capture": last_capture(ihmt_home),
        "agents": agents,
    }
    state.emit(data, doctor_text(data))
    if failed:
        click.get_current_context().exit(1)
