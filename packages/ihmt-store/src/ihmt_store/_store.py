"""``Store``: the public API over a tree of plain files, its derived index and its lock.

``Store`` is the one façade. Its state and the write and read steps its methods go
through are ``_base.py`` (on ``_lifecycle.py``: the lock and the index file's life); the
work behind the methods is in ``_opening``, ``_writes``, ``_annotations``,
``_tombstones``, ``_hand_edits``, ``_apply`` and ``_stats``, all SQL in ``_index.py``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from ihmt_store._annotations import UNSET, change_annotations, complete, completed
from ihmt_store._apply import apply_paths
from ihmt_store._base import StoreBase, branch_entry, healing, leaf_entry
from ihmt_store._derived import DerivedChanges, check_space
from ihmt_store._files import atomic_write, json_bytes, read_json
from ihmt_store._hand_edits import adopt_resized, hand_edited, resized_leaves
from ihmt_store._index import Candidate, Entry, FieldWeights
from ihmt_store._layout import (
    CONFIG_FILE,
    DERIVED_FILE,
    INDEX_FILE,
    JOURNAL_FILE,
    LOCK_FILE,
    ROOT_FILE,
    STATE_DIR,
)
from ihmt_store._lifecycle import Problem, Progress, RebuildReport, scan_files, writable
from ihmt_store._notes import CLOCK_FILE
from ihmt_store._opening import (
    lay_out,
    make_folder,
    read_config,
    remove_derived_state,
    write_config,
)
from ihmt_store._records import (
    FORMAT_VERSION,
    Branch,
    Correction,
    Leaf,
    Root,
    StoreConfig,
    safe_domain,
)
from ihmt_store._replicate import REPLICATED, UNREPLICATED, AppliedChanges, sort_changes
from ihmt_store._stats import IOStats, StoreStats, live_trunk, store_stats, with_keywords
from ihmt_store._text import terms
from ihmt_store._tombstones import bury_leaf
from ihmt_store._types import ItemKind
from ihmt_store._writes import leave_parent, set_parents, stage_branch, stage_leaves
from ihmt_store.errors import (
    CorruptFileError,
    LeafNotFoundError,
    StoreError,
    StoreIOError,
    StoreNotFoundError,
)

logger = logging.getLogger(__name__)

__all__ = ["IOStats", "Problem", "Progress", "RebuildReport", "Store", "StoreStats"]


class Store(StoreBase):
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
        make_folder(folder)
        had_lock = (folder / LOCK_FILE).exists()
        store = cls(folder, cfg, lock_timeout=30.0)
        # Under the lock, so two processes creating the same store at once agree.
        with store._locked_raw():
            lay_out(folder, cfg, had_lock=had_lock)
        return cls.open(folder)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = False,
        lock_timeout: float = 30.0,
        derived: bool = False,
    ) -> Store:
        """Open the store at ``path``, recovering what a crashed writer left behind.

        Args:
            create: create the store when the folder is missing or empty.
            lock_timeout: seconds to wait for another writer before giving up.
            derived: a store its owner derives again from files elsewhere: see ``durable``.

        Raises:
            StoreNotFoundError: no store there (and ``create`` is false).
            StoreFormatError: the store was written by a newer IHMT.
            ConfigError: ``ihmt.config.json`` is malformed.
        """
        folder = Path(path).expanduser()
        if not (folder / CONFIG_FILE).exists():
            if not create:
                raise StoreNotFoundError(folder)
            cls.create(folder).close()
        config = read_config(folder / CONFIG_FILE)
        store = cls(folder, config, lock_timeout=lock_timeout)
        store.durable = not derived
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
        remove_derived_state(Path(path).expanduser())

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
        with self._writing() as batch:
            stored, done = stage_leaves(
                self.path,
                self._clock,
                batch,
                self._idx,
                leaves,
                partial(self._read_leaf_file, count=False),
            )
        return [done.get(leaf.leaf_id, leaf) for leaf in stored]

    @healing
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
            entry = leaf_entry(known.get(leaf_id), leaf_id)
            leaf = self._read_leaf_file(entry.path)
            out.append(completed(leaf, entry, folded.get(leaf_id)))
        return out

    @healing
    def read_leaf(self, leaf: str | Entry) -> Leaf:
        """Read one leaf from its file.

        Args:
            leaf: its id, or the catalog :class:`Entry` the caller already holds (a
                candidate's): the file is then read without asking the catalog again.

        Raises:
            LeafNotFoundError: no leaf with that id (or the entry is not a leaf's).
            CorruptFileError: its file cannot be parsed.
        """
        entry = leaf_entry(self._idx.get(leaf), leaf) if isinstance(leaf, str) else leaf
        entry = leaf_entry(entry, entry.id)
        found = self._read_leaf_file(entry.path)
        if self.edited and found.leaf_id in self.edited:
            entry = self._idx.get(found.leaf_id) or entry  # just adopted: its row is new
        return complete(self._idx, found, entry)

    @healing
    def adopt_hand_edits(self) -> list[str]:
        """Find leaves edited by hand whose size changed (one ``stat`` per leaf) and
        re-index them as they are now; their ids (also added to
        :attr:`edited`). An edit that keeps the size is adopted when the leaf is next
        read, and listed by :meth:`hand_edits`."""
        changed = resized_leaves(self.path, self._idx.leaf_sizes())
        return adopt_resized(changed, partial(self._read_leaf_file, count=False), self.edited)

    def hand_edits(self) -> list[str]:
        """The leaves whose text no longer matches their header's checksum or the size
        the index knows (edited by hand and not read since): ``ihmt doctor`` lists them.
        Reads every leaf file."""
        return hand_edited(self.path, self._all_entries("leaf"))

    def file_problems(self) -> tuple[Problem, ...]:
        """The files :meth:`rebuild` would list as problems (path, what is wrong, what to
        do), found the way it reads them and without changing anything: ``ihmt doctor``
        lists them. Reads every leaf and branch file."""
        return tuple(scan_files(self.path)[1])

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

    def annotate(
        self,
        leaf_id: str,
        *,
        outdated_by: Correction | None = UNSET,
        parent_id: str | None = UNSET,
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
            entry = leaf_entry(index.get(leaf_id), leaf_id)
            leaf = complete(index, self._read_leaf_file(entry.path, count=False), entry)
            return change_annotations(
                self.path, self._clock, batch, index, entry, leaf, outdated_by, parent_id, extra
            )

    def forget(self, item_id: str) -> Entry:
        """Delete one leaf for good, with its index rows; the only way a leaf goes.

        Its parent branch drops the child reference (and the excerpt it embedded);
        summaries above it are the caller's to refresh.

        Raises:
            LeafNotFoundError: no leaf with that id.
        """
        with self._writing() as batch:
            index = self._idx
            entry = leaf_entry(index.get(item_id), item_id)
            full = self.path / entry.path
            if full.is_symlink():
                raise StoreIOError(
                    f"is a symbolic link to {os.path.realpath(full)}; IHMT deletes only files "
                    "it wrote, and removing the link would leave that file in place. Delete "
                    "the file and the link by hand, then run 'ihmt rebuild'",
                    path=full,
                )
            batch.scrub = True
            leave_parent(batch, index, entry, partial(self._read_branch_file, count=False))
            bury_leaf(self.path, batch, index, item_id, [entry.path])
        self._derived_call(lambda table: table.remove([item_id]), quiet=True)
        return entry

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
        with self._writing() as batch:
            if changed.config:
                self.config = read_config(self.path / CONFIG_FILE)
            read_branch = partial(self._read_branch_file, count=False)
            applied = apply_paths(
                self.path, self._clock, self.io, batch, self._idx, changed, read_branch
            )
        if applied.removed:  # as forget does: no derived copy of a forgotten memory stays
            gone = sorted(applied.removed)
            self._derived_call(lambda table: table.remove(gone), quiet=True)
        return applied.changes(config=changed.config)

    # ================================================================= branches
    def put_branch(self, branch: Branch) -> Branch:
        """Write one branch; its branch children are stamped separately, after it.

        A loose leaf it lists takes it as its parent in the same step: from format 2 on
        the branch's list is the only record of a leaf's parent on disk, so the catalog
        says what a rebuild would.
        """
        with self._writing() as batch:
            return stage_branch(batch, self._idx, branch)

    @healing
    def read_branch(self, node_id: str) -> Branch:
        """Read one branch file.

        Raises:
            BranchNotFoundError: no branch with that id.
        """
        return self._read_branch_file(branch_entry(self._idx.get(node_id), node_id).path)

    def set_parent(self, child_ids: Sequence[str], parent_id: str | None) -> None:
        """Record the branch that now summarises leaves or branches: a leaf's parent is
        kept in the catalog only (its file is never rewritten); a branch's file is
        stamped.

        Raises:
            LeafNotFoundError: one of the ids is unknown.
        """
        with self._writing() as batch:
            read_item = partial(self._read_item, count=False)
            set_parents(batch, self._idx, child_ids, parent_id, read_item)

    def remove_branch(self, node_id: str) -> None:
        """Delete a branch file and detach its children (they go back to the trunk).

        Leaves are never deleted this way; only the summary above them goes.
        """
        with self._writing() as batch:
            index = self._idx
            entry = branch_entry(index.get(node_id), node_id)
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

    @healing
    def trunk(self) -> Root:
        """The trunk computed from the catalog: each domain's items without a parent."""
        return live_trunk(self._idx)

    def refresh_root(self, keywords: dict[str, tuple[str, ...]] | None = None) -> Root:
        """Rewrite ``root.json`` from the catalog (after consolidation, and by rebuild).

        Its size follows the number of domains and top items, not the number of leaves.
        """
        with self._locked():
            root = with_keywords(self.trunk(), keywords)
            atomic_write(self.path / ROOT_FILE, json_bytes(root.to_json()), durable=self.durable)
            return root

    # ================================================================= queries
    @healing
    def entry(self, item_id: str) -> Entry | None:
        """The catalog entry of a leaf or branch, or None."""
        return self._idx.get(item_id)

    @healing
    def entries(self, ids: Sequence[str]) -> dict[str, Entry]:
        """Catalog entries for many ids at once (unknown ids are left out)."""
        return self._idx.get_many(ids)

    @healing
    def children(self, parent_id: str) -> list[Entry]:
        """Catalog entries of a branch's children, oldest first."""
        return self._idx.children(parent_id)

    @healing
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

    @healing
    def open_branch(self, domain: str, layer: int, below: int) -> Entry | None:
        """A branch of ``domain`` on ``layer`` (>= 1) with fewer than ``below`` children
        in the catalog, or None: where a forced consolidation puts a partial group
        rather than wrapping it again. A top branch comes first, then the most recent."""
        return self._idx.open_branch(safe_domain(domain), int(layer), int(below))

    @healing
    def listed_in(self, child_ids: Sequence[str]) -> dict[str, list[str]]:
        """Which branches list each id among their children (from the branch files).

        A child listed by a branch but not stamped with it is the trace of a
        consolidation that was interrupted between writing the branch and stamping.
        """
        return self._idx.listed_in(child_ids)

    @healing
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

    @healing
    def paths_to(self, item_ids: Sequence[str]) -> dict[str, list[str]]:
        """:meth:`path_to` for many items in one query (unknown ids get ``[]``)."""
        known = self._idx.ancestors(list(dict.fromkeys(item_ids)))
        return {item: [*reversed(known[item]), item] if item in known else [] for item in item_ids}

    def iter_entries(self, kind: ItemKind | None = None) -> Iterator[Entry]:
        """Every catalog entry (``kind``: ``leaf``, ``branch`` or None for both), by id."""
        yield from self._paged_entries(kind)

    def iter_leaves(self) -> Iterator[Leaf]:
        """Every leaf, read from its file, in id order."""
        index = self._idx
        entries = list(index.iter_entries("leaf"))
        # One query for what the notes add (a row per annotated leaf), not one per leaf.
        folded = index.all_folded()
        for entry in entries:
            leaf = self._read_leaf_file(entry.path, count=False)
            yield completed(leaf, entry, folded.get(entry.id))

    @healing
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
        gone, unusable = self._missing_or_unusable(entry for entry, _, _ in rows)
        vanished = set(gone)
        for entry, score, present in rows:
            if entry.path in vanished or entry.path in unusable:
                continue
            matched = tuple(t for t in dict.fromkeys(query_terms) if t in present)
            out.append(Candidate(entry=entry, score=score, matched=matched))
        if vanished:
            self._heal(sorted(vanished))
        return out

    @healing
    def document_frequencies(self, query_terms: Sequence[str]) -> dict[str, int]:
        """How many leaves contain each normalised term.

        Only leaves count, here and in every ranking statistic: branch summaries repeat
        their children's words, and each machine consolidates in its own order, so
        counting them would rank the same memories differently on two synced machines.
        """
        return self._idx.term_frequencies(query_terms)

    @healing
    def count(self, kind: ItemKind | None = None) -> int:
        """Number of items (of one kind). Cached until the next commit."""
        if kind is None:
            return self._idx.total_items()
        return self._idx.documents(kind)

    @property
    @healing
    def generation(self) -> int:
        """Grows with every committed change, in any process: a cheap cache key."""
        return self._idx.generation()

    @healing
    def stats(self) -> StoreStats:
        """Totals, including how many items cannot be reached from the trunk (must be 0)."""
        return store_stats(self._idx)

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
        check_space(space)
        with self._locked():
            self._derived_call(lambda table: table.put(space, items))

    def clear_derived(self, space: str) -> None:
        """Drop everything in ``space``; readers start over."""
        check_space(space)
        with self._locked():
            self._derived_call(lambda table: table.clear(space))

    def derived_changes(
        self, space: str, epoch: int | None = None, seq: int = 0, *, limit: int | None = None
    ) -> DerivedChanges:
        """What was written to ``space`` after ``(epoch, seq)``; everything for a new reader.

        With ``limit``, at most that many rows, oldest first, and the ``seq`` of the last
        one when more follow: ask again from there (a reader of 500,000 vectors never
        holds them all as bytes at once)."""
        check_space(space)
        return self._derived_call(lambda table: table.changes(space, epoch, seq, limit))

    def derived_ids(self, space: str) -> set[str]:
        """The items that have data in ``space``."""
        check_space(space)
        return self._derived_call(lambda table: table.item_ids(space))

    def derived_counts(self) -> dict[str, int]:
        """Items holding data, by space."""
        return self._derived_call(lambda table: table.counts())

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
            self.config = write_config(self.path, self.config, changes)
            return self.config
