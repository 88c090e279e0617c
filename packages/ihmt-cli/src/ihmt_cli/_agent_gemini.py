"""Gemini CLI's setup: the server in ``settings.json`` (``$GEMINI_CLI_HOME/.gemini``, else
``~/.gemini``; a project's ``.gemini/``) under ``mcpServers``, and the recall hooks in the
same file (``SessionStart`` and ``BeforeAgent``, whose ``hookSpecificOutput.
additionalContext`` Gemini CLI adds to the turn, timeouts in milliseconds), both spliced
into the text so that the user's comments stay (Gemini CLI reads the file with comments);
the instructions in GEMINI.md.

The capture hook (``ihmt hook stop``, left out by ``--no-capture``) runs on ``AfterAgent``
(a turn ends) and ``SessionEnd`` (the session ends, a turn cut short included), whose
input names the session's chat file (``transcript_path``, read by
:mod:`ihmt_cli._transcript_formats`). Not on ``PreCompress``: Gemini CLI 0.61 runs it
before every turn, and a compression keeps the chat file's earlier records.

Gemini CLI connects to MCP servers and runs hooks only in a folder it trusts (folder trust
is on by default): ``ihmt doctor`` reads its trust rules for the folder it runs in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import click

from ihmt_cli._agent_files import read_jsonc
from ihmt_cli._agent_json_hooks import HOOK_TIMEOUT, JsonHooks
from ihmt_cli._agent_mcp_json import McpJsonSetup
from ihmt_cli._agent_setup import AgentPaths
from ihmt_cli._types import Agent, Scope

__all__ = ["GEMINI_CLI", "GeminiSetup", "gemini_folder_trust"]


class GeminiSetup(JsonHooks, McpJsonSetup):
    """:class:`~ihmt_cli._agent_setup.AgentSetup` for Gemini CLI."""

    agent: Agent = "gemini-cli"
    name = "Gemini CLI"
    restart = "Start a new Gemini CLI session (gemini) so the memory tools load."
    trust_hint = "start gemini in this folder and trust it, or /permissions"
    comments = True
    hook_events = (
        ("SessionStart", "session-start"),
        ("BeforeAgent", "prompt"),
        ("AfterAgent", "stop"),
        ("SessionEnd", "stop"),
    )
    hook_timeout = HOOK_TIMEOUT * 1000
    hooks_jsonc = True

    def paths(
        self, scope: Scope, *, home: Path, project: Path, environ: Mapping[str, str]
    ) -> AgentPaths:
        base = Path(environ["GEMINI_CLI_HOME"]) if environ.get("GEMINI_CLI_HOME") else home
        folder = base / ".gemini" if scope == "user" else project / ".gemini"
        instructions = folder / "GEMINI.md" if scope == "user" else project / "GEMINI.md"
        settings = folder / "settings.json"
        return AgentPaths(
            agent=self.agent,
            scope=scope,
            config=settings,
            instructions=instructions,
            cli="gemini",
            hooks=settings,
        )

    def notes(self, paths: AgentPaths, *, hooks: bool) -> list[str]:
        return [
            "Gemini CLI connects to MCP servers and runs hooks only in folders you trust: "
            "trust each project when gemini asks (or /permissions); 'ihmt doctor' says "
            "whether the current folder is trusted."
        ]

    def hook_trust(self, paths: AgentPaths, *, cwd: Path) -> bool | None:
        return gemini_folder_trust(cwd, environ=os.environ, home=Path.home())


GEMINI_CLI = GeminiSetup()


def gemini_folder_trust(cwd: Path, *, environ: Mapping[str, str], home: Path) -> bool | None:
    """Whether Gemini CLI trusts ``cwd`` (and so connects to its servers and runs its
    hooks); None when folder trust is off, so every folder is trusted.

    The rules Gemini CLI itself applies: ``GEMINI_CLI_TRUST_WORKSPACE``, else
    ``security.folderTrust.enabled`` in the user's settings (on by default), else the
    longest rule of ``trustedFolders.json`` that holds ``cwd`` (``TRUST_PARENT`` trusts
    the folder's parent); a folder no rule holds is not trusted yet.
    """
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return False
    base = Path(environ["GEMINI_CLI_HOME"]) if environ.get("GEMINI_CLI_HOME") else home
    try:
        settings = read_jsonc(base / ".gemini" / "settings.json")
        custom = environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        rules = read_jsonc(Path(custom) if custom else base / ".gemini" / "trustedFolders.json")
    except click.ClickException:  # a file Gemini CLI would refuse too: doctor cannot tell
        return None
    security = settings.get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return None
    here = _real(cwd)
    best, verdict = -1, False
    for rule, level in rules.items():
        folder = _real(Path(rule).parent if level == "TRUST_PARENT" else Path(rule))
        if (here == folder or folder in here.parents) and len(rule) > best:
            best, verdict = len(rule), level in ("TRUST_FOLDER", "TRUST_PARENT")
    return verdict


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path
