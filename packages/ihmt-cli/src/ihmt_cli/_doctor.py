"""``ihmt doctor``: is the store healthy, which agents have the server, does it answer.

The connection check starts each registered server exactly as its agent would (the
same command line and environment) and opens a session with the MCP SDK's own stdio
client — ``initialize`` and ``tools/list`` — bounded in time. Each agent's row says where
it is registered, with which memory, and how its recall hooks fare (what the agent's
setup knows: ``AgentSetup.hook_trust``); :func:`doctor_text` is the report for people.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_setup import BEGIN_MARKER, AgentPaths, scopes_of
from ihmt_cli._install import agent_paths, setup_of
from ihmt_cli._types import AGENTS, Agent, Scope

__all__ = ["Probe", "StoreHealth", "agent_rows", "doctor_text", "probe_server", "store_health"]

PROBE_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """The outcome of starting a server and initializing an MCP session with it."""

    connects: bool
    tools: tuple[str, ...] = ()
    server: str = ""
    """``serverInfo.name`` and version, as the server reported them."""
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "connects": self.connects,
            "tools": list(self.tools),
            "server": self.server,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreHealth:
    """What ``ihmt doctor`` found at the store path."""

    path: str
    exists: bool
    ok: bool
    leaves: int = 0
    unreachable: int = 0
    format_version: int | None = None
    supported_format_version: int = 0
    error: str = ""
    search: dict[str, Any] | None = None
    """What search uses (``mode``, ``model``, ``reason``, ``vectors_missing``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "exists": self.exists,
            "ok": self.ok,
            "leaves": self.leaves,
            "unreachable": self.unreachable,
            "format_version": self.format_version,
            "supported_format_version": self.supported_format_version,
            "error": self.error,
            "search": self.search,
        }


def store_health(path: Path) -> StoreHealth:
    """Open the store read-side and check it: opens, nothing unreachable, a known format."""
    from dataclasses import replace

    from ihmt_mcp import Memory, Settings
    from ihmt_store import FORMAT_VERSION, IhmtError, Store

    if not Store.exists(path):
        return StoreHealth(
            path=str(path), exists=False, ok=True, supported_format_version=FORMAT_VERSION
        )
    try:
        memory = Memory.open(replace(Settings.from_env(), store_path=path))
    except (IhmtError, OSError, ValueError) as exc:
        return StoreHealth(
            path=str(path),
            exists=True,
            ok=False,
            supported_format_version=FORMAT_VERSION,
            error=str(exc) or type(exc).__name__,
        )
    try:
        stats = memory.stats()
        version = memory.store.config.format_version
        search = memory.search_mode()
        edited = memory.store.hand_edits()
        # What rebuild would list, read the way rebuild reads: a rebuild does not fix them.
        unusable = memory.store.file_problems()
        secrets = memory.secret_leaves()
    finally:
        memory.close()
    problems = []
    if unusable:
        shown = "; ".join(
            f"{p.path}: {p.reason.removeprefix(f'{path / p.path}: ')}" for p in unusable[:5]
        )
        more = f"; and {len(unusable) - 5} more" if len(unusable) > 5 else ""
        problems.append(
            f"{len(unusable)} files in the store are not memories IHMT can read, and a "
            f"rebuild leaves them as they are ({shown}{more})"
        )
    if stats.unreachable:
        problems.append(f"{stats.unreachable} memories unreachable from the trunk; ihmt rebuild")
    if edited:
        shown = ", ".join(edited[:5]) + (f" and {len(edited) - 5} more" if len(edited) > 5 else "")
        problems.append(
            f"{len(edited)} memories were edited by hand since they were indexed ({shown}); "
            "the next search re-indexes them, or run ihmt rebuild"
        )
    if secrets:
        shown = ", ".join(f"{rel} ({what})" for _id, rel, what in secrets[:5])
        more = f" and {len(secrets) - 5} more" if len(secrets) > 5 else ""
        problems.append(
            f"{len(secrets)} memories hold what looks like a secret, written in their file by "
            f"hand or pulled ({shown}{more}); searches do not show those lines and syncs do "
            "not send them: remove the secret from each file"
        )
    return StoreHealth(
        path=str(path),
        exists=True,
        ok=not problems,
        leaves=stats.leaves,
        unreachable=stats.unreachable,
        format_version=version,
        supported_format_version=FORMAT_VERSION,
        error="; ".join(problems),
        search=search,
    )


async def _probe(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None) -> Probe:
    import tempfile

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=argv[0], args=list(argv[1:]), env={**os.environ, **env}, cwd=cwd
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                listed = await session.list_tools()
        except Exception as exc:  # noqa: BLE001 — any failure to talk is the verdict
            errlog.seek(0)
            tail = errlog.read().strip().splitlines()
            said = str(exc) or type(exc).__name__
            if tail:
                said += f" (server stderr: {tail[-1][:200]})"
            return Probe(connects=False, error=said)
    info = init.server_info
    return Probe(
        connects=True,
        tools=tuple(tool.name for tool in listed.tools),
        server=f"{info.name} {info.version or ''}".strip(),
    )


def probe_server(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float = PROBE_TIMEOUT,
    cwd: Path | None = None,
) -> Probe:
    """Start ``argv`` with ``env`` added to ours, through the MCP SDK's own stdio client:
    ``initialize`` then ``tools/list``, within ``timeout`` seconds."""
    import anyio

    if not argv or not argv[0]:
        return Probe(connects=False, error="the registration has no command")
    if shutil.which(argv[0]) is None:
        return Probe(connects=False, error=f"cannot start {argv[0]}: no such program")

    async def bounded() -> Probe:
        with anyio.move_on_after(timeout) as scope:
            return await _probe(argv, env, cwd)
        assert scope.cancelled_caught
        return Probe(connects=False, error=f"no answer within {timeout:.0f} s")

    return anyio.run(bounded)


# ---------------------------------------------------------------------- the agents' rows
def agent_rows(ihmt_home: Path, *, no_connect: bool) -> list[dict[str, Any]]:
    """One row per agent and scope: the user scope always, a project one when it
    registers the server; with ``no_connect``, no server is started."""
    from ihmt_cli._hook import last_runs

    runs = last_runs(ihmt_home)
    agents: list[dict[str, Any]] = []
    seen: set[Path] = set()
    for agent in AGENTS:
        setup = setup_of(agent)
        for scope in scopes_of(setup):
            paths = agent_paths(agent, scope)
            if paths.config in seen:
                continue  # run from the home folder, a project file is the user one
            seen.add(paths.config)
            try:
                entry = setup.read_registration(paths)
            except click.ClickException as exc:
                agents.append(_agent_row(agent, scope, paths.config, error=exc.format_message()))
                continue
            if entry is None:
                if scope == "user":
                    agents.append(_agent_row(agent, scope, paths.config))
                continue
            try:
                capture = {e for e, ours in getattr(setup, "hook_events", ()) if ours == "stop"}
                hooks = _hooks_row(paths, setup.read_hooks(paths), runs.get(agent, {}), capture)
            except click.ClickException as exc:
                hooks = {"path": str(paths.hooks), "present": False, "error": exc.format_message()}
            if hooks["present"] and not no_connect:
                hooks["trusted"] = setup.hook_trust(paths, cwd=Path.cwd())
            argv, env = setup.registered_argv(entry)
            row = _agent_row(agent, scope, paths.config, registered=True)
            row["command"] = argv
            row["ihmt_home"] = env.get("IHMT_HOME")
            row["same_memory"] = (
                row["ihmt_home"] is not None and Path(row["ihmt_home"]).resolve() == ihmt_home
            )
            row["instructions"] = _has_instructions(paths.instructions)
            row["hooks"] = hooks
            if not no_connect:
                row["probe"] = probe_server(argv, env).to_json()
            agents.append(row)
    from ihmt_cli._doctor_plugins import attach_plugins

    attach_plugins(agents, ihmt_home, no_connect=no_connect)
    return agents


def _has_instructions(path: Path | None) -> bool | None:
    """Whether the usage instructions are in the client's file; None: it reads none."""
    if path is None:
        return None
    return BEGIN_MARKER in (path.read_text("utf-8") if path.exists() else "")


def _hooks_row(
    paths: AgentPaths, events: dict[str, bool], run: dict[str, Any], capture: set[str]
) -> dict[str, Any]:
    """``present``: the recall hooks are all there; ``capture``: the capture hook's events
    (``capture``, the agent's names for them) are all there, None for an agent without."""
    last, error = run.get("last_run"), run.get("last_error")
    recall = [on for event, on in events.items() if event not in capture]
    return {
        "path": str(paths.hooks),
        "present": bool(recall) and all(recall),
        "capture": all(events.get(e, False) for e in capture) if capture else None,
        "events": events,
        "trusted": None,
        "last_run": last["time"] if last else None,
        "last_outcome": (last.get("outcome") or "") if last else None,
        "last_error": f"{error['time']}: {error['error']}" if error else None,
    }


def _hooks_text(hooks: dict[str, Any], trust_hint: str) -> str:
    if hooks.get("error"):
        return f"hooks: PROBLEM · {hooks['error']}"
    if hooks.get("events") == {}:
        return "no hooks in this client (the memory's tools only)"
    if not hooks["present"]:
        return "no recall hooks (ihmt install adds them)"
    text = "recall hooks present"
    if hooks.get("capture") is False:
        text += ", no capture hook (installed with --no-capture)"
    if hooks.get("trusted") is False:
        text += f" but NOT trusted ({trust_hint})"
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


def doctor_text(data: dict[str, Any]) -> str:
    """The report ``ihmt doctor`` prints without ``--json``."""
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
    if "capture" in data:
        from ihmt_cli._hook_stop import capture_text

        lines.append(capture_text(data["capture"]))
    from ihmt_cli._doctor_plugins import plugin_lines, set_up_by_plugin

    for row in data["agents"]:
        label = f"{row['agent']} ({row['scope']})"
        if row["error"]:
            lines.append(f"{label}: PROBLEM · {row['error']}")
            continue
        if not row["registered"]:
            if set_up_by_plugin(row):
                lines.append(f"{label}: set up by its plugin (not by ihmt install)")
            else:
                lines.append(f"{label}: not registered · ihmt install {row['agent']}")
            lines += plugin_lines(row)
            continue
        parts = [f"registered in {row['config']}", f"IHMT_HOME={row['ihmt_home']}"]
        if not row["same_memory"]:
            parts.append("a different memory from the one checked above")
        if row["instructions"] is not None:
            parts.append("instructions present" if row["instructions"] else "no instructions")
        parts.append(_hooks_text(row["hooks"], setup_of(row["agent"]).trust_hint))
        probe = row.get("probe")
        if probe is not None:
            if probe["connects"]:
                parts.append(f"connects ✔ ({len(probe['tools'])} tools)")
            else:
                parts.append(f"does NOT connect: {probe['error']}")
        lines.append(f"{label}: " + " · ".join(parts))
        lines += plugin_lines(row)
    warned = any(row.get("warnings") for row in data["agents"])
    if not data["ok"]:
        lines.append("Problems found (see above).")
    else:
        lines.append("Works, with warnings (see above)." if warned else "All good.")
    return "\n".join(lines)
