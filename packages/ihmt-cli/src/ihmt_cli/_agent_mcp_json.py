"""What the clients that keep their MCP servers in one JSON file share — Gemini CLI,
Copilot CLI, Cursor, Windsurf, Claude Desktop and VS Code (and opencode's entry, under its
own key): the ``ihmt-memory`` entry set or removed under the file's servers key
(``mcpServers``, ``servers``, ``mcp``) by splicing the text, so that the user's other
servers, other keys, comments, order and indentation stay (``_agent_jsonc``); a file
install created, holding nothing else, deleted by the uninstall.

:class:`McpJsonSetup` is the :class:`~ihmt_cli._agent_setup.AgentSetup` of such a client
without hooks; a client module gives its paths and, where it differs, its entry's shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_files import backup_of, is_trivial, json_text, read_json, read_jsonc
from ihmt_cli._agent_jsonc import UnsafeEditError, jsonc_edit
from ihmt_cli._agent_plan import Step, edit_step
from ihmt_cli._agent_setup import SERVER_NAME, AgentPaths, ServerSpec, stdio_argv
from ihmt_cli._types import SCOPES, Agent, Scope

__all__ = ["McpJsonSetup", "mcp_json_step", "xdg_config"]


def xdg_config(home: Path, environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME``, else ``~/.config``: where Linux applications keep their config."""
    xdg = environ.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg else home / ".config"


def mcp_json_step(
    path: Path,
    entry: Mapping[str, Any] | None,
    *,
    key: str,
    comments: bool,
    backups: list[str],
    new_file: Mapping[str, Any] | None = None,
) -> Step:
    """Set (``entry``) or remove (None) ``KEY.ihmt-memory`` in the JSON file ``path``,
    keeping everything else; ``comments``: the format allows them (they are kept either
    way); ``new_file``: what a file install creates holds besides (opencode's
    ``$schema``). The text is edited when the step runs (an earlier step of the plan may
    have changed the file); a file that cannot be edited safely is refused now.

    Raises:
        click.ClickException: the file does not parse, its ``KEY`` is not an object, or
            no safe edit exists; the message names the file and what to do by hand.
    """
    read = read_jsonc if comments else read_json
    data = read(path)  # refuses a file that does not parse, before anything else
    if data.get(key) is not None and not isinstance(data.get(key), dict):
        raise click.ClickException(
            f'"{key}" in {path} is not an object; fix it first, nothing was changed'
        )
    original = backup_of(path)
    try:
        keep_empty = original.is_file() and key in read(original)
    except click.ClickException:
        keep_empty = False
    created = not original.exists()
    fragment = json_text({key: {SERVER_NAME: dict(entry)}}) if entry is not None else ""

    def edit() -> str | None:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if entry is not None and not old.strip() and new_file:
            old = json_text(new_file)
        try:
            new = jsonc_edit(old, entry, keep_empty=keep_empty, key=key)
        except UnsafeEditError as exc:
            what = (
                f"paste this into {path}, inside its top-level object:\n{fragment}"
                if entry is not None
                else f'delete "{SERVER_NAME}" from "{key}" in {path}'
            )
            raise UnsafeEditError(
                f"cannot edit {path} safely ({exc.message}); nothing was changed: {what}"
            ) from None
        if entry is None and created and is_trivial(_loads(new)):
            return None
        return new

    edit()  # refuse now what cannot be done, before any step runs
    if entry is None:
        summary = f"remove {SERVER_NAME} from {path}"
        if created and not _holds_more(data, key):
            summary += " (install created it and it holds nothing else: delete the file)"
        preview = f'# {path}: delete "{key}" → "{SERVER_NAME}" (the rest kept)'
    else:
        summary = f"register {SERVER_NAME} in {path}"
        preview = f"# {path}: set (the rest kept)\n{fragment}"
    return edit_step(path, edit, summary=summary, preview=preview, backups=backups)


def _loads(text: str) -> dict[str, Any]:
    import json5

    data = json5.loads(text) if text.strip() else {}
    return data if isinstance(data, dict) else {"": data}


def _holds_more(data: Mapping[str, Any], key: str) -> bool:
    servers = {k: v for k, v in (data.get(key) or {}).items() if k != SERVER_NAME}
    return not is_trivial({**data, key: servers})


class McpJsonSetup:
    """:class:`~ihmt_cli._agent_setup.AgentSetup` of a client whose MCP servers are one
    JSON file's ``servers_key``, and that has no hooks (subclasses give ``paths``)."""

    agent: Agent
    name: str
    restart: str
    trust_hint = ""
    scopes: tuple[Scope, ...] = SCOPES
    servers_key = "mcpServers"
    comments = False
    """The file may hold comments (they are kept either way; this says how to read it)."""
    entry_type: str | None = None
    """The ``type`` the client's stdio entries carry, if it writes one."""
    notes_text: tuple[str, ...] = ()
    """What the user must know after an install (besides ``restart``)."""

    def entry(self, spec: ServerSpec) -> dict[str, Any]:
        """The entry install writes."""
        head = {"type": self.entry_type} if self.entry_type else {}
        return {**head, "command": spec.command, "args": list(spec.args), "env": spec.env}

    def read_registration(self, paths: AgentPaths) -> dict[str, Any] | None:
        read = read_jsonc if self.comments else read_json
        servers = read(paths.config).get(self.servers_key, {})
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
        return entry if isinstance(entry, dict) else None

    def registered_argv(self, entry: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
        return stdio_argv(entry)

    def is_entry_complete(self, entry: Mapping[str, Any]) -> bool:
        wanted = {k: v for k, v in self.entry(_ANY).items() if k not in ("command", "args", "env")}
        return all(json.dumps(entry.get(k)) == json.dumps(v) for k, v in wanted.items())

    def register_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec,
        entry: Mapping[str, Any] | None,
        *,
        backups: list[str],
    ) -> list[Step]:
        return [self._step(paths, self.entry(spec), backups=backups)]

    def unregister_steps(self, paths: AgentPaths, *, backups: list[str]) -> list[Step]:
        return [self._step(paths, None, backups=backups)]

    def _step(
        self, paths: AgentPaths, entry: Mapping[str, Any] | None, *, backups: list[str]
    ) -> Step:
        return mcp_json_step(
            paths.config,
            entry,
            key=self.servers_key,
            comments=self.comments,
            backups=backups,
        )

    # ------------------------------------------------------------------ no hooks
    def read_hooks(self, paths: AgentPaths) -> dict[str, bool]:
        return {}

    def hooks_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec | None,
        *,
        backups: list[str],
        unchanged: list[str],
    ) -> list[Step]:
        return []

    def notes(self, paths: AgentPaths, *, hooks: bool) -> list[str]:
        return list(self.notes_text)

    def hook_trust(self, paths: AgentPaths, *, cwd: Path) -> bool | None:
        return None


_ANY = ServerSpec(command="", ihmt_home="")
"""A spec whose entry shows the keys every entry of a client carries."""
