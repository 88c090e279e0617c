"""The real Codex (pinned in tools/agents/install.sh) installs the ihmt plugin from this
repository's folder: it reads the Claude-style marketplace (``.claude-plugin/
marketplace.json``) and the plugin's ``.codex-plugin/plugin.json``, starts the server,
lists the skill and the hooks, runs the hooks once trusted, and removes it all again,
leaving the user's config.toml byte for byte as it was.

Codex's own view comes from ``codex app-server`` (JSON-RPC, one object a line):
``mcpServerStatus/list``, ``skills/list`` and ``hooks/list``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ihmt_cli._agent_codex import CODEX

# A model provider on a closed loopback port: nothing leaves the machine.
OFFLINE = (
    "-c",
    'model_providers.offline={ name = "offline", base_url = "http://127.0.0.1:9/v1", '
    'wire_api = "responses" }',
    "-c",
    'model_provider="offline"',
    "-c",
    "check_for_update_on_startup=false",
)
USER_CONFIG = '# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other-server"\n'


def _codex(codex: str, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [codex, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=env["HOME"],
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _ask(codex: str, env: dict[str, str], cwd: Path, *calls: tuple[str, Any]) -> list[Any]:
    """The app-server's results of ``calls`` (method, params), in order."""
    opening = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"clientInfo": {"name": "ihmt-tests", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
    ]  # fmt: skip
    asked = [
        {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
        for n, (method, params) in enumerate(calls, start=1)
    ]
    process = subprocess.Popen(
        [codex, "app-server", *OFFLINE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None and process.stdout is not None
    results: dict[int, Any] = {}
    try:
        process.stdin.write("".join(json.dumps(r) + "\n" for r in [*opening, *asked]))
        process.stdin.flush()
        deadline = time.monotonic() + 120
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") in range(1, len(calls) + 1):
                assert "result" in message, message
                results[message["id"]] = message["result"]
                if len(results) == len(calls):
                    break
            assert time.monotonic() < deadline
    finally:
        process.kill()
        process.wait(timeout=20)
        process.stdin.close()
        process.stdout.close()
    assert len(results) == len(calls), results
    return [results[n] for n in range(1, len(calls) + 1)]


def _hook_runs(home: Path) -> list[tuple[str, str]]:
    log = home / ".ihmt" / "hooks" / "hooks.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [(r["agent"], r["event"]) for r in map(json.loads, lines)]


def _exec_until(codex: str, env: dict[str, str], cwd: Path, until: Callable[[], bool]) -> None:
    """``codex exec`` until ``until()`` holds: with no model to reach it goes on retrying
    after its hooks ran, so the test waits for what it looks for, not for the end."""
    args = ["exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", *OFFLINE]
    process = subprocess.Popen(
        [codex, *args, "which database does lynx staging run?"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    try:
        deadline = time.monotonic() + 120
        while not until() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.3)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


@pytest.fixture
def codex(agent_cli: Callable[[str], str]) -> str:
    return agent_cli("codex")


def test_codex_installs_the_plugin_with_server_skill_and_hooks_and_removes_it(
    codex: str, agent_env: dict[str, str], repo_root: Path, tmp_path: Path
) -> None:
    home = Path(agent_env["HOME"])
    # Each hook answers by itself, so that no recall server outlives the test.
    agent_env["IHMT_HOOK_SERVER"] = "off"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(USER_CONFIG)
    project = tmp_path / "lynx"
    project.mkdir()
    ihmt = str(Path(sys.executable).parent / "ihmt")
    subprocess.run([ihmt, "init"], env=agent_env, capture_output=True, check=True)

    _codex(codex, agent_env, "plugin", "marketplace", "add", str(repo_root))
    added = json.loads(_codex(codex, agent_env, "plugin", "add", "ihmt@ihmt", "--json"))
    assert added["pluginId"] == "ihmt@ihmt"
    installed = Path(added["installedPath"])

    servers, skills, hooks = _ask(
        codex,
        agent_env,
        project,
        ("mcpServerStatus/list", {}),
        ("skills/list", {"cwds": [str(project)]}),
        ("hooks/list", {"cwds": [str(project)]}),
    )
    [server] = [s for s in servers["data"] if s["name"] == "ihmt-memory"]
    assert server["pluginId"] == "ihmt@ihmt"
    assert {"search_memory", "save_memory"} <= set(server["tools"]), server["tools"]
    [skill] = [s for g in skills["data"] for s in g["skills"] if s.get("pluginId") == "ihmt@ihmt"]
    assert skill["name"] == "ihmt:memory"
    ours = [h for g in hooks["data"] for h in g["hooks"] if h.get("pluginId") == "ihmt@ihmt"]
    # Codex names the events in camel case: SessionStart is sessionStart.
    assert [(h["eventName"], h["command"], h["trustStatus"]) for h in ours] == [
        (event[0].lower() + event[1:], f"ihmt hook {mine} --agent codex", "untrusted")
        for event, mine in CODEX.hook_events
    ]
    assert {h["sourcePath"] for h in ours} == {str(installed / "hooks" / "codex-hooks.json")}

    # --dangerously-bypass-hook-trust stands in for the user trusting them in /hooks.
    _exec_until(codex, agent_env, project, lambda: len(_hook_runs(home)) >= 2)
    assert _hook_runs(home)[:2] == [("codex", "session-start"), ("codex", "prompt")]
    assert not list(installed.rglob("hooks.log")) and not list(installed.rglob("ihmt_memory"))

    _codex(codex, agent_env, "plugin", "remove", "ihmt@ihmt")
    _codex(codex, agent_env, "plugin", "marketplace", "remove", "ihmt")
    assert config.read_text() == USER_CONFIG
    assert not installed.exists()
    assert (home / ".ihmt" / "ihmt_memory").is_dir()
