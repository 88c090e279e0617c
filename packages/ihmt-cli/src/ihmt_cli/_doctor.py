"""``ihmt doctor``: is the store healthy, which agents have the server, does it answer.

The connection check starts each registered server exactly as its agent would (the
same command line and environment) and speaks the first two MCP requests to it —
``initialize`` and ``tools/list`` — over stdio, bounded in time.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Probe", "StoreHealth", "probe_server", "store_health"]

PROTOCOL_VERSION = "2025-06-18"
PROBE_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """The outcome of starting a server and initializing an MCP session with it."""

    connects: bool
    tools: tuple[str, ...] = ()
    server: str = ""
    """``serverInfo.name`` and version, as the server reported them."""
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "connects": self.connects,
            "tools": list(self.tools),
            "server": self.server,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreHealth:
    """What ``ihmt doctor`` found at the store path."""

    path: str
    exists: bool
    ok: bool
    leaves: int = 0
    unreachable: int = 0
    format_version: int | None = None
    supported_format_version: int = 0
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "exists": self.exists,
            "ok": self.ok,
            "leaves": self.leaves,
            "unreachable": self.unreachable,
            "format_version": self.format_version,
            "supported_format_version": self.supported_format_version,
            "error": self.error,
        }


def store_health(path: Path, config_file: str) -> StoreHealth:
    """Open the store read-side and check it: opens, nothing unreachable, a known format."""
    from dataclasses import replace

    from ihmt_mcp import Memory, Settings
    from ihmt_store import FORMAT_VERSION, IhmtError

    if not (path / config_file).is_file():
        return StoreHealth(
            path=str(path), exists=False, ok=True, supported_format_version=FORMAT_VERSION
        )
    try:
        memory = Memory.open(replace(Settings.from_env(), store_path=path))
    except (IhmtError, OSError, ValueError) as exc:
        return StoreHealth(
            path=str(path),
            exists=True,
            ok=False,
            supported_format_version=FORMAT_VERSION,
            error=str(exc) or type(exc).__name__,
        )
    try:
        stats = memory.stats()
        version = memory.store.config.format_version
    finally:
        memory.close()
    problems = []
    if stats.unreachable:
        problems.append(f"{stats.unreachable} memories unreachable from the trunk; ihmt rebuild")
    return StoreHealth(
        path=str(path),
        exists=True,
        ok=not problems,
        leaves=stats.leaves,
        unreachable=stats.unreachable,
        format_version=version,
        supported_format_version=FORMAT_VERSION,
        error="; ".join(problems),
    )


def _request(id_: int, method: str, params: Mapping[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": dict(params)}
    return (json.dumps(message) + "\n").encode("utf-8")


def probe_server(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float = PROBE_TIMEOUT,
    cwd: Path | None = None,
) -> Probe:
    """Start ``argv`` with ``env`` added to ours; ``initialize`` then ``tools/list``."""
    if not argv or not argv[0]:
        return Probe(connects=False, error="the registration has no command")
    try:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
            cwd=cwd,
        )
    except OSError as exc:
        return Probe(connects=False, error=f"cannot start {argv[0]}: {exc.strerror or exc}")
    lines: queue.Queue[bytes] = queue.Queue()
    errors: list[bytes] = []
    assert process.stdout is not None and process.stderr is not None and process.stdin is not None

    def pump_out() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(b"")

    def pump_err() -> None:
        assert process.stderr is not None
        errors.extend(process.stderr)

    readers = [threading.Thread(target=f, daemon=True) for f in (pump_out, pump_err)]
    for reader in readers:
        reader.start()

    def answer(id_: int) -> dict[str, Any]:
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"no answer within {timeout:.0f} s") from None
            if not line:
                tail = b"".join(errors).decode("utf-8", "replace").strip().splitlines()
                raise ConnectionError(
                    "the server exited" + (f": {tail[-1]}" if tail else " without a word")
                )
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                raise ConnectionError(
                    f"the server wrote something that is not JSON-RPC on stdout: {line[:80]!r}"
                ) from None
            if isinstance(message, dict) and message.get("id") == id_:
                if "error" in message:
                    raise ConnectionError(f"the server refused: {message['error']}")
                result = message.get("result")
                return result if isinstance(result, dict) else {}

    try:
        process.stdin.write(
            _request(
                1,
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "ihmt-doctor", "version": "1"},
                },
            )
        )
        process.stdin.flush()
        init = answer(1)
        info = init.get("serverInfo") or {}
        notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        process.stdin.write((json.dumps(notice) + "\n").encode("utf-8"))
        process.stdin.write(_request(2, "tools/list", {}))
        process.stdin.flush()
        listed = answer(2)
        tools = tuple(str(t.get("name")) for t in listed.get("tools", []) if isinstance(t, dict))
        return Probe(
            connects=True,
            tools=tools,
            server=f"{info.get('name', '?')} {info.get('version', '')}".strip(),
        )
    except (TimeoutError, ConnectionError, OSError) as exc:
        return Probe(connects=False, error=str(exc))
    finally:
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
