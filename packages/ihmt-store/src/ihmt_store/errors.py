"""The IHMT exception tree.

Every package adds its own branch under :class:`IhmtError`; this module holds the
root and the store's branch::

    IhmtError
    └── StoreError
        ├── StoreNotFoundError      (FileNotFoundError)  no store at the path
        ├── StoreFormatError        (ValueError)         written by a newer version, or not a store
        ├── ConfigError             (ValueError)         ihmt.config.json is malformed
        ├── LeafNotFoundError       (LookupError)        no leaf with that id
        ├── BranchNotFoundError     (LookupError)        no branch with that id
        ├── CorruptFileError        (ValueError)         a leaf or branch file that cannot be parsed
        ├── LockTimeoutError        (TimeoutError)       another writer held the lock too long
        └── StoreIOError            (OSError)            the disk refused a write (full, read-only)

Chunkers, facts, navigator and the MCP layer add ``ChunkError``, ``FactError``,
``SearchError`` and ``MemoryError``-like branches of their own. A wrong argument is a
plain ``ValueError``/``TypeError`` and stays outside the tree.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BranchNotFoundError",
    "ConfigError",
    "CorruptFileError",
    "IhmtError",
    "LeafNotFoundError",
    "LockTimeoutError",
    "StoreError",
    "StoreFormatError",
    "StoreIOError",
    "StoreNotFoundError",
]


class IhmtError(Exception):
    """Root of every error IHMT raises on purpose."""


class StoreError(IhmtError):
    """Something is wrong with the store on disk."""


class StoreNotFoundError(StoreError, FileNotFoundError):
    """There is no IHMT store at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"no IHMT store at {path} (missing ihmt.config.json); create one with 'ihmt init'"
        )


class StoreFormatError(StoreError, ValueError):
    """The store was written by a newer IHMT, or the folder is not an IHMT store."""

    def __init__(self, message: str, *, path: Path, found: int | None = None) -> None:
        self.path = path
        self.found = found
        super().__init__(message)


class ConfigError(StoreError, ValueError):
    """``ihmt.config.json`` cannot be read or holds an invalid value."""

    def __init__(self, message: str, *, path: Path) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


class LeafNotFoundError(StoreError, LookupError):
    """No leaf with ``leaf_id`` in the store."""

    def __init__(self, leaf_id: str) -> None:
        self.leaf_id = leaf_id
        super().__init__(f"no memory with id {leaf_id!r}")

    def __str__(self) -> str:  # LookupError would otherwise print the repr of args
        return str(self.args[0])


class BranchNotFoundError(StoreError, LookupError):
    """No branch with ``node_id`` in the store."""

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        super().__init__(f"no branch with id {node_id!r}")

    def __str__(self) -> str:
        return str(self.args[0])


class CorruptFileError(StoreError, ValueError):
    """A leaf or branch file exists but cannot be parsed; ``path`` names it."""

    def __init__(self, message: str, *, path: Path) -> None:
        self.path = path
        self.reason = message
        """What is wrong with it, without the path."""
        super().__init__(f"{path}: {message}")


class LockTimeoutError(StoreError, TimeoutError):
    """Another live process held the store's write lock for longer than the timeout."""

    def __init__(self, path: Path, timeout: float, holder: str = "") -> None:
        self.path = path
        self.timeout = timeout
        self.holder = holder
        who = f" (held by {holder})" if holder else ""
        super().__init__(f"the store at {path} stayed locked for {timeout:.0f}s{who}; try again")


class StoreIOError(StoreError, OSError):
    """The operating system refused a write: disk full, read-only folder, permissions."""

    def __init__(self, message: str, *, path: Path) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")
