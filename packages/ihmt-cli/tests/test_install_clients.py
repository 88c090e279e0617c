"""``ihmt install`` / ``uninstall`` / ``doctor`` for the clients added after the first three:
Gemini CLI and Copilot CLI (whose real CLIs are driven in tests-integration), and the
editors Cursor, Windsurf, Claude Desktop and VS Code, whose config files are tested here on
the shapes users have: other servers, other keys, comments where the format allows them,
their own indentation. A round trip install → uninstall gives the user's file back byte for
byte; ``--dry-run`` writes nothing; each first change leaves a ``.bak-ihmt`` copy that the
uninstall drops.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click
import json5
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_cli._agent_gemini import gemini_folder_trust
from ihmt_cli._agent_jsonc import UnsafeEditError, jsonc_update
from ihmt_cli._agent_setup import server_spec
from ihmt_cli._hook import parse_input, render_output
from ihmt_cli._install import agent_paths, install_plan, uninstall_plan
from ihmt_cli._types import AGENTS, Agent

ENV_KEYS = ("HOME", "PATH", "XDG_CONFIG_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "APPDATA")
ENV_KEYS += ("IHMT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_TRUST_WORKSPACE")
NEW_CLIENTS = AGENTS[AGENTS.index("gemini-cli") :]


@dataclass(frozen=True)
class World:
    """A temporary HOME and project, with no agent CLI on PATH; the process runs in the
    project, as ``ihmt install`` does."""

    home: Path
    project: Path

    def config(self, agent: Agent, scope: str = "user") -> Path:
        return agent_paths(agent, scope).config  # type: ignore[arg-type]

    def install(self, agent: Agent, scope: str = "user", **kw: Any) -> Any:
        plan = install_plan(agent, scope, server_spec(self.home / "mem"), **kw)  # type: ignore[arg-type]
        plan.run()
        return plan

    def uninstall(self, agent: Agent, scope: str = "user") -> Any:
        plan = uninstall_plan(agent, scope)  # type: ignore[arg-type]
        plan.run()
        return plan

    def ihmt(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(Path(sys.executable).parent / "ihmt"), *args],
            capture_output=True,
            text=True,
            cwd=self.project,
            env=dict(os.environ),
            timeout=120,
            check=False,
        )

    def files(self) -> dict[str, bytes]:
        return {
            str(p): p.read_bytes()
            for root in (self.home, self.project)
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / "empty-bin").mkdir(parents=True)
    project.mkdir()
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / 'empty-bin'}{os.pathsep}{Path(sys.executable).parent}")
    monkeypatch.chdir(project)
    return World(home=home, project=project)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _data(path: Path) -> Any:
    return json5.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------- the config shapes
CURSOR_JSON = """\
{
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_not_a_real_one"}
        },
        "remote": {"url": "https://mcp.example.com/mcp"}
    }
}
"""
WINDSURF_JSON = """\
{
  "mcpServers": {
    "git": {
      "command": "uvx",
      "args": ["mcp-server-git"],
      "disabled": true
    }
  }
}
"""
CLAUDE_DESKTOP_JSON = """\
{
  "preferences": {
    "quickEntryShortcut": "double-tap-option",
    "menuBarEnabled": false
  },
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    }
  }
}
"""
VSCODE_JSONC = """\
// VS Code writes this file with comments
{
\t"inputs": [
\t\t{ "type": "promptString", "id": "token", "description": "API token", "password": true }
\t],
\t"servers": {
\t\t// the playwright one
\t\t"playwright": {
\t\t\t"type": "stdio",
\t\t\t"command": "npx",
\t\t\t"args": ["@playwright/mcp@latest"],
\t\t},
\t},
}
"""
GEMINI_JSONC = """\
{
  // my settings
  "ui": { "theme": "GitHub" },
  "mcpServers": {
    "other": { "command": "other-mcp" } // theirs
  },
  "hooks": {
    "BeforeTool": [
      { "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./audit.sh" }] }
    ]
  }
}
"""
COPILOT_JSON = """\
{
  "mcpServers": {
    "playwright": {
      "type": "local",
      "command": "npx",
      "args": ["@playwright/mcp@latest"],
      "env": {},
      "tools": ["*"]
    }
  }
}
"""
SHAPES: dict[Agent, str] = {
    "cursor": CURSOR_JSON,
    "windsurf": WINDSURF_JSON,
    "claude-desktop": CLAUDE_DESKTOP_JSON,
    "vscode": VSCODE_JSONC,
    "gemini-cli": GEMINI_JSONC,
    "copilot": COPILOT_JSON,
}
SERVERS_KEY = {"vscode": "servers"}


@pytest.mark.parametrize("agent", NEW_CLIENTS)
def test_install_adds_the_entry_keeping_the_rest_and_uninstall_gives_the_bytes_back(
    world: World, agent: Agent
) -> None:
    config = _write(world.config(agent), SHAPES[agent])
    before = _data(config)
    key = SERVERS_KEY.get(agent, "mcpServers")

    plan = world.install(agent)

    after = _data(config)
    entry = after[key]["ihmt-memory"]
    assert entry["env"] == {"IHMT_HOME": str(world.home / "mem")}
    assert entry["command"].endswith(("ihmt-mcp", "python", "python3")), entry
    rest = {k: v for k, v in after.items() if k not in (key, "hooks")}
    assert rest == {k: v for k, v in before.items() if k not in (key, "hooks")}
    assert {k: v for k, v in after[key].items() if k != "ihmt-memory"} == before[key]
    for line in SHAPES[agent].splitlines():
        if "//" in line and line.strip().startswith("//"):
            assert line in config.read_text(), f"the comment {line!r} was lost"
    assert plan.backups == [str(config) + ".bak-ihmt"]
    assert Path(plan.backups[0]).read_text() == SHAPES[agent]

    second = install_plan(agent, "user", server_spec(world.home / "mem"))
    assert second.steps == (), [s.summary for s in second.steps]  # already installed

    world.uninstall(agent)

    assert config.read_text() == SHAPES[agent]
    assert not list(world.home.rglob("*.bak-ihmt"))


ENTRY_SHAPE: dict[Agent, dict[str, Any]] = {
    "cursor": {},
    "windsurf": {},
    "claude-desktop": {},
    "vscode": {"type": "stdio"},
    "gemini-cli": {},
    "copilot": {"type": "local", "tools": ["*"]},
}


@pytest.mark.parametrize("agent", NEW_CLIENTS)
def test_a_client_without_a_config_gets_one_that_uninstall_deletes(
    world: World, agent: Agent
) -> None:
    config = world.config(agent)

    world.install(agent)

    entry = _data(config)[SERVERS_KEY.get(agent, "mcpServers")]["ihmt-memory"]
    assert set(entry) == {"command", "args", "env", *ENTRY_SHAPE[agent]}
    assert {k: entry[k] for k in ENTRY_SHAPE[agent]} == ENTRY_SHAPE[agent]

    world.uninstall(agent)

    assert not config.exists()
    assert [p for p in world.files() if "ihmt" in Path(p).name] == []


PATHS = {
    ("cursor", "user"): (".cursor/mcp.json", None),
    ("cursor", "project"): (".cursor/mcp.json", "AGENTS.md"),
    ("windsurf", "user"): (
        ".codeium/windsurf/mcp_config.json",
        ".codeium/windsurf/memories/global_rules.md",
    ),
    ("claude-desktop", "user"): (".config/Claude/claude_desktop_config.json", None),
    ("vscode", "user"): (".config/Code/User/mcp.json", None),
    ("vscode", "project"): (".vscode/mcp.json", ".github/copilot-instructions.md"),
    ("gemini-cli", "user"): (".gemini/settings.json", ".gemini/GEMINI.md"),
    ("gemini-cli", "project"): (".gemini/settings.json", "GEMINI.md"),
    ("copilot", "user"): (".copilot/mcp-config.json", ".copilot/copilot-instructions.md"),
    ("copilot", "project"): (".github/mcp.json", ".github/copilot-instructions.md"),
}


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux paths of the applications")
@pytest.mark.parametrize(("agent", "scope"), sorted(PATHS))
def test_each_client_uses_its_documented_files(world: World, agent: Agent, scope: str) -> None:
    config, instructions = PATHS[(agent, scope)]
    root = world.home if scope == "user" else world.project
    paths = agent_paths(agent, scope)  # type: ignore[arg-type]

    assert paths.config == root / config
    assert paths.instructions == (None if instructions is None else root / instructions)


def test_the_clients_own_folders_are_followed(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(world.home / "xdg"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(world.home / "g"))
    monkeypatch.setenv("COPILOT_HOME", str(world.home / "c"))

    assert world.config("gemini-cli") == world.home / "g" / ".gemini" / "settings.json"
    assert world.config("copilot") == world.home / "c" / "mcp-config.json"
    if sys.platform == "linux":
        assert world.config("vscode") == world.home / "xdg" / "Code" / "User" / "mcp.json"
        desktop = world.home / "xdg" / "Claude" / "claude_desktop_config.json"
        assert world.config("claude-desktop") == desktop


@pytest.mark.parametrize("agent", ["windsurf", "claude-desktop"])
def test_a_client_with_one_user_file_refuses_the_project_scope(world: World, agent: Agent) -> None:
    done = world.ihmt("install", agent, "--scope", "project")

    assert done.returncode == 2 and "no project scope" in done.stderr, done.stderr
    assert "--scope user" in done.stderr and world.files() == {}


@pytest.mark.parametrize("agent", NEW_CLIENTS)
def test_dry_run_prints_the_fragment_and_writes_nothing(world: World, agent: Agent) -> None:
    _write(world.config(agent), SHAPES[agent])
    before = world.files()

    done = world.ihmt("install", agent, "--dry-run", "--json", "--home", str(world.home / "m"))

    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)["steps"]
    assert steps[0]["path"] == str(world.config(agent))
    assert '"ihmt-memory": {' in steps[0]["preview"]
    assert str(world.home / "m") in steps[0]["preview"]
    assert world.files() == before


def test_project_scope_round_trip_leaves_the_project_as_it_was(world: World) -> None:
    _write(world.project / "AGENTS.md", "# Agents\n\nRun make test.\n")
    _write(world.project / ".vscode" / "mcp.json", VSCODE_JSONC)
    before = world.files()

    for agent in ("cursor", "vscode", "gemini-cli", "copilot"):
        plan = world.install(agent, "project")
        assert any("do not commit" in note for note in plan.notes), plan.notes
    assert "ihmt-memory:begin" in (world.project / "AGENTS.md").read_text()
    for agent in ("cursor", "vscode", "gemini-cli", "copilot"):
        world.uninstall(agent, "project")

    assert world.files() == before


def test_a_file_that_does_not_parse_is_refused_and_left_alone(world: World) -> None:
    config = _write(world.config("cursor"), '{ "mcpServers": { // not JSON\n')

    with pytest.raises(click.ClickException, match="not valid JSON"):
        world.install("cursor")

    assert config.read_text() == '{ "mcpServers": { // not JSON\n'
    assert not config.with_name("mcp.json.bak-ihmt").exists()


def test_servers_that_are_not_an_object_are_refused(world: World) -> None:
    _write(world.config("claude-desktop"), '{"mcpServers": []}')

    with pytest.raises(click.ClickException, match=r'"mcpServers" in .* is not an object'):
        world.install("claude-desktop")


def test_a_key_given_twice_gets_what_to_paste(world: World) -> None:
    text = (
        '{\n  "servers": {},\n  // the one that counts\n  "servers": {"x": {"command": "y"}}\n}\n'
    )
    config = _write(world.config("vscode"), text)

    with pytest.raises(UnsafeEditError, match="paste this into") as caught:
        world.install("vscode")

    assert '"ihmt-memory": {' in caught.value.message
    assert config.read_text() == text


# ---------------------------------------------------------------------- Gemini CLI's hooks
def test_gemini_hooks_go_into_settings_beside_the_users_keeping_comments(world: World) -> None:
    settings = _write(world.config("gemini-cli"), GEMINI_JSONC)

    world.install("gemini-cli")

    data = _data(settings)
    assert data["hooks"]["BeforeTool"] == _data_of(GEMINI_JSONC)["hooks"]["BeforeTool"]
    events = {"SessionStart": "session-start", "BeforeAgent": "prompt"}
    events |= {"AfterAgent": "stop", "SessionEnd": "stop"}  # the capture hook
    for event, ours in events.items():
        (group,) = data["hooks"][event]
        (handler,) = group["hooks"]
        assert handler["type"] == "command" and handler["timeout"] == 10_000  # milliseconds
        assert f" hook {ours} --agent gemini-cli --home " in handler["command"]
    assert "// my settings" in settings.read_text() and "// theirs" in settings.read_text()

    plan = world.install("gemini-cli", hooks=False)

    assert "hooks" in _data(settings) and "SessionStart" not in _data(settings)["hooks"]
    assert [s.summary for s in plan.steps] == [
        f"remove the recall hooks (SessionStart, BeforeAgent, AfterAgent, SessionEnd) "
        f"from {settings}"
    ]
    world.uninstall("gemini-cli")
    assert settings.read_text() == GEMINI_JSONC


def test_gemini_without_capture_gets_the_recall_hooks_only(world: World) -> None:
    settings = _write(world.config("gemini-cli"), GEMINI_JSONC)
    world.install("gemini-cli")

    install_plan(
        "gemini-cli", "user", replace(server_spec(world.home / "mem"), capture=False)
    ).run()

    hooks = _data(settings)["hooks"]
    assert "SessionStart" in hooks and "BeforeAgent" in hooks
    assert "AfterAgent" not in hooks and "SessionEnd" not in hooks
    done = world.ihmt("doctor", "--no-connect", "--json", "--home", str(world.home / "mem"))
    row = next(r for r in json.loads(done.stdout)["agents"] if r["agent"] == "gemini-cli")
    assert row["hooks"]["present"] is True and row["hooks"]["capture"] is False
    text = world.ihmt("doctor", "--no-connect", "--home", str(world.home / "mem")).stdout
    assert "recall hooks present, no capture hook (installed with --no-capture)" in text
    world.uninstall("gemini-cli")
    assert settings.read_text() == GEMINI_JSONC


def _data_of(text: str) -> Any:
    return json5.loads(text)


def test_gemini_trust_follows_its_own_rules(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work" / "lynx"
    work.mkdir(parents=True)
    rules = _write(home / ".gemini" / "trustedFolders.json", "{}")

    def trust(**environ: str) -> bool | None:
        return gemini_folder_trust(work, environ=environ, home=home)

    assert trust() is False  # no rule yet: Gemini CLI asks, and until then does not trust
    rules.write_text(json.dumps({str(work.parent / "x"): "TRUST_PARENT"}))
    assert trust() is True  # the parent of a TRUST_PARENT rule's folder
    rules.write_text(json.dumps({str(tmp_path): "TRUST_FOLDER", str(work): "DO_NOT_TRUST"}))
    assert trust() is False  # the longest rule wins
    assert trust(GEMINI_CLI_TRUST_WORKSPACE="true") is True
    _write(home / ".gemini" / "settings.json", '{"security": {"folderTrust": {"enabled": false}}}')
    assert trust() is None  # folder trust off: every folder runs servers and hooks


# ---------------------------------------------------------------------- Copilot CLI's hooks
def test_copilot_hooks_are_a_file_of_their_own(world: World) -> None:
    world.install("copilot")

    hooks = world.home / ".copilot" / "hooks" / "ihmt-memory.json"
    data = json.loads(hooks.read_text())
    assert data["version"] == 1 and list(data["hooks"]) == [
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
    ]
    (handler,) = data["hooks"]["UserPromptSubmit"]
    assert handler["type"] == "command" and handler["timeoutSec"] == 10
    assert " hook prompt --agent copilot --home " in handler["bash"]
    assert " hook stop --agent copilot --home " in data["hooks"]["Stop"][0]["bash"]

    plan = install_plan("copilot", "user", replace(server_spec(world.home / "mem"), capture=False))
    plan.run()

    assert list(json.loads(hooks.read_text())["hooks"]) == ["SessionStart", "UserPromptSubmit"]
    world.uninstall("copilot")

    assert not (world.home / ".copilot" / "hooks").exists()


def test_copilot_never_overwrites_a_hooks_file_that_is_not_ours(world: World) -> None:
    mine = _write(world.home / ".copilot" / "hooks" / "ihmt-memory.json", '{"version": 1}')

    with pytest.raises(click.ClickException, match="is not ours"):
        install_plan("copilot", "user", server_spec(world.home / "mem"))

    assert mine.read_text() == '{"version": 1}'


# ---------------------------------------------------------------------- doctor
def test_doctor_covers_every_client(world: World) -> None:
    for agent in NEW_CLIENTS:
        world.install(agent)

    done = world.ihmt("doctor", "--no-connect", "--json", "--home", str(world.home / "mem"))

    rows = {(r["agent"], r["scope"]): r for r in json.loads(done.stdout)["agents"]}
    for agent in NEW_CLIENTS:
        row = rows[(agent, "user")]
        assert row["registered"] and row["same_memory"], row
        assert row["config"] == str(world.config(agent))
    for agent in ("gemini-cli", "copilot"):
        assert rows[(agent, "user")]["hooks"]["present"] is True
        assert rows[(agent, "user")]["hooks"]["capture"] is True
    for editor in ("cursor", "windsurf", "claude-desktop", "vscode"):
        assert rows[(editor, "user")]["hooks"]["events"] == {}
    assert rows[("claude-desktop", "user")]["instructions"] is None
    assert rows[("windsurf", "user")]["instructions"] is True
    assert ("windsurf", "project") not in rows and ("claude-desktop", "project") not in rows
    text = world.ihmt("doctor", "--no-connect", "--home", str(world.home / "mem")).stdout
    assert "claude-desktop (user): registered in" in text
    assert "no hooks in this client" in text


def test_doctor_starts_an_editors_server_as_the_editor_would(world: World) -> None:
    world.install("cursor")

    done = world.ihmt("doctor", "--json", "--home", str(world.home / "mem"))

    row = next(r for r in json.loads(done.stdout)["agents"] if r["agent"] == "cursor")
    assert row["probe"]["connects"], row["probe"]
    assert "search_memory" in row["probe"]["tools"] and len(row["probe"]["tools"]) == 10


# ---------------------------------------------------------------------- the hooks' I/O
def test_copilot_gets_a_top_level_additional_context() -> None:
    out = json.loads(render_output("copilot", "prompt", "Recalled: vega-3"))

    assert out == {"additionalContext": "Recalled: vega-3"}
    gemini = json.loads(render_output("gemini-cli", "prompt", "x"))
    assert gemini["hookSpecificOutput"]["additionalContext"] == "x"


def test_gemini_prompt_without_the_context_its_session_start_put_before_it() -> None:
    raw = {
        "session_id": "s",
        "cwd": "/w",
        "prompt": "<hook_context>Long-term memory (IHMT) knows …</hook_context>\n\nwhich host?",
    }

    assert parse_input(json.dumps(raw)).prompt == "which host?"


# ---------------------------------------------------------------------- the splice itself
@pytest.mark.parametrize(
    ("text", "want", "expected"),
    [
        ('{"a": 1}', {"a": 1, "b": [2]}, '{"a": 1, "b": [\n  2\n]}'),
        (
            '{\n\t"a": 1\n}\n',
            {"a": 1, "b": {"c": 2}},
            '{\n\t"a": 1,\n\t"b": {\n\t\t"c": 2\n\t}\n}\n',
        ),
        ('{\r\n  "a": 1\r\n}\r\n', {"a": 1, "b": 2}, '{\r\n  "a": 1,\r\n  "b": 2\r\n}\r\n'),
        ('{\n  "a": [1, 2, 3] // keep\n}', {"a": [1, 3]}, '{\n  "a": [1, 3] // keep\n}'),
        ('{\n  "a": [\n    1,\n  ],\n}', {"a": [1, 4]}, '{\n  "a": [\n    1,\n    4,\n  ],\n}'),
        ("{}", {"a": {}}, '{\n  "a": {}\n}'),
    ],
)
def test_jsonc_update_splices_only_what_differs(text: str, want: Any, expected: str) -> None:
    assert jsonc_update(text, want) == expected


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab ", max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("xyz", max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=st.dictionaries(st.text("abc", min_size=1, max_size=2), JSON_VALUES, max_size=4),
    after=st.dictionaries(st.text("abc", min_size=1, max_size=2), JSON_VALUES, max_size=4),
    indent=st.sampled_from([None, 2, 4, "\t"]),
    comment=st.booleans(),
)
def test_jsonc_update_reaches_any_data_and_back(
    before: dict[str, Any], after: dict[str, Any], indent: Any, comment: bool
) -> None:
    text = json.dumps(before, indent=indent) + "\n"
    if comment:
        text = "// mine\n" + text

    there = jsonc_update(text, after)
    back = jsonc_update(there, before)

    assert json5.loads(there) == after
    assert json5.loads(back) == before
    assert ("// mine" in back) is comment
