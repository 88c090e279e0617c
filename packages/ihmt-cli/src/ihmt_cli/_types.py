"""The closed sets of values of ``ihmt``, as types (the strings themselves never change:
they are what the options accept and what files and --json hold)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "AGENTS",
    "CONTENT_TYPES",
    "SCOPES",
    "Agent",
    "ApiErrorCode",
    "Backend",
    "ContentType",
    "ExportFormat",
    "Scope",
    "StepAction",
]

Agent = Literal[
    "claude-code",
    "codex",
    "opencode",
    "gemini-cli",
    "copilot",
    "cursor",
    "windsurf",
    "claude-desktop",
    "vscode",
]
"""The agents and editors ``ihmt install`` sets up (``ihmt hook`` answers those with hooks)."""
AGENTS: tuple[Agent, ...] = get_args(Agent)

Scope = Literal["user", "project"]
"""Where an agent's configuration is changed: for every project of the user, or one."""
SCOPES: tuple[Scope, ...] = ("user", "project")

ContentType = Literal["auto", "generic", "personal", "temporal", "process", "narrative", "code"]
"""How a text is split into memories (``auto`` reads its content)."""
CONTENT_TYPES: tuple[ContentType, ...] = (
    "auto",
    "generic",
    "personal",
    "temporal",
    "process",
    "narrative",
    "code",
)

Backend = Literal["heuristic", "anthropic"]
"""The summarizer ``ihmt init --backend`` chooses."""

ExportFormat = Literal["jsonl", "markdown"]
"""What ``ihmt export --format`` writes."""

StepAction = Literal["run", "write"]
"""What one step of an install plan does: run an agent's CLI, or write a file."""

ApiErrorCode = Literal[
    "bad_request", "no_store", "bad_id", "confirm", "not_found", "not_outdated", "too_large"
]
"""The ``code`` of a refusal of the web interface's API (and ``refused`` for an error the
memory raised)."""
