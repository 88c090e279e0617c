"""Walking a folder the way a developer sees it, and never further than a developer would.

Left out: VCS, virtualenv, cache and build folders; whatever ``.gitignore`` ignores
(``pathspec``'s implementation of git's rules); credential folders (``.ssh``, ``.aws``,
``.gnupg`` …) and files that by name hold keys (``id_rsa``, ``*.pem``, ``.env`` …);
links that lead out of the folder; and anything that is not a regular file (a named
pipe would block the reader forever, a device never ends).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ihmt_mcp.errors import FileRefusedError, PathRefusedError

if TYPE_CHECKING:
    import pathspec

logger = logging.getLogger(__name__)

__all__ = [
    "SECRET_DIRS",
    "confine_project",
    "refuse_unsafe_root",
    "SKIP_DIRS",
    "GitIgnore",
    "LINK_OUT",
    "is_secret_file_name",
    "leads_out",
    "open_regular",
    "read_regular",
    "special_kind",
    "walk_files",
]

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".env", "env", "node_modules",
        "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
        ".idea", ".vscode", ".eggs", "build", "dist", "target", ".gradle", ".next",
        "site-packages", ".cache", ".ihmt", ".obsidian", ".trash",
    }
)  # fmt: skip
SECRET_DIRS = frozenset(
    {
        ".ssh", ".aws", ".gnupg", ".gpg", ".azure", ".kube", ".docker", ".password-store",
        ".pki", ".gcloud", ".config", ".local", ".mozilla", ".thunderbird", ".terraform.d",
        ".vault-token", ".secrets",
    }
)  # fmt: skip
"""Folders that hold credentials: never walked into, whatever the .gitignore says."""
SKIP_FILES = frozenset(
    {"uv.lock", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "poetry.lock"}
)
SKIP_SUFFIXES = (".pyc", ".pyo", ".so", ".dll", ".dylib", ".class", ".jar", ".o", ".a", ".min.js")
_SECRET_NAMES = frozenset(
    {
        "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
        ".netrc", "_netrc", ".pgpass", ".git-credentials", ".pypirc", ".npmrc", ".htpasswd",
        ".my.cnf", "credentials", "credentials.json", "service-account.json", ".env",
        "known_hosts", "authorized_keys", ".bash_history", ".zsh_history", ".python_history",
        ".psql_history", ".mysql_history", ".vault-token",
    }
)  # fmt: skip
_SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".gpg", ".asc")


def is_secret_file_name(name: str) -> bool:
    """True for a file whose name says it holds keys or credentials (``id_rsa``, ``.env.prod``)."""
    lower = name.lower()
    return (
        lower in _SECRET_NAMES
        or lower.startswith(".env.")
        or lower.endswith(_SECRET_SUFFIXES)
        or (lower.startswith("id_") and not lower.endswith(".pub") and "." not in lower)
    )


def special_kind(mode: int) -> str:
    """What a file that is not a regular file is, from its ``st_mode``."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


_SYSTEM_TREES = tuple(
    Path(p)
    for p in (
        "/etc", "/proc", "/sys", "/dev", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
        "/usr", "/run", "/System", "/Library", "/private/etc",
    )
)  # fmt: skip
"""System folders: neither they nor anything inside them is a project."""
_NOT_PROJECTS = frozenset(
    Path(p) for p in ("/", "/home", "/Users", "/var", "/tmp", "/opt", "/srv", "/mnt", "/media")
)
"""Folders that hold projects but are none: refused themselves, their subfolders allowed."""


def refuse_unsafe_root(root: Path, *, home: Path | None = None) -> None:
    """Raise :class:`FileRefusedError` unless ``root`` (resolved) may be indexed as a project.

    Never the home folder itself or one above it, ``/``, a system folder or anything
    inside one, nor a credential folder such as ``~/.ssh``.
    """
    home = (home or Path.home()).resolve()
    if root == home or root in home.parents:
        raise FileRefusedError(root, "it is your home folder, not a project; give a project folder")
    if root in _NOT_PROJECTS or any(root == t or t in root.parents for t in _SYSTEM_TREES):
        raise FileRefusedError(root, "it is a system folder, not a project; give a project folder")
    if any(part.lower() in SECRET_DIRS for part in root.parts):
        raise FileRefusedError(root, "it holds credentials, not code; give a project folder")


def confine_project(path: str, roots: tuple[Path, ...], *, home: Path | None = None) -> Path:
    """The project folder ``path`` names, if code tools may index it.

    The same rules as ``read_file``: a relative path resolves against the first root,
    links are resolved first, and the result must be a root or lie inside one. Then
    :func:`refuse_unsafe_root` applies.

    Raises:
        PathRefusedError: outside every root.
        FileRefusedError: not a folder, the home folder, a system or credential folder.
    """
    if not path or not path.strip():
        raise ValueError("the path is empty: give the project's folder")
    raw = Path(path.strip()).expanduser()
    base = roots[0] if roots else Path.cwd()
    full = (raw if raw.is_absolute() else base / raw).resolve()
    if not any(full == r or r in full.parents for r in roots):
        raise PathRefusedError(full, roots)
    if not full.is_dir():
        raise FileRefusedError(full, "it is not a folder; give the project's folder")
    refuse_unsafe_root(full, home=home)
    return full


def read_regular(path: Path) -> bytes:
    """The bytes of ``path`` when it is a regular file at the moment it is opened.

    The open never blocks (``O_NONBLOCK``: a file swapped for a named pipe after the walk
    would otherwise wait for a writer forever), and the type is checked on the open
    descriptor, so nothing can be swapped in between.

    Raises:
        OSError: missing, unreadable, or not a regular file.
    """
    with open_regular(path) as handle:
        return handle.read()


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file at the moment it
    is opened (the checks of :func:`read_regular`, for a file read a piece at a time).

    Raises:
        OSError: missing, unreadable, or not a regular file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"{special_kind(mode)}, not a regular file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class GitIgnore:
    """The ``.gitignore`` files of a folder tree, each applying below its own folder."""

    def __init__(self) -> None:
        self._specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []

    def load(self, folder: Path, rel: str) -> None:
        """Read ``folder/.gitignore`` (``rel``: the folder relative to the root, '' for it)."""
        path = folder / ".gitignore"
        try:
            if not stat.S_ISREG(path.lstat().st_mode):
                return
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        import pathspec  # on first use: ``from ihmt_mcp import Memory`` stays cheap

        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        if len(spec) > 0:
            self._specs.append((rel, spec))

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """True when ``rel`` (a path relative to the root, ``/``-separated) is ignored."""
        result = False
        for base, spec in self._specs:
            if base and not rel.startswith(base + "/"):
                continue
            sub = rel[len(base) + 1 :] if base else rel
            # The deepest .gitignore decides, as in git (later specs are deeper).
            check = spec.check_file(sub + "/" if is_dir else sub)
            if check.include is not None:
                result = check.include
        return result


LINK_OUT = "a link leading out of the folder"
"""Why a file reached through a link to somewhere outside the folder read is skipped."""


def leads_out(path: Path, real_root: Path) -> bool:
    """True when ``path`` — a link, or a file inside a linked folder — resolves to a place
    outside ``real_root`` (itself resolved). Whatever is read from a folder stays in it.

    Raises:
        OSError, RuntimeError: a dangling or looping link.
    """
    target = path.resolve(strict=True)
    return target != real_root and real_root not in target.parents


def walk_files(
    root: Path,
    *,
    gitignore: bool = True,
    skipped: list[tuple[str, str]] | None = None,
) -> Iterator[tuple[Path, str]]:
    """Every regular file under ``root`` a developer would call source, as ``(path, rel)``.

    Skips VCS, virtualenv, cache and build folders, credential folders and files, lock
    files, compiled objects, links leading out of ``root``, anything that is not a regular
    file and, when ``gitignore`` is true, whatever the ``.gitignore`` files ignore. Sorted
    by path. ``skipped`` (when given) receives ``(rel, reason)`` for every file left out
    for being special, secret or a link out, so callers can say why.
    """
    real_root = root.resolve()
    rules = GitIgnore()

    def skip(rel: str, reason: str) -> None:
        logger.info("not walking %s: %s", rel, reason)
        if skipped is not None:
            skipped.append((rel, reason))

    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        rel_dir = here.relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        if gitignore:
            rules.load(here, rel_dir)
        kept = []
        for name in sorted(dirs):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name in SKIP_DIRS or name.endswith(".egg-info"):
                continue
            if name.lower() in SECRET_DIRS:
                skip(rel + "/", "a folder that holds credentials")
                continue
            if os.path.islink(here / name):
                continue
            if gitignore and rules.ignored(rel, is_dir=True):
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if name in SKIP_FILES or name.endswith(SKIP_SUFFIXES) or name == ".gitignore":
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if gitignore and rules.ignored(rel, is_dir=False):
                continue
            full = here / name
            if is_secret_file_name(name):
                skip(rel, "its name says it holds keys or credentials")
                continue
            try:
                mode = full.lstat().st_mode
                if stat.S_ISLNK(mode):
                    if leads_out(full, real_root):
                        skip(rel, LINK_OUT)
                        continue
                    mode = full.stat().st_mode
            except (OSError, RuntimeError):
                continue  # a dangling or looping link: nothing to read
            if not stat.S_ISREG(mode):
                skip(rel, f"{special_kind(mode)}, not a regular file")
                continue
            yield full, rel
