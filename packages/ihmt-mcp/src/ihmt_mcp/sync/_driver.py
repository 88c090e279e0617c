"""``Sync``: the façade of ``ihmt sync`` (init, sync, status, purge), each step in order.

The steps live in the modules beside this one (:mod:`._recovery`, :mod:`._commit`,
:mod:`._merge`, :mod:`._refresh`, :mod:`._push`, :mod:`._purge`); :class:`Sync` runs
them, each through a method of its own (``_fetch``, ``_commit_into``, ``_merge``,
``_push``…) so that a subclass can wrap one: a test forcing a race, the benchmark timing
each phase (``tools/bench/sync.py``).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Literal

from ihmt_mcp.sync._clone import REMOTE, Clone
from ihmt_mcp.sync._commit import (
    Commit,
    commit_into,
    describe_counts,
    sent_counts,
    untrack_derived,
)
from ihmt_mcp.sync._config_fix import take_remote_config
from ihmt_mcp.sync._hand_edits import settle_leaf_merges
from ihmt_mcp.sync._merge import merge
from ihmt_mcp.sync._purge import follow_purges, purge_history
from ihmt_mcp.sync._push import push
from ihmt_mcp.sync._records import (
    PulledChanges,
    PurgeReport,
    SyncError,
    SyncInit,
    SyncReport,
    SyncStatus,
)
from ihmt_mcp.sync._recovery import recover, remove_dead_locks
from ihmt_mcp.sync._refresh import catch_up
from ihmt_mcp.sync._setup import (
    create_repository,
    has_memory_files,
    remote_default_branch,
    write_ignore_files,
)
from ihmt_mcp.sync._status import set_every, status
from ihmt_store import now_timestamp

logger = logging.getLogger(__name__)

__all__ = ["MAX_PUSH_RETRIES", "Sync"]

MAX_PUSH_RETRIES = 3


class Sync(Clone):
    """Drives git for the store folder of one :class:`~ihmt_mcp.Memory`.

    Args:
        memory: the memory whose store folder is (or becomes) the repository.
        host: the name commit messages give this machine (default: the host name).
    """

    # ------------------------------------------------------------------ status
    def status(self) -> SyncStatus:
        """Fetch, then count commits ahead and behind and memory files not committed.

        An unreachable remote is not an error here: the record says so, with the counts
        as of the last fetch.

        Raises:
            SyncError: git missing, not initialised, a detached HEAD.
        """
        return status(self)

    def set_every(self, period: str) -> str:
        """Have the MCP server sync this clone every ``period`` (``10m``, ``1h``; ``off``
        stops it). Kept in the clone's git config (``ihmt.every``): a setting of this
        machine, never replicated, gone with the clone. Returns the period kept, or ""
        for off.

        Raises:
            SyncError: git missing, not initialised; ``bad_period`` for a period that is
                not one.
        """
        return set_every(self, period)

    # ------------------------------------------------------------------ sync
    def sync(self) -> SyncReport:
        """Commit, pull, refresh, push: see the package's docstring (:mod:`ihmt_mcp.sync`).

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
        self.warnings = []
        with self.store.locked():
            remove_dead_locks(self)  # a killed git's config.lock would stop the settings
            self._configure()
            self._recover()
        followed: list[str] = []
        commit_info = Commit()
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
            sent_from = self.git.rev(f"refs/remotes/{REMOTE}/{branch}")
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
        # What the remote did not have: this sync's commit, and any a failed sync left.
        sent = sent_counts(self, sent_from, head) if sent_from else commit_info.counts
        return SyncReport(
            commit=commit_info.sha,
            message=commit_info.message,
            saved=sent.get("saved", 0),
            corrected=sent.get("corrected", 0),
            forgotten=sent.get("forgotten", 0),
            sent=describe_counts(sent) if sent else "",
            pulled=pulled,
            pushed=pushed,
            retries=retries,
            head=head,
            followed_purges=tuple(followed),
            warnings=tuple(self.warnings),
        )

    @staticmethod
    def take_remote_config(folder: Path, *, host: str | None = None) -> str:
        """When the clone at ``folder`` has a committed ``ihmt.config.json`` no command can
        read (so the store cannot open), take the remote's valid one, with git alone, so
        that a sync can run again; one line saying what was done ("" when the config
        is valid).

        Raises:
            SyncError: ``bad_config`` when it was changed here by hand (never
                overwritten) or the remote's is not valid either; ``unreachable``.
        """
        return take_remote_config(folder, host=host)

    # ------------------------------------------------------------------ the steps
    def _recover(self) -> None:
        """Step 1: finish what a killed sync left (:func:`._recovery.recover`)."""
        recover(self)

    def _commit_into(self, info: Commit) -> None:
        """Step 3a: commit this machine's changes (:func:`._commit.commit_into`)."""
        commit_into(self, info)

    def _follow_purges(self, branch: str) -> list[str]:
        """Rewrite history for the ids another machine purged (:func:`._purge.follow_purges`)."""
        return follow_purges(self, branch)

    def _merge(self, branch: str) -> tuple[str, str] | None:
        """Step 3b: merge the fetched branch (:func:`._merge.merge`)."""
        return merge(self, branch)

    def _settle_leaf_merges(self) -> list[str]:
        """Save the versions the leaf merge driver set apart (:mod:`._hand_edits`)."""
        return settle_leaf_merges(self)

    def _catch_up(self) -> PulledChanges:
        """Refresh the derived state up to HEAD (:func:`._refresh.catch_up`)."""
        return catch_up(self)

    def _push(self, branch: str) -> bool:
        """Step 4: push; False when the remote moved on meanwhile (:func:`._push.push`)."""
        return push(self, branch)

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
                create_repository(self)
                repository = "created"
            else:
                top = git.run("rev-parse", "--show-toplevel", check=False).stdout.strip()
                if not top or Path(top).resolve() != self.folder.resolve():
                    raise SyncError(
                        "git_failed",
                        f"{self.folder}/.git is not a git repository of this folder; move it "
                        "away and run 'ihmt sync --init' again",
                    )
                # An --init killed in 'git config' or 'git remote' left the config locked.
                remove_dead_locks(self)
            write_ignore_files(self)
            self._configure()
            if self._remote_url():
                git.run("remote", "set-url", REMOTE, remote)
            else:
                git.run("remote", "add", REMOTE, remote)
        branch = self._require()
        self._fetch()
        remote_branch = remote_default_branch(self)
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
            if remote_has and not git.rev("HEAD") and not has_memory_files(self):
                # An empty store and a remote: a clone, with no commit of its own. Nothing
                # is refreshed yet: should the process die after the checkout, the next
                # sync refreshes every file of it.
                self._save_state(refreshed="")
                git.run("checkout", "--quiet", "--force", "-B", branch, upstream)
            else:
                self._commit_into(Commit())
                untrack_derived(self)
                if remote_has:
                    if self._merge(branch) is not None and self._settle_leaf_merges():
                        self._commit_into(Commit())
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
        return purge_history(self, leaf_id, branch)
