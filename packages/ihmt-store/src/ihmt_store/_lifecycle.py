"""The life of a store's derived index: its lock, opening, checking and rebuilding it.

:class:`IndexLifecycle` is the base of ``_base.StoreBase``, so of
:class:`~ihmt_store.Store`. It holds the store's inter-process lock and the connection
to ``state/index.sqlite3``, and keeps that file usable whatever happened to it:
reopened when another process replaced it (its inode changed), rebuilt from the files
when it is missing, of another schema or damaged, opened read-only on a full disk,
built in memory on a read-only one. A dead writer's journal is replayed under the lock
before anything else is written.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ihmt_store._batch import clear_journal, journal_path, replay_journal
from ihmt_store._files import (
    has_dead_temps,
    is_disk_full,
    load_leaf,
    parse_branch,
    remove_sqlite_files,
    remove_temp_files,
    within,
)
from ihmt_store._index import SCHEMA_VERSION, Entry, Fields, Index, branch_row, leaf_row
from ihmt_store._layout import (
    BRANCH_DIR,
    FORGOTTEN_DIR,
    INDEX_FILE,
    LEAF_DIR,
    LOCK_FILE,
    NOTES_DIR,
    STATE_DIR,
    branch_rel,
    leaf_rel,
    misplaced_leaf,
)
from ihmt_store._lock import StoreLock
from ihmt_store._notes import Folded, note_files, state_of
from ihmt_store._records import Branch, Leaf
from ihmt_store.errors import CorruptFileError, StoreError, StoreIOError

logger = logging.getLogger(__name__)

__all__ = [
    "DISK_FULL",
    "IndexLifecycle",
    "Problem",
    "Progress",
    "RebuildReport",
    "disk_is_full",
    "index_error",
    "is_corrupt",
    "scan_files",
    "writable",
]

Progress = Callable[[int, int, str], None]
"""``progress(done, total, name)``: called as long work advances."""

INDEX_RECHECK_S = 0.5
CHECK_ON_OPEN_BYTES = 16 * 1024 * 1024
"""An index up to this size is checked for damaged pages whenever a store opens."""
DISK_FULL = (
    "the disk is full; free some space and try again (nothing was changed; searches still work)"
)

_LOCKS: dict[str, StoreLock] = {}
_LOCKS_GUARD = threading.Lock()


def _shared_lock(path: Path, timeout: float) -> StoreLock:
    """One lock object per store per process, so two ``Store`` objects never deadlock."""
    key = str(path.resolve())
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = StoreLock(path, timeout)
        return lock


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """A file the store could not use, and why; it was left untouched."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RebuildReport:
    """What ``rebuild`` found on disk."""

    leaves: int
    branches: int
    problems: tuple[Problem, ...] = ()
    temp_files_removed: int = 0


def index_error(exc: sqlite3.Error, path: Path, *, reading: bool = False) -> StoreIOError:
    """A failed index write (or read) in plain words (a full disk says so)."""
    if reading:
        return StoreIOError(
            f"the search index could not be read ({exc}); 'ihmt rebuild' recreates it from "
            "the memory files",
            path=path / STATE_DIR / INDEX_FILE,
        )
    if disk_is_full(exc, path / STATE_DIR / INDEX_FILE):
        return StoreIOError(DISK_FULL, path=path)
    return StoreIOError(
        f"the index could not be written ({exc}); nothing acknowledged was lost",
        path=path / STATE_DIR / INDEX_FILE,
    )


def disk_is_full(exc: BaseException, path: Path) -> bool:
    """Whether ``exc`` says the disk is full, or the disk holding ``path`` nearly is (SQLite
    reports a full disk as a plain I/O error at times)."""
    if is_disk_full(exc):
        return True
    try:
        return shutil.disk_usage(path.parent).free < 64 * 1024
    except OSError:
        return False


def writable(folder: Path) -> bool:
    """Whether this process can write the store (a read-only mount or folder says no)."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return False
        raise StoreIOError(f"cannot open the lock file: {exc.strerror}", path=folder) from exc
    os.close(fd)
    return True


def is_corrupt(exc: BaseException) -> bool:
    """Whether SQLite says the index file itself is damaged (not busy, not full)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code in (11, 26):  # SQLITE_CORRUPT, SQLITE_NOTADB
        return True
    text = str(exc)
    return "malformed" in text or "not a database" in text or "Could not decode" in text


class IndexLifecycle:
    """A store folder with its lock and its derived index, kept usable.

    The index is reached through :attr:`_idx` only; every write holds :meth:`_locked`.
    Subclasses extend :meth:`_after_rebuild`.
    """

    def __init__(self, path: Path, *, lock_timeout: float) -> None:
        self.path = path
        self._lock = _shared_lock(path / LOCK_FILE, lock_timeout)
        self._lock_timeout = lock_timeout
        self._index: Index | None = None
        self._index_ino = -1
        self._index_checked = 0.0
        self._disk_full = False
        self.read_only = False
        """True when the store is on a read-only disk or folder: reads work, writes raise
        :class:`StoreIOError` saying so."""
        self.durable = True
        """False for a derived store (``Store.open(derived=True)``, a code index). Its
        writes stay atomic (a killed writer leaves the old state or the new one, and the
        next open finishes it) but are not flushed to disk: a power cut may lose the
        last ones, which the owner derives again. A forget does not compact the index:
        the words are still in the files they came from."""
        self.notices: list[str] = []
        """What the store repaired or refused on its own while opening or reading (an
        index rebuilt, files skipped), in plain words for the user; the caller may show
        and clear them."""

    def _notice(self, text: str) -> None:
        logger.warning("%s", text)
        if text not in self.notices:
            self.notices.append(text)

    # ================================================================= the index file
    @property
    def _idx(self) -> Index:
        index = self._index
        if self._index_ino == -1 and index is not None:
            return index  # in memory, for a read-only store
        if index is None or not self._same_index_file():
            # First use, or another process replaced a damaged or stale index file.
            if index is not None:
                index.close()
                self._index = None
            self._open_index()
        assert self._index is not None
        return self._index

    def _same_index_file(self, *, force: bool = False) -> bool:
        """False when another process replaced the index file (checked at most every
        INDEX_RECHECK_S seconds for reads; always before a write)."""
        now = time.monotonic()
        if not force and now - self._index_checked < INDEX_RECHECK_S:
            return True
        self._index_checked = now
        try:
            return os.stat(self.path / STATE_DIR / INDEX_FILE).st_ino == self._index_ino
        except FileNotFoundError:
            return False

    def _try_index(self, db: Path) -> tuple[Index | None, int | None]:
        """Open the index file and read its schema stamp; (None, None) if unusable."""
        if not db.exists():
            return None, None
        try:
            index = Index(db, read_only=self.read_only)
        except sqlite3.DatabaseError as exc:
            if self.read_only or is_corrupt(exc) or not disk_is_full(exc, db):
                return None, None
            # Opening in WAL mode needs a few bytes of disk (SQLite says "full" or "disk
            # I/O error"); reading does not.
            try:
                index = Index(db, read_only=True)
            except sqlite3.DatabaseError:
                return None, None
            self._disk_full = True
            self._notice(
                f"the disk holding {self.path} is full: searches work, but nothing can be "
                "saved until some space is freed"
            )
        version = index.schema_version()
        if version != SCHEMA_VERSION:
            index.close()
            return None, version
        try:
            small = db.stat().st_size <= CHECK_ON_OPEN_BYTES
        except OSError:
            small = False
        if small and not index.is_sound():
            # Damaged pages can answer a search wrongly without any error: checked on
            # open while that costs a few milliseconds (a larger index is checked by
            # _check_index, and rebuilt whenever a read meets the damage).
            index.close()
            return None, version
        return index, version

    def _open_index(self) -> None:
        state = self.path / STATE_DIR
        db = state / INDEX_FILE
        index, found = self._try_index(db)
        if index is None and self.read_only:
            self._notice(
                f"the search index {db} is missing or out of date and the disk is read-only; "
                "it was rebuilt in memory for this run"
            )
            self._index_in_memory()
            return
        if index is None:
            with self._locked_raw():
                # Checked again under the lock: another process may have just rebuilt it.
                index, found = self._try_index(db)
                if index is None:
                    if db.exists():
                        why = (
                            "damaged"
                            if found == SCHEMA_VERSION
                            else "left unfinished"
                            if found == 0
                            else f"of schema {found}"
                        )
                        self._notice(
                            f"the search index {db} was {why}; it was rebuilt from the "
                            "memory files (nothing is lost: they are the source of truth)"
                        )
                    self._fresh_index(db)
                    return
        self._set_index(index, db)
        if (journal_path(self.path).exists() or self._dead_temps()) and not self.read_only:
            try:
                with self._locked():
                    pass
            except (StoreError, sqlite3.Error, OSError) as exc:
                # Reads go on from the index as committed; the next writer recovers.
                logger.warning("could not finish an interrupted write yet: %s", exc)

    def _fresh_index(self, db: Path) -> None:
        """Replace the index file by one rebuilt from the files (the lock is held)."""
        if self._index is not None:
            self._index.close()
            self._index = None
        remove_sqlite_files(db)
        index = Index(db)
        index.create_schema(building=True)
        self._set_index(index, db)
        self._rebuild_locked()

    def _check_index(self) -> bool:
        """Check every page of the derived index; rebuild it from the files if damaged.

        Returns:
            True when it was sound, False when it was rebuilt (a notice says so).
        """
        try:
            sound = self._idx.is_sound()
        except sqlite3.Error as exc:
            if not is_corrupt(exc):
                raise index_error(exc, self.path) from exc
            sound = False
        if not sound:
            self._repair_corrupt_index("damaged pages")
        return sound

    def _repair_corrupt_index(self, exc: BaseException | str) -> None:
        """The index file is damaged: rebuild it from the files, and say so."""
        db = self.path / STATE_DIR / INDEX_FILE
        # The SQLite message is logged, not shown: it may quote a damaged row's text.
        logger.info("index damage: %s", type(exc).__name__ if not isinstance(exc, str) else exc)
        self._notice(
            f"the search index {db} was damaged; it was rebuilt from the memory files "
            "(nothing is lost: they are the source of truth)"
        )
        if self.read_only:
            self._index_in_memory()
            return
        with self._locked_raw():
            self._fresh_index(db)

    def _set_index(self, index: Index, db: Path) -> None:
        if not self.durable and not index.read_only:
            # A commit no longer waits for the disk; after a power cut the index is still
            # consistent (write-ahead log), only its last commits may be missing.
            index.conn.execute("PRAGMA synchronous=NORMAL")
        self._index = index
        self._index_ino = os.stat(db).st_ino

    def _index_in_memory(self) -> None:
        """Nothing can be written: the catalog is built in memory from the files."""
        index = Index(Path(":memory:"))
        index.create_schema()
        if self._index is not None:
            self._index.close()
        self._index = index
        self._index_ino = -1
        self._rebuild_locked(in_memory=True)

    # ================================================================= the lock
    def _refuse_read_only(self) -> None:
        if self._disk_full:
            self._reopen_after_disk_full()
        if self.read_only:
            raise StoreIOError(
                "the store is on a read-only disk or folder: it can be searched, but nothing "
                "can be saved, changed or forgotten there",
                path=self.path,
            )

    def _reopen_after_disk_full(self) -> None:
        """The index was opened read-only because the disk was full: open it for writing
        again if space was freed since, else say the disk is full."""
        db = self.path / STATE_DIR / INDEX_FILE
        try:
            index = Index(db)
        except sqlite3.Error as exc:
            raise index_error(exc, self.path) from exc
        if self._index is not None:
            self._index.close()
        self._set_index(index, db)
        self._disk_full = False

    @contextmanager
    def _locked_raw(self) -> Iterator[None]:
        """Hold the lock without recovery (the index may not exist yet)."""
        self._refuse_read_only()
        self._lock.acquire(self._lock_timeout)
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def _locked(self, timeout: float | None = None) -> Iterator[Index]:
        """Hold the inter-process lock; finish a dead writer's journal first."""
        self._refuse_read_only()
        took = self._lock.acquire(self._lock_timeout if timeout is None else timeout)
        try:
            if took:
                if self._index is not None and not self._same_index_file(force=True):
                    self._index.close()
                    self._index = None
                self._remove_dead_temps()
                try:
                    self._recover()
                except sqlite3.Error as exc:
                    if is_corrupt(exc):
                        self._repair_corrupt_index(exc)
                    else:
                        raise index_error(exc, self.path) from exc
            yield self._idx
        finally:
            self._lock.release()

    def _dead_temps(self) -> bool:
        """A temporary file lies beside the trunk, the config or the state files: a writer
        killed while replacing one of them (the clock, outside any batch) left it."""
        return any(has_dead_temps(folder) for folder in (self.path, self.path / STATE_DIR))

    def _remove_dead_temps(self) -> None:
        """Temporary files of killed writers beside the trunk, the config and the state
        files (two small folders; a batch's own are listed in its journal)."""
        for folder in (self.path, self.path / STATE_DIR):
            remove_temp_files(folder, dead_only=True)

    def _recover(self, *, quiet: bool = False) -> None:
        """Redo a dead writer's journal from the files (the lock is held)."""
        replay_journal(self.path, lambda: self._idx, quiet=quiet)

    def _settle_after_failure(self) -> None:
        """Index what a failed batch left on disk; if even that fails, the journal stays
        and the next writer finishes it."""
        try:
            self._recover(quiet=True)
        except (StoreError, sqlite3.Error, OSError) as exc:
            logger.warning("could not settle a failed write yet (%s); the next writer will", exc)

    # ================================================================= rebuild
    def _after_rebuild(self, live: list[str]) -> None:
        """What else follows the files after a rebuild on disk (the store keeps only the
        derived data of ``live`` leaves and rewrites ``root.json``)."""

    def _rebuild_locked(
        self, progress: Progress | None = None, *, in_memory: bool = False
    ) -> RebuildReport:
        """Recreate the catalog from the leaves, their notes, the tombstones and the branch
        files (the lock is held, or the index is in memory).

        A leaf's state is the fold of its notes (and, in a format-1 file not migrated
        yet, of its header's correction); its parent is the branch whose file lists it.
        A leaf or notes a tombstone names are deleted (not in memory: a read-only store
        only leaves them out)."""
        index = self._idx
        parsed, problems, removed = scan_files(self.path, progress, tidy=not in_memory)
        for rel, record, _size in parsed.values():
            # Indexed where it is, as a refresh after a pull does (one rule on every
            # machine); said, so that a person moves it.
            misplaced = (
                misplaced_leaf(rel, record.leaf_id, record.domain)
                if isinstance(record, Leaf)
                else ""
            )
            if misplaced:
                self._notice(f"{rel}: {misplaced}")
        gone = _names(self.path / FORGOTTEN_DIR, ".json")
        annotated = _names(self.path / NOTES_DIR, "")
        rows: list[tuple[Entry, Fields, list[str]]] = []
        folds: dict[str, Folded] = {}
        leaves = branches = 0
        if not in_memory:
            removed += remove_temp_files(self.path / FORGOTTEN_DIR)
            for item_id in annotated:
                removed += remove_temp_files(self.path / NOTES_DIR / item_id)
        for item_id in sorted(gone & annotated) if not in_memory else ():
            for rel in note_files(self.path, item_id):
                (self.path / rel).unlink(missing_ok=True)
        for rel, record, size in list(parsed.values()):
            if isinstance(record, Leaf):
                if record.leaf_id in gone:
                    # A forget wins: a copy of the leaf brought back (by a merge) goes.
                    del parsed[record.leaf_id]
                    if not in_memory:
                        logger.warning("%s was forgotten (forgotten/ says so); deleted", rel)
                        (self.path / rel).unlink(missing_ok=True)
                    continue
                folded = Folded()
                if record.leaf_id in annotated or record.outdated_by is not None:
                    folded = state_of(self.path, record.leaf_id, header=record.outdated_by)
                    folds[record.leaf_id] = folded
                bare = record.evolve(parent_id=None, outdated_by=folded.outdated_by)
                rows.append((*leaf_row(bare, rel, size), []))
                leaves += 1
            else:
                rows.append((*branch_row(record, rel, size), [c.id for c in record.children]))
                branches += 1
        index.begin()
        try:
            index.clear()
            # Every row is new now: the leaves go in together, the branches with their
            # member lists one by one.
            index.insert_new([(row, fields) for row, fields, members in rows if not members])
            for row, fields, members in rows:
                if members:
                    index.upsert(row, fields, members)
            index.parents_from_members()
            for item_id, folded in folds.items():
                reason = folded.outdated_by.reason if folded.outdated_by is not None else ""
                index.set_folded(item_id, reason, dict(folded.extra))
            orphans = index.detach_orphans()
            index.stamp_schema()  # with the rows: a file is complete or it is built again
            index.commit()
        except BaseException:
            index.rollback()
            raise
        if orphans:
            logger.warning(
                "%d item(s) named a parent branch whose file is missing; the trunk references "
                "them until the next consolidation groups them again",
                len(orphans),
            )
        if in_memory:
            return RebuildReport(leaves=leaves, branches=branches, problems=tuple(problems))
        clear_journal(self.path)
        self._after_rebuild(
            [record.leaf_id for _, record, _ in parsed.values() if isinstance(record, Leaf)]
        )
        return RebuildReport(
            leaves=leaves, branches=branches, problems=tuple(problems), temp_files_removed=removed
        )


def scan_files(
    root: Path, progress: Progress | None = None, *, tidy: bool = False
) -> tuple[dict[str, tuple[str, Leaf | Branch, int]], list[Problem], int]:
    """Read every leaf and branch file of the store at ``root`` as rebuild does: the
    records by id (``(rel, record, size)``), the files it cannot use with why and what to
    do, and how many temporary files it removed (only when ``tidy``: the lock is held).

    Leaves are read by ``_files.load_leaf``, as search reads them, so rebuild, search and
    ``doctor`` agree on which files are memories.
    """
    problems: list[Problem] = []
    removed = 0
    if tidy:
        for folder in (root, root / STATE_DIR):
            removed += remove_temp_files(folder, dead_only=True)
    found: list[tuple[Path, str]] = []
    for folder, suffix in ((root / LEAF_DIR, ".txt"), (root / BRANCH_DIR, ".json")):
        if not folder.exists():
            continue
        if not within(folder, root):
            problems.append(_link_problem(folder, root))
            continue
        for sub, dirs, files in os.walk(folder):
            here = Path(sub)
            for name in sorted(dirs):
                if (here / name).is_symlink() and not within(here / name, root):
                    problems.append(_link_problem(here / name, root))
            dirs.sort()
            if tidy:
                removed += remove_temp_files(here)
            for name in sorted(files):
                if name.startswith(".") or not name.endswith(suffix):
                    continue
                found.append((here / name, suffix))
    found.sort()
    # One file per id: a copy in another folder (a leaf copied into a second domain
    # folder by hand) is reported and skipped; the file whose folder matches its
    # header wins, else the first path.
    parsed: dict[str, tuple[str, Leaf | Branch, int]] = {}
    for done, (full, suffix) in enumerate(found, 1):
        if progress is not None:
            progress(done, len(found), full.name)
        rel = full.relative_to(root).as_posix()
        try:
            record: Leaf | Branch
            if suffix == ".txt":
                record, data, _ = load_leaf(full, root)
                item_id = record.leaf_id
                home = leaf_rel(item_id, record.domain)
            else:
                if full.is_symlink() and not within(full, root):
                    problems.append(_link_problem(full, root))
                    continue
                data = full.read_bytes()
                record = parse_branch(data, full)
                item_id = record.node_id
                home = branch_rel(item_id, record.layer)
                if Path(rel).stem != item_id:
                    raise CorruptFileError(
                        f"file name does not match its id {item_id!r}", path=full
                    )
        except (CorruptFileError, OSError, ValueError) as exc:
            logger.warning("skipping %s: %s", rel, exc)
            problems.append(Problem(path=rel, reason=str(exc)))
            continue
        other = parsed.get(item_id)
        if other is not None:
            keep, drop = (rel, other[0]) if rel == home else (other[0], rel)
            problems.append(
                Problem(
                    path=drop,
                    reason=f"a second copy of {item_id} (the one at {keep} is used); "
                    "skipped, delete it",
                )
            )
            if keep == other[0]:
                continue
        parsed[item_id] = (rel, record, len(data))
    return parsed, problems, removed


def _names(folder: Path, suffix: str) -> set[str]:
    """Names in ``folder`` ending with ``suffix`` (which is cut off), hidden ones aside."""
    try:
        names = os.listdir(folder)
    except OSError:
        return set()
    return {
        n[: len(n) - len(suffix)] if suffix else n
        for n in names
        if n.endswith(suffix) and not n.startswith(".")
    }


def _link_problem(path: Path, root: Path) -> Problem:
    return Problem(
        path=path.relative_to(root).as_posix(),
        reason=f"a symbolic link to {os.path.realpath(path)}, outside the store; not followed",
    )
