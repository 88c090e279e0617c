"""``Memory``: the one composition of store, chunkers, facts and navigator.

It holds the parts (the store; the timeline, navigator, vectors and summarizer, loaded on
first use) and the steps every write shares. Each workflow is a module of its own that
takes the memory as a ``MemoryParts`` (``_parts``) and never imports this one:
``_saving``, ``_corrections``, ``_forgetting``, ``_inspection``, ``_searching``,
``_importer``/``_ingest``, ``_portable`` and ``sync`` (the last four imported where used)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from ihmt_mcp._corrections import flag_outdated, list_corrections, undo_correction
from ihmt_mcp._forgetting import forget_memory
from ihmt_mcp._inspection import memory_stats, outline
from ihmt_mcp._records import (
    CorrectionRecord,
    ForgetResult,
    IngestReport,
    MemoryStats,
    RestoreResult,
    SaveResult,
    TreeItem,
)
from ihmt_mcp._saving import MAX_SAVE_CHARS, save_memory
from ihmt_mcp._searching import (
    HAND_EDIT_CHECK_S,
    SearchKeywords,
    check_query,
    search_options,
    shared_look_due,
)
from ihmt_mcp._settings import Settings
from ihmt_mcp._types import ContentType
from ihmt_mcp.errors import SemanticUnavailableError
from ihmt_store import (
    AppliedChanges,
    Leaf,
    RebuildReport,
    Store,
    StoreConfig,
    StoreError,
)

if TYPE_CHECKING:
    from ihmt_facts import Contradiction, Fact, Timeline, TimelineStats
    from ihmt_mcp._ingest import Progress
    from ihmt_mcp._portable import PortableMemory
    from ihmt_mcp._project import ProjectIndex
    from ihmt_navigator import (
        ClueProvider,
        ConsolidationReport,
        Consolidator,
        CorrectionMatch,
        Navigator,
        SearchOptions,
        SearchResult,
        SemanticMode,
        Summarizer,
        VectorIndex,
    )

logger = logging.getLogger(__name__)

__all__ = ["MAX_SAVE_CHARS", "Memory"]


class Memory:
    """A long-term memory: save, search, correct and forget, over one store.

    Transport-free: the MCP server, the command line and the web interface all drive
    this class. Open one with :meth:`open` (from :class:`Settings`) or :meth:`init`.
    The fact timeline and the summarizer load on first use.

    Args:
        store: an open store.
        project: the current project (saves record it, searches prefer it); '' is global.
        settings: where project indexes live (default: beside the store).
    """

    def __init__(
        self,
        store: Store,
        *,
        project: str = "",
        settings: Settings | None = None,
        semantic: str | None = None,
    ) -> None:
        self.store = store
        self.project = project
        self.settings = settings
        self._semantic = semantic or (settings.semantic if settings is not None else "auto")
        self._vectors: VectorIndex | bool | None = False  # False: not looked at yet
        self._edits_checked = -HAND_EDIT_CHECK_S  # the first search looks
        self.hand_edit_check_s: float | None = HAND_EDIT_CHECK_S
        """How often a search looks for leaves edited by hand (a ``stat`` per leaf);
        None: never (a one-shot hook that must answer in milliseconds)."""
        self.hand_edit_shared = False  # True: all processes' looks count (one-shot commands)
        self._mode: SemanticMode | None = None
        self._timeline: Timeline | None = None
        self._navigator: Navigator | None = None
        self._summarizer: Summarizer | None = None
        self._indexes: dict[Path, ProjectIndex] = {}

    # ================================================================= opening
    @classmethod
    def open(cls, settings: Settings | None = None) -> Memory:
        """Open the memory at ``settings.store_path``, creating it when missing or empty.

        Raises:
            StoreFormatError: the folder holds other files, or a newer IHMT wrote it.
            ConfigError: its config is malformed.
        """
        settings = settings or Settings.from_env()
        store = Store.open(settings.store_path, create=True)
        logger.info("opened memory at %s", settings.store_path)
        return cls(
            store, project=settings.default_project(), settings=settings, semantic=settings.semantic
        )

    @classmethod
    def init(
        cls,
        path: str | os.PathLike[str],
        *,
        branch_factor: int | None = None,
        target_tokens: int | None = None,
        backend: str | None = None,
        model: str | None = None,
        force: bool = False,
        project: str = "",
        semantic: str = "auto",
    ) -> Memory:
        """Create a memory at ``path`` (or open the one there and apply the options).

        Args:
            force: discard derived state (``state/``) and rebuild it from the files;
                never touches a leaf.
        """
        changes: dict[str, object] = {}
        if branch_factor is not None:
            changes["branch_factor"] = branch_factor
        if target_tokens is not None:
            changes["target_tokens"] = target_tokens
        if backend is not None:
            changes["summarizer_backend"] = backend
        if model is not None:
            changes["summarizer_model"] = model
        folder = Path(path).expanduser()
        if force:
            Store.discard_derived(folder)
        existed = Store.exists(folder)
        if existed:
            store = Store.open(folder)
        else:
            config = StoreConfig().to_json()
            config.update(changes)
            try:
                store = Store.create(folder, StoreConfig.from_json(config))
            except TypeError as exc:
                raise ValueError(str(exc)) from None
        if existed and changes:
            store.update_config(**changes)
        memory = cls(store, project=project, semantic=semantic)
        if force:
            memory.rebuild()
        return memory

    def close(self) -> None:
        """Close the store's index connection (every object can be reopened)."""
        for index in self._indexes.values():
            index.close()
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory({str(self.store.path)!r}, project={self.project!r})"

    # ================================================================= lazy parts
    @property
    def timeline(self) -> Timeline:
        """The fact timeline (loaded on first use: a cold load reads its journal)."""
        if self._timeline is None:
            from ihmt_facts import Timeline

            self._timeline = Timeline(self.store)
        return self._timeline

    @property
    def navigator(self) -> Navigator:
        """The search over this store (fused with meaning when the semantic layer is on)."""
        if self._navigator is None:
            from ihmt_navigator import Navigator

            self._navigator = Navigator(self.store, vectors=self.vectors)
        return self._navigator

    @property
    def vectors(self) -> VectorIndex | None:
        """The semantic layer's vectors, or None when search is by words only (see
        :attr:`semantic_mode` for why). The model loads once per process."""
        if self._vectors is False:
            from ihmt_navigator import VectorIndex, load_embedder

            settings = self.settings
            embedder, self._mode = load_embedder(
                self._semantic,
                model=settings.semantic_model if settings is not None else "",
                cache_dir=settings.cache_dir if settings is not None else None,
            )
            self._vectors = VectorIndex(self.store, embedder) if embedder is not None else None
        assert not isinstance(self._vectors, bool)
        return self._vectors

    @property
    def semantic_mode(self) -> SemanticMode:
        """Whether search uses meaning as well as words, with which model, and why."""
        if self._mode is None:
            _ = self.vectors
        assert self._mode is not None
        return self._mode

    def _write_vectors(self, leaves: Sequence[Leaf]) -> None:
        """Embed newly stored leaves. Vectors are derived state: a failure leaves the save
        standing, and ``ihmt index --semantic`` fills the gap."""
        vectors = self.vectors
        if vectors is None or not leaves:
            return
        try:
            vectors.write({leaf.leaf_id: leaf.text for leaf in leaves})
        except Exception as exc:  # noqa: BLE001 (vectors are derived; the memory is safe)
            logger.warning("vectors not written for %d memory(ies): %s", len(leaves), exc)

    def index_semantic(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every memory that has no vector yet (after the extra is installed, or a
        crash between a save and its vector); how many were embedded.

        Raises:
            SemanticUnavailableError: the semantic layer is off or not installed.
        """
        vectors = self.vectors
        if vectors is None:
            raise SemanticUnavailableError(self.semantic_mode.reason)
        store = self.store
        ids = [entry.id for entry in store.iter_entries("leaf")]

        def texts(chunk: Sequence[str]) -> dict[str, str]:
            return {leaf.leaf_id: leaf.text for leaf in store.read_leaves(chunk)}

        return vectors.backfill(texts, ids, progress)

    def search_mode(self) -> dict[str, Any]:
        """What search uses, why, and how many memories still lack a vector: the
        ``search`` object of ``ihmt stats``/``doctor`` and the GUI's Diagnose screen."""
        return {**self.semantic_mode.to_json(), "vectors_missing": self.vectors_missing()}

    def vectors_missing(self) -> int | None:
        """Memories without a vector, or None when the semantic layer is off."""
        vectors = self.vectors
        if vectors is None:
            return None
        try:
            return len(vectors.missing(entry.id for entry in self.store.iter_entries("leaf")))
        except StoreError as exc:  # the derived file cannot be read: all of them lack one
            logger.warning("the vectors cannot be read: %s", exc)
            return self.store.count("leaf")

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer the store's config names, weighing keywords against the
        store's document frequencies (the index caches them: the store is the one
        frequency source, and each consolidator reads the same)."""
        if self._summarizer is None:
            from ihmt_navigator import summarizer_for

            config = self.store.config
            self._summarizer = summarizer_for(
                config.summarizer_backend,
                model=config.summarizer_model,
                frequencies=self.store,
            )
        return self._summarizer

    def _consolidator(self) -> Consolidator:
        """A consolidator with this memory's summarizer, weighing a leaf's keywords
        against the same frequencies (the store's)."""
        from ihmt_navigator import Consolidator

        return Consolidator(self.store, self.summarizer, frequencies=self.store)

    def _project(self, project: str | None) -> str:
        return (self.project if project is None else project).strip()

    # ================================================================= saving
    def save(
        self,
        content: str,
        domain: str = "general",
        content_type: ContentType = "auto",
        replaces: str = "",
        project: str | None = None,
        date: str | date | datetime | None = None,
        tags: Sequence[str] = (),
        source: str = "agent",
    ) -> SaveResult:
        """Save one memory: refuse secrets, classify and split, store, extract facts, correct.

        Args:
            content: what to remember, ideally one durable fact with its reason.
            domain: where to file it; ``general`` lets its content decide.
            content_type: ``auto`` or a document type (``generic``, ``personal``,
                ``temporal``, ``process``, ``narrative``, ``code``).
            replaces: a few words describing an earlier memory this one corrects.
            project: the project it belongs to (default: the current one; '' = global).
            date: when what it says became true (default: a date in the text, else now).
            tags: extra tags to store with it.
            source: who saved it: ``agent``, or ``session`` when ``ihmt hook stop``
                captured it from what the user said (an explicit save outranks it).

        Raises:
            EmptyContentError, ContentTooLargeError, SecretRefusedError: nothing is written.
            ValueError: an invalid domain, content type or date.
        """
        return save_memory(
            self, content, domain, content_type, replaces, project, date, tags, source
        )

    def _ingest_facts(self, ids: Iterable[Leaf | str]) -> tuple[str, ...]:
        notices: list[str] = []
        timeline = self.timeline
        for recorded_of_leaf in timeline.ingest_many(ids):
            for recorded in recorded_of_leaf:
                notices.extend(recorded.notices)
        return tuple(dict.fromkeys(notices))

    def _consolidate_domains(self, domains: set[str]) -> ConsolidationReport:
        return self._consolidator().consolidate(domains=sorted(domains))

    def _store_group(
        self, leaves: Sequence[Leaf], *, consolidate: bool
    ) -> tuple[list[Leaf], int, tuple[str, ...]]:
        """Store one group of an ingest or an import: in one store batch, consolidated in
        the same batch (a leaf reaches the disk once, already stamped with its branch; the
        group costs one flush and one index commit); then read its facts (its vectors
        come later, the slow part of an ingest: :mod:`ihmt_mcp._vector_fill`).

        Returns:
            the leaves stored, the branches created, the facts' notices.
        """
        created = 0
        with self.store.batch():
            stored = self.store.put_leaves(leaves)
            if consolidate:
                domains = {leaf.domain for leaf in stored}
                created = len(self._consolidate_domains(domains).branches_created)
        with self.store.locked():
            notices = self._ingest_facts(stored)
        return stored, created, notices

    # ------------------------------------------------------------------ replaces
    def _find_replaced(self, words: str, project: str) -> CorrectionMatch:
        """The earlier memories of ``project`` that ``words`` describes, whatever their
        status (looked up before the new one is written)."""
        return self.navigator.find_corrected(words, project=project, limit=5)

    def _supersede(self, old_id: str, new_id: str, reason: str, hint: str = "") -> None:
        self.timeline.supersede(old_id, new_id, reason=reason, hint=hint)
        logger.info("%s supersedes %s", new_id, old_id)

    def mark_outdated(self, old_id: str, new_id: str, reason: str = "") -> str:
        """Flag ``old_id`` OUTDATED, corrected by ``new_id``; return a sentence saying so.

        Raises:
            LeafNotFoundError: either id is unknown.
            ValueError: the two ids are the same.
        """
        return flag_outdated(self, old_id, new_id, reason)

    def restore(self, memory_id: str, corrected_by: str | None = None) -> RestoreResult:
        """Undo a correction: ``memory_id`` is no longer flagged OUTDATED.

        What the command line's ``restore``, ``mark_outdated(..., undo=true)`` and the web
        interface call. Both memories stay; the facts the restored one states count again.

        Args:
            corrected_by: when given, undo only the mark this memory set (a safeguard
                against undoing a different correction than the one meant).

        Raises:
            LeafNotFoundError: unknown id.
            ValueError: ``corrected_by`` is not the memory that flagged it.
        """
        return undo_correction(self, memory_id, corrected_by)

    # ================================================================= searching
    def search(
        self,
        query: str,
        clue: str | None = None,
        detail: str = "compact",
        as_of: str | date | datetime | None = None,
        project: str | None = None,
        *,
        limit: int = 5,
        domain: str | None = None,
        alternatives: Sequence[str] = (),
    ) -> SearchResult:
        """Search the memory, ranking the current project's and global memories first.

        The ``compact`` text names the project an answer comes from when it is not the
        current one. ``alternatives``: other phrasings, tried when it is NOT FOUND.

        Raises:
            ValueError: an empty query.
            InvalidFilterError: a bad ``as_of`` or ``detail``.
        """
        check_query(self.navigator, query)
        current = self._project(project)
        options = search_options(current, detail, as_of, limit, domain, alternatives)
        return self._searched(query, clue or None, options)

    def ask(
        self,
        query: str,
        clue_provider: ClueProvider,
        *,
        clue: str | None = None,
        max_rounds: int | None = None,
        **keywords: Unpack[SearchKeywords],
    ) -> SearchResult:
        """Search, and while the answer is AMBIGUOUS ask ``clue_provider`` for a clue.

        The navigator's clue loop (:meth:`Navigator.ask`), each round a :meth:`search`
        with the clues so far: ``clue`` is a first one given up front (one round more
        than ``max_rounds``, the store's ``max_clue_rounds`` by default). The result
        carries the ``clues`` used and how many (``clue_rounds``). ``keywords`` are
        :meth:`search`'s: ``detail``, ``as_of``, ``project``, ``limit``, ``domain``.

        Raises:
            ValueError: an empty query.
            InvalidFilterError: a bad ``as_of`` or ``detail``.
        """
        check_query(self.navigator, query)
        current = self._project(keywords.get("project"))
        options = search_options(
            current,
            keywords.get("detail", "compact"),
            keywords.get("as_of"),
            keywords.get("limit", 5),
            keywords.get("domain"),
            keywords.get("alternatives", ()),
        )
        return self.navigator.ask(
            query,
            clue_provider,
            options,
            clue=clue,
            max_rounds=max_rounds,
            search=lambda clues: self._searched(query, clues, options),
        )

    def _searched(self, query: str, clue: str | None, options: SearchOptions) -> SearchResult:
        """One search, with the memories edited by hand made current first."""
        every = self.hand_edit_check_s
        if every is not None and time.monotonic() - self._edits_checked > every:
            self._edits_checked = time.monotonic()
            if not self.hand_edit_shared or shared_look_due(self.store, every):
                self.store.adopt_hand_edits()
                if self.store.edited:
                    self.settle_hand_edits()
        result = self.navigator.search(query, options, clue=clue)
        if self.store.edited:
            # A memory it read was edited by hand: the store re-indexed it; refresh what
            # was derived from it and answer again with all of that current.
            self.settle_hand_edits()
            result = self.navigator.search(query, options, clue=clue)
        # A secret written into a file by hand, or pulled, is never served.
        from ihmt_mcp._vector_fill import with_pending_vectors
        from ihmt_mcp._withheld import withhold_secrets

        return with_pending_vectors(self, withhold_secrets(result))

    def secret_leaves(self) -> list[tuple[str, str, str]]:
        """``(id, path, what)`` of every memory whose file holds what looks like a secret
        (written there by hand, or pulled from another machine: ``save`` refuses them).
        Searches do not serve those lines, and syncs do not send such files; ``ihmt
        doctor`` lists them. Reads every leaf."""
        from ihmt_mcp._withheld import secret_leaves

        return list(secret_leaves(self.store))

    def settle_hand_edits(self) -> tuple[str, ...]:
        """Refresh the facts and vectors of the memories the store found edited by hand
        (and re-indexed) since the last call; their ids."""
        edited = tuple(dict.fromkeys(self.store.edited))
        self.store.edited.clear()
        if not edited:
            return ()
        live = list(self.store.read_leaves(edited))
        with self.store.locked():
            self._ingest_facts([leaf.leaf_id for leaf in live])
        self._write_vectors(live)
        logger.info("refreshed %d memory(ies) edited by hand", len(live))
        return edited

    # ================================================================= forgetting
    def forget(self, memory_id: str, reason: str = "") -> ForgetResult:
        """Delete one memory for good, and every trace of its text in the tree.

        The leaf file goes; the summaries above it are rewritten from what remains (so no
        excerpt of it survives); facts drawn from it are dropped from the timeline, at the
        cost of those facts (``Timeline.forget``, never a rebuild); memories it had flagged
        OUTDATED are current again. ``reason`` is returned, never logged.

        Raises:
            LeafNotFoundError: no memory with that id.
        """
        return forget_memory(self, memory_id, reason)

    # ================================================================= replication
    def apply_pulled(self, paths: Iterable[str]) -> AppliedChanges:
        """Bring everything derived in step with memory files another machine wrote.

        ``paths`` are store-relative paths a merge added, changed or deleted (``ihmt
        sync`` passes ``git diff --name-only``). The store indexes the leaves, folds the
        notes and applies the tombstones (:meth:`Store.apply_changes`); then the fact
        timeline lets go of the memories removed and reads the new and re-annotated ones,
        the semantic layer embeds the new ones, the summaries that listed a removed
        memory are rewritten without it, and the domains touched are consolidated. The
        cost follows the pulled files, not the size of the store.
        """
        from ihmt_mcp._replication import derive_pulled, index_pulled

        applied, parents = index_pulled(self, paths)
        if applied.config:
            self._summarizer = None  # the pulled config may name another summarizer
        derive_pulled(self, applied, parents)
        return applied

    # ================================================================= bulk ingest
    def ingest(
        self,
        sources: Sequence[str | os.PathLike[str]] = (),
        *,
        text: str | None = None,
        domain: str | None = None,
        content_type: ContentType | None = None,
        tags: Sequence[str] = (),
        project: str | None = None,
        consolidate: bool = True,
        progress: Progress | None = None,
        source_name: str = "stdin",
    ) -> IngestReport:
        """Store files, folders (recursively, as a developer sees them) and/or a text.

        Folders skip VCS, virtualenv, build and ignored files; binary files and files
        holding a secret are skipped and reported. A file over :data:`MAX_FILE_BYTES`
        is read, checked and stored a segment at a time, in the same blocks as if it were
        read whole; ``progress`` follows the bytes read. Unchanged documents rewrite the
        same leaves (never duplicates).

        A ``.jsonl`` file, a Markdown export (``ihmt export``) and an IHMT store folder
        (the original IHMT-MEMORY's ``ihmt_memory/`` or ours) are imported memory by
        memory, with their dates, projects, tags and corrections;
        a Markdown note's YAML front matter gives its title, tags, date and project.

        Raises:
            FileNotFoundError: a path does not exist.
        """
        from ihmt_mcp._importer import ingest_sources

        return ingest_sources(
            self,
            sources,
            text=text,
            domain=domain,
            content_type=content_type,
            tags=tags,
            project=project,
            consolidate=consolidate,
            progress=progress,
            source_name=source_name,
        )

    # ================================================================= export
    def export(self, project: str | None = None) -> Iterator[PortableMemory]:
        """Every memory (of ``project`` when given; '' = the global ones), oldest first,
        with its id, date, project, domain, type, tags and OUTDATED link."""
        from ihmt_mcp._portable import export_store

        return export_store(self.store, project)

    # ================================================================= inspection
    def facts(self, subject: str | None = None, attribute: str | None = None) -> tuple[Fact, ...]:
        """The recorded statements (extracted and explicit), oldest first."""
        return self.timeline.facts(subject, attribute)

    def conflicts(self, subject: str | None = None) -> tuple[Contradiction, ...]:
        """Every real change of a fact's value, in date order (``.notice`` to relay)."""
        return self.timeline.contradictions(subject)

    def corrections(self, subject: str | None = None) -> tuple[CorrectionRecord, ...]:
        """Every memory flagged OUTDATED by a later one, in the order the corrections are
        dated, except those a fact's change already shows (see :meth:`conflicts`).

        A ``replaces=`` save or a ``mark_outdated`` call is a change in the timeline even
        when no fact rule read either memory ("PostgreSQL 15" → "PostgreSQL 17").

        Args:
            subject: only corrections of memories stating facts about it (for
                ``project:<name>``, also the memories of that project).
        """
        return list_corrections(self, subject)

    def tree(self, depth: int = 2) -> tuple[TreeItem, ...]:
        """The tree's outline: what the trunk references, then ``depth`` levels below."""
        return outline(self.store, depth)

    def stats(self) -> MemoryStats:
        """Totals: leaves, branches, depth, domains, unconsolidated, unreachable (0), bytes."""
        return memory_stats(self.store)

    def rebuild(
        self,
        progress: Progress | None = None,
        vector_progress: Callable[[int, int], None] | None = None,
    ) -> tuple[RebuildReport, TimelineStats]:
        """Recreate every derived file (catalog, search index, trunk, fact timeline, and
        the semantic layer's vectors when it is on).

        ``progress(done, total, name)`` follows the files read, ``vector_progress(done,
        total)`` the memories embedded.
        """
        report = self.store.rebuild(progress)
        facts = self.timeline.rebuild()
        vectors = self.vectors
        if vectors is not None:  # a hand-edited leaf's old vector must not survive
            self.store.clear_derived(vectors.space)
            self.index_semantic(vector_progress)
        return report, facts

    def consolidate(
        self, force: bool = False, progress: Progress | None = None
    ) -> ConsolidationReport:
        """Run pending summarization events (``force`` also closes partial groups).

        ``progress(done, total, branch_id)`` follows the items grouped.
        """
        return self._consolidator().consolidate(force=force, progress=progress)

    # ================================================================= project indexes
    def project_index(self, path: str | os.PathLike[str]) -> ProjectIndex:
        """The private code index of the codebase at ``path`` (kept in sync on every call)."""
        from ihmt_mcp._project import ProjectIndex

        root = Path(path).expanduser().resolve()
        index = self._indexes.get(root)
        if index is None:
            base = (
                self.settings.projects_dir
                if self.settings is not None
                else self.store.path.parent / "ihmt_projects"
            )
            # Code search stays by words: the sentence encoder re-ranking find_code's
            # candidates puts the right symbol first less often (tools/bench/find_code.py;
            # figures in the CHANGELOG), so ProjectIndex's embedder is not passed.
            index = ProjectIndex(root, base)
            self._indexes[root] = index
        return index

    def project_map(
        self, path: str | os.PathLike[str], detail: str = "files", subpath: str = ""
    ) -> str:
        """The map of a codebase: files with token sizes, or with their symbols."""
        return self.project_index(path).map(detail=detail, subpath=subpath)

    def find_code(
        self,
        query: str,
        path: str | os.PathLike[str],
        scope: str = "main",
        subpath: str = "",
        clue: str | None = None,
        max_tokens: int = 1500,
    ) -> str:
        """Only the code that answers ``query``, as ``file:first-last`` and the code."""
        return self.project_index(path).find(
            query, scope=scope, subpath=subpath, clue=clue, max_tokens=max_tokens
        )
