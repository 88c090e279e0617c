"""The state of one ``ihmt gui`` server: the store it shows, its token, and the one thread
every call into ``Memory`` runs on (SQLite connections stay on the thread that made them).

The store is opened on first use and only if it exists: the GUI never creates one
implicitly (the Set up screen does, on request).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ihmt_cli._types import ApiErrorCode

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from ihmt_mcp import Memory
    from ihmt_store import Entry

__all__ = ["ApiError", "Gui"]

T = TypeVar("T")


def _new_token() -> str:
    import secrets

    return secrets.token_urlsafe(32)


def _one_thread() -> ThreadPoolExecutor:
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="ihmt-gui")


class ApiError(Exception):
    """A request the API refuses: an HTTP status and one plain sentence."""

    def __init__(self, status: int, message: str, code: ApiErrorCode = "bad_request") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


@dataclass
class Gui:
    """The state of one ``ihmt gui`` server: the store it shows and its token."""

    store_path: Path
    home: Path
    token: str = field(default_factory=lambda: _new_token())
    _memory: Memory | None = None
    _opened: Path | None = None
    _pool: ThreadPoolExecutor = field(default_factory=lambda: _one_thread())
    _listing: _Listing | None = None

    def has_store(self) -> bool:
        from ihmt_store import Store

        return Store.exists(self.store_path)

    async def run(self, fn: Callable[[Memory], T]) -> T:
        """Run ``fn(memory)`` on the memory thread (opening the store there on first use)."""
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._call, fn)

    def _call(self, fn: Callable[[Memory], T]) -> T:
        from dataclasses import replace

        from ihmt_mcp import Memory, Settings

        if self._memory is None or self._opened != self.store_path:
            if not self.has_store():
                raise ApiError(
                    404,
                    f"no memory at {self.store_path}; create it on the Set up screen",
                    "no_store",
                )
            if self._memory is not None:
                self._memory.close()
                self._memory = None
            settings = replace(Settings.from_env(), store_path=self.store_path)
            self._memory = Memory.open(settings)
            self._opened = self.store_path
        return fn(self._memory)

    async def offload(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the memory thread too (creating a store, switching to it)."""
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, fn)

    def listing(self, memory: Memory) -> _Listing:
        """Every memory newest first, with its projects and tags (on the memory thread).

        Rebuilt only when the store changed (its generation) or another store is shown.
        """
        store = memory.store
        generation = store.generation
        cached = self._listing
        if cached is not None and cached.store == store.path and cached.generation == generation:
            return cached
        self._listing = _Listing.of(store.path, generation, store.iter_entries("leaf"))
        return self._listing

    def close(self) -> None:
        def shut() -> None:
            if self._memory is not None:
                self._memory.close()
                self._memory = None

        self._pool.submit(shut).result(timeout=30)
        self._pool.shutdown(wait=True)


@dataclass(frozen=True)
class _Listing:
    """The memories of one store generation, newest first, and what filters them."""

    store: Path
    generation: int
    leaves: tuple[Entry, ...]
    projects: tuple[tuple[str, int], ...]
    """(project, memories), most memories first; '' is the global memories."""
    tags: tuple[tuple[str, int], ...]
    """(tag, memories), most memories first."""

    @classmethod
    def of(cls, store: Path, generation: int, entries: Iterable[Entry]) -> _Listing:
        from collections import Counter

        leaves = sorted(entries, key=lambda e: (e.timestamp, e.id), reverse=True)
        projects = Counter(e.project for e in leaves)
        tags = Counter(t for e in leaves for t in dict.fromkeys(e.tags))
        return cls(
            store=store,
            generation=generation,
            leaves=tuple(leaves),
            projects=tuple(sorted(projects.items(), key=lambda kv: (-kv[1], kv[0]))),
            tags=tuple(sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))),
        )
