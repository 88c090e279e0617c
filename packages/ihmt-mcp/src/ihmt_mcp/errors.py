"""The errors of ``ihmt_mcp``: its branch of the IHMT exception tree.

::

    IhmtError                              (ihmt_store)
    └── MemoryServiceError
        ├── EmptyContentError      (ValueError)     nothing to save (empty or blank text)
        ├── ContentTooLargeError   (ValueError)     a save above the size limit
        ├── SecretRefusedError     (ValueError)     the text holds an API key, token, password…
        ├── PathRefusedError       (PermissionError) a path outside the allowed roots
        ├── FileRefusedError       (ValueError)     missing, binary, or too large a file
        └── SemanticUnavailableError (RuntimeError) the semantic layer is off or not installed

Each carries its data as attributes. Messages are one plain sentence a model can act on,
and never contain the text of a memory (nor, for a refused secret, the secret).

The edges (an MCP tool, the command line, the web interface) catch :data:`USER_ERRORS` and
show :func:`plain_message`; anything else is a bug, logged with its traceback.
"""

from __future__ import annotations

from pathlib import Path

from ihmt_store import IhmtError

__all__ = [
    "USER_ERRORS",
    "plain_message",
    "ContentTooLargeError",
    "EmptyContentError",
    "FileRefusedError",
    "MemoryServiceError",
    "PathRefusedError",
    "SecretRefusedError",
    "SemanticUnavailableError",
]


USER_ERRORS: tuple[type[Exception], ...] = (IhmtError, ValueError, LookupError, OSError)
"""What a user is told in one sentence: the tree's errors, a wrong value, an unknown id or
name, a file that cannot be read. Anything else is a bug."""


def plain_message(exc: BaseException) -> str:
    """What ``exc`` says, for a user: an ``OSError`` naming a file gives
    ``"<strerror>: <file>"`` (no ``[Errno 2]``, no quotes); any other error its message,
    or the name of its type when it has none. Not clipped, and it may span lines: each
    edge shapes it (one line for a terminal, the first line as a sentence for a model)."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.strerror}: {exc.filename}"
    return str(exc) or type(exc).__name__


class MemoryServiceError(IhmtError):
    """Something the memory service refuses or cannot do."""


class EmptyContentError(MemoryServiceError, ValueError):
    """There is nothing to save: the content is empty or only whitespace."""

    def __init__(self) -> None:
        super().__init__("nothing to save: the content is empty")


class ContentTooLargeError(MemoryServiceError, ValueError):
    """A single save holds more than ``limit`` characters."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            f"the content is too large to save as one memory ({size:,} characters, the limit "
            f"is {limit:,}); save the lasting facts in a few sentences, or ingest the file"
        )


class SecretRefusedError(MemoryServiceError, ValueError):
    """The content holds a secret; ``kinds`` names what was found (never the secret)."""

    def __init__(self, kinds: tuple[str, ...], lines: tuple[int, ...]) -> None:
        self.kinds = kinds
        self.lines = lines
        what = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " and " + kinds[-1]
        where = ", ".join(str(n) for n in lines[:5])
        plural = "s" if len(lines) > 1 else ""
        super().__init__(
            f"not saved: the text contains {what} (line{plural} {where}); a memory must never "
            "hold a secret, so save the fact without it (for example 'the deploy token is "
            "in the team vault')"
        )


class PathRefusedError(MemoryServiceError, PermissionError):
    """``path`` lies outside the folders this session may read."""

    def __init__(self, path: Path, roots: tuple[Path, ...]) -> None:
        self.path = path
        self.roots = roots
        allowed = ", ".join(str(r) for r in roots) or "none"
        super().__init__(
            f"refused: {path} is outside the project folders this session may read ({allowed})"
        )


class FileRefusedError(MemoryServiceError, ValueError):
    """A file that cannot be read as text: missing, a folder, binary, or too large."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot read {path}: {reason}")


class SemanticUnavailableError(MemoryServiceError, RuntimeError):
    """The semantic layer cannot run; ``reason`` says why (not installed, turned off…)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"search is by words only here: {reason}")
