"""The commands that set agents up: ``install``, ``uninstall`` and ``doctor``.

Imported at the end of ``_app`` so that the commands attach to the ``ihmt`` group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ihmt_cli._app import CONFIG_FILE, State, command
from ihmt_cli._install import (
    AGENTS,
    BEGIN_MARKER,
    SCOPES,
    Plan,
    agent_paths,
    install_plan,
    read_registration,
    registered_argv,
    server_spec,
    uninstall_plan,
)

__all__: list[str] = []

AGENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "opencode": "opencode"}
RESTART = {
    "claude-code": "Start a new Claude Code session (claude) so the memory tools load.",
    "codex": "Start a new Codex session (codex) so the memory tools load.",
    "opencode": "Start a new opencode session (opencode) so the memory tools load.",
}


def _ihmt_home(state: State, home: Path | None) -> Path:
    """The folder to register as IHMT_HOME: --home, else --path's parent, else $IHMT_HOME."""
    from ihmt_mcp import Settings

    if home is not None:
        return home.expanduser().resolve()
    if state.is_explicit_path:
        parent = state.path.expanduser().resolve().parent
        if Settings.for_home(parent).store_path == state.path.expanduser().resolve():
            return parent
        raise click.UsageError(
            f"the server finds its store at IHMT_HOME/{Settings.for_home(parent).store_path.name}"
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
        lines.append("Backups of the edited files: " + ", ".join(plan.backups))
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


@command("install")
@_agent_argument
@_scope_option
@_dry_run_option
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    help="The IHMT_HOME the server uses (default: $IHMT_HOME, else ~/.ihmt).",
)
def install_command(agent: str, scope: str, dry_run: bool, home: Path | None) -> None:
    """Register the memory server with AGENT (claude-code, codex or opencode).

    Uses the agent's own CLI when it is on PATH, else edits its config file keeping
    everything else; appends the usage instructions to its CLAUDE.md / AGENTS.md once.
    Every edited file is backed up as <file>.bak-ihmt. Running it again changes nothing.
    Install several agents with the same IHMT_HOME and they share one memory.
    """
    state = State.current()
    spec = server_spec(_ihmt_home(state, home))
    plan = install_plan(agent, scope, spec)
    if not dry_run:
        plan.run()
    state.emit(_plan_json(plan, dry_run=dry_run), _plan_text(plan, verb="install", dry_run=dry_run))


@command("uninstall")
@_agent_argument
@_scope_option
@_dry_run_option
def uninstall_command(agent: str, scope: str, dry_run: bool) -> None:
    """Unregister the memory server from AGENT and remove the usage instructions.

    The memory itself is never touched.
    """
    state = State.current()
    plan = uninstall_plan(agent, scope)
    if not dry_run:
        plan.run()
    state.emit(
        _plan_json(plan, dry_run=dry_run), _plan_text(plan, verb="uninstall", dry_run=dry_run)
    )


@command("doctor")
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    help="The IHMT_HOME to check (default: $IHMT_HOME, else ~/.ihmt).",
)
@click.option("--no-connect", is_flag=True, help="Do not start the registered servers.")
def doctor_command(home: Path | None, no_connect: bool) -> None:
    """Check the store, which agents have the server registered, and that each connects.

    Exits 1 when the store is damaged or a registered server does not answer.
    """
    from ihmt_cli._doctor import probe_server, store_health
    from ihmt_mcp import Settings

    state = State.current()
    ihmt_home = _ihmt_home(state, home)
    store_path = Settings.for_home(ihmt_home).store_path
    health = store_health(store_path, CONFIG_FILE)
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
            argv, env = registered_argv(agent, entry)
            row = _agent_row(agent, scope, paths.config, registered=True)
            row["command"] = argv
            row["ihmt_home"] = env.get("IHMT_HOME")
            row["same_memory"] = (
                row["ihmt_home"] is not None and Path(row["ihmt_home"]).resolve() == ihmt_home
            )
            text = paths.instructions.read_text("utf-8") if paths.instructions.exists() else ""
            row["instructions"] = BEGIN_MARKER in text
            if not no_connect:
                row["probe"] = probe_server(argv, env).to_json()
            agents.append(row)
    failed = not health.ok or any(
        a.get("error") or (a.get("probe") and not a["probe"]["connects"]) for a in agents
    )
    data = {
        "ok": not failed,
        "ihmt_home": str(ihmt_home),
        "store": health.to_json(),
        "agents": agents,
    }
    state.emit(data, _doctor_text(data))
    if failed:
        click.get_current_context().exit(1)


def _agent_row(
    agent: str, scope: str, config: Path, *, registered: bool = False, error: str = ""
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
        probe = row.get("probe")
        if probe is not None:
            if probe["connects"]:
                parts.append(f"connects ✔ ({len(probe['tools'])} tools)")
            else:
                parts.append(f"does NOT connect: {probe['error']}")
        lines.append(f"{label}: " + " · ".join(parts))
    lines.append("All good." if data["ok"] else "Problems found (see above).")
    return "\n".join(lines)
