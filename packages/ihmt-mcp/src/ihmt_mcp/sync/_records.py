"""What a sync returns and raises: :class:`SyncError` and the records of each command."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ihmt_mcp.errors import MemoryServiceError

__all__ = [
    "PulledChanges",
    "PurgeReport",
    "SyncError",
    "SyncFailure",
    "SyncInit",
    "SyncReport",
    "SyncStatus",
]


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
    "newer_format",
    "bad_config",
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
    warnings: tuple[str, ...] = ()
    """What the sync skipped or kept, one line each: a pulled file it could not use, a
    memory another machine deleted without a forget, a memory holding a secret."""
    sent: str = ""
    """What the push sent, counted from the files the remote did not have (``3 saved,
    1 corrected``; commits a failed sync left are counted too); "" when nothing."""

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
            "warnings": list(self.warnings),
        }

    def render(self) -> str:
        """One line; the warnings are not in it (``ihmt sync`` prints them on stderr)."""
        sent = self.sent or (
            self.message.split(": ", 1)[1] if ": " in self.message else "nothing to send"
        )
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
