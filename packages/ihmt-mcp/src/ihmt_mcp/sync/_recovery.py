"""Step 1 of a sync: finish what a killed sync (or git) left behind.

A lock no live git holds is removed, a merge in progress aborted (it is redone), a
fast-forward killed between its two steps finished, a file a killed merge cut short put
back, pulled files not yet refreshed refreshed, a stashed version not yet saved saved.
"""

from __future__ import annotations

import logging

from ihmt_mcp.sync._clone import Clone
from ihmt_mcp.sync._git import blob_ids, git_locks
from ihmt_mcp.sync._hand_edits import settle_leaf_merges
from ihmt_mcp.sync._merge import after_merge
from ihmt_mcp.sync._records import SyncError
from ihmt_mcp.sync._refresh import catch_up

logger = logging.getLogger(__name__)

__all__ = ["recover"]


def recover(clone: Clone) -> None:
    """Finish what a killed sync (or git) left behind. Called under the store lock."""
    git_dir = clone.folder / ".git"
    # A killed sync's git child (a merge, a push) may still be finishing, orphaned:
    # wait for it (bounded) before touching what it works on.
    busy = clone._wait_for_git()
    locks = git_locks(git_dir)
    if locks:
        if busy:
            raise SyncError(
                "git_failed",
                f"another git command is working in {clone.folder} (it holds "
                f"{locks[0].relative_to(clone.folder)}); run 'ihmt sync' again when "
                "it has finished",
            )
        for lock in locks:
            logger.warning("removing %s, left by a killed git", lock)
            lock.unlink(missing_ok=True)
    if (git_dir / "MERGE_HEAD").exists():
        logger.warning("aborting a merge a killed sync left; it is redone now")
        if not clone.git.ok("merge", "--abort"):
            raise SyncError(
                "conflict",
                f"a merge left in {clone.folder} cannot be aborted; finish it by hand "
                f"(git -C {clone.folder} status)",
            )
    state = clone._state()
    head = clone.git.rev("HEAD")
    merging = state.get("merging")
    if isinstance(merging, dict):
        upstream = str(merging.get("upstream", ""))
        before = str(merging.get("before") or "")
        if head == before:
            if merging.get("fast_forward") and index_holds(clone, upstream):
                # Killed between the fast-forward's two steps: finish it.
                clone.git.run("update-ref", "HEAD", upstream, head)
            else:
                repair_torn_files(clone, head, upstream)
        # Killed after the merge moved HEAD: what follows it in its step, now.
        after_merge(clone, before)
    # Killed between a merge (or a clone's checkout) and its refresh: the pulled
    # files are on disk, the derived state does not know them yet.
    catch_up(clone)
    # Killed after a merge that kept one version of a leaf edited on two machines,
    # before the other version was saved as a memory: save it now.
    settle_leaf_merges(clone)


def index_holds(clone: Clone, commit: str) -> bool:
    """Whether the index is exactly the tree of ``commit``."""
    git = clone.git
    tree = git.run("write-tree", check=False)
    return bool(commit) and tree.returncode == 0 and tree.stdout.strip() == git.rev_tree(commit)


def repair_torn_files(clone: Clone, before: str, upstream: str) -> None:
    """A merge killed while it wrote the working tree (its commit not made): a file it
    was writing may be cut short. Such a file, equal neither to this branch's version
    nor to the remote's, goes back to this branch's (the redone merge writes the
    remote's again); complete files are left as they are."""
    git = clone.git
    if not upstream or not git.ok("cat-file", "-e", f"{upstream}^{{commit}}"):
        return
    paths = [
        p
        for p in git.paths("diff", "--name-only", "--no-renames", "-z", before, upstream)
        if (clone.folder / p).is_file()
    ]
    if not paths:
        return
    ours = blob_ids(git, before, paths)
    theirs = blob_ids(git, upstream, paths)
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
            (clone.folder / path).unlink(missing_ok=True)
