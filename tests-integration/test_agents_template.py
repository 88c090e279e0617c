"""The instructions template at the repository root is the one the package ships."""

from __future__ import annotations

from pathlib import Path

from ihmt_cli import cli


def test_root_template_matches_the_shipped_one(repo_root: Path) -> None:
    shipped = repo_root / "packages/ihmt-cli/src/ihmt_cli/templates/memory-instructions.md"
    root = repo_root / "templates" / "memory-instructions.md"
    assert root.read_text(encoding="utf-8") == shipped.read_text(encoding="utf-8")


def test_install_md_names_every_agent_ihmt_install_knows(repo_root: Path) -> None:
    text = (repo_root / "INSTALL.md").read_text(encoding="utf-8")
    install = cli.commands["install"]
    agents = next(p for p in install.params if p.name == "agent").type
    for agent in getattr(agents, "choices", ()):
        assert f"ihmt install {agent}" in text
