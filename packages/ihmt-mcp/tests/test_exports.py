"""The public surface of ihmt-mcp, under review: the package's ``__all__`` and the MCP tools.

Adding or removing a name here, or a tool or one of its parameters, is a deliberate API
change: it is reviewed in this file, with a line in CHANGELOG.md, never a side effect of
a refactoring (the MCP SDK's VERSIONING rule is the model). A name consumers no longer
need goes private (``_module``) rather than staying exported by habit.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import ihmt_mcp
from ihmt_mcp import Settings, build_server
from ihmt_mcp._server import TOOL_NAMES

EXPORTS = [
    "ContentTooLargeError",
    "CorrectionRecord",
    "EmptyContentError",
    "FileRefusedError",
    "FiledAs",
    "ForgetResult",
    "INLINE_SUMMARIES",
    "IngestReport",
    "MAX_FILE_BYTES",
    "Memory",
    "MemoryServiceError",
    "MemoryStats",
    "PathRefusedError",
    "PortableMemory",
    "ProjectIndex",
    "PulledChanges",
    "PurgeReport",
    "ReplaceOutcome",
    "RestoreResult",
    "SaveResult",
    "SecretRefusedError",
    "SemanticUnavailableError",
    "Settings",
    "Sync",
    "SyncError",
    "SyncInit",
    "SyncReport",
    "SyncStatus",
    "TreeItem",
    "USER_ERRORS",
    "build_server",
    "fill_summaries",
    "fill_vectors",
    "find_secrets",
    "main",
    "plain_message",
    "write_jsonl",
    "write_markdown",
]

TEXT = {"type": "string"}
OPTIONAL_TEXT = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


def _text(default: str) -> dict[str, Any]:
    return {"default": default, "type": "string"}


def _flag() -> dict[str, Any]:
    return {"default": False, "type": "boolean"}


TOOLS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "search_memory": (
        {
            "query": TEXT,
            "clue": OPTIONAL_TEXT,
            "detail": _text("compact"),
            "as_of": OPTIONAL_TEXT,
            "alternatives": {
                "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
                "default": None,
            },
        },
        ["query"],
    ),
    "save_memory": (
        {
            "content": TEXT,
            "domain": _text("general"),
            "content_type": _text("auto"),
            "replaces": _text(""),
        },
        ["content"],
    ),
    "mark_outdated": ({"old_id": TEXT, "new_id": TEXT, "undo": _flag()}, ["old_id", "new_id"]),
    "project_map": (
        {"path": TEXT, "detail": _text("files"), "subpath": _text("")},
        ["path"],
    ),
    "find_code": (
        {
            "query": TEXT,
            "path": TEXT,
            "scope": _text("main"),
            "subpath": _text(""),
            "clue": OPTIONAL_TEXT,
            "max_tokens": {"default": 1500, "type": "integer"},
        },
        ["query", "path"],
    ),
    "read_file": ({"path": TEXT, "force": _flag()}, ["path"]),
    "note": ({"text": TEXT}, ["text"]),
    "recall": ({"query": TEXT, "clue": OPTIONAL_TEXT}, ["query"]),
    "digest_output": ({"text": TEXT, "label": _text("output")}, ["text"]),
    "forget_memory": ({"memory_id": TEXT, "reason": TEXT}, ["memory_id", "reason"]),
}


def test_the_package_exports_exactly_the_reviewed_names() -> None:
    assert sorted(ihmt_mcp.__all__) == EXPORTS
    assert len(set(ihmt_mcp.__all__)) == len(ihmt_mcp.__all__)


def test_every_exported_name_resolves() -> None:
    for name in ihmt_mcp.__all__:
        assert getattr(ihmt_mcp, name) is not None, name
    assert sorted(dir(ihmt_mcp)) == EXPORTS


def test_the_server_offers_exactly_the_reviewed_tools_and_parameters(tmp_path: Path) -> None:
    server = build_server(Settings.for_home(tmp_path / "home", cwd=tmp_path))
    listed = asyncio.run(server.list_tools())
    assert [tool.name for tool in listed] == list(TOOLS) == list(TOOL_NAMES)
    for tool in listed:
        properties, required = TOOLS[tool.name]
        assert tool.input_schema == {
            "properties": properties,
            "required": required,
            "type": "object",
        }, tool.name
        assert list(tool.input_schema["properties"]) == list(properties), tool.name
