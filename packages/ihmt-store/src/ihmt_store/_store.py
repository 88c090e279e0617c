"""``Store``: the tree of plain files on disk, its derived index, its lock and recovery."""

from __future__ import annotations

import errno
import functools
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from ihmt_store._derived import DerivedChanges, DerivedTable
from ihmt_store._files import (
    atomic_write,
    branch_bytes,
    ensure_dirs,
    fsync_dir,
    is_disk_full,
    json_bytes,
    leaf_bytes,
    parse_branch,
    parse_leaf,
    read_json,
    remove_temp_files,
    replace_temp,
    stored_checksum,
    sync_paths,
    within,
    write_temp,
)
from ihmt_store._index import (
    SCHEMA_VERSION,
    Candidate,
    Entry,
    FieldWeights,
    Index,
    branch_row,
    leaf_row,
)
from ihmt_store._lock import StoreLock
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
    now_timestamp,
    safe_domain,
)
from ihmt_store._text import terms
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

Progress = Callable[[int, int, str], None]
"""``progress(done, total, name)``: called as long work advances."""

CONFIG_FILE = "ihmt.config.json"
ROOT_FILE = "root.json"
LEAF_DIR = "layer0"
BRANCH_DIR = "layers"
STATE_DIR = "state"
INDEX_FILE = "index.sqlite3"
DERIVED_FILE = "derived.sqlite3"
JOURNAL_FILE = "journal"
INDEX_RECHECK_S = 0.5
CHECK_ON_OPEN_BYTES = 16 * 1024 * 1024
"""An index up to this size is checked for damaged pages whenever a store opens
(about a millisecond per megabyte)."""
LOCK_FILE = "ihmt.lock"
_OWN_NAMES = frozenset({"ihmt.config.json", "root.json", "ihmt.lock", "layer0", "layers", "state"})
"""What a store being created (by another process, right now) may already hold."""

DISK_FULL = (
    "the disk is full; free some space and try again (nothing was changed; searches still work)"
)
_UNSET: Any = object()

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


@dataclass(slots=True)
class IOStats:
    """Files and bytes this ``Store`` object has read from leaves and branches."""

    files_read: int = 0
    bytes_read: int = 0
    leaf_reads: int = 0
    branch_reads: int = 0

    def snapshot(self) -> IOStats:
        """A copy to subtract from later."""
        return IOStats(
            files_read=self.files_read,
            bytes_read=self.bytes_read,
            leaf_reads=self.leaf_reads,
            branch_reads=self.branch_reads,
        )


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
        return {
            "leaves": self.leaves,
            "branches": self.branches,
            "depth": self.depth,
            "domains": dict(self.domains),
            "unconsolidated": self.unconsolidated,
            "unreachable": self.unreachable,
            "outdated": self.outdated,
            "bytes": self.bytes,
            "generation": self.generation,
        }


class _Batch:
    """What one locked write session has touched so far.

    Leaves and branches written in a batch are kept in memory as records until the
    commit; then each is serialised once, goes to a temporary sibling, all are flushed
    to disk together (one ``os.sync`` for many), each replaces its target in one
    rename, and the index commits. A file written twice in a batch (a leaf saved, then
    stamped by consolidation) reaches the disk once; a reader in the same batch gets the
    staged record back without parsing anything.
    """

    def __init__(self, root: Path, journal: Path) -> None:
        self.root = root
        self.journal_path = journal
        self.journal: Any = None
        # Keyed by the store-relative path, as the catalog and the journal name files.
        self.pending: dict[str, Leaf | Branch] = {}
        self.temps: list[Path] = []
        self.removals: set[str] = set()
        self.seen: dict[str, Leaf | Branch] = {}
        self.changed = False
        self.publishing = False
        self.noted: list[str] = []
        self.scrub = False
        """Set by a forget: after the commit, no trace of deleted text stays in the index."""
        self._data: dict[str, bytes] = {}

    def note(self, rel: str) -> None:
        """Remember that ``rel`` will be replaced or removed at commit.

        The names reach the journal in one write when the batch publishes, before the
        first file moves: a writer killed after that is redone from the files by the
        next writer. The journal is not fsynced: a killed process cannot reorder writes
        already in the page cache, and after a power cut ``rebuild`` still finds every
        file.
        """
        self.changed = True
        self.noted.append(rel)

    def _write_journal(self) -> None:
        if not self.noted:
            return
        if self.journal is None:
            self.journal = open(self.journal_path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.journal.write("".join(rel + "\n" for rel in self.noted))
        self.journal.flush()
        self.noted.clear()

    def write(self, rel: str, record: Leaf | Branch) -> None:
        """Stage ``record`` for ``rel``; it is serialised and replaces the file at commit."""
        self.removals.discard(rel)
        self.pending[rel] = record

    def read(self, rel: str) -> Leaf | Branch | None:
        """The record staged for ``rel`` in this batch (or read from disk in it), if any.

        Raises:
            FileNotFoundError: the file is staged for removal.
        """
        if rel in self.removals:
            raise FileNotFoundError(rel)
        staged = self.pending.get(rel)
        return staged if staged is not None else self.seen.get(rel)

    def remember(self, rel: str, record: Leaf | Branch) -> None:
        """Keep a record read from disk during the batch (consolidation reads a leaf, then
        stamps it: one parse instead of two)."""
        if len(self.seen) < 4096:
            self.seen[rel] = record

    def remove(self, rel: str) -> None:
        """Stage the deletion of ``rel`` (done at commit, after the writes)."""
        self.pending.pop(rel, None)
        self.removals.add(rel)

    def serialize(self) -> list[tuple[int, str]]:
        """Turn every staged record into its file's bytes; return ``(size, id)`` pairs
        for the index, which learns the final sizes before it commits."""
        sizes = []
        data = self._data
        for rel, record in self.pending.items():
            if isinstance(record, Leaf):
                raw = leaf_bytes(record)
                sizes.append((len(raw), record.leaf_id))
            else:
                raw = branch_bytes(record)
                sizes.append((len(raw), record.node_id))
            data[rel] = raw
        return sizes

    def publish(self) -> None:
        """Write every serialised file beside its target, flush them all, move each in place.

        :meth:`serialize` comes first (the index learns the sizes from it).
        """
        self.publishing = True
        root = self.root
        dirs = {root / rel.rpartition("/")[0] for rel in (*self._data, *self.removals)}
        for folder in dirs:
            if folder.exists() and not within(folder, root):
                raise StoreIOError(
                    "is a symbolic link leading out of the store; IHMT does not follow it "
                    "(replace the link with a real folder, or move the store)",
                    path=folder,
                )
        self._write_journal()
        ensure_dirs(dirs)
        moves = []
        # A parent lands before the files that name it: the branches from the highest layer
        # down, then the leaves. A writer killed between two renames then leaves items
        # whose parent exists (or a branch listing children not stamped yet, which the
        # next consolidation finishes), never an item naming a parent that was not
        # written. In insertion order a branch re-stamped with a parent created later in
        # the same batch could land first, and its subtree stayed orphaned for good.
        for rel in sorted(self._data, key=_landing_order):
            raw = self._data[rel]
            full = root / rel
            tmp = write_temp(full, raw, mkdir=False)
            self.temps.append(tmp)
            moves.append((tmp, full))
        sync_paths(tmp for tmp, _ in moves)
        for tmp, full in moves:
            replace_temp(tmp, full)
        self.pending.clear()
        self._data.clear()
        self.temps.clear()
        for rel in self.removals:
            _unlink_quietly(root / rel)
        self.removals.clear()
        for folder in dirs:
            fsync_dir(folder)

    def abandon(self) -> None:
        """Drop what was staged after a failure: every target keeps its old bytes."""
        for tmp in self.temps:
            _unlink_quietly(tmp)
        self.temps.clear()
        self.pending.clear()
        self._data.clear()
        self.removals.clear()

    def close(self) -> None:
        if self.journal is not None:
            journal, self.journal = self.journal, None
            try:
                journal.close()
            except OSError as exc:
                # A full disk refusing the journal's last buffered bytes: after a publish
                # the journal is deleted next; after a failure, recovery reads the files.
                logger.warning("the write journal could not be closed cleanly: %s", exc)


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _landing_order(rel: str) -> int:
    """Sort key of a staged file: higher layers first, leaves (layer 0) last."""
    if rel.startswith(BRANCH_DIR + "/"):
        try:
            return -int(rel.split("/", 2)[1])
        except ValueError:
            return 0
    return 0


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
            if not _is_corrupt(exc):
                raise _index_error(exc, self.path, reading=True) from exc
            self._repair_corrupt_index(exc)
        return method(self, *args, **kwargs)

    return wrapper


def _index_error(exc: sqlite3.Error, path: Path, *, reading: bool = False) -> StoreIOError:
    """A failed index write (or read) in plain words (a full disk says so)."""
    if reading:
        return StoreIOError(
            f"the search index could not be read ({exc}); 'ihmt rebuild' recreates it from "
            "the memory files",
            path=path / STATE_DIR / INDEX_FILE,
        )
    if _disk_is_full(exc, path / STATE_DIR / INDEX_FILE):
        return StoreIOError(DISK_FULL, path=path)
    return StoreIOError(
        f"the index could not be written ({exc}); nothing acknowledged was lost",
        path=path / STATE_DIR / INDEX_FILE,
    )


def _disk_is_full(exc: BaseException, path: Path) -> bool:
    if is_disk_full(exc):
        return True
    try:
        return shutil.disk_usage(path.parent).free < 64 * 1024
    except OSError:
        return False


def _writable(folder: Path) -> bool:
    """Whether this process can write the store (a read-only mount or folder says no)."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return False
        raise StoreIOError(f"cannot open the lock file: {exc.strerror}", path=folder) from exc
    os.close(fd)
    return True


def _is_corrupt(exc: BaseException) -> bool:
    """Whether SQLite says the index file itself is damaged (not busy, not full)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code in (11, 26):  # SQLITE_CORRUPT, SQLITE_NOTADB
        return True
    text = str(exc)
    return "malformed" in text or "not a database" in text or "Could not decode" in text


class Store:
    """A memory on disk: leaves, branches, the trunk, the config and derived state.

    Open one with :meth:`Store.open` or :meth:`Store.create`. Every mutation takes the
    store's exclusive inter-process lock, writes files atomically and updates the
    derived index in the same locked step; readers never block and always see the
    latest committed state, also when another process wrote it.
    """

    def __init__(self, path: Path, config: StoreConfig, *, lock_timeout: float) -> None:
        self.path = path
        self.config = config
        self.io = IOStats()
        self._lock = _shared_lock(path / LOCK_FILE, lock_timeout)
        self._lock_timeout = lock_timeout
        self._index: Index | None = None
        self._index_ino = -1
        self._index_checked = 0.0
        self._batch: _Batch | None = None
        self._batch_thread = 0
        self._disk_full = False
        self._compact_due = False
        self._derived: DerivedTable | None = None
        self.edited: list[str] = []
        """Leaves found edited by hand (their text no longer matches the checksum their
        header carries) and re-indexed when read; the caller refreshes what it derived
        from them (facts, vectors) and clears the list."""
        self.read_only = False
        """True when the store is on a read-only disk or folder: reads work, writes raise
        :class:`StoreIOError` saying so."""
        self.notices: list[str] = []
        """What the store repaired or refused on its own while opening or reading (an
        index rebuilt, files skipped), in plain words for the user; the caller may show
        and clear them."""

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
                        _unlink_quietly(folder / LOCK_FILE)
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
        store.read_only = not _writable(folder)
        if store.read_only:
            store._notice(
                f"the store at {folder} is on a read-only disk or folder: searches work, "
                "saves and other changes cannot"
            )
        store._open_index()
        if config.format_version < FORMAT_VERSION and not store.read_only:
            store._upgrade()
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

    def _notice(self, text: str) -> None:
        logger.warning("%s", text)
        if text not in self.notices:
            self.notices.append(text)

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

    # ================================================================= derived state
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
            if self.read_only or _is_corrupt(exc) or not _disk_is_full(exc, db):
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
            # check_index, and rebuilt whenever a read meets the damage).
            index.close()
            return None, version
        return index, version

    def _open_index(self) -> None:
        state = self.path / STATE_DIR
        db = state / INDEX_FILE
        index, found = self._try_index(db)
        if index is None and self.read_only:
            # Nothing can be written: the catalog is built in memory from the files.
            self._notice(
                f"the search index {db} is missing or out of date and the disk is read-only; "
                "it was rebuilt in memory for this run"
            )
            index = Index(Path(":memory:"))
            index.create_schema()
            self._index = index
            self._index_ino = -1
            self._rebuild_locked(in_memory=True)
            return
        if index is None:
            with self._locked_raw():
                # Checked again under the lock: another process may have just rebuilt it.
                index, found = self._try_index(db)
                if index is None:
                    if db.exists():
                        why = "damaged" if found == SCHEMA_VERSION else f"of schema {found}"
                        self._notice(
                            f"the search index {db} was {why}; it was rebuilt from the "
                            "memory files (nothing is lost: they are the source of truth)"
                        )
                    self._fresh_index(db)
                    return
        self._set_index(index, db)
        if (state / JOURNAL_FILE).exists() and not self.read_only:
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
        self._discard_index(db)
        index = Index(db)
        index.create_schema()
        self._set_index(index, db)
        self._rebuild_locked()

    def check_index(self) -> bool:
        """Check every page of the derived index; rebuild it from the files if damaged.

        Returns:
            True when it was sound, False when it was rebuilt (a notice says so).
        """
        try:
            sound = self._idx.is_sound()
        except sqlite3.Error as exc:
            if not _is_corrupt(exc):
                raise _index_error(exc, self.path) from exc
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
            index = Index(Path(":memory:"))
            index.create_schema()
            if self._index is not None:
                self._index.close()
            self._index = index
            self._index_ino = -1
            self._rebuild_locked(in_memory=True)
            return
        with self._locked_raw():
            self._fresh_index(db)

    def _set_index(self, index: Index, db: Path) -> None:
        self._index = index
        self._index_ino = os.stat(db).st_ino

    def _discard_index(self, db: Path) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(db) + suffix)
            except FileNotFoundError:
                pass

    def _upgrade(self) -> None:
        logger.warning(
            "store %s uses format %s; upgrading to %s (leaves untouched)",
            self.path,
            self.config.format_version,
            FORMAT_VERSION,
        )
        with self._locked():
            self._rebuild_locked()
            data = self.config.to_json()
            data["format_version"] = FORMAT_VERSION
            atomic_write(self.path / CONFIG_FILE, json_bytes(data))
            self.config = StoreConfig.from_json(data)

    # ================================================================= locking and writes
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
            raise _index_error(exc, self.path) from exc
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
                    if _is_corrupt(exc):
                        self._repair_corrupt_index(exc)
                    else:
                        raise _index_error(exc, self.path) from exc
            yield self._idx
        finally:
            self._lock.release()

    def _remove_dead_temps(self) -> None:
        """Temporary files of killed writers beside the trunk, the config and the state
        files (two small folders; a batch's own are listed in its journal)."""
        for folder in (self.path, self.path / STATE_DIR):
            remove_temp_files(folder, dead_only=True)

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
    def _writing(self, timeout: float | None = None) -> Iterator[_Batch]:
        if self._batch is not None and self._batch_thread == threading.get_ident():
            yield self._batch
            return
        with self._locked(timeout) as index:
            batch = _Batch(self.path, self.path / STATE_DIR / JOURNAL_FILE)
            self._batch = batch
            self._batch_thread = threading.get_ident()
            try:
                index.begin()
                yield batch
                index.set_sizes(batch.serialize())
                batch.publish()
                index.commit(changed=batch.changed)
            except BaseException as exc:
                self._batch = None
                index.rollback()
                batch.abandon()
                batch.close()
                if batch.publishing:
                    self._settle_after_failure()
                else:
                    self._clear_journal()
                if isinstance(exc, sqlite3.Error):
                    if _is_corrupt(exc):
                        self._repair_corrupt_index(exc)
                        raise StoreIOError(
                            "the search index was damaged; it was rebuilt from the memory "
                            "files, and this change was not made: try it again",
                            path=self.path / STATE_DIR / INDEX_FILE,
                        ) from exc
                    raise _index_error(exc, self.path) from exc
                if isinstance(exc, OSError) and _disk_is_full(exc, self.path):
                    # The journal or a file could not be written (the batch rolled back).
                    raise StoreIOError(DISK_FULL, path=self.path) from exc
                raise
            self._batch = None
            batch.close()
            self._clear_journal()
            if batch.scrub:
                self._scrub()
                # Summaries rewritten after a forget (by the caller) held its words too.
                self._compact_due = True

    def _settle_after_failure(self) -> None:
        """Index what a failed batch left on disk; if even that fails, the journal stays
        and the next writer finishes it."""
        try:
            self._recover(quiet=True)
        except (StoreError, sqlite3.Error, OSError) as exc:
            logger.warning("could not settle a failed write yet (%s); the next writer will", exc)

    def _clear_journal(self) -> None:
        try:
            os.unlink(self.path / STATE_DIR / JOURNAL_FILE)
        except FileNotFoundError:
            pass

    def _recover(self, *, quiet: bool = False) -> None:
        """Redo a dead writer's journal from the files: index them as they are now."""
        journal = self.path / STATE_DIR / JOURNAL_FILE
        try:
            lines = journal.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        rels = list(dict.fromkeys(line.strip() for line in lines if line.strip()))
        log = logger.info if quiet else logger.warning
        log("recovering %d file(s) from an interrupted write in %s", len(rels), self.path)
        index = self._idx
        index.begin()
        try:
            folders: set[Path] = set()
            for rel in rels:
                full = self.path / rel
                folders.add(full.parent)
                self._reindex_path(index, rel)
            # An item whose parent's file never landed is referenced by the trunk again.
            index.detach_orphans([Path(rel).stem for rel in rels])
            for folder in folders:
                remove_temp_files(folder)
            index.commit()
        except BaseException:
            index.rollback()
            raise
        self._clear_journal()

    def _reindex_path(self, index: Index, rel: str) -> None:
        full = self.path / rel
        item_id = Path(rel).stem
        try:
            if not within(full, self.path):
                raise CorruptFileError(
                    "is a symbolic link leading out of the store; not followed", path=full
                )
            data = full.read_bytes()
        except FileNotFoundError:
            index.delete(item_id)
            index.detach_children(item_id)
            return
        except CorruptFileError as exc:
            logger.warning("%s; kept out of the index", exc)
            index.delete(item_id)
            index.detach_children(item_id)
            return
        try:
            if rel.startswith(LEAF_DIR + "/"):
                leaf = parse_leaf(data, full)
                row, fields = leaf_row(leaf, rel, len(data))
            else:
                branch = parse_branch(data, full)
                row, fields = branch_row(branch, rel, len(data))
                index.upsert(row, fields, [c.id for c in branch.children])
                return
        except CorruptFileError as exc:
            logger.warning("%s; left as it is and kept out of the index", exc)
            index.delete(item_id)
            return
        index.upsert(row, fields)

    # ================================================================= leaves
    def leaf_path(self, leaf_id: str, domain: str) -> str:
        """Relative path of a leaf's file."""
        return f"{LEAF_DIR}/{safe_domain(domain)}/{check_id(leaf_id, 'leaf id')}.txt"

    def put_leaf(self, leaf: Leaf) -> Leaf:
        """Write one leaf and index it; return what was stored.

        Re-writing an existing id keeps its consolidation (``parent_id``) and its
        correction (``outdated_by``) unless the new record sets them; identical
        content is not written twice.
        """
        return self.put_leaves([leaf])[0]

    def put_leaves(self, leaves: Iterable[Leaf]) -> list[Leaf]:
        """Write many leaves in one batch (one lock, one flush, one commit)."""
        stored: list[Leaf] = []
        with self._writing() as batch:
            index = self._idx
            leaves = list(leaves)
            known = index.get_many([leaf.leaf_id for leaf in leaves])
            # New leaves go to the index together, at the end (or before a repeat).
            fresh: dict[str, tuple[tuple[Any, ...], tuple[str, ...]]] = {}
            for leaf in leaves:
                rel = self.leaf_path(leaf.leaf_id, leaf.domain)
                if leaf.leaf_id in fresh:
                    index.insert_new(list(fresh.values()))
                    fresh.clear()
                    existing = index.get(leaf.leaf_id)
                else:
                    existing = known.get(leaf.leaf_id)
                if existing is None:
                    batch.note(rel)
                    batch.write(rel, leaf)
                    fresh[leaf.leaf_id] = leaf_row(leaf, rel, 0)
                    stored.append(leaf)
                    continue
                try:
                    old = self._read_leaf_file(existing.path, count=False)
                except LeafNotFoundError:
                    # Its file was deleted by hand (the catalog just let go of it).
                    self._write_leaf(batch, index, leaf.evolve(parent_id=None), rel)
                    stored.append(leaf)
                    continue
                if leaf.parent_id is None and existing.parent_id is not None:
                    # The catalog's parent, not the file's: a file may name a branch that
                    # is gone, and the catalog treats it as loose.
                    leaf = leaf.evolve(parent_id=existing.parent_id)
                if leaf.outdated_by is None and old.outdated_by is not None:
                    leaf = leaf.evolve(outdated_by=old.outdated_by)
                if old == leaf:
                    stored.append(old)
                    continue
                if existing.path != rel:
                    raise ValueError(
                        f"leaf {leaf.leaf_id} already exists in domain {existing.domain}"
                    )
                self._write_leaf(batch, index, leaf, rel)
                stored.append(leaf)
            index.insert_new(list(fresh.values()))
        return stored

    def _write_leaf(self, batch: _Batch, index: Index, leaf: Leaf, rel: str) -> None:
        # The file's bytes are made once, at commit; the index learns its size then.
        if leaf.parent_id is not None and index.get(leaf.parent_id) is None:
            # Its branch file is gone (deleted by hand, or never written by a killed writer).
            leaf = leaf.evolve(parent_id=None)
        batch.note(rel)
        batch.write(rel, leaf)
        row, fields = leaf_row(leaf, rel, 0)
        index.upsert(row, fields)

    @_healing
    def read_leaves(self, leaf_ids: Sequence[str]) -> list[Leaf]:
        """Read many leaves (one catalog query for all of them), in the order asked.

        Raises:
            LeafNotFoundError: one of the ids is not a leaf of the store.
        """
        known = self._idx.get_many(leaf_ids)
        out = []
        for leaf_id in leaf_ids:
            entry = known.get(leaf_id)
            if entry is None or entry.kind != "leaf":
                raise LeafNotFoundError(leaf_id)
            out.append(self._read_leaf_file(entry.path))
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
        entry = self._idx.get(leaf) if isinstance(leaf, str) else leaf
        if entry is None or entry.kind != "leaf":
            raise LeafNotFoundError(leaf if isinstance(leaf, str) else leaf.id)
        return self._read_leaf_file(entry.path)

    def _own_batch(self) -> _Batch | None:
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
        """Find leaves edited by hand whose size changed (one ``stat`` per leaf: about
        150 ms at 50,000) and re-index them as they are now; their ids (also added to
        :attr:`edited`). An edit that keeps the size is adopted when the leaf is next
        read, and listed by :meth:`hand_edits`."""
        root = str(self.path)
        rows = self._idx.conn.execute("SELECT path, size FROM items WHERE kind = 'leaf'")
        changed = []
        for rel, size in rows.fetchall():
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
        """Change a leaf's header annotations; its text is never touched.

        Args:
            outdated_by: a :class:`Correction` to flag it OUTDATED, or None to restore it.
            parent_id: the branch that now summarises it (None detaches it).
            extra: keys merged into ``extra``.

        Raises:
            LeafNotFoundError: no leaf with that id.
        """
        with self._writing() as batch:
            index = self._idx
            entry = index.get(leaf_id)
            if entry is None or entry.kind != "leaf":
                raise LeafNotFoundError(leaf_id)
            leaf = self._read_leaf_file(entry.path, count=False)
            changes: dict[str, Any] = {}
            if outdated_by is not _UNSET:
                changes["outdated_by"] = outdated_by
            if parent_id is not _UNSET:
                changes["parent_id"] = parent_id
            if extra:
                changes["extra"] = {**leaf.extra, **extra}
            new = leaf.evolve(**changes)
            if new != leaf:
                self._write_leaf(batch, index, new, entry.path)
            return new

    def forget(self, item_id: str) -> Entry:
        """Delete one leaf for good, with its index rows; the only way a leaf goes.

        Its parent branch drops the child reference (and the excerpt it embedded);
        summaries above it are the caller's to refresh.

        Raises:
            LeafNotFoundError: no leaf with that id.
        """
        with self._writing() as batch:
            index = self._idx
            entry = index.get(item_id)
            if entry is None or entry.kind != "leaf":
                raise LeafNotFoundError(item_id)
            full = self.path / entry.path
            if full.is_symlink():
                raise StoreIOError(
                    f"is a symbolic link to {os.path.realpath(full)}; IHMT deletes only files "
                    "it wrote, and removing the link would leave that file in place. Delete "
                    "the file and the link by hand, then run 'ihmt rebuild'",
                    path=full,
                )
            batch.scrub = True
            if entry.parent_id:
                parent = index.get(entry.parent_id)
                if parent is not None:
                    branch = self._read_branch_file(parent.path, count=False)
                    kept = tuple(c for c in branch.children if c.id != item_id)
                    self._write_branch(
                        batch,
                        index,
                        branch.evolve(children=kept, leaf_count=max(0, branch.leaf_count - 1)),
                        parent.path,
                    )
            for other in index.corrected_by(item_id):
                old = self._read_leaf_file(other.path, count=False)
                self._write_leaf(batch, index, old.evolve(outdated_by=None), other.path)
            batch.note(entry.path)
            batch.remove(entry.path)
            index.delete(item_id)
        self._derived_call(lambda table: table.remove([item_id]), quiet=True)
        return entry

    # ================================================================= branches
    def branch_path(self, node_id: str, layer: int) -> str:
        """Relative path of a branch's file."""
        return f"{BRANCH_DIR}/{int(layer)}/{check_id(node_id, 'branch id')}.json"

    def put_branch(self, branch: Branch) -> Branch:
        """Write one branch (its children are stamped separately, after it)."""
        with self._writing() as batch:
            index = self._idx
            rel = self.branch_path(branch.node_id, branch.layer)
            existing = index.get(branch.node_id)
            if existing is not None and branch.parent_id is None and existing.parent_id:
                branch = branch.evolve(parent_id=existing.parent_id)
            self._write_branch(batch, index, branch, rel)
            return branch

    def _write_branch(self, batch: _Batch, index: Index, branch: Branch, rel: str) -> None:
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
        entry = self._idx.get(node_id)
        if entry is None or entry.kind != "branch":
            raise BranchNotFoundError(node_id)
        return self._read_branch_file(entry.path)

    def _read_branch_file(self, rel: str, *, count: bool = True) -> Branch:
        branch = self._read_item(rel, Branch, count=count)
        assert isinstance(branch, Branch)
        return branch

    def set_parent(self, child_ids: Sequence[str], parent_id: str | None) -> None:
        """Stamp leaves or branches with the branch that now summarises them.

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
                # Only the header changes: the file is rewritten, the full-text row stays.
                kind = Leaf if entry.kind == "leaf" else Branch
                record = self._read_item(entry.path, kind, count=False).evolve(parent_id=parent_id)
                batch.note(entry.path)
                batch.write(entry.path, record)
                moved.append(child)
            index.set_parent(moved, parent_id)

    def remove_branch(self, node_id: str) -> None:
        """Delete a branch file and detach its children (they go back to the trunk).

        Leaves are never deleted this way; only the summary above them goes.
        """
        with self._writing() as batch:
            index = self._idx
            entry = index.get(node_id)
            if entry is None or entry.kind != "branch":
                raise BranchNotFoundError(node_id)
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
                root = Root(
                    domains=tuple(
                        DomainTrunk(
                            domain=d.domain,
                            top=d.top,
                            leaves=d.leaves,
                            branches=d.branches,
                            depth=d.depth,
                            keywords=tuple(keywords.get(d.domain, d.keywords)),
                        )
                        for d in root.domains
                    ),
                    generation=root.generation,
                    updated=root.updated,
                )
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

    def iter_entries(self, kind: str | None = None) -> Iterator[Entry]:
        """Every catalog entry (``kind``: ``leaf``, ``branch`` or None for both)."""
        yield from self._all_entries(kind)

    @_healing
    def _all_entries(self, kind: str | None) -> list[Entry]:
        return list(self._idx.iter_entries(kind))

    def iter_leaves(self) -> Iterator[Leaf]:
        """Every leaf, read from its file, in id order."""
        for entry in list(self._idx.iter_entries("leaf")):
            yield self._read_leaf_file(entry.path, count=False)

    @_healing
    def candidates(
        self,
        query: str | Sequence[str],
        *,
        limit: int = 50,
        weights: FieldWeights | None = None,
        kinds: Sequence[str] = ("leaf", "branch"),
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
        """How many items (leaves and branches) contain each normalised term."""
        return self._idx.term_frequencies(query_terms)

    @_healing
    def count(self, kind: str | None = None) -> int:
        """Number of items (of one kind)."""
        if kind is None:
            return self._idx.total_items()  # cached until the next commit
        row = self._idx.conn.execute("SELECT COUNT(*) FROM items WHERE kind = ?", (kind,))
        return int(row.fetchone()[0])

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
        reachable = index.conn.execute(
            "WITH RECURSIVE up(id) AS (SELECT id FROM items WHERE parent_id IS NULL "
            "UNION SELECT items.id FROM items JOIN up ON items.parent_id = up.id) "
            "SELECT COUNT(*) FROM up"
        ).fetchone()[0]
        return StoreStats(
            leaves=counts["leaves"],
            branches=counts["branches"],
            depth=counts["depth"],
            domains=counts["domains"],
            unconsolidated=counts["unconsolidated"],
            unreachable=index.total_items() - int(reachable),
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
            or name in (INDEX_FILE, JOURNAL_FILE, DERIVED_FILE)
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
                if not _is_corrupt(exc):
                    raise
                with table.lock:
                    table.close()
                    for suffix in ("", "-wal", "-shm"):
                        _unlink_quietly(Path(f"{path}{suffix}"))
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

    def _rebuild_locked(
        self, progress: Progress | None = None, *, in_memory: bool = False
    ) -> RebuildReport:
        index = self._idx
        problems: list[Problem] = []
        removed = 0
        if not in_memory:
            for folder in (self.path, self.path / STATE_DIR):
                removed += remove_temp_files(folder, dead_only=True)
        found: list[tuple[Path, str]] = []
        for folder, suffix in ((self.path / LEAF_DIR, ".txt"), (self.path / BRANCH_DIR, ".json")):
            if not folder.exists():
                continue
            if not within(folder, self.path):
                problems.append(_link_problem(folder, self.path))
                continue
            for sub, dirs, files in os.walk(folder):
                here = Path(sub)
                for name in sorted(dirs):
                    if (here / name).is_symlink() and not within(here / name, self.path):
                        problems.append(_link_problem(here / name, self.path))
                dirs.sort()
                if not in_memory:
                    removed += remove_temp_files(here)
                for name in sorted(files):
                    if name.startswith(".") or not name.endswith(suffix):
                        continue
                    full = here / name
                    if full.is_symlink() and not within(full, self.path):
                        problems.append(_link_problem(full, self.path))
                        continue
                    found.append((full, suffix))
        found.sort()
        # One file per id: a copy in another folder (a leaf copied into a second domain
        # folder by hand) is reported and skipped; the file whose folder matches its
        # header wins, else the first path.
        parsed: dict[str, tuple[str, Leaf | Branch, int]] = {}
        for done, (full, suffix) in enumerate(found, 1):
            if progress is not None:
                progress(done, len(found), full.name)
            rel = full.relative_to(self.path).as_posix()
            try:
                data = full.read_bytes()
                record: Leaf | Branch
                if suffix == ".txt":
                    record = parse_leaf(data, full)
                    item_id = record.leaf_id
                    home = self.leaf_path(item_id, record.domain)
                else:
                    record = parse_branch(data, full)
                    item_id = record.node_id
                    home = self.branch_path(item_id, record.layer)
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
        rows: list[tuple[tuple[Any, ...], tuple[str, ...], list[str]]] = []
        leaves = branches = 0
        for rel, record, size in parsed.values():
            if isinstance(record, Leaf):
                rows.append((*leaf_row(record, rel, size), []))
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
            orphans = index.detach_orphans()
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
        self._clear_journal()
        live = [record.leaf_id for _, record, _ in parsed.values() if isinstance(record, Leaf)]
        self._derived_call(lambda table: table.keep_only(live), quiet=True)
        try:
            atomic_write(self.path / ROOT_FILE, json_bytes(self.trunk().to_json()))
        except StoreError as exc:
            logger.warning("could not rewrite root.json: %s", exc)
        return RebuildReport(
            leaves=leaves, branches=branches, problems=tuple(problems), temp_files_removed=removed
        )

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


def _check_space(space: str) -> None:
    if not isinstance(space, str) or not space.strip() or len(space) > 200:
        raise ValueError(f"invalid derived space name {space!r}")


def _link_problem(path: Path, root: Path) -> Problem:
    return Problem(
        path=path.relative_to(root).as_posix(),
        reason=f"a symbolic link to {os.path.realpath(path)}, outside the store; not followed",
    )


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
    foreign = [n for n in names if n not in _OWN_NAMES and not n.startswith(".")]
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
    version = data.get("format_version", FORMAT_VERSION)
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
