"""Claude Code's setup: the server in ``~/.claude.json`` (user scope, through ``claude mcp``
when it is on PATH) or the project's ``.mcp.json``; the recall hooks in its settings.json
(``.claude/settings.local.json`` in a project); the instructions in CLAUDE.md."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_files import backup_of, is_trivial, json_text, read_json
from ihmt_cli._agent_json_hooks import JsonHooks
from ihmt_cli._agent_plan import Step, cli_register_steps, file_step, run_step
from ihmt_cli._agent_setup import (
    CAPTURE_EVENTS,
    HOOK_EVENTS,
    SERVER_NAME,
    AgentPaths,
    ServerSpec,
    stdio_argv,
)
from ihmt_cli._types import Agent, Scope

__all__ = ["CLAUDE_CODE", "ClaudeCodeSetup"]

SERVERS_KEY = "mcpServers"


class ClaudeCodeSetup(JsonHooks):
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for Claude Code."""

    agent: Agent = "claude-code"
    name = "Claude Code"
    restart = "Start a new Claude Code session (claude) so the memory tools load."
    trust_hint = ""
    hook_events = (*HOOK_EVENTS, *CAPTURE_EVENTS)

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        env = environ
        config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None
        if scope == "user":
            config = (config_dir or home) / ".claude.json"
            instructions = (config_dir or home / ".claude") / "CLAUDE.md"
            hooks = (config_dir or home / ".claude") / "settings.json"
        else:
            config, instructions = project / ".mcp.json", project / "CLAUDE.md"
            # The local settings, never committed: the hook's command is an absolute path.
            hooks = project / ".claude" / "settings.local.json"
        return AgentPaths(
            agent=self.agent,
            scope=scope,
            config=config,
            instructions=instructions,
            cli="claude",
            hooks=hooks,
        )

    def read_registration(self, paths: AgentPaths) -> dict[str, Any] | None:
        servers = read_json(paths.config).get(SERVERS_KEY, {})
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
        return entry if isinstance(entry, dict) else None

    def registered_argv(self, entry: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
        return stdio_argv(entry)

    def is_entry_complete(self, entry: Mapping[str, Any]) -> bool:
        return True

    def register_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec,
        entry: Mapping[str, Any] | None,
        *,
        backups: list[str],
    ) -> list[Step]:
        cli = shutil.which(paths.cli)
        if cli is None or paths.scope == "project":
            return [_json_register_step(paths, spec, backups=backups)]
        remove = [cli, "mcp", "remove", SERVER_NAME, "-s", "user"]
        # The server's name must come before -e: -e takes several values and would eat it.
        add = [cli, "mcp", "add", SERVER_NAME, "-s", "user"]
        add += ["-e", f"IHMT_HOME={spec.ihmt_home}", "--", *spec.argv]
        return cli_register_steps(
            paths.config,
            remove=remove,
            add=add,
            entry=entry,
            name=self.name,
            registered_as="Claude Code, user scope",
            backups=backups,
        )

    def unregister_steps(self, paths: AgentPaths, *, backups: list[str]) -> list[Step]:
        cli = shutil.which(paths.cli)
        if cli is not None and paths.scope == "user":
            return [
                run_step(
                    [cli, "mcp", "remove", SERVER_NAME, "-s", "user"],
                    backs_up=paths.config,
                    summary=f"unregister {SERVER_NAME} from Claude Code (its own CLI)",
                    backups=backups,
                )
            ]
        return [_json_register_step(paths, None, backups=backups)]

    def notes(self, paths: AgentPaths, *, hooks: bool) -> list[str]:
        return []

    def hook_trust(self, paths: AgentPaths, *, cwd: Path) -> bool | None:
        return None


CLAUDE_CODE = ClaudeCodeSetup()


def _json_register_step(paths: AgentPaths, spec: ServerSpec | None, *, backups: list[str]) -> Step:
    """Add (``spec``) or remove (None) the entry in a JSON config, keeping the rest."""
    data = read_json(paths.config)
    key = SERVERS_KEY
    servers = data.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise click.ClickException(f'"{key}" in {paths.config} is not an object; fix it first')
    servers = dict(servers or {})
    text: str | None
    if spec is None:
        servers.pop(SERVER_NAME, None)
        if servers:
            data[key] = servers
        else:
            data.pop(key, None)
        created = not backup_of(paths.config).exists()
        text = None if created and is_trivial(data) else json_text(data)
        preview = f'# {paths.config}: delete "{key}" → "{SERVER_NAME}"'
        summary = f"remove {SERVER_NAME} from {paths.config}"
        if text is None:
            summary += " (install created it and it holds nothing else: delete the file)"
    else:
        entry: dict[str, Any] = {
            "type": "stdio",
            "command": spec.command,
            "args": list(spec.args),
            "env": spec.env,
        }
        servers[SERVER_NAME] = entry
        data[key] = servers
        text = json_text(data)
        preview = f"# {paths.config}: set\n" + json_text({key: {SERVER_NAME: entry}})
        summary = f"register {SERVER_NAME} in {paths.config}"
    return file_step(paths.config, text, summary=summary, preview=preview, backups=backups)
