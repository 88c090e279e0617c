"""The store's inter-process write lock, standard library only.

One exclusive lock file per store. ``fcntl.flock`` (POSIX) or ``msvcrt.locking``
(Windows) is released by the operating system when its holder dies, so a crashed
writer never leaves the store locked.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path

from ihmt_store.errors import LockTimeoutError, StoreIOError

logger = logging.getLogger(__name__)

__all__ = ["StoreLock"]


class StoreLock:
    """A re-entrant exclusive lock shared by threads and processes."""

    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        self.path = path
        self.timeout = timeout
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this process holds the lock."""
        return self._depth > 0

    def acquire(self, timeout: float | None = None) -> bool:
        """Take the lock; return True when this call took it from the OS (not re-entry).

        Raises:
            LockTimeoutError: another live process kept it for ``timeout`` seconds.
        """
        wait = self.timeout if timeout is None else timeout
        if not self._thread_lock.acquire(timeout=wait):
            raise LockTimeoutError(self.path.parent, wait, "another thread")
        if self._depth > 0:
            self._depth += 1
            return False
        try:
            self._fd = self._lock_file(wait)
        except BaseException:
            self._thread_lock.release()
            raise
        self._depth = 1
        return True

    def release(self) -> None:
        """Give the lock back (the last release hands it to the OS)."""
        if self._depth == 0:
            raise RuntimeError("release of an unheld store lock")
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            _unlock(fd)
            os.close(fd)
        self._thread_lock.release()

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _lock_file(self, wait: float) -> int:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreIOError(
                f"cannot open the lock file: {exc.strerror}", path=self.path
            ) from exc
        deadline = time.monotonic() + wait
        delay = 0.001
        while True:
            if _try_lock(fd):
                # A fixed-width record written in place: truncating the file costs a
                # millisecond on some file systems, on every save.
                try:
                    os.lseek(fd, 0, os.SEEK_SET)
                    os.write(fd, f"{os.getpid():<19}\n".encode())
                except OSError:
                    pass
                return fd
            if time.monotonic() >= deadline:
                holder = _read_holder(fd)
                os.close(fd)
                raise LockTimeoutError(self.path.parent, wait, holder)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _read_holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        pid = os.read(fd, 32).decode(errors="replace").strip()
    except OSError:
        return ""
    return f"process {pid}" if pid else ""


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        except OSError:
            logger.warning("could not unlock %s cleanly", fd)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
