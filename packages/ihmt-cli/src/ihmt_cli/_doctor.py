"""``ihmt doctor``: is the store healthy, which agents have the server, does it answer.

The connection check starts each registered server exactly as its agent would (the
same command line and environment) and opens a session with the MCP SDK's own stdio
client — ``initialize`` and ``tools/list`` — bounded in time.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Probe", "StoreHealth", "probe_server", "store_health"]

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
    search: dict[str, Any] | None = None
    """What search uses (``mode``, ``model``, ``reason``, ``vectors_missing``)."""

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
            "search": self.search,
        }


def store_health(path: Path) -> StoreHealth:
    """Open the store read-side and check it: opens, nothing unreachable, a known format."""
    from dataclasses import replace

    from ihmt_mcp import Memory, Settings
    from ihmt_store import FORMAT_VERSION, IhmtError, Store

    if not Store.exists(path):
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
        search = memory.search_mode()
        edited = memory.store.hand_edits()
    finally:
        memory.close()
    problems = []
    if stats.unreachable:
        problems.append(f"{stats.unreachable} memories unreachable from the trunk; ihmt rebuild")
    if edited:
        shown = ", ".join(edited[:5]) + (f" and {len(edited) - 5} more" if len(edited) > 5 else "")
        problems.append(
            f"{len(edited)} memories were edited by hand since they were indexed ({shown}); "
            "the next search re-indexes them, or run ihmt rebuild"
        )
    return StoreHealth(
        path=str(path),
        exists=True,
        ok=not problems,
        leaves=stats.leaves,
        unreachable=stats.unreachable,
        format_version=version,
        supported_format_version=FORMAT_VERSION,
        error="; ".join(problems),
        search=search,
    )


async def _probe(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None) -> Probe:
    import tempfile

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=argv[0], args=list(argv[1:]), env={**os.environ, **env}, cwd=cwd
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                listed = await session.list_tools()
        except Exception as exc:  # noqa: BLE001 — any failure to talk is the verdict
            errlog.seek(0)
            tail = errlog.read().strip().splitlines()
            said = str(exc) or type(exc).__name__
            if tail:
                said += f" (server stderr: {tail[-1][:200]})"
            return Probe(connects=False, error=said)
    info = init.server_info
    return Probe(
        connects=True,
        tools=tuple(tool.name for tool in listed.tools),
        server=f"{info.name} {info.version or ''}".strip(),
    )


def probe_server(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout: float = PROBE_TIMEOUT,
    cwd: Path | None = None,
) -> Probe:
    """Start ``argv`` with ``env`` added to ours, through the MCP SDK's own stdio client:
    ``initialize`` then ``tools/list``, within ``timeout`` seconds."""
    import anyio

    if not argv or not argv[0]:
        return Probe(connects=False, error="the registration has no command")
    if shutil.which(argv[0]) is None:
        return Probe(connects=False, error=f"cannot start {argv[0]}: no such program")

    async def bounded() -> Probe:
        with anyio.move_on_after(timeout) as scope:
            return await _probe(argv, env, cwd)
        assert scope.cancelled_caught
        return Probe(connects=False, error=f"no answer within {timeout:.0f} s")

    return anyio.run(bounded)


def codex_hook_trust(hooks_file: Path, *, cwd: Path, timeout: float = 20.0) -> bool | None:
    """Whether Codex trusts the ``ihmt hook`` entries of ``hooks_file``; None: unknown.

    Asks Codex itself: ``codex app-server`` answers ``hooks/list`` with each hook's
    ``trustStatus`` (a user trusts a hook with ``/hooks`` in the Codex TUI, which keeps
    the hash in config.toml ``[hooks.state]``). This is Codex's own JSON-RPC, not MCP.
    """
    import json
    import queue
    import subprocess
    import threading

    codex = shutil.which("codex")
    if codex is None:
        return None
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "ihmt-doctor", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]  # fmt: skip
    try:
        process = subprocess.Popen(
            [codex, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    try:
        assert process.stdin is not None
        process.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        process.stdin.flush()
        while True:
            line = lines.get(timeout=timeout)
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == 2:
                break
    except (queue.Empty, OSError):
        return None
    finally:
        process.kill()
        process.wait(timeout=10)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
    found = [
        hook
        for group in (message.get("result") or {}).get("data") or []
        for hook in group.get("hooks") or []
        if Path(str(hook.get("sourcePath", ""))) == hooks_file
        and " hook " in str(hook.get("command", ""))
        and "ihmt" in str(hook.get("command", ""))
    ]
    if not found:
        return None
    return all(hook.get("trustStatus") in ("trusted", "managed") for hook in found)
