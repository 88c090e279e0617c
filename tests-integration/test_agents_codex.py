"""The real Codex (pinned in tools/agents/install.sh) driven over ``codex app-server``.

``codex mcp list`` only prints the config, so this speaks the app-server's JSON-RPC
(one JSON object a line on stdio), as described by the schemas that
``codex app-server generate-json-schema`` writes: ``initialize`` then ``initialized``,
``mcpServerStatus/list`` (the servers with their tools), ``thread/start`` (a thread
needs no login), and ``mcpServer/tool/call`` with that thread's id.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

TEN_TOOLS = {
    "search_memory",
    "save_memory",
    "mark_outdated",
    "project_map",
    "find_code",
    "read_file",
    "note",
    "recall",
    "digest_output",
    "forget_memory",
}
# A model provider on a closed loopback port: starting a thread makes Codex open a
# connection to its model service, and these tests must not leave the machine.
OFFLINE = (
    "-c",
    'model_providers.offline={ name = "offline", base_url = "http://127.0.0.1:9/v1", '
    'wire_api = "responses" }',
    "-c",
    'model_provider="offline"',
    "-c",
    "check_for_update_on_startup=false",
)


class AppServer:
    """A bounded JSON-RPC client for ``codex app-server`` over stdio."""

    def __init__(self, codex: str, env: dict[str, str], cwd: str) -> None:
        self.process = subprocess.Popen(
            [codex, "app-server", *OFFLINE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=cwd,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.next_id = 0
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def call(self, method: str, params: dict[str, Any], timeout: float = 120) -> Any:
        self.next_id += 1
        wanted = self.next_id
        self.send({"id": wanted, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = json.loads(self.lines.get(timeout=1))
            except queue.Empty:
                continue
            if message.get("id") == wanted:
                assert "error" not in message, message
                return message["result"]
        raise AssertionError(f"codex app-server gave no answer to {method} in {timeout} s")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)
        self.pump.join(timeout=20)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture
def app_server(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
) -> Iterator[AppServer]:
    codex = agent_cli("codex")
    ihmt_install("install", "codex", "--home", f"{agent_env['HOME']}/memory")
    server = AppServer(codex, agent_env, agent_env["HOME"])
    try:
        server.call("initialize", {"clientInfo": {"name": "ihmt-tests", "version": "1"}})
        server.send({"method": "initialized"})
        yield server
    finally:
        server.close()


def test_codex_lists_the_ten_tools_of_ihmt_memory(app_server: AppServer) -> None:
    listing = app_server.call("mcpServerStatus/list", {})

    servers = {entry["name"]: entry for entry in listing["data"]}
    assert "ihmt-memory" in servers, listing
    assert set(servers["ihmt-memory"]["tools"]) == TEN_TOOLS
    assert servers["ihmt-memory"]["serverInfo"]["name"] == "ihmt-memory"


def test_codex_saves_then_finds_a_memory_through_the_server(app_server: AppServer) -> None:
    thread = app_server.call("thread/start", {})["thread"]["id"]

    def tool(name: str, arguments: dict[str, Any]) -> str:
        reply = app_server.call(
            "mcpServer/tool/call",
            {"threadId": thread, "server": "ihmt-memory", "tool": name, "arguments": arguments},
        )
        assert reply.get("isError") is False, reply
        text: str = reply["content"][0]["text"]
        return text

    saved = tool("save_memory", {"content": "We deploy falcon with Argo CD since March 2026."})
    found = tool("search_memory", {"query": "how do we deploy falcon?"})

    assert saved.startswith("SAVED memory L-")
    assert found.startswith("FOUND") and "Argo CD" in found
