"""``ihmt sync``: one memory on every machine, with git as the replication engine.

The store folder is a git repository whose remote (``origin``) every machine pushes to.
Only what a user wrote is tracked (``Store.REPLICATED``); what each machine derives is
ignored (``Store.UNREPLICATED``) and rebuilt after a pull, at the cost of the pulled
changes. ``docs/sync.md`` describes the design; this module drives the ``git`` command.

A sync, step by step (:meth:`Sync.sync`):

1. finish what a killed sync left: a merge in progress is aborted (and redone below), an
   index lock no live git holds is removed, pulled files not yet refreshed are refreshed;
2. ``git fetch`` (no store lock: the network may be slow);
3. under the store lock: one commit of what changed (one ``git status``), the merge (a
   fast-forward with ``git read-tree -m -u`` when this machine wrote nothing, else
   ``git merge --no-edit``, never a rebase: the history is shared; a leaf edited by hand
   on both sides goes to the merge driver of ``_leaf_merge``, and the version it set
   apart is saved as a memory right after), then the refresh of the derived state, and
   the record of the refreshed commit in ``state/sync.json``;
4. ``git push`` (no store lock); a rejected push goes back to 2, at most three times.

Every failure is a :class:`SyncError` with one plain line, and nothing is lost: a commit
that cannot be pushed stays local for the next sync, a merge that stops is aborted.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ihmt_mcp._leaf_merge import LEAF_MERGES
from ihmt_mcp.errors import MemoryServiceError
from ihmt_store import CorruptFileError, Entry, Leaf, ReplicaFile, Store, leaf_id_for, now_timestamp

if TYPE_CHECKING:
    from ihmt_mcp._memory import Memory

logger = logging.getLogger(__name__)

__all__ = [
    "BackgroundSync",
    "PurgeReport",
    "PulledChanges",
    "Sync",
    "SyncError",
    "SyncFailure",
    "SyncInit",
    "SyncReport",
    "SyncStatus",
    "is_synced",
    "parse_period",
]

REMOTE = "origin"
"""The one remote a synced store pushes to and pulls from."""
DEFAULT_BRANCH = "main"
STATE_NAME = "sync.json"
"""The sync bookkeeping under ``state/`` (machine-local, never replicated)."""
PURGED_FILE = ".ihmt-purged"
"""Tracked at the repository's top: the ids whose history was rewritten, one a line, so
every clone follows the rewrite on its next sync."""
MAX_PUSH_RETRIES = 3
NETWORK_TIMEOUT_S = 300.0
LOCAL_TIMEOUT_S = 600.0
STALE_LOCK_S = 600.0
"""Where no process table can be read: an index lock older than this is stale."""
APPLY_SLICE = 2000
"""Pulled paths refreshed per hold of the store lock."""
GIT_WAIT_S = 30.0
"""How long a sync waits for a git process still working in the store (a killed sync's)."""

SETUP_FILES = (".gitignore", ".gitattributes", PURGED_FILE)
"""Tracked beside the memory's files: what ``--init`` writes, and the purge record."""
GITATTRIBUTES = (
    "# Written by 'ihmt sync': memories are stored byte for byte, never converted.\n* -text\n"
)
LEAF_MERGE_ATTRIBUTE = "layer0/*/*.txt merge=ihmt-leaf"
"""A leaf both machines changed is merged by ``ihmt_mcp._leaf_merge`` (docs/sync.md)."""

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
"""Per-clone git settings every sync makes sure of (:meth:`Sync._configure`), with the
leaf merge driver's command (this Python's absolute path)."""


def _clone_config() -> dict[str, str]:
    python = _shell_quote(sys.executable)
    return {
        **CLONE_CONFIG,
        "merge.ihmt-leaf.driver": f"{python} -m ihmt_mcp._leaf_merge %O %A %B %P",
    }


SyncFailure = Literal[
    "bad_period",
    "no_git",
    "not_initialised",
    "unreachable",
    "rejected",
    "unrelated",
    "dirty_index",
    "detached",
    "conflict",
    "not_forgotten",
    "timeout",
    "git_failed",
]
"""Why a sync stopped: the ``reason`` of a :class:`SyncError`."""


class SyncError(MemoryServiceError, RuntimeError):
    """A sync step git could not do; the message is one line, and nothing was lost.

    Attributes:
        reason: which failure (a :data:`SyncFailure`).
        paths: the paths it concerns (a conflict, a dirty index), when any.
    """

    def __init__(self, reason: SyncFailure, message: str, paths: Sequence[str] = ()) -> None:
        self.reason: SyncFailure = reason
        self.paths = tuple(paths)
        super().__init__(message)


# ---------------------------------------------------------------------- records
@dataclass(frozen=True, slots=True, kw_only=True)
class PulledChanges:
    """What a pull brought into this store (memory ids; the store's ``AppliedChanges``)."""

    added: tuple[str, ...] = ()
    """Memories new to this store (or whose text changed)."""
    annotated: tuple[str, ...] = ()
    """Memories whose status changed: flagged OUTDATED, or restored."""
    removed: tuple[str, ...] = ()
    """Memories forgotten elsewhere."""

    def __bool__(self) -> bool:
        return bool(self.added or self.annotated or self.removed)

    def to_json(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "annotated": list(self.annotated),
            "removed": list(self.removed),
        }

    def merged(self, other: PulledChanges) -> PulledChanges:
        def union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(dict.fromkeys((*a, *b)))

        return PulledChanges(
            added=union(self.added, other.added),
            annotated=union(self.annotated, other.annotated),
            removed=union(self.removed, other.removed),
        )

    def describe(self) -> str:
        parts = [
            f"{n} {word}"
            for n, word in (
                (len(self.added), "new"),
                (len(self.annotated), "corrected or restored"),
                (len(self.removed), "forgotten"),
            )
            if n
        ]
        return ", ".join(parts) if parts else "nothing new"


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncStatus:
    """Where a synced store stands against its remote (``ihmt sync --status``)."""

    remote: str
    branch: str
    reachable: bool
    """False when the fetch failed: ahead and behind are as of the last fetch."""
    ahead: int
    """Local commits the remote does not have."""
    behind: int
    """Remote commits this store has not merged."""
    uncommitted: int
    """Memory files changed since the last sync (not committed yet)."""
    last_sync: str | None
    """When a sync last completed here (UTC), or None."""
    error: str = ""
    """Why the remote could not be reached, when it could not."""
    every: str = ""
    """How often the MCP server syncs this clone in the background (``ihmt sync
    --every``), or "" when it does not."""

    def to_json(self) -> dict[str, Any]:
        return {
            "initialised": True,
            "remote": self.remote,
            "branch": self.branch,
            "reachable": self.reachable,
            "ahead": self.ahead,
            "behind": self.behind,
            "uncommitted": self.uncommitted,
            "last_sync": self.last_sync,
            "error": self.error,
            "every": self.every,
        }

    def render(self) -> str:
        where = f"{self.remote} ({self.branch})"
        lines = [f"synced with {where}"]
        if self.reachable:
            lines.append(f"{self.behind} commit(s) to pull, {self.ahead} to push")
        else:
            lines.append(
                f"the remote cannot be reached ({self.error}); as of the last fetch: "
                f"{self.behind} commit(s) to pull, {self.ahead} to push"
            )
        lines.append(f"{self.uncommitted} memory file(s) changed since the last sync")
        lines.append(f"last sync: {self.last_sync or 'never'}")
        lines.append(
            f"in the background: every {self.every} (the MCP server)"
            if self.every
            else "in the background: off (ihmt sync --every 10m turns it on)"
        )
        return "\n".join(lines)


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncReport:
    """What one :meth:`Sync.sync` did."""

    commit: str = ""
    """The commit of this machine's changes ('' when nothing had changed)."""
    message: str = ""
    """Its message, e.g. ``ihmt sync on laptop: 3 saved, 1 corrected, 1 forgotten``."""
    saved: int = 0
    corrected: int = 0
    forgotten: int = 0
    pulled: PulledChanges = field(default_factory=PulledChanges)
    pushed: bool = False
    """True when the remote now holds this store's history."""
    retries: int = 0
    """Pushes rejected (someone pushed meanwhile) and retried after a new pull."""
    head: str = ""
    followed_purges: tuple[str, ...] = ()
    """Ids whose history another machine purged, and this clone rewrote too."""

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "message": self.message,
            "saved": self.saved,
            "corrected": self.corrected,
            "forgotten": self.forgotten,
            "pulled": self.pulled.to_json(),
            "pushed": self.pushed,
            "retries": self.retries,
            "head": self.head,
            "followed_purges": list(self.followed_purges),
        }

    def render(self) -> str:
        sent = self.message.split(": ", 1)[1] if ": " in self.message else "nothing to send"
        out = f"Synced: sent {sent}; received {self.pulled.describe()}"
        if self.followed_purges:
            out += f"; followed the purge of {', '.join(self.followed_purges)}"
        return out + ("." if self.pushed else "; not pushed.")


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncInit:
    """What :meth:`Sync.init` set up."""

    remote: str
    branch: str
    repository: Literal["created", "adopted"]
    """Whether the store folder became a git repository now, or already was one."""
    remote_had_store: bool
    """True when the remote already held a memory, now merged into this one."""
    pulled: PulledChanges = field(default_factory=PulledChanges)
    pushed: bool = False
    head: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "branch": self.branch,
            "repository": self.repository,
            "remote_had_store": self.remote_had_store,
            "pulled": self.pulled.to_json(),
            "pushed": self.pushed,
            "head": self.head,
        }

    def render(self) -> str:
        joined = (
            f"merged the memory already there ({self.pulled.describe()})"
            if self.remote_had_store
            else "the remote was empty: this memory is its first"
        )
        return (
            f"Synced this memory with {self.remote} ({self.branch}): {joined}. "
            "Run 'ihmt sync' to sync again (on every machine)."
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PurgeReport:
    """What :meth:`Sync.purge` rewrote."""

    id: str
    paths: tuple[str, ...]
    """The paths removed from every commit (pathspecs)."""
    rewritten: bool
    """False when no commit held the memory (nothing to rewrite)."""
    pushed: bool
    others: str
    """What every other clone must do."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "paths": list(self.paths),
            "rewritten": self.rewritten,
            "pushed": self.pushed,
            "others": self.others,
        }

    def render(self) -> str:
        if not self.rewritten:
            return f"No commit holds {self.id}: there was nothing to purge from the history."
        return (
            f"Purged {self.id} from this clone's history and from the remote's branch "
            f"(force-pushed). {self.others}"
        )


# ---------------------------------------------------------------------- git
def _git_missing() -> SyncError:
    return SyncError(
        "no_git",
        "git is not installed (or not on PATH); install git to sync this memory "
        "(https://git-scm.com/downloads)",
    )


_LOCAL_RACE = re.compile(
    r"cannot lock ref|but expected|\.lock'?: File exists|unable to update local ref"
)
"""git's words for a ref another local git holds or just moved (not a network failure)."""
_REMOTE_RACE = re.compile(r"failed to update ref|but expected|cannot lock ref")
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


def _first_line(text: str) -> str:
    """The line of git's stderr worth showing: its ``fatal:``/``error:`` line if any."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip()
    return lines[0] if lines else "no message"


class _Git:
    """The ``git`` command run in one folder: argument lists, no prompt, C locale."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        executable = shutil.which("git")
        if executable is None:
            raise _git_missing()
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
            raise _git_missing() from None
        except subprocess.TimeoutExpired:
            raise SyncError(
                "timeout",
                f"'git {_subcommand(args)}' did not finish in {timeout:.0f} seconds and was "
                "stopped; nothing was lost, run 'ihmt sync' again",
            ) from None
        logger.debug("git %s -> %d", _subcommand(args), done.returncode)
        if check and done.returncode != 0:
            reason = _first_line(done.stderr + done.stdout)
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


# ---------------------------------------------------------------------- the driver
class Sync:
    """Drives git for the store folder of one :class:`~ihmt_mcp.Memory`.

    Args:
        memory: the memory whose store folder is (or becomes) the repository.
        host: the name commit messages give this machine (default: the host name).
    """

    def __init__(self, memory: Memory, *, host: str | None = None) -> None:
        self.memory = memory
        self.store: Store = memory.store
        self.folder = self.store.path
        self.host = host or socket.gethostname().split(".")[0] or "this machine"
        self._git: _Git | None = None
        self._remote_lock: str | None = None
        """The lock file the remote named when it last refused a push."""

    @property
    def git(self) -> _Git:
        if self._git is None:
            self._git = _Git(self.folder)
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
        for key, value in _clone_config().items():
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

    # ------------------------------------------------------------------ status
    def status(self) -> SyncStatus:
        """Fetch, then count commits ahead and behind and memory files not committed.

        An unreachable remote is not an error here: the record says so, with the counts
        as of the last fetch.

        Raises:
            SyncError: git missing, not initialised, a detached HEAD.
        """
        branch = self._require()
        git = self.git
        error = ""
        try:
            self._fetch()
        except SyncError as exc:
            if exc.reason not in ("unreachable", "timeout"):
                raise
            error = str(exc)
        ahead = behind = 0
        upstream = f"refs/remotes/{REMOTE}/{branch}"
        if git.rev(upstream):
            counts = git.out("rev-list", "--left-right", "--count", f"HEAD...{upstream}")
            ahead, behind = (int(n) for n in counts.split())
        elif git.rev("HEAD"):
            ahead = int(git.out("rev-list", "--count", "HEAD"))
        return SyncStatus(
            remote=self._remote_url(),
            branch=branch,
            reachable=not error,
            ahead=ahead,
            behind=behind,
            uncommitted=len(self._changed_files()),
            last_sync=self._state().get("last_sync"),
            error=_short_reason(error),
            every=background_period(self.folder),
        )

    def set_every(self, period: str) -> str:
        """Have the MCP server sync this clone every ``period`` (``10m``, ``1h``; ``off``
        stops it). Kept in the clone's git config (``ihmt.every``): a setting of this
        machine, never replicated, gone with the clone. Returns the period kept, or ""
        for off.

        Raises:
            SyncError: git missing, not initialised; ``bad_period`` for a period that is
                not one.
        """
        self._require()
        try:
            seconds = parse_period(period)
        except ValueError as exc:
            raise SyncError("bad_period", str(exc)) from None
        if seconds is None:
            self.git.run("config", "--unset-all", EVERY_KEY, check=False)
            return ""
        kept = period.strip().lower()
        self.git.run("config", EVERY_KEY, kept)
        return kept

    def _changed_files(self) -> list[str]:
        """Replicated paths that differ from HEAD (untracked ones included)."""
        done = self.git.run(
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--",
            *Store.REPLICATED,
        )
        entries = [e for e in done.stdout.split("\0") if e]
        return [e[3:] for e in entries if len(e) > 3]

    # ------------------------------------------------------------------ sync
    def sync(self) -> SyncReport:
        """Commit, pull, refresh, push: see the module's docstring.

        Raises:
            SyncError: one line saying why; what was committed stays for the next sync.
        """
        return self._sync()

    def _sync(self, *, finishing_purge: bool = False) -> SyncReport:
        branch = self._require()
        pending = self._state().get("purge_pending")
        if pending and not finishing_purge:
            raise SyncError(
                "rejected",
                f"the purge of {pending} has not reached the remote yet, and a sync now "
                f"would bring its history back; finish it with 'ihmt sync --purge {pending}'",
            )
        with self.store.locked():
            self._configure()
            self._recover()
        followed: list[str] = []
        commit_info = _Commit()
        pulled = PulledChanges()
        retries = 0
        pushed = False
        self._remote_lock = None
        for attempt in range(MAX_PUSH_RETRIES + 1):
            try:
                self._fetch()
            except SyncError as exc:
                if exc.reason in ("unreachable", "timeout"):
                    with self.store.locked():
                        self._commit_into(commit_info)
                    kept = (
                        f" this machine's changes are committed ({commit_info.message}) and"
                        " the next sync sends them"
                        if commit_info.sha
                        else ""
                    )
                    raise SyncError(exc.reason, f"{exc};{kept}".rstrip(";") + ".") from None
                raise
            with self.store.locked():
                self._commit_into(commit_info)
                followed += self._follow_purges(branch)
                if self._merge(branch) is not None and self._settle_leaf_merges():
                    self._commit_into(commit_info)  # the versions kept, sent with it
            pulled = pulled.merged(self._catch_up())
            if self._push(branch):
                pushed = True
                break
            retries = attempt + 1
            if retries > MAX_PUSH_RETRIES and self._remote_lock:
                raise SyncError(
                    "rejected",
                    f"the remote refused the push: it holds {self._remote_lock}, a lock left "
                    "by a push that was killed there; if no push is running on the remote, "
                    "delete that file and run 'ihmt sync' again (everything stays committed "
                    "here)",
                )
            if retries > MAX_PUSH_RETRIES:
                raise SyncError(
                    "rejected",
                    f"the remote rejected the push {retries} times (other machines keep "
                    "pushing); everything is committed here and merged so far: run "
                    "'ihmt sync' again in a moment",
                )
            logger.info("push rejected; pulling again (attempt %d)", retries + 1)
        head = self.git.rev("HEAD")
        self._save_state(last_sync=now_timestamp(), pushed=head)
        return SyncReport(
            commit=commit_info.sha,
            message=commit_info.message,
            saved=commit_info.counts.get("saved", 0),
            corrected=commit_info.counts.get("corrected", 0),
            forgotten=commit_info.counts.get("forgotten", 0),
            pulled=pulled,
            pushed=pushed,
            retries=retries,
            head=head,
            followed_purges=tuple(followed),
        )

    # step 1
    def _recover(self) -> None:
        """Finish what a killed sync (or git) left behind. Called under the store lock."""
        git_dir = self.folder / ".git"
        # A killed sync's git child (a merge, a push) may still be finishing, orphaned:
        # wait for it (bounded) before touching what it works on.
        busy = self._wait_for_git()
        locks = _git_locks(git_dir)
        if locks:
            if busy:
                raise SyncError(
                    "git_failed",
                    f"another git command is working in {self.folder} (it holds "
                    f"{locks[0].relative_to(self.folder)}); run 'ihmt sync' again when "
                    "it has finished",
                )
            for lock in locks:
                logger.warning("removing %s, left by a killed git", lock)
                lock.unlink(missing_ok=True)
        if (git_dir / "MERGE_HEAD").exists():
            logger.warning("aborting a merge a killed sync left; it is redone now")
            if not self.git.ok("merge", "--abort"):
                raise SyncError(
                    "conflict",
                    f"a merge left in {self.folder} cannot be aborted; finish it by hand "
                    f"(git -C {self.folder} status)",
                )
        state = self._state()
        head = self.git.rev("HEAD")
        merging = state.get("merging")
        if isinstance(merging, dict):
            upstream = str(merging.get("upstream", ""))
            if head == merging.get("before"):
                if merging.get("fast_forward") and self._index_holds(upstream):
                    # Killed between the fast-forward's two steps: finish it.
                    self.git.run("update-ref", "HEAD", upstream, head)
                else:
                    self._repair_torn_files(head, upstream)
            self._save_state(merging=None)
        # Killed between a merge (or a clone's checkout) and its refresh: the pulled
        # files are on disk, the derived state does not know them yet.
        self._catch_up()
        # Killed after a merge that kept one version of a leaf edited on two machines,
        # before the other version was saved as a memory: save it now.
        self._settle_leaf_merges()

    def _index_holds(self, commit: str) -> bool:
        """Whether the index is exactly the tree of ``commit``."""
        git = self.git
        tree = git.run("write-tree", check=False)
        return bool(commit) and tree.returncode == 0 and tree.stdout.strip() == git.rev_tree(commit)

    def _catch_up(self) -> PulledChanges:
        """Refresh the derived state from the commit it was last refreshed to up to HEAD
        (nothing when they are the same, or when no refresh was ever recorded)."""
        head = self.git.rev("HEAD")
        refreshed = self._state().get("refreshed")
        if not head or not isinstance(refreshed, str) or refreshed == head:
            return PulledChanges()
        return self._apply_since(refreshed, head)

    def _repair_torn_files(self, before: str, upstream: str) -> None:
        """A merge killed while it wrote the working tree (its commit not made): a file it
        was writing may be cut short. Such a file, equal neither to this branch's version
        nor to the remote's, goes back to this branch's (the redone merge writes the
        remote's again); complete files are left as they are."""
        git = self.git
        if not upstream or not git.ok("cat-file", "-e", f"{upstream}^{{commit}}"):
            return
        paths = [
            p
            for p in git.paths("diff", "--name-only", "--no-renames", "-z", before, upstream)
            if (self.folder / p).is_file()
        ]
        if not paths:
            return
        ours = _blob_ids(git, before, paths)
        theirs = _blob_ids(git, upstream, paths)
        hashed = git.run(
            "hash-object", "--no-filters", "--stdin-paths", input_text="\n".join(paths) + "\n"
        )
        torn = [
            p
            for p, sha in zip(paths, hashed.stdout.split(), strict=False)
            if sha not in (ours.get(p), theirs.get(p))
        ]
        for path in torn:
            logger.warning("%s was cut short by a killed merge; it is written again", path)
            if path in ours:
                git.run("checkout", before, "--", path)
            else:
                (self.folder / path).unlink(missing_ok=True)

    # step 2
    def _wait_for_git(self) -> bool:
        """Wait (at most ``GIT_WAIT_S``) until no git works in the store folder; whether
        one still does."""
        deadline = time.monotonic() + GIT_WAIT_S
        while _git_runs_in(self.folder):
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
            if not _LOCAL_RACE.search(done.stderr) or attempt == 2:
                break
            # Another git (another sync's push, a killed sync's orphan) moved or held the
            # remote-tracking ref at that moment: not the network. Wait and fetch again.
            self._wait_for_git()
        raise SyncError(
            "unreachable",
            f"cannot reach the remote {self._remote_url()}: {_first_line(done.stderr)}",
        )

    # step 3a
    def _commit_into(self, info: _Commit) -> None:
        """Commit what changed in the replicated paths; fill ``info``. Under the lock.

        One ``git status`` finds what changed (with no pathspec, git's untracked cache
        answers for every folder whose listing did not change: only the files git tracks
        are stat'ed), and only the paths it names are staged."""
        git = self.git
        changes = self._worktree_changes()
        foreign = [path for x, _y, path in changes if x not in " ?" and not _tracked(path)]
        if foreign:
            raise SyncError(
                "dirty_index",
                "files were staged by hand in the memory's repository "
                f"({', '.join(foreign[:5])}); nothing was synced: commit or unstage them "
                f"(git -C {self.folder} restore --staged PATH) and run 'ihmt sync' again",
                foreign,
            )
        ours = [(x, y, path) for x, y, path in changes if _tracked(path)]
        if not ours:
            return
        lost = self._keep_unforgotten_leaves(ours)
        stage = [path for x, y, path in ours if path not in lost and (y != " " or x == "?")]
        if stage:
            git.run(
                "add",
                "--all",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                input_text="\0".join(stage) + "\0",
                extra_env={"GIT_LITERAL_PATHSPECS": "1"},
            )
        status = git.run("diff", "--cached", "--name-status", "--no-renames", "-z").stdout
        parts = [p for p in status.split("\0") if p]
        pairs = list(zip(parts[0::2], parts[1::2], strict=False))
        if not pairs:
            return
        counts = self._count(pairs)
        info.counts = {k: info.counts.get(k, 0) + v for k, v in counts.items()}
        message = f"ihmt sync on {self.host}: {_describe_counts(counts)}"
        self._identity()
        parent = git.rev("HEAD")
        git.run("commit", "--quiet", "--no-verify", "-m", message)
        sha = git.rev("HEAD")
        first = not info.sha
        info.sha = sha
        info.message = message if first else f"{info.message}; {_describe_counts(counts)}"
        # The derived state already holds what this machine wrote: when it was in step
        # with the parent, it is in step with this commit. (When it lags, the lag stays
        # recorded and the next refresh covers it.)
        refreshed = self._state().get("refreshed")
        if refreshed is None or (parent and refreshed == parent):
            self._save_state(refreshed=sha)

    def _worktree_changes(self) -> list[tuple[str, str, str]]:
        """``(X, Y, path)`` of every path ``git status`` reports (staged X, unstaged Y,
        ``??`` untracked; a folder nothing in which is tracked is one entry, ``notes/x/``)."""
        done = self.git.run(
            "status",
            "--porcelain=v1",
            "-z",
            "--no-renames",
            "--ignore-submodules=all",
            # Named, so that a user's status.showUntrackedFiles=no cannot hide new memories
            # ('normal' is also the mode git's untracked cache serves).
            "--untracked-files=normal",
        )
        return [(e[0], e[1], e[3:]) for e in done.stdout.split("\0") if len(e) > 3]

    def _untrack_derived(self) -> None:
        """A store put under git by hand may track derived files: they stay on disk and
        leave the index (the next commit records that), so no merge meets them."""
        names = [p.strip("/") for p in Store.UNREPLICATED if "*" not in p]
        self.git.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *names)
        status = self.git.run("diff", "--cached", "--name-only", "-z", "--", *names).stdout
        if status.strip("\0"):
            self._identity()
            self.git.run(
                "commit",
                "--quiet",
                "--no-verify",
                "-m",
                f"ihmt sync on {self.host}: stop tracking derived files",
            )

    def _keep_unforgotten_leaves(self, changes: Sequence[tuple[str, str, str]]) -> set[str]:
        """A leaf file deleted without a tombstone was deleted by hand, not forgotten:
        its deletion is never replicated. The file comes back from the last commit; the
        paths put back."""
        lost = {
            path
            for x, y, path in changes
            if "D" in (x, y)
            and x != "A"
            and ReplicaFile.of(path).kind == "leaf"
            and not self._forgotten(ReplicaFile.of(path).leaf_id)
        }
        if not lost:
            return lost
        git = self.git
        git.run("reset", "--quiet", "HEAD", "--", *sorted(lost))
        git.run("checkout", "HEAD", "--", *sorted(lost))
        logger.warning(
            "%d memory file(s) were deleted by hand (not forgotten); they were put back: use "
            "'ihmt forget ID' to delete a memory everywhere",
            len(lost),
        )
        return lost

    def _count(self, pairs: Iterable[tuple[str, str]]) -> dict[str, int]:
        counts: dict[str, int] = {}

        def bump(key: str) -> None:
            counts[key] = counts.get(key, 0) + 1

        for status, path in pairs:
            kind = ReplicaFile.of(path).kind
            if kind == "leaf":
                if status == "A":
                    bump("saved")
                elif status == "M":
                    bump("edited")
            elif kind == "note" and status == "A":
                bump(_note_kind(self.folder / path))
            elif kind == "tombstone" and status == "A":
                bump("forgotten")
            elif kind == "config":
                bump("settings")
            elif status in ("A", "M") and path in (".gitignore", ".gitattributes"):
                bump("setup")
        return counts

    def _identity(self) -> None:
        """A commit needs a name and an e-mail: this machine's, when git has none."""
        if self.git.run("config", "--get", "user.email", check=False).returncode == 0:
            return
        self.git.run("config", "user.name", f"ihmt on {self.host}")
        self.git.run("config", "user.email", f"ihmt@{self.host}")

    # step 3b
    def _merge(self, branch: str) -> tuple[str, str] | None:
        """Merge the fetched branch (under the lock); the commits before and after it, or
        None when there was nothing to merge. The refresh is :meth:`_apply_since`'s."""
        git = self.git
        upstream = f"refs/remotes/{REMOTE}/{branch}"
        target = git.rev(upstream)
        if not target:
            return None
        before = git.rev("HEAD")
        found = git.run("merge-base", before, target, check=False) if before else None
        base = found.stdout.strip() if found is not None and found.returncode == 0 else ""
        if base == target:
            return None  # nothing the remote has that this branch has not
        if self._state().get("refreshed") is None:
            self._save_state(refreshed=before)
        if before and base == before and self._fast_forward(before, target):
            return before, target
        # No rename detection, of files or folders: it pairs unrelated note files, it
        # "moves" a leaf saved here into another domain's folder when the other machine
        # emptied this leaf's folder, and it pairs a leaf forgotten there with another
        # leaf saved there (conflicts with no conflict in them). git 2.39's default
        # strategy (ort) still paired files with all of the options below; the
        # recursive strategy honours them.
        args = [
            "-c",
            "merge.renames=false",
            "-c",
            "diff.renames=false",
            "-c",
            "merge.directoryRenames=false",
            "merge",
            "--no-edit",
            "--no-stat",
            "--no-verify",
            "--strategy=recursive",
            "-X",
            "no-renames",
        ]
        if not base:
            if not git.ok("cat-file", "-e", f"{upstream}:ihmt.config.json"):
                raise SyncError(
                    "unrelated",
                    f"the remote {self._remote_url()} holds a history that is not an IHMT "
                    "memory; nothing was merged: sync with an empty repository, or one "
                    "another machine synced a memory to ('ihmt sync --init REMOTE')",
                )
            # Joining a memory made elsewhere: on the few files both sides created (the
            # config), the memory already on the remote wins.
            args += ["--allow-unrelated-histories", "-X", "theirs"]
        self._identity()
        self._save_state(merging={"before": before, "upstream": target})
        done = git.run(*args, "-m", f"ihmt sync on {self.host}: merge", upstream, check=False)
        if done.returncode != 0 and not self._settle_conflicts():
            self._save_state(merging=None)
            self._abort_merge(done)
        self._save_state(merging=None)
        return before, git.rev("HEAD")

    def _fast_forward(self, before: str, target: str) -> bool:
        """Move HEAD, the index and the files to ``target``, which descends from
        ``before`` (this machine wrote nothing since); False when a file in the way stops
        it (the merge then says why).

        ``git read-tree -m -u`` checks and rewrites only the files that differ between
        the two commits, where ``git merge`` first stats every file of the store. Killed
        between the two steps, the index already holds ``target``: the recovery sees it
        and moves HEAD (:meth:`_recover`)."""
        git = self.git
        self._save_state(merging={"before": before, "upstream": target, "fast_forward": True})
        if not git.ok("read-tree", "-m", "-u", before, target):
            self._save_state(merging=None)
            return False
        message = f"ihmt sync on {self.host}: fast-forward"
        git.run("update-ref", "-m", message, "HEAD", target, before)
        self._save_state(merging=None)
        return True

    def _settle_conflicts(self) -> bool:
        """Settle the conflicts the format decides without a person, and commit the merge;
        False (nothing settled) when any conflict is another kind.

        - The same memory saved on two machines: one id (a hash of the text), the same
          text, headers that differ (the date it was saved). Either file is that memory;
          every machine keeps the one whose git blob id sorts first, so all agree.
        - A leaf edited by hand (or saved again) on one machine and deleted on the
          other: the tombstone wins when the merge holds one, as everywhere else; with
          none (a save after the forget removed it), the saved version stays.
        - Two tombstones of one memory: either is the forget.
        """
        git = self.git
        stages: dict[str, dict[int, str]] = {}
        for entry in git.run("ls-files", "-u", "-z").stdout.split("\0"):
            if "\t" in entry:
                meta, path = entry.split("\t", 1)
                _mode, sha, stage = meta.split()
                stages.setdefault(path, {})[int(stage)] = sha
        if not stages or not (self.folder / ".git" / "MERGE_HEAD").exists():
            return False
        keep: dict[str, str] = {}
        drop: list[str] = []
        for path, sides in stages.items():
            ours, theirs = sides.get(2), sides.get(3)
            what = ReplicaFile.of(path)
            if what.kind == "tombstone" and ours and theirs:
                keep[path] = "--ours" if ours <= theirs else "--theirs"
            elif what.kind != "leaf":
                return False
            elif ours and theirs:
                if ReplicaFile.text(git.blob(ours)) != ReplicaFile.text(git.blob(theirs)):
                    return False  # edited by hand on both machines: a person decides
                keep[path] = "--ours" if ours <= theirs else "--theirs"
            elif self._forgotten(what.leaf_id):
                drop.append(path)
            else:
                # Deleted on one side with no tombstone left in the merge: the other side
                # saved it again after the forget (which removed the tombstone). Only a
                # tombstone deletes a leaf: the saved version stays.
                keep[path] = "--ours" if ours else "--theirs"
        for path, side in keep.items():
            git.run("checkout", side, "--", path)
            git.run("add", "--", path)
        if drop:
            git.run("rm", "-q", "--cached", "--ignore-unmatch", "--", *drop)
            for path in drop:
                (self.folder / path).unlink(missing_ok=True)
        git.run("commit", "--quiet", "--no-edit", "--no-verify")
        logger.info("settled %d conflict(s) the format decides", len(keep) + len(drop))
        return True

    def _settle_leaf_merges(self) -> list[str]:
        """Save as memories the versions of leaves the merge driver did not keep (it
        stashed them under ``.git/``, never opening the store), each flagged OUTDATED by
        the leaf that kept the other version; the ids saved. Under the lock.

        A stash of a merge that did not complete (HEAD still where the driver saw it:
        the merge was undone, or killed and is redone) is discarded: the other version
        is still on the other side and comes back with the merge."""
        folder = self.folder / ".git" / LEAF_MERGES
        if not folder.is_dir():
            return []
        head = self.git.rev("HEAD")
        saved: list[str] = []
        for stash in sorted(folder.glob("*.json")):
            try:
                record = json.loads(stash.read_text(encoding="utf-8"))
                other = base64.b64decode(record["other"], validate=True)
                leaf_id, merged_on = str(record["leaf"]), str(record["head"])
            except (OSError, ValueError, KeyError, TypeError) as exc:
                logger.warning("%s cannot be read (%s); left for a person", stash, exc)
                continue
            if merged_on != head:
                new_id = self._keep_other_version(leaf_id, other)
                if new_id:
                    saved.append(new_id)
            stash.unlink(missing_ok=True)
        return saved

    def _forgotten(self, leaf_id: str) -> bool:
        """Whether a tombstone of ``leaf_id`` is in the working tree."""
        return (self.folder / ReplicaFile.tombstone_path(leaf_id)).is_file()

    def _keep_other_version(self, leaf_id: str, data: bytes) -> str:
        """Save ``data`` (a leaf file the merge replaced) as a memory of its own, OUTDATED
        by ``leaf_id``; its id ('' when there is nothing to save)."""
        store = self.store
        if self._forgotten(leaf_id):
            return ""  # forgotten on some machine: a tombstone wins, as everywhere
        other = _other_version(leaf_id, data, store.entry(leaf_id))
        if other is None:
            logger.warning("the other version of %s is not a leaf; left in git history", leaf_id)
            return ""
        present = store.entry(other.leaf_id)
        if present is None:
            self.memory._store_group([other], consolidate=True)
        elif present.outdated_by == leaf_id:
            return other.leaf_id  # saved by an earlier run (killed before its stash went)
        if store.entry(leaf_id) is not None:
            try:
                self.memory.mark_outdated(
                    other.leaf_id,
                    leaf_id,
                    reason="edited by hand on two machines: the later edit is current",
                )
            except ValueError as exc:  # a correction cycle: both stay, neither flagged
                logger.warning("%s and %s: %s", other.leaf_id, leaf_id, exc)
        logger.info(
            "kept the other version of %s, edited on two machines, as %s", leaf_id, other.leaf_id
        )
        return other.leaf_id

    def _abort_merge(self, done: subprocess.CompletedProcess[str]) -> None:
        git = self.git
        conflicted = git.paths("diff", "--name-only", "--diff-filter=U", "-z")
        if (self.folder / ".git" / "MERGE_HEAD").exists():
            git.run("merge", "--abort", check=False)
        self._settle_leaf_merges()  # what the undone merge stashed is discarded
        text = done.stderr + done.stdout
        if conflicted:
            raise SyncError(
                "conflict",
                f"the remote's changes conflict with this machine's in {', '.join(conflicted[:5])}"
                " (files that are not IHMT's changed on both machines, or a memory the leaf "
                "merge driver could not merge: is the Python it names still there?); the merge "
                "was undone and nothing was lost: keep one version of each file and run "
                "'ihmt sync' again",
                conflicted,
            )
        overwritten = re.findall(r"^\t(\S.*)$", text, flags=re.MULTILINE)
        raise SyncError(
            "conflict",
            f"git could not merge the remote's changes: {_first_line(text)}"
            + (f" ({', '.join(overwritten[:5])})" if overwritten else "")
            + "; nothing was lost",
            overwritten,
        )

    def _apply_since(self, before: str, head: str) -> PulledChanges:
        """Refresh the derived state for the files that changed from ``before`` to ``head``
        and record ``head`` as refreshed."""
        git = self.git
        if not head or before == head:
            self._save_state(refreshed=head, merging=None)
            return PulledChanges()
        diff = (
            git.run("diff", "--name-only", "--no-renames", "-z", before, head, check=False)
            if before
            else None
        )
        if diff is not None and diff.returncode == 0:
            paths = [p for p in diff.stdout.split("\0") if p]
        else:  # no refresh recorded, or its commit is gone (a purge rewrote it): all
            paths = git.paths("ls-tree", "-r", "--name-only", "-z", head)
        changed = [p for p in paths if _replicated(p)]
        pulled = PulledChanges()
        # In slices, each under the lock: a large pull never keeps an agent's save
        # waiting for more than one slice. Should the process die midway, the refreshed
        # commit is still ``before`` and the next sync applies the whole span again.
        for start in range(0, len(changed), APPLY_SLICE):
            with self.store.locked():
                applied = self.memory.apply_pulled(changed[start : start + APPLY_SLICE])
            pulled = pulled.merged(
                PulledChanges(
                    added=tuple(applied.added),
                    annotated=tuple(applied.annotated),
                    removed=tuple(applied.removed),
                )
            )
        self._save_state(refreshed=head, merging=None)
        logger.info("refreshed %d pulled path(s): %s", len(changed), pulled.describe())
        return pulled

    # step 4
    def _push(self, branch: str) -> bool:
        """Push; False when the remote rejected it because it moved on meanwhile."""
        git = self.git
        if not git.rev("HEAD"):
            return True
        upstream = f"refs/remotes/{REMOTE}/{branch}"
        if git.rev(upstream) == git.rev("HEAD"):
            return True
        done = git.run(
            "push",
            "--porcelain",
            "--quiet",
            REMOTE,
            f"HEAD:refs/heads/{branch}",
            check=False,
            timeout=NETWORK_TIMEOUT_S,
        )
        if done.returncode == 0:
            return True
        text = done.stdout + done.stderr
        if "[remote rejected]" in text:
            locked = re.search(r"Unable to create '([^']+\.lock)': File exists", text)
            if locked:
                # Another push holds the branch there now, or a killed one left its lock:
                # pull and try again; a lock still there after every round is named.
                self._remote_lock = os.path.normpath(locked.group(1))
                return False
            if _REMOTE_RACE.search(text):
                return False  # the branch moved while this push waited: pull, merge, retry
            raise SyncError(
                "rejected",
                f"the remote refused the push: {_porcelain_reason(text)}; everything stays "
                "committed here for the next sync",
            )
        here = "\n".join(line for line in text.splitlines() if not line.startswith("remote:"))
        if _LOCAL_RACE.search(here):
            # Pushed or not, another local git held the remote-tracking ref: the next
            # round fetches, finds what the remote has, and pushes what it lacks.
            self._wait_for_git()
            return False
        if "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text:
            return False
        raise SyncError(
            "unreachable",
            f"cannot push to {self._remote_url()}: {_first_line(done.stderr)}; everything "
            "stays committed here for the next sync",
        )

    # ------------------------------------------------------------------ init
    def init(self, remote: str) -> SyncInit:
        """Make the store folder a git repository synced with ``remote``.

        An existing repository is adopted. When the remote already holds a memory, it is
        merged into this one (an empty store and a remote make a clone); a remote whose
        history is not an IHMT memory is refused.

        Raises:
            SyncError: git missing, the remote unreachable or not a memory, a dirty index.
        """
        if not remote.strip():
            raise ValueError("the remote is empty; give a git URL or a path")
        remote = remote.strip()
        if Path(remote).expanduser().is_dir():
            remote = str(Path(remote).expanduser().resolve())
        git = self.git
        with self.store.locked():
            repository: Literal["created", "adopted"] = "adopted"
            if not (self.folder / ".git").exists():
                git.run("init", "--quiet")
                git.run("symbolic-ref", "HEAD", f"refs/heads/{DEFAULT_BRANCH}")
                repository = "created"
            else:
                top = git.run("rev-parse", "--show-toplevel", check=False).stdout.strip()
                if not top or Path(top).resolve() != self.folder.resolve():
                    raise SyncError(
                        "git_failed",
                        f"{self.folder}/.git is not a git repository of this folder; move it "
                        "away and run 'ihmt sync --init' again",
                    )
            self._write_ignore_files()
            self._configure()
            if self._remote_url():
                git.run("remote", "set-url", REMOTE, remote)
            else:
                git.run("remote", "add", REMOTE, remote)
        branch = self._require()
        self._fetch()
        remote_branch = self._remote_branch()
        if remote_branch and remote_branch != branch and not git.rev("HEAD"):
            git.run("symbolic-ref", "HEAD", f"refs/heads/{remote_branch}")
            branch = remote_branch
        upstream = f"refs/remotes/{REMOTE}/{branch}"
        remote_has = bool(git.rev(upstream))
        if remote_branch and not remote_has:
            raise SyncError(
                "unrelated",
                f"the remote's branch is {remote_branch!r} and this memory's is {branch!r}; "
                f"rename one (git -C {self.folder} branch -m {remote_branch}) and run "
                "'ihmt sync --init' again",
            )
        if remote_has and not git.ok("cat-file", "-e", f"{upstream}:ihmt.config.json"):
            raise SyncError(
                "unrelated",
                f"{remote} holds a history that is not an IHMT memory; nothing was merged: give "
                "an empty repository, or one another machine synced a memory to",
            )
        pulled = PulledChanges()
        with self.store.locked():
            self._recover()
            if remote_has and not git.rev("HEAD") and not self._has_memory_files():
                # An empty store and a remote: a clone, with no commit of its own. Nothing
                # is refreshed yet: should the process die after the checkout, the next
                # sync refreshes every file of it.
                self._save_state(refreshed="")
                git.run("checkout", "--quiet", "--force", "-B", branch, upstream)
            else:
                self._commit_into(_Commit())
                self._untrack_derived()
                if remote_has:
                    if self._merge(branch) is not None and self._settle_leaf_merges():
                        self._commit_into(_Commit())
                elif self._state().get("refreshed") is None:
                    self._save_state(refreshed=git.rev("HEAD"))
            pulled = self._catch_up()
        git.run("config", f"branch.{branch}.remote", REMOTE)
        git.run("config", f"branch.{branch}.merge", f"refs/heads/{branch}")
        pushed = self._push(branch)
        if not pushed:
            raise SyncError(
                "rejected",
                "another machine pushed while this one was set up; run 'ihmt sync' to finish",
            )
        head = git.rev("HEAD")
        self._save_state(last_sync=now_timestamp(), pushed=head)
        return SyncInit(
            remote=remote,
            branch=branch,
            repository=repository,
            remote_had_store=remote_has,
            pulled=pulled,
            pushed=pushed,
            head=head,
        )

    def _has_memory_files(self) -> bool:
        """Whether the store holds a memory file (a leaf, a note or a tombstone)."""
        for top in Store.REPLICATED:
            folder = self.folder / top
            if folder.is_dir() and any(p.is_file() for p in folder.rglob("*")):
                return True
        return False

    def _write_ignore_files(self) -> None:
        ignore = self.folder / ".gitignore"
        present = ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else []
        missing = [p for p in Store.UNREPLICATED if p not in present]
        if missing or not ignore.exists():
            head = [] if present else ["# Written by 'ihmt sync': what each machine derives."]
            lines = [*present, *head, *missing]
            ignore.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _remote_branch(self) -> str:
        """The remote's default branch ('' when the remote has none)."""
        done = self.git.run(
            "ls-remote", "--symref", REMOTE, "HEAD", check=False, timeout=NETWORK_TIMEOUT_S
        )
        match = re.search(r"^ref: refs/heads/(\S+)\tHEAD$", done.stdout, flags=re.MULTILINE)
        heads = [
            ref.rsplit("/", 1)[-1]
            for ref in self.git.out(
                "for-each-ref", "--format=%(refname)", f"refs/remotes/{REMOTE}/"
            ).splitlines()
            if not ref.endswith("/HEAD")
        ]
        if match and match.group(1) in heads:
            return match.group(1)
        for name in (DEFAULT_BRANCH, "master"):
            if name in heads:
                return name
        return heads[0] if heads else ""

    # ------------------------------------------------------------------ purge
    def purge(self, leaf_id: str) -> PurgeReport:
        """Rewrite history so that no commit holds the forgotten memory ``leaf_id``, then
        force-push. Its tombstone stays (it holds the id, never the text), and the id is
        recorded in ``.ihmt-purged`` so every other clone rewrites its own history the
        same way on its next sync.

        Raises:
            ValueError: not a memory id.
            SyncError: the memory is not forgotten (``not_forgotten``), or a sync step failed.
        """
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}", leaf_id):
            raise ValueError(f"{leaf_id!r} is not a memory id")
        branch = self._require()
        entry = self.store.entry(leaf_id)
        if entry is not None:
            raise SyncError(
                "not_forgotten",
                f"{leaf_id} is a live memory; forget it first ('ihmt forget {leaf_id}'), then "
                f"purge it ('ihmt sync --purge {leaf_id}')",
            )
        # Everything else goes first (the remote's history merged in, even an old one a
        # failed purge left there), so that the forced push drops no one's work.
        self._sync(finishing_purge=True)
        git = self.git
        paths = ReplicaFile.memory_globs(leaf_id)
        with self.store.locked():
            # --full-history: without it git prunes a merged side branch whose files equal
            # the other side's, exactly where an old history merged back in hides.
            held = git.out("log", "--all", "--full-history", "--format=%H", "--", *paths)
            if not held:
                self._save_state(purge_pending=None)
                return PurgeReport(
                    id=leaf_id, paths=paths, rewritten=False, pushed=False, others=""
                )
            before = git.rev(f"refs/remotes/{REMOTE}/{branch}")
            self._rewrite(paths, [f"refs/heads/{branch}"])
            self._record_purged(leaf_id)
            git.run("add", "--", PURGED_FILE)
            if git.paths("diff", "--cached", "--name-only", "-z"):
                self._identity()
                git.run(
                    "commit",
                    "--quiet",
                    "--no-verify",
                    "-m",
                    f"ihmt sync on {self.host}: purged {leaf_id}",
                )
            # Until the forced push lands, a plain sync would merge the old history back.
            self._save_state(
                refreshed=git.rev("HEAD"),
                purged=sorted({*self._purged_here(), leaf_id}),
                purge_pending=leaf_id,
            )
        done = git.run(
            "push",
            "--porcelain",
            "--quiet",
            f"--force-with-lease=refs/heads/{branch}:{before}",
            REMOTE,
            f"HEAD:refs/heads/{branch}",
            check=False,
            timeout=NETWORK_TIMEOUT_S,
        )
        if done.returncode != 0:
            raise SyncError(
                "rejected",
                f"{leaf_id} was purged from this clone, but the remote refused the forced "
                f"push ({_porcelain_reason(done.stdout + done.stderr)}; a protected branch "
                "must allow it); 'ihmt sync' waits until "
                f"'ihmt sync --purge {leaf_id}' has finished",
            )
        git.run("fetch", "--quiet", "--no-tags", "--prune", REMOTE, timeout=NETWORK_TIMEOUT_S)
        self._drop_unreachable()
        self._save_state(last_sync=now_timestamp(), pushed=git.rev("HEAD"), purge_pending=None)
        return PurgeReport(
            id=leaf_id,
            paths=paths,
            rewritten=True,
            pushed=True,
            others=(
                "Every other clone rewrites its own history on its next 'ihmt sync' (it "
                "reads the purge from the remote); until each has synced, its copy of the "
                "history still holds the memory. A hosted remote (GitHub, GitLab) may keep "
                "the old commits reachable by hash until its own garbage collection: ask the "
                "host to purge them, or recreate the remote repository."
            ),
        )

    def _purged_here(self) -> list[str]:
        purged = self._state().get("purged")
        return [str(p) for p in purged] if isinstance(purged, list) else []

    def _record_purged(self, leaf_id: str) -> None:
        path = self.folder / PURGED_FILE
        present = path.read_text(encoding="utf-8").split() if path.exists() else []
        if leaf_id not in present:
            path.write_text("\n".join([*present, leaf_id]) + "\n", encoding="utf-8")

    def _rewrite(self, paths: Sequence[str], refs: Sequence[str]) -> None:
        """Remove ``paths`` from every commit of ``refs``, deterministically: the same
        commits rewritten on two clones give the same hashes (no commit is dropped)."""
        git = self.git
        quoted = " ".join(_shell_quote(p) for p in paths)
        git.run(
            "filter-branch",
            "-f",
            "--index-filter",
            f"git rm -r -q --cached --ignore-unmatch -- {quoted}",
            "--",
            *refs,
            extra_env={"FILTER_BRANCH_SQUELCH_WARNING": "1"},
        )
        for ref in git.out("for-each-ref", "--format=%(refname)", "refs/original/").splitlines():
            git.run("update-ref", "-d", ref)

    def _drop_unreachable(self) -> None:
        """Delete every object no branch reaches any more (the purged texts among them)."""
        git = self.git
        git.run("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
        git.run("gc", "--quiet", "--prune=now")

    def _follow_purges(self, branch: str) -> list[str]:
        """Rewrite this clone's history for the ids another machine purged. Under the lock."""
        git = self.git
        upstream = f"refs/remotes/{REMOTE}/{branch}"
        listed = git.run("show", f"{upstream}:{PURGED_FILE}", check=False)
        if listed.returncode != 0:
            return []
        done = set(self._purged_here())
        todo = [i for i in listed.stdout.split() if i not in done and re.fullmatch(r"[\w.-]+", i)]
        if not todo:
            return []
        # A memory saved again since its purge (same text, same id: no tombstone any
        # more) is live: its history is not rewritten away from under it.
        gone = [i for i in todo if git.ok("cat-file", "-e", f"{upstream}:forgotten/{i}.json")]
        paths = [p for leaf_id in gone for p in ReplicaFile.memory_globs(leaf_id)]
        held = paths and git.out(
            "log", f"refs/heads/{branch}", "--full-history", "--format=%H", "--", *paths
        )
        if held:
            in_step = self._state().get("refreshed") == git.rev("HEAD")
            self._rewrite(paths, [f"refs/heads/{branch}"])
            self._drop_unreachable()
            # The files on disk are those of the rewritten HEAD (less the purged ones,
            # which the tombstones remove from the derived state).
            if in_step:
                self._save_state(refreshed=git.rev("HEAD"))
        self._save_state(purged=sorted(done | set(todo)))
        logger.info("followed the purge of %d memory(ies)", len(gone))
        return gone


@dataclass
class _Commit:
    sha: str = ""
    message: str = ""
    counts: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------------- background
class BackgroundSync:
    """Runs :meth:`Sync.sync` every ``period`` seconds in a daemon thread (the MCP
    server's ``IHMT_SYNC_EVERY``).

    Each round opens a :class:`~ihmt_mcp.Memory` of its own with ``open_memory`` (the
    store lock serialises it with the server's), and skips the store, without opening
    it, while ``folder`` is not synced. A failure is logged and the next round tries
    again: nothing a round does can stop the server.
    """

    def __init__(
        self, open_memory: Callable[[], Memory], period: float, *, folder: Path | None = None
    ) -> None:
        if period <= 0:
            raise ValueError("the sync period must be positive")
        self._open_memory = open_memory
        self.period = period
        self.folder = folder
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.rounds = 0
        """Rounds run so far (skipped ones included)."""
        self.last_error = ""
        """What the last round failed with ('' when it did not fail)."""

    def start(self) -> None:
        """Start the thread (its first round runs one period from now)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="ihmt-sync", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to end after its current round, and wait for it (bounded)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run_once(self) -> SyncReport | None:
        """One round: None when the store is not synced, or the round failed (logged)."""
        try:
            if self.folder is not None and not is_synced(self.folder):
                return None
            memory = self._open_memory()
            try:
                sync = Sync(memory)
                if not sync.is_initialised():
                    return None
                report = sync.sync()
            finally:
                memory.close()
        except Exception as exc:  # noqa: BLE001 (a background round must never end the server)
            self.last_error = str(exc)
            logger.warning("background sync failed: %s", exc)
            return None
        finally:
            self.rounds += 1
        self.last_error = ""
        logger.info("background sync: %s", report.render())
        return report

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.run_once()


def parse_period(text: str) -> float | None:
    """Seconds in a period like ``10m``, ``30s``, ``2h`` or ``90``; None for off/empty.

    Raises:
        ValueError: not a period, or shorter than a second.
    """
    value = text.strip().lower()
    if value in ("", "0", "off", "no", "false", "never"):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smh]?)", value)
    if match is None:
        raise ValueError(f"{text!r} is not a period; use e.g. 10m, 30s or 1h")
    seconds = float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
    if seconds < 1:
        raise ValueError(f"{text!r} is too short a sync period; use 1s or more (10m is usual)")
    return seconds


EVERY_KEY = "ihmt.every"
"""The clone's git config key ``ihmt sync --every`` writes."""


def background_period(folder: Path) -> str:
    """The period ``ihmt sync --every`` set for the clone at ``folder``, or "" (none, no
    clone there, or no git: the MCP server asks it once, as it starts)."""
    config = folder / ".git" / "config"
    if not config.is_file() or shutil.which("git") is None:
        return ""
    try:
        done = subprocess.run(
            ["git", "config", "--file", str(config), "--get", EVERY_KEY],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


# ---------------------------------------------------------------------- helpers
def is_synced(folder: Path) -> bool:
    """Whether the store at ``folder`` is synced with git: its own repository, with a
    remote (read from ``.git/config``, without running git: ``forget`` asks it)."""
    config = folder / ".git" / "config"
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r'^\s*\[remote\s+"[^"]+"\]', text, flags=re.MULTILINE) is not None


def _replicated(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in Store.REPLICATED)


def _tracked(path: str) -> bool:
    """Whether sync itself commits ``path``: the memory's files and its own setup."""
    return _replicated(path) or path in SETUP_FILES


def _other_version(leaf_id: str, data: bytes, current: Entry | None) -> Leaf | None:
    """The memory a replaced version of ``leaf_id`` becomes: its own header and text,
    with the id its text gives at the same place (never the leaf's own id)."""
    try:
        leaf = ReplicaFile.leaf(data).evolve(leaf_id=leaf_id)
    except CorruptFileError:
        # Its header was damaged by hand: the text, dated and filed as the leaf is.
        if current is None:
            return None
        try:
            text = ReplicaFile.text(data).decode("utf-8")
        except UnicodeDecodeError:
            return None
        leaf = Leaf(leaf_id=leaf_id, text=text, timestamp=current.timestamp, domain=current.domain)
    text = leaf.text
    match = re.search(r"-(\d{4,})-[0-9a-f]+$", leaf_id)
    position = int(match.group(1)) if match else 0
    new_id = leaf_id
    while new_id == leaf_id:
        new_id = leaf_id_for(domain=leaf.domain, source=leaf.source, position=position, text=text)
        position += 1
    return leaf.evolve(leaf_id=new_id)


def _note_kind(path: Path) -> str:
    """How a sync's message counts a new note: ``corrected``, ``restored`` or
    ``annotated``."""
    try:
        op = ReplicaFile.note_op(path.read_bytes())
    except OSError:
        op = ""
    return {"outdated": "corrected", "restored": "restored"}.get(op, "annotated")


_COUNT_ORDER = ("saved", "corrected", "restored", "annotated", "forgotten", "edited", "settings")


def _describe_counts(counts: dict[str, int]) -> str:
    words = {"settings": "settings changed", "setup": "set up"}
    parts = [
        f"{counts[k]} {words.get(k, k)}" if k not in words else words[k]
        for k in (*_COUNT_ORDER, "setup")
        if counts.get(k)
    ]
    return ", ".join(parts) or "changes"


def _porcelain_reason(text: str) -> str:
    match = re.search(r"\[(?:remote )?rejected\]\s*\(?([^)\n]*)\)?", text)
    return match.group(1).strip() if match else _first_line(text)


def _short_reason(message: str) -> str:
    return message.split(": ", 1)[1] if message.startswith("cannot reach") else message


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _blob_ids(git: _Git, commit: str, paths: Sequence[str]) -> dict[str, str]:
    """The blob id of each of ``paths`` in ``commit`` (paths it lacks are left out): one
    ``git ls-tree``. (The merge driver's ``_blobs`` reads contents, with no store import.)"""
    listed = git.run("ls-tree", "-z", "--full-tree", commit, "--", *paths).stdout
    found: dict[str, str] = {}
    for entry in listed.split("\0"):
        if "\t" in entry:
            meta, path = entry.split("\t", 1)
            found[path] = meta.split()[2]
    return found


def _git_locks(git_dir: Path) -> list[Path]:
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


def _git_runs_in(folder: Path) -> bool:
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
        for lock in _git_locks(folder / ".git")
        if lock.exists()
    )
