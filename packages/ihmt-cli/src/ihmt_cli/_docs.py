"""The command reference (``docs/cli.md``), rendered from the commands' own help."""

from __future__ import annotations

import click

__all__ = ["reference_markdown"]

HEADER = """# `ihmt` command reference

Generated from the commands' help by `python tools/cli_docs.py`; a test fails when this
file and the code disagree. The `--json` objects are documented in
[packages/ihmt-cli/README.md](../packages/ihmt-cli/README.md).

Exit codes: 0 success · 1 an error (one line on stderr saying what is wrong and what to
do) · 2 a usage error · 130 interrupted.
"""


def _walk(command: click.Command, parent: click.Context | None, name: str) -> list[str]:
    ctx = click.Context(command, info_name=name, parent=parent, max_content_width=88)
    formatter = ctx.make_formatter()
    formatter.width = 88
    command.format_help(ctx, formatter)
    title = ctx.command_path
    out = [f"## `{title}`", "", "```text", formatter.getvalue().rstrip(), "```", ""]
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            child = command.get_command(ctx, sub)
            if child is not None and not child.hidden:
                out.extend(_walk(child, ctx, sub))
    return out


def reference_markdown() -> str:
    """Every command's ``--help``, as Markdown, top level first then alphabetical."""
    from ihmt_cli._app import cli

    return "\n".join([HEADER, *_walk(cli, None, "ihmt")]).rstrip() + "\n"
