"""What a store replicates, and the record of changes applied after a pull.

The replication engine (git, driven by ``ihmt_mcp``) tracks the paths in
:data:`REPLICATED` and ignores those in :data:`UNREPLICATED`. After a merge it hands the
store the replicated paths that changed; ``Store.apply_changes`` brings the derived state
in step with them and answers an :class:`AppliedChanges`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from ihmt_store._layout import (
    BRANCH_DIR,
    CONFIG_FILE,
    FORGOTTEN_DIR,
    LEAF_DIR,
    LOCK_FILE,
    NOTES_DIR,
    ROOT_FILE,
    STATE_DIR,
)
from ihmt_store._lifecycle import Problem

__all__ = ["REPLICATED", "UNREPLICATED", "AppliedChanges", "Changed", "sort_changes"]

REPLICATED: tuple[str, ...] = (CONFIG_FILE, LEAF_DIR, NOTES_DIR, FORGOTTEN_DIR)
"""Store-relative paths that hold what a user wrote: the config, the leaves, the notes
(annotations) and the tombstones. A replication engine tracks these and nothing else."""

UNREPLICATED: tuple[str, ...] = (
    f"/{BRANCH_DIR}/",
    f"/{ROOT_FILE}",
    f"/{STATE_DIR}/",
    f"/{LOCK_FILE}",
    "*.ihmt-tmp",
)
"""``.gitignore`` patterns for what each machine derives or holds for itself: the
branches, the trunk, ``state/`` (catalog, index, vectors, facts, clocks), the lock and
writes in flight. Anchored to the store's top folder (a leading ``/``), so a domain
named ``state`` or ``layers`` under ``layer0/`` is still replicated."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AppliedChanges:
    """What :meth:`Store.apply_changes` did to the derived state, by leaf id (sorted)."""

    added: tuple[str, ...] = ()
    """Leaves indexed from their file: new to this store, or their text changed. The
    packages above derive their data (vectors, facts) for these again."""
    annotated: tuple[str, ...] = ()
    """Leaves already known whose status changed (flagged OUTDATED, or restored)."""
    removed: tuple[str, ...] = ()
    """Leaves that left the catalog: forgotten elsewhere (a tombstone), or their file is
    gone. The packages above drop what they derived from them."""
    domains: tuple[str, ...] = ()
    """Domains of every leaf above: where consolidation has work to do."""
    problems: tuple[Problem, ...] = ()
    """Files that could not be applied (unreadable, or misplaced), left as they are."""
    config: bool = False
    """True when ``ihmt.config.json`` changed and was read again."""

    def __bool__(self) -> bool:
        return bool(self.added or self.annotated or self.removed or self.config)


@dataclass(slots=True)
class Changed:
    """The changed paths sorted by kind (store-relative, ``/`` separators)."""

    leaves: dict[str, str]
    """Leaf path → leaf id (from the file name)."""
    notes: set[str]
    """Leaf ids whose ``notes/<id>/`` folder changed."""
    tombstones: set[str]
    """Leaf ids whose tombstone ``forgotten/<id>.json`` changed."""
    config: bool


def sort_changes(paths: Iterable[str]) -> Changed:
    """Sort ``paths`` by what they hold; paths outside :data:`REPLICATED`, or not shaped
    like a store file (``..``, absolute, a note outside a leaf's folder), are ignored.

    Raises:
        TypeError: ``paths`` is a single string, not an iterable of paths.
    """
    if isinstance(paths, str | bytes):
        raise TypeError("apply_changes takes an iterable of paths, not one string")
    out = Changed(leaves={}, notes=set(), tombstones=set(), config=False)
    for raw in paths:
        text = str(raw).replace("\\", "/").strip()
        path = PurePosixPath(text)
        parts = path.parts
        if not parts or path.is_absolute() or ".." in parts or "." in parts:
            continue
        name = parts[-1]
        if name.startswith("."):
            continue  # a temporary file in flight, or a hidden file
        top = parts[0]
        if text == CONFIG_FILE:
            out.config = True
        elif top == LEAF_DIR and len(parts) == 3 and name.endswith(".txt"):
            out.leaves[path.as_posix()] = name[: -len(".txt")]
        elif top == NOTES_DIR and len(parts) >= 2:
            out.notes.add(parts[1])
        elif top == FORGOTTEN_DIR and len(parts) == 2 and name.endswith(".json"):
            out.tombstones.add(name[: -len(".json")])
    return out
