"""Write (or check) the Claude Code and Codex plugin: ``.claude-plugin/marketplace.json``
and ``plugins/ihmt/``, built from what ``ihmt install`` already uses.

python tools/plugin_files.py            # rewrite the plugin's files
python tools/plugin_files.py --check    # exit 1 when a file has drifted from the code

One source for each part, so the plugin and ``ihmt install`` cannot disagree:

- the usage rules (the skill ``skills/memory/SKILL.md``) are the instructions text that
  install appends to CLAUDE.md / AGENTS.md (``templates/memory-instructions.md``);
- the hooks are the events and timeout of install's Claude Code and Codex setups, running
  install's own hook command line, less its absolute paths and its ``--home``: the plugin
  runs ``ihmt`` from PATH, and the memory is ``$IHMT_HOME`` (default ``~/.ihmt``), never
  the plugin's folder, which an update replaces;
- the server is ``ihmt mcp serve`` under install's server name (``ihmt-memory``);
- the version is the ``ihmt`` package's: Claude Code and Codex update a plugin only when
  its version changes.

Codex 0.171 reads the same marketplace file and plugin folder; it takes its manifest from
``.codex-plugin/plugin.json`` and its hooks (``--agent codex``) from the file it names.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import ihmt_cli
from ihmt_cli._agent_claude import CLAUDE_CODE
from ihmt_cli._agent_codex import CODEX
from ihmt_cli._agent_instructions import instructions_text
from ihmt_cli._agent_setup import SERVER_NAME, ServerSpec

ROOT = Path(__file__).resolve().parents[1]
NAME = "ihmt"
"""The plugin's and the marketplace's name: users install ``ihmt@ihmt``."""
FOLDER = Path("plugins") / NAME
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
SKILL = "memory"
CODEX_HOOKS = Path("hooks") / "codex-hooks.json"
"""Claude Code reads ``hooks/hooks.json`` by itself; Codex reads the file its manifest
names, so each agent gets the hooks that say who calls."""

DESCRIPTION = (
    "Long-term memory for coding agents: the ihmt-memory MCP server, recall hooks that "
    "bring back what the memory knows, and the rules for using it. Needs ihmt on PATH."
)
AUTHOR = {"name": "IHMT contributors"}
KEYWORDS = ["memory", "mcp", "long-term-memory", "recall"]
SKILL_DESCRIPTION = (
    "How to use the long-term memory (the ihmt-memory MCP server): search it before "
    "answering anything that may depend on an earlier session, save decisions, "
    "corrections, preferences and facts as soon as they are stated, and handle FOUND, "
    "AMBIGUOUS, OUTDATED and NOT FOUND answers."
)
README = """\
# ihmt: long-term memory for Claude Code and Codex

This plugin gives the agent IHMT's long-term memory in one step: the `ihmt-memory` MCP
server (`ihmt mcp serve`), the recall hooks (`ihmt hook session-start` and `ihmt hook
prompt`) that add what the memory knows to the agent's context, and the `memory` skill
with the rules for using it.

It needs the `ihmt` command on PATH (see INSTALL.md at the repository root). The memory is
`$IHMT_HOME`, by default `~/.ihmt`: it stays where it is when the plugin is updated or
uninstalled.

Install it from a clone of the repository (or its `owner/repo` on GitHub):

    claude plugin install ihmt --marketplace /path/to/ihmt
    codex plugin marketplace add /path/to/ihmt && codex plugin add ihmt@ihmt

docs/plugins.md at the repository root says what each agent gets and how it was tested.
"""


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _spec() -> ServerSpec:
    """Install's server record, for a user whose ``ihmt`` is on PATH."""
    return ServerSpec(command=NAME, args=("mcp", "serve"), ihmt_home="", ihmt=(NAME,))


def hook_command(agent: str, event: str) -> str:
    """Install's hook command line for ``agent``, without ``--home``: the hook then reads
    ``$IHMT_HOME``, else ``~/.ihmt``, as the server does."""
    argv = _spec().hook_argv(agent, event)
    cut = argv.index("--home")
    return shlex.join(argv[:cut] + argv[cut + 2 :])


def _hooks(agent: str, events: tuple[tuple[str, str], ...], timeout: int) -> dict[str, Any]:
    return {
        "hooks": {
            name: [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": hook_command(agent, ours),
                            "timeout": timeout,
                        }
                    ]
                }
            ]
            for name, ours in events
        }
    }


def _skill() -> str:
    # A JSON string is a YAML string: the description's colon cannot break the front matter.
    front = f"---\nname: {SKILL}\ndescription: {json.dumps(SKILL_DESCRIPTION)}\n---\n\n"
    return front + instructions_text().strip() + "\n"


def plugin_files() -> dict[Path, str]:
    """Every file of the plugin and its marketplace, by path from the repository root."""
    version = ihmt_cli.__version__
    spec = _spec()
    about = {
        "name": NAME,
        "version": version,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "MIT",
        "keywords": KEYWORDS,
    }
    marketplace = {
        "name": NAME,
        "owner": AUTHOR,
        "description": "IHMT's long-term memory as a plugin for Claude Code and Codex.",
        "plugins": [
            {
                "name": NAME,
                "source": f"./{FOLDER.as_posix()}",
                "description": DESCRIPTION,
                "version": version,
                "category": "productivity",
            }
        ],
    }
    codex = {
        **about,
        "skills": "./skills/",
        "mcpServers": "./.mcp.json",
        "hooks": f"./{CODEX_HOOKS.as_posix()}",
        "interface": {
            "displayName": "IHMT memory",
            "shortDescription": "Long-term memory across sessions, projects and agents",
            "category": "Productivity",
        },
    }
    servers = {"mcpServers": {SERVER_NAME: {"command": spec.command, "args": list(spec.args)}}}
    claude_hooks = _hooks(CLAUDE_CODE.agent, CLAUDE_CODE.hook_events, CLAUDE_CODE.hook_timeout)
    codex_hooks = _hooks(CODEX.agent, CODEX.hook_events, CODEX.hook_timeout)
    return {
        MARKETPLACE: _json(marketplace),
        FOLDER / ".claude-plugin" / "plugin.json": _json(about),
        FOLDER / ".codex-plugin" / "plugin.json": _json(codex),
        FOLDER / ".mcp.json": _json(servers),
        FOLDER / "hooks" / "hooks.json": _json(claude_hooks),
        FOLDER / CODEX_HOOKS: _json(codex_hooks),
        FOLDER / "skills" / SKILL / "SKILL.md": _skill(),
        FOLDER / "README.md": README,
    }


def drifted(root: Path = ROOT) -> list[Path]:
    """The plugin's files under ``root`` that differ from :func:`plugin_files`."""
    return [
        path
        for path, text in plugin_files().items()
        if not (root / path).is_file() or (root / path).read_text(encoding="utf-8") != text
    ]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = drifted()
        for path in stale:
            print(f"{path} is out of date: run python tools/plugin_files.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in plugin_files().items():
        target = ROOT / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
