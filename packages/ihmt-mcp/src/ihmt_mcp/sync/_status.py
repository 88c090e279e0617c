"""Status and settings of a clone: ahead and behind (``ihmt sync --status``), the
background period (``ihmt sync --every``, kept in the clone's git config), and whether
a folder is synced at all (read from ``.git/config`` without running git)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from ihmt_mcp.sync._clone import REMOTE, Clone
from ihmt_mcp.sync._records import SyncError, SyncStatus
from ihmt_store import Store

__all__ = [
    "EVERY_KEY",
    "MAX_PERIOD_S",
    "background_period",
    "changed_files",
    "is_synced",
    "parse_period",
    "set_every",
    "status",
]

MAX_PERIOD_S = 24 * 3600.0
"""The longest background period: a day (a server is rarely up longer between syncs;
a longer wait is what ``--every off`` and a manual ``ihmt sync`` are for)."""
EVERY_KEY = "ihmt.every"
"""The clone's git config key ``ihmt sync --every`` writes."""


def status(clone: Clone) -> SyncStatus:
    """Fetch, then count commits ahead and behind and memory files not committed.

    An unreachable remote is not an error here: the record says so, with the counts
    as of the last fetch.

    Raises:
        SyncError: git missing, not initialised, a detached HEAD.
    """
    branch = clone._require()
    git = clone.git
    error = ""
    try:
        clone._fetch()
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
        remote=clone._remote_url(),
        branch=branch,
        reachable=not error,
        ahead=ahead,
        behind=behind,
        uncommitted=len(changed_files(clone)),
        last_sync=clone._state().get("last_sync"),
        error=_short_reason(error),
        every=background_period(clone.folder),
    )


def set_every(clone: Clone, period: str) -> str:
    """Have the MCP server sync this clone every ``period`` (``10m``, ``1h``; ``off``
    stops it). Kept in the clone's git config (``ihmt.every``): a setting of this
    machine, never replicated, gone with the clone. Returns the period kept, or ""
    for off.

    Raises:
        SyncError: git missing, not initialised; ``bad_period`` for a period that is
            not one.
    """
    clone._require()
    try:
        seconds = parse_period(period)
    except ValueError as exc:
        raise SyncError("bad_period", str(exc)) from None
    if seconds is None:
        clone.git.run("config", "--unset-all", EVERY_KEY, check=False)
        return ""
    kept = period.strip().lower()
    clone.git.run("config", EVERY_KEY, kept)
    return kept


def changed_files(clone: Clone) -> list[str]:
    """Replicated paths that differ from HEAD (untracked ones included)."""
    done = clone.git.run(
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


def parse_period(text: str) -> float | None:
    """Seconds in a period like ``10m``, ``30s``, ``2h`` or ``90``; None for off/empty.

    Raises:
        ValueError: not a period, or shorter than a second.
    """
    value = text.strip().lower()
    if value in ("", "0", "off", "no", "false", "never"):
        return None
    shown = repr(text) if len(text) <= 40 else repr(text[:39] + "…")
    match = re.fullmatch(r"(\d{1,12}(?:\.\d{1,6})?)\s*([smh]?)", value)
    if match is None:
        if re.fullmatch(r"\d+(?:\.\d+)?\s*[smh]?", value):
            raise ValueError(f"{shown} is too long a sync period; use at most 24h")
        raise ValueError(f"{shown} is not a period; use e.g. 10m, 30s or 1h")
    seconds = float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
    if seconds < 1:
        raise ValueError(f"{shown} is too short a sync period; use 1s or more (10m is usual)")
    if seconds > MAX_PERIOD_S:
        raise ValueError(f"{shown} is too long a sync period; use at most 24h")
    return seconds


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


def is_synced(folder: Path) -> bool:
    """Whether the store at ``folder`` is synced with git: its own repository, with a
    remote (read from ``.git/config``, without running git: ``forget`` asks it)."""
    config = folder / ".git" / "config"
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r'^\s*\[remote\s+"[^"]+"\]', text, flags=re.MULTILINE) is not None


def _short_reason(message: str) -> str:
    return message.split(": ", 1)[1] if message.startswith("cannot reach") else message
