"""The ``ihmt`` group, assembled: every command, by name, loaded on first use.

The command modules import only ``_base`` (and what they render with); ``_lazy.COMMANDS``
is the one place that knows them all, so that ``ihmt --help`` and ``ihmt version`` import
none of the others.
"""

from __future__ import annotations

import click

from ihmt_cli._base import EPILOG, global_options
from ihmt_cli._lazy import COMMANDS, LazyCommands, LazyGroup

__all__ = ["cli"]


@click.group(
    cls=LazyGroup,
    commands=LazyCommands(COMMANDS),
    invoke_without_command=True,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@global_options(hidden=False)
@click.version_option(package_name="ihmt-cli", prog_name="ihmt", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """IHMT: long-term memory for AI coding agents, as a tree of plain files.

    Start with 'ihmt demo', or 'ihmt init' then 'ihmt save' and 'ihmt search'.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
