"""The ingest pipeline: files, folders and a text into leaves, stored a group at a time.

A file up to :data:`MAX_FILE_BYTES` is read whole; a larger one is read, checked and split
a segment at a time, in the same blocks as if it were read whole. Exports and stores of
memories are not read here: ``Memory.ingest`` hands them to :mod:`ihmt_mcp._importer`.
"""

from __future__ import annotations

import codecs
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ihmt_chunkers import BinaryContentError, Detection, DocType, chunk, decode
from ihmt_mcp._files import open_regular, read_regular, special_kind, walk_files
from ihmt_mcp._front_matter import FrontMatterTooLargeError, read_front_matter
from ihmt_mcp._leaves import chunked_leaves, make_leaves
from ihmt_mcp._portable import MARKDOWN_SUFFIXES, NoteMeta
from ihmt_mcp._read_ahead import READ_AHEAD_BYTES, Found, ReadAhead
from ihmt_mcp._records import IngestReport
from ihmt_mcp._secrets import find_secrets
from ihmt_mcp._summary_fill import store_group_later
from ihmt_mcp.errors import FileRefusedError
from ihmt_store import Leaf, StoreConfig, normalize_timestamp, now_timestamp

if TYPE_CHECKING:
    from ihmt_mcp._parts import MemoryParts

logger = logging.getLogger(__name__)

__all__ = [
    "INGEST_GROUP",
    "MAX_FILE_BYTES",
    "IngestOptions",
    "Progress",
    "ingest_files",
]

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

Progress = Callable[[int, int, str], None]
"""``progress(done, total, item)``: during ``ingest`` of files, the bytes read so far of
all the files' bytes, and the file being read."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IngestOptions:
    """How every item of one ingest is filed."""

    doc_type: DocType | None = None
    """The document type to split with; None detects it per file."""
    domain: str | None = None
    """Where to file the leaves; None lets each file's content decide."""
    project: str = ""
    """The project the leaves belong to ('' = global), unless a note's front matter names one."""
    tags: tuple[str, ...] = ()
    """Tags stored with every leaf, before the ones detected."""


def ingest_files(
    memory: MemoryParts,
    sources: Sequence[str | os.PathLike[str]],
    options: IngestOptions,
    *,
    text: str | None,
    source_name: str,
    consolidate: bool,
    progress: Progress | None,
) -> IngestReport:
    """Store ``sources`` (files and folders, walked as a developer sees them) and ``text``.

    Raises:
        FileNotFoundError: a path does not exist.
        FileRefusedError: a path is neither a regular file nor a folder.
    """
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
    reader = _Reader(config=memory.store.config, options=options, skipped=skipped)
    notices: list[str] = []
    written = 0
    total = len(items)
    left_by_walk = len(skipped)  # special, secret or linked-out files the walk passed over
    created = 0
    # Loaded (or rebuilt from the leaves already stored) before anything is written,
    # so the new leaves' facts are read once, as each group commits.
    _ = memory.timeline
    sizes = [_size_of(full, text) for _, full in items]
    total_bytes, done_bytes = sum(sizes), 0
    group: list[Leaf] = []
    files_in_group = 0
    # Files read whole are read a few ahead by a worker process, when there are enough.
    whole = [
        (name, full)
        for (name, full), size in zip(items, sizes, strict=True)
        if full is not None and size <= MAX_FILE_BYTES
    ]
    ahead = None
    if len(whole) > 1 and sum(s for s in sizes if s <= MAX_FILE_BYTES) >= READ_AHEAD_BYTES:
        ahead = ReadAhead(memory.store.config, options, whole, memory.timeline.patterns)
    found: Found = {}  # what the worker's fact rules found in the group's leaves

    def commit() -> None:
        nonlocal written, created, files_in_group
        if group:
            stored, branches, said = store_group_later(
                memory, group, consolidate=consolidate, found=found
            )
            found.clear()
            written += len(stored)
            created += branches
            notices.extend(said)
            group.clear()
        files_in_group = 0

    try:
        for (name, full), size in zip(items, sizes, strict=True):
            files_in_group += 1
            if full is not None and size > MAX_FILE_BYTES:
                # A large file (a chat export, years of a journal) is read, checked and
                # stored a segment at a time: memory and each batch stay bounded.
                streamed = 0
                for leaves, read in reader.streamed(name, full):
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
            if ahead is not None and full is not None:
                leaves, skipped_here, warned, facts = ahead.take(name, full)
                reader.skipped.extend(skipped_here)
                reader.warnings.extend(warned)
                group.extend(leaves)
                found.update(facts)
            else:
                group.extend(reader.whole(name, full, text))
            done_bytes += size
            if len(group) >= INGEST_LEAVES or files_in_group >= INGEST_GROUP:
                commit()
            if progress is not None:
                progress(done_bytes, total_bytes, name)
    finally:
        if ahead is not None:
            ahead.close()
    commit()
    logger.info("ingested %d item(s) into %d leaf(s)", total - len(skipped), written)
    return IngestReport(
        files=total + left_by_walk,
        leaves=written,
        skipped=tuple(skipped),
        notices=tuple(dict.fromkeys(notices)),
        branches_created=created,
        warnings=tuple(dict.fromkeys(reader.warnings)),
    )


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


@dataclass(slots=True, kw_only=True)
class _Reader:
    """Reads the items of one ingest into leaves; why an item was skipped goes to
    ``skipped``, what was done to read it (an encoding guessed, front matter kept as
    text) to ``warnings``."""

    config: StoreConfig
    options: IngestOptions
    skipped: list[tuple[str, str]]
    warnings: list[str] = field(default_factory=list)

    def whole(self, name: str, full: Path | None, text: str | None) -> list[Leaf]:
        """The leaves of one file read whole (or of the given text when ``full`` is None)."""
        skipped, warnings = self.skipped, self.warnings
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
                    warnings.append(f"{name}: {decoded.notice}")
            except BinaryContentError:
                skipped.append((name, "binary"))
                return []
            except OSError as exc:
                skipped.append((name, f"unreadable ({exc.strerror or exc})"))
                return []
        if not body.strip():
            skipped.append((name, "empty"))
            return []
        is_note = name.lower().endswith(MARKDOWN_SUFFIXES)
        if is_note:
            # A note's front matter (Obsidian, basic-memory…) describes the memory: its
            # title, tags, date and project; it is never part of the memory's text.
            try:
                meta, rest, problem = read_front_matter(body)
            except FrontMatterTooLargeError as exc:
                skipped.append((name, str(exc)))
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
        proj = self.options.project
        if is_note:
            body = rest
            if problem:
                warnings.append(f"{name}: {problem}")
            note = NoteMeta.of(meta)
            if not body.strip():
                skipped.append((name, "only front matter"))
                return []
            proj = proj if note.project is None else note.project
        try:
            leaves = chunked_leaves(
                self.config,
                body,
                name if full is not None else None,
                doc_type=self.options.doc_type,
                domain=self.options.domain,
                source=name,
                id_source=f"{name}:{proj}",
                tags=(*self.options.tags, *note.tags),
                project=proj,
                default_time=note.timestamp or stamp,
            )[1]
        except BinaryContentError:
            # Text around front matter, but the body under it is binary data.
            skipped.append((name, "binary"))
            return []
        if note.title and leaves:
            leaves[0] = replace(leaves[0], extra={**leaves[0].extra, "title": note.title})
        return leaves

    def streamed(self, name: str, full: Path) -> Iterator[tuple[list[Leaf], int]]:
        """The leaves of a large file, a segment at a time, each with the bytes it read.

        A first pass reads every segment as text and looks for secrets, so a binary file
        or one holding a secret is skipped before anything is written, as a small one is.
        The second detects the document on its first segment and splits each segment
        with that type; a segment's last block may go on in the next one, so it is
        carried over and split again with it: no block is cut at a segment's end.
        """
        try:
            with open_regular(full) as handle:
                if not self._front_matter_fits(name, handle) or not self._checked(name, handle):
                    return
                handle.seek(0)
                stamp = normalize_timestamp(
                    datetime.fromtimestamp(os.fstat(handle.fileno()).st_mtime)
                )
                yield from self._segment_leaves(name, handle, stamp)
        except BinaryContentError:  # it changed between the two passes
            self.skipped.append((name, "binary"))
        except OSError as exc:
            self.skipped.append((name, f"unreadable ({exc.strerror or exc})"))

    def _front_matter_fits(self, name: str, handle: BinaryIO) -> bool:
        """False (the file skipped, and why) when a note's front matter is too long: told
        from its first segment, before the whole file is read for secrets."""
        if not name.lower().endswith(MARKDOWN_SUFFIXES):
            return True
        first = next(_segments(handle), b"")
        handle.seek(0)
        try:
            read_front_matter(decode(first).text)
        except FrontMatterTooLargeError as exc:
            self.skipped.append((name, str(exc)))
            return False
        return True

    def _checked(self, name: str, handle: BinaryIO) -> bool:
        """The first pass: True when every segment is text free of secrets."""
        said: set[str] = set()
        overlap = ""
        for data in _segments(handle):
            try:
                decoded = decode(data)
            except BinaryContentError:
                self.skipped.append((name, "binary"))
                return False
            if decoded.notice and decoded.notice not in said:
                said.add(decoded.notice)
                self.warnings.append(f"{name}: {decoded.notice}")
            # The end of the previous segment too: a secret written over several lines
            # (a private key) is found even when a segment ends inside it.
            secrets = find_secrets(overlap + decoded.text)
            if secrets:
                kinds = ", ".join(dict.fromkeys(s.kind for s in secrets))
                self.skipped.append((name, f"holds {kinds}"))
                return False
            overlap = decoded.text[-_SECRET_OVERLAP:]
        return True

    def _segment_leaves(
        self, name: str, handle: BinaryIO, stamp: str
    ) -> Iterator[tuple[list[Leaf], int]]:
        """The second pass: each segment's leaves, and the bytes it read."""
        config, options = self.config, self.options
        proj = options.project
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
                try:
                    meta, rest, problem = read_front_matter(body)
                except FrontMatterTooLargeError as exc:  # it grew since it was checked
                    self.skipped.append((name, str(exc)))
                    return
                if problem:
                    self.warnings.append(f"{name}: {problem}")
                note = NoteMeta.of(meta)
                line += body[: len(body) - len(rest)].count("\n")
                body = rest
                proj = proj if note.project is None else note.project
            chunked = chunk(
                body,
                name,
                doc_type=options.doc_type if detection is None else detection.doc_type,
                domain=options.domain if detection is None else detection.domain,
                target_tokens=config.target_tokens,
                max_tokens=config.max_tokens,
            )
            if detection is None:
                detection = chunked.detection
            blocks = list(chunked.blocks)
            carry = ""
            if following and blocks and len(blocks[-1].text) <= _MAX_CARRY:
                carry = blocks.pop().text
            leaves = make_leaves(
                blocks,
                domain=detection.domain,
                data_type=detection.doc_type.value.upper(),
                source=name,
                id_source=f"{name}:{proj}",
                tags=(*detection.tags, *options.tags, *note.tags),
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
            self.skipped.append((name, "empty"))
