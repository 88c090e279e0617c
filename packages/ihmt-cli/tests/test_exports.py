"""The reviewed surface of ihmt-cli: its ``__all__`` and the commands with their options.

A command-line program's public surface is what a user (or an agent's config, or a
script) may type: every command and every option. Adding, removing or renaming one is an
interface change. Make it on purpose, update the snapshot below in the same change, and
say why in the CHANGELOG, so that a reviewer sees it here (the rule the MCP python-sdk
keeps in its VERSIONING document). ``docs/cli.md`` holds the help texts themselves.
"""

from __future__ import annotations

from typing import get_args

import click

import ihmt_cli
from ihmt_cli import cli

SURFACE = ["cli", "main", "reference_markdown"]

GLOBAL_OPTIONS = ["--path", "--json", "-v/--verbose", "-q/--quiet"]
"""Accepted by the group and by every command, before or after the command's name."""

COMMANDS = {
    "ihmt": ["--version"],
    "ihmt ask": ["QUERY", "--clue"],
    "ihmt conflicts": ["--subject"],
    "ihmt consolidate": ["--force"],
    "ihmt demo": ["--dir"],
    "ihmt doctor": ["--home", "--no-connect"],
    "ihmt export": ["--format", "--project", "--output/-o", "--force"],
    "ihmt facts": ["--subject"],
    "ihmt forget": ["ID", "--reason", "--yes/-y"],
    "ihmt gui": ["--port", "--no-browser"],
    "ihmt hook": ["EVENT", "--agent", "--home"],
    "ihmt hook-server": ["--home", "--idle"],
    "ihmt index": ["--semantic"],
    "ihmt ingest": [
        "PATHS",
        "--domain",
        "--type",
        "--tag",
        "--project",
        "--no-consolidate",
        "--embed-later",
    ],
    "ihmt init": ["--branch-factor", "--target-tokens", "--backend", "--model", "--force"],
    "ihmt install": ["AGENT", "--scope", "--dry-run", "--home", "--no-hooks", "--no-capture"],
    "ihmt mcp": [],
    "ihmt mcp serve": [],
    "ihmt rebuild": [],
    "ihmt restore": ["ID", "--by"],
    "ihmt save": ["TEXT", "--domain", "--date", "--replaces", "--project", "--type", "--tag"],
    "ihmt search": ["QUERY", "--top-k", "--full", "--or", "--clue", "--as-of", "--project"],
    "ihmt stats": [],
    "ihmt sync": ["--init", "--status", "--purge", "--every"],
    "ihmt tree": ["--depth"],
    "ihmt uninstall": ["AGENT", "--scope", "--dry-run"],
    "ihmt version": [],
}
"""Each command (a space-separated path) and its own arguments and options, in order."""

HIDDEN = ["ihmt hook-server"]
"""Commands left out of --help and docs/cli.md (``ihmt hook`` starts this one)."""


def _parameters(command: click.Command) -> list[str]:
    return [
        p.human_readable_name
        if isinstance(p, click.Argument)
        else "/".join([*p.opts, *p.secondary_opts])
        for p in command.params
    ]


def _commands(
    command: click.Command, path: str = "ihmt"
) -> dict[str, tuple[click.Command, list[str]]]:
    found = {path: (command, _parameters(command))}
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            found.update(_commands(command.commands[name], f"{path} {name}"))
    return found


def _choices(path: str, option: str) -> tuple[str, ...]:
    command, _ = _commands(cli)[path]
    param = next(p for p in command.params if p.name == option)
    assert isinstance(param.type, click.Choice)
    return tuple(param.type.choices)


def test_all_is_the_reviewed_surface() -> None:
    assert sorted(ihmt_cli.__all__) == SURFACE
    assert all(hasattr(ihmt_cli, name) for name in ihmt_cli.__all__)


def test_the_commands_and_their_options_are_the_reviewed_surface() -> None:
    found = _commands(cli)
    assert {path: params[len(GLOBAL_OPTIONS) :] for path, (_, params) in found.items()} == (
        COMMANDS
    )
    assert sorted(path for path, (command, _) in found.items() if command.hidden) == HIDDEN


def test_every_command_takes_the_global_options_first() -> None:
    for path, (_, params) in _commands(cli).items():
        assert params[: len(GLOBAL_OPTIONS)] == GLOBAL_OPTIONS, path


def test_the_closed_sets_are_the_options_choices() -> None:
    from ihmt_cli._types import Agent, Backend, ContentType, ExportFormat, Scope

    assert _choices("ihmt init", "backend") == get_args(Backend) == ("heuristic", "anthropic")
    assert _choices("ihmt export", "fmt") == get_args(ExportFormat) == ("jsonl", "markdown")
    assert _choices("ihmt save", "content_type") == get_args(ContentType)
    assert _choices("ihmt ingest", "content_type") == get_args(ContentType)[1:]
    assert get_args(ContentType)[0] == "auto"
    assert _choices("ihmt install", "agent") == get_args(Agent)
    assert _choices("ihmt uninstall", "agent") == get_args(Agent)
    hooked = ("claude-code", "codex", "opencode", "gemini-cli", "copilot")
    assert _choices("ihmt hook", "agent") == hooked
    assert _choices("ihmt install", "scope") == get_args(Scope) == ("user", "project")
