"""The ``ihmt`` group loads each command on first use: the table cannot drift.

``_lazy.COMMANDS`` says where every command lives and the first sentence of its help, so
that ``ihmt --help`` imports no command module. These tests hold the table to the real
commands (every one listed, each short help identical at every width) and check, in a
fresh interpreter, that ``--help`` and ``version`` leave the command modules unloaded.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import click
import pytest

from ihmt_cli._lazy import COMMANDS, LazyCommands, LazyGroup

COMMAND_MODULES = (
    "_write_commands",
    "_read_commands",
    "_sync_command",
    "_agents",
    "_gui",
    "_meta_commands",
)


def _module_commands() -> dict[str, tuple[str, str, click.Command]]:
    """Every command a command module exports: name → (module, attribute, command)."""
    found: dict[str, tuple[str, str, click.Command]] = {}
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(f"ihmt_cli.{module_name}")
        for attribute in module.__all__:
            value = getattr(module, attribute)
            if isinstance(value, click.Command):
                assert value.name is not None
                found[value.name] = (module_name, attribute, value)
    return found


def test_the_table_lists_every_command_where_it_lives() -> None:
    found = _module_commands()
    assert sorted(COMMANDS) == sorted(found)
    for name, entry in COMMANDS.items():
        module_name, attribute, command = found[name]
        assert (entry.module, entry.attribute) == (module_name, attribute), name
        assert entry.hidden == command.hidden, name


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_table_short_help_is_the_commands_own_at_every_width(name: str) -> None:
    entry = COMMANDS[name]
    real = _module_commands()[name][2]
    stand_in = click.Command(name, help=entry.summary, hidden=entry.hidden)
    for limit in range(3, 200):
        assert stand_in.get_short_help_str(limit) == real.get_short_help_str(limit), (
            name,
            limit,
        )


def _eager_group() -> click.Group:
    """The same group with every command imported and added (as before lazy loading)."""
    from ihmt_cli._app import cli

    return click.Group(
        name=cli.name,
        commands={name: command for name, (_, _, command) in _module_commands().items()},
        invoke_without_command=cli.invoke_without_command,
        params=cli.params,
        help=cli.help,
        epilog=cli.epilog,
        context_settings=cli.context_settings,
        callback=cli.callback,
    )


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_help_is_the_one_the_loaded_commands_give(width: int) -> None:
    from ihmt_cli._app import cli

    lazy_group = LazyGroup(
        name="ihmt",
        commands=LazyCommands(COMMANDS),
        invoke_without_command=cli.invoke_without_command,
        params=cli.params,
        help=cli.help,
        epilog=cli.epilog,
        context_settings=cli.context_settings,
    )
    eager = _eager_group()

    def help_of(group: click.Group) -> str:
        ctx = click.Context(group, info_name="ihmt", terminal_width=width)
        return group.get_help(ctx)

    lazy_text = help_of(lazy_group)
    assert lazy_text == help_of(eager)
    assert "sync" in lazy_text and "hook-server" not in lazy_text
    # the lazy group's help imported nothing: none of its commands is loaded yet
    commands = lazy_group.commands
    assert isinstance(commands, LazyCommands)
    assert all(commands.loaded(name) is None for name in COMMANDS)
    # after loading some, the help is still the same
    lazy_group.get_command(click.Context(lazy_group), "sync")
    assert commands.loaded("sync") is not None
    assert help_of(lazy_group) == lazy_text


def test_commands_mapping_loads_on_access_and_takes_additions() -> None:
    commands = LazyCommands(COMMANDS)
    assert list(commands) == list(COMMANDS)
    assert len(commands) == len(COMMANDS)
    assert "save" in commands and "nope" not in commands
    assert commands.loaded("save") is None
    save = commands["save"]
    assert save.name == "save" and commands.loaded("save") is save
    with pytest.raises(KeyError):
        commands["nope"]
    extra = click.Command("extra")
    commands["extra"] = extra
    assert commands["extra"] is extra and list(commands)[-1] == "extra"
    assert len(commands) == len(COMMANDS) + 1
    del commands["save"]
    assert "save" not in commands and len(commands) == len(COMMANDS)


@pytest.mark.parametrize(
    ("argv", "allowed"),
    [
        (["--help"], set()),
        ([], set()),
        (["version"], {"ihmt_cli._meta_commands"}),
        (["sync", "--help"], {"ihmt_cli._sync_command"}),
    ],
)
def test_a_command_imports_only_its_own_module(argv: list[str], allowed: set[str]) -> None:
    code = (
        "import json, sys\n"
        "from ihmt_cli import main\n"
        f"code = main({argv!r})\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('ihmt_cli.'))),"
        " file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(json.loads(run.stderr.strip().splitlines()[-1]))
    command_modules = {f"ihmt_cli.{name}" for name in COMMAND_MODULES}
    assert loaded & command_modules == allowed
    # neither the agents' installers nor the web server load for these
    assert not loaded & {"ihmt_cli._install", "ihmt_cli._hook", "ihmt_cli._gui_http"}


def test_the_layers_below_load_what_a_command_uses_when_it_uses_it() -> None:
    """``Memory`` loads no ingest, import, export or navigator module, and the facts'
    built-in rules compile on first use: what ``ihmt sync`` and ``ihmt search`` skip."""
    code = (
        "import json, sys\n"
        "from ihmt_mcp import Memory, Sync\n"
        "import ihmt_facts\n"
        "from ihmt_facts import _pattern\n"
        "before = _pattern.compile_rule.cache_info().currsize\n"
        "rules = ihmt_facts.DEFAULT_PATTERNS\n"
        "print(json.dumps({'modules': sorted(sys.modules), 'compiled_at_import': before,"
        " 'compiled_on_use': _pattern.compile_rule.cache_info().currsize,"
        " 'rules': len(rules)}))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(run.stdout)
    loaded = set(seen["modules"])
    assert "ihmt_mcp._memory" in loaded and "ihmt_mcp.sync._driver" in loaded
    never = {
        "ihmt_mcp._ingest",
        "ihmt_mcp._importer",
        "ihmt_mcp._portable",
        "ihmt_mcp._replaces",
        "ihmt_mcp._secrets",
        "ihmt_mcp._files",
        "ihmt_navigator",
        "pathspec",
    }
    assert not loaded & never
    # the facts' rules: none compiled at import, nor by reading them (a rule compiles
    # when a sentence first passes its gate: ihmt-facts' test_rules_compiled_on_use.py)
    assert seen["compiled_at_import"] == 0
    assert seen["rules"] > 0 and seen["compiled_on_use"] == 0
