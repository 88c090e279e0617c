"""ihmt-mcp: the IHMT memory as one transport-free composition, and its stdio MCP server.

``Memory`` puts the layers together — the store, the chunkers, the fact timeline and the
navigator — behind the calls an agent, the CLI and the web interface make: save (refusing
secrets, filing, facts, corrections with ``replaces``, incremental consolidation), search
(the current project first), forget, and the project code indexes. The server
(``ihmt-mcp``, or ``python -m ihmt_mcp``) exposes it as ten MCP tools over stdio.

Entry points:

- :class:`Memory` — ``Memory.open(Settings.from_env())``; ``save``, ``search``,
  ``mark_outdated``, ``restore``, ``forget``, ``ingest``, ``stats``, ``project_map``, ``find_code``.
- :class:`Settings` — the only reader of ``IHMT_HOME``, ``IHMT_PROJECTS_DIR``,
  ``IHMT_PROJECT`` and ``IHMT_LOG_LEVEL``.
- :func:`build_server` / :func:`main` — the MCP server (its module loads the SDK lazily,
  so importing this package stays cheap).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ihmt_mcp._secrets import SecretFinding, find_secrets
from ihmt_mcp._settings import Settings, find_project_root
from ihmt_mcp.errors import (
    USER_ERRORS,
    ContentTooLargeError,
    EmptyContentError,
    FileRefusedError,
    MemoryServiceError,
    PathRefusedError,
    SecretRefusedError,
    SemanticUnavailableError,
    plain_message,
)

if TYPE_CHECKING:
    from ihmt_mcp._memory import MAX_FILE_BYTES, MAX_SAVE_CHARS, Memory
    from ihmt_mcp._portable import PortableMemory, write_jsonl, write_markdown
    from ihmt_mcp._project import ProjectIndex, SyncReport
    from ihmt_mcp._records import (
        CorrectionRecord,
        FiledAs,
        ForgetResult,
        IngestReport,
        MemoryStats,
        ReplaceOutcome,
        RestoreResult,
        SaveResult,
        TreeItem,
    )
    from ihmt_mcp._server import INSTRUCTIONS, TOOL_NAMES, build_server, main
    from ihmt_mcp._session import FileReads, Scratch, digest

_LAZY: dict[str, str] = {
    **dict.fromkeys(("MAX_FILE_BYTES", "MAX_SAVE_CHARS", "Memory"), "ihmt_mcp._memory"),
    **dict.fromkeys(("ProjectIndex", "SyncReport"), "ihmt_mcp._project"),
    **dict.fromkeys(("PortableMemory", "write_jsonl", "write_markdown"), "ihmt_mcp._portable"),
    **dict.fromkeys(
        (
            "CorrectionRecord",
            "FiledAs",
            "ForgetResult",
            "IngestReport",
            "MemoryStats",
            "ReplaceOutcome",
            "RestoreResult",
            "SaveResult",
            "TreeItem",
        ),
        "ihmt_mcp._records",
    ),
    **dict.fromkeys(("INSTRUCTIONS", "TOOL_NAMES", "build_server", "main"), "ihmt_mcp._server"),
    **dict.fromkeys(("FileReads", "Scratch", "digest"), "ihmt_mcp._session"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ihmt_mcp' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__version__ = "0.1.0"

__all__ = [
    # the composition
    "Memory",
    "Settings",
    "MAX_SAVE_CHARS",
    "MAX_FILE_BYTES",
    "find_project_root",
    # what it returns
    "SaveResult",
    "FiledAs",
    "ReplaceOutcome",
    "RestoreResult",
    "CorrectionRecord",
    "ForgetResult",
    "IngestReport",
    "MemoryStats",
    "TreeItem",
    # import and export
    "PortableMemory",
    "write_jsonl",
    "write_markdown",
    # project indexes
    "ProjectIndex",
    "SyncReport",
    # session tools
    "Scratch",
    "FileReads",
    "digest",
    # secrets
    "find_secrets",
    "SecretFinding",
    # the server
    "build_server",
    "main",
    "INSTRUCTIONS",
    "TOOL_NAMES",
    # errors: what an edge catches, and the message it shows
    "USER_ERRORS",
    "plain_message",
    "MemoryServiceError",
    "EmptyContentError",
    "ContentTooLargeError",
    "SecretRefusedError",
    "PathRefusedError",
    "FileRefusedError",
    "SemanticUnavailableError",
]
