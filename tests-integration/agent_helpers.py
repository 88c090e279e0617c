"""What the tests of the newer real agent CLIs (Gemini CLI, Copilot CLI) share: running a
CLI for its text, ``ihmt doctor``'s row of an agent, and :class:`ModelStub`.

The stub is a model service on a loopback port: it records every request and answers each
with ``400 Bad Request``, so that an agent gives up at once instead of retrying. An agent
runs its hooks and starts its MCP servers before its first call to a model; the request it
then sends holds what the hooks added, exactly as the model would have read it. Nothing
leaves the machine, and no account is needed.

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

    def __init__(self) -> None:
        self.bodies: list[str] = []
        self.paths: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                stub.paths.append(self.path)
                stub.bodies.append(self.rfile.read(size).decode("utf-8", "replace"))
                self._refuse()

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
