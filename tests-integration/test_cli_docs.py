"""docs/cli.md is generated from the commands' help; it must match the code exactly."""

from __future__ import annotations

from pathlib import Path

from ihmt_cli import cli, reference_markdown


def test_cli_reference_matches_the_commands_help(repo_root: Path) -> None:
    written = (repo_root / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == reference_markdown(), "docs/cli.md drifted: run python tools/cli_docs.py"


def test_cli_reference_covers_every_command(repo_root: Path) -> None:
    text = (repo_root / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, command in cli.commands.items():
        if command.hidden:  # internal (e.g. the recall server the hooks start)
            assert f"## `ihmt {name}`" not in text, name
            continue
        assert f"## `ihmt {name}`" in text, name
    assert "## `ihmt mcp serve`" in text
