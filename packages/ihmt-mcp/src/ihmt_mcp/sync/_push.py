"""Step 4 of a sync: the push, and which rejections mean "pull again and retry"."""

from __future__ import annotations

import os
import re

from ihmt_mcp.sync._clone import REMOTE, Clone
from ihmt_mcp.sync._git import (
    LOCAL_RACE,
    NETWORK_TIMEOUT_S,
    REMOTE_RACE,
    first_line,
    porcelain_reason,
)
from ihmt_mcp.sync._records import SyncError

__all__ = ["push"]


def push(clone: Clone, branch: str) -> bool:
    """Push; False when the remote rejected it because it moved on meanwhile."""
    git = clone.git
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
            clone._remote_lock = os.path.normpath(locked.group(1))
            return False
        if REMOTE_RACE.search(text):
            return False  # the branch moved while this push waited: pull, merge, retry
        raise SyncError(
            "rejected",
            f"the remote refused the push: {porcelain_reason(text)}; everything stays "
            "committed here for the next sync",
        )
    here = "\n".join(line for line in text.splitlines() if not line.startswith("remote:"))
    if LOCAL_RACE.search(here):
        # Pushed or not, another local git held the remote-tracking ref: the next
        # round fetches, finds what the remote has, and pushes what it lacks.
        clone._wait_for_git()
        return False
    if "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text:
        return False
    raise SyncError(
        "unreachable",
        f"cannot push to {clone._remote_url()}: {first_line(done.stderr)}; everything "
        "stays committed here for the next sync",
    )
