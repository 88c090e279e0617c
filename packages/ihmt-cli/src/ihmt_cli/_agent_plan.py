"""What ``ihmt install`` / ``uninstall`` does, as data: a :class:`Plan` of :class:`Step` s
— run the agent's own CLI, or write one file — that ``--dry-run`` prints and a real run
applies in order. Once an uninstall ran, a file that holds its original's data again
gets the original's exact bytes back, and the backup goes.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_files import (
    backup,
    backup_of,
    refuse_read_only,
    same_content,
    write_bytes,
    write_text,
)
from ihmt_cli._agent_setup import SERVER_NAME
from ihmt_cli._types import Agent, Scope, StepAction

__all__ = [
    "Plan",
    "Step",
    "cli_register_steps",
    "edit_step",
    "file_step",
    "own_file_steps",
    "run_step",
]

CLI_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One change: run a command, or write a file."""

    action: StepAction
    summary: str
    """One line saying what it does, for the report."""
    preview: str
    """The exact command, or the JSON/TOML/Markdown it writes: what ``--dry-run`` prints."""
    path: Path | None = None
    """The file it changes (backed up first), if any."""
    apply: Callable[[], None] = field(repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "summary": self.summary,
            "preview": self.preview,
            "path": str(self.path) if self.path else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What ``ihmt install``/``uninstall`` does for one agent, in order."""

    agent: Agent
    scope: Scope
    ihmt_home: str | None
    steps: tuple[Step, ...]
    unchanged: tuple[str, ...]
    """What already was as it should be."""
    backups: list[str] = field(default_factory=list)
    """The copies of the originals (made now or by an earlier run)."""
    notes: tuple[str, ...] = ()
    """What the user must know or do: trust the hooks, what is approved, what not to commit."""
    tidy: tuple[Path, ...] = ()
    """Files given their original's bytes back once the plan ran, when they hold the same
    data (:func:`~ihmt_cli._agent_files.same_content`); their backup then goes."""
    dropped: list[str] = field(default_factory=list)
    """The backups removed because the file is back to its original."""

    def check(self) -> None:
        """Refuse, before anything changes, a plan that would write a read-only file."""
        refuse_read_only([step.path for step in self.steps if step.path is not None])

    def run(self) -> None:
        self.check()
        for step in self.steps:
            step.apply()
        for path in dict.fromkeys(self.tidy):
            copy = backup_of(path)
            if not (copy.is_file() and path.is_file()):
                continue
            original, now = copy.read_bytes(), path.read_bytes()
            if not same_content(path, original, now):
                continue
            if now != original:
                write_bytes(path, original)
            copy.unlink()
            self.dropped.append(str(copy))
            if str(copy) in self.backups:
                self.backups.remove(str(copy))


def file_step(
    path: Path, text: str | None, *, summary: str, preview: str, backups: list[str]
) -> Step:
    """Write ``text`` to ``path`` (None: delete it), backing the old file up first."""
    return edit_step(path, lambda: text, summary=summary, preview=preview, backups=backups)


def edit_step(
    path: Path,
    edit: Callable[[], str | None],
    *,
    summary: str,
    preview: str,
    backups: list[str],
) -> Step:
    """Write what ``edit()`` returns when the step runs (None: delete the file), backing
    the old file up first: for a file that an earlier step of the same plan changes too
    (Gemini CLI keeps its servers and its hooks in one settings.json)."""

    def apply() -> None:
        backup(path, backups)
        text = edit()
        if text is None:
            path.unlink(missing_ok=True)
        else:
            write_text(path, text)

    return Step(action="write", summary=summary, preview=preview, path=path, apply=apply)


def own_file_steps(
    path: Path, text: str | None, *, ours: bool, what: str, added: str, unchanged: list[str]
) -> list[Step]:
    """Write ``text`` to ``path``, a file that holds nothing but ours (opencode's plugin,
    Copilot CLI's hooks file), or delete it (None), with the folder install made for it
    when that is left empty; nothing when already so (said in ``unchanged``).

    Args:
        ours: the file there now is ours (it carries our mark).
        what: what the file is, for the messages ("memory plugin").
        added: the summary of writing it.

    Raises:
        click.ClickException: a file that is not ours is in the way.
    """
    if text is None:
        if not ours:
            unchanged.append(f"no {what} at {path}")
            return []

        def delete() -> None:
            path.unlink(missing_ok=True)
            if path.parent.is_dir() and not any(path.parent.iterdir()):
                path.parent.rmdir()  # the folder install made for it

        summary = f"delete the {what} {path}"
        return [
            Step(
                action="write", summary=summary, preview=f"# delete {path}", path=path, apply=delete
            )
        ]
    if ours and path.read_text("utf-8") == text:
        unchanged.append(f"the {what} is already at {path}")
        return []
    if path.exists() and not ours:
        raise click.ClickException(f"{path} exists and is not ours; move it away first")
    return [file_step(path, text, summary=added, preview=f"# {path}\n{text}", backups=[])]


def run_step(argv: list[str], *, backs_up: Path, summary: str, backups: list[str] | None) -> Step:
    """Run an agent's CLI; ``backups`` None: an earlier step already backed the file up."""

    def apply() -> None:
        if backups is not None:
            backup(backs_up, backups)
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise click.ClickException(f"could not run {shlex.join(argv)}: {exc}") from None
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise click.ClickException(
                f"{shlex.join(argv)} failed (exit {done.returncode}): "
                f"{said[-1] if said else 'no output'}"
            )

    return Step(action="run", summary=summary, preview=shlex.join(argv), path=backs_up, apply=apply)


def cli_register_steps(
    config: Path,
    *,
    remove: list[str],
    add: list[str],
    entry: Mapping[str, Any] | None,
    name: str,
    registered_as: str,
    backups: list[str],
) -> list[Step]:
    """Register through the agent's own CLI: remove the old registration when there is
    one, then add ours (the first step that runs backs the ``config`` file up)."""
    steps: list[Step] = []
    if entry is not None:
        steps.append(
            run_step(
                remove,
                backs_up=config,
                summary=f"remove the old {SERVER_NAME} registration from {name}",
                backups=backups,
            )
        )
    steps.append(
        run_step(
            add,
            backs_up=config,
            summary=f"register {SERVER_NAME} with {registered_as} (its own CLI)",
            backups=None if steps else backups,
        )
    )
    return steps
