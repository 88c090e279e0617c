"""Where each part of a store lives inside its folder (``FORMAT.md`` describes them)."""

from __future__ import annotations

from ihmt_store._records import check_id, safe_domain

__all__ = [
    "BRANCH_DIR",
    "CONFIG_FILE",
    "DERIVED_FILE",
    "FORGOTTEN_DIR",
    "INDEX_FILE",
    "JOURNAL_FILE",
    "LEAF_DIR",
    "LOCK_FILE",
    "NOTES_DIR",
    "OWN_NAMES",
    "ROOT_FILE",
    "STATE_DIR",
    "branch_rel",
    "leaf_rel",
    "misplaced_leaf",
]

CONFIG_FILE = "ihmt.config.json"
ROOT_FILE = "root.json"
LOCK_FILE = "ihmt.lock"
LEAF_DIR = "layer0"
BRANCH_DIR = "layers"
STATE_DIR = "state"
NOTES_DIR = "notes"
"""Annotations: ``notes/<leaf_id>/<at>-<machine>-<random>.json``, one immutable file each."""
FORGOTTEN_DIR = "forgotten"
"""Tombstones: ``forgotten/<leaf_id>.json``, one per forgotten memory."""
"""Derived state: everything below it can be deleted and is rebuilt from the files."""
INDEX_FILE = "index.sqlite3"
DERIVED_FILE = "derived.sqlite3"
JOURNAL_FILE = "journal"
OWN_NAMES = frozenset(
    {CONFIG_FILE, ROOT_FILE, LOCK_FILE, LEAF_DIR, BRANCH_DIR, STATE_DIR, NOTES_DIR, FORGOTTEN_DIR}
)
"""What a store being created (by another process, right now) may already hold."""


def leaf_rel(leaf_id: str, domain: str) -> str:
    """Path of a leaf's file, relative to the store."""
    return f"{LEAF_DIR}/{safe_domain(domain)}/{check_id(leaf_id, 'leaf id')}.txt"


def misplaced_leaf(rel: str, leaf_id: str, domain: str) -> str:
    """Why the leaf file at ``rel`` is not where its header's domain puts it ('' when it
    is). Such a leaf is indexed where it is, under its header's domain, by a refresh after
    a pull and by a rebuild alike (one rule on every machine), and reported."""
    home = leaf_rel(leaf_id, domain)
    if home == rel:
        return ""
    return (
        f"its header says domain {domain!r}, whose folder is {home}: indexed where it is; move it"
    )


def branch_rel(node_id: str, layer: int) -> str:
    """Path of a branch's file, relative to the store."""
    return f"{BRANCH_DIR}/{int(layer)}/{check_id(node_id, 'branch id')}.json"
