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

Every name below is a reviewed contract: ``tests/test_exports.py`` holds the list.
"""

from typing import TYPE_CHECKING

import lazy_loader  # type: ignore[import-untyped]

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
from ihmt_mcp._settings import Settings
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
    from ihmt_mcp._ingest import MAX_FILE_BYTES
    from ihmt_mcp._memory import Memory
    from ihmt_mcp._portable import PortableMemory, write_jsonl, write_markdown
    from ihmt_mcp._project import ProjectIndex
    from ihmt_mcp._secrets import find_secrets
    from ihmt_mcp._server import build_server, main
    from ihmt_mcp._summary_fill import INLINE_SUMMARIES, fill_summaries
    from ihmt_mcp._vector_fill import fill_vectors
    from ihmt_mcp.sync import (
        PulledChanges,
        PurgeReport,
        Sync,
        SyncError,
        SyncInit,
        SyncReport,
        SyncStatus,
    )

# The composition, the code indexes and the server import the other packages (and the
# MCP SDK): they load on first use (lazy_loader, PEP 562), so that ``from ihmt_mcp import
# Settings`` (a hook that must answer in milliseconds) stays cheap.
__getattr__, _, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_ingest": ["MAX_FILE_BYTES"],
        "_memory": ["Memory"],
        "_portable": ["PortableMemory", "write_jsonl", "write_markdown"],
        "_project": ["ProjectIndex"],
        "_secrets": ["find_secrets"],
        "_server": ["build_server", "main"],
        "_summary_fill": ["INLINE_SUMMARIES", "fill_summaries"],
        "_vector_fill": ["fill_vectors"],
        "sync": [
            "Sync",
            "SyncError",
            "SyncStatus",
            "SyncReport",
            "SyncInit",
            "PurgeReport",
            "PulledChanges",
        ],
    },
)


def __dir__() -> list[str]:
    return sorted(__all__)


__version__ = "0.1.0"

__all__ = [
    # the composition
    "Memory",
    "Settings",
    "MAX_FILE_BYTES",
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
    "PortableMemory",
    "ProjectIndex",
    # export files
    "write_jsonl",
    "write_markdown",
    # the command line's ingest: the summaries and vectors computed once the words are stored
    # (an ingest of at most INLINE_SUMMARIES memories writes its summaries before it returns)
    "INLINE_SUMMARIES",
    "fill_summaries",
    "fill_vectors",
    # the server
    "build_server",
    "main",
    # one memory on every machine: git as the replication engine (ihmt sync)
    "Sync",
    "SyncError",
    "SyncStatus",
    "SyncReport",
    "SyncInit",
    "PurgeReport",
    "PulledChanges",
    # what save refuses: an edge checks what it would echo (a usage error's argument)
    "find_secrets",
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
