"""The ``git`` command, run in the store folder, and what is read from its output.

Argument lists, no prompt, the C locale; each failure a :class:`SyncError` of one line.
Also the lock files git leaves and whether a git process still works in a folder (what
the recovery of a killed sync looks at).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ihmt_mcp.sync._records import SyncError

logger = logging.getLogger(__name__)

__all__ = [
    "LOCAL_RACE",
    "LOCAL_TIMEOUT_S",
    "NETWORK_TIMEOUT_S",
    "REMOTE_RACE",
    "Git",
    "blob_ids",
    "first_line",
    "git_locks",
    "git_runs_in",
    "porcelain_reason",
    "shell_quote",
]

NETWORK_TIMEOUT_S = 300.0
LOCAL_TIMEOUT_S = 600.0
STALE_LOCK_S = 600.0
"""Where no process table can be read: an index lock older than this is stale."""


def git_missing() -> SyncError:
    return SyncError(
        "no_git",
        "git is not installed (or not on PATH); install git to sync this memory "
        "(https://git-scm.com/downloads)",
    )


LOCAL_RACE = re.compile(
    r"cannot lock ref|but expected|\.lock'?: File exists|unable to update local ref"
)
"""git's words for a ref another local git holds or just moved (not a network failure)."""
REMOTE_RACE = re.compile(r"failed to update ref|but expected|cannot lock ref")
"""A remote's words for a branch another push moved while this one waited."""


def _subcommand(args: Sequence[str]) -> str:
    """The git command ``args`` run (``merge`` in ``-c k=v merge …``)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-c", "-C"):
            skip = True
        elif not arg.startswith("-"):
            return arg
    return args[0] if args else "git"


def first_line(text: str) -> str:
    """The line of git's stderr worth showing: its ``fatal:``/``error:`` line if any."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip()
    return lines[0] if lines else "no message"


class Git:
    """The ``git`` command run in one folder: argument lists, no prompt, C locale."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        executable = shutil.which("git")
        if executable is None:
            raise git_missing()
        self.executable = executable
        env = dict(os.environ)
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
            env.pop(name, None)  # a hook's environment must not redirect us elsewhere
        env.update(
            {
                "GIT_TERMINAL_PROMPT": "0",
                "LC_ALL": "C",
                "LANGUAGE": "C",
                # A store folder that is not yet a repository must never fall through to
                # a repository above it (a dotfiles repo in the home folder).
                "GIT_CEILING_DIRECTORIES": str(folder.parent),
                "GIT_MERGE_AUTOEDIT": "no",
            }
        )
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        self.env = env

    def run(
        self,
        *args: str,
        check: bool = True,
        timeout: float = LOCAL_TIMEOUT_S,
        extra_env: dict[str, str] | None = None,
        input_text: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        command = [self.executable, "-C", str(self.folder), *args]
        try:
            done = subprocess.run(
                command,
                input=input_text,
                stdin=subprocess.DEVNULL if input_text is None else None,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                env={**self.env, **(extra_env or {})},
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError:
            raise git_missing() from None
        except subprocess.TimeoutExpired:
            raise SyncError(
                "timeout",
                f"'git {_subcommand(args)}' did not finish in {timeout:.0f} seconds and was "
                "stopped; nothing was lost, run 'ihmt sync' again",
            ) from None
        logger.debug("git %s -> %d", _subcommand(args), done.returncode)
        if check and done.returncode != 0:
            reason = first_line(done.stderr + done.stdout)
            raise SyncError("git_failed", f"'git {_subcommand(args)}' failed: {reason}")
        return done

    def blob(self, sha: str) -> bytes:
        """The bytes of one object (a file's content, exactly)."""
        try:
            done = subprocess.run(
                [self.executable, "-C", str(self.folder), "cat-file", "blob", sha],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=self.env,
                timeout=LOCAL_TIMEOUT_S,
                check=False,
            )
        except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
            raise SyncError("git_failed", f"cannot read object {sha}: {exc}") from None
        return done.stdout

    def out(self, *args: str, timeout: float = LOCAL_TIMEOUT_S) -> str:
        return self.run(*args, timeout=timeout).stdout.strip()

    def ok(self, *args: str) -> bool:
        return self.run(*args, check=False).returncode == 0

    def paths(self, *args: str) -> list[str]:
        """The NUL-separated paths a ``-z`` command prints."""
        return [p for p in self.run(*args).stdout.split("\0") if p]

    def rev_tree(self, name: str) -> str:
        """The tree of commit ``name``, or ''."""
        done = self.run("rev-parse", "-q", "--verify", f"{name}^{{tree}}", check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    def rev(self, name: str) -> str:
        """The commit ``name`` points at, or '' when it does not exist."""
        done = self.run("rev-parse", "-q", "--verify", f"{name}^{{commit}}", check=False)
        return done.stdout.strip() if done.returncode == 0 else ""


def porcelain_reason(text: str) -> str:
    match = re.search(r"\[(?:remote )?rejected\]\s*\(?([^)\n]*)\)?", text)
    return match.group(1).strip() if match else first_line(text)


def shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def blob_ids(git: Git, commit: str, paths: Sequence[str]) -> dict[str, str]:
    """The blob id of each of ``paths`` in ``commit`` (paths it lacks are left out): one
    ``git ls-tree``. (The merge driver's ``_blobs`` reads contents, with no store import.)"""
    listed = git.run("ls-tree", "-z", "--full-tree", commit, "--", *paths).stdout
    found: dict[str, str] = {}
    for entry in listed.split("\0"):
        if "\t" in entry:
            meta, path = entry.split("\t", 1)
            found[path] = meta.split()[2]
    return found


def git_locks(git_dir: Path) -> list[Path]:
    """The lock files git takes in a repository (the index, HEAD, refs, the config)."""
    if not git_dir.is_dir():
        return []
    found = [
        git_dir / name
        for name in (
            "index.lock",
            "HEAD.lock",
            "config.lock",
            "packed-refs.lock",
            "ORIG_HEAD.lock",
            "MERGE_HEAD.lock",
        )
        if (git_dir / name).exists()
    ]
    refs = git_dir / "refs"
    if refs.is_dir():
        found += sorted(refs.rglob("*.lock"))
    return found


def git_runs_in(folder: Path) -> bool:
    """Whether a git process works in ``folder`` now (Linux: a process named git whose
    working folder it is). Where no process table can be read, a lock younger than
    ``STALE_LOCK_S`` counts as held."""
    proc = Path("/proc")
    if sys.platform.startswith("linux") and proc.is_dir():
        target = folder.resolve()
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if (entry / "comm").read_text().strip() != "git":
                    continue
                if Path(os.readlink(entry / "cwd")).resolve() == target:
                    return True
            except OSError:
                continue
        return False
    return any(
        time.time() - lock.stat().st_mtime < STALE_LOCK_S
        for lock in git_locks(folder / ".git")
        if lock.exists()
    )
