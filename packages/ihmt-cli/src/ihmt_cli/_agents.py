"""The commands for agents: ``install``, ``uninstall`` and ``doctor`` set them up;
``hook`` (and its warm ``hook-server``) recalls for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ihmt_cli._base import State, command, pass_state
from ihmt_cli._hook import EVENTS, HOOK_AGENTS
from ihmt_cli._install import (
    BEGIN_MARKER,
    Plan,
    agent_paths,
    install_plan,
    read_hooks,
    read_registration,
    registered_argv,
    server_spec,
    uninstall_plan,
)
from ihmt_cli._types import AGENTS, SCOPES, Agent, Scope

__all__ = [
    "doctor_command",
    "hook_command",
    "hook_server_command",
    "install_command",
    "uninstall_command",
]

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "opencode": "opencode"}
RESTART = {
    "claude-code": "Start a new Claude Code session (claude) so the memory tools load.",
    "codex": "Start a new Codex session (codex) so the memory tools load.",
    "opencode": "Start a new opencode session (opencode) so the memory tools load.",
}


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
    name = AGENT_NAMES[plan.agent]
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
        lines.append(f"{RESTART[plan.agent]} Check it with 'ihmt doctor'.")
    elif verb == "uninstall" and not dry_run and plan.steps:
        lines.append(f"{name} no longer has the memory; the memory itself is untouched.")
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
@pass_state
def install_command(
    state: State, agent: Agent, scope: Scope, dry_run: bool, home: Path | None, no_hooks: bool
) -> None:
    """Register the memory server and its recall hooks with AGENT (claude-code, codex or
    opencode).

    Uses the agent's own CLI when it is on PATH, else edits its config file keeping
    everything else (comments too); adds the recall hooks ('ihmt hook': Claude Code's
    settings.json, Codex's hooks.json, an opencode plugin) so that the agent gets what
    the memory knows without calling a tool; appends the usage instructions to its
    CLAUDE.md / AGENTS.md once. Before its first change a file is copied once to
    <file>.bak-ihmt. Running it again changes nothing. Install several agents with the
    same IHMT_HOME and they share one memory.

    --json: {agent, scope, ihmt_home, dry_run, changed, steps, unchanged, backups,
    backups_removed, notes}; "notes" says what the user must know or do (trust Codex's
    hooks with /hooks, which tools Codex approves, files not to commit).
    """
    spec = server_spec(_ihmt_home(state, home))
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
@click.argument("event", type=click.Choice(sorted(EVENTS)), metavar="EVENT")
@click.option(
    "--agent",
    type=click.Choice(HOOK_AGENTS),
    default="claude-code",
    show_default=True,
    help="Who calls: claude-code and codex get hookSpecificOutput JSON, opencode plain text.",
)
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    help="The IHMT_HOME to recall from (default: $IHMT_HOME, else ~/.ihmt).",
)
def hook_command(event: str, agent: Agent, home: Path | None) -> None:
    """Recall for an agent's lifecycle hook: EVENT is session-start or prompt.

    Reads the agent's hook JSON on stdin (session_id, cwd, prompt, source). On a prompt it
    prints the memory's compact answer only when it is confident, ambiguous or relays a
    correction, and never a memory already added in this session; on session start, a
    short digest of the project. Prints nothing otherwise, always exits 0, and logs each
    run to IHMT_HOME/hooks/hooks.log ('ihmt doctor' shows the last one). 'ihmt install'
    registers it.
    """
    import sys

    from ihmt_cli._hook import run_hook
    from ihmt_mcp import Settings

    target = home.expanduser().resolve() if home is not None else Settings.from_env().home
    try:
        raw = b"" if sys.stdin.isatty() else sys.stdin.buffer.read(MAX_HOOK_INPUT)
    except (OSError, ValueError):
        raw = b""
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
    --json: each registered agent's row has "hooks": {path, present, events, trusted,
    last_run, last_outcome, last_error}; "recall_server" is {pid, since, mode} while the
    hooks' warm server runs, else null. Exits 1 when the store is damaged or a registered
    server does not answer.
    """
    from ihmt_cli._base import store_under
    from ihmt_cli._doctor import codex_hook_trust, probe_server, store_health
    from ihmt_cli._hook import last_runs

    ihmt_home = _ihmt_home(state, home)
    health = store_health(store_under(ihmt_home))
    runs = last_runs(ihmt_home)
    agents: list[dict[str, Any]] = []
    seen: set[Path] = set()
    for agent in AGENTS:
        for scope in SCOPES:
            paths = agent_paths(agent, scope)
            if paths.config in seen:
                continue  # run from the home folder, a project file is the user one
            seen.add(paths.config)
            try:
                entry = read_registration(paths)
            except click.ClickException as exc:
                agents.append(_agent_row(agent, scope, paths.config, error=exc.format_message()))
                continue
            if entry is None:
                if scope == "user":
                    agents.append(_agent_row(agent, scope, paths.config))
                continue
            try:
                hooks = _hooks_row(paths, read_hooks(paths), runs.get(agent, {}))
            except click.ClickException as exc:
                hooks = {"path": str(paths.hooks), "present": False, "error": exc.format_message()}
            if hooks["present"] and agent == "codex" and not no_connect:
                hooks["trusted"] = codex_hook_trust(paths.hooks, cwd=Path.cwd())
            argv, env = registered_argv(agent, entry)
            row = _agent_row(agent, scope, paths.config, registered=True)
            row["command"] = argv
            row["ihmt_home"] = env.get("IHMT_HOME")
            row["same_memory"] = (
                row["ihmt_home"] is not None and Path(row["ihmt_home"]).resolve() == ihmt_home
            )
            text = paths.instructions.read_text("utf-8") if paths.instructions.exists() else ""
            row["instructions"] = BEGIN_MARKER in text
            row["hooks"] = hooks
            if not no_connect:
                row["probe"] = probe_server(argv, env).to_json()
            agents.append(row)
    failed = not health.ok or any(
        a.get("error") or (a.get("probe") and not a["probe"]["connects"]) for a in agents
    )
    from ihmt_cli._recall_server import server_status

    data = {
        "ok": not failed,
        "ihmt_home": str(ihmt_home),
        "store": health.to_json(),
        "recall_server": server_status(ihmt_home),
        "agents": agents,
    }
    state.emit(data, _doctor_text(data))
    if failed:
        click.get_current_context().exit(1)


def _hooks_row(paths: Any, events: dict[str, bool], run: dict[str, Any]) -> dict[str, Any]:
    last, error = run.get("last_run"), run.get("last_error")
    return {
        "path": str(paths.hooks),
        "present": all(events.values()),
        "events": events,
        "trusted": None,
        "last_run": last["time"] if last else None,
        "last_outcome": (last.get("outcome") or "") if last else None,
        "last_error": f"{error['time']}: {error['error']}" if error else None,
    }


def _hooks_text(hooks: dict[str, Any]) -> str:
    if hooks.get("error"):
        return f"hooks: PROBLEM · {hooks['error']}"
    if not hooks["present"]:
        return "no recall hooks (ihmt install adds them)"
    text = "recall hooks present"
    if hooks.get("trusted") is False:
        text += " but NOT trusted (in codex: /hooks, then trust the ihmt hooks)"
    elif hooks.get("trusted") is True:
        text += " and trusted"
    text += f" · last run {hooks['last_run'] or 'never'}"
    if hooks.get("last_error"):
        text += f" · last error {hooks['last_error']}"
    return text


def _agent_row(
    agent: Agent, scope: Scope, config: Path, *, registered: bool = False, error: str = ""
) -> dict[str, Any]:
    return {
        "agent": agent,
        "scope": scope,
        "config": str(config),
        "registered": registered,
        "error": error,
    }


def _doctor_text(data: dict[str, Any]) -> str:
    store = data["store"]
    lines = [f"IHMT_HOME {data['ihmt_home']}"]
    if not store["exists"]:
        lines.append(
            f"store  {store['path']}: not created yet (the server creates it on the first save)"
        )
    elif store["ok"]:
        lines.append(
            f"store  {store['path']}: OK · {store['leaves']} memories · unreachable "
            f"{store['unreachable']} · format {store['format_version']} (this ihmt reads up "
            f"to {store['supported_format_version']})"
        )
    else:
        lines.append(f"store  {store['path']}: PROBLEM · {store['error']}")
    if store.get("search"):
        from ihmt_cli._render import search_mode_text

        lines.append(f"search {search_mode_text(store['search'])}")
    server = data.get("recall_server")
    if server:
        lines.append(
            f"recall server: running (pid {server['pid']}, {server['mode']} search) for the hooks"
        )
    for row in data["agents"]:
        label = f"{row['agent']} ({row['scope']})"
        if row["error"]:
            lines.append(f"{label}: PROBLEM · {row['error']}")
            continue
        if not row["registered"]:
            lines.append(f"{label}: not registered · ihmt install {row['agent']}")
            continue
        parts = [f"registered in {row['config']}", f"IHMT_HOME={row['ihmt_home']}"]
        if not row["same_memory"]:
            parts.append("a different memory from the one checked above")
        parts.append("instructions present" if row["instructions"] else "no instructions")
        parts.append(_hooks_text(row["hooks"]))
        probe = row.get("probe")
        if probe is not None:
            if probe["connects"]:
                parts.append(f"connects ✔ ({len(probe['tools'])} tools)")
            else:
                parts.append(f"does NOT connect: {probe['error']}")
        lines.append(f"{label}: " + " · ".join(parts))
    lines.append("All good." if data["ok"] else "Problems found (see above).")
    return "\n".join(lines)
