"""``Memory``: the one composition of store, chunkers, facts and navigator."""

from __future__ import annotations

import codecs
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ihmt_chunkers import BinaryContentError, Detection, DocType, chunk, decode
from ihmt_mcp._files import open_regular, read_regular, special_kind, walk_files
from ihmt_mcp._portable import (
    MARKDOWN_SUFFIXES,
    ImportBatch,
    NoteMeta,
    PortableMemory,
    export_memories,
    find_ihmt_store,
    is_jsonl,
    is_markdown_export,
    read_front_matter,
    read_ihmt_store,
    read_jsonl,
    read_markdown_export,
)
from ihmt_mcp._records import (
    CorrectionRecord,
    FiledAs,
    ForgetResult,
    IngestReport,
    MemoryStats,
    ReplaceOutcome,
    RestoreResult,
    SaveResult,
    TreeItem,
)
from ihmt_mcp._secrets import find_secrets, normalise
from ihmt_mcp._settings import Settings
from ihmt_mcp.errors import (
    ContentTooLargeError,
    EmptyContentError,
    FileRefusedError,
    SecretRefusedError,
    SemanticUnavailableError,
)
from ihmt_navigator import (
    ConsolidationReport,
    Consolidator,
    CorrectionMatch,
    Hit,
    Navigator,
    SearchResult,
    SemanticMode,
    StoreFrequencies,
    Summarizer,
    VectorIndex,
    load_embedder,
    summarizer_for,
)
from ihmt_store import (
    Leaf,
    LeafNotFoundError,
    RebuildReport,
    Span,
    Store,
    StoreConfig,
    StoreError,
    leaf_id_for,
    normalize_timestamp,
    now_timestamp,
    safe_domain,
)

if TYPE_CHECKING:
    from ihmt_facts import Contradiction, Fact, Timeline, TimelineStats
    from ihmt_mcp._project import ProjectIndex

logger = logging.getLogger(__name__)

__all__ = ["MAX_FILE_BYTES", "MAX_SAVE_CHARS", "Memory"]

MAX_SAVE_CHARS = 200_000
"""A single ``save`` above this is refused: memories are facts, not archives."""
MAX_FILE_BYTES = 2 * 1024 * 1024
"""``ingest`` reads a file up to this size whole; a larger one a segment at a time (and
``save -`` and ``ingest -`` take at most this much from stdin)."""
INGEST_GROUP = 256
"""Files written per store batch during an ingest."""
INGEST_LEAVES = 2048
"""Leaves written per store batch during an ingest, however few files hold them."""
STREAM_SEGMENT = 1 << 20
"""Bytes of a large file read, checked and split at a time."""
_SECRET_OVERLAP = 16_384
"""Characters of the previous segment scanned again with the next one for secrets."""
_MAX_CARRY = 4 * STREAM_SEGMENT
"""A segment's last block goes on into the next one up to this many characters; a
longer one (a line with no end) is stored as it is, flagged oversized."""
DETECT_DOMAINS = frozenset({"", "general", "auto"})
"""Domains that mean "file it where its content belongs"."""
CONTENT_TYPES = {t.value: t for t in DocType}
DOC_TYPE_NAMES = frozenset(t.value.upper() for t in DocType)

Progress = Callable[[int, int, str], None]
"""``progress(done, total, item)``: during ``ingest`` of files, the bytes read so far of
all the files' bytes, and the file being read."""


def _size_of(full: Path | None, text: str | None) -> int:
    """Bytes an ingest item reads: a file's size, or the given text's UTF-8 length."""
    if full is None:
        return len((text or "").encode("utf-8", errors="replace"))
    try:
        return full.stat().st_size
    except OSError:
        return 0


def _segments(handle: BinaryIO) -> Iterator[bytes]:
    """A file's bytes in pieces of about :data:`STREAM_SEGMENT`, each ending at a line end
    (the byte ``0x0A`` is never part of another character in UTF-8 or in the single- and
    double-byte encodings the decoder recognises). A line longer than
    :data:`_MAX_CARRY` bytes is cut at a space, else between two characters."""
    head = handle.read(4)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        yield head + handle.read()  # two bytes a character: no byte alone marks a line end
        return
    parts = [head]
    held = len(head)
    while True:
        data = handle.read(STREAM_SEGMENT)
        if not data:
            if held:
                yield b"".join(parts)
            return
        cut = data.rfind(b"\n") + 1
        if cut == 0 and held + len(data) < _MAX_CARRY:
            parts.append(data)  # no line end yet: a longer line, read on
            held += len(data)
            continue
        if cut == 0:
            cut = max(data.rfind(b" "), data.rfind(b"\t")) + 1
        if cut == 0:
            cut = len(data) - 1
            while cut > 0 and data[cut] & 0xC0 == 0x80:  # not inside a UTF-8 character
                cut -= 1
        parts.append(data[:cut])
        yield b"".join(parts)
        parts = [data[cut:]]
        held = len(data) - cut


def _content_type(value: str | None) -> DocType | None:
    if value is None:
        return None
    key = value.strip().lower()
    if key in ("", "auto"):
        return None
    if key not in CONTENT_TYPES:
        kinds = ", ".join(["auto", *CONTENT_TYPES])
        raise ValueError(f"unknown content_type {value!r}: use one of {kinds}")
    return CONTENT_TYPES[key]


def _domain(value: str | None) -> str | None:
    if value is None or value.strip().lower() in DETECT_DOMAINS:
        return None
    try:
        return safe_domain(value.strip().lower())
    except ValueError:
        raise ValueError(
            f"invalid domain {value!r}: use dotted lower-case words such as 'software.infra'"
        ) from None


FUTURE_SLACK = timedelta(days=1)
"""A memory may be dated up to a day ahead (time zones); a later date is refused: a
memory dated 9999-12-31 would outdate every real one after it forever."""


def _timestamp(value: str | date | datetime | None) -> str | None:
    if value is None or value == "":
        return None
    try:
        when = normalize_timestamp(value)
    except ValueError:
        shown = _clip(str(value), 60)
        raise ValueError(f"invalid date {shown!r}: use an ISO date such as 2026-02-03") from None
    latest = normalize_timestamp(datetime.now(timezone.utc) + FUTURE_SLACK)
    if when > latest:
        raise ValueError(
            f"the date {when[:10]} is in the future: date a memory when what it says became "
            "true (today or earlier)"
        )
    return when


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


HAND_EDIT_CHECK_S = 60.0
"""How often (at most) a search looks for leaves edited by hand whose size changed: on
the first search of a process, then once a minute (a ``stat`` per leaf)."""


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
        self._mode: SemanticMode | None = None
        self._timeline: Timeline | None = None
        self._navigator: Navigator | None = None
        self._summarizer: Summarizer | None = None
        self._frequencies: StoreFrequencies | None = None
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
        if force and (folder / "state").is_dir():
            for child in (folder / "state").iterdir():
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        existed = (folder / "ihmt.config.json").exists()
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
            self._navigator = Navigator(self.store, vectors=self.vectors)
        return self._navigator

    @property
    def vectors(self) -> VectorIndex | None:
        """The semantic layer's vectors, or None when search is by words only (see
        :attr:`semantic_mode` for why). The model loads once per process."""
        if self._vectors is False:
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
        """The summarizer the store's config names."""
        if self._summarizer is None:
            self._frequencies = StoreFrequencies(self.store)
            config = self.store.config
            self._summarizer = summarizer_for(
                config.summarizer_backend,
                model=config.summarizer_model,
                document_frequency=self._frequencies,
                total=self._frequencies.total,
            )
        return self._summarizer

    def _project(self, project: str | None) -> str:
        return (self.project if project is None else project).strip()

    # ================================================================= saving
    def save(
        self,
        content: str,
        domain: str = "general",
        content_type: str = "auto",
        replaces: str = "",
        project: str | None = None,
        date: str | date | datetime | None = None,
        tags: Sequence[str] = (),
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

        Raises:
            EmptyContentError, ContentTooLargeError, SecretRefusedError: nothing is written.
            ValueError: an invalid domain, content type or date.
        """
        if not isinstance(content, str) or not content.strip():
            raise EmptyContentError()
        if len(content) > MAX_SAVE_CHARS:
            raise ContentTooLargeError(len(content), MAX_SAVE_CHARS)
        if not normalise(content).strip():  # only zero-width or other invisible characters
            raise EmptyContentError()
        secrets = find_secrets(content)
        if secrets:
            kinds = tuple(dict.fromkeys(s.kind for s in secrets))
            logger.warning("refused a save holding %s", ", ".join(kinds))
            raise SecretRefusedError(kinds, tuple(s.line for s in secrets))
        doc_type = _content_type(content_type)
        wanted_domain = _domain(domain)
        when = _timestamp(date)
        proj = self._project(project)
        try:
            detection, leaves = self._chunked_leaves(
                content,
                None,
                doc_type=doc_type,
                domain=wanted_domain,
                source="agent",
                id_source=f"agent:{proj}",
                tags=tags,
                project=proj,
                default_time=when or now_timestamp(),
            )
        except BinaryContentError:
            raise ValueError("the content is binary data, not text; save it as words") from None
        if not leaves:
            raise EmptyContentError()
        target = self._find_replaced(replaces, proj) if replaces.strip() else None
        with self.store.batch():
            stored = self.store.put_leaves(leaves)
            self._write_vectors(stored)
        ids = tuple(leaf.leaf_id for leaf in stored)
        logger.info("saved %d leaf(s) in %s", len(ids), detection.domain)
        notices = self._ingest_facts(ids)
        outcome = ReplaceOutcome(status="none")
        if target is not None:
            outcome = self._settle_replace(target, ids, replaces)
        report = self._consolidate_domains({leaf.domain for leaf in stored})
        return SaveResult(
            ids=ids,
            filed_as=FiledAs(
                doc_type=detection.doc_type.value.upper(),
                domain=detection.domain,
                tags=tuple(dict.fromkeys((*detection.tags, *tags))),
            ),
            project=proj,
            timestamp=stored[0].timestamp,
            notices=notices,
            replaced=outcome,
            branches_created=len(report.branches_created),
        )

    def _leaves(
        self,
        blocks: Sequence[object],
        *,
        domain: str,
        data_type: str,
        source: str,
        id_source: str,
        tags: Sequence[str],
        project: str,
        default_time: str,
        first_position: int = 0,
        first_line: int = 0,
        spans: bool = False,
    ) -> list[Leaf]:
        from ihmt_chunkers import Block

        several = spans or len(blocks) > 1
        leaves: list[Leaf] = []
        for position, block in enumerate(blocks, first_position):
            assert isinstance(block, Block)
            if not block.text.strip():
                continue
            extra: dict[str, object] = {}
            if block.context:
                extra["context"] = block.context
            if block.qualified_name:
                extra["symbol"] = block.qualified_name
            if block.oversized:
                extra["oversized"] = True
            leaves.append(
                Leaf(
                    leaf_id=leaf_id_for(
                        domain=domain, source=id_source, position=position, text=block.text
                    ),
                    text=block.text,
                    timestamp=block.timestamp or default_time,
                    domain=domain,
                    data_type=data_type,
                    source=source,
                    tags=tuple(dict.fromkeys((*tags, *block.tags))),
                    project=project,
                    span=Span(
                        start_line=first_line + block.start_line,
                        end_line=first_line + block.end_line,
                    )
                    if several
                    else None,
                    extra=extra,
                )
            )
        return leaves

    def _ingest_facts(self, ids: Iterable[str]) -> tuple[str, ...]:
        notices: list[str] = []
        timeline = self.timeline
        for recorded_of_leaf in timeline.ingest_many(ids):
            for recorded in recorded_of_leaf:
                notices.extend(recorded.notices)
        return tuple(dict.fromkeys(notices))

    def _consolidate_domains(self, domains: set[str]) -> ConsolidationReport:
        return Consolidator(self.store, self.summarizer).consolidate(domains=sorted(domains))

    # ------------------------------------------------------------------ replaces
    def _find_replaced(self, words: str, project: str) -> CorrectionMatch:
        """The earlier memories of ``project`` that ``words`` describes, whatever their
        status (looked up before the new one is written)."""
        return self.navigator.find_corrected(words, project=project, limit=5)

    def _settle_replace(
        self, found: CorrectionMatch, new_ids: tuple[str, ...], words: str
    ) -> ReplaceOutcome:
        """Mark the memories the hint describes, or mark nothing and list the candidates."""
        new_id = new_ids[0]
        hint = _clip(words, 120)
        targets = [h for h in found.targets if h.id not in new_ids]
        others = [h for h in found.candidates if h.id not in new_ids]

        def listing(hits: Sequence[Hit]) -> list[str]:
            return [
                f"{number}. [{hit.timestamp[:10]}] {_clip(hit.excerpt or hit.title, 110)}"
                f"{' [already OUTDATED]' if hit.outdated else ''} → "
                f'mark_outdated(old_id="{hit.id}", new_id="{new_id}")'
                for number, hit in enumerate(hits, 1)
            ]

        if found.status == "ambiguous":
            lines = [
                f'REPLACES: {len(others)} earlier memories fit "{hint}" about equally well, so '
                "none was marked (a wrong mark would hide a true memory). Ask the user which "
                "one this corrects (or pick the obvious one), then make that call:"
            ]
            return ReplaceOutcome(
                status="ambiguous",
                candidates=tuple(h.id for h in others),
                message="\n".join([*lines, *listing(others)]),
            )
        if found.status == "not_found" or not targets:
            lines = [
                f'REPLACES: no earlier memory of this project holds "{hint}", so nothing was '
                "marked OUTDATED. If one of these is the memory it corrects, make that call; "
                "otherwise find it with search_memory:"
                if others
                else f'REPLACES: no earlier memory of this project matches "{hint}", so nothing '
                "was marked OUTDATED. If one exists, find it with search_memory and call "
                f'mark_outdated(old_id="…", new_id="{new_id}").'
            ]
            return ReplaceOutcome(
                status="not_found",
                candidates=tuple(h.id for h in others),
                message="\n".join([*lines, *listing(others)]),
            )
        for target in targets:
            self.timeline.supersede(target.id, new_id, reason=f"replaced: {words.strip()}"[:200])
            logger.info("%s supersedes %s", new_id, target.id)
        marked = "; ".join(
            f'the memory of {t.timestamp[:10]} ({t.id}) "{_clip(t.excerpt or t.title, 110)}"'
            for t in targets
        )
        return ReplaceOutcome(
            status="replaced",
            replaced=tuple(t.id for t in targets),
            candidates=tuple(h.id for h in others),
            message=(
                f"REPLACED: {marked} {'is' if len(targets) == 1 else 'are'} now flagged "
                f"OUTDATED by {new_id}. If that is not what the user meant, tell them, then undo "
                f'it: mark_outdated(old_id="{targets[0].id}", new_id="{new_id}", undo=true) '
                f"(or the CLI's: ihmt restore {targets[0].id}), and mark the right one."
            ),
        )

    def mark_outdated(self, old_id: str, new_id: str, reason: str = "") -> str:
        """Flag ``old_id`` OUTDATED, corrected by ``new_id``; return a sentence saying so.

        Raises:
            LeafNotFoundError: either id is unknown.
            ValueError: the two ids are the same.
        """
        for leaf_id in (old_id, new_id):
            if self.store.entry(leaf_id) is None:
                raise LeafNotFoundError(leaf_id)
        if old_id == new_id:
            raise ValueError("a memory cannot replace itself: give two different ids")
        # Following what corrected new_id must never lead back to old_id: A→B, B→C, C→A
        # would leave every one of them OUTDATED and none current.
        seen = {new_id}
        current = self.store.entry(new_id)
        while current is not None and current.outdated_by and current.outdated_by not in seen:
            if current.outdated_by == old_id:
                raise ValueError(
                    f"{new_id} is itself corrected (through {len(seen)} step(s)) by {old_id}: "
                    f"marking {old_id} OUTDATED by it would make a cycle with no current "
                    "memory. Restore one of them first if the chain is wrong."
                )
            seen.add(current.outdated_by)
            current = self.store.entry(current.outdated_by)
        correction = self.timeline.supersede(old_id, new_id, reason=reason or "marked outdated")
        logger.info("%s marked outdated by %s", old_id, new_id)
        return (
            f"{old_id} is now OUTDATED, corrected by {new_id} on {correction.date[:10]}; searches "
            "answer with the new memory first and relay the correction."
        )

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
        entry = self.store.entry(memory_id)
        if entry is None or entry.kind != "leaf":
            raise LeafNotFoundError(memory_id)
        marked_by = self.store.read_leaf(memory_id).outdated_by
        if corrected_by and marked_by is not None and marked_by.by != corrected_by:
            raise ValueError(
                f"{memory_id} is flagged OUTDATED by {marked_by.by}, not by {corrected_by}: "
                f"nothing changed; to undo that mark, give new_id={marked_by.by}"
            )
        removed = self.timeline.restore(memory_id)
        if removed is None:
            return RestoreResult(id=memory_id, restored=False)
        logger.info("%s restored (had been corrected by %s)", memory_id, removed.by)
        return RestoreResult(
            id=memory_id,
            restored=True,
            corrected_by=removed.by,
            corrected_on=removed.date,
            reason=removed.reason,
        )

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
    ) -> SearchResult:
        """Search the memory, ranking the current project's and global memories first.

        The ``compact`` text names the project an answer comes from when it is not the
        current one.

        Raises:
            ValueError: an empty query.
            InvalidFilterError: a bad ``as_of`` or ``detail``.
        """
        current = self._project(project)

        def ask() -> SearchResult:
            return self.navigator.search(
                query,
                clue=clue or None,
                detail=detail,
                as_of=as_of or None,
                prefer_project=current or None,
                domain=_domain(domain) if domain else None,
                limit=limit,
            )

        every = self.hand_edit_check_s
        if every is not None and time.monotonic() - self._edits_checked > every:
            self._edits_checked = time.monotonic()
            self.store.adopt_hand_edits()
            if self.store.edited:
                self.settle_hand_edits()
        result = ask()
        if self.store.edited:
            # A memory it read was edited by hand: the store re-indexed it; refresh what
            # was derived from it and answer again with all of that current.
            self.settle_hand_edits()
            result = ask()
        best = result.best
        if result.status == "found" and best is not None and best.project != current:
            if best.project:
                here = f"project {current}" if current else "no project"
                note = (
                    f"NOTE: this answer comes from project {best.project}, not the current "
                    f"one ({here}); check it applies here before relying on it."
                )
            else:
                note = ""
            if note:
                from ihmt_store import estimate_tokens

                compact = f"{result.compact}\n{note}"
                result = replace(result, compact=compact, tokens=estimate_tokens(compact))
        return result

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
        store = self.store
        entry = store.entry(memory_id)
        if entry is None or entry.kind != "leaf":
            raise LeafNotFoundError(memory_id)
        timeline = self.timeline
        corrected = len(store.corrections_of(memory_id))
        parent = entry.parent_id
        characters = len(store.read_leaf(memory_id).text)
        # The timeline lets go first, the leaf second, under one lock: should the process
        # die in between, the leaf is still there and forgetting it again finishes the job.
        with store.locked():
            facts = timeline.forget(memory_id)
            store.forget(memory_id)
        refreshed: tuple[str, ...] = ()
        if parent is not None:
            refreshed = Consolidator(store, self.summarizer).refresh([parent])
        logger.info("forgot %s (%d branch(es) refreshed)", memory_id, len(refreshed))
        return ForgetResult(
            id=memory_id,
            domain=entry.domain,
            project=entry.project,
            timestamp=entry.timestamp,
            characters=characters,
            branches_refreshed=refreshed,
            facts_removed=facts,
            corrections_cleared=corrected,
            reason=reason,
        )

    # ================================================================= bulk ingest
    def ingest(
        self,
        sources: Sequence[str | os.PathLike[str]] = (),
        *,
        text: str | None = None,
        domain: str | None = None,
        content_type: str | None = None,
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
        memory, with their dates, projects, tags and corrections (:meth:`import_memories`);
        a Markdown note's YAML front matter gives its title, tags, date and project.

        Raises:
            FileNotFoundError: a path does not exist.
        """
        portable, sources = self._portable_sources(sources)
        if portable:
            imported = self.import_memories(
                portable, project=project, tags=tags, consolidate=consolidate, progress=progress
            )
            if not sources and text is None:
                return imported
            rest = self.ingest(
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
            return imported.merged(rest)
        doc_type = _content_type(content_type)
        wanted_domain = _domain(domain)
        proj = self._project(project)
        items: list[tuple[str, Path | None]] = []
        skipped: list[tuple[str, str]] = []
        for raw in sources:
            path = Path(raw).expanduser()
            if path.is_dir():
                walked: list[tuple[str, str]] = []
                items.extend(
                    (f"{path.name}/{rel}", full) for full, rel in walk_files(path, skipped=walked)
                )
                skipped.extend((f"{path.name}/{rel}", why) for rel, why in walked)
            elif path.is_file():
                items.append((path.name, path))
            elif path.exists():
                raise FileRefusedError(
                    path, f"it is {special_kind(path.stat().st_mode)}, not a regular file or folder"
                )
            else:
                raise FileNotFoundError(f"no such file or folder: {path}")
        if text is not None:
            items.append((source_name, None))
        notices: list[str] = []
        written = 0
        total = len(items)
        left_by_walk = len(skipped)  # special, secret or linked-out files the walk passed over
        created = 0
        # Loaded (or rebuilt from the leaves already stored) before anything is written,
        # so the new leaves' facts are read once, as each group commits.
        _ = self.timeline
        sizes = [_size_of(full, text) for _, full in items]
        total_bytes, done_bytes = sum(sizes), 0
        group: list[Leaf] = []
        files_in_group = 0

        def commit() -> None:
            # One store batch per group, consolidated in the same batch: a leaf reaches
            # the disk once, already stamped with its branch, and the group costs one
            # flush and one index commit. Facts are read once the group is committed.
            nonlocal written, created, files_in_group
            if not group:
                files_in_group = 0
                return
            with self.store.batch():
                stored = self.store.put_leaves(group)
                written += len(stored)
                group_domains = {leaf.domain for leaf in stored}
                if consolidate:
                    created += len(self._consolidate_domains(group_domains).branches_created)
            stored_ids = [leaf.leaf_id for leaf in stored]
            self._write_vectors(self.store.read_leaves(stored_ids))
            with self.store.locked():
                notices.extend(self._ingest_facts(stored_ids))
            group.clear()
            files_in_group = 0

        for (name, full), size in zip(items, sizes, strict=True):
            files_in_group += 1
            args = (name, full, text, doc_type, wanted_domain, proj, tags, skipped, notices)
            if full is not None and size > MAX_FILE_BYTES:
                # A large file (a chat export, years of a journal) is read, checked and
                # stored a segment at a time: memory and each batch stay bounded.
                streamed = 0
                for leaves, read in self._stream_one(*args):
                    group.extend(leaves)
                    streamed += read
                    if len(group) >= INGEST_LEAVES:
                        commit()
                    if progress is not None:
                        progress(done_bytes + min(streamed, size), total_bytes, name)
                done_bytes += size  # also when it was skipped, or grew since the walk
                if progress is not None and streamed < size:
                    progress(done_bytes, total_bytes, name)
                continue
            group.extend(self._ingest_one(*args))
            done_bytes += size
            if len(group) >= INGEST_LEAVES or files_in_group >= INGEST_GROUP:
                commit()
            if progress is not None:
                progress(done_bytes, total_bytes, name)
        commit()
        logger.info("ingested %d item(s) into %d leaf(s)", total - len(skipped), written)
        return IngestReport(
            files=total + left_by_walk,
            leaves=written,
            skipped=tuple(skipped),
            notices=tuple(dict.fromkeys(notices)),
            branches_created=created,
        )

    def _ingest_one(
        self,
        name: str,
        full: Path | None,
        text: str | None,
        doc_type: DocType | None,
        wanted_domain: str | None,
        proj: str,
        tags: Sequence[str],
        skipped: list[tuple[str, str]],
        notices: list[str],
    ) -> list[Leaf]:
        """The leaves of one file (or of the given text); reasons to skip go to ``skipped``,
        what was done to read it (an encoding detected) to ``notices``."""
        if full is None:
            body = text or ""
        else:
            try:
                if full.stat().st_size > MAX_FILE_BYTES:
                    skipped.append((name, "larger than 2 MiB"))
                    return []
                decoded = decode(read_regular(full))
                body = decoded.text
                if decoded.notice:
                    notices.append(f"{name}: {decoded.notice}")
            except BinaryContentError:
                skipped.append((name, "binary"))
                return []
            except OSError as exc:
                skipped.append((name, f"unreadable ({exc.strerror or exc})"))
                return []
        if not body.strip():
            skipped.append((name, "empty"))
            return []
        secrets = find_secrets(body)
        if secrets:
            kinds = ", ".join(dict.fromkeys(s.kind for s in secrets))
            skipped.append((name, f"holds {kinds}"))
            return []
        stamp = now_timestamp()
        if full is not None:
            stamp = normalize_timestamp(datetime.fromtimestamp(full.stat().st_mtime))
        note = NoteMeta()
        if name.lower().endswith(MARKDOWN_SUFFIXES):
            # A note's front matter (Obsidian, basic-memory…) describes the memory: its
            # title, tags, date and project; it is never part of the memory's text.
            meta, body, problem = read_front_matter(body)
            if problem:
                notices.append(f"{name}: {problem}")
            note = NoteMeta.of(meta)
            if not body.strip():
                skipped.append((name, "only front matter"))
                return []
            proj = proj if note.project is None else note.project
        leaves = self._chunked_leaves(
            body,
            name if full is not None else None,
            doc_type=doc_type,
            domain=wanted_domain,
            source=name,
            id_source=f"{name}:{proj}",
            tags=(*tags, *note.tags),
            project=proj,
            default_time=note.timestamp or stamp,
        )[1]
        if note.title and leaves:
            leaves[0] = replace(leaves[0], extra={**leaves[0].extra, "title": note.title})
        return leaves

    def _stream_one(
        self,
        name: str,
        full: Path | None,
        text: str | None,
        doc_type: DocType | None,
        wanted_domain: str | None,
        proj: str,
        tags: Sequence[str],
        skipped: list[tuple[str, str]],
        notices: list[str],
    ) -> Iterator[tuple[list[Leaf], int]]:
        """The leaves of a large file, a segment at a time, each with the bytes it read.

        A first pass reads every segment as text and looks for secrets, so a binary file
        or one holding a secret is skipped before anything is written, as a small one is.
        The second detects the document on its first segment and splits each segment
        with that type; a segment's last block may go on in the next one, so it is
        carried over and split again with it: no block is cut at a segment's end.
        """
        assert full is not None
        del text  # a file, never the given text
        try:
            with open_regular(full) as handle:
                if not self._stream_checks(name, handle, skipped, notices):
                    return
                handle.seek(0)
                stamp = normalize_timestamp(
                    datetime.fromtimestamp(os.fstat(handle.fileno()).st_mtime)
                )
                yield from self._stream_leaves(
                    name, handle, doc_type, wanted_domain, proj, tags, stamp, skipped, notices
                )
        except BinaryContentError:  # it changed between the two passes
            skipped.append((name, "binary"))
        except OSError as exc:
            skipped.append((name, f"unreadable ({exc.strerror or exc})"))

    def _stream_checks(
        self, name: str, handle: BinaryIO, skipped: list[tuple[str, str]], notices: list[str]
    ) -> bool:
        said: set[str] = set()
        overlap = ""
        for data in _segments(handle):
            try:
                decoded = decode(data)
            except BinaryContentError:
                skipped.append((name, "binary"))
                return False
            if decoded.notice and decoded.notice not in said:
                said.add(decoded.notice)
                notices.append(f"{name}: {decoded.notice}")
            # The end of the previous segment too: a secret written over several lines
            # (a private key) is found even when a segment ends inside it.
            secrets = find_secrets(overlap + decoded.text)
            if secrets:
                kinds = ", ".join(dict.fromkeys(s.kind for s in secrets))
                skipped.append((name, f"holds {kinds}"))
                return False
            overlap = decoded.text[-_SECRET_OVERLAP:]
        return True

    def _stream_leaves(
        self,
        name: str,
        handle: BinaryIO,
        doc_type: DocType | None,
        wanted_domain: str | None,
        proj: str,
        tags: Sequence[str],
        stamp: str,
        skipped: list[tuple[str, str]],
        notices: list[str],
    ) -> Iterator[tuple[list[Leaf], int]]:
        config = self.store.config
        detection: Detection | None = None
        carry = ""
        position = line = 0
        stored_any = False
        note = NoteMeta()
        pending = _segments(handle)
        data = next(pending, b"")
        while data:
            following = next(pending, b"")
            body = carry + decode(data).text
            if detection is None and name.lower().endswith(MARKDOWN_SUFFIXES):
                # As for a small note: the front matter describes the memories (title,
                # tags, date, project) and is no part of their text.
                meta, rest, problem = read_front_matter(body)
                if problem:
                    notices.append(f"{name}: {problem}")
                note = NoteMeta.of(meta)
                line += body[: len(body) - len(rest)].count("\n")
                body = rest
                proj = proj if note.project is None else note.project
            chunked = chunk(
                body,
                name,
                doc_type=doc_type if detection is None else detection.doc_type,
                domain=wanted_domain if detection is None else detection.domain,
                target_tokens=config.target_tokens,
                max_tokens=config.max_tokens,
            )
            if detection is None:
                detection = chunked.detection
            blocks = list(chunked.blocks)
            carry = ""
            if following and blocks and len(blocks[-1].text) <= _MAX_CARRY:
                carry = blocks.pop().text
            leaves = self._leaves(
                blocks,
                domain=detection.domain,
                data_type=detection.doc_type.value.upper(),
                source=name,
                id_source=f"{name}:{proj}",
                tags=(*detection.tags, *tags, *note.tags),
                project=proj,
                default_time=note.timestamp or stamp,
                first_position=position,
                first_line=line,
                spans=True,
            )
            if note.title and leaves and position == 0:
                leaves[0] = replace(leaves[0], extra={**leaves[0].extra, "title": note.title})
            position += len(blocks)
            line += sum(block.text.count("\n") for block in blocks)
            stored_any = stored_any or bool(leaves)
            yield leaves, len(data)
            data = following
        if not stored_any:
            skipped.append((name, "empty"))

    def _chunked_leaves(
        self,
        body: str,
        filename: str | None,
        *,
        doc_type: DocType | None,
        domain: str | None,
        source: str,
        id_source: str,
        tags: Sequence[str],
        project: str,
        default_time: str,
    ) -> tuple[Detection, list[Leaf]]:
        """Detect and split ``body`` (the chunkers), then make its leaves: one pipeline for
        saves and ingests."""
        config = self.store.config
        chunked = chunk(
            body,
            filename,
            doc_type=doc_type,
            domain=domain,
            target_tokens=config.target_tokens,
            max_tokens=config.max_tokens,
        )
        detection = chunked.detection
        leaves = self._leaves(
            chunked.blocks,
            domain=detection.domain,
            data_type=detection.doc_type.value.upper(),
            source=source,
            id_source=id_source,
            tags=(*detection.tags, *tags),
            project=project,
            default_time=default_time,
        )
        return detection, list(leaves)

    # ================================================================= import, export
    def _portable_sources(
        self, sources: Sequence[str | os.PathLike[str]]
    ) -> tuple[list[ImportBatch], list[str | os.PathLike[str]]]:
        """Read the sources that are exports or stores; return them and the others."""
        batches: list[ImportBatch] = []
        rest: list[str | os.PathLike[str]] = []
        for raw in sources:
            path = Path(raw).expanduser()
            if is_jsonl(path):
                batches.append(read_jsonl(path, path.name))
            elif is_markdown_export(path):
                batches.append(read_markdown_export(path))
            elif path.is_dir() and (found := find_ihmt_store(path)) is not None:
                if found.resolve() == self.store.path.resolve():
                    raise FileRefusedError(path, "it is this memory's own store")
                batches.append(read_ihmt_store(found, path.name))
            else:
                rest.append(raw)
        return batches, rest

    def import_memories(
        self,
        batches: Sequence[ImportBatch],
        *,
        project: str | None = None,
        tags: Sequence[str] = (),
        consolidate: bool = True,
        progress: Progress | None = None,
    ) -> IngestReport:
        """Store what the readers of ``_portable`` found: one leaf per memory, exactly as
        read, keeping its id (when free), date, domain, project and tags; then the facts
        and the OUTDATED links between them. Re-importing the same data rewrites the same
        leaves. A memory holding a secret is skipped and reported.
        """
        proj = self._project(project)
        skipped: list[tuple[str, str]] = [s for b in batches for s in b.skipped]
        notices: list[str] = [n for b in batches for n in b.notices]
        items = [m for b in batches for m in b.memories]
        id_map: dict[str, str] = {}
        leaves: list[Leaf] = []
        for number, item in enumerate(items):
            label = item.source or item.id or f"memory {number + 1}"
            found = find_secrets(item.text)
            if found:
                kinds = ", ".join(dict.fromkeys(s.kind for s in found))
                skipped.append((label, f"holds {kinds}"))
                continue
            made = self._imported_leaves(item, number, proj, tags)
            if made and item.id:
                id_map[item.id] = made[0].leaf_id
            leaves.extend(made)
        written = 0
        created = 0
        total = len(leaves)
        # Progress in bytes of text, like a file ingest's (the CLI's bar shows MB).
        sizes = [len(leaf.text.encode("utf-8")) for leaf in leaves]
        total_bytes, done_bytes = sum(sizes), 0
        for start in range(0, total, INGEST_GROUP):
            group = leaves[start : start + INGEST_GROUP]
            done_bytes += sum(sizes[start : start + INGEST_GROUP])
            with self.store.batch():
                stored = self.store.put_leaves(group)
                self._write_vectors(stored)
                written += len(stored)
                if consolidate:
                    domains = {leaf.domain for leaf in stored}
                    created += len(self._consolidate_domains(domains).branches_created)
            with self.store.locked():
                notices.extend(self._ingest_facts([leaf.leaf_id for leaf in stored]))
            if progress is not None:
                progress(done_bytes, total_bytes, stored[-1].source if stored else "")
        notices.extend(self._import_facts(batches, id_map))
        notices.extend(self._import_links(items, batches, id_map))
        logger.info("imported %d memory(ies) into %d leaf(s)", len(items), written)
        return IngestReport(
            files=len(items) + len([s for b in batches for s in b.skipped]),
            leaves=written,
            skipped=tuple(skipped),
            notices=tuple(dict.fromkeys(notices)),
            branches_created=created,
        )

    def _imported_leaves(
        self, item: PortableMemory, number: int, project: str, tags: Sequence[str]
    ) -> list[Leaf]:
        when = item.timestamp or now_timestamp()
        owner = project if item.project is None else item.project
        all_tags = tuple(dict.fromkeys((*item.tags, *tags)))
        extra: dict[str, object] = dict(item.extra)
        if item.title:
            extra["title"] = item.title
        domain = None
        if item.domain:
            try:
                domain = safe_domain(item.domain.lower())
            except ValueError:
                domain = None
        if domain is None:  # another tool's export: detect and split like a save
            _, made = self._chunked_leaves(
                item.text,
                None,
                doc_type=None,
                domain=None,
                source=item.source or "import",
                id_source=f"import:{item.source}:{number}",
                tags=all_tags,
                project=owner,
                default_time=when,
            )
            if made and extra:
                made[0] = replace(made[0], extra={**made[0].extra, **extra})
            return made
        derived = leaf_id_for(
            domain=domain, source=f"import:{item.source}", position=0, text=item.text
        )
        new_id = derived
        if item.id:
            existing = self.store.entry(item.id)
            if existing is None or (
                existing.kind == "leaf" and self.store.read_leaf(item.id).text == item.text
            ):
                new_id = item.id
        data_type = item.data_type if item.data_type in DOC_TYPE_NAMES else "GENERIC"
        try:
            return [
                Leaf(
                    leaf_id=new_id,
                    text=item.text,
                    timestamp=when,
                    domain=domain,
                    data_type=data_type,
                    source=item.source,
                    tags=all_tags,
                    project=owner,
                    extra=extra,
                )
            ]
        except ValueError:  # an id that is not one of ours: derive one
            return [
                Leaf(
                    leaf_id=derived,
                    text=item.text,
                    timestamp=when,
                    domain=domain,
                    data_type=data_type,
                    source=item.source,
                    tags=all_tags,
                    project=owner,
                    extra=extra,
                )
            ]

    def _import_facts(self, batches: Sequence[ImportBatch], id_map: dict[str, str]) -> list[str]:
        """Record the facts a store's timeline held, as explicit facts of their leaves."""
        from ihmt_facts import Fact
        from ihmt_store import IhmtError

        notices: list[str] = []
        left = 0
        for batch in batches:
            for subject, attribute, value, moment, source in batch.facts:
                leaf_id = id_map.get(source)
                if leaf_id is None:
                    left += 1
                    continue
                fact = Fact(
                    subject=subject,
                    attribute=attribute,
                    value=value,
                    timestamp=moment,
                    source=leaf_id,
                    origin="explicit",
                )
                try:
                    for recorded in self.timeline.record_facts([fact]):
                        notices.extend(recorded.notices)
                except (IhmtError, ValueError):
                    left += 1
        if left:
            notices.append(f"{left} imported fact(s) could not be recorded (unknown leaf or value)")
        return notices

    def _import_links(
        self,
        items: Sequence[PortableMemory],
        batches: Sequence[ImportBatch],
        id_map: dict[str, str],
    ) -> list[str]:
        """Flag each imported memory OUTDATED by the one that corrected it."""
        links = [(m.id, m.outdated_by, m.reason) for m in items if m.id and m.outdated_by]
        links += [link for b in batches for link in b.links]
        notices: list[str] = []
        done: set[tuple[str, str]] = set()
        for old, new, reason in links:
            old_id = id_map.get(old)
            new_id = id_map.get(new) or (new if self.store.entry(new) is not None else None)
            if old_id is None or new_id is None or old_id == new_id or (old_id, new_id) in done:
                continue
            done.add((old_id, new_id))
            current = self.store.read_leaf(old_id).outdated_by
            if current is not None and current.by == new_id:
                continue
            try:
                self.mark_outdated(old_id, new_id, reason=reason or "imported")
            except (LeafNotFoundError, ValueError) as exc:
                notices.append(f"correction {old} → {new} not imported: {exc}")
        return notices

    def export(self, project: str | None = None) -> Iterator[PortableMemory]:
        """Every memory (of ``project`` when given; '' = the global ones), oldest first,
        with its id, date, project, domain, type, tags and OUTDATED link."""
        entries = [
            e
            for e in self.store.iter_entries("leaf")
            if project is None or e.project == project.strip()
        ]
        entries.sort(key=lambda e: (e.timestamp, e.id))
        return export_memories(iter(entries), self.store.read_leaves)

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
        store = self.store
        flagged = [e for e in store.iter_entries("leaf") if e.outdated_by]
        if not flagged:
            return ()
        shown = {
            (old, change.new_source)
            for change in self.timeline.contradictions()
            for old in change.old_sources
        }
        wanted: set[str] | None = None
        project = None
        if subject is not None:
            wanted = {f.source for f in self.timeline.facts(subject)}
            kind, _, name = subject.strip().lower().partition(":")
            project = name.strip() if kind == "project" and name.strip() else None
        newer = store.entries([e.outdated_by for e in flagged if e.outdated_by])
        out: list[CorrectionRecord] = []
        for entry in flagged:
            by = entry.outdated_by or ""
            if (entry.id, by) in shown:
                continue
            if wanted is not None and not (
                entry.id in wanted or by in wanted or (project and entry.project == project)
            ):
                continue
            new = newer.get(by)
            correction = store.read_leaf(entry.id).outdated_by
            out.append(
                CorrectionRecord(
                    old_id=entry.id,
                    old_date=entry.timestamp,
                    old_text=_clip(entry.excerpt or entry.title, 100),
                    new_id=by,
                    new_date=entry.outdated_on or (new.timestamp if new else ""),
                    new_text=_clip(new.excerpt or new.title, 100) if new else "",
                    project=entry.project,
                    reason=correction.reason if correction else "",
                )
            )
        return tuple(sorted(out, key=lambda c: (c.new_date, c.old_id)))

    def tree(self, depth: int = 2) -> tuple[TreeItem, ...]:
        """The tree's outline: what the trunk references, then ``depth`` levels below."""
        store = self.store
        out: list[TreeItem] = []

        def walk(ids: Sequence[str], level: int) -> None:
            entries = store.entries(list(ids))
            for item in ids:
                entry = entries.get(item)
                if entry is None:
                    continue
                out.append(
                    TreeItem(
                        level=level,
                        id=entry.id,
                        kind=entry.kind,
                        domain=entry.domain,
                        title=entry.title,
                        leaf_count=entry.leaf_count if entry.kind == "branch" else 1,
                        outdated=entry.outdated_by is not None,
                    )
                )
                if entry.kind == "branch" and level < depth:
                    walk([c.id for c in store.children(entry.id)], level + 1)

        for trunk in store.trunk().domains:
            walk(trunk.top, 0)
        return tuple(out)

    def stats(self) -> MemoryStats:
        """Totals: leaves, branches, depth, domains, unconsolidated, unreachable (0), bytes."""
        raw = self.store.stats()
        return MemoryStats(
            leaves=raw.leaves,
            branches=raw.branches,
            depth=raw.depth,
            domains=tuple(sorted(raw.domains.items())),
            unconsolidated=raw.unconsolidated,
            unreachable=raw.unreachable,
            outdated=raw.outdated,
            bytes=raw.bytes,
            generation=raw.generation,
            path=str(self.store.path),
        )

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
        return Consolidator(self.store, self.summarizer).consolidate(force=force, progress=progress)

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
            # candidates put the right symbol first less often (tools/bench/find_code.py:
            # 0.45 against 0.55 by words), so ProjectIndex's embedder is not passed.
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
