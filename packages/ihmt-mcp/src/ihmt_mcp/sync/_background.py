"""The MCP server's background sync: :meth:`Sync.sync` on a timer, in a daemon thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ihmt_mcp.sync._driver import Sync
from ihmt_mcp.sync._records import SyncReport
from ihmt_mcp.sync._status import MAX_PERIOD_S, is_synced

if TYPE_CHECKING:
    from ihmt_mcp._parts import MemoryParts

logger = logging.getLogger(__name__)

__all__ = ["BackgroundSync"]


class BackgroundSync:
    """Runs :meth:`Sync.sync` every ``period`` seconds in a daemon thread (the MCP
    server's ``IHMT_SYNC_EVERY``).

    Each round opens a :class:`~ihmt_mcp.Memory` of its own with ``open_memory`` (the
    store lock serialises it with the server's), and skips the store, without opening
    it, while ``folder`` is not synced. A failure is logged and the next round tries
    again: nothing a round does can stop the server.
    """

    def __init__(
        self, open_memory: Callable[[], MemoryParts], period: float, *, folder: Path | None = None
    ) -> None:
        if not 0 < period <= MAX_PERIOD_S:
            raise ValueError("the sync period must be positive and at most 24h")
        self._open_memory = open_memory
        self.period = period
        self.folder = folder
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.rounds = 0
        """Rounds run so far (skipped ones included)."""
        self.last_error = ""
        """What the last round failed with ('' when it did not fail)."""

    def start(self) -> None:
        """Start the thread (its first round runs one period from now)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="ihmt-sync", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to end after its current round, and wait for it (bounded)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run_once(self) -> SyncReport | None:
        """One round: None when the store is not synced, or the round failed (logged)."""
        try:
            if self.folder is not None and not is_synced(self.folder):
                return None
            memory = self._open_memory()
            try:
                sync = Sync(memory)
                if not sync.is_initialised():
                    return None
                report = sync.sync()
            finally:
                memory.close()
        except Exception as exc:  # noqa: BLE001 (a background round must never end the server)
            self.last_error = str(exc)
            logger.warning("background sync failed: %s", exc)
            return None
        finally:
            self.rounds += 1
        self.last_error = ""
        logger.info("background sync: %s", report.render())
        return report

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.run_once()
