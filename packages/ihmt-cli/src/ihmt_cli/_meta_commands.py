"""The commands about ``ihmt`` itself: ``mcp serve``, ``version`` and ``demo``."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from ihmt_cli._base import EPILOG, State, command, global_options, pass_state

__all__ = ["demo_command", "mcp_group", "version_command"]


# ---------------------------------------------------------------------- mcp serve
@click.group("mcp", epilog=EPILOG)
@global_options(hidden=True)
def mcp_group() -> None:
    """The MCP server."""


# The server sets up its own logging (ihmt_mcp.main, or the handler below).
@command("serve", configures_logging=False)
@pass_state
def mcp_serve_command(state: State) -> None:
    """Run the stdio MCP server over the memory (logs go to stderr)."""
    if not state.is_explicit_path:
        import ihmt_mcp

        raise SystemExit(ihmt_mcp.main([]))
    import logging

    from ihmt_mcp import Settings, build_server

    settings = replace(Settings.from_env(), store_path=state.path)
    handler = logging.StreamHandler(sys.stderr)
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(settings.log_level)
    try:
        build_server(settings).run("stdio")
    except KeyboardInterrupt:
        raise SystemExit(130) from None


mcp_group.add_command(mcp_serve_command)


PACKAGES = ("ihmt-cli", "ihmt-mcp", "ihmt-navigator", "ihmt-facts", "ihmt-chunkers", "ihmt-store")


# ---------------------------------------------------------------------- version, demo
@command("version", configures_logging=False)
@pass_state
def version_command(state: State) -> None:
    """The versions of ihmt and its packages."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str] = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    rest = ", ".join(f"{k} {v}" for k, v in found.items() if k != "ihmt-cli")
    state.emit(
        {"version": found["ihmt-cli"], "packages": found},
        f"ihmt {found['ihmt-cli']} ({rest}; Python {sys.version.split()[0]})",
    )


# Each step of the demo is a command of its own, which sets up logging.
@command("demo", configures_logging=False)
@click.option(
    "--dir",
    "folder",
    type=click.Path(path_type=Path, file_okay=False),
    help="Where to build the demo memory (default: a new temporary folder).",
)
def demo_command(folder: Path | None) -> None:
    """Walk through ingest, search, a clue loop, OUTDATED, NOT FOUND, the tree and stats."""
    from ihmt_cli._demo import run_demo

    run_demo(folder, click.get_current_context().find_root().command)
