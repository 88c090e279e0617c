"""``ihmt install`` / ``ihmt uninstall``: register the MCP server with an agent.

An install is a :class:`Plan` of :class:`Step` s — run the agent's own CLI, or write
one config, hooks or instructions file — computed from what is on disk now, so a second
run finds nothing to do. ``--dry-run`` prints each step's exact command or file fragment
and writes nothing. Before its first change a file is copied once to
``<file>.bak-ihmt`` (later runs never overwrite that copy of the original), and an
uninstall deletes the copy when the file it leaves is byte-identical to it.

Besides the MCP server, install registers the recall hooks (``ihmt hook``): Claude Code's
``SessionStart``/``UserPromptSubmit`` in its settings.json, the same two events in Codex's
hooks.json, and a plugin file for opencode.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import click

from ihmt_cli._types import AGENTS, Agent, Scope, StepAction

__all__ = [
    "AGENTS",
    "HOOK_EVENTS",
    "READ_ONLY_TOOLS",
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
    "read_hooks",
    "read_registration",
    "server_spec",
    "uninstall_plan",
]

SERVER_NAME = "ihmt-memory"
BACKUP_SUFFIX = ".bak-ihmt"
BEGIN_MARKER = "<!-- ihmt-memory:begin (added by `ihmt install`; `ihmt uninstall` removes it) -->"
END_MARKER = "<!-- ihmt-memory:end -->"
CLI_TIMEOUT = 120.0
OPENCODE_SCHEMA = "https://opencode.ai/config.json"
OPENCODE_PLUGIN = "ihmt-memory.js"
PLUGIN_MARKER = "ihmt-memory: added by `ihmt install opencode`"
HOOK_EVENTS = (("SessionStart", "session-start"), ("UserPromptSubmit", "prompt"))
"""The agents' event names and the ``ihmt hook`` event each one runs."""
HOOK_TIMEOUT = 10
"""Seconds an agent waits for the hook before it goes on without it."""
READ_ONLY_TOOLS = ("search_memory", "recall", "project_map", "find_code")
"""The tools Codex runs without asking: they read the memory or the code index only.
``read_file`` reads any file on disk, so Codex asks for it like for every tool that writes."""
_OUR_HOOK = re.compile(r"\shook (session-start|prompt) --agent (claude-code|codex|opencode)\b")


# ---------------------------------------------------------------------- what to register
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    """The stdio command an agent runs to start the memory server."""

    command: str
    """An absolute path: agents start servers without the user's shell or virtualenv."""
    args: tuple[str, ...] = ()
    ihmt_home: str
    """The ``IHMT_HOME`` passed in the server's environment: which memory it serves."""
    ihmt: tuple[str, ...] = ()
    """The ``ihmt`` command line the hooks run (absolute, like ``command``)."""

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.command, *self.args)

    @property
    def env(self) -> dict[str, str]:
        return {"IHMT_HOME": self.ihmt_home}

    def hook_argv(self, agent: str, event: str) -> list[str]:
        """The command an agent's hook runs for ``event`` (``session-start``, ``prompt``)."""
        return [*self.ihmt, "hook", event, "--agent", agent, "--home", self.ihmt_home]


def server_spec(home: Path, *, executable: str | None = None) -> ServerSpec:
    """The ``ihmt-mcp`` console script beside this interpreter, else ``python -m ihmt_mcp``."""
    python = Path(executable or sys.executable).absolute()
    ihmt: tuple[str, ...] = (str(python), "-m", "ihmt_cli")
    for name in ("ihmt", "ihmt.exe"):
        if (python.parent / name).is_file():
            ihmt = (str(python.parent / name),)
            break
    for name in ("ihmt-mcp", "ihmt-mcp.exe"):
        script = python.parent / name
        if script.is_file():
            return ServerSpec(command=str(script), ihmt_home=str(home), ihmt=ihmt)
    return ServerSpec(command=str(python), args=("-m", "ihmt_mcp"), ihmt_home=str(home), ihmt=ihmt)


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

    agent: Agent
    scope: Scope
    config: Path
    """Where the server registration lives (JSON, or TOML for Codex)."""
    instructions: Path
    """The CLAUDE.md / AGENTS.md the usage instructions go into."""
    cli: str
    """The agent's own command-line program, looked up on PATH."""
    hooks: Path
    """Where the recall hooks go: Claude Code's settings.json, Codex's hooks.json, or the
    opencode plugin file."""


def agent_paths(
    agent: Agent,
    scope: Scope,
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
            hooks = (config_dir or user_home / ".claude") / "settings.json"
        else:
            config, instructions = project_dir / ".mcp.json", project_dir / "CLAUDE.md"
            # The local settings, never committed: the hook's command is an absolute path.
            hooks = project_dir / ".claude" / "settings.local.json"
        return AgentPaths(
            agent=agent,
            scope=scope,
            config=config,
            instructions=instructions,
            cli="claude",
            hooks=hooks,
        )
    if agent == "codex":
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else user_home / ".codex"
        folder = codex_home if scope == "user" else project_dir / ".codex"
        instructions = (codex_home if scope == "user" else project_dir) / "AGENTS.md"
        return AgentPaths(
            agent=agent,
            scope=scope,
            config=folder / "config.toml",
            instructions=instructions,
            cli="codex",
            hooks=folder / "hooks.json",
        )
    if agent == "opencode":
        xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else None
        base = (xdg or user_home / ".config") / "opencode"
        folder = base if scope == "user" else project_dir
        plugins = base if scope == "user" else project_dir / ".opencode"
        return AgentPaths(
            agent=agent,
            scope=scope,
            config=_opencode_config(folder),
            instructions=folder / "AGENTS.md",
            cli="opencode",
            hooks=plugins / "plugin" / OPENCODE_PLUGIN,
        )
    raise ValueError(f"unknown agent {agent!r}; choose one of {', '.join(AGENTS)}")


def _opencode_config(folder: Path) -> Path:
    """The config file opencode reads in ``folder``: the one the user has (opencode writes
    ``opencode.jsonc`` on its first run), else a new ``opencode.jsonc``, never a second."""
    jsonc, plain = folder / "opencode.jsonc", folder / "opencode.json"
    if jsonc.exists() and plain.exists():
        for path in (jsonc, plain):
            try:
                servers = _read_jsonc(path).get("mcp")
            except click.ClickException:
                continue
            if isinstance(servers, dict) and SERVER_NAME in servers:
                return path
        return jsonc
    if plain.exists():
        return plain
    return jsonc


# ---------------------------------------------------------------------- reading config files
def _read_jsonc(path: Path) -> dict[str, Any]:
    """A JSON-with-comments file (comments, trailing commas) as data; {} when absent."""
    import json5

    def parse(text: str) -> Any:
        try:
            return json5.loads(text)
        except Exception as exc:  # noqa: BLE001 — json-five raises several unrelated types
            raise click.ClickException(
                f"{path} is not valid JSON with comments ({exc}); fix it first, nothing was changed"
            ) from None

    return _read_object(path, parse)


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON file as data; {} when absent."""

    def parse(text: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise click.ClickException(
                f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it first, "
                "nothing was changed"
            ) from None

    return _read_object(path, parse)


def _read_object(path: Path, parse: Callable[[str], Any]) -> dict[str, Any]:
    """``parse`` of the file's text, which must be an object; {} when absent or empty."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    data = parse(text)
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
    read = _read_jsonc if paths.agent == "opencode" else _read_json
    servers = read(paths.config).get(_json_servers_key(paths.agent), {})
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def read_hooks(paths: AgentPaths) -> dict[str, bool]:
    """Which of our hook events are registered for the agent (by agent event name)."""
    if paths.agent == "opencode":
        present = paths.hooks.is_file() and PLUGIN_MARKER in paths.hooks.read_text("utf-8")
        return {event: present for event, _ in HOOK_EVENTS}
    hooks = _read_json(paths.hooks).get("hooks")
    out = {}
    for event, _ in HOOK_EVENTS:
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        out[event] = any(_is_ours(h) for g in _groups(groups) for h in _handlers(g))
    return out


def _groups(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _handlers(group: Any) -> list[Any]:
    return _groups(group.get("hooks")) if isinstance(group, dict) else []


def _is_ours(handler: Any) -> bool:
    command = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(command, str) and _OUR_HOOK.search(command) is not None


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

    action: StepAction
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

    agent: Agent
    scope: Scope
    ihmt_home: str | None
    steps: tuple[Step, ...]
    unchanged: tuple[str, ...]
    """What already was as it should be."""
    backups: list[str] = field(default_factory=list)
    """The copies of the originals (made now or by an earlier run)."""
    notes: tuple[str, ...] = ()
    """What the user must know or do: trust the hooks, what is approved, what not to commit."""
    tidy: tuple[Path, ...] = ()
    """Files whose backup goes once the plan ran, when the file is byte-identical to it."""
    dropped: list[str] = field(default_factory=list)
    """The backups removed because the file is back to its original."""

    def run(self) -> None:
        for step in self.steps:
            step.apply()
        for path in dict.fromkeys(self.tidy):
            backup = _backup_of(path)
            if backup.is_file() and path.is_file() and backup.read_bytes() == path.read_bytes():
                backup.unlink()
                self.dropped.append(str(backup))
                if str(backup) in self.backups:
                    self.backups.remove(str(backup))


def _backup_of(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


class _Kept(list[str]):
    """The backups of an uninstall: it names the originals' copies and never makes one
    (what it would copy is what install wrote, not the original)."""


def _holds_ours(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    marks = (SERVER_NAME, BEGIN_MARKER, PLUGIN_MARKER)
    return any(mark in text for mark in marks) or _OUR_HOOK.search(text) is not None


def _backup(path: Path, backups: list[str]) -> None:
    """Copy ``path`` to its backup unless a backup (of the original) is already there.

    A file that already holds something of ours is not an original: an earlier install
    created it (there was nothing to keep) or backed it up then."""
    target = _backup_of(path)
    if (
        path.exists()
        and not target.exists()
        and not isinstance(backups, _Kept)
        and not _holds_ours(path)
    ):
        shutil.copy2(path, target)
    if target.exists() and str(target) not in backups:
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
        return _approvals_right(entry)
    if agent == "opencode":
        return entry.get("type") == "local" and entry.get("enabled", True) is True
    return True


def _json_text(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _trivial(data: Mapping[str, Any]) -> bool:
    """Nothing but what an install adds to a new file: no reason to keep the file."""
    return not {k: v for k, v in data.items() if k != "$schema" and v not in ({}, [])}


def _json_register_step(paths: AgentPaths, spec: ServerSpec | None, *, backups: list[str]) -> Step:
    """Add (``spec``) or remove (None) the entry in a JSON config, keeping the rest."""
    if paths.agent == "opencode":
        return _jsonc_register_step(paths, spec, backups=backups)
    data = _read_json(paths.config)
    key = _json_servers_key(paths.agent)
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
        created = not _backup_of(paths.config).exists()
        text = None if created and _trivial(data) else _json_text(data)
        preview = f'# {paths.config}: delete "{key}" → "{SERVER_NAME}"'
        summary = f"remove {SERVER_NAME} from {paths.config}"
        if text is None:
            summary += " (install created it and it holds nothing else: delete the file)"
    else:
        entry = _json_entry(paths.agent, spec)
        servers[SERVER_NAME] = entry
        data[key] = servers
        text = _json_text(data)
        preview = f"# {paths.config}: set\n" + _json_text({key: {SERVER_NAME: entry}})
        summary = f"register {SERVER_NAME} in {paths.config}"
    return _file_step(paths.config, text, summary=summary, preview=preview, backups=backups)


# ---------------------------------------------------------------------- JSONC, comments kept
class UnsafeEditError(click.ClickException):
    """The file cannot be edited in place without risk: the user pastes the change."""


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts += [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts


def _span(node: Any, starts: Sequence[int]) -> tuple[int, int]:
    begin = starts[node.lineno - 1] + node.col_offset
    end = starts[node.end_lineno - 1] + node.end_col_offset
    return begin, end


def _key_of(pair: Any) -> str | None:
    key = pair.key
    name = getattr(key, "characters", None)
    if name is None:
        name = getattr(key, "name", None)
    return name if isinstance(name, str) else None


def _indent_at(text: str, offset: int) -> str:
    line = text[text.rfind("\n", 0, offset) + 1 : offset]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _value_text(value: Any, indent: str) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _jsonc_pairs(text: str) -> tuple[Any, list[int]]:
    from json5.loader import ModelLoader, loads

    model = loads(text, loader=ModelLoader())
    return model.value, _line_starts(text)


def _pair(obj: Any, name: str) -> Any:
    return next((p for p in obj.key_value_pairs if _key_of(p) == name), None)


def _insert_pair(text: str, obj: Any, starts: Sequence[int], name: str, value: Any) -> str:
    begin, end = _span(obj, starts)
    pairs = obj.key_value_pairs
    if pairs:
        indent = _indent_at(text, _span(pairs[0].key, starts)[0])
        at = _span(pairs[-1].value, starts)[1]
        pair = f"{json.dumps(name)}: {_value_text(value, indent)}"
        line_end = text.find("\n", at)
        close = text.rindex("}", begin, end)
        if line_end < 0 or line_end > close:  # the object closes on that line: stay inline
            return text[:at] + f",\n{indent}{pair}" + text[at:]
        # A line of its own after the last one (its comma and comment stay where they are),
        # so that removing it gives back the same bytes.
        after = at
        while after < line_end and text[after] in " \t":
            after += 1
        if text[after : after + 1] == ",":
            return text[:line_end] + f"\n{indent}{pair}," + text[line_end:]
        return text[:at] + "," + text[at:line_end] + f"\n{indent}{pair}" + text[line_end:]
    outer = _indent_at(text, begin)
    indent = outer + "  "
    close = text.rindex("}", begin, end)
    piece = f"\n{indent}{json.dumps(name)}: {_value_text(value, indent)}\n{outer}"
    return text[: begin + 1] + piece + text[close:]


def _delete_pair(text: str, pair: Any, starts: Sequence[int]) -> str:
    begin = _span(pair.key, starts)[0]
    end = _span(pair.value, starts)[1]
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        end = after + 1
    else:
        before = begin
        while before > 0 and text[before - 1] in " \t\r\n":
            before -= 1
        if before > 0 and text[before - 1] == ",":
            begin = before - 1
    line_start = text.rfind("\n", 0, begin) + 1
    if not text[line_start:begin].strip():
        begin = line_start
        newline = text.find("\n", end)
        if newline >= 0 and not text[end:newline].strip():
            end = newline + 1
    return text[:begin] + text[end:]


def _jsonc_edit(text: str, entry: Mapping[str, Any] | None, *, keep_empty: bool = False) -> str:
    """``text`` with ``mcp.ihmt-memory`` set to ``entry`` (None: removed), comments kept.

    Removing the last server removes ``"mcp"`` too, unless ``keep_empty`` (the user's
    original file had it).

    Raises:
        UnsafeEditError: the file's shape is not one this edit can change safely.
    """
    import json5

    source = text if text.strip() else "{}\n"
    before = json5.loads(source)
    root, starts = _jsonc_pairs(source)
    servers = _pair(root, "mcp")
    if servers is not None and type(servers.value).__name__ != "JSONObject":
        raise UnsafeEditError('"mcp" is not an object')
    if entry is None:
        if servers is None or _pair(servers.value, SERVER_NAME) is None:
            return text
        new = _delete_pair(source, _pair(servers.value, SERVER_NAME), starts)
        root, starts = _jsonc_pairs(new)
        servers = _pair(root, "mcp")
        if servers is not None and not servers.value.key_value_pairs and not keep_empty:
            new = _delete_pair(new, servers, starts)
    elif servers is None:
        new = _insert_pair(source, root, starts, "mcp", {SERVER_NAME: dict(entry)})
    elif (old := _pair(servers.value, SERVER_NAME)) is not None:
        begin, end = _span(old.value, starts)
        indent = _indent_at(source, _span(old.key, starts)[0])
        new = source[:begin] + _value_text(dict(entry), indent) + source[end:]
    else:
        new = _insert_pair(source, servers.value, starts, SERVER_NAME, dict(entry))
    expected = json.loads(json.dumps(before))
    mcp = dict(expected.get("mcp") or {})
    if entry is None:
        mcp.pop(SERVER_NAME, None)
    else:
        mcp[SERVER_NAME] = dict(entry)
    if mcp or (keep_empty and "mcp" in expected):
        expected["mcp"] = mcp
    else:
        expected.pop("mcp", None)
    try:
        after = json5.loads(new)
    except Exception as exc:  # noqa: BLE001 — json-five raises several unrelated types
        raise UnsafeEditError(f"the edited text does not parse ({exc})") from None
    if after != expected:
        raise UnsafeEditError("the edit would change more than the ihmt-memory entry")
    return new


def _jsonc_register_step(paths: AgentPaths, spec: ServerSpec | None, *, backups: list[str]) -> Step:
    """Add or remove the entry in opencode's config, keeping comments, commas and order."""
    path = paths.config
    data = _read_jsonc(path)  # refuses a file that does not parse, before anything else
    if data.get("mcp") is not None and not isinstance(data.get("mcp"), dict):
        raise click.ClickException(f'"mcp" in {path} is not an object; fix it first')
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    entry = _json_entry(paths.agent, spec) if spec is not None else None
    fragment = _json_text({"mcp": {SERVER_NAME: entry}}) if entry is not None else ""
    if entry is not None and not old.strip():
        old = _json_text({"$schema": OPENCODE_SCHEMA})
    original = _backup_of(path)
    keep_empty = original.is_file() and "mcp" in _read_jsonc(original)
    try:
        new = _jsonc_edit(old, entry, keep_empty=keep_empty)
    except UnsafeEditError as exc:
        what = (
            f"paste this into {path}, inside its top-level object:\n{fragment}"
            if entry is not None
            else f'delete "{SERVER_NAME}" from "mcp" in {path}'
        )
        raise UnsafeEditError(
            f"cannot edit {path} safely ({exc.message}); nothing was changed: {what}"
        ) from None
    text: str | None = new
    if entry is None:
        summary = f"remove {SERVER_NAME} from {path}"
        preview = f'# {path}: delete "mcp" → "{SERVER_NAME}" (comments kept)'
        import json5

        if not _backup_of(path).exists() and _trivial(json5.loads(new or "{}")):
            text = None
            summary += " (install created it and it holds nothing else: delete the file)"
    else:
        summary = f"register {SERVER_NAME} in {path}"
        preview = f"# {path}: set (comments kept)\n{fragment}"
    return _file_step(path, text, summary=summary, preview=preview, backups=backups)


# ---------------------------------------------------------------------- recall hooks
def _hook_group(paths: AgentPaths, spec: ServerSpec, event: str) -> dict[str, Any]:
    handler: dict[str, Any] = {
        "type": "command",
        "command": shlex.join(spec.hook_argv(paths.agent, event)),
        "timeout": HOOK_TIMEOUT,
    }
    return {"hooks": [handler]}


def _hooks_data(data: dict[str, Any], paths: AgentPaths, spec: ServerSpec | None) -> None:
    """Drop our handlers from ``data["hooks"]``, then (``spec``) add the current ones."""
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise click.ClickException(f'"hooks" in {paths.hooks} is not an object; fix it first')
    hooks = dict(hooks or {})
    for event, ours in HOOK_EVENTS:
        groups = []
        for group in _groups(hooks.get(event)):
            if not isinstance(group, dict):
                groups.append(group)
                continue
            kept = [h for h in _handlers(group) if not _is_ours(h)]
            if kept or not _handlers(group):
                groups.append({**group, "hooks": kept} if kept != _handlers(group) else group)
        if spec is not None:
            groups.append(_hook_group(paths, spec, ours))
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if hooks:
        data["hooks"] = hooks
    else:
        data.pop("hooks", None)


def _plugin_text(spec: ServerSpec) -> str:
    source = resources.files("ihmt_cli").joinpath("templates", "opencode-plugin.js")
    template = source.read_text(encoding="utf-8")
    return template.replace("__IHMT_COMMAND__", json.dumps(list(spec.ihmt))).replace(
        "__IHMT_HOME__", json.dumps(spec.ihmt_home)
    )


def _hooks_steps(
    paths: AgentPaths,
    spec: ServerSpec | None,
    *,
    backups: list[str],
    unchanged: list[str],
) -> list[Step]:
    """Register (``spec``) or remove (None) the recall hooks; nothing when already so."""
    path = paths.hooks
    if paths.agent == "opencode":
        present = path.is_file() and PLUGIN_MARKER in path.read_text("utf-8")
        if spec is None:
            if not present:
                unchanged.append(f"no memory plugin at {path}")
                return []

            def delete() -> None:
                path.unlink(missing_ok=True)
                if path.parent.is_dir() and not any(path.parent.iterdir()):
                    path.parent.rmdir()  # the plugin folder install made for it

            return [
                Step(
                    action="write",
                    summary=f"delete the memory plugin {path}",
                    preview=f"# delete {path}",
                    path=path,
                    apply=delete,
                )
            ]
        plugin = _plugin_text(spec)
        if present and path.read_text("utf-8") == plugin:
            unchanged.append(f"the memory plugin is already at {path}")
            return []
        if path.exists() and not present:
            raise click.ClickException(f"{path} exists and is not ours; move it away first")
        return [
            _file_step(
                path,
                plugin,
                summary=f"add the memory plugin {path} (recall on each message)",
                preview=f"# {path}\n{plugin}",
                backups=[],
            )
        ]
    data = _read_json(path)
    before = json.dumps(data, sort_keys=True)
    _hooks_data(data, paths, spec)
    if json.dumps(data, sort_keys=True) == before:
        unchanged.append(
            f"the recall hooks are already in {path}"
            if spec is not None
            else f"no recall hooks in {path}"
        )
        return []
    created = not _backup_of(path).exists()
    text: str | None = _json_text(data)
    if spec is None:
        summary = f"remove the recall hooks (SessionStart, UserPromptSubmit) from {path}"
        if created and _trivial(data):
            text = None
            summary += " (it holds nothing else: delete the file)"
        preview = f"# {path}: delete the handlers running 'ihmt hook'"
    else:
        fragment: dict[str, Any] = {}
        _hooks_data(fragment, paths, spec)
        summary = f"add the recall hooks (SessionStart, UserPromptSubmit) to {path}"
        preview = f"# {path}: add\n{_json_text(fragment)}"
    return [_file_step(path, text, summary=summary, preview=preview, backups=backups)]


def _notes(paths: AgentPaths, *, hooks: bool) -> list[str]:
    notes: list[str] = []
    if paths.agent == "codex":
        notes.append(
            f"Codex runs {', '.join(READ_ONLY_TOOLS)} without asking; it asks before "
            "save_memory, mark_outdated, note, digest_output, read_file and forget_memory."
        )
        if hooks:
            notes.append(
                f"Codex runs new hooks only once you trust them: start codex, type /hooks "
                f"and trust the two 'ihmt hook' entries from {paths.hooks} (Codex keeps the "
                "trust in config.toml [hooks.state]). Until then it skips them."
            )
    if paths.scope == "project":
        notes.append(
            f"{paths.config} now holds absolute paths of this machine (the server and "
            "IHMT_HOME): do not commit it; add it to .gitignore."
        )
    return notes


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
    """The config text with the server set (or, ``spec`` None, removed); the rest untouched."""
    import tomlkit

    doc = _read_toml(path)
    servers = doc.get("mcp_servers")
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
    existing = servers.get(SERVER_NAME)
    if approve_only and existing is not None:
        if not _approvals_right(_plain(existing)):
            _set_approvals(existing)
        return tomlkit.dumps(doc)
    if existing is not None:
        del servers[SERVER_NAME]
    servers.add(SERVER_NAME, _toml_entry(spec))
    return tomlkit.dumps(doc)


def _register_in_file(paths: AgentPaths, spec: ServerSpec, backups: list[str]) -> Step:
    """Register by editing the agent's config file, keeping everything else in it."""
    if paths.agent != "codex":
        return _json_register_step(paths, spec, backups=backups)
    return _file_step(
        paths.config,
        _toml_edit(paths.config, spec),
        summary=f"register {SERVER_NAME} in {paths.config}",
        preview=_codex_preview(paths, spec),
        backups=backups,
    )


def _codex_preview(paths: AgentPaths, spec: ServerSpec) -> str:
    return f"# {paths.config}\n{_toml_table_text(spec)}"


def _cli_steps(
    paths: AgentPaths,
    spec: ServerSpec,
    cli: str,
    entry: Mapping[str, Any] | None,
    backups: list[str],
) -> list[Step]:
    """Register through the agent's own CLI (Claude Code or Codex, user scope): remove the
    old registration when there is one, then add ours (the first step that runs backs the
    config file up); Codex then gets the read-only tools approved in its config file."""
    if paths.agent == "claude-code":
        name, registered_as = "Claude Code", "Claude Code, user scope"
        remove = [cli, "mcp", "remove", SERVER_NAME, "-s", "user"]
        # The server's name must come before -e: -e takes several values and would eat it.
        add = [cli, "mcp", "add", SERVER_NAME, "-s", "user"]
        add += ["-e", f"IHMT_HOME={spec.ihmt_home}", "--", *spec.argv]
    else:
        name = registered_as = "Codex"
        remove = [cli, "mcp", "remove", SERVER_NAME]
        add = [cli, "mcp", "add", SERVER_NAME, "--env", f"IHMT_HOME={spec.ihmt_home}", "--"]
        add += spec.argv
    steps: list[Step] = []
    if entry is not None:
        steps.append(
            _run_step(
                remove,
                backs_up=paths.config,
                summary=f"remove the old {SERVER_NAME} registration from {name}",
                backups=backups,
            )
        )
    steps.append(
        _run_step(
            add,
            backs_up=paths.config,
            summary=f"register {SERVER_NAME} with {registered_as} (its own CLI)",
            backups=None if steps else backups,
        )
    )
    if paths.agent != "codex":
        return steps

    def approve() -> None:
        _write_text(paths.config, _toml_edit(paths.config, spec, approve_only=True))

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


def _find_cli(paths: AgentPaths) -> str | None:
    return shutil.which(paths.cli)


def install_plan(
    agent: Agent,
    scope: Scope,
    spec: ServerSpec,
    *,
    paths: AgentPaths | None = None,
    hooks: bool = True,
) -> Plan:
    """Everything ``ihmt install AGENT`` still has to do (nothing when already installed).

    Args:
        hooks: register the recall hooks too (False removes ours if an earlier install
            added them).
    """
    paths = paths or agent_paths(agent, scope)
    backups: list[str] = []
    unchanged: list[str] = []
    entry = read_registration(paths)
    steps: list[Step] = []
    if _same_server(agent, entry, spec):
        unchanged.append(f"{SERVER_NAME} is already registered in {paths.config}")
    else:
        cli = _find_cli(paths)
        if cli is None or paths.scope == "project" or agent == "opencode":
            steps.append(_register_in_file(paths, spec, backups))
        else:
            steps += _cli_steps(paths, spec, cli, entry, backups)
    steps += _hooks_steps(paths, spec if hooks else None, backups=backups, unchanged=unchanged)
    steps += _instructions_steps(
        paths.instructions, install=True, backups=backups, unchanged=unchanged
    )
    for step in steps:
        if step.path is not None and _backup_of(step.path).exists():
            _backup(step.path, backups)  # name the copy of the original that is kept
    return Plan(
        agent=agent,
        scope=scope,
        ihmt_home=spec.ihmt_home,
        steps=tuple(steps),
        unchanged=tuple(unchanged),
        backups=backups,
        notes=tuple(_notes(paths, hooks=hooks)),
    )


def uninstall_plan(agent: Agent, scope: Scope, *, paths: AgentPaths | None = None) -> Plan:
    """Everything ``ihmt uninstall AGENT`` has to do: unregister, remove the hooks and the
    instructions; then drop each backup whose file is back to its original bytes."""
    paths = paths or agent_paths(agent, scope)
    backups: list[str] = _Kept()
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
    steps += _hooks_steps(paths, None, backups=backups, unchanged=unchanged)
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
        tidy=tuple(step.path for step in steps if step.path is not None),
    )
