"""``ihmt install`` / ``uninstall`` / ``doctor`` on temporary HOMEs, no network.

The agents' CLIs are stand-ins written here (they log their arguments and edit the
config file the way the real ones do); the real clients are driven in
tests-integration/test_agents_*.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

BEGIN = "<!-- ihmt-memory:begin"
READ_ONLY = ("search_memory", "recall", "project_map", "find_code")

FAKE_CLAUDE = """\
import json, pathlib, sys
home = pathlib.Path.home()
with open(home / "cli.log", "a") as log:
    log.write(json.dumps(["claude", *sys.argv[1:]]) + "\\n")
config = home / ".claude.json"
data = json.loads(config.read_text()) if config.exists() else {}
args = sys.argv[1:]
servers = data.setdefault("mcpServers", {})
if args[:2] == ["mcp", "add"]:
    name = args[2]
    env = dict(a.split("=", 1) for a in args[args.index("-e") + 1 : args.index("--")])
    cmd = args[args.index("--") + 1 :]
    servers[name] = {"type": "stdio", "command": cmd[0], "args": cmd[1:], "env": env}
elif args[:2] == ["mcp", "remove"]:
    servers.pop(args[2])
config.write_text(json.dumps(data, indent=2))
"""

FAKE_CODEX = """\
import json, pathlib, sys
home = pathlib.Path.home()
with open(home / "cli.log", "a") as log:
    log.write(json.dumps(["codex", *sys.argv[1:]]) + "\\n")
config = home / ".codex" / "config.toml"
config.parent.mkdir(exist_ok=True)
args = sys.argv[1:]
if args[:2] == ["mcp", "add"]:
    env = args[args.index("--env") + 1]
    key, value = env.split("=", 1)
    cmd = args[args.index("--") + 1 :]
    text = config.read_text() if config.exists() else ""
    text += f'\\n[mcp_servers.{args[2]}]\\ncommand = {json.dumps(cmd[0])}\\n'
    text += f'\\n[mcp_servers.{args[2]}.env]\\n{key} = {json.dumps(value)}\\n'
    config.write_text(text)
"""


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass(frozen=True)
class Sandbox:
    """A temporary HOME, a project folder, and a PATH holding only chosen stand-in CLIs."""

    home: Path
    project: Path
    bin: Path
    run: Callable[..., Done]

    def add_cli(self, name: str, source: str) -> None:
        script = self.bin / name
        script.write_text(f"#!{sys.executable}\n{source}", encoding="utf-8")
        script.chmod(0o755)

    def cli_log(self) -> list[list[str]]:
        log = self.home / "cli.log"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]

    def snapshot(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.home.parent)): p.read_bytes()
            for root in (self.home, self.project)
            for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "cli.log"
        }


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    home, project, bin_dir = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    for folder in (home, project, bin_dir):
        folder.mkdir()
    ihmt = Path(sys.executable).parent / "ihmt"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("IHMT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")
    }
    env.update({"HOME": str(home), "PATH": str(bin_dir), "IHMT_PROJECT": ""})

    def run(*args: str, timeout: float = 120) -> Done:
        done = subprocess.run(
            [str(ihmt), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return Done(done.returncode, done.stdout, done.stderr)

    return Sandbox(home=home, project=project, bin=bin_dir, run=run)


def _mcp_script() -> str:
    return str(Path(sys.executable).absolute().parent / "ihmt-mcp")


# ---------------------------------------------------------------------- opencode (file edit)
def test_install_opencode_adds_the_entry_and_keeps_the_rest(sandbox: Sandbox) -> None:
    config = sandbox.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    original = {"theme": "tokyonight", "mcp": {"other": {"type": "remote", "url": "http://x"}}}
    config.write_text(json.dumps(original), encoding="utf-8")
    memory = sandbox.home / "mem"

    done = sandbox.run("install", "opencode", "--home", str(memory))

    assert done.code == 0, done.err
    data = json.loads(config.read_text())
    assert data["theme"] == "tokyonight"
    assert data["mcp"]["other"] == original["mcp"]["other"]
    assert data["mcp"]["ihmt-memory"] == {
        "type": "local",
        "command": [_mcp_script()],
        "environment": {"IHMT_HOME": str(memory)},
        "enabled": True,
    }
    backup = config.with_name("opencode.json.bak-ihmt")
    assert json.loads(backup.read_text()) == original
    agents_md = (config.parent / "AGENTS.md").read_text()
    assert agents_md.count(BEGIN) == 1 and "never" in agents_md.lower()
    assert "done: register ihmt-memory" in done.out


def test_a_second_install_changes_nothing(sandbox: Sandbox) -> None:
    for agent in ("opencode", "codex", "claude-code"):
        assert sandbox.run("install", agent).code == 0
    before = sandbox.snapshot()

    again = [
        sandbox.run("install", agent, "--json") for agent in ("opencode", "codex", "claude-code")
    ]

    assert all(d.code == 0 for d in again)
    assert all(d.json()["steps"] == [] and not d.json()["changed"] for d in again)
    assert sandbox.snapshot() == before


def test_dry_run_prints_the_json_and_writes_nothing(sandbox: Sandbox) -> None:
    done = sandbox.run("install", "opencode", "--dry-run", "--home", str(sandbox.home / "m"))

    assert done.code == 0, done.err
    assert sandbox.snapshot() == {}
    assert '"ihmt-memory": {' in done.out and '"type": "local"' in done.out
    assert BEGIN in done.out
    assert "nothing was written" in done.out


def test_dry_run_with_the_agent_cli_prints_the_exact_command(sandbox: Sandbox) -> None:
    sandbox.add_cli("claude", FAKE_CLAUDE)
    memory = sandbox.home / "mem"

    done = sandbox.run("install", "claude-code", "--dry-run", "--json", "--home", str(memory))

    assert done.code == 0, done.err
    preview = done.json()["steps"][0]["preview"]
    assert preview == (
        f"{sandbox.bin / 'claude'} mcp add ihmt-memory -s user -e IHMT_HOME={memory} -- "
        f"{_mcp_script()}"
    )
    assert sandbox.cli_log() == []
    assert sandbox.snapshot() == {}


def test_broken_opencode_json_is_reported_and_left_alone(sandbox: Sandbox) -> None:
    config = sandbox.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"mcp": {', encoding="utf-8")

    done = sandbox.run("install", "opencode")

    assert done.code == 1
    assert "is not valid JSON" in done.err and "Traceback" not in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert config.read_text() == '{"mcp": {'
    assert not (config.parent / "AGENTS.md").exists()


# ---------------------------------------------------------------------- codex
def test_install_codex_without_its_cli_edits_config_toml_keeping_comments(
    sandbox: Sandbox,
) -> None:
    config = sandbox.home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = (
        '# my settings\nmodel = "o3"  # the model I like\n\n'
        '[mcp_servers.other]\ncommand = "other-server"\n'
    )
    config.write_text(original, encoding="utf-8")
    memory = sandbox.home / "mem"

    done = sandbox.run("install", "codex", "--home", str(memory))

    assert done.code == 0, done.err
    text = config.read_text()
    assert text.startswith(original)  # comments, order and the other server untouched
    parsed = tomllib.loads(text)
    assert parsed["model"] == "o3"
    assert parsed["mcp_servers"]["ihmt-memory"] == {
        "command": _mcp_script(),
        "args": [],
        "env": {"IHMT_HOME": str(memory)},
        "tools": {name: {"approval_mode": "approve"} for name in READ_ONLY},
    }
    assert "it asks before save_memory" in done.out and "read_file and forget_memory" in done.out
    assert config.with_name("config.toml.bak-ihmt").read_text() == original
    assert (sandbox.home / ".codex" / "AGENTS.md").read_text().count(BEGIN) == 1


def test_install_codex_with_its_cli_runs_mcp_add_then_approves_the_read_only_tools(
    sandbox: Sandbox,
) -> None:
    sandbox.add_cli("codex", FAKE_CODEX)
    memory = sandbox.home / "mem"

    done = sandbox.run("install", "codex", "--home", str(memory))

    assert done.code == 0, done.err
    assert sandbox.cli_log() == [
        ["codex", "mcp", "add", "ihmt-memory", "--env", f"IHMT_HOME={memory}", "--", _mcp_script()]
    ]
    text = (sandbox.home / ".codex" / "config.toml").read_text()
    table = tomllib.loads(text)["mcp_servers"]["ihmt-memory"]
    assert "default_tools_approval_mode" not in table
    assert table["tools"] == {name: {"approval_mode": "approve"} for name in READ_ONLY}
    assert "forget_memory" not in table["tools"] and "read_file" not in table["tools"]
    assert table["env"] == {"IHMT_HOME": str(memory)}
    assert sandbox.run("install", "codex", "--home", str(memory)).code == 0
    assert len(sandbox.cli_log()) == 1


# ---------------------------------------------------------------------- claude code
def test_install_claude_code_with_its_cli_puts_the_name_before_e(sandbox: Sandbox) -> None:
    sandbox.add_cli("claude", FAKE_CLAUDE)
    (sandbox.home / ".claude.json").write_text('{"numStartups": 3}', encoding="utf-8")
    memory = sandbox.home / "mem"

    done = sandbox.run("install", "claude-code", "--home", str(memory))

    assert done.code == 0, done.err
    assert sandbox.cli_log() == [
        [
            *["claude", "mcp", "add", "ihmt-memory", "-s", "user"],
            *["-e", f"IHMT_HOME={memory}", "--", _mcp_script()],  # the name comes before -e
        ]
    ]
    assert (sandbox.home / ".claude.json.bak-ihmt").read_text() == '{"numStartups": 3}'
    assert (sandbox.home / ".claude" / "CLAUDE.md").read_text().count(BEGIN) == 1


def test_reinstall_with_another_home_replaces_the_registration(sandbox: Sandbox) -> None:
    sandbox.add_cli("claude", FAKE_CLAUDE)
    assert sandbox.run("install", "claude-code", "--home", str(sandbox.home / "a")).code == 0

    done = sandbox.run("install", "claude-code", "--home", str(sandbox.home / "b"))

    assert done.code == 0, done.err
    assert [entry[:3] for entry in sandbox.cli_log()] == [
        ["claude", "mcp", "add"],
        ["claude", "mcp", "remove"],
        ["claude", "mcp", "add"],
    ]
    data = json.loads((sandbox.home / ".claude.json").read_text())
    assert data["mcpServers"]["ihmt-memory"]["env"] == {"IHMT_HOME": str(sandbox.home / "b")}


def test_install_claude_code_without_its_cli_edits_claude_json(sandbox: Sandbox) -> None:
    (sandbox.home / ".claude.json").write_text('{"numStartups": 3}', encoding="utf-8")

    done = sandbox.run("install", "claude-code", "--home", str(sandbox.home / "mem"))

    assert done.code == 0, done.err
    data = json.loads((sandbox.home / ".claude.json").read_text())
    assert data["numStartups"] == 3
    assert data["mcpServers"]["ihmt-memory"]["command"] == _mcp_script()


def test_project_scope_writes_mcp_json_and_claude_md_in_the_project(sandbox: Sandbox) -> None:
    sandbox.add_cli("claude", FAKE_CLAUDE)
    (sandbox.project / "CLAUDE.md").write_text("# My project\n\nUse tabs.\n", encoding="utf-8")

    done = sandbox.run("install", "claude-code", "--scope", "project")

    assert done.code == 0, done.err
    assert sandbox.cli_log() == []
    data = json.loads((sandbox.project / ".mcp.json").read_text())
    assert data["mcpServers"]["ihmt-memory"]["env"] == {"IHMT_HOME": str(sandbox.home / ".ihmt")}
    claude_md = (sandbox.project / "CLAUDE.md").read_text()
    assert claude_md.startswith("# My project\n\nUse tabs.\n\n" + BEGIN)
    assert not (sandbox.home / ".claude.json").exists()


# ---------------------------------------------------------------------- uninstall
def test_uninstall_removes_only_what_install_added(sandbox: Sandbox) -> None:
    config = sandbox.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"theme": "x", "mcp": {}}', encoding="utf-8")
    agents_md = config.parent / "AGENTS.md"
    agents_md.write_text("Be brief.\n", encoding="utf-8")
    assert sandbox.run("install", "opencode").code == 0

    done = sandbox.run("uninstall", "opencode")

    assert done.code == 0, done.err
    assert json.loads(config.read_text()) == {"theme": "x", "mcp": {}}
    assert agents_md.read_text() == "Be brief.\n"
    again = sandbox.run("uninstall", "opencode", "--json")
    assert again.code == 0 and again.json()["steps"] == []


def test_uninstall_codex_keeps_the_rest_of_config_toml(sandbox: Sandbox) -> None:
    config = sandbox.home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n', encoding="utf-8")
    assert sandbox.run("install", "codex").code == 0

    assert sandbox.run("uninstall", "codex").code == 0

    assert tomllib.loads(config.read_text()) == {"model": "o3"}
    assert not (sandbox.home / ".codex" / "AGENTS.md").exists()


def test_uninstall_dry_run_writes_nothing(sandbox: Sandbox) -> None:
    assert sandbox.run("install", "opencode").code == 0
    before = sandbox.snapshot()

    done = sandbox.run("uninstall", "opencode", "--dry-run")

    assert done.code == 0 and "nothing was written" in done.out
    assert sandbox.snapshot() == before


# ---------------------------------------------------------------------- sharing and doctor
def test_agents_installed_against_one_home_share_one_memory(sandbox: Sandbox) -> None:
    memory = sandbox.home / "shared"
    for agent in ("claude-code", "codex", "opencode"):
        assert sandbox.run("install", agent, "--home", str(memory)).code == 0

    report = sandbox.run("doctor", "--home", str(memory), "--json")

    assert report.code == 0, report.out + report.err
    rows = [row for row in report.json()["agents"] if row["registered"]]
    assert [row["agent"] for row in rows] == ["claude-code", "codex", "opencode"]
    assert {row["ihmt_home"] for row in rows} == {str(memory)}
    assert all(row["same_memory"] and row["instructions"] for row in rows)
    assert all(row["probe"]["connects"] and len(row["probe"]["tools"]) == 10 for row in rows)


def test_doctor_reports_a_healthy_store(sandbox: Sandbox) -> None:
    memory = sandbox.home / "mem"
    store = memory / "ihmt_memory"
    assert sandbox.run("init", "--path", str(store)).code == 0
    assert sandbox.run("save", "We deploy with Argo CD.", "--path", str(store)).code == 0

    done = sandbox.run("doctor", "--home", str(memory), "--json")

    assert done.code == 0, done.out
    health = done.json()["store"]
    assert health["exists"] and health["ok"]
    assert health["leaves"] == 1 and health["unreachable"] == 0
    assert health["format_version"] == health["supported_format_version"] == 2
    text = sandbox.run("doctor", "--home", str(memory)).out
    assert "OK · 1 memories · unreachable 0 · format 2" in text
    assert "claude-code (user): not registered" in text


def test_doctor_reports_a_memory_edited_by_hand_until_a_search_reads_it(
    sandbox: Sandbox,
) -> None:
    memory = sandbox.home / "mem"
    store = memory / "ihmt_memory"
    assert sandbox.run("init", "--path", str(store)).code == 0
    assert sandbox.run("save", "We deploy with Argo CD.", "--path", str(store)).code == 0
    (leaf,) = store.glob("layer0/**/*.txt")
    leaf.write_bytes(leaf.read_bytes().replace(b"Argo CD", b"Flux and Helm charts"))

    before = sandbox.run("doctor", "--home", str(memory), "--json")
    assert before.code == 1
    assert "1 memories were edited by hand" in before.json()["store"]["error"]

    found = sandbox.run("search", "Flux Helm charts", "--path", str(store))
    assert found.code == 0 and found.out.startswith("FOUND"), found.out
    assert "edited by hand" in found.err
    after = sandbox.run("doctor", "--home", str(memory), "--json")
    assert after.code == 0 and after.json()["store"]["ok"], after.out


def test_doctor_fails_when_a_registered_server_does_not_start(sandbox: Sandbox) -> None:
    config = sandbox.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    broken = {"type": "local", "command": [str(sandbox.home / "gone")], "environment": {}}
    config.write_text(json.dumps({"mcp": {"ihmt-memory": broken}}), encoding="utf-8")

    done = sandbox.run("doctor")

    assert done.code == 1
    assert "opencode (user): registered" in done.out and "does NOT connect" in done.out


def test_doctor_fails_on_a_store_from_a_newer_version(sandbox: Sandbox) -> None:
    memory = sandbox.home / "mem"
    store = memory / "ihmt_memory"
    assert sandbox.run("init", "--path", str(store)).code == 0
    config = store / "ihmt.config.json"
    data = json.loads(config.read_text())
    data["format_version"] = 99
    config.write_text(json.dumps(data), encoding="utf-8")

    done = sandbox.run("doctor", "--home", str(memory), "--json")

    assert done.code == 1
    assert not done.json()["store"]["ok"] and "99" in done.json()["store"]["error"]


# ---------------------------------------------------------------------- recall hooks
def _commands(settings: Path, event: str) -> list[str]:
    data = json.loads(settings.read_text())
    return [h["command"] for group in data["hooks"][event] for h in group["hooks"]]


def test_install_claude_code_adds_both_hooks_keeping_the_users(sandbox: Sandbox) -> None:
    settings = sandbox.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"PreToolUse": [mine]}}))
    memory = sandbox.home / "mem"

    done = sandbox.run("install", "claude-code", "--home", str(memory))

    assert done.code == 0, done.err
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["hooks"]["PreToolUse"] == [mine]
    ihmt = str(Path(sys.executable).absolute().parent / "ihmt")
    assert _commands(settings, "SessionStart") == [
        f"{ihmt} hook session-start --agent claude-code --home {memory}"
    ]
    assert _commands(settings, "UserPromptSubmit") == [
        f"{ihmt} hook prompt --agent claude-code --home {memory}"
    ]
    for event in ("Stop", "PreCompact"):
        assert _commands(settings, event) == [
            f"{ihmt} hook stop --agent claude-code --home {memory}"
        ]
    assert "done: add the recall hooks (SessionStart, UserPromptSubmit, Stop, PreCompact)" in (
        done.out
    )
    # the registered command runs and answers like a hook
    command = _commands(settings, "UserPromptSubmit")[0].split()
    hook = subprocess.run(
        command, input='{"session_id": "s", "cwd": "/"}', capture_output=True, text=True
    )
    assert hook.returncode == 0 and hook.stdout == ""


def test_uninstall_removes_only_our_hooks(sandbox: Sandbox) -> None:
    settings = sandbox.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"hooks": [{"type": "command", "command": "echo mine"}]}
    original = json.dumps({"hooks": {"SessionStart": [mine]}}, indent=2) + "\n"
    settings.write_text(original)
    assert sandbox.run("install", "claude-code").code == 0
    assert len(_commands(settings, "SessionStart")) == 2

    done = sandbox.run("uninstall", "claude-code")

    assert done.code == 0, done.err
    assert settings.read_text() == original
    assert not settings.with_name("settings.json.bak-ihmt").exists()


def test_no_hooks_leaves_them_out_and_removes_earlier_ones(sandbox: Sandbox) -> None:
    settings = sandbox.home / ".claude" / "settings.json"
    without = sandbox.run("install", "claude-code", "--no-hooks")
    assert without.code == 0 and not settings.exists()

    assert sandbox.run("install", "claude-code").code == 0
    assert settings.exists()
    again = sandbox.run("install", "claude-code", "--no-hooks")

    assert again.code == 0 and "remove the recall hooks" in again.out
    assert not settings.exists()  # install created it and it held nothing else


def test_no_capture_leaves_out_the_capture_hook_and_keeps_recall(sandbox: Sandbox) -> None:
    settings = sandbox.home / ".claude" / "settings.json"
    assert sandbox.run("install", "claude-code").code == 0
    assert _commands(settings, "Stop") and _commands(settings, "PreCompact")

    done = sandbox.run("install", "claude-code", "--no-capture")

    assert done.code == 0, done.err
    data = json.loads(settings.read_text())
    assert set(data["hooks"]) == {"SessionStart", "UserPromptSubmit"}
    plugin = sandbox.run("install", "opencode", "--no-capture")
    assert plugin.code == 0, plugin.err
    [path] = (sandbox.home / ".config" / "opencode").rglob("ihmt-memory.js")
    assert "const CAPTURE = false;" in path.read_text()


def test_dry_run_shows_the_hooks(sandbox: Sandbox) -> None:
    done = sandbox.run("install", "codex", "--dry-run", "--json", "--home", str(sandbox.home / "m"))

    assert done.code == 0, done.err
    step = next(s for s in done.json()["steps"] if s["path"].endswith("hooks.json"))
    fragment = json.loads(step["preview"].split("\n", 1)[1])
    assert set(fragment["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop"}
    handler = fragment["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert handler["type"] == "command" and handler["timeout"] == 10
    assert handler["command"].endswith(f"hook prompt --agent codex --home {sandbox.home / 'm'}")
    assert sandbox.snapshot() == {}


def test_install_codex_writes_hooks_json_and_says_how_to_trust_them(sandbox: Sandbox) -> None:
    done = sandbox.run("install", "codex")

    assert done.code == 0, done.err
    hooks = sandbox.home / ".codex" / "hooks.json"
    assert len(_commands(hooks, "SessionStart")) == 1
    assert "type /hooks" in done.out and "trust" in done.out
    notes = sandbox.run("install", "codex", "--json").json()["notes"]
    assert any("/hooks" in note for note in notes)


def test_install_opencode_adds_a_plugin_that_uninstall_deletes(sandbox: Sandbox) -> None:
    memory = sandbox.home / "mem"
    done = sandbox.run("install", "opencode", "--home", str(memory))

    assert done.code == 0, done.err
    plugin = sandbox.home / ".config" / "opencode" / "plugin" / "ihmt-memory.js"
    text = plugin.read_text()
    assert '"chat.message"' in text and json.dumps(str(memory)) in text
    assert json.dumps([str(Path(sys.executable).absolute().parent / "ihmt")]) in text

    assert sandbox.run("uninstall", "opencode").code == 0
    assert not plugin.exists()


# ---------------------------------------------------------------------- opencode JSONC
JSONC = """\
{
  // my settings, written by opencode
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight", /* the dark one */
  "mcp": {
    "other": { "type": "remote", "url": "http://x" }, // keep me
  },
}
"""


def test_opencode_jsonc_is_edited_in_place_keeping_comments(sandbox: Sandbox) -> None:
    folder = sandbox.home / ".config" / "opencode"
    folder.mkdir(parents=True)
    config = folder / "opencode.jsonc"
    config.write_text(JSONC)

    done = sandbox.run("install", "opencode")

    assert done.code == 0, done.err
    text = config.read_text()
    for line in ("// my settings, written by opencode", "/* the dark one */", "// keep me"):
        assert line in text
    import json5

    data = json5.loads(text)
    assert data["theme"] == "tokyonight" and data["mcp"]["other"]["url"] == "http://x"
    assert data["mcp"]["ihmt-memory"]["type"] == "local"
    assert not (folder / "opencode.json").exists()  # never a second file

    assert sandbox.run("uninstall", "opencode").code == 0
    assert config.read_text() == JSONC
    assert sorted(p.name for p in folder.iterdir()) == ["opencode.jsonc"]


def test_opencode_without_a_config_gets_one_jsonc_that_uninstall_deletes(sandbox: Sandbox) -> None:
    folder = sandbox.home / ".config" / "opencode"

    assert sandbox.run("install", "opencode").code == 0
    assert (folder / "opencode.jsonc").is_file() and not (folder / "opencode.json").exists()

    assert sandbox.run("uninstall", "opencode").code == 0
    assert not folder.exists() or list(folder.rglob("*.json*")) == []


def test_opencode_jsonc_that_does_not_parse_is_refused(sandbox: Sandbox) -> None:
    config = sandbox.home / ".config" / "opencode" / "opencode.jsonc"
    config.parent.mkdir(parents=True)
    config.write_text('{ "mcp": { // open\n')

    done = sandbox.run("install", "opencode")

    assert done.code == 1 and "is not valid JSON with comments" in done.err
    assert "Traceback" not in done.err and config.read_text() == '{ "mcp": { // open\n'


# ---------------------------------------------------------------------- backups
def test_one_backup_of_the_original_kept_and_dropped_when_restored(sandbox: Sandbox) -> None:
    config = sandbox.home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = '# mine\nmodel = "o3"\n'
    config.write_text(original)
    backup = config.with_name("config.toml.bak-ihmt")

    assert sandbox.run("install", "codex", "--home", str(sandbox.home / "a")).code == 0
    assert sandbox.run("install", "codex", "--home", str(sandbox.home / "b")).code == 0
    assert backup.read_text() == original  # the second install did not overwrite it

    done = sandbox.run("uninstall", "codex", "--json")

    assert done.code == 0, done.err
    assert config.read_text() == original
    assert str(backup) in done.json()["backups_removed"]
    assert list(sandbox.home.rglob("*.bak-ihmt")) == []


def test_a_backup_stays_when_the_file_changed_meanwhile(sandbox: Sandbox) -> None:
    config = sandbox.home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n')
    assert sandbox.run("install", "codex").code == 0
    config.write_text('approval_policy = "never"\n' + config.read_text())

    assert sandbox.run("uninstall", "codex").code == 0

    assert config.with_name("config.toml.bak-ihmt").read_text() == 'model = "o3"\n'


# ---------------------------------------------------------------------- project scope
def test_project_scope_warns_that_mcp_json_holds_absolute_paths(sandbox: Sandbox) -> None:
    done = sandbox.run("install", "claude-code", "--scope", "project")

    assert done.code == 0, done.err
    assert ".mcp.json now holds absolute paths" in done.out and "do not commit it" in done.out
    local = sandbox.project / ".claude" / "settings.local.json"
    assert len(_commands(local, "UserPromptSubmit")) == 1


# ---------------------------------------------------------------------- doctor and hooks
def test_doctor_reports_hooks_last_run_and_last_error(sandbox: Sandbox) -> None:
    memory = sandbox.home / "mem"
    assert sandbox.run("install", "claude-code", "--home", str(memory)).code == 0
    before = sandbox.run("doctor", "--home", str(memory), "--no-connect", "--json").json()
    row = next(r for r in before["agents"] if r["agent"] == "claude-code" and r["registered"])
    assert row["hooks"]["present"] and row["hooks"]["last_run"] is None

    command = _commands(sandbox.home / ".claude" / "settings.json", "UserPromptSubmit")[0]
    subprocess.run(command.split(), input="not json", capture_output=True, text=True, check=True)
    after = sandbox.run("doctor", "--home", str(memory), "--no-connect")

    assert "recall hooks present · last run 20" in after.out
    assert "last error" in after.out and "stdin is not JSON" in after.out


def test_gui_set_up_shows_the_hooks_on_or_off_per_agent(sandbox: Sandbox, tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from ihmt_cli._gui import Gui, build_app

    assert sandbox.run("install", "claude-code", "--scope", "project").code == 0
    gui = Gui(store_path=tmp_path / "nowhere", home=tmp_path)
    try:
        with TestClient(build_app(gui), base_url="http://127.0.0.1:8123") as client:
            client.headers["X-IHMT-Token"] = gui.token
            params = {
                "agent": "codex",
                "scope": "project",
                "home": str(tmp_path / "mem"),
                "project_dir": str(sandbox.project),
            }
            reply = client.get("/api/setup/preview", params=params)
    finally:
        gui.close()

    assert reply.status_code == 200, reply.text
    hooks = {row["agent"]: row for row in reply.json()["hooks"]}
    assert hooks["claude-code"]["on"] is True
    assert hooks["codex"]["on"] is False and hooks["opencode"]["on"] is False
    assert hooks["claude-code"]["path"] == str(sandbox.project / ".claude" / "settings.local.json")


def test_opencode_jsonc_it_cannot_edit_safely_gets_what_to_paste(sandbox: Sandbox) -> None:
    config = sandbox.home / ".config" / "opencode" / "opencode.jsonc"
    config.parent.mkdir(parents=True)
    # Two "mcp" keys: opencode reads the last; an edit of either could be the wrong one.
    text = '{\n  "mcp": {},\n  // the one that counts\n  "mcp": {"x": {"type": "remote"}},\n}\n'
    config.write_text(text)

    done = sandbox.run("install", "opencode", "--home", str(sandbox.home / "mem"))

    assert done.code == 1 and "Traceback" not in done.err
    assert "cannot edit" in done.err and "nothing was changed" in done.err
    assert "paste this into" in done.err and '"ihmt-memory": {' in done.err
    assert config.read_text() == text
    assert sorted(p.name for p in config.parent.iterdir()) == ["opencode.jsonc"]


# ---------------------------------------------------------------------- the files' owners' wishes
def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


def test_a_symlinked_private_claude_json_is_written_through_and_given_back(
    sandbox: Sandbox,
) -> None:
    dotfiles = sandbox.home / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude.json"
    original = b'{\n    "oauthAccount": {"accessToken": "s3cret"},\n    "numStartups": 3\n}\n'
    real.write_bytes(original)
    real.chmod(0o600)
    link = sandbox.home / ".claude.json"
    link.symlink_to(real)

    done = sandbox.run("install", "claude-code", "--home", str(sandbox.home / "mem"))

    assert done.code == 0, done.err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert _mode(real) == 0o600
    data = json.loads(real.read_text())
    assert data["oauthAccount"] == {"accessToken": "s3cret"} and "ihmt-memory" in data["mcpServers"]
    for copy in sandbox.home.rglob("*.bak-ihmt"):
        assert _mode(copy) & 0o077 == 0, copy

    done = sandbox.run("uninstall", "claude-code")

    assert done.code == 0, done.err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == original and _mode(real) == 0o600
    assert list(sandbox.home.rglob("*.bak-ihmt")) == []


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])
def test_install_then_uninstall_keeps_each_files_mode(sandbox: Sandbox, mode: int) -> None:
    files = {
        sandbox.home / ".codex" / "config.toml": '# mine\nmodel = "o3"\n',
        sandbox.home / ".codex" / "hooks.json": '{"hooks": {}}\n',
        sandbox.home / ".codex" / "AGENTS.md": "Be brief.\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(mode)

    assert sandbox.run("install", "codex", "--home", str(sandbox.home / "mem")).code == 0
    for path in files:
        assert _mode(path) == mode, path
    done = sandbox.run("uninstall", "codex")

    assert done.code == 0, done.err
    for path, text in files.items():
        assert path.read_text() == text and _mode(path) == mode, path


def test_a_read_only_config_is_refused_by_name_and_left_alone(sandbox: Sandbox) -> None:
    config = sandbox.home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n')
    config.chmod(0o444)
    before = sandbox.snapshot()

    done = sandbox.run("install", "codex", "--home", str(sandbox.home / "mem"))

    assert done.code == 1 and "Traceback" not in done.err and "unexpected" not in done.err
    assert str(config) in done.err and "read-only" in done.err
    assert "nothing was changed" in done.err
    assert sandbox.snapshot() == before and _mode(config) == 0o444


def test_codex_inline_mcp_servers_table_is_made_a_table_and_given_back(sandbox: Sandbox) -> None:
    config = sandbox.home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = (
        '# mine\nmodel = "o3"\n'
        'mcp_servers = { other = { command = "other-mcp", args = ["--x"] } }\n'
        '\n[profiles.fast]\nmodel = "o4-mini"\n'
    )
    config.write_text(original)

    done = sandbox.run("install", "codex", "--home", str(sandbox.home / "mem"))

    assert done.code == 0, done.err
    data = tomllib.loads(config.read_text())
    assert data["mcp_servers"]["other"] == {"command": "other-mcp", "args": ["--x"]}
    assert data["mcp_servers"]["ihmt-memory"]["command"] == _mcp_script()
    assert data["model"] == "o3" and data["profiles"] == {"fast": {"model": "o4-mini"}}

    done = sandbox.run("uninstall", "codex")

    assert done.code == 0, done.err
    assert config.read_text() == original
    assert list(sandbox.home.rglob("*.bak-ihmt")) == []
