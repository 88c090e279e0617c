"""Codex's setup: the server in ``config.toml`` (``$CODEX_HOME``, else ``~/.codex``; a
project's ``.codex/``), through ``codex mcp`` when it is on PATH, with the read-only
tools approved; the recall hooks in ``hooks.json`` beside it, which Codex runs only once
the user trusts them (``ihmt doctor`` asks ``codex app-server``); the instructions in
AGENTS.md. The TOML is edited with tomlkit, so the user's comments and order stay.
"""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_files import write_text
from ihmt_cli._agent_json_hooks import JsonHooks
from ihmt_cli._agent_plan import Step, cli_register_steps, file_step
from ihmt_cli._agent_setup import HOOK_EVENTS, SERVER_NAME, AgentPaths, ServerSpec, stdio_argv
from ihmt_cli._types import Agent, Scope

__all__ = ["CODEX", "READ_ONLY_TOOLS", "CodexSetup", "codex_hook_trust"]

READ_ONLY_TOOLS = ("search_memory", "recall", "project_map", "find_code")
"""The tools Codex runs without asking: they read the memory or the code index only.
``read_file`` reads any file on disk, so Codex asks for it like for every tool that writes."""


class CodexSetup(JsonHooks):
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for Codex."""

    agent: Agent = "codex"
    name = "Codex"
    restart = "Start a new Codex session (codex) so the memory tools load."
    trust_hint = "in codex: /hooks, then trust the ihmt hooks"
    hook_events = (*HOOK_EVENTS, ("Stop", "stop"))

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        env = environ
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        folder = codex_home if scope == "user" else project / ".codex"
        instructions = (codex_home if scope == "user" else project) / "AGENTS.md"
        return AgentPaths(
            agent=self.agent,
            scope=scope,
            config=folder / "config.toml",
            instructions=instructions,
            cli="codex",
            hooks=folder / "hooks.json",
        )

    def read_registration(self, paths: AgentPaths) -> dict[str, Any] | None:
        servers = _read_toml(paths.config).get("mcp_servers", {})
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
        return _plain(entry) if isinstance(entry, dict) else None

    def registered_argv(self, entry: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
        return stdio_argv(entry)

    def is_entry_complete(self, entry: Mapping[str, Any]) -> bool:
        return _approvals_right(entry)

    def register_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec,
        entry: Mapping[str, Any] | None,
        *,
        backups: list[str],
    ) -> list[Step]:
        """Register by editing config.toml, or through Codex's own CLI (user scope) and
        then get the read-only tools approved in its config file."""
        cli = shutil.which(paths.cli)
        if cli is None or paths.scope == "project":
            return [
                file_step(
                    paths.config,
                    _toml_edit(paths.config, spec),
                    summary=f"register {SERVER_NAME} in {paths.config}",
                    preview=_codex_preview(paths, spec),
                    backups=backups,
                )
            ]
        remove = [cli, "mcp", "remove", SERVER_NAME]
        add = [cli, "mcp", "add", SERVER_NAME, "--env", f"IHMT_HOME={spec.ihmt_home}", "--"]
        add += spec.argv
        steps = cli_register_steps(
            paths.config,
            remove=remove,
            add=add,
            entry=entry,
            name=self.name,
            registered_as=self.name,
            backups=backups,
        )

        def approve() -> None:
            write_text(paths.config, _toml_edit(paths.config, spec, approve_only=True))

        steps.append(
            Step(
                action="write",
                summary=f"approve the read-only tools of {SERVER_NAME} ("
                f"{', '.join(READ_ONLY_TOOLS)}) in {paths.config}",
                preview=_codex_preview(paths, spec),
                path=paths.config,
                apply=approve,
            )
        )
        return steps

    def unregister_steps(self, paths: AgentPaths, *, backups: list[str]) -> list[Step]:
        return [
            file_step(
                paths.config,
                _toml_edit(paths.config, None),
                summary=f"remove {SERVER_NAME} from {paths.config}",
                preview=f"# {paths.config}: delete [mcp_servers.{SERVER_NAME}]",
                backups=backups,
            )
        ]

    def notes(self, paths: AgentPaths, *, hooks: bool) -> list[str]:
        notes = [
            f"Codex runs {', '.join(READ_ONLY_TOOLS)} without asking; it asks before "
            "save_memory, mark_outdated, note, digest_output, read_file and forget_memory."
        ]
        if hooks:
            notes.append(
                f"Codex runs new hooks only once you trust them: start codex, type /hooks "
                f"and trust the 'ihmt hook' entries from {paths.hooks} (Codex keeps the "
                "trust in config.toml [hooks.state]). Until then it skips them."
            )
        return notes

    def hook_trust(self, paths: AgentPaths, *, cwd: Path) -> bool | None:
        return codex_hook_trust(paths.hooks, cwd=cwd)


CODEX = CodexSetup()


# ---------------------------------------------------------------------- config.toml
def _read_toml(path: Path) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    if not path.exists():
        return tomlkit.document()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise click.ClickException(
            f"{path} is not UTF-8 text; fix it first, nothing was changed"
        ) from None
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:  # a parse error, a key given twice
        raise click.ClickException(
            f"{path} is not valid TOML ({exc}); fix it first, nothing was changed"
        ) from None


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _toml_table_text(spec: ServerSpec) -> str:
    import tomlkit

    doc = tomlkit.document()
    doc.add("mcp_servers", _toml_servers(spec))
    return tomlkit.dumps(doc)


def _toml_servers(spec: ServerSpec) -> Any:
    import tomlkit

    servers = tomlkit.table(is_super_table=True)
    servers.add(SERVER_NAME, _toml_entry(spec))
    return servers


def _approvals_right(entry: Mapping[str, Any]) -> bool:
    """Only the read-only tools approved: no blanket approval, each of them approved."""
    if entry.get("default_tools_approval_mode") == "approve":
        return False
    tools = entry.get("tools") or {}
    return all(
        isinstance(tools.get(name), Mapping) and tools[name].get("approval_mode") == "approve"
        for name in READ_ONLY_TOOLS
    )


def _toml_tools() -> Any:
    import tomlkit

    # Codex asks before every call of a server's tools unless told otherwise; the tools
    # that only read are approved, everything that writes or reads a file still asks.
    tools = tomlkit.table(is_super_table=True)
    for name in READ_ONLY_TOOLS:
        tool = tomlkit.table()
        tool.add("approval_mode", "approve")
        tools.add(name, tool)
    return tools


def _set_approvals(entry: Any) -> None:
    """Approve the read-only tools in an existing entry; drop a blanket approval."""
    if entry.get("default_tools_approval_mode") == "approve":
        del entry["default_tools_approval_mode"]
    tools = entry.get("tools")
    if tools is None:
        entry.add("tools", _toml_tools())
        return
    for name in READ_ONLY_TOOLS:
        if name in tools:
            tools[name]["approval_mode"] = "approve"
        else:
            tools.add(name, _toml_tools()[name])


def _toml_entry(spec: ServerSpec) -> Any:
    import tomlkit

    entry = tomlkit.table()
    entry.add("command", spec.command)
    entry.add("args", list(spec.args))
    env = tomlkit.table()
    env.add("IHMT_HOME", spec.ihmt_home)
    entry.add("env", env)
    entry.add("tools", _toml_tools())
    return entry


def _toml_edit(path: Path, spec: ServerSpec | None, *, approve_only: bool = False) -> str:
    """The config text with the server set (or, ``spec`` None, removed); the rest untouched.

    An inline ``mcp_servers = { … }`` cannot hold our entry as a table: it becomes a
    ``[mcp_servers.<name>]`` table per server, entries kept (an uninstall that leaves the
    same data gives the original bytes back). The edited text is parsed again and must
    differ from the old one in our entry only.

    Raises:
        click.ClickException: the file does not parse, ``mcp_servers`` is not a table,
            or no safe edit exists; it names the file and what to do by hand.
    """
    doc = _read_toml(path)
    before = _plain(doc)
    try:
        text = _edited(doc, path, spec, approve_only=approve_only)
        after = tomllib.loads(text)
    except click.ClickException:
        raise
    except Exception as exc:  # noqa: BLE001 — tomlkit raises several unrelated types
        raise _cannot_edit(path, spec, str(exc)) from None
    registered = isinstance(after.get("mcp_servers"), dict) and SERVER_NAME in after["mcp_servers"]
    if _others(after) != _others(before) or registered != (spec is not None):
        raise _cannot_edit(path, spec, f"the edit would change more than {SERVER_NAME}")
    return text


def _edited(doc: Any, path: Path, spec: ServerSpec | None, *, approve_only: bool) -> str:
    import tomlkit
    from tomlkit.items import InlineTable

    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise click.ClickException(
            f'"mcp_servers" in {path} is not a table; fix it first, nothing was changed'
        )
    if spec is None:
        if servers is not None and SERVER_NAME in servers:
            del servers[SERVER_NAME]
            if not servers:
                del doc["mcp_servers"]
        text = tomlkit.dumps(doc)
        # tomlkit keeps the blank lines that stood before the removed table
        return text.rstrip("\n") + "\n" if text.strip() else ""
    if servers is None:
        doc.add("mcp_servers", _toml_servers(spec))
        return tomlkit.dumps(doc)
    if isinstance(servers, InlineTable):
        servers = _as_tables(servers)
        del doc["mcp_servers"]
        doc.add("mcp_servers", servers)
    existing = servers.get(SERVER_NAME)
    if approve_only and isinstance(existing, dict) and not isinstance(existing, InlineTable):
        if not _approvals_right(_plain(existing)):
            _set_approvals(existing)
        return tomlkit.dumps(doc)
    if existing is not None:
        del servers[SERVER_NAME]
    servers.add(SERVER_NAME, _toml_entry(spec))
    return tomlkit.dumps(doc)


def _as_tables(inline: Any) -> Any:
    """An inline ``{ name = { … }, … }`` as a super table of ``[mcp_servers.<name>]``
    tables, each server's keys kept (its own inline values stay inline)."""
    import tomlkit
    from tomlkit.items import InlineTable

    servers = tomlkit.table(is_super_table=True)
    for name, value in inline.items():
        if isinstance(value, InlineTable):
            table = tomlkit.table()
            for key, item in value.items():
                table.add(key, item)
            servers.add(name, table)
        else:
            servers.add(name, value)
    return servers


def _others(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without our server's entry (and without an ``mcp_servers`` left empty)."""
    out = dict(data)
    servers = out.get("mcp_servers")
    if isinstance(servers, Mapping):
        rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
        if rest:
            out["mcp_servers"] = rest
        else:
            out.pop("mcp_servers")
    return out


def _cannot_edit(path: Path, spec: ServerSpec | None, why: str) -> click.ClickException:
    if spec is None:
        what = f"delete the [mcp_servers.{SERVER_NAME}] table from {path}"
    else:
        what = f"add this to {path} by hand:\n{_toml_table_text(spec)}"
    return click.ClickException(f"cannot edit {path} safely ({why}); nothing was changed: {what}")


def _codex_preview(paths: AgentPaths, spec: ServerSpec) -> str:
    return f"# {paths.config}\n{_toml_table_text(spec)}"


# ---------------------------------------------------------------------- hook trust
def codex_hook_trust(hooks_file: Path, *, cwd: Path, timeout: float = 20.0) -> bool | None:
    """Whether Codex trusts the ``ihmt hook`` entries of ``hooks_file``; None: unknown.

    Asks Codex itself: ``codex app-server`` answers ``hooks/list`` with each hook's
    ``trustStatus`` (a user trusts a hook with ``/hooks`` in the Codex TUI, which keeps
    the hash in config.toml ``[hooks.state]``). This is Codex's own JSON-RPC, not MCP.
    """
    import json
    import queue
    import subprocess
    import threading

    codex = shutil.which("codex")
    if codex is None:
        return None
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "ihmt-doctor", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]  # fmt: skip
    try:
        process = subprocess.Popen(
            [codex, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    try:
        assert process.stdin is not None
        process.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        process.stdin.flush()
        while True:
            line = lines.get(timeout=timeout)
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == 2:
                break
    except (queue.Empty, OSError):
        return None
    finally:
        process.kill()
        process.wait(timeout=10)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
    found = [
        hook
        for group in (message.get("result") or {}).get("data") or []
        for hook in group.get("hooks") or []
        if Path(str(hook.get("sourcePath", ""))) == hooks_file
        and " hook " in str(hook.get("command", ""))
        and "ihmt" in str(hook.get("command", ""))
    ]
    if not found:
        return None
    return all(hook.get("trustStatus") in ("trusted", "managed") for hook in found)
