"""``ihmt doctor`` sees the IHMT plugin of Claude Code and Codex (``_doctor_plugins``).

The records are in the shapes the pinned agents write when they install a plugin
(Claude Code 2.1.332: ``plugins/installed_plugins.json`` and ``enabledPlugins``; Codex
0.171.0: ``[plugins."<id>"]`` in config.toml and the plugin's copy under
``plugins/cache``); the real CLIs install the plugin in
tests-integration/test_plugin_doctor.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ihmt_cli._doctor_plugins import (
    PluginInstall,
    PluginServer,
    double_registration,
    ihmt_plugins,
    plugin_lines,
    set_up_by_plugin,
)

HOOKS = {
    "hooks": {
        "SessionStart": [
            {"hooks": [{"type": "command", "command": "ihmt hook session-start --agent {a}"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "ihmt hook stop --agent {a}"}]}],
    }
}


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def _plugin_files(root: Path, agent: str, manifest: dict[str, Any]) -> None:
    folder = ".claude-plugin" if agent == "claude-code" else ".codex-plugin"
    _write(root / folder / "plugin.json", {"name": "ihmt", "version": "0.1.0", **manifest})
    servers = {"mcpServers": {"ihmt-memory": {"command": "ihmt", "args": ["mcp", "serve"]}}}
    _write(root / ".mcp.json", servers)
    hooks = json.dumps(HOOKS).replace("{a}", agent)
    _write(root / "hooks" / ("hooks.json" if agent == "claude-code" else "codex-hooks.json"), hooks)


def _claude_install(home: Path, plugin: str, entries: list[dict[str, Any]]) -> Path:
    root = home / ".claude" / "plugins" / "cache" / "m" / plugin.split("@")[0] / "0.1.0"
    _plugin_files(root, "claude-code", {})
    records = [{"installPath": str(root), "version": "0.1.0", **e} for e in entries]
    _write(home / ".claude" / "plugins" / "installed_plugins.json", {
        "version": 2, "plugins": {plugin: records}
    })  # fmt: skip
    return root


def test_a_claude_plugin_is_read_with_its_server_hooks_and_settings(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "work" / "lynx"
    project.mkdir(parents=True)
    root = _claude_install(
        home,
        "ihmt@m",
        [{"scope": "user"}, {"scope": "project", "projectPath": str(project)}],
    )
    _write(home / ".claude" / "settings.json", {"enabledPlugins": {"ihmt@m": True}})
    _write(project / ".claude" / "settings.local.json", {"enabledPlugins": {"ihmt@m": False}})

    here = ihmt_plugins(home=home, environ={}, cwd=project)
    elsewhere = ihmt_plugins(home=home, environ={}, cwd=tmp_path)

    user, in_project = here
    assert (user.agent, user.plugin, user.version, user.scope) == (
        "claude-code",
        "ihmt@m",
        "0.1.0",
        "user",
    )
    assert user.servers == (PluginServer(name="ihmt-memory", argv=("ihmt", "mcp", "serve")),)
    assert [e for e, _ in user.hooks] == ["SessionStart", "Stop"]
    assert user.hook_files == ((root / "hooks" / "hooks.json").resolve(),)
    # the project's local settings turn it off there; elsewhere the user's turn it on
    assert not user.enabled and not user.active
    assert in_project.project == str(project) and in_project.applies
    assert elsewhere[0].enabled and elsewhere[0].active
    assert not elsewhere[1].applies and not elsewhere[1].active


def test_a_plugin_that_is_not_ihmts_is_left_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = _claude_install(home, "other@m", [{"scope": "user"}])
    _write(root / ".mcp.json", {"mcpServers": {"docs": {"command": "npx", "args": ["docs"]}}})
    (root / "hooks" / "hooks.json").unlink()

    assert ihmt_plugins(home=home, environ={}, cwd=tmp_path) == []


def test_claude_config_dir_and_codex_home_are_where_the_records_are(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    _claude_install(elsewhere, "ihmt@m", [{"scope": "user"}])
    codex_home = tmp_path / "codex-home"
    _plugin_files(
        codex_home / "plugins" / "cache" / "m" / "ihmt" / "0.1.0",
        "codex",
        {"mcpServers": "./.mcp.json", "hooks": "./hooks/codex-hooks.json"},
    )
    _write(codex_home / "config.toml", '[plugins."ihmt@m"]\nenabled = false\n')
    environ = {"CLAUDE_CONFIG_DIR": str(elsewhere / ".claude"), "CODEX_HOME": str(codex_home)}

    found = ihmt_plugins(home=tmp_path / "home", environ=environ, cwd=tmp_path)

    assert [(p.agent, p.plugin, p.enabled) for p in found] == [
        ("claude-code", "ihmt@m", False),  # installed, never enabled in any settings
        ("codex", "ihmt@m", False),
    ]
    assert [e for e, _ in found[1].hooks] == ["SessionStart", "Stop"]
    assert found[1].hooks[0][1] == "ihmt hook session-start --agent codex"


def test_broken_records_are_no_plugin_and_no_crash(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write(home / ".claude" / "plugins" / "installed_plugins.json", "{not json")
    _write(home / ".codex" / "config.toml", "[plugins\n")

    assert ihmt_plugins(home=home, environ={}, cwd=tmp_path) == []
    _write(home / ".claude" / "plugins" / "installed_plugins.json", {"plugins": {"x@y": [7]}})
    _write(home / ".codex" / "config.toml", '[plugins."ihmt@gone"]\nenabled = true\n')
    assert ihmt_plugins(home=home, environ={}, cwd=tmp_path) == []


def _plugin(hooks: bool) -> PluginInstall:
    return PluginInstall(
        agent="claude-code",
        plugin="ihmt@ihmt",
        version="0.1.0",
        scope="user",
        project=None,
        enabled=True,
        applies=True,
        path=Path("/p"),
        servers=(PluginServer(name="ihmt-memory", argv=("ihmt", "mcp", "serve")),),
        hooks=(("Stop", "ihmt hook stop --agent claude-code"),) if hooks else (),
    )


@pytest.mark.parametrize(
    ("plugin_hooks", "install_hooks", "twice"),
    [(True, True, True), (True, False, False), (False, True, False)],
)
def test_the_double_registration_warning_names_both_and_the_way_out(
    plugin_hooks: bool, install_hooks: bool, twice: bool
) -> None:
    row = {"config": "/h/.claude.json", "registered": True, "hooks": {"present": install_hooks}}

    text = double_registration("claude-code", _plugin(plugin_hooks), [row])

    assert "plugin ihmt@ihmt" in text and "ihmt install (/h/.claude.json)" in text
    assert "two servers" in text
    assert ("every memory hook twice" in text) is twice
    assert text.endswith("ihmt uninstall claude-code, or claude plugin uninstall ihmt@ihmt")


def _doctor(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("IHMT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")
    }
    ihmt = str(Path(sys.executable).parent / "ihmt")
    return subprocess.run(
        [ihmt, "doctor", "--no-connect", *args],
        env={**env, "HOME": str(home), "PATH": "/usr/bin:/bin"},
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_doctor_reports_the_plugin_and_warns_when_install_registered_too(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    _claude_install(home, "ihmt@ihmt", [{"scope": "user"}])
    _write(home / ".claude" / "settings.json", {"enabledPlugins": {"ihmt@ihmt": True}})

    alone = _doctor(home, "--json")

    assert alone.returncode == 0, alone.stderr
    [row] = [r for r in json.loads(alone.stdout)["agents"] if r["agent"] == "claude-code"]
    assert not row["registered"] and "warnings" not in row
    [plugin] = row["plugins"]
    assert plugin["plugin"] == "ihmt@ihmt" and plugin["enabled"] and plugin["applies"]
    assert plugin["servers"] == {"ihmt-memory": ["ihmt", "mcp", "serve"]}
    assert plugin["ihmt_home"] == str((home / ".ihmt").resolve()) and plugin["same_memory"]
    text = _doctor(home).stdout
    assert "claude-code (user): set up by its plugin (not by ihmt install)" in text
    assert "hooks SessionStart, Stop" in text and "All good." in text

    # what `claude mcp add` (run by `ihmt install claude-code`) leaves in ~/.claude.json
    entry = {"type": "stdio", "command": "ihmt-mcp", "args": [], "env": {}}
    _write(home / ".claude.json", {"mcpServers": {"ihmt-memory": entry}})
    both = _doctor(home, "--json")

    assert both.returncode == 0, both.stderr
    [row] = [r for r in json.loads(both.stdout)["agents"] if r["agent"] == "claude-code"]
    assert row["registered"]
    [warning] = row["warnings"]
    assert "set up twice for claude-code" in warning
    text = _doctor(home).stdout
    assert "  WARNING: the memory is set up twice" in text
    assert text.rstrip().endswith("Works, with warnings (see above).")


def test_a_disabled_plugin_does_not_count_as_the_setup() -> None:
    item = _plugin(True).to_json() | {"memory_server": "ihmt-memory", "enabled": False}
    row = {"plugins": [item]}

    [line] = plugin_lines(row)

    assert not set_up_by_plugin(row)
    assert set_up_by_plugin({"plugins": [item | {"enabled": True}]})
    assert "(user, disabled)" in line and "server ihmt-memory: ihmt mcp serve" in line


def test_doctor_fails_when_the_plugins_server_cannot_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _claude_install(home, "ihmt@ihmt", [{"scope": "user"}])
    _write(home / ".claude" / "settings.json", {"enabledPlugins": {"ihmt@ihmt": True}})
    env = {k: v for k, v in os.environ.items() if k not in ("IHMT_HOME", "CLAUDE_CONFIG_DIR")}

    done = subprocess.run(  # no ihmt on PATH: the plugin runs it by name
        [str(Path(sys.executable).parent / "ihmt"), "doctor"],
        env={**env, "HOME": str(home), "PATH": "/usr/bin:/bin", "CODEX_HOME": str(tmp_path)},
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 1
    assert "does NOT connect: cannot start ihmt: no such program" in done.stdout
    assert done.stdout.rstrip().endswith("Problems found (see above).")
