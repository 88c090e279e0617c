"""The state a ``Store`` holds and the steps its methods go through to reach files and index.

:class:`StoreBase` is the base of the :class:`~ihmt_store.Store` façade (and itself on
``_lifecycle.IndexLifecycle``, which keeps the lock and the index file usable). It runs
a write in one batch (:meth:`StoreBase._writing`: one lock, one flush, one index commit,
settled on failure), reads a leaf or branch through that batch (counted in ``io``,
followed when its file vanished, adopted when its text was edited by hand), upgrades an
older store's format before its index opens, and opens the derived-data table.
:func:`healing` is the decorator of the store's reads.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from ihmt_store._batch import Batch, clear_journal
from ihmt_store._derived import DerivedTable
from ihmt_store._files import (
    leaf_bytes_keeping_text,
    leaf_file_problem,
    load_leaf,
    parse_branch,
    remove_sqlite_files,
    stored_checksum,
    within,
)
from ihmt_store._index import Entry
from ihmt_store._layout import CONFIG_FILE, DERIVED_FILE, INDEX_FILE, STATE_DIR
from ihmt_store._lifecycle import DISK_FULL, IndexLifecycle, disk_is_full, index_error, is_corrupt
from ihmt_store._migrate import migrate_leaves
from ihmt_store._notes import CLOCK_FILE, Clock
from ihmt_store._opening import read_config, upgraded_config
from ihmt_store._records import FORMAT_VERSION, Branch, Leaf, StoreConfig
from ihmt_store._stats import IOStats
from ihmt_store._types import ItemKind
from ihmt_store._writes import write_leaf
from ihmt_store.errors import (
    BranchNotFoundError,
    CorruptFileError,
    LeafNotFoundError,
    StoreError,
    StoreIOError,
)

# Logged under the Store's module, where this work was done before it had a module of
# its own: ``ihmt -v`` prints the logger's name, and its output stays the same.
logger = logging.getLogger("ihmt_store._store")

__all__ = ["StoreBase", "branch_entry", "healing", "leaf_entry"]

ENTRY_PAGE = 2000
"""Catalog entries :meth:`Store.iter_entries` reads at a time."""

_S = TypeVar("_S", bound="StoreBase")
_P = ParamSpec("_P")
_R = TypeVar("_R")


def healing(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """A read that finds the index damaged rebuilds it from the files (saying so in
    :attr:`Store.notices`) and runs again; any other SQLite failure becomes a
    :class:`StoreIOError` in plain words, never a raw ``sqlite3`` error."""

    @functools.wraps(method)
    def wrapper(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
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


class StoreBase(IndexLifecycle):
    """A store's state and the steps its methods go through to reach files and index;
    public methods are the façade's (``_store.Store``)."""

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
            config = read_config(self.path / CONFIG_FILE)
            if config.format_version >= FORMAT_VERSION:
                self.config = config  # another process finished it meanwhile
                return
            migrate_leaves(self.path)
            if self._index is not None:
                self._index.close()
                self._index = None
            self.config = upgraded_config(self.path, config)

    @contextmanager
    def _writing(self, timeout: float | None = None) -> Iterator[Batch]:
        if self._batch is not None and self._batch_thread == threading.get_ident():
            yield self._batch
            return
        with self._locked(timeout) as index:
            batch = Batch(self.path, durable=self.durable)
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
            if batch.scrub and self.durable:
                self._scrub()
                # Summaries rewritten after a forget (by the caller) held its words too.
                self._compact_due = True

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
        disk (and remembered by the batch); counted in :attr:`io` when ``count``.

        A leaf file is read and checked as rebuild reads it (``_files.load_leaf``): one
        it will not use raises CorruptFileError, said once in :attr:`notices`."""
        batch = self._own_batch()
        full = self.path / rel
        missing = LeafNotFoundError if kind is Leaf else BranchNotFoundError
        lossy = False
        record: Leaf | Branch
        try:
            if batch is not None:
                staged = batch.read(rel)
                if isinstance(staged, kind):
                    return staged
            if kind is Leaf:
                record, data, lossy = load_leaf(full, self.path)
            else:
                if full.is_symlink() and not within(full, self.path):
                    raise CorruptFileError(
                        f"is a symbolic link to {os.path.realpath(full)}, outside the store; "
                        "IHMT does not follow it",
                        path=full,
                    )
                data = full.read_bytes()
                record = parse_branch(data, full)
        except FileNotFoundError:
            # Deleted by hand (or by another process a moment ago): the catalog follows.
            if batch is None or rel not in batch.removals:
                self._heal([rel])
            raise missing(Path(rel).stem) from None
        except CorruptFileError as exc:
            if kind is Leaf:
                self._notice(f"{rel} {exc.reason}; 'ihmt doctor' lists such files")
            raise
        if count:
            self.io.files_read += 1
            self.io.bytes_read += len(data)
            if kind is Leaf:
                self.io.leaf_reads += 1
            else:
                self.io.branch_reads += 1
        if batch is not None:
            batch.remember(rel, record)
        elif isinstance(record, Leaf) and stored_checksum(data) not in (None, record.checksum):
            self._adopt_hand_edit(rel, record, data if lossy else None)
        return record

    def _adopt_hand_edit(self, rel: str, leaf: Leaf, undecodable: bytes | None = None) -> None:
        """A leaf whose text was edited by hand: index its text as it is now, and write
        its header's checksum so it is adopted once. Its text is never touched: a text
        that is not UTF-8 (``undecodable``: the file's bytes) keeps its bytes, read with
        replacement characters."""
        if self.read_only:
            return
        try:
            with self._writing() as batch:
                if undecodable is None:
                    write_leaf(self.path, batch, self._idx, leaf, rel)
                else:
                    raw = leaf_bytes_keeping_text(leaf, undecodable, self.path / rel)
                    write_leaf(self.path, batch, self._idx, leaf, rel, index_only=True)
                    batch.write_raw(rel, raw)
                    self._idx.set_sizes([(len(raw), leaf.leaf_id)])
        except (StoreError, OSError) as exc:
            logger.warning("could not re-index %s, edited by hand: %s", rel, exc)
            return
        if leaf.leaf_id not in self.edited:
            self.edited.append(leaf.leaf_id)
        self._notice(f"memory {leaf.leaf_id} was edited by hand: its new text is indexed")
        if undecodable is not None:
            self._notice(
                f"memory {leaf.leaf_id} holds bytes that are not UTF-8 (written outside "
                "IHMT): they read as \ufffd; its file keeps them"
            )

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

    def _scrub(self) -> None:
        try:
            self._idx.scrub()
        except sqlite3.Error as exc:
            logger.warning("could not compact the index after a forget: %s", exc)

    def _read_branch_file(self, rel: str, *, count: bool = True) -> Branch:
        branch = self._read_item(rel, Branch, count=count)
        assert isinstance(branch, Branch)
        return branch

    def _vanished(self, entries: Iterable[Entry]) -> list[str]:
        """Paths of ``entries`` whose file is gone (not staged by this thread's batch)."""
        own = self._own_batch()
        return [
            e.path
            for e in entries
            if (own is None or e.path not in own.pending)
            and not os.path.lexists(self.path / e.path)
        ]

    def _missing_or_unusable(self, entries: Iterable[Entry]) -> tuple[list[str], set[str]]:
        """Paths of ``entries`` whose file is gone (:meth:`_vanished`), and of leaf
        ``entries`` whose file the store will not read (a link out of the store, not a
        regular file, too large: ``_files.leaf_file_problem``), each said once in
        :attr:`notices` (rebuild lists them as problems): one ``lstat`` per file, as a
        search checks every candidate's."""
        own = self._own_batch()
        vanished: list[str] = []
        unusable: set[str] = set()
        for entry in entries:
            full = self.path / entry.path
            try:
                info = os.lstat(full)
            except (OSError, ValueError):  # what ``os.path.lexists`` takes for "gone"
                if own is None or entry.path not in own.pending:
                    vanished.append(entry.path)
                continue
            if entry.kind != "leaf":
                continue
            try:
                problem = leaf_file_problem(full, self.path, info)
            except OSError:
                continue  # gone or unreadable: reading it says so
            if problem is not None:
                unusable.add(entry.path)
                self._notice(f"{entry.path} {problem}; 'ihmt doctor' lists such files")
        return vanished, unusable

    @healing
    def _all_entries(self, kind: ItemKind | None) -> list[Entry]:
        return list(self._idx.iter_entries(kind))

    @healing
    def _entries_after(self, kind: ItemKind | None, after: str) -> list[Entry]:
        return self._idx.entries_after(kind, after, ENTRY_PAGE)

    def _paged_entries(self, kind: ItemKind | None) -> Iterator[Entry]:
        """Every catalog entry of ``kind`` in id order, :data:`ENTRY_PAGE` at a time: a
        list of all of them, at 500,000 leaves, raised a server's resident memory for
        good (the pages of many small objects are seldom given back)."""
        after = ""
        while True:
            page = self._entries_after(kind, after)
            yield from page
            if len(page) < ENTRY_PAGE:
                return
            after = page[-1].id

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


def leaf_entry(entry: Entry | None, leaf_id: str) -> Entry:
    """``entry`` when it is a leaf's; LeafNotFoundError naming ``leaf_id`` otherwise."""
    if entry is None or entry.kind != "leaf":
        raise LeafNotFoundError(leaf_id)
    return entry


def branch_entry(entry: Entry | None, node_id: str) -> Entry:
    """``entry`` when it is a branch's; BranchNotFoundError naming ``node_id`` otherwise."""
    if entry is None or entry.kind != "branch":
        raise BranchNotFoundError(node_id)
    return entry
