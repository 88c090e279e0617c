"""The Set up screen's routes: preview and run ``ihmt install`` for an agent, and create
a memory folder.

``ihmt install`` runs as a child process of the same interpreter (what the user would
type, shown beside it), never in the server's own process.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ihmt_cli._base import store_under
from ihmt_cli._gui_http import choice, confirmed, endpoint, folder_param, gui_of, json_body
from ihmt_cli._gui_session import ApiError
from ihmt_cli._types import AGENTS, SCOPES, Agent, Scope

if TYPE_CHECKING:
    from starlette.requests import Request

__all__ = [
    "AGENTS",
    "SCOPES",
    "install_argv",
    "is_temporary",
    "setup_apply",
    "setup_create",
    "setup_preview",
    "suggested_home",
]

INSTALL_TIMEOUT = 120.0


@endpoint
async def setup_preview(request: Request) -> dict[str, Any]:
    """What ``ihmt install`` would do (its --dry-run), and which recall hooks are there."""
    params = request.query_params
    agent = choice(params.get("agent"), "agent", AGENTS)
    scope = choice(params.get("scope"), "scope", SCOPES)
    home = folder_param(params.get("home"), "the memory folder")
    project_dir = _project_dir(params.get("project_dir"), scope)
    store = store_under(home)
    data: dict[str, Any] = {
        "command": _shown_command(agent, scope, home),
        "dry_run_command": _shown_command(agent, scope, home, dry_run=True),
        "cwd": str(project_dir) if project_dir else None,
        "store": str(store),
        "store_exists": _store_exists(store),
    }
    argv = install_argv(agent, scope, home, dry_run=True)
    loop = asyncio.get_running_loop()
    data["preview"] = await loop.run_in_executor(None, _run_install, argv, project_dir)
    data["hooks"] = await loop.run_in_executor(None, _hooks_state, scope, project_dir)
    return data


@endpoint
async def setup_create(request: Request) -> dict[str, Any]:
    """Create the memory of a home folder (or open the one there), and show it."""
    body = await json_body(request)
    home = folder_param(body.get("home"), "the memory folder")
    store = store_under(home)
    gui = gui_of(request)

    def create() -> dict[str, Any]:
        from ihmt_mcp import Memory

        existed = _store_exists(store)
        if store.exists() and not store.is_dir():
            raise ApiError(400, f"{store} is a file, not a folder")
        Memory.init(store).close()
        gui.store_path = store
        gui.home = home
        return {"store": str(store), "created": not existed}

    return await gui.offload(create)


@endpoint
async def setup_apply(request: Request) -> dict[str, Any]:
    """Run ``ihmt install`` for an agent (confirmed), and say how it went."""
    body = await json_body(request)
    agent = choice(body.get("agent"), "agent", AGENTS)
    scope = choice(body.get("scope"), "scope", SCOPES)
    home = folder_param(body.get("home"), "the memory folder")
    project_dir = _project_dir(body.get("project_dir"), scope)
    confirmed(body, "running ihmt install")
    argv = install_argv(agent, scope, home, dry_run=False)
    loop = asyncio.get_running_loop()
    outcome = await loop.run_in_executor(None, _run_install, argv, project_dir)
    return {**outcome, "command": _shown_command(agent, scope, home)}


def _store_exists(store: Path) -> bool:
    from ihmt_store import Store

    return Store.exists(store)


def install_argv(agent: Agent, scope: Scope, home: Path, *, dry_run: bool) -> list[str]:
    """The ``ihmt install`` child process the Set up screen runs (same interpreter)."""
    argv = [sys.executable, "-m", "ihmt_cli", "install", agent, "--scope", scope]
    argv += ["--home", str(home)]
    if dry_run:
        argv.append("--dry-run")
    return argv


def _shown_command(agent: Agent, scope: Scope, home: Path, *, dry_run: bool = False) -> str:
    import shlex

    words = ["ihmt", "install", agent, "--scope", scope, "--home", str(home)]
    if dry_run:
        words.append("--dry-run")
    return " ".join(shlex.quote(w) for w in words)


def _run_install(argv: list[str], cwd: Path | None) -> dict[str, Any]:
    import subprocess

    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ApiError(504, f"ihmt install did not finish in {INSTALL_TIMEOUT:.0f} s") from None
    return {
        "exit_code": done.returncode,
        "stdout": done.stdout.decode("utf-8", "replace"),
        "stderr": done.stderr.decode("utf-8", "replace"),
    }


def is_temporary(path: Path) -> bool:
    import tempfile

    folders = {Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")}
    resolved = path.expanduser().resolve(strict=False)
    return any(resolved.is_relative_to(f.resolve(strict=False)) for f in folders)


def suggested_home() -> str:
    """The memory folder Set up offers: ``IHMT_HOME`` (default ``~/.ihmt``), written with
    ``~`` when under the user's home; empty when it is a temporary folder (a demo's, a
    test's), which is no place for a memory meant to last."""
    from ihmt_mcp import Settings

    home = Settings.from_env().home
    if is_temporary(home):
        return ""
    try:
        return str(Path("~") / home.relative_to(Path.home()))
    except (ValueError, RuntimeError):  # not under the user's home, or no home known
        return str(home)


def _hooks_state(scope: Scope, project_dir: Path | None) -> list[dict[str, Any]]:
    """Per agent with hooks: are the recall hooks ``ihmt install`` adds there, in this
    scope (the editors have none)."""
    from ihmt_cli._hook import HOOK_AGENTS
    from ihmt_cli._install import agent_paths, read_hooks

    out: list[dict[str, Any]] = []
    for agent in HOOK_AGENTS:
        paths = agent_paths(agent, scope, project=project_dir)
        try:
            on: bool | None = all(read_hooks(paths).values())
        except click.ClickException:
            on = None  # a config file that does not parse: doctor says why
        out.append({"agent": agent, "on": on, "path": str(paths.hooks)})
    return out


def _project_dir(value: object, scope: Scope) -> Path | None:
    if scope != "project":
        return None
    folder = folder_param(value, "the project folder")
    if not folder.is_dir():
        raise ApiError(400, f"the project folder {folder} does not exist")
    return folder
