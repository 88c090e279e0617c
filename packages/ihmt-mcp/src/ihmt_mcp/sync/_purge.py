"""``ihmt sync --purge``: a forgotten memory rewritten out of every commit, and every
other clone following that rewrite on its next sync (``.ihmt-purged``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ihmt_mcp.sync._clone import PURGED_FILE, REMOTE, Clone
from ihmt_mcp.sync._git import NETWORK_TIMEOUT_S, porcelain_reason, shell_quote
from ihmt_mcp.sync._records import PurgeReport, SyncError
from ihmt_store import ReplicaFile, now_timestamp

logger = logging.getLogger(__name__)

__all__ = ["follow_purges", "purge_history"]


def purge_history(clone: Clone, leaf_id: str, branch: str) -> PurgeReport:
    """Rewrite history so that no commit of this clone holds ``leaf_id`` (forgotten, and
    everything else synced first: :meth:`Sync.purge`), record the purge, force-push."""
    git = clone.git
    paths = ReplicaFile.memory_globs(leaf_id)
    with clone.store.locked():
        # --full-history: without it git prunes a merged side branch whose files equal
        # the other side's, exactly where an old history merged back in hides.
        held = git.out("log", "--all", "--full-history", "--format=%H", "--", *paths)
        if not held:
            clone._save_state(purge_pending=None)
            return PurgeReport(id=leaf_id, paths=paths, rewritten=False, pushed=False, others="")
        before = git.rev(f"refs/remotes/{REMOTE}/{branch}")
        rewrite(clone, paths, [f"refs/heads/{branch}"])
        record_purged(clone, leaf_id)
        git.run("add", "--", PURGED_FILE)
        if git.paths("diff", "--cached", "--name-only", "-z"):
            clone._identity()
            git.run(
                "commit",
                "--quiet",
                "--no-verify",
                "-m",
                f"ihmt sync on {clone.host}: purged {leaf_id}",
            )
        # Until the forced push lands, a plain sync would merge the old history back.
        clone._save_state(
            refreshed=git.rev("HEAD"),
            purged=sorted({*purged_here(clone), leaf_id}),
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
            f"push ({porcelain_reason(done.stdout + done.stderr)}; a protected branch "
            "must allow it); 'ihmt sync' waits until "
            f"'ihmt sync --purge {leaf_id}' has finished",
        )
    git.run("fetch", "--quiet", "--no-tags", "--prune", REMOTE, timeout=NETWORK_TIMEOUT_S)
    drop_unreachable(clone)
    clone._save_state(last_sync=now_timestamp(), pushed=git.rev("HEAD"), purge_pending=None)
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


def is_memory_id(text: str) -> bool:
    """Whether ``text`` can name a memory (a purge record names nothing else)."""
    try:
        ReplicaFile.memory_globs(text)
    except ValueError:
        return False
    return True


def purged_here(clone: Clone) -> list[str]:
    purged = clone._state().get("purged")
    return [str(p) for p in purged] if isinstance(purged, list) else []


def record_purged(clone: Clone, leaf_id: str) -> None:
    path = clone.folder / PURGED_FILE
    present = path.read_text(encoding="utf-8").split() if path.exists() else []
    if leaf_id not in present:
        path.write_text("\n".join([*present, leaf_id]) + "\n", encoding="utf-8")


def rewrite(clone: Clone, paths: Sequence[str], refs: Sequence[str]) -> None:
    """Remove ``paths`` from every commit of ``refs``, deterministically: the same
    commits rewritten on two clones give the same hashes (no commit is dropped)."""
    git = clone.git
    quoted = " ".join(shell_quote(p) for p in paths)
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


def drop_unreachable(clone: Clone) -> None:
    """Delete every object no branch reaches any more (the purged texts among them)."""
    git = clone.git
    git.run("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    git.run("gc", "--quiet", "--prune=now")


def follow_purges(clone: Clone, branch: str) -> list[str]:
    """Rewrite this clone's history for the ids another machine purged. Under the lock."""
    git = clone.git
    upstream = f"refs/remotes/{REMOTE}/{branch}"
    listed = git.run("show", f"{upstream}:{PURGED_FILE}", check=False)
    if listed.returncode != 0:
        return []
    done = set(purged_here(clone))
    todo = [i for i in dict.fromkeys(listed.stdout.split()) if i not in done]
    bad = [i for i in todo if not is_memory_id(i)]
    if bad:
        # Said once: recorded as followed below, so no later sync says it again.
        shown = ", ".join(repr(i[:40]) for i in bad[:3]) + (" …" if len(bad) > 3 else "")
        clone._warn(
            f"{PURGED_FILE} on the remote lists {shown}, not a memory id: skipped (the "
            "other ids it lists were followed)"
        )
        todo = [i for i in todo if i not in bad]
    if not todo:
        if bad:
            clone._save_state(purged=sorted(done | set(bad)))
        return []
    # A memory saved again since its purge (same text, same id: no tombstone any
    # more) is live: its history is not rewritten away from under it.
    gone = [i for i in todo if git.ok("cat-file", "-e", f"{upstream}:forgotten/{i}.json")]
    paths = [p for leaf_id in gone for p in ReplicaFile.memory_globs(leaf_id)]
    held = paths and git.out(
        "log", f"refs/heads/{branch}", "--full-history", "--format=%H", "--", *paths
    )
    if held:
        in_step = clone._state().get("refreshed") == git.rev("HEAD")
        rewrite(clone, paths, [f"refs/heads/{branch}"])
        drop_unreachable(clone)
        # The files on disk are those of the rewritten HEAD (less the purged ones,
        # which the tombstones remove from the derived state).
        if in_step:
            clone._save_state(refreshed=git.rev("HEAD"))
    clone._save_state(purged=sorted(done | set(todo) | set(bad)))
    logger.info("followed the purge of %d memory(ies)", len(gone))
    return gone
