"""The ``ihmt`` group, assembled: every command module's commands, added by name.

The command modules import only ``_base`` (and what they render with); this module is
the one place that knows them all.
"""

from __future__ import annotations

import click

from ihmt_cli import (
    _agents,
    _gui,
    _meta_commands,
    _read_commands,
    _sync_command,
    _write_commands,
)
from ihmt_cli._base import EPILOG, global_options

__all__ = ["cli"]


@click.group(
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


# a memory: create it, fill it, maintain it
cli.add_command(_write_commands.init_command)
cli.add_command(_write_commands.ingest_command)
cli.add_command(_write_commands.save_command)
cli.add_command(_write_commands.consolidate_command)
cli.add_command(_write_commands.rebuild_command)
cli.add_command(_write_commands.index_command)
cli.add_command(_write_commands.forget_command)
cli.add_command(_write_commands.restore_command)
cli.add_command(_write_commands.export_command)
cli.add_command(_sync_command.sync_command)
# a memory: ask it
cli.add_command(_read_commands.search_command)
cli.add_command(_read_commands.ask_command)
cli.add_command(_read_commands.tree_command)
cli.add_command(_read_commands.stats_command)
cli.add_command(_read_commands.facts_command)
cli.add_command(_read_commands.conflicts_command)
# the agents: set them up, recall for them
cli.add_command(_agents.install_command)
cli.add_command(_agents.uninstall_command)
cli.add_command(_agents.hook_command)
cli.add_command(_agents.hook_server_command)
cli.add_command(_agents.doctor_command)
# the interfaces, and ihmt itself
cli.add_command(_gui.gui_command)
cli.add_command(_meta_commands.mcp_group)
cli.add_command(_meta_commands.version_command)
cli.add_command(_meta_commands.demo_command)
