"""Memories in and out of a store: front matter, exports and the original IHMT-MEMORY's store.

Three ways in, one way out:

- **Markdown notes** (Obsidian, basic-memory, any folder of ``.md``): a YAML front matter
  block (``title``, ``tags``, ``date``/``created``, ``project``) is read by
  ``python-frontmatter`` and kept out of the memory's text (:func:`read_front_matter`).
- **Exports** (:func:`export_memories`): ``jsonl`` (one object per memory) or ``markdown``
  (a folder of notes with front matter and an ``ihmt-export.json`` manifest). Both carry
  each memory's id, date, project, domain, type, tags and OUTDATED link, and both import
  back as they were (:func:`read_jsonl`, :func:`read_markdown_export`). A JSONL file of
  another tool imports too: each object's ``content``/``text``/``memory``/``body`` is a
  memory, dated by its ``timestamp``/``date``/``created_at``.
- **A store of the original IHMT-MEMORY** (:func:`read_ihmt_store`): its ``ihmt_memory/``
  folder, whose leaves are ``layer0/<domain>/<id>.txt`` files starting with a
  ``<<<IHMT-META`` JSON header, and whose ``state/facts.json`` holds the fact timeline.
  Leaves keep their ids, dates, domains, tags and corrections; facts become explicit
  facts; a superseded fact flags its leaf OUTDATED by the leaf that superseded it.

Everything read becomes :class:`PortableMemory` records that ``ihmt_mcp._importer``
stores, one leaf each, exactly as read (never split again).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ihmt_mcp._files import LINK_OUT, leads_out, read_regular
from ihmt_mcp._front_matter import FrontMatterTooLargeError, read_front_matter
from ihmt_store import Store, check_date

logger = logging.getLogger(__name__)

__all__ = [
    "EXPORT_FORMATS",
    "MANIFEST",
    "ImportBatch",
    "PortableMemory",
    "export_store",
    "find_ihmt_store",
    "is_jsonl",
    "is_markdown_export",
    "markdown_note",
    "read_ihmt_store",
    "read_jsonl",
    "read_markdown_export",
    "write_jsonl",
    "write_markdown",
]

EXPORT_FORMATS = ("markdown", "jsonl")
MANIFEST = "ihmt-export.json"
"""The file that marks a folder as a Markdown export of IHMT (format, version, count)."""
EXPORT_VERSION = 1
JSONL_SUFFIXES = (".jsonl", ".ndjson")
MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_KEYS = ("content", "text", "memory", "body", "note")
"""Where a JSONL object holds its memory, first found wins."""
DATE_KEYS = ("timestamp", "date", "created_at", "created", "createdAt", "time")
DOC_TYPES = frozenset({"GENERIC", "PERSONAL", "TEMPORAL", "PROCESS", "NARRATIVE", "CODE"})
_HEADER_START = "<<<IHMT-META"
_HEADER_END = re.compile(r"\r?\nIHMT-META>>>\r?\n?")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class PortableMemory:
    """One memory on its way in or out of a store."""

    text: str
    id: str = ""
    """Its id where it came from (kept when it is a valid id, so links survive)."""
    timestamp: str = ""
    """When what it says was true; empty: the importer's default."""
    domain: str = ""
    """Empty: detected from the text."""
    data_type: str = ""
    project: str | None = None
    """None: the importer's project."""
    tags: tuple[str, ...] = ()
    source: str = ""
    title: str = ""
    outdated_by: str = ""
    """Id of the memory that corrected this one."""
    corrected_on: str = ""
    reason: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSONL export object (stable: documented in ``ihmt export --help``)."""
        return {
            "id": self.id,
            "content": self.text,
            "timestamp": self.timestamp,
            "project": self.project or "",
            "domain": self.domain,
            "type": self.data_type,
            "tags": list(self.tags),
            "source": self.source,
            "title": self.title,
            "outdated_by": self.outdated_by or None,
            "corrected_on": self.corrected_on or None,
            "reason": self.reason,
        }


@dataclass(slots=True)
class ImportBatch:
    """What a reader found: the memories, facts to record, and what it could not read."""

    memories: list[PortableMemory] = field(default_factory=list)
    facts: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    """(subject, attribute, value, timestamp, source id) recorded explicitly."""
    links: list[tuple[str, str, str]] = field(default_factory=list)
    """(old id, new id, reason): corrections found outside the memories themselves."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """What was read but not as it was written: front matter kept as text, facts left out."""


# ---------------------------------------------------------------------- small readers
def _timestamp(value: Any) -> str:
    """A canonical timestamp from a YAML/JSON date value, or '' when it is not one, or
    one ``save`` would refuse (:func:`ihmt_store.check_date`: no later than a day ahead)."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return ""
    try:
        if isinstance(value, (int, float)):
            seconds = value / 1000 if value > 10**11 else value  # epoch milliseconds
            return check_date(datetime.fromtimestamp(seconds).astimezone())
        if isinstance(value, (date, datetime)):
            return check_date(value)
        return check_date(str(value).strip())
    except (OverflowError, OSError, ValueError):
        return ""


def _tags(value: Any) -> tuple[str, ...]:
    """Tags from a list or a comma/space separated string, without Obsidian's '#'."""
    if value is None:
        return ()
    items: Iterable[Any]
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value)
    elif isinstance(value, (list, tuple, set)):
        items = value
    else:
        items = [value]
    out = [str(item).strip().lstrip("#").strip() for item in items if item is not None]
    return tuple(dict.fromkeys(t for t in out if t))


def _text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return " ".join(str(value).split())


def _first(data: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if key in data and data[key] not in (None, ""):
            return data[key]
    return None


def _link(value: Any) -> tuple[str, str, str]:
    """(id, date, reason) of an ``outdated_by``: an id, or ``{leaf_id|by|id, date, reason}``."""
    if isinstance(value, str):
        return value.strip(), "", ""
    if isinstance(value, Mapping):
        target = _first(value, ("leaf_id", "by", "id", "new_id", "new"))
        return (
            str(target or "").strip(),
            _timestamp(_first(value, ("date", "corrected_on", "timestamp"))),
            _text(value.get("reason")),
        )
    return "", "", ""


def _exported(
    meta: Mapping[str, Any],
    text: str,
    *,
    timestamp: str,
    data_type: Any,
    project: str | None,
    source: str,
) -> PortableMemory:
    """One memory of an export (a JSONL line, a Markdown note) from its metadata; the
    keyword arguments are what the two formats read differently."""
    target, on, why = _link(meta.get("outdated_by"))
    return PortableMemory(
        text=text,
        id=_text(meta.get("id")),
        timestamp=timestamp,
        domain=_text(meta.get("domain")),
        data_type=_text(data_type).upper(),
        project=project,
        tags=_tags(meta.get("tags")),
        source=_text(meta.get("source")) or source,
        title=_text(meta.get("title")),
        outdated_by=target,
        corrected_on=_timestamp(meta.get("corrected_on")) or on,
        reason=_text(meta.get("reason")) or why,
    )


# ---------------------------------------------------------------------- front matter
@dataclass(frozen=True, slots=True, kw_only=True)
class NoteMeta:
    """What a note's front matter says about the memory."""

    title: str = ""
    tags: tuple[str, ...] = ()
    timestamp: str = ""
    project: str | None = None

    @classmethod
    def of(cls, meta: Mapping[str, Any]) -> NoteMeta:
        project = meta.get("project")
        return cls(
            title=_text(meta.get("title")),
            tags=_tags(meta.get("tags", meta.get("tag"))),
            timestamp=_timestamp(_first(meta, ("date", "created", "created_at", "timestamp"))),
            project=_text(project) if project is not None else None,
        )


# ---------------------------------------------------------------------- JSONL
def is_jsonl(path: Path) -> bool:
    """A ``.jsonl``/``.ndjson`` file: each line one memory object."""
    return path.is_file() and path.suffix.lower() in JSONL_SUFFIXES


def read_jsonl(path: Path, name: str) -> ImportBatch:
    """The memories of a JSONL file: IHMT's export, or any tool's one object per line."""
    batch = ImportBatch()
    bad = 0
    first_bad = 0
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except (ValueError, RecursionError):
                data = None
            text = _first(data, TEXT_KEYS) if isinstance(data, dict) else None
            if not isinstance(text, str) or not text.strip():
                bad += 1
                first_bad = first_bad or number
                continue
            assert isinstance(data, dict)
            project = data.get("project")
            batch.memories.append(
                _exported(
                    data,
                    text,
                    timestamp=_timestamp(_first(data, DATE_KEYS)),
                    data_type=data.get("type") or data.get("data_type"),
                    project=_text(project) if isinstance(project, str) else None,
                    source=f"{name}:{number}",
                )
            )
    if bad:
        batch.skipped.append(
            (f"{name}:{first_bad}", f"{bad} line(s) without a memory text (not a JSON object "
             f"with one of {', '.join(TEXT_KEYS)})")
        )  # fmt: skip
    return batch


def write_jsonl(memories: Iterable[PortableMemory], out: Any) -> int:
    """Write one JSON object per memory to the text stream ``out``; how many."""
    count = 0
    for memory in memories:
        out.write(json.dumps(memory.to_json(), ensure_ascii=False) + "\n")
        count += 1
    return count


# ---------------------------------------------------------------------- Markdown export
def markdown_note(memory: PortableMemory) -> str:
    """One memory as a Markdown note: YAML front matter, then its text byte for byte."""
    from frontmatter.default_handlers import YAMLHandler

    meta: dict[str, Any] = {
        "id": memory.id,
        "date": memory.timestamp,
        "project": memory.project or "",
        "domain": memory.domain,
        "type": memory.data_type,
        "tags": list(memory.tags),
        "source": memory.source,
    }
    if memory.title:
        meta["title"] = memory.title
    if memory.outdated_by:
        meta["outdated_by"] = memory.outdated_by
        meta["corrected_on"] = memory.corrected_on
        if memory.reason:
            meta["reason"] = memory.reason
    head = YAMLHandler().export(meta, sort_keys=False, width=1000)
    return f"---\n{head}\n---\n{memory.text}"


def _note_name(memory: PortableMemory) -> str:
    day = memory.timestamp[:10] or "undated"
    return f"{day}-{_SAFE_NAME.sub('-', memory.id)[:120]}.md"


def write_markdown(memories: Iterable[PortableMemory], folder: Path) -> int:
    """Write one note per memory under ``folder/<project or _global>/``, and the manifest.

    ``folder`` is new, empty, or an earlier export (it holds the manifest), which this one
    replaces: its notes that this export did not write again are removed. Links found in
    an earlier export are replaced, never written through.

    Raises:
        FileExistsError: ``folder`` is a file, or a folder neither empty nor an export
            (nothing is written).
    """
    if folder.exists() and not folder.is_dir():
        raise FileExistsError(f"{folder} is a file; --format markdown writes a folder")
    earlier = is_markdown_export(folder)
    if folder.is_dir() and not earlier and any(folder.iterdir()):
        raise FileExistsError(f"{folder} is not empty; export into a new or empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    written: set[Path] = set()
    count = 0
    for memory in memories:
        where = folder / (_SAFE_NAME.sub("-", memory.project) if memory.project else "_global")
        if where not in written:
            if where.is_symlink():
                where.unlink()
            where.mkdir(exist_ok=True)
            written.add(where)
        note = where / _note_name(memory)
        _write_in_place(note, markdown_note(memory))
        written.add(note)
        count += 1
    if earlier:
        for stale in folder.glob(f"*/*{MARKDOWN_SUFFIXES[0]}"):
            if stale not in written and (stale.is_symlink() or stale.is_file()):
                stale.unlink()
    manifest = {"format": "ihmt-markdown", "version": EXPORT_VERSION, "memories": count}
    _write_in_place(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return count


def _write_in_place(path: Path, text: str) -> None:
    """Write ``path``; a link there is replaced by the file, never written through."""
    if path.is_symlink():
        path.unlink()
    path.write_text(text, encoding="utf-8")


def _files_within(
    root: Path, under: str, suffixes: tuple[str, ...], label: str, batch: ImportBatch
) -> Iterator[tuple[Path, str]]:
    """The files in ``root/under`` (``under``: '' or a subfolder) and below ending in one of
    ``suffixes``, sorted, each with its name for messages (``label/path in root``). Links
    leading out of ``root`` are skipped and said, as an ingest's walk does: what an import
    reads stays in the folder it was given."""
    real = root.resolve()
    for path in sorted((root / under if under else root).rglob("*")):
        if path.suffix.lower() not in suffixes:
            continue
        name = f"{label}/{path.relative_to(root).as_posix()}"
        try:
            if leads_out(path, real):
                batch.skipped.append((name, LINK_OUT))
                continue
            if not path.is_file():
                continue
        except (OSError, RuntimeError):
            continue  # a dangling or looping link: nothing to read
        yield path, name


def is_markdown_export(path: Path) -> bool:
    """A folder written by :func:`write_markdown` (it holds the manifest)."""
    return path.is_dir() and (path / MANIFEST).is_file()


def read_markdown_export(folder: Path) -> ImportBatch:
    """The memories of a Markdown export, each note's front matter giving its metadata."""
    batch = ImportBatch()
    for note, name in _files_within(folder, "", MARKDOWN_SUFFIXES, folder.name, batch):
        try:
            raw = read_regular(note).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            batch.skipped.append((name, f"unreadable ({exc})"))
            continue
        try:
            meta, body, problem = read_front_matter(raw)
        except FrontMatterTooLargeError as exc:
            batch.skipped.append((name, str(exc)))
            continue
        if problem:
            batch.warnings.append(f"{name}: {problem}")
        if not body.strip():
            batch.skipped.append((name, "empty"))
            continue
        project = meta.get("project")
        batch.memories.append(
            _exported(
                meta,
                body,
                timestamp=_timestamp(_first(meta, ("date", "created", "timestamp"))),
                data_type=meta.get("type"),
                project=_text(project) if project is not None else None,
                source=name,
            )
        )
    return batch


# ---------------------------------------------------------------------- IHMT-MEMORY stores
# The names below (``ihmt_memory/``, ``layer0/``, ``root.json``, ``state/``, and
# ``state/facts.json`` for the facts) are the original IHMT-MEMORY's layout: another
# program's format, read as it is, not ours. Our own store shares the folder name and
# the leaf files, so it is read the same way (opening it with ``Store`` would write its
# index); ``Store.exists`` is what recognises it.
_ORIGINAL_FOLDER = "ihmt_memory"
_ORIGINAL_LEAVES = "layer0"
_ORIGINAL_ROOT = "root.json"
_ORIGINAL_STATE = "state"
_ORIGINAL_FACTS = "facts.json"


def find_ihmt_store(path: Path) -> Path | None:
    """The store folder at ``path`` (or its ``ihmt_memory/``): one with a ``layer0/``."""
    for candidate in (path, path / _ORIGINAL_FOLDER):
        if (candidate / _ORIGINAL_LEAVES).is_dir() and (
            (candidate / _ORIGINAL_ROOT).is_file()
            or Store.exists(candidate)
            or (candidate / _ORIGINAL_STATE).is_dir()
        ):
            return candidate
    return None


def _parse_leaf(raw: str) -> tuple[dict[str, Any], str]:
    """(header, text) of a leaf file; raises ValueError when it has no readable header."""
    body = raw.lstrip("\ufeff")
    if not body.startswith(_HEADER_START):
        raise ValueError("it does not start with a <<<IHMT-META header")
    end = _HEADER_END.search(body, len(_HEADER_START))
    if end is None:
        raise ValueError("its <<<IHMT-META header is not closed by IHMT-META>>>")
    try:
        head = json.loads(body[len(_HEADER_START) : end.start()])
    except ValueError as exc:
        raise ValueError(f"its header is not valid JSON ({exc})") from None
    if not isinstance(head, dict):
        raise ValueError("its header is not a JSON object")
    return head, body[end.end() :]


def read_ihmt_store(store: Path, name: str) -> ImportBatch:
    """Every leaf of an IHMT store (the original's or ours), with its facts and corrections."""
    batch = ImportBatch()
    for leaf_file, rel in _files_within(store, _ORIGINAL_LEAVES, (".txt",), name, batch):
        try:
            head, text = _parse_leaf(read_regular(leaf_file).decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            batch.skipped.append((rel, str(exc)))
            continue
        if not text.strip():
            batch.skipped.append((rel, "empty"))
            continue
        extra = head.get("extra") if isinstance(head.get("extra"), dict) else {}
        assert isinstance(extra, dict)
        target, on, why = _link(
            head.get("outdated_by") or extra.get("outdated_by") or extra.get("superseded_by")
        )
        domain = _text(head.get("domain")) or leaf_file.parent.name
        kept = {k: v for k, v in extra.items() if k in ("context", "symbol", "keywords")}
        batch.memories.append(
            PortableMemory(
                text=text,
                id=_text(head.get("leaf_id")) or leaf_file.stem,
                timestamp=_timestamp(head.get("timestamp")),
                domain=domain,
                data_type=_text(head.get("data_type")).upper(),
                project=_text(head.get("project")) if "project" in head else None,
                tags=_tags(head.get("tags")),
                source=_text(head.get("source")) or rel,
                title=_text(extra.get("title")),
                outdated_by=target,
                corrected_on=on,
                reason=why,
                extra=kept,
            )
        )
    facts_file = store / _ORIGINAL_STATE / _ORIGINAL_FACTS
    facts_name = f"{name}/{_ORIGINAL_STATE}/{_ORIGINAL_FACTS}"
    try:
        if leads_out(facts_file, store.resolve()):
            batch.skipped.append((facts_name, LINK_OUT))
            return batch
    except (OSError, RuntimeError):
        return batch  # none, or a dangling link
    if facts_file.is_file():
        _read_facts(facts_file, facts_name, batch)
    return batch


_SOURCE_KEYS = ("source_leaf", "source", "leaf_id", "source_leaf_id", "leaf")


def _read_facts(path: Path, name: str, batch: ImportBatch) -> None:
    """Facts and supersessions from the original's ``state/facts.json``.

    Read tolerantly: any object holding a ``value``, a date and a source leaf is a fact
    (its subject and attribute from its own keys, or from the ``subject::attribute`` key
    it sits under); ``superseded_by`` naming a leaf — or, naming a value, the leaf that
    stated it — flags the fact's leaf OUTDATED by that leaf. A ``corrections`` list of
    ``{old_id, new_id, reason}`` is read as corrections.
    """
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        batch.skipped.append((name, f"not readable as JSON ({exc}); facts are re-read from text"))
        return
    facts: list[dict[str, Any]] = []

    def walk(node: Any, key: str) -> None:
        if isinstance(node, dict):
            source = _first(node, _SOURCE_KEYS)
            if "value" in node and isinstance(source, str):
                facts.append({**node, "_key": key, "_source": source})
                return
            old = _first(node, ("old_id", "old", "old_leaf"))
            new = _first(node, ("new_id", "new", "by", "new_leaf"))
            if isinstance(old, str) and isinstance(new, str):
                batch.links.append((old, new, _text(node.get("reason")) or "imported"))
                return
            for sub_key, value in node.items():
                walk(value, str(sub_key) if "::" in str(sub_key) else key)
        elif isinstance(node, list):
            for value in node:
                walk(value, key)

    walk(data, "")
    by_key_value: dict[tuple[str, str], str] = {}
    for fact in facts:
        subject, attribute = _subject_attribute(fact)
        if subject and attribute:
            by_key_value[(f"{subject}::{attribute}", str(fact["value"]).casefold())] = fact[
                "_source"
            ]
    unreadable = 0
    for fact in facts:
        subject, attribute = _subject_attribute(fact)
        moment = _timestamp(_first(fact, ("timestamp", "valid_from", "date")))
        value = _text(fact.get("value"))
        if not (subject and attribute and moment and value):
            unreadable += 1
            continue
        batch.facts.append((subject, attribute, value, moment, fact["_source"]))
        later = fact.get("superseded_by")
        if isinstance(later, str) and later.strip():
            newer = by_key_value.get((f"{subject}::{attribute}", later.strip().casefold()), later)
            batch.links.append(
                (fact["_source"], newer.strip(), f"{subject} {attribute} changed (imported)")
            )
    if unreadable:
        batch.warnings.append(
            f"{name}: {unreadable} fact(s) without subject, date or value left out"
        )


def _subject_attribute(fact: Mapping[str, Any]) -> tuple[str, str]:
    subject = _text(fact.get("subject"))
    attribute = _text(fact.get("attribute"))
    key = str(fact.get("key") or fact.get("_key") or "")
    if (not subject or not attribute) and "::" in key:
        left, _, right = key.partition("::")
        subject = subject or left.strip()
        attribute = attribute or right.strip()
    return subject, attribute


def export_store(store: Store, project: str | None) -> Iterator[PortableMemory]:
    """What :meth:`Memory.export` returns: every memory of ``store`` (of ``project`` when
    given; '' = the global ones), oldest first."""
    entries = [
        e for e in store.iter_entries("leaf") if project is None or e.project == project.strip()
    ]
    entries.sort(key=lambda e: (e.timestamp, e.id))
    return export_memories(iter(entries), store.read_leaves)


def export_memories(entries: Iterator[Any], read_leaves: Any) -> Iterator[PortableMemory]:
    """The memories of ``entries`` (catalog entries of leaves), read in chunks of 256."""
    chunk: list[Any] = []

    def flush() -> Iterator[PortableMemory]:
        for leaf in read_leaves([e.id for e in chunk]):
            correction = leaf.outdated_by
            yield PortableMemory(
                text=leaf.text,
                id=leaf.leaf_id,
                timestamp=leaf.timestamp,
                domain=leaf.domain,
                data_type=leaf.data_type,
                project=leaf.project,
                tags=tuple(leaf.tags),
                source=leaf.source,
                title=str(leaf.extra.get("title") or ""),
                outdated_by=correction.by if correction else "",
                corrected_on=correction.date if correction else "",
                reason=correction.reason if correction else "",
            )
        chunk.clear()

    for entry in entries:
        chunk.append(entry)
        if len(chunk) >= 256:
            yield from flush()
    yield from flush()
