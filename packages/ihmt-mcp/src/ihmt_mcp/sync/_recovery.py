"""Step 1 of a sync: finish what a killed sync (or git) left behind.

A lock no live git holds is removed, a merge in progress aborted (it is redone), a
fast-forward killed between its two steps finished, the files a merge killed before its
commit wrote put back (it is redone), pulled files not yet refreshed refreshed, a stashed
version not yet saved saved.
"""

from __future__ import annotations

import logging
import os

from ihmt_mcp.sync._clone import Clone
from ihmt_mcp.sync._git import Git, blob_ids, git_locks
from ihmt_mcp.sync._hand_edits import settle_leaf_merges
from ihmt_mcp.sync._merge import after_merge
from ihmt_mcp.sync._records import SyncError
from ihmt_mcp.sync._refresh import catch_up

logger = logging.getLogger(__name__)

__all__ = ["recover", "remove_dead_locks"]


def recover(clone: Clone) -> None:
    """Finish what a killed sync (or git) left behind. Called under the store lock."""
    git_dir = clone.folder / ".git"
    remove_dead_locks(clone)
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
                undo_unfinished_merge(clone, head, upstream)
        # Killed after the merge moved HEAD: what follows it in its step, now.
        after_merge(clone, before)
    # Killed between a merge (or a clone's checkout) and its refresh: the pulled
    # files are on disk, the derived state does not know them yet.
    catch_up(clone)
    # Killed after a merge that kept one version of a leaf edited on two machines,
    # before the other version was saved as a memory: save it now.
    settle_leaf_merges(clone)


def remove_dead_locks(clone: Clone) -> None:
    """Remove the lock files a killed git left (the index, HEAD, a ref, the config), once
    no git works in the store folder. Under the store lock, first: before any git
    command that writes (the clone's settings, ``git remote``), which a lock left by a
    ``git config`` killed in a sync or an ``--init`` would make fail.

    Raises:
        SyncError: a git still works there (and holds a lock) after the wait.
    """
    # A killed sync's git child (a merge, a push) may still be finishing, orphaned:
    # wait for it (bounded) before touching what it works on.
    busy = clone._wait_for_git()
    locks = git_locks(clone.folder / ".git")
    if not locks:
        return
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


def index_holds(clone: Clone, commit: str) -> bool:
    """Whether the index is exactly the tree of ``commit``."""
    git = clone.git
    tree = git.run("write-tree", check=False)
    return bool(commit) and tree.returncode == 0 and tree.stdout.strip() == git.rev_tree(commit)


def undo_unfinished_merge(clone: Clone, before: str, upstream: str) -> None:
    """A merge (or a fast-forward's ``read-tree``) killed before HEAD moved: it may have
    written any part of the remote's files into the working tree and the index, complete
    or cut short, and the derived state knows none of them (the refresh follows the
    merge's commit). Every path the merge changes goes back to this branch's version, in
    the index and on disk; the redone merge writes the remote's again, and its refresh
    indexes them.

    Left there, a complete file of the remote's was committed next as this machine's own
    change, and the refresh recorded past that commit, since what this machine writes
    is indexed as it is written: the memory was on disk and never in the catalog (found
    by ``tests-integration/test_sync_kill.py``). A file the merge had not reached (this
    branch's version) is left as it is."""
    git = clone.git
    if not before or not upstream or not git.ok("cat-file", "-e", f"{upstream}^{{commit}}"):
        return
    paths = git.paths("diff", "--name-only", "--no-renames", "-z", before, upstream)
    if not paths:
        return
    ours = blob_ids(git, before, paths)
    theirs = blob_ids(git, upstream, paths)
    present = [p for p in paths if (clone.folder / p).is_file()]
    hashed = (
        git.run(
            "hash-object", "--no-filters", "--stdin-paths", input_text="\n".join(present) + "\n"
        ).stdout.split()
        if present
        else []
    )
    written = [p for p, sha in zip(present, hashed, strict=False) if sha != ours.get(p)]
    # A file the remote deleted and this branch holds: the merge had deleted it.
    deleted = [
        p for p in paths if p in ours and p not in theirs and not os.path.lexists(clone.folder / p)
    ]
    # The index as this branch has it, for every path the merge changes (a path this
    # branch lacks leaves the index).
    run_on_paths(git, ("reset", "--quiet", before), paths)
    if not written and not deleted:
        return
    logger.warning(
        "a merge killed before its commit left %d of the remote's file(s) in the working "
        "tree; they are put back as they were, and the merge is redone",
        len(written) + len(deleted),
    )
    back = sorted(p for p in (*written, *deleted) if p in ours)
    if back:
        run_on_paths(git, ("checkout", before), back)
    for path in written:
        if path not in ours:
            (clone.folder / path).unlink(missing_ok=True)


def run_on_paths(git: Git, command: tuple[str, ...], paths: list[str]) -> None:
    """Run git ``command`` on exactly ``paths``: handed over NUL-separated on stdin and
    read literally (a path holding ``*`` or ``:`` is no pattern), however many there are."""
    git.run(
        *command,
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
        input_text="\0".join(paths) + "\0",
        extra_env={"GIT_LITERAL_PATHSPECS": "1"},
    )
