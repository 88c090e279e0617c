"""``ihmt install`` / ``ihmt uninstall``: register the MCP server with an agent.

An install is a :class:`Plan` of :class:`Step` s — run the agent's own CLI, or write
one config or instructions file — computed from what is on disk now, so a second run
finds nothing to do. ``--dry-run`` prints each step's exact command or file fragment
and writes nothing. Every file is copied to ``<file>.bak-ihmt`` before it is changed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import click

__all__ = [
    "AGENTS",
    "BACKUP_SUFFIX",
    "BEGIN_MARKER",
    "END_MARKER",
    "SERVER_NAME",
    "AgentPaths",
    "Plan",
    "ServerSpec",
    "Step",
    "agent_paths",
    "install_plan",
    "instructions_block",
    "read_registration",
    "server_spec",
    "uninstall_plan",
]

SERVER_NAME = "ihmt-memory"
AGENTS = ("claude-code", "codex", "opencode")
SCOPES = ("user", "project")
BACKUP_SUFFIX = ".bak-ihmt"
BEGIN_MARKER = "<!-- ihmt-memory:begin (added by `ihmt install`; `ihmt uninstall` removes it) -->"
END_MARKER = "<!-- ihmt-memory:end -->"
CLI_TIMEOUT = 120.0
OPENCODE_SCHEMA = "https://opencode.ai/config.json"


# ---------------------------------------------------------------------- what to register
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    """The stdio command an agent runs to start the memory server."""

    command: str
    """An absolute path: agents start servers without the user's shell or virtualenv."""
    args: tuple[str, ...] = ()
    ihmt_home: str
    """The ``IHMT_HOME`` passed in the server's environment: which memory it serves."""

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.command, *self.args)

    @property
    def env(self) -> dict[str, str]:
        return {"IHMT_HOME": self.ihmt_home}


def server_spec(home: Path, *, executable: str | None = None) -> ServerSpec:
    """The ``ihmt-mcp`` console script beside this interpreter, else ``python -m ihmt_mcp``."""
    python = Path(executable or sys.executable).absolute()
    for name in ("ihmt-mcp", "ihmt-mcp.exe"):
        script = python.parent / name
        if script.is_file():
            return ServerSpec(command=str(script), ihmt_home=str(home))
    return ServerSpec(command=str(python), args=("-m", "ihmt_mcp"), ihmt_home=str(home))


def instructions_text() -> str:
    """The usage instructions appended to CLAUDE.md / AGENTS.md (shipped in the package)."""
    source = resources.files("ihmt_cli").joinpath("templates", "memory-instructions.md")
    return source.read_text(encoding="utf-8")


def instructions_block() -> str:
    """The instructions between the markers that let a second run find them."""
    return f"{BEGIN_MARKER}\n{instructions_text().strip()}\n{END_MARKER}\n"


# ---------------------------------------------------------------------- where agents keep config
@dataclass(frozen=True, slots=True, kw_only=True)
class AgentPaths:
    """The files one agent reads in one scope."""

    agent: str
    scope: str
    config: Path
    """Where the server registration lives (JSON, or TOML for Codex)."""
    instructions: Path
    """The CLAUDE.md / AGENTS.md the usage instructions go into."""
    cli: str
    """The agent's own command-line program, looked up on PATH."""


def agent_paths(
    agent: str,
    scope: str,
    *,
    home: Path | None = None,
    project: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> AgentPaths:
    """Config and instructions files of ``agent`` in ``scope`` (``user`` or ``project``)."""
    env = os.environ if environ is None else environ
    user_home = home or Path.home()
    project_dir = project or Path.cwd()
    if agent == "claude-code":
        config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None
        if scope == "user":
            config = (config_dir or user_home) / ".claude.json"
            instructions = (config_dir or user_home / ".claude") / "CLAUDE.md"
        else:
            config, instructions = project_dir / ".mcp.json", project_dir / "CLAUDE.md"
        return AgentPaths(
            agent=agent, scope=scope, config=config, instructions=instructions, cli="claude"
        )
    if agent == "codex":
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else user_home / ".codex"
        if scope == "user":
            config, instructions = codex_home / "config.toml", codex_home / "AGENTS.md"
        else:
            config, instructions = project_dir / ".codex" / "config.toml", project_dir / "AGENTS.md"
        return AgentPaths(
            agent=agent, scope=scope, config=config, instructions=instructions, cli="codex"
        )
    if agent == "opencode":
        xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else None
        base = (xdg or user_home / ".config") / "opencode"
        if scope == "user":
            config, instructions = base / "opencode.json", base / "AGENTS.md"
        else:
            config, instructions = project_dir / "opencode.json", project_dir / "AGENTS.md"
        return AgentPaths(
            agent=agent, scope=scope, config=config, instructions=instructions, cli="opencode"
        )
    raise ValueError(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")


# ---------------------------------------------------------------------- reading config files
def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.ClickException(
            f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it first, "
            "nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise click.ClickException(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _read_toml(path: Path) -> Any:
    import tomlkit
    from tomlkit.exceptions import ParseError

    if not path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except ParseError as exc:
        raise click.ClickException(
            f"{path} is not valid TOML ({exc}); fix it first, nothing was changed"
        ) from None


def _json_servers_key(agent: str) -> str:
    return "mcp" if agent == "opencode" else "mcpServers"


def read_registration(paths: AgentPaths) -> dict[str, Any] | None:
    """The ``ihmt-memory`` entry in the agent's config, as plain data, or None."""
    if paths.agent == "codex":
        servers = _read_toml(paths.config).get("mcp_servers", {})
        entry = servers.get(SERVER_NAME) if hasattr(servers, "get") else None
        return _plain(entry) if entry is not None else None
    servers = _read_json(paths.config).get(_json_servers_key(paths.agent), {})
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def registered_argv(agent: str, entry: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment an agent's entry starts the server with."""
    if agent == "opencode":
        command = entry.get("command", [])
        argv = [str(c) for c in command] if isinstance(command, list) else [str(command)]
        env = entry.get("environment", {})
    else:
        argv = [str(entry.get("command", "")), *(str(a) for a in entry.get("args", []))]
        env = entry.get("env", {})
    return argv, {str(k): str(v) for k, v in (env or {}).items()}


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


# ---------------------------------------------------------------------- plans and steps
@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One change: run a command, or write a file."""

    action: str
    """``run`` or ``write``."""
    summary: str
    """One line saying what it does, for the report."""
    preview: str
    """The exact command, or the JSON/TOML/Markdown it writes: what ``--dry-run`` prints."""
    path: Path | None = None
    """The file it changes (backed up first), if any."""
    apply: Callable[[], None] = field(repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "summary": self.summary,
            "preview": self.preview,
            "path": str(self.path) if self.path else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What ``ihmt install``/``uninstall`` does for one agent, in order."""

    agent: str
    scope: str
    ihmt_home: str | None
    steps: tuple[Step, ...]
    unchanged: tuple[str, ...]
    """What already was as it should be."""
    backups: list[str] = field(default_factory=list)

    def run(self) -> None:
        for step in self.steps:
            step.apply()


def _backup(path: Path, backups: list[str]) -> None:
    if path.exists():
        target = path.with_name(path.name + BACKUP_SUFFIX)
        shutil.copy2(path, target)
        backups.append(str(target))


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.ihmt-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _file_step(
    path: Path, text: str | None, *, summary: str, preview: str, backups: list[str]
) -> Step:
    """Write ``text`` to ``path`` (None: delete it), backing the old file up first."""

    def apply() -> None:
        _backup(path, backups)
        if text is None:
            path.unlink(missing_ok=True)
        else:
            _write_text(path, text)

    return Step(action="write", summary=summary, preview=preview, path=path, apply=apply)


def _run_step(argv: list[str], *, backs_up: Path, summary: str, backups: list[str] | None) -> Step:
    """Run an agent's CLI; ``backups`` None: an earlier step already backed the file up."""

    def apply() -> None:
        if backups is not None:
            _backup(backs_up, backups)
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise click.ClickException(f"could not run {shlex.join(argv)}: {exc}") from None
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise click.ClickException(
                f"{shlex.join(argv)} failed (exit {done.returncode}): "
                f"{said[-1] if said else 'no output'}"
            )

    return Step(action="run", summary=summary, preview=shlex.join(argv), path=backs_up, apply=apply)


# ---------------------------------------------------------------------- instructions
def _with_block(text: str, block: str) -> str:
    start, end = text.find(BEGIN_MARKER), text.find(END_MARKER)
    if start >= 0 and end > start:
        return text[:start] + block.rstrip("\n") + text[end + len(END_MARKER) :]
    if not text.strip():
        return block
    return text.rstrip("\n") + "\n\n" + block


def _without_block(text: str) -> str:
    start, end = text.find(BEGIN_MARKER), text.find(END_MARKER)
    if start < 0 or end < start:
        return text
    before, after = text[:start].rstrip("\n"), text[end + len(END_MARKER) :].lstrip("\n")
    if before and after:
        return before + "\n\n" + after
    return (before + "\n") if before else after


def _instructions_steps(
    path: Path, *, install: bool, backups: list[str], unchanged: list[str]
) -> list[Step]:
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if install:
        new = _with_block(old, instructions_block())
        if new == old:
            unchanged.append(f"the memory instructions are already in {path}")
            return []
        verb = (
            "update the memory instructions in"
            if BEGIN_MARKER in old
            else "append the memory instructions to"
        )
        return [
            _file_step(
                path,
                new,
                summary=f"{verb} {path}",
                preview=f"# {path}: append between the markers\n{instructions_block()}",
                backups=backups,
            )
        ]
    new = _without_block(old)
    if new == old:
        unchanged.append(f"no memory instructions in {path}")
        return []
    return [
        _file_step(
            path,
            new if new.strip() else None,
            summary=f"remove the memory instructions from {path}"
            + ("" if new.strip() else " (it holds nothing else: delete the file)"),
            preview=f"# {path}: remove the block between the ihmt-memory markers",
            backups=backups,
        )
    ]


# ---------------------------------------------------------------------- registrations
def _json_entry(agent: str, spec: ServerSpec) -> dict[str, Any]:
    if agent == "opencode":
        return {
            "type": "local",
            "command": list(spec.argv),
            "environment": spec.env,
            "enabled": True,
        }
    return {"type": "stdio", "command": spec.command, "args": list(spec.args), "env": spec.env}


def _same_server(agent: str, entry: Mapping[str, Any] | None, spec: ServerSpec) -> bool:
    if entry is None:
        return False
    argv, env = registered_argv(agent, entry)
    if tuple(argv) != spec.argv or env != spec.env:
        return False
    if agent == "codex":
        return entry.get("default_tools_approval_mode") == "approve"
    if agent == "opencode":
        return entry.get("type") == "local" and entry.get("enabled", True) is True
    return True


def _json_text(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _json_register_step(paths: AgentPaths, spec: ServerSpec | None, *, backups: list[str]) -> Step:
    """Add (``spec``) or remove (None) the entry in a JSON config, keeping the rest."""
    data = _read_json(paths.config)
    key = _json_servers_key(paths.agent)
    servers = data.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise click.ClickException(f'"{key}" in {paths.config} is not an object; fix it first')
    servers = dict(servers or {})
    if spec is None:
        servers.pop(SERVER_NAME, None)
        preview = f'# {paths.config}: delete "{key}" → "{SERVER_NAME}"'
        summary = f"remove {SERVER_NAME} from {paths.config}"
    else:
        entry = _json_entry(paths.agent, spec)
        servers[SERVER_NAME] = entry
        if paths.agent == "opencode" and not data:
            data["$schema"] = OPENCODE_SCHEMA
        preview = f"# {paths.config}: set\n" + _json_text({key: {SERVER_NAME: entry}})
        summary = f"register {SERVER_NAME} in {paths.config}"
    data[key] = servers
    return _file_step(
        paths.config, _json_text(data), summary=summary, preview=preview, backups=backups
    )


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


def _toml_entry(spec: ServerSpec) -> Any:
    import tomlkit

    entry = tomlkit.table()
    entry.add("command", spec.command)
    entry.add("args", list(spec.args))
    # Codex asks before every call of a server's tools unless told otherwise; the memory's
    # tools only read and write the memory, so approve them like the README says.
    entry.add("default_tools_approval_mode", "approve")
    env = tomlkit.table()
    env.add("IHMT_HOME", spec.ihmt_home)
    entry.add("env", env)
    return entry


def _toml_edit(path: Path, spec: ServerSpec | None, *, approve_only: bool = False) -> str:
    """The config text with the server set (or, ``spec`` None, removed); the rest untouched."""
    import tomlkit

    doc = _read_toml(path)
    servers = doc.get("mcp_servers")
    if spec is None:
        if servers is not None and SERVER_NAME in servers:
            del servers[SERVER_NAME]
            if not servers:
                del doc["mcp_servers"]
        return tomlkit.dumps(doc)
    if servers is None:
        doc.add("mcp_servers", _toml_servers(spec))
        return tomlkit.dumps(doc)
    existing = servers.get(SERVER_NAME)
    if approve_only and existing is not None:
        if existing.get("default_tools_approval_mode") != "approve":
            _set_before_tables(existing, "default_tools_approval_mode", "approve")
        return tomlkit.dumps(doc)
    if existing is not None:
        del servers[SERVER_NAME]
    servers.add(SERVER_NAME, _toml_entry(spec))
    return tomlkit.dumps(doc)


def _set_before_tables(table: Any, key: str, value: str) -> None:
    """Add ``key`` among the table's plain keys, above its sub-tables (TOML needs that)."""
    import tomlkit

    body = table.value.body
    index = next(
        (i for i, (_k, item) in enumerate(body) if isinstance(item, tomlkit.items.Table)),
        None,
    )
    if index is None:
        table[key] = value
        return
    plain = {k: table[k] for k, item in list(body) if k is not None and not _is_table(item)}
    tables = {k: table[k] for k, item in list(body) if k is not None and _is_table(item)}
    for k in [*plain, *tables]:
        del table[k]
    for k, v in plain.items():
        table[k] = v
    table[key] = value
    for k, v in tables.items():
        table[k] = v


def _is_table(item: Any) -> bool:
    import tomlkit

    return isinstance(item, (tomlkit.items.Table, tomlkit.items.AoT))


def _codex_steps(
    paths: AgentPaths,
    spec: ServerSpec,
    cli: str | None,
    entry: Mapping[str, Any] | None,
    backups: list[str],
) -> list[Step]:
    preview = f"# {paths.config}\n{_toml_table_text(spec)}"
    if cli is None or paths.scope == "project":
        text = _toml_edit(paths.config, spec)
        return [
            _file_step(
                paths.config,
                text,
                summary=f"register {SERVER_NAME} in {paths.config}",
                preview=preview,
                backups=backups,
            )
        ]
    steps: list[Step] = []
    if entry is not None:
        steps.append(
            _run_step(
                [cli, "mcp", "remove", SERVER_NAME],
                backs_up=paths.config,
                summary=f"remove the old {SERVER_NAME} registration from Codex",
                backups=backups,
            )
        )
    add = [cli, "mcp", "add", SERVER_NAME, "--env", f"IHMT_HOME={spec.ihmt_home}", "--", *spec.argv]
    steps.append(
        _run_step(
            add,
            backs_up=paths.config,
            summary=f"register {SERVER_NAME} with Codex (its own CLI)",
            backups=None if steps else backups,
        )
    )

    def approve() -> None:
        _write_text(paths.config, _toml_edit(paths.config, spec, approve_only=True))

    steps.append(
        Step(
            action="write",
            summary=f'set default_tools_approval_mode = "approve" for {SERVER_NAME} in '
            f"{paths.config}",
            preview=preview,
            path=paths.config,
            apply=approve,
        )
    )
    return steps


def _claude_steps(
    paths: AgentPaths,
    spec: ServerSpec,
    cli: str | None,
    entry: Mapping[str, Any] | None,
    backups: list[str],
) -> list[Step]:
    if cli is None or paths.scope == "project":
        return [_json_register_step(paths, spec, backups=backups)]
    steps: list[Step] = []
    if entry is not None:
        steps.append(
            _run_step(
                [cli, "mcp", "remove", SERVER_NAME, "-s", "user"],
                backs_up=paths.config,
                summary=f"remove the old {SERVER_NAME} registration from Claude Code",
                backups=backups,
            )
        )
    # The server's name must come before -e: -e takes several values and would eat it.
    add = [cli, "mcp", "add", SERVER_NAME, "-s", "user"]
    add += ["-e", f"IHMT_HOME={spec.ihmt_home}", "--", *spec.argv]
    steps.append(
        _run_step(
            add,
            backs_up=paths.config,
            summary=f"register {SERVER_NAME} with Claude Code, user scope (its own CLI)",
            backups=None if steps else backups,
        )
    )
    return steps


def _find_cli(paths: AgentPaths) -> str | None:
    return shutil.which(paths.cli)


def install_plan(
    agent: str, scope: str, spec: ServerSpec, *, paths: AgentPaths | None = None
) -> Plan:
    """Everything ``ihmt install AGENT`` still has to do (nothing when already installed)."""
    paths = paths or agent_paths(agent, scope)
    backups: list[str] = []
    unchanged: list[str] = []
    entry = read_registration(paths)
    steps: list[Step] = []
    if _same_server(agent, entry, spec):
        unchanged.append(f"{SERVER_NAME} is already registered in {paths.config}")
    else:
        cli = _find_cli(paths)
        if agent == "claude-code":
            steps += _claude_steps(paths, spec, cli, entry, backups)
        elif agent == "codex":
            steps += _codex_steps(paths, spec, cli, entry, backups)
        else:
            steps.append(_json_register_step(paths, spec, backups=backups))
    steps += _instructions_steps(
        paths.instructions, install=True, backups=backups, unchanged=unchanged
    )
    return Plan(
        agent=agent,
        scope=scope,
        ihmt_home=spec.ihmt_home,
        steps=tuple(steps),
        unchanged=tuple(unchanged),
        backups=backups,
    )


def uninstall_plan(agent: str, scope: str, *, paths: AgentPaths | None = None) -> Plan:
    """Everything ``ihmt uninstall AGENT`` has to do: unregister, remove the instructions."""
    paths = paths or agent_paths(agent, scope)
    backups: list[str] = []
    unchanged: list[str] = []
    steps: list[Step] = []
    entry = read_registration(paths)
    if entry is None:
        unchanged.append(f"{SERVER_NAME} is not registered in {paths.config}")
    else:
        cli = _find_cli(paths)
        if agent == "claude-code" and cli is not None and scope == "user":
            steps.append(
                _run_step(
                    [cli, "mcp", "remove", SERVER_NAME, "-s", "user"],
                    backs_up=paths.config,
                    summary=f"unregister {SERVER_NAME} from Claude Code (its own CLI)",
                    backups=backups,
                )
            )
        elif agent == "codex":
            steps.append(
                _file_step(
                    paths.config,
                    _toml_edit(paths.config, None),
                    summary=f"remove {SERVER_NAME} from {paths.config}",
                    preview=f"# {paths.config}: delete [mcp_servers.{SERVER_NAME}]",
                    backups=backups,
                )
            )
        else:
            steps.append(_json_register_step(paths, None, backups=backups))
    shared = [
        other
        for other in AGENTS
        if other != agent
        and (o := agent_paths(other, scope)).instructions == paths.instructions
        and read_registration(o) is not None
    ]
    if shared:
        unchanged.append(
            f"kept the memory instructions in {paths.instructions}: "
            f"{', '.join(shared)} still uses them"
        )
    else:
        steps += _instructions_steps(
            paths.instructions, install=False, backups=backups, unchanged=unchanged
        )
    return Plan(
        agent=agent,
        scope=scope,
        ihmt_home=None,
        steps=tuple(steps),
        unchanged=tuple(unchanged),
        backups=backups,
    )
