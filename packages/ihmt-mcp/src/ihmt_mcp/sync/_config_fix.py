"""A clone whose committed ``ihmt.config.json`` cannot be read: the remote's valid one
taken, with git alone (no command can open the store meanwhile, ``ihmt sync`` included).

A config pulled before syncs refused bad ones (a typo, a newer ``format_version``), or
committed by hand, stops every command on this machine. Taking the remote's when it is
valid lets a fix pushed from another machine come back: the next sync merges the rest.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path

from ihmt_mcp.sync._clone import REMOTE
from ihmt_mcp.sync._git import NETWORK_TIMEOUT_S, Git, first_line
from ihmt_mcp.sync._records import SyncError
from ihmt_store import ReplicaFile

logger = logging.getLogger(__name__)

__all__ = ["CONFIG", "take_remote_config"]

CONFIG = "ihmt.config.json"


def take_remote_config(folder: Path, *, host: str | None = None) -> str:
    """Replace the clone's invalid committed config with the remote's, in a commit; one
    line saying so.

    Raises:
        SyncError: not synced, unreachable, the config changed by hand here
            (``bad_config``: a person's file is never overwritten), or no valid config
            on the remote either.
    """
    here = folder / CONFIG
    try:
        local = ReplicaFile.config_problem(here.read_bytes())
    except OSError as exc:
        local = f"cannot read it: {exc.strerror}"
    if not local:
        return ""
    git = Git(folder)
    url = git.run("config", "--get", f"remote.{REMOTE}.url", check=False).stdout.strip()
    branch = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    if not (folder / ".git").is_dir() or not url or not branch:
        raise SyncError("bad_config", f"{here} is not valid ({local}); fix it by hand")
    if not git.ok("diff", "--quiet", "HEAD", "--", CONFIG):
        raise SyncError(
            "bad_config",
            f"{here} is not valid ({local}) and was changed on this machine: fix it, or "
            f"take back the synced one (git -C {folder} checkout {CONFIG}), then run "
            "'ihmt sync' again",
        )
    fetched = git.run(
        "fetch", "--quiet", "--no-tags", REMOTE, check=False, timeout=NETWORK_TIMEOUT_S
    )
    if fetched.returncode != 0:
        raise SyncError(
            "unreachable", f"cannot reach the remote {url}: {first_line(fetched.stderr)}"
        )
    blob = git.run("rev-parse", "-q", "--verify", f"{REMOTE}/{branch}:{CONFIG}", check=False)
    data = git.blob(blob.stdout.strip()) if blob.returncode == 0 else b""
    theirs = ReplicaFile.config_problem(data) if data else "there is none"
    if theirs:
        advice = (
            "upgrade ihmt"
            if local.startswith("newer") and theirs.startswith("newer")
            else f"fix it by hand and commit it (git -C {folder} commit {CONFIG})"
        )
        raise SyncError(
            "bad_config",
            f"{here} is not valid ({local}), and the remote's is not either ({theirs}): "
            f"{advice}, then run 'ihmt sync' again",
        )
    here.write_bytes(data)
    git.run("add", "--", CONFIG)
    name = host or socket.gethostname().split(".")[0] or "this machine"
    if git.run("config", "--get", "user.email", check=False).returncode != 0:
        git.run("config", "user.name", f"ihmt on {name}")
        git.run("config", "user.email", f"ihmt@{name}")
    message = f"ihmt sync on {name}: settings taken from the remote"
    git.run("commit", "--quiet", "--no-verify", "-m", message, "--", CONFIG)
    logger.warning("%s was not valid (%s); the remote's was taken", here, local)
    return f"{CONFIG} here was not valid ({local}): the remote's was taken"
