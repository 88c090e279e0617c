"""What the tests of the newer real agent CLIs (Gemini CLI, Copilot CLI) share: running a
CLI for its text, ``ihmt doctor``'s row of an agent, and :class:`ModelStub`.

The stub is a model service on a loopback port: it records every request and answers each
with ``400 Bad Request``, so that an agent gives up at once instead of retrying. An agent
runs its hooks and starts its MCP servers before its first call to a model; the request it
then sends holds what the hooks added, exactly as the model would have read it. Nothing
leaves the machine, and no account is needed.

``ModelStub(answer="OK.")`` answers instead, in the shape each agent asks for (Gemini's
``generateContent``, streamed or not; OpenAI's chat completions, streamed or not): the
agent's turn then ends as with a model, and its stop hooks run.

Gemini CLI reaches it through ``GOOGLE_GEMINI_BASE_URL`` (with any ``GEMINI_API_KEY``),
Copilot CLI through ``COPILOT_PROVIDER_BASE_URL`` (its bring-your-own-model mode, with
``COPILOT_OFFLINE=true``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["ModelStub", "doctor_row", "output_of"]


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=240,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def output_of(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    """What a CLI prints (stdout then stderr), whatever its exit code."""
    done = _run(argv, env, cwd)
    return done.stdout + done.stderr


def doctor_row(env: dict[str, str], cwd: Path, agent: str, scope: str = "user") -> Any:
    """``ihmt doctor --json``'s row of ``agent`` in ``scope``, for the memory at
    ``HOME/memory``, run in ``cwd`` (the servers it finds are started and probed)."""
    ihmt = str(Path(sys.executable).parent / "ihmt")
    done = _run([ihmt, "doctor", "--json"], {**env, "IHMT_HOME": f"{env['HOME']}/memory"}, cwd)
    rows = json.loads(done.stdout)["agents"]
    return next(r for r in rows if r["agent"] == agent and r["scope"] == scope)


REFUSAL = b'{"error": {"code": 400, "message": "a test stub", "status": "INVALID_ARGUMENT"}}'


class ModelStub:
    """``with ModelStub() as stub:`` — ``stub.url`` to point an agent at, ``stub.bodies``
    the request bodies it received, in order."""

    def __init__(self, answer: str | None = None) -> None:
        self.bodies: list[str] = []
        self.paths: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                stub.paths.append(self.path)
                body = self.rfile.read(size).decode("utf-8", "replace")
                stub.bodies.append(body)
                if answer is None:
                    self._refuse()
                elif "generatecontent" in self.path.lower():  # Gemini API
                    self._gemini(answer, stream="alt=sse" in self.path)
                else:
                    self._chat(answer, stream='"stream":true' in body.replace(" ", ""))

            def _send(self, kind: str, chunks: list[bytes]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                if kind == "application/json":
                    self.send_header("Content-Length", str(len(chunks[0])))
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(chunk)
                self.wfile.flush()
                self.close_connection = True

            def _gemini(self, text: str, *, stream: bool) -> None:
                parts = [{"text": text}]
                candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}
                usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
                data = json.dumps({"candidates": [candidate], "usageMetadata": usage}).encode()
                if stream:
                    self._send("text/event-stream", [b"data: " + data + b"\r\n\r\n"])
                else:
                    self._send("application/json", [data])

            def _chat(self, text: str, *, stream: bool) -> None:
                base = {"id": "stub", "created": 1, "model": "stub"}
                usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
                if not stream:
                    message = {"role": "assistant", "content": text}
                    choice = {"index": 0, "message": message, "finish_reason": "stop"}
                    whole = {**base, "object": "chat.completion", "choices": [choice]}
                    self._send("application/json", [json.dumps({**whole, "usage": usage}).encode()])
                    return
                chunk = {**base, "object": "chat.completion.chunk"}
                delta = {"role": "assistant", "content": text}
                events = [
                    {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    {**chunk, "choices": [], "usage": usage},
                ]
                lines = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events]
                self._send("text/event-stream", [*lines, b"data: [DONE]\n\n"])

            def do_GET(self) -> None:
                stub.paths.append(self.path)
                self._refuse()

            def _refuse(self) -> None:
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(REFUSAL)))
                self.end_headers()
                self.wfile.write(REFUSAL)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ModelStub:
        self.thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
