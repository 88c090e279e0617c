"""Step 3a of a sync: one commit of what this machine changed in the memory's files.

One ``git status`` finds the changes; a leaf deleted by hand (no tombstone: not
forgotten) is put back, never replicated; the commit message counts what was saved,
corrected, forgotten (``ihmt sync on laptop: 3 saved, 1 corrected``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ihmt_mcp.sync._clone import Clone, tracked
from ihmt_mcp.sync._git import Git
from ihmt_mcp.sync._records import SyncError
from ihmt_store import ReplicaFile, Store

logger = logging.getLogger(__name__)

__all__ = [
    "Commit",
    "commit_into",
    "describe_counts",
    "index_committed_leaves",
    "sent_counts",
    "untrack_derived",
]


@dataclass
class Commit:
    sha: str = ""
    message: str = ""
    counts: dict[str, int] = field(default_factory=dict)


def commit_into(clone: Clone, info: Commit) -> None:
    """Commit what changed in the replicated paths; fill ``info``. Under the lock.

    One ``git status`` finds what changed (with no pathspec, git's untracked cache
    answers for every folder whose listing did not change: only the files git tracks
    are stat'ed), and only the paths it names are staged."""
    git = clone.git
    changes = worktree_changes(clone)
    foreign = [path for x, _y, path in changes if x not in " ?" and not tracked(path)]
    if foreign:
        raise SyncError(
            "dirty_index",
            "files were staged by hand in the memory's repository "
            f"({', '.join(foreign[:5])}); nothing was synced: commit or unstage them "
            f"(git -C {clone.folder} restore --staged PATH) and run 'ihmt sync' again",
            foreign,
        )
    ours = [(x, y, path) for x, y, path in changes if tracked(path)]
    if not ours:
        return
    lost = keep_unforgotten_leaves(clone, ours)
    stage = [path for x, y, path in ours if path not in lost and (y != " " or x == "?")]
    stage = without_secrets(clone, stage)
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
    counts = count_changes(clone, pairs)
    info.counts = {k: info.counts.get(k, 0) + v for k, v in counts.items()}
    message = f"ihmt sync on {clone.host}: {describe_counts(counts)}"
    clone._identity()
    parent = git.rev("HEAD")
    sha = commit_index(git, message, parent)
    first = not info.sha
    info.sha = sha
    info.message = message if first else f"{info.message}; {describe_counts(counts)}"
    # The derived state already holds what this machine wrote: when it was in step
    # with the parent, it is in step with this commit. (When it lags, the lag stays
    # recorded and the next refresh covers it.) A memory file committed here that the
    # catalog does not hold did not come from this store: it is indexed first, or the
    # refresh recorded past this commit would never index it.
    index_committed_leaves(clone, pairs)
    refreshed = clone._state().get("refreshed")
    if refreshed is None or (parent and refreshed == parent):
        clone._save_state(refreshed=sha)


def index_committed_leaves(clone: Clone, pairs: Sequence[tuple[str, str]]) -> list[str]:
    """Index the leaf files just committed (added or changed) that the catalog does not
    hold at that path: written into the folder by something other than this store (a
    killed merge, a copy by hand). What this store wrote is indexed as it was written,
    so this is one catalog query, and nothing more, on every ordinary commit. The
    paths indexed."""
    committed = {
        path: ReplicaFile.of(path).leaf_id
        for status, path in pairs
        if status in ("A", "M") and ReplicaFile.of(path).kind == "leaf"
    }
    if not committed:
        return []
    known = clone.store.entries(sorted(set(committed.values())))
    missing = []
    for path, leaf_id in committed.items():
        entry = known.get(leaf_id)
        if entry is None or entry.kind != "leaf" or entry.path != path:
            missing.append(path)
    if not missing:
        return []
    logger.warning(
        "%d memory file(s) committed here were not indexed (not written by this store); "
        "indexed now",
        len(missing),
    )
    applied = clone.memory.apply_pulled(sorted(missing))
    for problem in applied.problems:
        clone._warn(f"{problem.path}: {problem.reason}")
    return sorted(missing)


def commit_index(git: Git, message: str, parent: str) -> str:
    """Commit the index as it is, on ``parent`` ('' for a first commit); the new commit.

    ``git commit`` first refreshes the whole index (a ``stat`` of every tracked file: 1.7
    s of a sync at 500,000 memories, after the ``git status`` that just did the same);
    the tree is written from the index's cached trees instead, and HEAD moved (with its
    reflog entry) only to a commit that is complete. Signing follows the user's
    ``commit.gpgSign``, as ``git commit`` does; like ``--no-verify``, no hook runs."""
    tree = git.run("write-tree").stdout.strip()
    sha = git.run("commit-tree", tree, *(("-p", parent) if parent else ()), "-m", message)
    new = sha.stdout.strip()
    git.run("update-ref", "-m", f"commit: {message}", "HEAD", new, parent or "")
    return new


def worktree_changes(clone: Clone) -> list[tuple[str, str, str]]:
    """``(X, Y, path)`` of every path ``git status`` reports (staged X, unstaged Y,
    ``??`` untracked; a folder nothing in which is tracked is one entry, ``notes/x/``)."""
    done = clone.git.run(
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


def untrack_derived(clone: Clone) -> None:
    """A store put under git by hand may track derived files: they stay on disk and
    leave the index (the next commit records that), so no merge meets them."""
    names = [p.strip("/") for p in Store.UNREPLICATED if "*" not in p]
    clone.git.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *names)
    status = clone.git.run("diff", "--cached", "--name-only", "-z", "--", *names).stdout
    if status.strip("\0"):
        clone._identity()
        clone.git.run(
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            f"ihmt sync on {clone.host}: stop tracking derived files",
        )


def without_secrets(clone: Clone, stage: list[str]) -> list[str]:
    """``stage`` less the leaf files that hold what looks like a secret (written there
    by hand: ``save`` refuses them), which stay on disk, unsent, each said once per
    sync. A new folder git names whole is looked into."""
    from ihmt_mcp._withheld import secret_in

    kept: list[str] = []
    held = False
    for path in stage:
        whole = path.startswith("layer0/") and path.endswith("/")
        for rel in _files_under(clone.folder, path) if whole else [path]:
            what = ""
            if ReplicaFile.of(rel).kind == "leaf":
                try:
                    data = (clone.folder / rel).read_bytes()
                except OSError:
                    data = b""
                what = secret_in(ReplicaFile.text(data).decode("utf-8", "replace"))
            if what:
                held = True
                clone._warn(
                    f"{rel} holds what looks like {what}: not sent, and searches do not "
                    "show that line; remove the secret from the file"
                )
            else:
                kept.append(rel)
    return kept if held else stage


def _files_under(folder: Path, rel: str) -> list[str]:
    """The files under the store folder's ``rel`` (a folder git lists whole), relative."""
    found: list[str] = []
    for sub, _dirs, files in os.walk(folder / rel):
        for name in files:
            found.append((Path(sub) / name).relative_to(folder).as_posix())
    return sorted(found) or [rel]


def keep_unforgotten_leaves(clone: Clone, changes: Sequence[tuple[str, str, str]]) -> set[str]:
    """A leaf file deleted without a tombstone was deleted by hand, not forgotten:
    its deletion is never replicated. The file comes back from the last commit; the
    paths put back."""
    lost = {
        path
        for x, y, path in changes
        if "D" in (x, y)
        and x != "A"
        and ReplicaFile.of(path).kind == "leaf"
        and not clone._forgotten(ReplicaFile.of(path).leaf_id)
    }
    if not lost:
        return lost
    git = clone.git
    git.run("reset", "--quiet", "HEAD", "--", *sorted(lost))
    git.run("checkout", "HEAD", "--", *sorted(lost))
    logger.warning(
        "%d memory file(s) were deleted by hand (not forgotten); they were put back: use "
        "'ihmt forget ID' to delete a memory everywhere",
        len(lost),
    )
    return lost


def sent_counts(clone: Clone, base: str, head: str) -> dict[str, int]:
    """What ``head`` holds that ``base`` (the remote's branch before a push) did not,
    counted as a commit message counts it."""
    if not head or base == head:
        return {}
    done = clone.git.run("diff", "--name-status", "--no-renames", "-z", base, head, check=False)
    parts = [p for p in done.stdout.split("\0") if p] if done.returncode == 0 else []
    return count_changes(clone, zip(parts[0::2], parts[1::2], strict=False))


def count_changes(clone: Clone, pairs: Iterable[tuple[str, str]]) -> dict[str, int]:
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
            bump(_note_kind(clone.folder / path))
        elif kind == "tombstone" and status == "A":
            bump("forgotten")
        elif kind == "config":
            bump("settings")
        elif status in ("A", "M") and path in (".gitignore", ".gitattributes"):
            bump("setup")
    return counts


def _note_kind(path: Path) -> str:
    """How a sync's message counts a new note: ``corrected``, ``restored`` or
    ``annotated``."""
    try:
        op = ReplicaFile.note_op(path.read_bytes())
    except OSError:
        op = ""
    return {"outdated": "corrected", "restored": "restored"}.get(op, "annotated")


_COUNT_ORDER = ("saved", "corrected", "restored", "annotated", "forgotten", "edited", "settings")


def describe_counts(counts: dict[str, int]) -> str:
    words = {"settings": "settings changed", "setup": "set up"}
    parts = [
        f"{counts[k]} {words.get(k, k)}" if k not in words else words[k]
        for k in (*_COUNT_ORDER, "setup")
        if counts.get(k)
    ]
    return ", ".join(parts) or "changes"
