"""opencode's setup: the server in ``opencode.jsonc`` / ``opencode.json`` (in
``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``; a project's folder), edited
in place so that the user's comments stay; the recall hooks as a plugin file that runs
``ihmt hook`` (``templates/opencode-plugin.js``); the instructions in AGENTS.md. opencode
has no CLI to register with, so install always edits the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_files import read_jsonc
from ihmt_cli._agent_mcp_json import mcp_json_step
from ihmt_cli._agent_plan import Step, own_file_steps
from ihmt_cli._agent_setup import (
    HOOK_EVENTS,
    PLUGIN_MARKER,
    SERVER_NAME,
    AgentPaths,
    ServerSpec,
)
from ihmt_cli._types import Agent, Scope

__all__ = ["OPENCODE", "OpenCodeSetup"]

OPENCODE_SCHEMA = "https://opencode.ai/config.json"
OPENCODE_PLUGIN = "ihmt-memory.js"


class OpenCodeSetup:
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for opencode."""

    agent: Agent = "opencode"
    name = "opencode"
    restart = "Start a new opencode session (opencode) so the memory tools load."
    trust_hint = ""

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        env = environ
        xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else None
        base = (xdg or home / ".config") / "opencode"
        folder = base if scope == "user" else project
        plugins = base if scope == "user" else project / ".opencode"
        return AgentPaths(
            agent=self.agent,
            scope=scope,
            config=_opencode_config(folder),
            instructions=folder / "AGENTS.md",
            cli="opencode",
            hooks=plugins / "plugin" / OPENCODE_PLUGIN,
        )

    def read_registration(self, paths: AgentPaths) -> dict[str, Any] | None:
        servers = read_jsonc(paths.config).get("mcp", {})
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
        return entry if isinstance(entry, dict) else None

    def registered_argv(self, entry: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
        command = entry.get("command", [])
        argv = [str(c) for c in command] if isinstance(command, list) else [str(command)]
        env = entry.get("environment", {})
        return argv, {str(k): str(v) for k, v in (env or {}).items()}

    def is_entry_complete(self, entry: Mapping[str, Any]) -> bool:
        return entry.get("type") == "local" and entry.get("enabled", True) is True

    def register_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec,
        entry: Mapping[str, Any] | None,
        *,
        backups: list[str],
    ) -> list[Step]:
        return [_jsonc_register_step(paths, spec, backups=backups)]

    def unregister_steps(self, paths: AgentPaths, *, backups: list[str]) -> list[Step]:
        return [_jsonc_register_step(paths, None, backups=backups)]

    def read_hooks(self, paths: AgentPaths) -> dict[str, bool]:
        present = paths.hooks.is_file() and PLUGIN_MARKER in paths.hooks.read_text("utf-8")
        return {event: present for event, _ in HOOK_EVENTS}

    def hooks_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec | None,
        *,
        backups: list[str],
        unchanged: list[str],
    ) -> list[Step]:
        """Add (``spec``) or delete (None) the plugin file; nothing when already so."""
        path = paths.hooks
        return own_file_steps(
            path,
            None if spec is None else _plugin_text(spec),
            ours=path.is_file() and PLUGIN_MARKER in path.read_text("utf-8"),
            what="memory plugin",
            added=f"add the memory plugin {path} (recall on each message)",
            unchanged=unchanged,
        )

    def notes(self, paths: AgentPaths, *, hooks: bool) -> list[str]:
        return []

    def hook_trust(self, paths: AgentPaths, *, cwd: Path) -> bool | None:
        return None


OPENCODE = OpenCodeSetup()


def _opencode_config(folder: Path) -> Path:
    """The config file opencode reads in ``folder``: the one the user has (opencode writes
    ``opencode.jsonc`` on its first run), else a new ``opencode.jsonc``, never a second."""
    jsonc, plain = folder / "opencode.jsonc", folder / "opencode.json"
    if jsonc.exists() and plain.exists():
        for path in (jsonc, plain):
            try:
                servers = read_jsonc(path).get("mcp")
            except click.ClickException:
                continue
            if isinstance(servers, dict) and SERVER_NAME in servers:
                return path
        return jsonc
    if plain.exists():
        return plain
    return jsonc


def _plugin_text(spec: ServerSpec) -> str:
    source = resources.files("ihmt_cli").joinpath("templates", "opencode-plugin.js")
    template = source.read_text(encoding="utf-8")
    return (
        template.replace("__IHMT_COMMAND__", json.dumps(list(spec.ihmt)))
        .replace("__IHMT_HOME__", json.dumps(spec.ihmt_home))
        .replace("__IHMT_CAPTURE__", json.dumps(spec.capture))
    )


def _jsonc_register_step(paths: AgentPaths, spec: ServerSpec | None, *, backups: list[str]) -> Step:
    """Add or remove the entry in opencode's config, keeping comments, commas and order."""
    entry: dict[str, Any] | None = None
    if spec is not None:
        entry = {
            "type": "local",
            "command": list(spec.argv),
            "environment": spec.env,
            "enabled": True,
        }
    return mcp_json_step(
        paths.config,
        entry,
        key="mcp",
        comments=True,
        backups=backups,
        new_file={"$schema": OPENCODE_SCHEMA},
    )
