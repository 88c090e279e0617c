"""``Store``: the public API over a tree of plain files, its derived index and its lock.

The pieces beneath it each live in their own module: the batch commit protocol and the
write journal in ``_batch.py``, the lock and the index's life (open, check, rebuild,
replace) in ``_lifecycle.py``, all SQL in ``_index.py`` (and ``_derived.py`` for its file).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Concatenate, ParamSpec, TypeVar

from ihmt_store._batch import Batch, clear_journal
from ihmt_store._derived import DerivedChanges, DerivedTable
from ihmt_store._files import (
    atomic_write,
    fsync_dir,
    json_bytes,
    parse_branch,
    parse_leaf,
    read_json,
    remove_sqlite_files,
    stored_checksum,
    unlink_quietly,
    within,
)
from ihmt_store._index import (
    Candidate,
    Entry,
    Fields,
    FieldWeights,
    Index,
    branch_row,
    leaf_row,
)
from ihmt_store._layout import (
    BRANCH_DIR,
    CONFIG_FILE,
    DERIVED_FILE,
    INDEX_FILE,
    JOURNAL_FILE,
    LEAF_DIR,
    LOCK_FILE,
    NOTES_DIR,
    OWN_NAMES,
    ROOT_FILE,
    STATE_DIR,
    branch_rel,
    leaf_rel,
)
from ihmt_store._lifecycle import (
    DISK_FULL,
    IndexLifecycle,
    Problem,
    Progress,
    RebuildReport,
    disk_is_full,
    index_error,
    is_corrupt,
    writable,
)
from ihmt_store._migrate import migrate_leaves
from ihmt_store._notes import (
    CLOCK_FILE,
    Clock,
    NoteOp,
    index_leaf,
    is_tombstoned,
    newest,
    note_files,
    note_rel,
    read_notes,
    refold,
    tombstone_bytes,
    tombstone_rel,
)
from ihmt_store._records import (
    FORMAT_VERSION,
    Branch,
    Correction,
    DomainTrunk,
    Leaf,
    Root,
    StoreConfig,
    check_id,
    checksum_of,
    normalize_timestamp,
    now_timestamp,
    safe_domain,
)
from ihmt_store._replicate import REPLICATED, UNREPLICATED, AppliedChanges, sort_changes
from ihmt_store._text import terms
from ihmt_store._types import ItemKind
from ihmt_store.errors import (
    BranchNotFoundError,
    ConfigError,
    CorruptFileError,
    LeafNotFoundError,
    StoreError,
    StoreFormatError,
    StoreIOError,
    StoreNotFoundError,
)

logger = logging.getLogger(__name__)

__all__ = ["IOStats", "Problem", "Progress", "RebuildReport", "Store", "StoreStats"]

_UNSET: Any = object()


@dataclass(slots=True)
class IOStats:
    """Files and bytes this ``Store`` object has read from leaves and branches."""

    files_read: int = 0
    bytes_read: int = 0
    leaf_reads: int = 0
    branch_reads: int = 0

    def snapshot(self) -> IOStats:
        """A copy to subtract from later."""
        return dataclasses.replace(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreStats:
    """Totals for ``ihmt stats``."""

    leaves: int
    branches: int
    depth: int
    """Highest layer reached (0: leaves only)."""
    domains: dict[str, int] = field(default_factory=dict)
    """Leaves per domain."""
    unconsolidated: int = 0
    """Leaves without a parent branch (referenced straight from the trunk)."""
    unreachable: int = 0
    """Items whose parent chain does not reach the trunk; must be 0."""
    outdated: int = 0
    bytes: int = 0
    """Bytes of every leaf and branch file."""
    generation: int = 0

    def to_json(self) -> dict[str, Any]:
        """Every field, in order, as JSON values."""
        return dataclasses.asdict(self)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _healing(method: Callable[Concatenate[Store, _P], _R]) -> Callable[Concatenate[Store, _P], _R]:
    """A read that finds the index damaged rebuilds it from the files (saying so in
    :attr:`Store.notices`) and runs again; any other SQLite failure becomes a
    :class:`StoreIOError` in plain words, never a raw ``sqlite3`` error."""

    @functools.wraps(method)
    def wrapper(self: Store, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            if self._own_batch() is not None:
                raise  # inside a write: the write's own handler settles it
            if not is_corrupt(exc):
                raise index_error(exc, self.path, reading=True) from exc
            self._repair_corrupt_index(exc)
        return method(self, *args, **kwargs)

    return wrapper


class Store(IndexLifecycle):
    """A memory on disk: leaves, branches, the trunk, the config and derived state.

    Open one with :meth:`Store.open` or :meth:`Store.create`. Every mutation takes the
    store's exclusive inter-process lock, writes files atomically and updates the
    derived index in the same locked step; readers never block and always see the
    latest committed state, also when another process wrote it.
    """

    REPLICATED: ClassVar[tuple[str, ...]] = REPLICATED
    """Store-relative paths that hold what a user wrote (a replication engine tracks
    these): ``ihmt.config.json``, ``layer0``, ``notes``, ``forgotten``."""
    UNREPLICATED: ClassVar[tuple[str, ...]] = UNREPLICATED
    """``.gitignore`` patterns for what each machine derives or holds for itself."""

    def __init__(self, path: Path, config: StoreConfig, *, lock_timeout: float) -> None:
        super().__init__(path, lock_timeout=lock_timeout)
        self.config = config
        self.io = IOStats()
        self._batch: Batch | None = None
        self._batch_thread = 0
        self._compact_due = False
        self._derived: DerivedTable | None = None
        self._clock = Clock(path / STATE_DIR / CLOCK_FILE)
        self.edited: list[str] = []
        """Leaves found edited by hand (their text no longer matches the checksum their
        header carries) and re-indexed when read; the caller refreshes what it derived
        from them (facts, vectors) and clears the list."""

    # ================================================================= opening
    @classmethod
    def create(cls, path: str | os.PathLike[str], config: StoreConfig | None = None) -> Store:
        """Create a store at ``path`` (or open the one already there).

        A missing or empty folder becomes a new store with ``config``. A folder that is
        already a store is opened as it is (its own config wins).

        Raises:
            StoreFormatError: the folder holds other files and is not an IHMT store.
        """
        folder = Path(path).expanduser()
        if (folder / CONFIG_FILE).exists():
            return cls.open(folder)
        cfg = config or StoreConfig()
        # Refused before the lock file is made: a refused folder is left exactly as it was.
        _refuse_foreign(folder)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreIOError(
                f"cannot create the store folder: {exc.strerror}", path=folder
            ) from exc
        had_lock = (folder / LOCK_FILE).exists()
        store = cls(folder, cfg, lock_timeout=30.0)
        # Under the lock, so two processes creating the same store at once agree.
        with store._locked_raw():
            if not (folder / CONFIG_FILE).exists():
                try:
                    _refuse_foreign(folder)
                except StoreFormatError:
                    if not had_lock:
                        unlink_quietly(folder / LOCK_FILE)
                    raise
                for sub in (LEAF_DIR, BRANCH_DIR, STATE_DIR):
                    (folder / sub).mkdir(parents=True, exist_ok=True)
                atomic_write(
                    folder / ROOT_FILE, json_bytes(Root(updated=now_timestamp()).to_json())
                )
                atomic_write(folder / CONFIG_FILE, json_bytes(cfg.to_json()))
                fsync_dir(folder)
        return cls.open(folder)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = False,
        lock_timeout: float = 30.0,
    ) -> Store:
        """Open the store at ``path``, recovering what a crashed writer left behind.

        Args:
            create: create the store when the folder is missing or empty.
            lock_timeout: seconds to wait for another writer before giving up.

        Raises:
            StoreNotFoundError: no store there (and ``create`` is false).
            StoreFormatError: the store was written by a newer IHMT.
            ConfigError: ``ihmt.config.json`` is malformed.
        """
        folder = Path(path).expanduser()
        if not (folder / CONFIG_FILE).exists():
            if create:
                return cls.create(folder)
            raise StoreNotFoundError(folder)
        config = _read_config(folder / CONFIG_FILE)
        store = cls(folder, config, lock_timeout=lock_timeout)
        store.read_only = not writable(folder)
        if store.read_only:
            store._notice(
                f"the store at {folder} is on a read-only disk or folder: searches work, "
                "saves and other changes cannot"
            )
        if config.format_version < FORMAT_VERSION and not store.read_only:
            store._upgrade()
        store._open_index()
        return store

    @staticmethod
    def exists(path: str | os.PathLike[str]) -> bool:
        """Whether a store lives at ``path`` (its config file is there)."""
        return (Path(path).expanduser() / CONFIG_FILE).is_file()

    @staticmethod
    def discard_derived(path: str | os.PathLike[str]) -> None:
        """Delete the derived state (everything under ``state/``) of the store at ``path``.

        The next open recreates the index from the files (and a rebuild recreates the
        rest); leaves, branches, the trunk and the config are never touched. Call it
        with no ``Store`` open on ``path``.
        """
        state = Path(path).expanduser() / STATE_DIR
        if not state.is_dir():
            return
        for child in state.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()

    def close(self) -> None:
        """Close the index connection (the store can be reopened at any time)."""
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._derived is not None:
            self._derived.close()
            self._derived = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def _upgrade(self) -> None:
        """Migrate an older store to this format, under the lock, before the index opens.

        Format 1 → 2: every leaf's header loses ``parent_id`` and ``outdated_by`` (a
        correction first becomes a note with a name of its own), the index is discarded
        (rebuilt when it opens), and the new number is written last. A migration killed
        half-way is finished by the next open; running it again changes nothing.
        """
        logger.warning(
            "store %s uses format %s; upgrading to %s",
            self.path,
            self.config.format_version,
            FORMAT_VERSION,
        )
        with self._locked_raw():
            config = _read_config(self.path / CONFIG_FILE)
            if config.format_version >= FORMAT_VERSION:
                self.config = config  # another process finished it meanwhile
                return
            migrate_leaves(self.path)
            if self._index is not None:
                self._index.close()
                self._index = None
            remove_sqlite_files(self.path / STATE_DIR / INDEX_FILE)
            data = config.to_json()
            data["format_version"] = FORMAT_VERSION
            atomic_write(self.path / CONFIG_FILE, json_bytes(data))
            self.config = StoreConfig.from_json(data)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's exclusive write lock (for sibling packages' own state files).

        Re-entrant; other processes wait. Keep the critical section short.
        """
        with self._locked():
            yield

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group many writes into one locked step, one disk flush and one index commit.

        Bulk ingest and consolidation use it; nested calls join the outer batch. It is
        all or nothing: on an error no staged file replaces its target and the index
        rolls back, so the store stays as it was before the batch.
        """
        with self._writing():
            yield

    @contextmanager
    def _writing(self, timeout: float | None = None) -> Iterator[Batch]:
        if self._batch is not None and self._batch_thread == threading.get_ident():
            yield self._batch
            return
        with self._locked(timeout) as index:
            batch = Batch(self.path)
            self._batch = batch
            self._batch_thread = threading.get_ident()
            try:
                index.begin()
                yield batch
                batch.commit(index)
            except BaseException as exc:
                self._batch = None
                index.rollback()
                batch.abandon()
                batch.close()
                if batch.publishing:
                    self._settle_after_failure()
                else:
                    clear_journal(self.path)
                if isinstance(exc, sqlite3.Error):
                    if is_corrupt(exc):
                        self._repair_corrupt_index(exc)
                        raise StoreIOError(
                            "the search index was damaged; it was rebuilt from the memory "
                            "files, and this change was not made: try it again",
                            path=self.path / STATE_DIR / INDEX_FILE,
                        ) from exc
                    raise index_error(exc, self.path) from exc
                if isinstance(exc, OSError) and disk_is_full(exc, self.path):
                    # The journal or a file could not be written (the batch rolled back).
                    raise StoreIOError(DISK_FULL, path=self.path) from exc
                raise
            self._batch = None
            batch.close()
            clear_journal(self.path)
            if batch.scrub:
                self._scrub()
                # Summaries rewritten after a forget (by the caller) held its words too.
                self._compact_due = True

    # ================================================================= leaves
    def put_leaf(self, leaf: Leaf) -> Leaf:
        """Write one leaf and index it; return what was stored.

        Re-writing an existing id keeps its consolidation (``parent_id``) and its
        correction (``outdated_by``) unless the new record sets them (the catalog and
        a note record them; the file never does); identical content is not written
        twice.
        """
        return self.put_leaves([leaf])[0]

    def put_leaves(self, leaves: Iterable[Leaf]) -> list[Leaf]:
        """Write many leaves in one batch (one lock, one flush, one commit).

        A leaf's file holds what it says, never its annotations: a ``parent_id`` given
        goes to the catalog, an ``outdated_by`` given becomes a note. Saving a forgotten
        memory again brings it back (its tombstone goes).
        """
        stored: list[Leaf] = []
        with self._writing() as batch:
            index = self._idx
            leaves = list(leaves)
            known = index.get_many([leaf.leaf_id for leaf in leaves])
            # New leaves go to the index together, at the end (or before a repeat).
            fresh: dict[str, tuple[Entry, Fields]] = {}
            later: list[tuple[Leaf, Leaf]] = []
            for leaf in leaves:
                rel = leaf_rel(leaf.leaf_id, leaf.domain)
                bare = leaf.evolve(parent_id=None, outdated_by=None)
                if leaf.leaf_id in fresh:
                    index.insert_new(list(fresh.values()))
                    fresh.clear()
                    existing = index.get(leaf.leaf_id)
                else:
                    existing = known.get(leaf.leaf_id)
                self._unbury(batch, leaf.leaf_id)
                if existing is None:
                    batch.note(rel)
                    batch.write(rel, bare)
                    if (self.path / NOTES_DIR / leaf.leaf_id).exists():
                        later.append((leaf, bare))  # its notes are folded in below
                    else:
                        fresh[leaf.leaf_id] = leaf_row(bare, rel, 0)
                        if leaf.parent_id is not None or leaf.outdated_by is not None:
                            later.append((leaf, bare))
                    stored.append(leaf)
                    continue
                if existing.path != rel:
                    raise ValueError(
                        f"leaf {leaf.leaf_id} already exists in domain {existing.domain}"
                    )
                try:
                    old = self._read_leaf_file(existing.path, count=False)
                except LeafNotFoundError:
                    # Its file was deleted by hand (the catalog just let go of it).
                    self._write_leaf(batch, index, bare, rel, parent=None)
                    later.append((leaf, bare))
                    stored.append(leaf)
                    continue
                if old.evolve(parent_id=None, outdated_by=None) != bare:
                    self._write_leaf(batch, index, bare, rel)
                later.append((leaf, bare))
                stored.append(leaf)
            index.insert_new(list(fresh.values()))
            done: dict[str, Leaf] = {}
            for leaf, bare in later:
                self._settle(batch, index, leaf, bare)
            for _, bare in later:
                done[bare.leaf_id] = self._complete(bare, index.get(bare.leaf_id))
        return [done.get(leaf.leaf_id, leaf) for leaf in stored]

    def _settle(self, batch: Batch, index: Index, leaf: Leaf, bare: Leaf) -> None:
        """After a leaf is staged: index it with its notes, and turn the annotations the
        caller gave (a parent, a correction) into a catalog change and a note."""
        rel = leaf_rel(leaf.leaf_id, leaf.domain)
        entry = index.get(leaf.leaf_id)
        if entry is None:  # a catalogued leaf already holds the fold of its notes
            self._write_leaf(batch, index, bare, rel, index_only=True)
            entry = index.get(leaf.leaf_id)
        assert entry is not None
        parent = leaf.parent_id
        if parent is not None and parent != entry.parent_id and index.get(parent) is not None:
            index.set_parent([leaf.leaf_id], parent)
        wanted = _normalized(leaf.outdated_by) if leaf.outdated_by is not None else None
        if wanted is not None and self._correction(index, leaf.leaf_id) != wanted:
            self._add_note(batch, index, "outdated", leaf.leaf_id, wanted)

    def _write_leaf(
        self,
        batch: Batch,
        index: Index,
        leaf: Leaf,
        rel: str,
        *,
        parent: str | None = _UNSET,
        index_only: bool = False,
    ) -> None:
        """Stage a leaf's file (unless ``index_only``) and index it with its notes; its
        parent is the catalog's unless ``parent`` is given."""
        # The file's bytes are made once, at commit; the index learns its size then.
        batch.note(rel)
        if not index_only:
            batch.write(rel, leaf.evolve(parent_id=None, outdated_by=None))
        size = 0  # a staged file's size is learnt at commit
        if not batch.staged(rel):
            try:
                size = (self.path / rel).stat().st_size
            except OSError:
                size = 0
        keep: dict[str, Any] = {} if parent is _UNSET else {"parent": parent}
        index_leaf(
            self.path,
            index,
            leaf.evolve(outdated_by=None),
            rel,
            size,
            staged=batch.notes.get(leaf.leaf_id, ()),
            gone=batch.gone,
            **keep,
        )

    def _correction(self, index: Index, leaf_id: str) -> Correction | None:
        """A leaf's current correction, as the catalog holds the fold of its notes."""
        entry = index.get(leaf_id)
        if entry is None or not entry.outdated_by:
            return None
        reason = index.folded_of([leaf_id]).get(leaf_id, ("", {}))[0]
        return Correction(by=entry.outdated_by, date=entry.outdated_on or "", reason=reason)

    def _add_note(self, batch: Batch, index: Index, op: NoteOp, leaf_id: str, value: Any) -> None:
        """Write a note (``outdated`` with a Correction, ``restored``, ``extra`` with a
        dict) and fold the leaf again. The clock moves past the leaf's notes first."""
        clock = self._clock
        on_disk = read_notes(self.path, leaf_id)  # read once: observed, then folded
        clock.observe(newest([*on_disk, *batch.notes.get(leaf_id, ())]))
        if op == "outdated":
            assert isinstance(value, Correction)
            note = clock.note(
                "outdated", leaf_id, by=value.by, date=value.date, reason=value.reason
            )
        elif op == "extra":
            note = clock.note("extra", leaf_id, extra=dict(value))
        else:
            note = clock.note("restored", leaf_id)
        batch.add_note(note)
        refold(
            self.path,
            index,
            leaf_id,
            staged=batch.notes.get(leaf_id, ()),
            gone=batch.gone,
            on_disk=on_disk,
        )

    def _unbury(self, batch: Batch, leaf_id: str) -> None:
        """A forgotten memory saved again: its tombstone goes (the save wins).

        Deleted now, before the batch lands its files: recovery applies a tombstone it
        finds, and must not delete the leaf this save is writing."""
        rel = tombstone_rel(leaf_id)
        if leaf_id in batch.gone:
            batch.gone.discard(leaf_id)
            batch.remove(rel)
        if (self.path / rel).exists():
            batch.note(rel)
            unlink_quietly(self.path / rel)

    def _complete(self, leaf: Leaf, entry: Entry | None) -> Leaf:
        """A leaf read from its file, with what the catalog holds about it: its parent,
        its correction and the ``extra`` keys its notes added."""
        if entry is None:
            return leaf
        folded = self._idx.folded_of([leaf.leaf_id]).get(leaf.leaf_id)
        return self._completed(leaf, entry, folded)

    @staticmethod
    def _completed(leaf: Leaf, entry: Entry, folded: tuple[str, dict[str, Any]] | None) -> Leaf:
        reason, more = folded or ("", {})
        outdated = (
            Correction(by=entry.outdated_by, date=entry.outdated_on or "", reason=reason)
            if entry.outdated_by
            else None
        )
        extra = {**leaf.extra, **more} if more else leaf.extra
        return leaf.evolve(parent_id=entry.parent_id, outdated_by=outdated, extra=extra)

    @_healing
    def read_leaves(self, leaf_ids: Sequence[str]) -> list[Leaf]:
        """Read many leaves (one catalog query for all of them), in the order asked.

        Raises:
            LeafNotFoundError: one of the ids is not a leaf of the store.
        """
        index = self._idx
        known = index.get_many(leaf_ids)
        folded = index.folded_of(list(known))
        out = []
        for leaf_id in leaf_ids:
            entry = _leaf_entry(known.get(leaf_id), leaf_id)
            leaf = self._read_leaf_file(entry.path)
            out.append(self._completed(leaf, entry, folded.get(leaf_id)))
        return out

    @_healing
    def read_leaf(self, leaf: str | Entry) -> Leaf:
        """Read one leaf from its file.

        Args:
            leaf: its id, or the catalog :class:`Entry` the caller already holds (a
                candidate's): the file is then read without asking the catalog again.

        Raises:
            LeafNotFoundError: no leaf with that id (or the entry is not a leaf's).
            CorruptFileError: its file cannot be parsed.
        """
        entry = _leaf_entry(self._idx.get(leaf), leaf) if isinstance(leaf, str) else leaf
        entry = _leaf_entry(entry, entry.id)
        found = self._read_leaf_file(entry.path)
        if self.edited and found.leaf_id in self.edited:
            entry = self._idx.get(found.leaf_id) or entry  # just adopted: its row is new
        return self._complete(found, entry)

    def _own_batch(self) -> Batch | None:
        batch = self._batch
        if batch is not None and self._batch_thread == threading.get_ident():
            return batch
        return None

    def _read_leaf_file(self, rel: str, *, count: bool = True) -> Leaf:
        leaf = self._read_item(rel, Leaf, count=count)
        assert isinstance(leaf, Leaf)
        return leaf

    def _read_item(self, rel: str, kind: type[Leaf | Branch], *, count: bool) -> Leaf | Branch:
        """The leaf or branch at ``rel``: staged in this thread's batch, else parsed from
        disk (and remembered by the batch); counted in :attr:`io` when ``count``."""
        batch = self._own_batch()
        full = self.path / rel
        missing = LeafNotFoundError if kind is Leaf else BranchNotFoundError
        try:
            if batch is not None:
                staged = batch.read(rel)
                if isinstance(staged, kind):
                    return staged
            if full.is_symlink() and not within(full, self.path):
                raise CorruptFileError(
                    f"is a symbolic link to {os.path.realpath(full)}, outside the store; "
                    "IHMT does not follow it",
                    path=full,
                )
            data = full.read_bytes()
        except FileNotFoundError:
            # Deleted by hand (or by another process a moment ago): the catalog follows.
            if batch is None or rel not in batch.removals:
                self._heal([rel])
            raise missing(Path(rel).stem) from None
        if count:
            self.io.files_read += 1
            self.io.bytes_read += len(data)
            if kind is Leaf:
                self.io.leaf_reads += 1
            else:
                self.io.branch_reads += 1
        record: Leaf | Branch = parse_leaf(data, full) if kind is Leaf else parse_branch(data, full)
        if batch is not None:
            batch.remember(rel, record)
        elif isinstance(record, Leaf) and stored_checksum(data) not in (None, record.checksum):
            self._adopt_hand_edit(rel, record)
        return record

    def _adopt_hand_edit(self, rel: str, leaf: Leaf) -> None:
        """A leaf whose text was edited by hand: index its text as it is now, and write
        its header's checksum so it is adopted once. Its text is never touched."""
        if self.read_only:
            return
        try:
            with self._writing() as batch:
                self._write_leaf(batch, self._idx, leaf, rel)
        except (StoreError, OSError) as exc:
            logger.warning("could not re-index %s, edited by hand: %s", rel, exc)
            return
        if leaf.leaf_id not in self.edited:
            self.edited.append(leaf.leaf_id)
        self._notice(f"memory {leaf.leaf_id} was edited by hand: its new text is indexed")

    @_healing
    def adopt_hand_edits(self) -> list[str]:
        """Find leaves edited by hand whose size changed (one ``stat`` per leaf) and
        re-index them as they are now; their ids (also added to
        :attr:`edited`). An edit that keeps the size is adopted when the leaf is next
        read, and listed by :meth:`hand_edits`."""
        root = str(self.path)
        changed = []
        for rel, size in self._idx.leaf_sizes():
            try:
                if size and os.stat(os.path.join(root, rel)).st_size != size:
                    changed.append(rel)
            except OSError:
                continue
        found = []
        for rel in changed:
            before = len(self.edited)
            try:
                self._read_leaf_file(rel, count=False)
            except StoreError:
                continue
            if len(self.edited) > before:
                found.append(self.edited[-1])
        return found

    def hand_edits(self) -> list[str]:
        """The leaves whose text no longer matches their header's checksum or the size
        the index knows (edited by hand and not read since): ``ihmt doctor`` lists them.
        Reads every leaf file."""
        out = []
        for entry in self._all_entries("leaf"):
            try:
                data = (self.path / entry.path).read_bytes()
            except OSError:
                continue
            stored = stored_checksum(data)
            if len(data) != entry.size and entry.size:
                out.append(entry.id)
                continue
            try:
                text = parse_leaf(data, self.path / entry.path).text
            except CorruptFileError:
                continue
            if stored is not None and stored != checksum_of(text):
                out.append(entry.id)
        return out

    def _heal(self, rels: Sequence[str]) -> None:
        """Make the catalog follow files that vanished (deleted by hand): their rows go,
        their children return to the trunk. Best effort: skipped when the store is
        read-only or another writer holds the lock; a rebuild does it at the latest."""
        if self.read_only:
            return
        try:
            with self._writing(timeout=0.0) as batch:
                index = self._idx
                for rel in rels:
                    if (self.path / rel).exists():
                        continue
                    if index.get(Path(rel).stem) is None:
                        continue
                    logger.warning("%s was deleted outside IHMT; dropped from the catalog", rel)
                    batch.note(rel)
                    index.delete(Path(rel).stem)
                    index.detach_children(Path(rel).stem)
        except (StoreError, sqlite3.Error, OSError) as exc:
            logger.info("could not drop vanished files from the catalog yet: %s", exc)

    def compact(self) -> None:
        """Leave no trace of text deleted since the last :meth:`forget` in the index file.

        :meth:`forget` does it for the leaf's own rows; a caller that then rewrites the
        summaries that quoted the leaf (``Consolidator.refresh``) calls this after. A
        no-op unless something was forgotten through this object since the last call.
        """
        if not self._compact_due or self.read_only:
            return
        with self._locked():
            self._scrub()
        self._compact_due = False

    def _scrub(self) -> None:
        try:
            self._idx.scrub()
        except sqlite3.Error as exc:
            logger.warning("could not compact the index after a forget: %s", exc)

    def annotate(
        self,
        leaf_id: str,
        *,
        outdated_by: Correction | None = _UNSET,
        parent_id: str | None = _UNSET,
        extra: dict[str, Any] | None = None,
    ) -> Leaf:
        """Change a leaf's annotations; its file is never touched.

        A correction, a restore and ``extra`` keys are each written as a note (one new
        file, ``notes/<leaf_id>/…``), which replicates without conflicts; the parent is
        the catalog's alone. Nothing is written when nothing changes.

        Args:
            outdated_by: a :class:`Correction` to flag it OUTDATED, or None to restore it.
            parent_id: the branch that now summarises it (None detaches it).
            extra: keys merged into ``extra`` (user-level data, e.g. explicit facts).

        Raises:
            LeafNotFoundError: no leaf with that id.
        """
        with self._writing() as batch:
            index = self._idx
            entry = _leaf_entry(index.get(leaf_id), leaf_id)
            leaf = self._complete(self._read_leaf_file(entry.path, count=False), entry)
            if outdated_by is not _UNSET and outdated_by is not None:
                outdated_by = _normalized(outdated_by)
            if outdated_by is not _UNSET and outdated_by != leaf.outdated_by:
                if outdated_by is None:
                    self._add_note(batch, index, "restored", leaf_id, None)
                else:
                    self._add_note(batch, index, "outdated", leaf_id, outdated_by)
            if parent_id is not _UNSET and parent_id != entry.parent_id:
                if parent_id is not None:
                    check_id(parent_id, "parent id")
                    if index.get(parent_id) is None:
                        parent_id = None  # its branch file is gone
                index.set_parent([leaf_id], parent_id)
                batch.changed = True
            if extra:
                changed = {k: v for k, v in extra.items() if leaf.extra.get(k, _UNSET) != v}
                if changed:
                    self._add_note(batch, index, "extra", leaf_id, changed)
            return self._complete(leaf, index.get(leaf_id))

    def forget(self, item_id: str) -> Entry:
        """Delete one leaf for good, with its index rows; the only way a leaf goes.

        Its parent branch drops the child reference (and the excerpt it embedded);
        summaries above it are the caller's to refresh.

        Raises:
            LeafNotFoundError: no leaf with that id.
        """
        with self._writing() as batch:
            index = self._idx
            entry = _leaf_entry(index.get(item_id), item_id)
            full = self.path / entry.path
            if full.is_symlink():
                raise StoreIOError(
                    f"is a symbolic link to {os.path.realpath(full)}; IHMT deletes only files "
                    "it wrote, and removing the link would leave that file in place. Delete "
                    "the file and the link by hand, then run 'ihmt rebuild'",
                    path=full,
                )
            batch.scrub = True
            self._leave_parent(batch, index, entry)
            self._bury(batch, index, item_id, [entry.path])
        self._derived_call(lambda table: table.remove([item_id]), quiet=True)
        return entry

    def _bury(self, batch: Batch, index: Index, leaf_id: str, rels: Iterable[str]) -> None:
        """Forget ``leaf_id`` in this batch: its tombstone is written (unless there), its
        leaf files ``rels`` and its notes go, its row goes, and the leaves it corrected
        fold again without its corrections. Deletes nothing a tombstone does not name."""
        tomb = tombstone_rel(leaf_id)
        if not (self.path / tomb).is_file() and not batch.staged(tomb):
            batch.note(tomb)
            batch.write_raw(tomb, tombstone_bytes(leaf_id))
        batch.gone.add(leaf_id)
        for rel in rels:
            batch.note(rel)
            batch.remove(rel)
        for rel in note_files(self.path, leaf_id):
            batch.note(rel)
            batch.remove(rel)
        for note in batch.notes.pop(leaf_id, []):
            batch.remove(note_rel(note))
        batch.prune.add(f"{NOTES_DIR}/{leaf_id}")
        index.delete(leaf_id)
        for other in index.corrected_by(leaf_id):
            refold(
                self.path, index, other.id, staged=batch.notes.get(other.id, ()), gone=batch.gone
            )

    def _leave_parent(self, batch: Batch, index: Index, entry: Entry) -> None:
        """Drop a departing leaf from its parent branch's children (and the excerpt the
        branch embedded); summaries above are the caller's to refresh."""
        if not entry.parent_id:
            return
        parent = index.get(entry.parent_id)
        if parent is None:
            return
        try:
            branch = self._read_branch_file(parent.path, count=False)
        except BranchNotFoundError:
            return
        kept = tuple(c for c in branch.children if c.id != entry.id)
        if len(kept) == len(branch.children):
            return
        self._write_branch(
            batch,
            index,
            branch.evolve(children=kept, leaf_count=max(0, branch.leaf_count - 1)),
            parent.path,
        )

    # ================================================================= replication
    def apply_changes(self, paths: Iterable[str]) -> AppliedChanges:
        """Bring the catalog and the full-text index in step with replicated files that
        changed on disk (added, modified or deleted by a merge): ``paths`` are
        store-relative, as ``git diff --name-only`` lists them.

        A leaf file that is there is read and indexed; one that is gone leaves the
        catalog (no file is deleted). Paths outside :attr:`REPLICATED` are ignored. The
        cost is that of the paths given, not of the store; running it twice on the same
        paths changes nothing the second time. Holds the store lock.

        Raises:
            StoreFormatError: a changed ``ihmt.config.json`` names a newer format.
            ConfigError: a changed ``ihmt.config.json`` is malformed.
        """
        changed = sort_changes(paths)
        added: set[str] = set()
        annotated: set[str] = set()
        removed: set[str] = set()
        domains: set[str] = set()
        problems: list[Problem] = []
        with self._writing() as batch:
            if changed.config:
                self.config = _read_config(self.path / CONFIG_FILE)
            index = self._idx
            root = self.path
            ids = {*changed.leaves.values(), *changed.notes, *changed.tombstones}
            known = {k: v for k, v in index.get_many(sorted(ids)).items() if v.kind == "leaf"}
            # A tombstone wins over a leaf file or a note a merge brought back.
            tombstoned = {leaf_id for leaf_id in ids if is_tombstoned(root, leaf_id)}
            for leaf_id in sorted(tombstoned):
                entry = known.get(leaf_id)
                files = {rel for rel, i in changed.leaves.items() if i == leaf_id}
                files = {rel for rel in files if os.path.lexists(root / rel)}
                if entry is not None:
                    files.add(entry.path)
                    self._leave_parent(batch, index, entry)
                    domains.add(entry.domain)
                if files or note_files(root, leaf_id):
                    batch.scrub = batch.scrub or entry is not None
                    self._bury(batch, index, leaf_id, sorted(files))
                if entry is not None or files:
                    removed.add(leaf_id)
            for rel, leaf_id in sorted(changed.leaves.items()):
                if leaf_id in tombstoned:
                    continue
                outcome = self._apply_leaf(batch, index, rel, leaf_id, known.get(leaf_id), problems)
                if outcome is not None:
                    verdict, domain = outcome
                    domains.add(domain)
                    {"added": added, "annotated": annotated, "removed": removed}[verdict].add(
                        leaf_id
                    )
            for leaf_id in sorted(changed.notes - set(changed.leaves.values()) - tombstoned):
                entry = index.get(leaf_id)
                if entry is None or entry.kind != "leaf":
                    continue  # its leaf has not arrived: folded when it does
                before = (entry.outdated_by, entry.outdated_on, index.folded_of([leaf_id]))
                folded = refold(root, index, leaf_id)
                if folded is None:
                    continue
                self._clock.observe(folded.newest)
                after = index.get(leaf_id)
                assert after is not None
                if before != (after.outdated_by, after.outdated_on, index.folded_of([leaf_id])):
                    batch.changed = True
                    annotated.add(leaf_id)
                    domains.add(entry.domain)
        annotated -= added | removed
        if removed:  # as forget does: no derived copy of a forgotten memory stays
            gone = sorted(removed)
            self._derived_call(lambda table: table.remove(gone), quiet=True)
        return AppliedChanges(
            added=tuple(sorted(added)),
            annotated=tuple(sorted(annotated)),
            removed=tuple(sorted(removed)),
            domains=tuple(sorted(domains)),
            problems=tuple(problems),
            config=changed.config,
        )

    def _apply_leaf(
        self,
        batch: Batch,
        index: Index,
        rel: str,
        leaf_id: str,
        existing: Entry | None,
        problems: list[Problem],
    ) -> tuple[str, str] | None:
        """Index the leaf file at ``rel`` as it is now, or drop its row if it is gone;
        ``(verdict, domain)``, or None when nothing changed."""
        full = self.path / rel
        try:
            if full.is_symlink() and not within(full, self.path):
                raise CorruptFileError(
                    "is a symbolic link leading out of the store; not followed", path=full
                )
            data = full.read_bytes()
        except FileNotFoundError:
            if existing is None or existing.path != rel:
                return None
            batch.note(rel)
            self._leave_parent(batch, index, existing)
            index.delete(leaf_id)
            batch.scrub = True
            return "removed", existing.domain
        except (CorruptFileError, OSError) as exc:
            problems.append(Problem(path=rel, reason=str(exc)))
            return None
        self.io.files_read += 1
        self.io.bytes_read += len(data)
        self.io.leaf_reads += 1
        try:
            leaf = parse_leaf(data, full)
            if leaf.leaf_id != leaf_id or leaf_rel(leaf_id, leaf.domain) != rel:
                raise CorruptFileError(
                    f"its header names {leaf.leaf_id!r} in domain {leaf.domain!r}, which "
                    "belongs elsewhere",
                    path=full,
                )
        except CorruptFileError as exc:
            logger.warning("%s; left as it is and kept out of the index", exc)
            problems.append(Problem(path=rel, reason=str(exc)))
            return None
        if existing is not None and existing.path != rel:
            problems.append(
                Problem(
                    path=rel,
                    reason=f"a second copy of {leaf_id} (the one at {existing.path} is used); "
                    "skipped, delete it",
                )
            )
            return None
        # The catalog's parent, not the file's: consolidation is local to each machine.
        before = index.indexed_fields(leaf_id) if existing is not None else None
        folded_before = index.folded_of([leaf_id]) if existing is not None else {}
        row, folded = index_leaf(self.path, index, leaf, rel, len(data))
        self._clock.observe(folded.newest)
        fields = index.indexed_fields(leaf_id)
        if existing is None or (
            before != fields or existing.excerpt != row.excerpt or existing.tokens != row.tokens
        ):
            verdict = "added"
        elif (existing.status, existing.outdated_by, existing.outdated_on) != (
            row.status,
            row.outdated_by,
            row.outdated_on,
        ) or folded_before != index.folded_of([leaf_id]):
            verdict = "annotated"
        elif existing == row:
            return None
        else:
            verdict = ""
        batch.note(rel)
        return (verdict, leaf.domain) if verdict else None

    # ================================================================= branches
    def put_branch(self, branch: Branch) -> Branch:
        """Write one branch; its branch children are stamped separately, after it.

        A loose leaf it lists takes it as its parent in the same step: from format 2 on
        the branch's list is the only record of a leaf's parent on disk, so the catalog
        says what a rebuild would.
        """
        with self._writing() as batch:
            index = self._idx
            rel = branch_rel(branch.node_id, branch.layer)
            existing = index.get(branch.node_id)
            if existing is not None and branch.parent_id is None and existing.parent_id:
                branch = branch.evolve(parent_id=existing.parent_id)
            self._write_branch(batch, index, branch, rel)
            index.adopt_listed(branch.node_id, [c.id for c in branch.children if c.kind == "leaf"])
            return branch

    def _write_branch(self, batch: Batch, index: Index, branch: Branch, rel: str) -> None:
        batch.note(rel)
        batch.write(rel, branch)
        row, fields = branch_row(branch, rel, 0)
        index.upsert(row, fields, [c.id for c in branch.children])

    @_healing
    def read_branch(self, node_id: str) -> Branch:
        """Read one branch file.

        Raises:
            BranchNotFoundError: no branch with that id.
        """
        return self._read_branch_file(_branch_entry(self._idx.get(node_id), node_id).path)

    def _read_branch_file(self, rel: str, *, count: bool = True) -> Branch:
        branch = self._read_item(rel, Branch, count=count)
        assert isinstance(branch, Branch)
        return branch

    def set_parent(self, child_ids: Sequence[str], parent_id: str | None) -> None:
        """Record the branch that now summarises leaves or branches: a leaf's parent is
        kept in the catalog only (its file is never rewritten); a branch's file is
        stamped.

        Raises:
            LeafNotFoundError: one of the ids is unknown.
        """
        with self._writing() as batch:
            index = self._idx
            if parent_id is not None:
                check_id(parent_id, "parent id")
            known = index.get_many(child_ids)
            moved = []
            for child in child_ids:
                entry = known.get(child)
                if entry is None:
                    raise LeafNotFoundError(child)
                if entry.parent_id == parent_id:
                    continue
                moved.append(child)
                if entry.kind == "leaf":
                    batch.changed = True
                    continue  # a leaf's parent lives in the catalog (format 2)
                # Only the header changes: the file is rewritten, the full-text row stays.
                kind = Branch
                record = self._read_item(entry.path, kind, count=False).evolve(parent_id=parent_id)
                batch.note(entry.path)
                batch.write(entry.path, record)
            index.set_parent(moved, parent_id)

    def remove_branch(self, node_id: str) -> None:
        """Delete a branch file and detach its children (they go back to the trunk).

        Leaves are never deleted this way; only the summary above them goes.
        """
        with self._writing() as batch:
            index = self._idx
            entry = _branch_entry(index.get(node_id), node_id)
            self.set_parent([c.id for c in index.children(node_id)], None)
            batch.note(entry.path)
            batch.remove(entry.path)
            index.delete(node_id)

    # ================================================================= the trunk
    def read_root(self) -> Root:
        """``root.json`` as last written (see :meth:`trunk` for the live view)."""
        try:
            return Root.from_json(read_json(self.path / ROOT_FILE))
        except FileNotFoundError:
            return Root()
        except (CorruptFileError, TypeError, ValueError, AttributeError) as exc:
            logger.warning("root.json is unreadable (%s); using the live trunk", exc)
            return self.trunk()

    @_healing
    def trunk(self) -> Root:
        """The trunk computed from the catalog: each domain's items without a parent."""
        index = self._idx
        tops: dict[str, list[str]] = {}
        for entry in index.loose(None, None):
            tops.setdefault(entry.domain, []).append(entry.id)
        per_domain = index.domain_counts()
        domains = tuple(
            DomainTrunk(
                domain=dom,
                top=tuple(tops.get(dom, ())),
                leaves=int(leaves or 0),
                branches=int(branches or 0),
                depth=int(depth or 0),
            )
            for dom, leaves, branches, depth in sorted(per_domain)
        )
        return Root(domains=domains, generation=index.generation(), updated=now_timestamp())

    def refresh_root(self, keywords: dict[str, tuple[str, ...]] | None = None) -> Root:
        """Rewrite ``root.json`` from the catalog (after consolidation, and by rebuild).

        Its size follows the number of domains and top items, not the number of leaves.
        """
        with self._locked():
            root = self.trunk()
            if keywords:
                domains = tuple(
                    dataclasses.replace(d, keywords=tuple(keywords.get(d.domain, d.keywords)))
                    for d in root.domains
                )
                root = dataclasses.replace(root, domains=domains)
            atomic_write(self.path / ROOT_FILE, json_bytes(root.to_json()))
            return root

    # ================================================================= queries
    @_healing
    def entry(self, item_id: str) -> Entry | None:
        """The catalog entry of a leaf or branch, or None."""
        return self._idx.get(item_id)

    @_healing
    def entries(self, ids: Sequence[str]) -> dict[str, Entry]:
        """Catalog entries for many ids at once (unknown ids are left out)."""
        return self._idx.get_many(ids)

    @_healing
    def children(self, parent_id: str) -> list[Entry]:
        """Catalog entries of a branch's children, oldest first."""
        return self._idx.children(parent_id)

    @_healing
    def unparented(self, layer: int | None = None, domain: str | None = None) -> list[Entry]:
        """Items no branch summarises yet (the trunk references them), oldest first.

        A loose item whose file was deleted by hand leaves the catalog here (its children
        join the list): consolidation, the next write after a save, starts from this.
        """
        wanted = None if domain is None else safe_domain(domain)
        loose = self._idx.loose(layer, wanted)
        vanished = self._vanished(loose)
        if vanished:
            self._heal(vanished)
            loose = self._idx.loose(layer, wanted)
        return loose

    def _vanished(self, entries: Iterable[Entry]) -> list[str]:
        """Paths of ``entries`` whose file is gone (not staged by this thread's batch)."""
        own = self._own_batch()
        return [
            e.path
            for e in entries
            if (own is None or e.path not in own.pending)
            and not os.path.lexists(self.path / e.path)
        ]

    @_healing
    def open_branch(self, domain: str, layer: int, below: int) -> Entry | None:
        """A branch of ``domain`` on ``layer`` (>= 1) with fewer than ``below`` children
        in the catalog, or None: where a forced consolidation puts a partial group
        rather than wrapping it again. A top branch comes first, then the most recent."""
        return self._idx.open_branch(safe_domain(domain), int(layer), int(below))

    @_healing
    def listed_in(self, child_ids: Sequence[str]) -> dict[str, list[str]]:
        """Which branches list each id among their children (from the branch files).

        A child listed by a branch but not stamped with it is the trace of a
        consolidation that was interrupted between writing the branch and stamping.
        """
        return self._idx.listed_in(child_ids)

    @_healing
    def corrections_of(self, leaf_id: str) -> list[Entry]:
        """Leaves flagged OUTDATED by ``leaf_id``."""
        return self._idx.corrected_by(leaf_id)

    def path_to(self, item_id: str) -> list[str]:
        """Ids from the top of the tree down to ``item_id`` (the trunk itself excluded).

        Raises:
            LeafNotFoundError: no such item.
        """
        chain = self.paths_to([item_id])[item_id]
        if not chain:
            raise LeafNotFoundError(item_id)
        return chain

    @_healing
    def paths_to(self, item_ids: Sequence[str]) -> dict[str, list[str]]:
        """:meth:`path_to` for many items in one query (unknown ids get ``[]``)."""
        known = self._idx.ancestors(list(dict.fromkeys(item_ids)))
        return {item: [*reversed(known[item]), item] if item in known else [] for item in item_ids}

    def iter_entries(self, kind: ItemKind | None = None) -> Iterator[Entry]:
        """Every catalog entry (``kind``: ``leaf``, ``branch`` or None for both)."""
        yield from self._all_entries(kind)

    @_healing
    def _all_entries(self, kind: ItemKind | None) -> list[Entry]:
        return list(self._idx.iter_entries(kind))

    def iter_leaves(self) -> Iterator[Leaf]:
        """Every leaf, read from its file, in id order."""
        index = self._idx
        entries = list(index.iter_entries("leaf"))
        # One query for what the notes add (a row per annotated leaf), not one per leaf.
        folded = index.all_folded()
        for entry in entries:
            leaf = self._read_leaf_file(entry.path, count=False)
            yield self._completed(leaf, entry, folded.get(entry.id))

    @_healing
    def candidates(
        self,
        query: str | Sequence[str],
        *,
        limit: int = 50,
        weights: FieldWeights | None = None,
        kinds: Sequence[ItemKind] = ("leaf", "branch"),
        domain: str | None = None,
        project: str | None = None,
        source_prefix: str | None = None,
        within: Sequence[str] | None = None,
        exact: int = 10,
        common: float | None = None,
    ) -> list[Candidate]:
        """Rank leaves and branch summaries by BM25 over title, keywords, tags and text.

        Document frequencies are global (the whole store). ``query`` is raw text (it
        goes through the same normalisation as the index) or already-normalised terms.

        Args:
            within: only these ids are eligible.
            exact: the first ``exact`` results are guaranteed to be the true BM25 top;
                the rest are the best of the documents that had to be scored.
            common: a share of the items (e.g. 0.05): a query term found in more items
                than that (and in at least 1,000) ranks only documents that also hold a
                rarer query term, so a word in thousands of memories costs nothing;
                their scores still count it. The guarantee of ``exact`` then holds
                among those documents.
        """
        query_terms = terms(query) if isinstance(query, str) else list(query)
        if not query_terms:
            return []
        rows = self._idx.search(
            query_terms,
            limit=limit,
            weights=weights or FieldWeights(),
            kinds=tuple(kinds),
            domain=None if domain is None else safe_domain(domain),
            project=project,
            source_prefix=source_prefix,
            ids=within,
            exact=exact,
            common=common,
        )
        out = []
        vanished = set(self._vanished(entry for entry, _, _ in rows))
        for entry, score, present in rows:
            if entry.path in vanished:
                continue
            matched = tuple(t for t in dict.fromkeys(query_terms) if t in present)
            out.append(Candidate(entry=entry, score=score, matched=matched))
        if vanished:
            self._heal(sorted(vanished))
        return out

    @_healing
    def document_frequencies(self, query_terms: Sequence[str]) -> dict[str, int]:
        """How many leaves contain each normalised term.

        Only leaves count, here and in every ranking statistic: branch summaries repeat
        their children's words, and each machine consolidates in its own order, so
        counting them would rank the same memories differently on two synced machines.
        """
        return self._idx.term_frequencies(query_terms)

    @_healing
    def count(self, kind: ItemKind | None = None) -> int:
        """Number of items (of one kind). Cached until the next commit."""
        if kind is None:
            return self._idx.total_items()
        return self._idx.documents(kind)

    @property
    @_healing
    def generation(self) -> int:
        """Grows with every committed change, in any process: a cheap cache key."""
        return self._idx.generation()

    @_healing
    def stats(self) -> StoreStats:
        """Totals, including how many items cannot be reached from the trunk (must be 0)."""
        index = self._idx
        counts = index.counts()
        reachable = index.reachable()
        return StoreStats(
            leaves=counts["leaves"],
            branches=counts["branches"],
            depth=counts["depth"],
            domains=counts["domains"],
            unconsolidated=counts["unconsolidated"],
            unreachable=index.total_items() - reachable,
            outdated=counts["outdated"],
            bytes=counts["bytes"],
            generation=index.generation(),
        )

    def state_file(self, name: str) -> Path:
        """Path of a derived file under ``state/`` owned by a sibling package."""
        if (
            "/" in name
            or "\\" in name
            or name.startswith(".")
            or name in (INDEX_FILE, JOURNAL_FILE, DERIVED_FILE, CLOCK_FILE)
        ):
            raise ValueError(f"invalid state file name {name!r}")
        return self.path / STATE_DIR / name

    # ================================================================= derived data
    # What sibling packages compute per leaf (the navigator's vectors) and want kept:
    # opaque bytes in named spaces, in ``state/derived.sqlite3``. See ``_derived.py``.
    def put_derived(self, space: str, items: Mapping[str, bytes]) -> None:
        """Store ``items`` (item id → bytes) in ``space``, replacing what was there.

        Takes the store's write lock (re-entrant: call it inside a save's batch to keep
        the two in one locked step).
        """
        _check_space(space)
        with self._locked():
            self._derived_call(lambda table: table.put(space, items))

    def clear_derived(self, space: str) -> None:
        """Drop everything in ``space``; readers start over."""
        _check_space(space)
        with self._locked():
            self._derived_call(lambda table: table.clear(space))

    def derived_changes(self, space: str, epoch: int | None = None, seq: int = 0) -> DerivedChanges:
        """What was written to ``space`` after ``(epoch, seq)``; everything for a new reader."""
        _check_space(space)
        return self._derived_call(lambda table: table.changes(space, epoch, seq))

    def derived_ids(self, space: str) -> set[str]:
        """The items that have data in ``space``."""
        _check_space(space)
        return self._derived_call(lambda table: table.item_ids(space))

    def derived_counts(self) -> dict[str, int]:
        """Items holding data, by space."""
        return self._derived_call(lambda table: table.counts())

    def _derived_call(self, action: Callable[[DerivedTable], _R], *, quiet: bool = False) -> _R:
        """Run ``action`` on the derived table; a damaged file is derived state, so it is
        replaced by an empty one (its owners refill it) and the action retried once."""
        path = self.path / STATE_DIR / DERIVED_FILE
        if self._derived is None:
            self._derived = DerivedTable(path)
        table = self._derived
        try:
            try:
                with table.lock:
                    return action(table)
            except sqlite3.DatabaseError as exc:
                if not is_corrupt(exc):
                    raise
                with table.lock:
                    table.close()
                    remove_sqlite_files(path, quiet=True)
                    self._notice(
                        f"{DERIVED_FILE} was damaged ({exc}); it was replaced by an empty one: "
                        "run 'ihmt index --semantic' to fill it again"
                    )
                    return action(table)
        except sqlite3.Error as exc:
            if quiet:
                logger.warning("derived data not updated: %s", exc)
                return None  # type: ignore[return-value]
            raise StoreIOError(
                f"the derived data could not be used ({exc}); searches still work by words",
                path=path,
            ) from exc

    # ================================================================= rebuild
    def rebuild(self, progress: Progress | None = None) -> RebuildReport:
        """Recreate the derived index and ``root.json`` from the leaves and branch files.

        Unreadable files are reported (path and reason) and left untouched.

        Args:
            progress: called as ``progress(done, total, path)`` while files are read.
        """
        with self._locked():
            report = self._rebuild_locked(progress)
        return report

    def _after_rebuild(self, live: list[str]) -> None:
        self._derived_call(lambda table: table.keep_only(live), quiet=True)
        try:
            atomic_write(self.path / ROOT_FILE, json_bytes(self.trunk().to_json()))
        except StoreError as exc:
            logger.warning("could not rewrite root.json: %s", exc)

    def update_config(self, **changes: Any) -> StoreConfig:
        """Change config values (validated) and write ``ihmt.config.json`` atomically."""
        with self._locked():
            data = {**self.config.to_json(), **changes}
            try:
                config = StoreConfig.from_json(data)
            except TypeError as exc:
                raise ValueError(str(exc)) from None
            atomic_write(self.path / CONFIG_FILE, json_bytes(config.to_json()))
            self.config = config
            return config


def _normalized(correction: Correction) -> Correction:
    """``correction`` with its date in the canonical form (as a note stores it)."""
    date = normalize_timestamp(correction.date)
    return correction if date == correction.date else dataclasses.replace(correction, date=date)


def _leaf_entry(entry: Entry | None, leaf_id: str) -> Entry:
    """``entry`` when it is a leaf's; LeafNotFoundError naming ``leaf_id`` otherwise."""
    if entry is None or entry.kind != "leaf":
        raise LeafNotFoundError(leaf_id)
    return entry


def _branch_entry(entry: Entry | None, node_id: str) -> Entry:
    """``entry`` when it is a branch's; BranchNotFoundError naming ``node_id`` otherwise."""
    if entry is None or entry.kind != "branch":
        raise BranchNotFoundError(node_id)
    return entry


def _check_space(space: str) -> None:
    if not isinstance(space, str) or not space.strip() or len(space) > 200:
        raise ValueError(f"invalid derived space name {space!r}")


def _refuse_foreign(folder: Path) -> None:
    """Raise StoreFormatError when ``folder`` holds files and is not an IHMT store."""
    try:
        names = [p.name for p in folder.iterdir()]
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreIOError(f"cannot read the folder: {exc.strerror}", path=folder) from exc
    if (folder / CONFIG_FILE).exists():
        return
    foreign = [n for n in names if n not in OWN_NAMES and not n.startswith(".")]
    if foreign:
        raise StoreFormatError(
            f"{folder} is not empty and is not an IHMT store (no {CONFIG_FILE}); "
            "choose an empty folder",
            path=folder,
        )


def _read_config(path: Path) -> StoreConfig:
    try:
        data = read_json(path)
    except CorruptFileError as exc:
        raise ConfigError(f"not valid JSON ({exc}); fix or restore it", path=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror}", path=path) from None
    # A config without the key predates it: format 1.
    version = data.setdefault("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ConfigError("format_version must be an integer", path=path)
    if version > FORMAT_VERSION:
        raise StoreFormatError(
            f"{path.parent} was written by a newer IHMT (store format {version}, this version "
            f"reads up to {FORMAT_VERSION}); upgrade ihmt to open it",
            path=path.parent,
            found=version,
        )
    try:
        return StoreConfig.from_json(data)
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc), path=path) from None
