"""The real agent CLIs run the capture hook (``ihmt hook stop``) that ``ihmt install``
registers, and what the user said that lasts ends up in the memory.

- **Claude Code** runs ``Stop`` when a turn ends, so it needs a model that answers: a
  stub of the Messages API on a loopback port streams one short answer (no model, no
  account, nothing leaves the machine). ``claude -p`` then stops, runs the hook with its
  ``transcript_path``, and the hook reads the user's prompt from the JSONL file Claude
  Code wrote.
- **Codex** lists the ``Stop`` hook install registered (``hooks/list`` from ``codex
  app-server``: Codex's own view of its hooks); test_agents_codex_stop.py runs it.
- **opencode** (``opencode serve``) answers a message through a provider whose base URL
  is a stub of the OpenAI chat API; the session then goes idle, and the plugin hands the
  user's messages to ``ihmt hook stop``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_agents_hooks import _free_port, _hooks_list, _post

STATEMENT = "From now on we deploy lynx with ArgoCD, never with kubectl apply."


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


@pytest.fixture
def messages_stub() -> Iterator[str]:
    """A Messages API that answers every request with one streamed "OK." (its URL)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(size) or b"{}")
            message = {
                "id": "msg_stub",
                "type": "message",
                "role": "assistant",
                "model": request.get("model", "stub"),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 0},
            }
            if not request.get("stream"):
                message.update(content=[{"type": "text", "text": "OK."}], stop_reason="end_turn")
                body = json.dumps(message).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": "OK."}
            done = {"stop_reason": "end_turn", "stop_sequence": None}
            for name, data in (
                ("message_start", {"message": message}),
                ("content_block_start", {"index": 0, "content_block": block}),
                ("content_block_delta", {"index": 0, "delta": delta}),
                ("content_block_stop", {"index": 0}),
                ("message_delta", {"delta": done, "usage": {"output_tokens": 1}}),
                ("message_stop", {}),
            ):
                self.wfile.write(_event(name, {"type": name, **data}))
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def chat_stub() -> Iterator[str]:
    """An OpenAI chat completions API that streams one "OK." to every request (its URL)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
            delta = {"role": "assistant", "content": "OK."}
            for choice in (
                {"index": 0, "delta": delta, "finish_reason": None},
                {"index": 0, "delta": {}, "finish_reason": "stop"},
            ):
                self.wfile.write(b"data: " + json.dumps({**base, "choices": [choice]}).encode())
                self.wfile.write(b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def lynx(agent_env: dict[str, str], tmp_path: Path) -> Path:
    """A git project with an empty memory; every hook works alone (no recall server)."""
    agent_env.pop("IHMT_PROJECT", None)
    agent_env["IHMT_HOOK_SERVER"] = "off"
    agent_env["IHMT_SEMANTIC"] = "off"
    folder = tmp_path / "work" / "lynx"
    (folder / ".git").mkdir(parents=True)
    ihmt = str(Path(sys.executable).parent / "ihmt")
    env = {**agent_env, "IHMT_HOME": str(Path(agent_env["HOME"]) / "memory")}
    subprocess.run([ihmt, "init"], env=env, cwd=folder, capture_output=True, check=True)
    return folder


def _memories(agent_env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    ihmt = str(Path(sys.executable).parent / "ihmt")
    env = {**agent_env, "IHMT_HOME": str(Path(agent_env["HOME"]) / "memory")}
    done = subprocess.run(
        [ihmt, "export"], env=env, cwd=cwd, capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_claude_code_stop_saves_what_the_user_said(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    messages_stub: str,
    lynx: Path,
) -> None:
    claude = agent_cli("claude")
    ihmt_install("install", "claude-code", "--home", f"{agent_env['HOME']}/memory")
    env = {**agent_env, "ANTHROPIC_BASE_URL": messages_stub, "ANTHROPIC_API_KEY": "sk-stub"}

    done = subprocess.run(
        [claude, "-p", f"thanks for the fix. {STATEMENT}"],
        capture_output=True,
        text=True,
        env=env,
        cwd=lynx,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    [saved] = _memories(agent_env, lynx)
    assert saved["content"] == STATEMENT
    assert saved["source"] == "session" and saved["project"] == "lynx"
    log = Path(agent_env["HOME"]) / "memory" / "hooks" / "hooks.log"
    stops = [r for r in map(json.loads, log.read_text().splitlines()) if r["event"] == "stop"]
    assert stops and stops[-1]["saved"] == 1 and stops[-1]["error"] == ""


def test_codex_lists_the_stop_hook_install_registered(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    lynx: Path,
) -> None:
    codex = agent_cli("codex")
    ihmt_install("install", "codex", "--home", f"{agent_env['HOME']}/memory")

    hooks = _hooks_list(codex, agent_env, lynx)

    ours = [h for h in hooks if " hook stop " in h["command"]]
    assert [h["eventName"] for h in ours] == ["stop"]
    assert ours[0]["command"].endswith(f"--agent codex --home {agent_env['HOME']}/memory")


def test_opencode_saves_what_the_user_said_when_the_session_goes_idle(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    chat_stub: str,
    lynx: Path,
) -> None:
    opencode = agent_cli("opencode")
    home = Path(agent_env["HOME"])
    ihmt_install("install", "opencode", "--home", str(home / "memory"))
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "stub",
        "options": {"baseURL": chat_stub, "apiKey": "stub"},
        "models": {"m": {"name": "m"}},
    }
    config = home / ".config" / "opencode" / "opencode.json"
    config.write_text(json.dumps({"provider": {"stub": provider}, "model": "stub/m"}))
    port = _free_port()
    log = home / "opencode-serve.log"
    with log.open("w", encoding="utf-8") as out:
        server = subprocess.Popen(
            [opencode, "serve", "--port", str(port), "--hostname", "127.0.0.1"],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=agent_env,
            cwd=lynx,
        )
    try:
        deadline = time.monotonic() + 120
        while "listening on" not in log.read_text(encoding="utf-8", errors="replace"):
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "opencode serve did not start"
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port}"
        session = _post(f"{url}/session", {})
        body = {"parts": [{"type": "text", "text": f"thanks! {STATEMENT}"}]}
        answer = _post(f"{url}/session/{session['id']}/message", body)
        assert answer["info"]["role"] == "assistant"
        # the plugin runs the hook in the background once the session is idle
        while not [m for m in _memories(agent_env, lynx) if m["source"] == "session"]:
            assert time.monotonic() < deadline + 60, "nothing was captured"
            time.sleep(0.5)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=20)
    [saved] = _memories(agent_env, lynx)
    assert saved["content"] == STATEMENT and saved["project"] == "lynx"
