"""What ``ihmt sync --init`` writes and asks before the first sync: the repository, the
ignore files, the remote's default branch, whether the store already holds memories."""

from __future__ import annotations

import os
import re
import shutil

from ihmt_mcp.sync._clone import DEFAULT_BRANCH, REMOTE, Clone
from ihmt_mcp.sync._git import NETWORK_TIMEOUT_S, Git
from ihmt_store import Store

__all__ = [
    "INIT_FOLDER_PREFIX",
    "create_repository",
    "has_memory_files",
    "remote_default_branch",
    "write_ignore_files",
]

INIT_FOLDER_PREFIX = ".ihmt-git-init-"
"""The folder (in the store folder, hidden) a new repository is made in before its
``.git`` moves into place."""


def create_repository(clone: Clone) -> None:
    """Make the store folder a git repository on :data:`DEFAULT_BRANCH`, whole or not at
    all (under the store lock).

    ``git init`` writes a dozen files one after the other: killed among them (a ``sync
    --init`` killed early), it left a ``.git`` without its ``objects`` folder, which no
    later ``--init`` could adopt (not a repository) or replace (a ``.git`` may be a
    person's). So the repository is made in a folder of its own and its ``.git`` renamed
    into the store folder in one step; what a killed one left there is removed first."""
    folder = clone.folder
    for stale in folder.glob(f"{INIT_FOLDER_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)
    work = folder / f"{INIT_FOLDER_PREFIX}{os.getpid()}"
    work.mkdir()
    git = Git(work)
    git.run("init", "--quiet")
    git.run("symbolic-ref", "HEAD", f"refs/heads/{DEFAULT_BRANCH}")
    os.rename(work / ".git", folder / ".git")
    shutil.rmtree(work, ignore_errors=True)


def has_memory_files(clone: Clone) -> bool:
    """Whether the store holds a memory file (a leaf, a note or a tombstone)."""
    for top in Store.REPLICATED:
        folder = clone.folder / top
        if folder.is_dir() and any(p.is_file() for p in folder.rglob("*")):
            return True
    return False


def write_ignore_files(clone: Clone) -> None:
    ignore = clone.folder / ".gitignore"
    present = ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else []
    missing = [p for p in Store.UNREPLICATED if p not in present]
    if missing or not ignore.exists():
        head = [] if present else ["# Written by 'ihmt sync': what each machine derives."]
        lines = [*present, *head, *missing]
        ignore.write_text("\n".join(lines) + "\n", encoding="utf-8")


def remote_default_branch(clone: Clone) -> str:
    """The remote's default branch ('' when the remote has none)."""
    done = clone.git.run(
        "ls-remote", "--symref", REMOTE, "HEAD", check=False, timeout=NETWORK_TIMEOUT_S
    )
    match = re.search(r"^ref: refs/heads/(\S+)\tHEAD$", done.stdout, flags=re.MULTILINE)
    heads = [
        ref.rsplit("/", 1)[-1]
        for ref in clone.git.out(
            "for-each-ref", "--format=%(refname)", f"refs/remotes/{REMOTE}/"
        ).splitlines()
        if not ref.endswith("/HEAD")
    ]
    if match and match.group(1) in heads:
        return match.group(1)
    for name in (DEFAULT_BRANCH, "master"):
        if name in heads:
            return name
    return heads[0] if heads else ""
