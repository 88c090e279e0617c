"""The recall hooks in a JSON hooks file, the shape Claude Code (settings.json) and Codex
(hooks.json) share: ``{"hooks": {EVENT: [{"hooks": [{"type": "command", …}]}]}}``.

Install adds one group per event running ``ihmt hook``; uninstall drops exactly the
handlers that run it, keeping the user's own.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import click

from ihmt_cli._agent_files import backup_of, is_trivial, json_text, read_json
from ihmt_cli._agent_plan import Step, file_step
from ihmt_cli._agent_setup import HOOK_EVENTS, OUR_HOOK, AgentPaths, ServerSpec

__all__ = ["HOOK_TIMEOUT", "JsonHooks", "json_hooks_steps", "read_json_hooks"]

HOOK_TIMEOUT = 10
"""Seconds an agent waits for the hook before it goes on without it."""


def read_json_hooks(paths: AgentPaths) -> dict[str, bool]:
    """Which of our hook events are registered in the agent's hooks file (by event name)."""
    hooks = read_json(paths.hooks).get("hooks")
    out = {}
    for event, _ in HOOK_EVENTS:
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        out[event] = any(_is_ours(h) for g in _groups(groups) for h in _handlers(g))
    return out


def _groups(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _handlers(group: Any) -> list[Any]:
    return _groups(group.get("hooks")) if isinstance(group, dict) else []


def _is_ours(handler: Any) -> bool:
    command = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(command, str) and OUR_HOOK.search(command) is not None


def _hook_group(paths: AgentPaths, spec: ServerSpec, event: str) -> dict[str, Any]:
    handler: dict[str, Any] = {
        "type": "command",
        "command": shlex.join(spec.hook_argv(paths.agent, event)),
        "timeout": HOOK_TIMEOUT,
    }
    return {"hooks": [handler]}


def _hooks_data(data: dict[str, Any], paths: AgentPaths, spec: ServerSpec | None) -> None:
    """Drop our handlers from ``data["hooks"]``, then (``spec``) add the current ones."""
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise click.ClickException(f'"hooks" in {paths.hooks} is not an object; fix it first')
    hooks = dict(hooks or {})
    for event, ours in HOOK_EVENTS:
        groups = []
        for group in _groups(hooks.get(event)):
            if not isinstance(group, dict):
                groups.append(group)
                continue
            kept = [h for h in _handlers(group) if not _is_ours(h)]
            if kept or not _handlers(group):
                groups.append({**group, "hooks": kept} if kept != _handlers(group) else group)
        if spec is not None and (spec.capture or ours != "stop"):
            groups.append(_hook_group(paths, spec, ours))
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if hooks:
        data["hooks"] = hooks
    else:
        data.pop("hooks", None)


def json_hooks_steps(
    paths: AgentPaths,
    spec: ServerSpec | None,
    *,
    backups: list[str],
    unchanged: list[str],
) -> list[Step]:
    """Register (``spec``) or remove (None) the recall hooks; nothing when already so."""
    path = paths.hooks
    data = read_json(path)
    before = json.dumps(data, sort_keys=True)
    _hooks_data(data, paths, spec)
    if json.dumps(data, sort_keys=True) == before:
        unchanged.append(
            f"the recall hooks are already in {path}"
            if spec is not None
            else f"no recall hooks in {path}"
        )
        return []
    created = not backup_of(path).exists()
    text: str | None = json_text(data)
    if spec is None:
        summary = f"remove the recall hooks (SessionStart, UserPromptSubmit) from {path}"
        if created and is_trivial(data):
            text = None
            summary += " (it holds nothing else: delete the file)"
        preview = f"# {path}: delete the handlers running 'ihmt hook'"
    else:
        fragment: dict[str, Any] = {}
        _hooks_data(fragment, paths, spec)
        summary = f"add the recall hooks (SessionStart, UserPromptSubmit) to {path}"
        preview = f"# {path}: add\n{json_text(fragment)}"
    return [file_step(path, text, summary=summary, preview=preview, backups=backups)]


class JsonHooks:
    """The hook methods of an :class:`~ihmt_cli._agent_setup.AgentSetup` whose agent keeps
    its hooks in a JSON ``hooks`` file (Claude Code's settings, Codex's hooks.json)."""

    def read_hooks(self, paths: AgentPaths) -> dict[str, bool]:
        return read_json_hooks(paths)

    def hooks_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec | None,
        *,
        backups: list[str],
        unchanged: list[str],
    ) -> list[Step]:
        return json_hooks_steps(paths, spec, backups=backups, unchanged=unchanged)
