"""Atomic file I/O and the text form of leaves and branches."""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ihmt_store._records import Branch, Leaf, latest_date
from ihmt_store.errors import CorruptFileError, StoreIOError

__all__ = [
    "FORMAT1_KEYS",
    "HEADER_END",
    "HEADER_START",
    "MAX_LEAF_BYTES",
    "TEMP_SUFFIX",
    "atomic_write",
    "fsync_dir",
    "leaf_bytes",
    "leaf_bytes_keeping_text",
    "leaf_file_problem",
    "load_leaf",
    "parse_branch",
    "parse_leaf",
    "parse_leaf_lossy",
    "read_leaf_bytes",
    "read_json",
    "is_disk_full",
    "remove_sqlite_files",
    "has_dead_temps",
    "remove_temp_files",
    "replace_temp",
    "within",
    "without_format1_keys",
    "sync_paths",
    "unlink_quietly",
    "write_temp",
]

HEADER_START = "<<<IHMT-META\n"
HEADER_END = "\nIHMT-META>>>\n"
TEMP_SUFFIX = ".ihmt-tmp"
MAX_LEAF_BYTES = 16 * 1024 * 1024
"""The largest leaf file the store reads. ``ingest`` stores a large document a segment at
a time, in leaves far smaller (its longest block is a few million characters); a larger
file was not written by IHMT, and is reported (``rebuild``, ``doctor``) instead of being
read whole into memory at every search."""


def leaf_bytes(leaf: Leaf) -> bytes:
    """Serialise ``leaf``: the JSON header between markers, then the text untouched.

    JSON escapes every newline inside a string, so no header line can equal the end
    marker and the first end marker always closes the header, whatever the text holds.
    """
    head = _pretty(leaf.header())
    return (HEADER_START + head + HEADER_END).encode("utf-8") + leaf.text.encode("utf-8")


def _split_leaf(data: bytes, path: Path) -> tuple[Any, int]:
    """A leaf file's header, parsed as JSON, and where its text starts.

    Raises:
        CorruptFileError: no header, one not closed, or one that is not JSON.
    """
    start = HEADER_START.encode()
    end = HEADER_END.encode()
    if not data.startswith(start):
        raise CorruptFileError("not an IHMT leaf (no <<<IHMT-META header)", path=path)
    stop = data.find(end, len(start) - 1)
    if stop < 0:
        raise CorruptFileError("leaf header is not closed by IHMT-META>>>", path=path)
    try:
        head = json.loads(data[len(start) : stop].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptFileError(f"unreadable leaf header: {exc}", path=path) from None
    return head, stop + len(end)


def parse_leaf(data: bytes, path: Path) -> Leaf:
    """Parse the bytes of a leaf file (a text that is not UTF-8 is decoded with
    replacement characters: :func:`parse_leaf_lossy` says when).

    Raises:
        CorruptFileError: the header is missing, not JSON, or lacks a required key.
    """
    return parse_leaf_lossy(data, path)[0]


def parse_leaf_lossy(data: bytes, path: Path) -> tuple[Leaf, bool]:
    """:func:`parse_leaf`, and whether the text held bytes that are not UTF-8 (written
    outside IHMT): they read as U+FFFD, the header still has to be UTF-8 JSON.

    Raises:
        CorruptFileError: the header is missing, not JSON, or lacks a required key.
    """
    head, body = _split_leaf(data, path)
    lossy = False
    try:
        text = data[body:].decode("utf-8")
    except UnicodeDecodeError:
        text = data[body:].decode("utf-8", "replace")
        lossy = True
    if not isinstance(head, dict):
        raise CorruptFileError("leaf header is not a JSON object", path=path)
    try:
        return Leaf.from_header(head, text), lossy
    except KeyError as exc:
        raise CorruptFileError(f"leaf header lacks {exc}", path=path) from None
    except (TypeError, ValueError) as exc:
        raise CorruptFileError(f"invalid leaf header: {exc}", path=path) from None


def leaf_file_problem(full: Path, root: Path, linked: os.stat_result | None = None) -> str | None:
    """Why the store will not read the leaf file ``full`` (inside ``root``) as it is, from
    its ``stat`` alone: a symbolic link out of the store, not a regular file, or larger
    than :data:`MAX_LEAF_BYTES`; None when it may be read. ``linked``: its ``lstat``,
    when the caller already has it (one system call per file, not two, but for a link).

    Raises:
        OSError: it cannot be examined (FileNotFoundError when it is gone).
    """
    info = os.lstat(full) if linked is None else linked
    if stat.S_ISLNK(info.st_mode):
        if not within(full, root):
            return (
                f"is a symbolic link to {os.path.realpath(full)}, outside the store; IHMT "
                "does not follow it: replace the link with the file itself, or delete it"
            )
        info = os.stat(full)
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file: delete it (or put the leaf's own file back)"
    if info.st_size > MAX_LEAF_BYTES:
        return _too_large(info.st_size)
    return None


def _too_large(size: int) -> str:
    return (
        f"is too large for a memory ({size / 2**20:.1f} MiB; the limit is "
        f"{MAX_LEAF_BYTES // 2**20} MiB) and is not read: move it out of the store and "
        "ingest it with 'ihmt ingest', which stores it in pieces"
    )


def read_leaf_bytes(full: Path, root: Path) -> bytes:
    """The bytes of the leaf file ``full``, never more than :data:`MAX_LEAF_BYTES`.

    Raises:
        CorruptFileError: :func:`leaf_file_problem` names a problem.
        OSError: it cannot be read (FileNotFoundError when it is gone).
    """
    problem = leaf_file_problem(full, root)
    if problem is not None:
        raise CorruptFileError(problem, path=full)
    with open(full, "rb") as handle:
        data = handle.read(MAX_LEAF_BYTES + 1)
    if len(data) > MAX_LEAF_BYTES:  # it grew since
        raise CorruptFileError(_too_large(len(data)), path=full)
    return data


def load_leaf(full: Path, root: Path) -> tuple[Leaf, bytes, bool]:
    """Read and check the leaf file ``full``: the leaf, the file's bytes, and whether its
    text held bytes that are not UTF-8. The one reading of a leaf file by rebuild, search,
    ``doctor`` and a pull, so they agree on which files are memories.

    Raises:
        CorruptFileError: what :func:`read_leaf_bytes` and :func:`parse_leaf` raise; a
            header naming another id than the file's name; a date in the future (the
            rule ``save`` applies, :func:`~ihmt_store._records.check_date`).
        OSError: it cannot be read (FileNotFoundError when it is gone).
    """
    data = read_leaf_bytes(full, root)
    leaf, lossy = parse_leaf_lossy(data, full)
    if leaf.leaf_id != full.stem:
        raise CorruptFileError(
            f"its header names the memory {leaf.leaf_id!r}, not the file's name: rename the "
            f"file to {leaf.leaf_id}.txt if that is right, or delete the copy",
            path=full,
        )
    if leaf.timestamp > latest_date():
        raise CorruptFileError(
            f"its date {leaf.timestamp[:10]} is in the future, which 'save' refuses: set "
            "the header's timestamp to when what it says became true, then run "
            "'ihmt rebuild'",
            path=full,
        )
    return leaf, data, lossy


def leaf_bytes_keeping_text(leaf: Leaf, data: bytes, path: Path) -> bytes:
    """The bytes of the leaf file ``data`` with the header of ``leaf`` and its own text
    bytes, untouched (a text that is not UTF-8 keeps its bytes)."""
    _, body = _split_leaf(data, path)
    return (HEADER_START + _pretty(leaf.header()) + HEADER_END).encode("utf-8") + data[body:]


FORMAT1_KEYS = ("parent_id", "outdated_by")
"""Header keys of format 1 that format 2 keeps out of leaf files."""


def without_format1_keys(data: bytes, path: Path) -> bytes | None:
    """The bytes of a format-1 leaf file with ``parent_id`` and ``outdated_by`` taken
    out of its header (every other key, their order and the text unchanged), or None
    when the header holds neither. The same input always gives the same bytes.

    Raises:
        CorruptFileError: the header cannot be read.
    """
    head, body = _split_leaf(data, path)
    if not isinstance(head, dict) or not any(key in head for key in FORMAT1_KEYS):
        return None
    for key in FORMAT1_KEYS:
        head.pop(key, None)
    return (HEADER_START + _pretty(head) + HEADER_END).encode("utf-8") + data[body:]


_CHECKSUM = re.compile(rb'"checksum":\s*"([^"]*)"')


def stored_checksum(data: bytes) -> str | None:
    """The checksum a leaf file's header carries (None when it has none): it differs
    from the text's own when the text was edited by hand."""
    stop = data.find(HEADER_END.encode())
    found = _CHECKSUM.search(data, 0, stop if stop >= 0 else len(data))
    return found.group(1).decode("ascii", "replace") if found else None


def branch_bytes(branch: Branch) -> bytes:
    """Serialise a branch as indented UTF-8 JSON."""
    return (_pretty(branch.to_json(), list_key="children") + "\n").encode("utf-8")


def parse_branch(data: bytes, path: Path) -> Branch:
    """Parse the bytes of a branch file (raises CorruptFileError)."""
    obj = load_object(data, path)
    try:
        return Branch.from_json(obj)
    except KeyError as exc:
        raise CorruptFileError(f"branch lacks {exc}", path=path) from None
    except (TypeError, ValueError, IndexError) as exc:
        raise CorruptFileError(f"invalid branch: {exc}", path=path) from None


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object from ``path`` (raises CorruptFileError, FileNotFoundError)."""
    return load_object(path.read_bytes(), path)


def load_object(data: bytes, path: Path) -> dict[str, Any]:
    """The JSON object in ``data``, read from ``path`` (raises CorruptFileError)."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptFileError(f"not valid JSON: {exc}", path=path) from None
    if not isinstance(obj, dict):
        raise CorruptFileError("expected a JSON object", path=path)
    return obj


def _pretty(obj: dict[str, Any], *, list_key: str = "") -> str:
    """JSON with one top-level key per line (one element per line for ``list_key``).

    Readable like ``indent=2`` but written by the C encoder, value by value (the
    indenting encoder is pure Python).
    """
    dump = _DUMP

    def value(key: str, item: Any) -> str:
        if key == list_key and isinstance(item, list) and item:
            return "[\n" + ",\n".join("    " + dump(x) for x in item) + "\n  ]"
        return dump(item)

    body = ",\n".join(f"  {dump(key)}: {value(key, item)}" for key, item in obj.items())
    return "{\n" + body + "\n}" if body else "{}"


_DUMP = json.JSONEncoder(ensure_ascii=False).encode


def json_bytes(obj: Any) -> bytes:
    """Indented UTF-8 JSON with a final newline, as every JSON file of the store."""
    return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def write_temp(path: Path, data: bytes, *, durable: bool = False, mkdir: bool = True) -> Path:
    """Write ``data`` to a new temporary sibling of ``path``; return its path.

    Flushed to disk only when ``durable`` (a batch flushes all its files at once). The
    folder is created first unless ``mkdir`` is false (a batch creates its folders once).

    Raises:
        StoreIOError: the disk is full, read-only, or refuses the write.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}")
    try:
        if mkdir:
            path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
    except OSError as exc:
        unlink_quietly(tmp)
        raise StoreIOError(_describe(exc), path=path) from exc
    return tmp


def ensure_dirs(folders: Iterable[Path]) -> None:
    """Create each folder (and its parents) unless it exists.

    Raises:
        StoreIOError: the disk is full, read-only, or refuses it.
    """
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreIOError(_describe(exc), path=folder) from exc


def replace_temp(tmp: Path, path: Path) -> None:
    """Move a temporary file over ``path`` in one atomic rename."""
    try:
        os.replace(tmp, path)
    except OSError as exc:
        unlink_quietly(tmp)
        raise StoreIOError(_describe(exc), path=path) from exc


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never half.

    The bytes go to a temporary sibling, are flushed to disk when ``durable``, and the
    temporary replaces ``path`` in one ``os.replace``.

    Raises:
        StoreIOError: the disk is full, read-only, or refuses the write.
    """
    replace_temp(write_temp(path, data, durable=durable), path)


def unlink_quietly(path: Path) -> None:
    """Delete ``path`` if it can be; a file that stays is someone else's to report."""
    try:
        os.unlink(path)
    except OSError:
        pass


def remove_sqlite_files(db: Path, *, quiet: bool = False) -> None:
    """Delete an SQLite file with its ``-wal`` and ``-shm`` companions.

    Raises:
        OSError: one exists and cannot be deleted (unless ``quiet``).
    """
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db}{suffix}")
        if quiet:
            unlink_quietly(path)
            continue
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _describe(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full; free some space and try again (nothing was changed)"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "the store folder is not writable (permissions or a read-only disk)"
    return exc.strerror or str(exc)


def fsync_dir(path: Path) -> None:
    """Make a rename inside ``path`` durable (a no-op where directories cannot be opened)."""
    if os.name == "posix":
        _fsync(path, strict=False)


def sync_paths(paths: Iterable[Path]) -> None:
    """Flush already written files to disk: one ``os.sync`` for many, fsync for a few."""
    items = list(paths)
    if len(items) > 16 and hasattr(os, "sync"):
        os.sync()
        return
    for item in items:
        _fsync(item, strict=True)


def _fsync(path: Path, *, strict: bool) -> None:
    """Flush ``path`` to disk; skipped when it cannot be opened. A failed flush raises
    when ``strict`` (a file's bytes) and is ignored otherwise (a folder's entry)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        if strict:
            raise
    finally:
        os.close(fd)


def remove_temp_files(folder: Path, *, dead_only: bool = False) -> int:
    """Delete temporary files a dead writer left in ``folder``; return how many.

    Args:
        dead_only: keep a temporary file whose writer (the pid in its name) still runs,
            for callers that do not know every writer of the folder holds the lock.
    """
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if not name.endswith(TEMP_SUFFIX):
            continue
        if dead_only and _writer_alive(name):
            continue
        try:
            os.unlink(folder / name)
            removed += 1
        except OSError:
            pass
    return removed


def has_dead_temps(folder: Path) -> bool:
    """``folder`` holds a temporary file whose writer is gone."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(n.endswith(TEMP_SUFFIX) and not _writer_alive(n) for n in names)


def _writer_alive(name: str) -> bool:
    """Whether the process named in a temporary file's name (``.x.<pid>-<hex>.ihmt-tmp``)
    still runs; unparseable names count as dead."""
    try:
        pid = int(name[: -len(TEMP_SUFFIX)].rsplit(".", 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, under another user
    return True


def within(path: Path, root: Path) -> bool:
    """True when ``path``, with every symbolic link resolved, lies inside ``root``."""
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def is_disk_full(exc: BaseException) -> bool:
    """Whether an OS or SQLite error says the disk (or the quota) is full."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    code = getattr(exc, "sqlite_errorcode", None)
    return code == 13 or "disk is full" in str(exc)  # 13: SQLITE_FULL
