"""The plugins that bring IHMT to Claude Code and Codex, as ``ihmt doctor`` sees them.

A user who installed the ``ihmt`` plugin (docs/plugins.md) instead of running ``ihmt
install`` has the server and the hooks all the same: doctor reads where each agent
records its plugins, says which plugin, its version, whether it is on, the server it
starts and the hooks it brings, and starts that server as the agent would. With both a
plugin and ``ihmt install`` it warns: the agent then runs two servers and every hook
twice.

Where the agents record an installed plugin (seen with Claude Code 2.1.332 and Codex
0.171.0):

- **Claude Code**: ``~/.claude/plugins/installed_plugins.json`` (``$CLAUDE_CONFIG_DIR``
  instead of ``~/.claude``), ``{"version": 2, "plugins": {"<name>@<marketplace>":
  [{"scope", "installPath", "version", "projectPath"}]}}``, one entry per scope it was
  installed in (``projectPath`` for ``project`` and ``local``). Whether it is on is
  ``enabledPlugins["<id>"]`` in the settings: ``~/.claude/settings.json``, then the
  project's ``.claude/settings.json``, then ``.claude/settings.local.json`` (the last one
  that names it wins).
- **Codex**: ``[plugins."<name>@<marketplace>"]`` with ``enabled`` in
  ``$CODEX_HOME/config.toml`` (``~/.codex``); the plugin's files are copied to
  ``$CODEX_HOME/plugins/cache/<marketplace>/<name>/<version>``.

The plugin's own files say what it brings: its manifest (``.claude-plugin/plugin.json``
or ``.codex-plugin/plugin.json``) names its ``mcpServers`` and ``hooks`` (a file, a list
of files, or the entries themselves), else ``.mcp.json`` and ``hooks/hooks.json``. A
plugin is IHMT's when it starts ``ihmt``/``ihmt-mcp`` or a server named ``ihmt-memory``,
or runs ``ihmt hook``, whatever its name or marketplace.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ihmt_cli._agent_setup import OUR_HOOK, SERVER_NAME
from ihmt_cli._types import Agent

__all__ = [
    "PluginInstall",
    "PluginServer",
    "attach_plugins",
    "double_registration",
    "ihmt_plugins",
    "plugin_lines",
    "plugin_note",
    "set_up_by_plugin",
]

PLUGIN_AGENTS: tuple[Agent, ...] = ("claude-code", "codex")
"""The agents that install plugins."""
_PROGRAMS = ("ihmt", "ihmt-mcp")
_ROOT_VARIABLES = ("${CLAUDE_PLUGIN_ROOT}", "${PLUGIN_ROOT}")


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginServer:
    """One MCP server a plugin starts."""

    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginInstall:
    """One install of a plugin that brings IHMT, as its agent recorded it."""

    agent: Agent
    plugin: str
    """``<name>@<marketplace>``."""
    version: str
    scope: str
    """``user``; Claude Code also ``project`` and ``local`` (one project)."""
    project: str | None
    """The project a ``project`` or ``local`` install is for."""
    enabled: bool
    applies: bool
    """It is for every project, or for the one doctor runs in."""
    path: Path
    """Where the agent keeps the plugin's files."""
    servers: tuple[PluginServer, ...] = ()
    hooks: tuple[tuple[str, str], ...] = ()
    """``(event, command)`` of each hook it brings."""
    hook_files: tuple[Path, ...] = ()

    @property
    def active(self) -> bool:
        """Enabled, and for the project doctor runs in."""
        return self.enabled and self.applies

    def ihmt_server(self) -> PluginServer | None:
        """The server of the plugin that is the memory's, if it has one."""
        return next((s for s in self.servers if _is_ihmt_server(s)), None)

    def to_json(self) -> dict[str, Any]:
        events: dict[str, list[str]] = {}
        for event, command in self.hooks:
            events.setdefault(event, []).append(command)
        return {
            "plugin": self.plugin,
            "version": self.version,
            "scope": self.scope,
            "project": self.project,
            "enabled": self.enabled,
            "applies": self.applies,
            "path": str(self.path),
            "servers": {s.name: list(s.argv) for s in self.servers},
            "hooks": events,
        }


# ---------------------------------------------------------------------- reading
def _json_file(path: Path) -> Any:
    """The JSON in ``path``; None when it is missing or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _in_root(text: str, root: Path) -> str:
    for variable in _ROOT_VARIABLES:
        text = text.replace(variable, str(root))
    return text


def _specs(value: Any, default: str) -> list[Any]:
    """A manifest's ``mcpServers`` or ``hooks``: each file named or entry given."""
    if value is None:
        value = default
    return value if isinstance(value, list) else [value]


def _loaded(spec: Any, root: Path) -> Any:
    if isinstance(spec, str):
        return _json_file(root / _in_root(spec, root))
    return spec


def _servers_of(manifest: Mapping[str, Any], root: Path) -> tuple[PluginServer, ...]:
    found: list[PluginServer] = []
    for spec in _specs(manifest.get("mcpServers"), "./.mcp.json"):
        data = _loaded(spec, root)
        if not isinstance(data, dict):
            continue
        entries = data.get("mcpServers", data)
        if not isinstance(entries, dict):
            continue
        for name, entry in entries.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
                continue
            args = entry.get("args")
            argv = [entry["command"], *(a for a in args or [] if isinstance(a, str))]
            env = entry.get("env")
            pairs = (
                sorted((str(k), str(v)) for k, v in env.items()) if isinstance(env, dict) else []
            )
            found.append(
                PluginServer(
                    name=str(name),
                    argv=tuple(_in_root(a, root) for a in argv),
                    env=tuple((k, _in_root(v, root)) for k, v in pairs),
                )
            )
    return tuple(found)


def _hooks_of(
    manifest: Mapping[str, Any], root: Path
) -> tuple[tuple[tuple[str, str], ...], tuple[Path, ...]]:
    hooks: list[tuple[str, str]] = []
    files: list[Path] = []
    for spec in _specs(manifest.get("hooks"), "./hooks/hooks.json"):
        data = _loaded(spec, root)
        if isinstance(spec, str) and data is not None:
            files.append(root / _in_root(spec, root))
        events = data.get("hooks", data) if isinstance(data, dict) else None
        if not isinstance(events, dict):
            continue
        for event, groups in events.items():
            for group in groups if isinstance(groups, list) else []:
                handlers = group.get("hooks") if isinstance(group, dict) else None
                for handler in handlers if isinstance(handlers, list) else []:
                    command = handler.get("command") if isinstance(handler, dict) else None
                    if isinstance(command, str):
                        hooks.append((str(event), command))
    return tuple(hooks), tuple(f.resolve() for f in files)


def _is_ihmt_server(server: PluginServer) -> bool:
    program = Path(server.argv[0]).name if server.argv else ""
    return server.name == SERVER_NAME or program in _PROGRAMS


def _is_ihmt_hook(command: str) -> bool:
    return OUR_HOOK.search(f" {command}") is not None


def _parts(root: Path, manifest_folder: str) -> tuple[str, dict[str, Any]]:
    """The version in the plugin's manifest, and the manifest."""
    manifest = _json_file(root / manifest_folder / "plugin.json")
    manifest = manifest if isinstance(manifest, dict) else {}
    version = manifest.get("version")
    return (version if isinstance(version, str) else ""), manifest


def _within(folder: str, cwd: Path) -> bool:
    try:
        here, there = cwd.resolve(), Path(folder).expanduser().resolve()
    except OSError:
        return False
    return here == there or there in here.parents


def _claude_enabled(plugin: str, config_dir: Path, project: Path) -> bool:
    """``enabledPlugins[plugin]`` as Claude Code reads it in ``project``."""
    value = False
    for settings in (
        config_dir / "settings.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ):
        data = _json_file(settings)
        enabled = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(enabled, dict) and plugin in enabled:
            value = enabled[plugin] is True
    return value


def _claude_installs(config_dir: Path, cwd: Path) -> list[PluginInstall]:
    data = _json_file(config_dir / "plugins" / "installed_plugins.json")
    plugins = data.get("plugins") if isinstance(data, dict) else None
    found: list[PluginInstall] = []
    for plugin, entries in (plugins or {}).items() if isinstance(plugins, dict) else ():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict) or not isinstance(entry.get("installPath"), str):
                continue
            root = Path(entry["installPath"])
            version, manifest = _parts(root, ".claude-plugin")
            install = _install(
                "claude-code", str(plugin), root, manifest, version or str(entry.get("version"))
            )
            scope = str(entry.get("scope") or "user")
            project = entry.get("projectPath") if scope != "user" else None
            project = project if isinstance(project, str) else None
            applies = project is None or _within(project, cwd)
            where = Path(project) if project else cwd
            if install is not None:
                found.append(
                    _with(
                        install,
                        scope=scope,
                        project=project,
                        applies=applies,
                        enabled=_claude_enabled(str(plugin), config_dir, where),
                    )
                )
    return found


def _codex_installs(codex_home: Path) -> list[PluginInstall]:
    import tomllib

    try:
        config = tomllib.loads((codex_home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    plugins = config.get("plugins")
    found: list[PluginInstall] = []
    for plugin, table in plugins.items() if isinstance(plugins, dict) else ():
        if not isinstance(table, dict):
            continue
        name, _, market = str(plugin).partition("@")
        folder = codex_home / "plugins" / "cache" / market / name
        try:
            versions = [v for v in folder.iterdir() if v.is_dir()] if market else []
        except OSError:
            versions = []
        if not versions:
            continue
        root = max(versions, key=lambda v: v.stat().st_mtime)
        version, manifest = _parts(root, ".codex-plugin")
        install = _install("codex", str(plugin), root, manifest, version or root.name)
        if install is not None:
            found.append(_with(install, enabled=table.get("enabled", True) is not False))
    return found


def _install(
    agent: Agent, plugin: str, root: Path, manifest: Mapping[str, Any], version: str
) -> PluginInstall | None:
    """The plugin at ``root`` if it brings IHMT, as a user-scope, enabled install."""
    servers = _servers_of(manifest, root)
    hooks, files = _hooks_of(manifest, root)
    if not any(_is_ihmt_server(s) for s in servers) and not any(_is_ihmt_hook(c) for _, c in hooks):
        return None
    return PluginInstall(
        agent=agent,
        plugin=plugin,
        version=version,
        scope="user",
        project=None,
        enabled=True,
        applies=True,
        path=root,
        servers=servers,
        hooks=hooks,
        hook_files=files,
    )


def _with(install: PluginInstall, **changes: Any) -> PluginInstall:
    from dataclasses import replace

    return replace(install, **changes)


def ihmt_plugins(*, home: Path, environ: Mapping[str, str], cwd: Path) -> list[PluginInstall]:
    """Every install of a plugin that brings IHMT to Claude Code or Codex."""
    claude = Path(environ["CLAUDE_CONFIG_DIR"]) if environ.get("CLAUDE_CONFIG_DIR") else None
    codex = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
    return [*_claude_installs(claude or home / ".claude", cwd), *_codex_installs(codex)]


# ---------------------------------------------------------------------- the rows
def double_registration(
    agent: Agent, plugin: PluginInstall, installed: Sequence[Mapping[str, Any]]
) -> str:
    """The warning for ``plugin`` and ``ihmt install``'s registrations (``installed``,
    doctor's rows of ``agent`` that are registered) both giving the agent the memory."""
    where = ", ".join(str(row["config"]) for row in installed)
    hooks_twice = bool(plugin.hooks) and any(
        (row.get("hooks") or {}).get("present") for row in installed
    )
    uninstall = "claude plugin uninstall" if agent == "claude-code" else "codex plugin remove"
    return (
        f"the memory is set up twice for {agent}: by the plugin {plugin.plugin} and by "
        f"ihmt install ({where}); the agent starts two servers"
        + (" and runs every memory hook twice" if hooks_twice else "")
        + f". Keep one: ihmt uninstall {agent}, or {uninstall} {plugin.plugin}"
    )


def plugin_note(agent: Agent, *, cwd: Path | None = None) -> str | None:
    """What ``ihmt install AGENT`` says when an enabled plugin already gives the agent
    the memory (None: no such plugin)."""
    if agent not in PLUGIN_AGENTS:
        return None
    found = ihmt_plugins(home=Path.home(), environ=os.environ, cwd=cwd or Path.cwd())
    plugin = next((p for p in found if p.agent == agent and p.active and p.ihmt_server()), None)
    if plugin is None:
        return None
    uninstall = "claude plugin uninstall" if agent == "claude-code" else "codex plugin remove"
    return (
        f"the plugin {plugin.plugin} already gives {agent} the memory; with this install "
        "too the agent starts two servers and runs every memory hook twice. Keep one: "
        f"{uninstall} {plugin.plugin}, or ihmt uninstall {agent}."
    )


def _memory_of(server: PluginServer) -> Path:
    """The IHMT_HOME the plugin's server opens (the agent's environment's, by default)."""
    home = dict(server.env).get("IHMT_HOME") or os.environ.get("IHMT_HOME") or "~/.ihmt"
    return Path(home).expanduser().resolve()


def attach_plugins(
    rows: list[dict[str, Any]],
    ihmt_home: Path,
    *,
    no_connect: bool,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> None:
    """Add ``plugins`` (and ``warnings``) to the user-scope row of each agent that has
    an IHMT plugin; with ``no_connect`` no server is started and Codex is not asked."""
    from ihmt_cli._agent_codex import codex_hook_trust
    from ihmt_cli._doctor import probe_server

    here = cwd or Path.cwd()
    installs = ihmt_plugins(
        home=home or Path.home(), environ=os.environ if environ is None else environ, cwd=here
    )
    probes: dict[PluginServer, dict[str, Any]] = {}  # one plugin in two scopes: one server
    for agent in PLUGIN_AGENTS:
        mine = [p for p in installs if p.agent == agent]
        row = next((r for r in rows if r["agent"] == agent and r["scope"] == "user"), None)
        if not mine or row is None:
            continue
        items = []
        for install in mine:
            item = install.to_json()
            server = install.ihmt_server()
            item["memory_server"] = server.name if server is not None else None
            if server is not None:
                item["ihmt_home"] = str(_memory_of(server))
                item["same_memory"] = _memory_of(server) == ihmt_home
            item["hooks_trusted"] = None
            if install.active and not no_connect:
                if server is not None and server not in probes:
                    probes[server] = probe_server(server.argv, dict(server.env)).to_json()
                if server is not None:
                    item["probe"] = probes[server]
                if agent == "codex" and install.hook_files:
                    trusted = [codex_hook_trust(f, cwd=here) for f in install.hook_files]
                    item["hooks_trusted"] = None if None in trusted else all(trusted)
            items.append(item)
        row["plugins"] = items
        installed = [r for r in rows if r["agent"] == agent and r.get("registered")]
        active = [p for p in mine if p.active and p.ihmt_server() is not None]
        if active and installed:
            row.setdefault("warnings", []).append(double_registration(agent, active[0], installed))


def plugin_lines(row: Mapping[str, Any]) -> list[str]:
    """The report's lines for a row's plugins and warnings, indented under the row."""
    lines = []
    for item in row.get("plugins") or ():
        scope = item["scope"] + (f" for {item['project']}" if item["project"] else "")
        state = "enabled" if item["enabled"] else "disabled"
        if item["enabled"] and not item["applies"]:
            state += ", not for this project"
        parts = [f"plugin {item['plugin']} {item['version']} ({scope}, {state}) in {item['path']}"]
        for name, argv in item["servers"].items():
            parts.append(f"server {name}: {' '.join(argv)}")
        if item.get("ihmt_home") and not item.get("same_memory"):
            parts.append(f"IHMT_HOME={item['ihmt_home']}, a different memory")
        if item["hooks"]:
            hooks = "hooks " + ", ".join(item["hooks"])
            if item.get("hooks_trusted") is False:
                hooks += " NOT trusted (in codex: /hooks, then trust the ihmt hooks)"
            elif item.get("hooks_trusted") is True:
                hooks += " (trusted)"
            parts.append(hooks)
        probe = item.get("probe")
        if probe is not None:
            parts.append(
                f"connects ✔ ({len(probe['tools'])} tools)"
                if probe["connects"]
                else f"does NOT connect: {probe['error']}"
            )
        lines.append("  " + " · ".join(parts))
    lines += [f"  WARNING: {warning}" for warning in row.get("warnings") or ()]
    return lines


def set_up_by_plugin(row: Mapping[str, Any]) -> bool:
    """Whether an enabled plugin gives this row's agent the memory here."""
    plugins = row.get("plugins") or ()
    return any(p["enabled"] and p["applies"] and p.get("memory_server") for p in plugins)
