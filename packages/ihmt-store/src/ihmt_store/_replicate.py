"""What a store replicates, and the record of changes applied after a pull.

The replication engine (git, driven by ``ihmt_mcp``) tracks the paths in
:data:`REPLICATED` and ignores those in :data:`UNREPLICATED`. After a merge it hands the
store the replicated paths that changed; ``Store.apply_changes`` brings the derived state
in step with them and answers an :class:`AppliedChanges`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from ihmt_store._files import HEADER_END, load_object, parse_leaf, without_format1_keys
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
from ihmt_store._notes import tombstone_rel
from ihmt_store._opening import config_of
from ihmt_store._records import Leaf, check_id
from ihmt_store.errors import ConfigError, CorruptFileError, StoreFormatError

__all__ = [
    "REPLICATED",
    "UNREPLICATED",
    "AppliedChanges",
    "Changed",
    "ReplicaFile",
    "ReplicaKind",
    "sort_changes",
]

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


ReplicaKind = Literal["config", "leaf", "note", "tombstone", "other"]
"""What a replicated path holds: the config, a memory (leaf), an annotation (note), a
forgotten memory's tombstone; ``other`` for anything else."""

_KINDS: dict[str, ReplicaKind] = {LEAF_DIR: "leaf", NOTES_DIR: "note", FORGOTTEN_DIR: "tombstone"}


@dataclass(frozen=True, slots=True)
class ReplicaFile:
    """What a replication engine needs to know of the store's files, without opening the
    store (git's merge driver runs while the store is locked): what a path holds, where a
    memory's tombstone goes, every path a memory's text lives at, and a leaf file's text.
    """

    kind: ReplicaKind
    leaf_id: str = ""
    """The memory the file belongs to ("" for the config and ``other``)."""

    @classmethod
    def of(cls, rel: str) -> ReplicaFile:
        """What the file at ``rel`` (relative to the store, ``/`` separators) holds."""
        parts = PurePosixPath(rel).parts
        if parts == (CONFIG_FILE,):
            return cls("config")
        kind = _KINDS.get(parts[0]) if parts else None
        if kind == "leaf" and len(parts) == 3 and parts[2].endswith(".txt"):
            return cls("leaf", parts[2][: -len(".txt")])
        if kind == "note" and len(parts) == 3 and parts[2].endswith(".json"):
            return cls("note", parts[1])
        if kind == "tombstone" and len(parts) == 2 and parts[1].endswith(".json"):
            return cls("tombstone", parts[1][: -len(".json")])
        return cls("other")

    @staticmethod
    def tombstone_path(leaf_id: str) -> str:
        """Where the tombstone of a forgotten ``leaf_id`` lives, relative to the store."""
        return tombstone_rel(leaf_id)

    @staticmethod
    def memory_globs(leaf_id: str) -> tuple[str, ...]:
        """Glob patterns, relative to the store, of every file that holds ``leaf_id``'s
        text or annotations (its leaf file in whichever domain, its notes folder): what a
        history rewrite removes to purge a memory. The tombstone is not among them: it
        holds the id only."""
        check_id(leaf_id, "leaf id")
        return (f"{LEAF_DIR}/*/{leaf_id}.txt", f"{NOTES_DIR}/{leaf_id}")

    @staticmethod
    def text(data: bytes) -> bytes:
        """A leaf file's text, without its header (all of ``data`` when it has none)."""
        _, found, text = data.partition(HEADER_END.encode())
        return text if found else data

    @staticmethod
    def leaf(data: bytes, rel: str = "leaf") -> Leaf:
        """The memory in a leaf file's bytes (a format-1 header's derived keys dropped).

        Raises:
            CorruptFileError: no header, an unreadable one, or one lacking a key.
        """
        path = Path(rel)
        return parse_leaf(without_format1_keys(data, path) or data, path)

    @staticmethod
    def config_problem(data: bytes) -> str:
        """Why ``data`` cannot be a store's ``ihmt.config.json``, in a few words ('' when
        it can): what an engine checks before it lets a pulled config replace this
        store's. A config of a newer format says ``newer store format N``."""
        path = Path(CONFIG_FILE)
        try:
            config_of(load_object(data, path), path)
        except StoreFormatError as exc:
            return f"newer store format {exc.found}"
        except (ConfigError, CorruptFileError) as exc:
            return str(exc).removeprefix(f"{path}: ")
        return ""

    @staticmethod
    def note_op(data: bytes) -> str:
        """A note's operation (``outdated``, ``restored``, ``extra``), or "" when the bytes
        are not a note."""
        try:
            op = load_object(data, Path("note")).get("op")
        except CorruptFileError:
            return ""
        return op if op in ("outdated", "restored", "extra") else ""


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
