"""The agents' files, read and written safely: JSON and JSON-with-comments read as data
(a file that does not parse is refused before anything changes), JSON written the one way
install writes it, atomic writes, and the ``<file>.bak-ihmt`` copy of an original.

Before its first change a file is copied once to ``<file>.bak-ihmt`` (later runs never
overwrite that copy of the original); an uninstall names those copies and never makes one.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from ihmt_cli._agent_setup import BEGIN_MARKER, OUR_HOOK, PLUGIN_MARKER, SERVER_NAME

__all__ = [
    "BACKUP_SUFFIX",
    # reading
    "read_json",
    "read_jsonc",
    # writing
    "is_trivial",
    "json_text",
    "write_text",
    # backups
    "Kept",
    "backup",
    "backup_of",
]

BACKUP_SUFFIX = ".bak-ihmt"


# ---------------------------------------------------------------------- reading config files
def read_jsonc(path: Path) -> dict[str, Any]:
    """A JSON-with-comments file (comments, trailing commas) as data; {} when absent."""
    import json5

    def parse(text: str) -> Any:
        try:
            return json5.loads(text)
        except Exception as exc:  # noqa: BLE001 — json-five raises several unrelated types
            raise click.ClickException(
                f"{path} is not valid JSON with comments ({exc}); fix it first, nothing was changed"
            ) from None

    return _read_object(path, parse)


def read_json(path: Path) -> dict[str, Any]:
    """A JSON file as data; {} when absent."""

    def parse(text: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise click.ClickException(
                f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it first, "
                "nothing was changed"
            ) from None

    return _read_object(path, parse)


def _read_object(path: Path, parse: Callable[[str], Any]) -> dict[str, Any]:
    """``parse`` of the file's text, which must be an object; {} when absent or empty."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    data = parse(text)
    if not isinstance(data, dict):
        raise click.ClickException(f"{path} does not hold a JSON object; nothing was changed")
    return data


# ---------------------------------------------------------------------- writing
def json_text(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def is_trivial(data: Mapping[str, Any]) -> bool:
    """Nothing but what an install adds to a new file: no reason to keep the file."""
    return not {k: v for k, v in data.items() if k != "$schema" and v not in ({}, [])}


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.ihmt-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------------- backups
def backup_of(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


class Kept(list[str]):
    """The backups of an uninstall: it names the originals' copies and never makes one
    (what it would copy is what install wrote, not the original)."""


def _holds_ours(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    marks = (SERVER_NAME, BEGIN_MARKER, PLUGIN_MARKER)
    return any(mark in text for mark in marks) or OUR_HOOK.search(text) is not None


def backup(path: Path, backups: list[str]) -> None:
    """Copy ``path`` to its backup unless a backup (of the original) is already there.

    A file that already holds something of ours is not an original: an earlier install
    created it (there was nothing to keep) or backed it up then."""
    target = backup_of(path)
    if (
        path.exists()
        and not target.exists()
        and not isinstance(backups, Kept)
        and not _holds_ours(path)
    ):
        shutil.copy2(path, target)
    if target.exists() and str(target) not in backups:
        backups.append(str(target))
