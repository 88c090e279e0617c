"""Step 3b of a sync: the fetched branch merged in, under the store lock.

A fast-forward with ``git read-tree -m -u`` when this machine wrote nothing since (only
the files that differ are touched), else ``git merge`` with no rename detection; the
conflicts the format decides are settled without a person, any other undoes the merge.
"""

from __future__ import annotations

import logging
import re
import subprocess

from ihmt_mcp.sync._clone import REMOTE, Clone
from ihmt_mcp.sync._git import first_line
from ihmt_mcp.sync._hand_edits import settle_leaf_merges
from ihmt_mcp.sync._purge import is_memory_id
from ihmt_mcp.sync._records import SyncError
from ihmt_store import ReplicaFile

logger = logging.getLogger(__name__)

__all__ = ["merge"]


def merge(clone: Clone, branch: str) -> tuple[str, str] | None:
    """Merge the fetched branch (under the lock); the commits before and after it, or
    None when there was nothing to merge. The refresh is :func:`._refresh.apply_since`'s."""
    git = clone.git
    upstream = f"refs/remotes/{REMOTE}/{branch}"
    target = git.rev(upstream)
    if not target:
        return None
    before = git.rev("HEAD")
    found = git.run("merge-base", before, target, check=False) if before else None
    base = found.stdout.strip() if found is not None and found.returncode == 0 else ""
    if base == target:
        return None  # nothing the remote has that this branch has not
    if clone._state().get("refreshed") is None:
        clone._save_state(refreshed=before)
    config = remote_config_problem(clone, before, target)
    if before and base == before and not config and fast_forward(clone, before, target):
        after_merge(clone, before)
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
                f"the remote {clone._remote_url()} holds a history that is not an IHMT "
                "memory; nothing was merged: sync with an empty repository, or one "
                "another machine synced a memory to ('ihmt sync --init REMOTE')",
            )
        # Joining a memory made elsewhere: on the few files both sides created (the
        # config), the memory already on the remote wins.
        args += ["--allow-unrelated-histories", "-X", "theirs"]
    if config:
        # Everything else is merged; the merge commit keeps this machine's config.
        args += ["--no-ff", "--no-commit"]
    clone._identity()
    clone._save_state(merging={"before": before, "upstream": target})
    done = git.run(*args, "-m", f"ihmt sync on {clone.host}: merge", upstream, check=False)
    if done.returncode != 0 and not settle_conflicts(clone):
        clone._save_state(merging=None)
        abort_merge(clone, done)
    if config:
        git.run("checkout", before, "--", CONFIG)
        if (clone.folder / ".git" / "MERGE_HEAD").exists():
            git.run("commit", "--quiet", "--no-edit", "--no-verify")
        elif not git.ok("diff", "--cached", "--quiet"):  # committed by settle_conflicts
            message = f"ihmt sync on {clone.host}: kept this machine's settings"
            git.run("commit", "--quiet", "--no-verify", "-m", message)
        clone._warn(
            f"the remote's {CONFIG} is not valid ({config}): this machine's was kept, and "
            "the next push sends it"
        )
    after_merge(clone, before)
    return before, git.rev("HEAD")


CONFIG = "ihmt.config.json"


def remote_config_problem(clone: Clone, before: str, target: str) -> str:
    """Why the fetched branch's config cannot be this store's ('' when it can, or when
    it is this branch's own). A newer format is refused outright: nothing is merged."""
    git = clone.git
    theirs = git.run("rev-parse", "-q", "--verify", f"{target}:{CONFIG}", check=False)
    ours = git.run("rev-parse", "-q", "--verify", f"{before}:{CONFIG}", check=False)
    if not before or theirs.returncode != 0 or theirs.stdout == ours.stdout:
        return ""
    problem = ReplicaFile.config_problem(git.blob(theirs.stdout.strip()))
    if problem.startswith("newer"):
        raise SyncError(
            "newer_format",
            f"the remote's memory was written by a newer IHMT ({problem}); nothing was "
            "merged and this machine's memory is as it was: upgrade ihmt here, then run "
            "'ihmt sync' again",
        )
    return problem


def after_merge(clone: Clone, before: str) -> None:
    """What follows a merge that moved HEAD from ``before``, in its locked step (and
    in the recovery's, when a sync was killed between them): a memory the other side
    deleted without a tombstone is put back."""
    keep_deleted_leaves(clone, before)
    clone._save_state(merging=None)


def keep_deleted_leaves(clone: Clone, before: str) -> list[str]:
    """Only a tombstone deletes a leaf (FORMAT.md): a leaf file another machine deleted
    by hand (``git rm``, no forget) comes back from ``before`` in a commit of its own,
    which the push sends back. The ids kept."""
    git = clone.git
    head = git.rev("HEAD")
    if not before or not head or head == before:
        return []
    deleted = git.paths(
        "diff", "--name-only", "--no-renames", "--diff-filter=D", "-z", before, head
    )
    lost: dict[str, str] = {}
    for path in deleted:
        what = ReplicaFile.of(path)
        if what.kind != "leaf" or not is_memory_id(what.leaf_id):
            continue
        if clone._forgotten(what.leaf_id):
            continue
        moved = git.paths("ls-files", "-z", "--", f"layer0/*/{what.leaf_id}.txt")
        if not moved:  # not moved to another folder: deleted
            lost[path] = what.leaf_id
    if not lost:
        return []
    git.run("checkout", before, "--", *sorted(lost))
    clone._identity()
    git.run(
        "commit",
        "--quiet",
        "--no-verify",
        "-m",
        f"ihmt sync on {clone.host}: {len(lost)} kept (deleted elsewhere without a forget)",
    )
    kept = sorted(lost.values())
    shown = ", ".join(kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
    clone._warn(
        f"another machine deleted {shown} without 'ihmt forget' (no tombstone): kept here "
        "and sent back; 'ihmt forget ID' deletes a memory everywhere"
    )
    return kept


def fast_forward(clone: Clone, before: str, target: str) -> bool:
    """Move HEAD, the index and the files to ``target``, which descends from
    ``before`` (this machine wrote nothing since); False when a file in the way stops
    it (the merge then says why).

    ``git read-tree -m -u`` checks and rewrites only the files that differ between
    the two commits, where ``git merge`` first stats every file of the store. Killed
    between the two steps, the index already holds ``target``: the recovery sees it
    and moves HEAD (:func:`._recovery.recover`)."""
    git = clone.git
    clone._save_state(merging={"before": before, "upstream": target, "fast_forward": True})
    if not git.ok("read-tree", "-m", "-u", before, target):
        clone._save_state(merging=None)
        return False
    message = f"ihmt sync on {clone.host}: fast-forward"
    git.run("update-ref", "-m", message, "HEAD", target, before)
    return True  # the caller clears ``merging`` (:func:`after_merge`)


def settle_conflicts(clone: Clone) -> bool:
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
    git = clone.git
    stages: dict[str, dict[int, str]] = {}
    for entry in git.run("ls-files", "-u", "-z").stdout.split("\0"):
        if "\t" in entry:
            meta, path = entry.split("\t", 1)
            _mode, sha, stage = meta.split()
            stages.setdefault(path, {})[int(stage)] = sha
    if not stages or not (clone.folder / ".git" / "MERGE_HEAD").exists():
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
        elif clone._forgotten(what.leaf_id):
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
            (clone.folder / path).unlink(missing_ok=True)
    git.run("commit", "--quiet", "--no-edit", "--no-verify")
    logger.info("settled %d conflict(s) the format decides", len(keep) + len(drop))
    return True


def abort_merge(clone: Clone, done: subprocess.CompletedProcess[str]) -> None:
    git = clone.git
    conflicted = git.paths("diff", "--name-only", "--diff-filter=U", "-z")
    if (clone.folder / ".git" / "MERGE_HEAD").exists():
        git.run("merge", "--abort", check=False)
    settle_leaf_merges(clone)  # what the undone merge stashed is discarded
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
        f"git could not merge the remote's changes: {first_line(text)}"
        + (f" ({', '.join(overwritten[:5])})" if overwritten else "")
        + "; nothing was lost",
        overwritten,
    )
