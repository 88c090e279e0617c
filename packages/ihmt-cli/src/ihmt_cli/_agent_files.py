"""The agents' files, read and written safely: JSON and JSON-with-comments read as data
(a file that does not parse is refused before anything changes), JSON written the one way
install writes it, atomic writes, and the ``<file>.bak-ihmt`` copy of an original.

A write goes through a symbolic link to the file it points at (a config kept in a
dotfiles repository stays a link) and keeps the file's mode and owner: a private file
(``~/.claude.json`` holds the user's login) stays private. A file nobody may write
(no owner write bit) is read-only on purpose (a managed config) and is refused, by name,
before anything changes.

Before its first change a file is copied once to ``<file>.bak-ihmt`` (later runs never
overwrite that copy of the original); an uninstall names those copies and never makes one,
and gives the original's exact bytes back when what it leaves holds the same data.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
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
    "write_bytes",
    "refuse_read_only",
    # backups
    "Kept",
    "backup",
    "backup_of",
    "same_content",
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
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise click.ClickException(
            f"{path} is not UTF-8 text; fix it first, nothing was changed"
        ) from None
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
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    """Replace the file ``path`` names (through symbolic links) with ``data`` atomically,
    keeping its mode and owner; a new file gets the umask's mode.

    Raises:
        click.ClickException: it cannot be written; the message names it.
    """
    target = Path(os.path.realpath(path))
    tmp = target.with_name(f".{target.name}.ihmt-tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            old: os.stat_result | None = os.stat(target)
        except FileNotFoundError:
            old = None
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o600 if old is not None else 0o666)
        try:
            with os.fdopen(fd, "wb") as file:
                if old is not None:
                    _keep_owner(file.fileno(), old)
                    os.fchmod(file.fileno(), stat.S_IMODE(old.st_mode))
                file.write(data)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror or exc}") from None


def _keep_owner(fd: int, old: os.stat_result) -> None:
    """The new file's owner and group are the old one's (only root may give a file away)."""
    if not hasattr(os, "fchown"):
        return
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except OSError:
        pass  # not root: the file is ours already, only its group may differ


def refuse_read_only(paths: list[Path]) -> None:
    """Refuse, before anything changes, when one of ``paths`` is a read-only file.

    A file without its owner's write bit (0444, 0400) was made read-only on purpose:
    a config managed by another tool, or one the user froze. Writing it anyway (the
    directory allows it) would undo that decision silently; the user decides.

    Raises:
        click.ClickException: names the file and what to do.
    """
    for path in dict.fromkeys(paths):
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IWUSR:
            raise click.ClickException(
                f"{path} is read-only (mode {stat.S_IMODE(info.st_mode):04o}); make it "
                f"writable (chmod u+w) and run this again, or make the change by hand "
                "(--dry-run prints it); nothing was changed"
            )


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
        _copy_private(path, target)
    if target.exists() and str(target) not in backups:
        backups.append(str(target))


def _copy_private(path: Path, target: Path) -> None:
    """``path``'s bytes and mode (through links) in a new ``target``, never readable by
    more people than the original, even for a moment."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        data = Path(path).read_bytes()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as file:
            os.fchmod(file.fileno(), mode | stat.S_IRUSR | stat.S_IWUSR)
            file.write(data)
    except OSError as exc:
        raise click.ClickException(
            f"cannot back {path} up to {target}: {exc.strerror or exc}"
        ) from None


def same_content(path: Path, original: bytes, now: bytes) -> bool:
    """Whether ``now`` holds what ``original`` held, so that the original's bytes can be
    given back: the same bytes; JSON (with comments) with the same data and comments,
    empty objects and lists aside (an uninstall drops them; a file install created out
    of an empty one holds only its ``$schema``); TOML with the same data and comments,
    empty tables aside (``mcp_servers = { }`` emptied by an uninstall goes)."""
    if original == now:
        return True
    try:
        before, after = original.decode("utf-8"), now.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if path.suffix in (".json", ".jsonc"):
        try:
            old, new = _json_or_empty(before), _json_or_empty(after)
        except ValueError:
            return False
        if not before.strip() and isinstance(new, dict) and is_trivial(new):
            return True
        same = _without_empty(old) == _without_empty(new)
        return same and _comments(before, "//", "/*", "*") == _comments(after, "//", "/*", "*")
    if path.suffix == ".toml":
        try:
            same = _without_empty(tomllib.loads(before)) == _without_empty(tomllib.loads(after))
        except tomllib.TOMLDecodeError:
            return False
        return same and _comments(before, "#") == _comments(after, "#")
    return False


def _json_or_empty(text: str) -> Any:
    """The data of a JSON text, with comments too; {} for an empty one."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        import json5

        try:
            return json5.loads(text)
        except Exception as exc:  # noqa: BLE001 — json-five raises several unrelated types
            raise ValueError(str(exc)) from None


def _without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in ({}, [])}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


def _comments(text: str, *marks: str) -> list[str]:
    """The lines that begin with a comment, in order (how a file's comments are compared)."""
    return [line.strip() for line in text.splitlines() if line.strip().startswith(marks)]
