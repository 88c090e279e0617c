"""The ``ihmt`` group's commands, each loaded the first time it is used.

A command's module imports what it runs with (the agents' installers, the web server,
the renderers): importing them all up front cost every ``ihmt`` run, even ``ihmt
--help``, a tenth of a second. :data:`COMMANDS` names where each command lives and the
first sentence of its help, so ``ihmt --help`` lists them all without importing one;
``tests/test_lazy_commands.py`` checks the table against every command's real help.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from gettext import gettext
from typing import NamedTuple

import click

__all__ = ["COMMANDS", "Entry", "LazyCommands", "LazyGroup"]


class Entry(NamedTuple):
    """Where a command lives, and what ``ihmt --help`` says of it."""

    module: str
    """The module under ``ihmt_cli`` that defines it, e.g. ``_write_commands``."""
    attribute: str
    """The command's name in that module, e.g. ``save_command``."""
    summary: str
    """The first sentence of its help, on one line (what ``--help`` shortens to fit)."""
    hidden: bool = False


COMMANDS: dict[str, Entry] = {
    # a memory: create it, fill it, maintain it
    "init": Entry(
        "_write_commands",
        "init_command",
        "Create a memory store (or apply these options to the one there).",
    ),
    "ingest": Entry(
        "_write_commands",
        "ingest_command",
        "Store files, folders (recursively) or '-' (stdin), split into memories.",
    ),
    "save": Entry(
        "_write_commands",
        "save_command",
        "Save one memory (TEXT, or '-' to read it from stdin).",
    ),
    "consolidate": Entry(
        "_write_commands",
        "consolidate_command",
        "Build the summary branches that are due.",
    ),
    "rebuild": Entry(
        "_write_commands",
        "rebuild_command",
        "Recreate every derived file (catalog, index, trunk, facts) from the leaves and branches.",
    ),
    "index": Entry(
        "_write_commands",
        "index_command",
        "Say what search uses; with --semantic, fill in the missing vectors.",
    ),
    "forget": Entry(
        "_write_commands",
        "forget_command",
        "Delete one memory for good, and every trace of its text in the summaries.",
    ),
    "restore": Entry(
        "_write_commands",
        "restore_command",
        "Undo a wrong OUTDATED mark: memory ID is current again (both memories are kept).",
    ),
    "export": Entry(
        "_write_commands",
        "export_command",
        "Write every memory with its id, date, project, domain, type, tags and OUTDATED link.",
    ),
    "sync": Entry(
        "_sync_command",
        "sync_command",
        "Sync this memory with its git remote: commit, pull, refresh, push.",
    ),
    # a memory: ask it
    "search": Entry(
        "_read_commands",
        "search_command",
        "Search the memory: FOUND, AMBIGUOUS or NOT FOUND, with the text an agent gets.",
    ),
    "ask": Entry(
        "_read_commands",
        "ask_command",
        "Search, and while the answer is AMBIGUOUS ask for clues (stdin: one per line).",
    ),
    "tree": Entry(
        "_read_commands",
        "tree_command",
        "Outline the tree: the domains' top branches and DEPTH levels below.",
    ),
    "stats": Entry(
        "_read_commands",
        "stats_command",
        "Totals: memories, branches, depth, domains, unreachable (always 0), bytes, and "
        "whether search uses meaning as well as words.",
    ),
    "facts": Entry(
        "_read_commands",
        "facts_command",
        "The statements recorded from memories, oldest first, and the corrections made.",
    ),
    "conflicts": Entry(
        "_read_commands",
        "conflicts_command",
        "Every change in the timeline, in date order: a fact's new value, or a correction.",
    ),
    # the agents: set them up, recall for them
    "install": Entry(
        "_agents",
        "install_command",
        "Register the memory server and its recall hooks with AGENT (an agent or an editor).",
    ),
    "uninstall": Entry(
        "_agents",
        "uninstall_command",
        "Unregister the memory server from AGENT; remove its hooks and usage instructions.",
    ),
    "hook": Entry(
        "_agents",
        "hook_command",
        "Recall or capture for an agent's lifecycle hook: EVENT is session-start, prompt or stop.",
    ),
    "hook-server": Entry(
        "_agents",
        "hook_server_command",
        "The warm recall server ``ihmt hook`` starts in the background (see _recall_server).",
        hidden=True,
    ),
    "doctor": Entry(
        "_agents",
        "doctor_command",
        "Check the store, which agents have the server registered, and that each connects.",
    ),
    # the interfaces, and ihmt itself
    "gui": Entry(
        "_gui",
        "gui_command",
        "Open the local web interface: Set up, Explore, Diagnose, Timeline (127.0.0.1 only).",
    ),
    "mcp": Entry("_meta_commands", "mcp_group", "The MCP server."),
    "version": Entry(
        "_meta_commands",
        "version_command",
        "The versions of ihmt and its packages.",
    ),
    "demo": Entry(
        "_meta_commands",
        "demo_command",
        "Walk through ingest, search, a clue loop, OUTDATED, NOT FOUND, the tree and stats.",
    ),
}
"""Every ``ihmt`` command: its name, where it lives, its first sentence."""


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name: a listed command's module is imported on first access.

    Iterating gives the names and imports nothing; ``commands[name]`` (what click's
    ``get_command`` does) loads that one command. ``add_command`` still works.
    """

    def __init__(self, table: dict[str, Entry]) -> None:
        self._table = dict(table)
        self._loaded: dict[str, click.Command] = {}

    def loaded(self, name: str) -> click.Command | None:
        """The command ``name`` if it has been imported (or added) already."""
        return self._loaded.get(name)

    def entry(self, name: str) -> Entry | None:
        """What the table says of ``name`` (None for a command added by hand)."""
        return self._table.get(name)

    def __getitem__(self, name: str) -> click.Command:
        found = self._loaded.get(name)
        if found is not None:
            return found
        entry = self._table[name]
        module = importlib.import_module(f"ihmt_cli.{entry.module}")
        command = getattr(module, entry.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"ihmt_cli.{entry.module}.{entry.attribute} is not a command")
        self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._table and name not in self._loaded:
            raise KeyError(name)
        self._table.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._table
        yield from (name for name in self._loaded if name not in self._table)

    def __len__(self) -> int:
        return len(self._table.keys() | self._loaded.keys())

    def __contains__(self, name: object) -> bool:
        return name in self._table or name in self._loaded


class LazyGroup(click.Group):
    """A click group over :class:`LazyCommands`: its ``--help`` imports no command.

    The command list in the help is written from the table (a stand-in command with the
    table's first sentence shortens exactly as the real one does); a command already
    loaded speaks for itself.
    """

    commands: MutableMapping[str, click.Command]

    def _listed(self, name: str) -> click.Command | None:
        commands = self.commands
        if not isinstance(commands, LazyCommands):
            return self.commands.get(name)
        entry = commands.entry(name)
        found = commands.loaded(name)
        if found is not None or entry is None:
            return found
        return click.Command(name, help=entry.summary, hidden=entry.hidden)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's own, with the short help from the table for a command not loaded."""
        listed = [(name, self._listed(name)) for name in self.list_commands(ctx)]
        rows = [
            (name, command)
            for name, command in listed
            if command is not None and not command.hidden
        ]
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section(gettext("Commands")):
            formatter.write_dl(
                [(name, command.get_short_help_str(limit)) for name, command in rows]
            )
