"""The batch commit protocol: what one locked write stages, how it lands, and the journal.

A write session stages records in a :class:`Batch`; at commit each file is serialised
once, written beside its target, flushed with the others and renamed into place, and
then the index commits. Before the first rename the batch names every file it will
replace or remove in ``state/journal``; a writer killed after that is redone from the
files by the next one (:func:`replay_journal`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ihmt_store._files import (
    branch_bytes,
    ensure_dirs,
    fsync_dir,
    leaf_bytes,
    parse_branch,
    parse_leaf,
    read_leaf_bytes,
    remove_temp_files,
    replace_temp,
    sync_paths,
    unlink_quietly,
    within,
    write_temp,
)
from ihmt_store._index import Index, branch_row
from ihmt_store._layout import (
    BRANCH_DIR,
    FORGOTTEN_DIR,
    JOURNAL_FILE,
    LEAF_DIR,
    NOTES_DIR,
    STATE_DIR,
)
from ihmt_store._notes import Note, index_leaf, is_tombstoned, note_files, note_rel, refold
from ihmt_store._records import Branch, Leaf
from ihmt_store.errors import CorruptFileError, StoreIOError

logger = logging.getLogger(__name__)

__all__ = ["Batch", "bury", "clear_journal", "journal_path", "replay_journal"]


class Batch:
    """What one locked write session has touched so far.

    Leaves and branches written in a batch are kept in memory as records until the
    commit; then each is serialised once, goes to a temporary sibling, all are flushed
    to disk together (one ``os.sync`` for many), each replaces its target in one
    rename, and the index commits. A file written twice in a batch (a leaf saved, then
    stamped by consolidation) reaches the disk once; a reader in the same batch gets the
    staged record back without parsing anything.
    """

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = root
        self.durable = durable
        """False in a derived store: the files land by rename, unflushed."""
        self.journal_path = journal_path(root)
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
        self._raw: dict[str, bytes] = {}
        self.notes: dict[str, list[Note]] = {}
        """Notes staged in this batch, by leaf id (the fold counts them before they land)."""
        self.gone: set[str] = set()
        """Leaf ids whose tombstone is staged in this batch."""
        self.prune: set[str] = set()
        """Folders (notes of a forgotten leaf) removed at commit once empty."""

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

    def write_raw(self, rel: str, data: bytes) -> None:
        """Stage the bytes of a file that is not a leaf or branch (a note, a tombstone)."""
        self.removals.discard(rel)
        self._raw[rel] = data

    def staged(self, rel: str) -> bool:
        """Whether ``rel`` is staged to be written at commit."""
        return rel in self.pending or rel in self._raw

    def add_note(self, note: Note) -> None:
        """Stage a new note file (journaled) and count it in this batch's folds."""
        rel = note_rel(note)
        self.note(rel)
        self.write_raw(rel, note.to_bytes())
        self.notes.setdefault(note.leaf, []).append(note)

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
        self._raw.pop(rel, None)
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
        data.update(self._raw)
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
        if self.durable:
            sync_paths(tmp for tmp, _ in moves)
        for tmp, full in moves:
            replace_temp(tmp, full)
        self.pending.clear()
        self._data.clear()
        self._raw.clear()
        self.temps.clear()
        for rel in self.removals:
            unlink_quietly(root / rel)
        self.removals.clear()
        for rel in self.prune:
            try:
                os.rmdir(root / rel)
            except OSError:
                pass  # not empty (a note landed meanwhile) or already gone
        self.prune.clear()
        if self.durable:
            for folder in dirs:
                fsync_dir(folder)

    def commit(self, index: Index) -> None:
        """Publish every staged file and commit the index: the index learns the files'
        final sizes, the files land, then the index commits (``generation`` grows only
        when something was noted)."""
        index.set_sizes(self.serialize())
        self.publish()
        index.commit(changed=self.changed)

    def abandon(self) -> None:
        """Drop what was staged after a failure: every target keeps its old bytes."""
        for tmp in self.temps:
            unlink_quietly(tmp)
        self.temps.clear()
        self.pending.clear()
        self._data.clear()
        self._raw.clear()
        self.notes.clear()
        self.gone.clear()
        self.prune.clear()
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


def _landing_order(rel: str) -> int:
    """Sort key of a staged file: higher layers first, leaves (layer 0) last."""
    if rel.startswith(BRANCH_DIR + "/"):
        try:
            return -int(rel.split("/", 2)[1])
        except ValueError:
            return 0
    return 0


def journal_path(root: Path) -> Path:
    """The write journal of the store at ``root``."""
    return root / STATE_DIR / JOURNAL_FILE


def clear_journal(root: Path) -> None:
    """Delete the journal once what it names is committed (or was redone)."""
    try:
        journal_path(root).unlink()
    except FileNotFoundError:
        pass


def replay_journal(root: Path, index: Callable[[], Index], *, quiet: bool = False) -> None:
    """Redo a dead writer's journal from the files: index them as they are now.

    A no-op without a journal. ``index`` gives the open index (called only when there
    is a journal to replay); the caller holds the store's lock.
    """
    journal = journal_path(root)
    try:
        lines = journal.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return
    rels = list(dict.fromkeys(line.strip() for line in lines if line.strip()))
    log = logger.info if quiet else logger.warning
    log("recovering %d file(s) from an interrupted write in %s", len(rels), root)
    catalog = index()
    catalog.begin()
    try:
        folders: set[Path] = set()
        for rel in rels:
            full = root / rel
            folders.add(full.parent)
            _reindex_path(root, catalog, rel)
        # An item whose parent's file never landed is referenced by the trunk again.
        catalog.detach_orphans([Path(rel).stem for rel in rels])
        for folder in folders:
            remove_temp_files(folder)
        catalog.commit()
    except BaseException:
        catalog.rollback()
        raise
    clear_journal(root)


def _reindex_path(root: Path, index: Index, rel: str) -> None:
    full = root / rel
    item_id = Path(rel).stem
    parts = rel.split("/")
    if parts[0] == NOTES_DIR and len(parts) == 3:
        if is_tombstoned(root, parts[1]):
            unlink_quietly(full)
        else:
            refold(root, index, parts[1])
        return
    if parts[0] == FORGOTTEN_DIR:
        if full.is_file():
            bury(root, index, item_id)
        return
    try:
        if not within(full, root):
            raise CorruptFileError(
                "is a symbolic link leading out of the store; not followed", path=full
            )
        data = read_leaf_bytes(full, root) if rel.startswith(LEAF_DIR + "/") else full.read_bytes()
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
            if is_tombstoned(root, leaf.leaf_id):
                bury(root, index, leaf.leaf_id)
                return
            index_leaf(root, index, leaf, rel, len(data))
        else:
            branch = parse_branch(data, full)
            row, fields = branch_row(branch, rel, len(data))
            index.upsert(row, fields, [c.id for c in branch.children])
            # As put_branch does: the list is the only record of a leaf's parent.
            index.adopt_listed(branch.node_id, [c.id for c in branch.children if c.kind == "leaf"])
    except CorruptFileError as exc:
        logger.warning("%s; left as it is and kept out of the index", exc)
        index.delete(item_id)


def bury(root: Path, index: Index, leaf_id: str) -> bool:
    """Apply a tombstone that is on disk, outside a batch (recovery): the leaf's file
    and notes go, its row goes, and the leaves it corrected fold again. True when
    something was deleted. Deletes nothing but what the tombstone names."""
    entry = index.get(leaf_id)
    done = False
    if entry is not None and entry.kind == "leaf":
        unlink_quietly(root / entry.path)
        index.delete(leaf_id)
        done = True
    for rel in note_files(root, leaf_id):
        unlink_quietly(root / rel)
        done = True
    try:
        os.rmdir(root / NOTES_DIR / leaf_id)
    except OSError:
        pass
    for other in index.corrected_by(leaf_id):
        refold(root, index, other.id)
    return done
