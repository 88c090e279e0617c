"""The warm recall server behind ``ihmt hook``.

An agent starts ``ihmt hook`` as a new process on every prompt. Opening a large memory,
reading its fact timeline and loading the sentence encoder (seconds) cannot happen in
each of them, so the first hook that finds no server starts one in the background and
answers by itself with words only; the hooks after it ask the server, which keeps all of
that warm and answers in milliseconds, with meaning as well as words.

- One server per ``IHMT_HOME``: it holds ``hooks/server.lock`` for its life and listens
  on a Unix socket (``hooks/recall.sock``, or ``$XDG_RUNTIME_DIR`` when that path is
  too long), readable by its user only. It binds only once warm, so a hook never waits
  for it to load. A hook talks only to a socket of its own user, served by a process
  of its own user (:func:`ask`).
- It answers one request at a time: ``{"event", "project", "prompt", "seen"}`` in, the
  :class:`~ihmt_cli._hook.Recall` fields out; or a ``capture`` request from ``ihmt hook
  stop`` (the statements to save, :func:`~ihmt_cli._hook_stop.answer_capture`). It
  exits after :data:`IDLE_SECONDS` without a request, or when the store is gone.
- ``IHMT_HOOK_SERVER=off`` turns it off (every hook then works alone, words only);
  where Unix sockets or ``fcntl`` do not exist it is off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import stat
import struct
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

logger = logging.getLogger(__name__)

__all__ = [
    "IDLE_SECONDS",
    "ask",
    "is_wanted",
    "serve",
    "server_status",
    "start",
]

IDLE_SECONDS = 900.0
"""The server exits after this long without a request (15 minutes)."""
CONNECT_TIMEOUT = 0.2
ANSWER_TIMEOUT = 3.0
"""A hook waits this long for the server's answer before it answers by itself."""
MAX_REQUEST = 4 * 1024 * 1024
SOCKET_NAME = "recall.sock"
LOCK_NAME = "server.lock"
STATUS_NAME = "server.json"
MAX_SOCKET_PATH = 100
"""Unix socket paths are limited to about 104 bytes."""


def is_wanted(environ: Mapping[str, str]) -> bool:
    """Whether hooks should use (and start) a server here."""
    if (environ.get("IHMT_HOOK_SERVER") or "auto").strip().lower() in ("off", "0", "no"):
        return False
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return hasattr(socket, "AF_UNIX")


def socket_path(home: Path, environ: Mapping[str, str]) -> Path | None:
    """Where the server of ``home`` listens, or None when no short enough path exists."""
    own = home / "hooks" / SOCKET_NAME
    if len(str(own)) <= MAX_SOCKET_PATH:
        return own
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime:
        digest = hashlib.sha256(str(home.resolve()).encode("utf-8")).hexdigest()[:16]
        path = Path(runtime) / f"ihmt-recall-{digest}.sock"
        if len(str(path)) <= MAX_SOCKET_PATH:
            return path
    return None


# ---------------------------------------------------------------------- the client side
def ask(
    home: Path,
    request: Mapping[str, Any],
    environ: Mapping[str, str],
    *,
    uid: int | None = None,
) -> dict[str, Any] | None:
    """The server's answer to ``request``, or None when no server of this user answers
    in time.

    The prompt goes only to a server of this user (``uid``, default: this process's):
    the socket file must be a socket owned by them, and the process listening on it
    must run as them (``SO_PEERCRED``, checked after connecting and before sending
    anything; where the system has no such option, the owner of the file decides).
    Anything else (a socket planted in a shared runtime folder) gets nothing and its
    answer is never read: the hook then answers by itself.
    """
    path = socket_path(home, environ)
    if path is None:
        return None
    expected = uid if uid is not None else os.getuid() if hasattr(os, "getuid") else None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode):
        return None
    if expected is not None and info.st_uid != expected:
        logger.warning("ignoring %s: the socket belongs to uid %d", path, info.st_uid)
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(str(path))
            peer = _peer_uid(conn)
            if expected is not None and peer is not None and peer != expected:
                logger.warning("ignoring %s: its server runs as uid %d", path, peer)
                return None
            conn.settimeout(ANSWER_TIMEOUT)
            conn.sendall(json.dumps(dict(request)).encode("utf-8") + b"\n")
            answer = _read_line(conn)
    except OSError:
        return None
    try:
        data = json.loads(answer)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("error") or not isinstance(data.get("reason"), str):
        return None
    return data


def _peer_uid(conn: socket.socket) -> int | None:
    """The user id of the process at the other end of ``conn`` (Linux: ``SO_PEERCRED``);
    None where the system does not say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, 12))
    return int(uid)


def _read_line(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_REQUEST:
            break
    return b"".join(chunks)


@contextlib.contextmanager
def _lock(home: Path) -> Iterator[IO[str] | None]:
    """The server's lock, held while the block runs; None when another process has it."""
    import fcntl

    path = home / "hooks" / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield None
            return
        try:
            yield handle
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()


def start(home: Path, environ: Mapping[str, str]) -> bool:
    """Start a server for ``home`` in the background unless one runs or is starting."""
    if socket_path(home, environ) is None:
        return False
    with _lock(home) as held:
        if held is None:
            return False  # a server holds it: running or still warming up
    try:
        subprocess.Popen(
            [sys.executable, "-m", "ihmt_cli", "hook-server", "--home", str(home)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            env=dict(environ),
        )
    except OSError:
        return False
    return True


def server_status(home: Path) -> dict[str, Any] | None:
    """What the running server of ``home`` wrote about itself, or None."""
    try:
        data = json.loads((home / "hooks" / STATUS_NAME).read_text("utf-8"))
        os.kill(int(data["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return data if isinstance(data, dict) else None


# ---------------------------------------------------------------------- the server
def serve(home: Path, environ: Mapping[str, str], *, idle: float = IDLE_SECONDS) -> int:
    """Run the server of ``home`` until it has been idle for ``idle`` seconds."""
    from ihmt_mcp import Memory, Settings
    from ihmt_store import Store

    path = socket_path(home, environ)
    if path is None:
        return 1
    import signal

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)  # run the cleanup below: socket and status file go

    signal.signal(signal.SIGTERM, stop)
    with _lock(home) as held:
        if held is None:
            return 0  # another server runs for this home
        settings = Settings.from_env({**environ, "IHMT_HOME": str(home)})
        if not Store.exists(settings.store_path):
            return 0
        memory = Memory.open(settings)
        try:
            memory.search("warm up the index and the encoder")
            _ = memory.timeline
            mode = memory.semantic_mode.to_json()["mode"]
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            path.parent.mkdir(parents=True, exist_ok=True)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            status = home / "hooks" / STATUS_NAME
            try:
                listener.bind(str(path))
                os.chmod(path, 0o600)
                listener.listen(16)
                listener.settimeout(min(30.0, idle))
                status.write_text(
                    json.dumps({"pid": os.getpid(), "since": time.time(), "mode": mode}),
                    "utf-8",
                )
                last = time.monotonic()
                while time.monotonic() - last < idle and Store.exists(settings.store_path):
                    try:
                        conn, _ = listener.accept()
                    except TimeoutError:
                        continue
                    last = time.monotonic()
                    with conn:
                        _answer(conn, memory)
            finally:
                listener.close()
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                with contextlib.suppress(FileNotFoundError):
                    status.unlink()
        finally:
            memory.close()
    return 0


def _answer(conn: socket.socket, memory: Any) -> None:
    from ihmt_cli._hook import digest_for, recall_for

    conn.settimeout(ANSWER_TIMEOUT)
    try:
        request = json.loads(_read_line(conn))
        if request.get("event") == "capture":
            from ihmt_cli._hook_stop import answer_capture

            with contextlib.suppress(OSError):
                conn.sendall(json.dumps(answer_capture(memory, request)).encode("utf-8") + b"\n")
            return
        seen = [s for s in request.get("seen") or [] if isinstance(s, str)]
        project = str(request.get("project") or "")
        if request.get("event") == "prompt":
            result = recall_for(
                memory, str(request.get("prompt") or ""), project=project, seen=seen
            )
        else:
            result = digest_for(memory, project=project, seen=seen)
        reply: dict[str, Any] = {
            "text": result.text,
            "ids": list(result.ids),
            "reason": result.reason,
        }
    except Exception as exc:  # noqa: BLE001 — one bad request must not end the server
        logger.warning("recall server: %s", exc)
        reply = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(reply).encode("utf-8") + b"\n")
