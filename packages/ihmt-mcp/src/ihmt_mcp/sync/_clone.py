"""A synced store's clone: its layout, its per-clone git settings, its bookkeeping.

:class:`Clone` is what every step of a sync shares (the base of :class:`Sync`): the
memory, its store folder, this machine's name, the ``git`` command run there, the
record in ``state/sync.json``, and the questions each step asks first (is there a
remote, which branch). It also fetches: a subclass may wrap the fetch (a test forcing a
race, a benchmark timing it).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import sys
import time
from typing import TYPE_CHECKING, Any

from ihmt_mcp.sync._git import (
    LOCAL_RACE,
    NETWORK_TIMEOUT_S,
    Git,
    first_line,
    git_runs_in,
    shell_quote,
)
from ihmt_mcp.sync._records import SyncError
from ihmt_store import ReplicaFile, Store

if TYPE_CHECKING:
    from ihmt_mcp._parts import MemoryParts

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_BRANCH",
    "GITATTRIBUTES",
    "LEAF_MERGE_ATTRIBUTE",
    "PURGED_FILE",
    "REMOTE",
    "Clone",
    "clone_config",
    "replicated",
    "tracked",
]

REMOTE = "origin"
"""The one remote a synced store pushes to and pulls from."""
DEFAULT_BRANCH = "main"
STATE_NAME = "sync.json"
"""The sync bookkeeping under ``state/`` (machine-local, never replicated)."""
PURGED_FILE = ".ihmt-purged"
"""Tracked at the repository's top: the ids whose history was rewritten, one a line, so
every clone follows the rewrite on its next sync."""
GIT_WAIT_S = 30.0
"""How long a sync waits for a git process still working in the store (a killed sync's)."""

SETUP_FILES = (".gitignore", ".gitattributes", PURGED_FILE)
"""Tracked beside the memory's files: what ``--init`` writes, and the purge record."""
GITATTRIBUTES = (
    "# Written by 'ihmt sync': memories are stored byte for byte, never converted.\n* -text\n"
)
LEAF_MERGE_ATTRIBUTE = "layer0/*/*.txt merge=ihmt-leaf"
"""A leaf both machines changed is merged by ``ihmt_mcp.sync._leaf_merge`` (docs/sync.md)."""

CLONE_CONFIG = {
    # Memories are stored byte for byte, never converted.
    "core.autocrlf": "false",
    # 'git status' lists only the folders whose listing changed since it last looked.
    "core.untrackedCache": "true",
    "merge.ihmt-leaf.name": "IHMT: a leaf edited by hand on two machines",
    # The merge base git builds from two merge bases takes the base's version: the
    # driver only ever decides between two real versions (and stashes real text).
    "merge.ihmt-leaf.recursive": "binary",
}
"""Per-clone git settings every sync makes sure of (:meth:`Clone._configure`), with the
leaf merge driver's command (this Python's absolute path)."""


def clone_config() -> dict[str, str]:
    python = shell_quote(sys.executable)
    return {
        **CLONE_CONFIG,
        "merge.ihmt-leaf.driver": f"{python} -m ihmt_mcp.sync._leaf_merge %O %A %B %P",
    }


def replicated(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in Store.REPLICATED)


def tracked(path: str) -> bool:
    """Whether sync itself commits ``path``: the memory's files and its own setup."""
    return replicated(path) or path in SETUP_FILES


class Clone:
    """The store folder of one :class:`~ihmt_mcp.Memory` as a git clone.

    Args:
        memory: the memory whose store folder is (or becomes) the repository.
        host: the name commit messages give this machine (default: the host name).
    """

    def __init__(self, memory: MemoryParts, *, host: str | None = None) -> None:
        self.memory = memory
        self.store: Store = memory.store
        self.folder = self.store.path
        self.host = host or socket.gethostname().split(".")[0] or "this machine"
        self._git: Git | None = None
        self._remote_lock: str | None = None
        """The lock file the remote named when it last refused a push."""
        self.warnings: list[str] = []
        """What the steps skipped or kept, one line each, for the report
        (:meth:`_warn`)."""

    @property
    def git(self) -> Git:
        if self._git is None:
            self._git = Git(self.folder)
        return self._git

    # ------------------------------------------------------------------ questions
    def is_initialised(self) -> bool:
        """Whether the store folder is a git repository with a remote to sync with."""
        if not (self.folder / ".git").exists() or shutil.which("git") is None:
            return False
        return bool(self._remote_url())

    def _remote_url(self) -> str:
        done = self.git.run("config", "--get", f"remote.{REMOTE}.url", check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    def _require(self) -> str:
        """The current branch, once git, the repository and the remote are there."""
        git = self.git  # raises when git is missing
        if not (self.folder / ".git").exists() or not self._remote_url():
            raise SyncError(
                "not_initialised",
                f"the memory at {self.folder} is not synced yet; set it up with "
                "'ihmt sync --init REMOTE' (a git URL or a path to a bare repository)",
            )
        done = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False)
        if done.returncode != 0:
            raise SyncError(
                "detached",
                f"the repository in {self.folder} is on a detached HEAD (no branch); check "
                f"out its branch first (git -C {self.folder} switch {DEFAULT_BRANCH})",
            )
        return done.stdout.strip()

    def _configure(self) -> None:
        """The per-clone git settings (git config is not replicated): written by
        ``--init`` and checked by every sync, so a clone set up by an older version gets
        them too. One ``git config --list`` when none is missing."""
        git = self.git
        have: dict[str, str] = {}
        for entry in git.run("config", "--local", "--list", "-z").stdout.split("\0"):
            key, _, value = entry.partition("\n")
            have[key.lower()] = value
        for key, value in clone_config().items():
            if have.get(key.lower()) != value:
                git.run("config", key, value)
        attributes = self.folder / ".gitattributes"
        try:
            present = attributes.read_text(encoding="utf-8")
        except FileNotFoundError:
            present = ""
        if LEAF_MERGE_ATTRIBUTE not in present.splitlines():
            # Written for a clone set up before the driver (and by --init): the next
            # commit carries it; two clones adding the same line merge cleanly.
            lines = present or GITATTRIBUTES
            if not lines.endswith("\n"):
                lines += "\n"
            attributes.write_text(lines + LEAF_MERGE_ATTRIBUTE + "\n", encoding="utf-8")

    def _warn(self, message: str) -> None:
        """Say one thing the sync skipped or kept: logged, and in the report."""
        logger.warning("%s", message)
        if message not in self.warnings:
            self.warnings.append(message)

    # ------------------------------------------------------------------ bookkeeping
    def _state(self) -> dict[str, Any]:
        try:
            data = json.loads(self.store.state_file(STATE_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save_state(self, **changes: Any) -> None:
        data = {**self._state(), **changes}
        path = self.store.state_file(STATE_NAME)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.ihmt-tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)

    def _identity(self) -> None:
        """A commit needs a name and an e-mail: this machine's, when git has none."""
        if self.git.run("config", "--get", "user.email", check=False).returncode == 0:
            return
        self.git.run("config", "user.name", f"ihmt on {self.host}")
        self.git.run("config", "user.email", f"ihmt@{self.host}")

    def _forgotten(self, leaf_id: str) -> bool:
        """Whether a tombstone of ``leaf_id`` is in the working tree (never, for a name
        that cannot be a memory id: a file another clone named so is no memory)."""
        try:
            return (self.folder / ReplicaFile.tombstone_path(leaf_id)).is_file()
        except ValueError:
            return False

    def _wait_for_git(self) -> bool:
        """Wait (at most ``GIT_WAIT_S``) until no git works in the store folder; whether
        one still does."""
        deadline = time.monotonic() + GIT_WAIT_S
        while git_runs_in(self.folder):
            if time.monotonic() >= deadline:
                return True
            time.sleep(0.05)
        return False

    def _fetch(self) -> None:
        for attempt in range(3):
            done = self.git.run(
                "fetch",
                "--quiet",
                "--no-tags",
                "--prune",
                REMOTE,
                check=False,
                timeout=NETWORK_TIMEOUT_S,
            )
            if done.returncode == 0:
                return
            if not LOCAL_RACE.search(done.stderr) or attempt == 2:
                break
            # Another git (another sync's push, a killed sync's orphan) moved or held the
            # remote-tracking ref at that moment: not the network. Wait and fetch again.
            self._wait_for_git()
        raise SyncError(
            "unreachable",
            f"cannot reach the remote {self._remote_url()}: {first_line(done.stderr)}",
        )
