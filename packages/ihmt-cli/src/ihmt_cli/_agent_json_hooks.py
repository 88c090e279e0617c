"""The recall hooks in a JSON hooks file, the shape Claude Code (settings.json), Codex
(hooks.json) and Gemini CLI (settings.json, with its own event names, a timeout in
milliseconds and comments) share: ``{"hooks": {EVENT: [{"hooks": [{"type": "command",
…}]}]}}``.

Install adds one group per event running ``ihmt hook``; uninstall drops exactly the
handlers that run it, keeping the user's own (and, in a file with comments, the comments).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_files import backup_of, is_trivial, json_text, read_json, read_jsonc
from ihmt_cli._agent_jsonc import UnsafeEditError, jsonc_update
from ihmt_cli._agent_plan import Step, edit_step
from ihmt_cli._agent_setup import HOOK_EVENTS, OUR_HOOK, AgentPaths, ServerSpec

__all__ = ["HOOK_TIMEOUT", "JsonHooks", "json_hooks_steps", "read_json_hooks"]

HOOK_TIMEOUT = 10
"""Seconds an agent waits for the hook before it goes on without it."""

Events = tuple[tuple[str, str], ...]
"""The agent's event names and the ``ihmt hook`` event each one runs."""


def read_json_hooks(
    paths: AgentPaths, *, events: Events = HOOK_EVENTS, jsonc: bool = False
) -> dict[str, bool]:
    """Which of our hook events are registered in the agent's hooks file (by event name)."""
    hooks = (read_jsonc if jsonc else read_json)(paths.hooks).get("hooks")
    out = {}
    for event, _ in events:
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


def _hook_group(paths: AgentPaths, spec: ServerSpec, event: str, timeout: int) -> dict[str, Any]:
    handler: dict[str, Any] = {
        "type": "command",
        "command": shlex.join(spec.hook_argv(paths.agent, event)),
        "timeout": timeout,
    }
    return {"hooks": [handler]}


def _hooks_data(
    data: dict[str, Any],
    paths: AgentPaths,
    spec: ServerSpec | None,
    *,
    events: Events = HOOK_EVENTS,
    timeout: int = HOOK_TIMEOUT,
) -> None:
    """Drop our handlers from ``data["hooks"]``, then (``spec``) add the current ones."""
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise click.ClickException(f'"hooks" in {paths.hooks} is not an object; fix it first')
    hooks = dict(hooks or {})
    for event, ours in events:
        if hooks.get(event) is not None and not isinstance(hooks[event], list):
            raise click.ClickException(
                f'"hooks" → "{event}" in {paths.hooks} is not a list; fix it first, '
                "nothing was changed"
            )
        groups = []
        for group in _groups(hooks.get(event)):
            if not isinstance(group, dict):
                groups.append(group)
                continue
            kept = [h for h in _handlers(group) if not _is_ours(h)]
            if kept or not _handlers(group):
                groups.append({**group, "hooks": kept} if kept != _handlers(group) else group)
        if spec is not None and (spec.capture or ours != "stop"):
            groups.append(_hook_group(paths, spec, ours, timeout))
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
    events: Events = HOOK_EVENTS,
    timeout: int = HOOK_TIMEOUT,
    jsonc: bool = False,
) -> list[Step]:
    """Register (``spec``) or remove (None) the recall hooks; nothing when already so.

    The file is read again when the step runs (an earlier step may have changed it);
    ``jsonc``: it may hold comments, and only the hooks are spliced into its text."""
    path = paths.hooks
    read = read_jsonc if jsonc else read_json
    data = read(path)
    before = json.dumps(data, sort_keys=True)
    _hooks_data(data, paths, spec, events=events, timeout=timeout)
    if json.dumps(data, sort_keys=True) == before:
        unchanged.append(
            f"the recall hooks are already in {path}"
            if spec is not None
            else f"no recall hooks in {path}"
        )
        return []
    created = not backup_of(path).exists()
    names = ", ".join(event for event, _ in events)

    def edit() -> str | None:
        now = read(path)
        _hooks_data(now, paths, spec, events=events, timeout=timeout)
        if spec is None and created and is_trivial(now):
            return None
        if not jsonc:
            return json_text(now)
        return jsonc_update(path.read_text("utf-8") if path.exists() else "", now)

    if spec is None:
        summary = f"remove the recall hooks ({names}) from {path}"
        if created and is_trivial(data):
            summary += " (it holds nothing else: delete the file)"
        preview = f"# {path}: delete the handlers running 'ihmt hook'"
    else:
        fragment: dict[str, Any] = {}
        _hooks_data(fragment, paths, spec, events=events, timeout=timeout)
        summary = f"add the recall hooks ({names}) to {path}"
        preview = f"# {path}: add\n{json_text(fragment)}"
    if jsonc:
        _check_splice(path, data)
    return [edit_step(path, edit, summary=summary, preview=preview, backups=backups)]


def _check_splice(path: Path, data: dict[str, Any]) -> None:
    """Refuse now, before anything changes, hooks that cannot be spliced into the file."""
    try:
        jsonc_update(path.read_text("utf-8") if path.exists() else "", data)
    except UnsafeEditError as exc:
        raise UnsafeEditError(
            f"cannot edit the hooks in {path} safely ({exc.message}); nothing was changed: "
            "make the change by hand (--dry-run prints it)"
        ) from None


class JsonHooks:
    """The hook methods of an :class:`~ihmt_cli._agent_setup.AgentSetup` whose agent keeps
    its hooks in a JSON ``hooks`` file (Claude Code's settings, Codex's hooks.json,
    Gemini CLI's settings.json)."""

    hook_events: Events = HOOK_EVENTS
    hook_timeout: int = HOOK_TIMEOUT
    """In the agent's unit (seconds; Gemini CLI counts milliseconds)."""
    hooks_jsonc: bool = False
    """The hooks file may hold comments: splice, never rewrite."""

    def read_hooks(self, paths: AgentPaths) -> dict[str, bool]:
        return read_json_hooks(paths, events=self.hook_events, jsonc=self.hooks_jsonc)

    def hooks_steps(
        self,
        paths: AgentPaths,
        spec: ServerSpec | None,
        *,
        backups: list[str],
        unchanged: list[str],
    ) -> list[Step]:
        return json_hooks_steps(
            paths,
            spec,
            backups=backups,
            unchanged=unchanged,
            events=self.hook_events,
            timeout=self.hook_timeout,
            jsonc=self.hooks_jsonc,
        )
