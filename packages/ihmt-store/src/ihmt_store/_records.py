"""The store's records: what a leaf, a branch, the trunk and the config hold.

Records are frozen; collections are tuples; each record serialises itself with
explicit ``to_json``/``from_json`` so the on-disk format is written here and nowhere else.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any, cast

from ihmt_store._types import CodeChunkMode, ItemKind, SummarizerBackend

__all__ = [
    "FORMAT_VERSION",
    "FUTURE_SLACK",
    "Branch",
    "ChildRef",
    "Correction",
    "Leaf",
    "Root",
    "Span",
    "StoreConfig",
    "check_date",
    "latest_date",
    "leaf_id_for",
    "normalize_timestamp",
    "now_timestamp",
    "safe_domain",
]

FORMAT_VERSION = 2
"""The on-disk format this code writes. A store with a larger number is refused; a
smaller one is migrated when opened (``FORMAT.md``)."""

_ANNOTATIONS = frozenset({"parent_id", "outdated_by", "extra"})
"""Leaf fields that annotate a leaf without touching what it says."""

_DOMAIN_OK = re.compile(r"[^a-z0-9._-]+")
_ID_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


@lru_cache(maxsize=4096)
def safe_domain(domain: str) -> str:
    """Return ``domain`` as a folder-safe dotted name: lower case, ``[a-z0-9._-]``.

    Raises:
        ValueError: nothing usable is left (an empty or all-punctuation domain).
    """
    cleaned = _DOMAIN_OK.sub("-", domain.strip().lower()).strip(".-")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    if not cleaned:
        raise ValueError(f"invalid domain {domain!r}: use letters, digits, '.', '-' or '_'")
    return cleaned[:80]


def check_id(value: str, what: str = "id") -> str:
    """Validate an id used as a file name; return it unchanged."""
    if not isinstance(value, str) or not _ID_OK.match(value):
        raise ValueError(f"invalid {what} {value!r}")
    return value


def now_timestamp() -> str:
    """The current UTC time in the store's canonical form, ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.now(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


FUTURE_SLACK = timedelta(days=1)
"""A memory may be dated up to a day ahead (time zones); a later date is refused: a
memory dated 9999-12-31 would outdate every real one after it forever."""


def latest_date() -> str:
    """The latest timestamp a memory may carry now (:data:`FUTURE_SLACK` ahead)."""
    return _canonical(datetime.now(timezone.utc) + FUTURE_SLACK)


def check_date(value: str | date | datetime) -> str:
    """``value`` as a canonical timestamp, no later than :func:`latest_date`: the one
    rule for a memory's date, whether it comes from ``save``, a file's front matter, an
    import, or a leaf file written by hand or pulled from another machine.

    Raises:
        ValueError: not an ISO 8601 date, or one in the future (the message says so).
    """
    when = normalize_timestamp(value)
    if when > latest_date():
        raise ValueError(
            f"the date {when[:10]} is in the future: date a memory when what it says became "
            "true (today or earlier)"
        )
    return when


def normalize_timestamp(value: str | date | datetime) -> str:
    """Return ``value`` as the canonical UTC timestamp ``YYYY-MM-DDTHH:MM:SSZ``.

    A bare date means midnight UTC; a naive datetime is taken as UTC.

    Raises:
        ValueError: ``value`` is not an ISO 8601 date or datetime.
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    else:
        return _normalize_text(value)
    return _canonical(moment)


@lru_cache(maxsize=8192)
def _normalize_text(value: str) -> str:
    # Cached: a bulk ingest repeats the same few timestamps thousands of times.
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"invalid timestamp {value!r}: expected ISO 8601") from None
    return _canonical(moment)


def _canonical(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        utc = moment.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(f"invalid timestamp {moment.isoformat()!r}: out of range") from None
    # Four-digit years whatever the platform's strftime does (year 1 is "0001"), so the
    # text sorts as the moments do.
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}"
        f"T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"
    )


def leaf_id_for(*, domain: str, source: str, position: int, text: str) -> str:
    """Derive a leaf id from (domain, source, position, content).

    The same four always give the same id, so re-ingesting an unchanged document
    rewrites the same leaves instead of duplicating them.
    """
    dom = safe_domain(domain)
    digest = hashlib.sha256(
        "\x1f".join((dom, source, str(position), text)).encode("utf-8", "surrogatepass")
    ).hexdigest()
    return f"L-{dom}-{position:04d}-{digest[:10]}"


def checksum_of(text: str) -> str:
    """The checksum a leaf header carries for its text."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """Where a leaf's text sits in its source document."""

    start_line: int
    """First line, 1-based."""
    end_line: int
    """Last line, inclusive."""

    def to_json(self) -> dict[str, int]:
        return {"start_line": self.start_line, "end_line": self.end_line}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Span:
        return cls(start_line=int(data["start_line"]), end_line=int(data["end_line"]))


@dataclass(frozen=True, slots=True, kw_only=True)
class Correction:
    """The annotation a superseded leaf carries: which memory corrected it, and when."""

    by: str
    """Id of the leaf that holds the current version."""
    date: str
    """Canonical timestamp of the correction."""
    reason: str = ""
    """Why, in a few words (may be empty)."""

    def to_json(self) -> dict[str, str]:
        out = {"leaf_id": self.by, "date": self.date}
        if self.reason:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Correction:
        return cls(
            by=str(data["leaf_id"]),
            date=normalize_timestamp(str(data["date"])),
            reason=str(data.get("reason", "")),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Leaf:
    """One memory: a self-describing header and the text exactly as given."""

    leaf_id: str
    """Stable id, ``L-<domain>-<position>-<hash>``; also the file name."""
    text: str
    """The raw text, byte for byte as it was saved."""
    timestamp: str
    """When what the text says was true (canonical UTC ``YYYY-MM-DDTHH:MM:SSZ``)."""
    domain: str
    """Dotted domain, e.g. ``software.python``; also the folder under ``layer0/``."""
    data_type: str = "GENERIC"
    """Document type from detection: CODE, NARRATIVE, TEMPORAL, PROCESS, PERSONAL, GENERIC."""
    source: str = ""
    """Where the text came from: a relative path, ``agent``, ``stdin``…"""
    tags: tuple[str, ...] = ()
    """Free tags such as ``lang:java`` or ``kind:decision``."""
    project: str = ""
    """The project the memory belongs to; empty means global."""
    parent_id: str | None = None
    """The layer-1 branch that summarises this leaf, once consolidated. Filled from the
    catalog when read; never written to the leaf's file (format 2)."""
    span: Span | None = None
    """Line range in ``source``, when the leaf is a piece of a document."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Anything else a producer wants to keep (JSON values only)."""
    outdated_by: Correction | None = None
    """Set when a later memory corrected this one; the leaf stays, flagged OUTDATED.
    Filled from the fold of the leaf's notes when read; never written to its file
    (format 2: a correction is a note)."""

    def __post_init__(self) -> None:
        check_id(self.leaf_id, "leaf id")
        if not isinstance(self.text, str):
            raise TypeError("leaf text must be str")
        try:
            self.text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("leaf text must be valid Unicode (no lone surrogates)") from None
        object.__setattr__(self, "timestamp", normalize_timestamp(self.timestamp))
        object.__setattr__(self, "domain", safe_domain(self.domain))
        object.__setattr__(self, "tags", tuple(str(t) for t in self.tags))
        if self.parent_id is not None:
            check_id(self.parent_id, "parent id")
        object.__setattr__(self, "extra", dict(self.extra))

    @property
    def checksum(self) -> str:
        """``sha256:<hex>`` of the text."""
        return checksum_of(self.text)

    @property
    def is_outdated(self) -> bool:
        """True when a later memory corrected this one."""
        return self.outdated_by is not None

    @property
    def restored_from(self) -> tuple[str, ...]:
        """The memories whose correction of this one was undone by an explicit restore
        (and not made again since): this memory stays current against them, so search
        never infers they outdate it. Filled from the fold of the leaf's notes."""
        kept = self.extra.get("restored_from")
        return tuple(str(x) for x in kept) if isinstance(kept, list) else ()

    def header(self) -> dict[str, Any]:
        """The JSON header as written to disk: what the leaf says and where it came from,
        never its annotations (``parent_id``, ``outdated_by``), which change and live
        in the catalog and in notes."""
        head: dict[str, Any] = {
            "leaf_id": self.leaf_id,
            "timestamp": self.timestamp,
            "data_type": self.data_type,
            "domain": self.domain,
            "source": self.source,
            "tags": list(self.tags),
            "project": self.project,
            "span": self.span.to_json() if self.span else None,
            "checksum": self.checksum,
            "extra": dict(self.extra),
        }
        return head

    @classmethod
    def from_header(cls, head: Mapping[str, Any], text: str) -> Leaf:
        """Rebuild a leaf from a parsed header and its text (raises KeyError/ValueError).

        A format-1 header's ``parent_id`` and ``outdated_by`` are read into the record
        (the migration turns the correction into a note)."""
        span = head.get("span")
        outdated = head.get("outdated_by")
        extra = head.get("extra") or {}
        if not isinstance(extra, dict):
            raise ValueError("'extra' must be an object")
        tags = head.get("tags") or []
        if not isinstance(tags, list):
            raise ValueError("'tags' must be a list")
        return cls(
            leaf_id=str(head["leaf_id"]),
            text=text,
            timestamp=str(head["timestamp"]),
            domain=str(head["domain"]),
            data_type=str(head.get("data_type") or "GENERIC"),
            source=str(head.get("source") or ""),
            tags=tuple(str(t) for t in tags),
            project=str(head.get("project") or ""),
            parent_id=head.get("parent_id") or None,
            span=Span.from_json(span) if span else None,
            extra=extra,
            outdated_by=Correction.from_json(outdated) if outdated else None,
        )

    def evolve(self, **changes: Any) -> Leaf:
        """A copy with ``changes`` applied (the record itself never changes)."""
        if changes.keys() <= _ANNOTATIONS:
            # Only the header's annotations change: the rest is already validated.
            parent = changes.get("parent_id")
            if parent is not None:
                check_id(parent, "parent id")
            if "extra" in changes:
                changes["extra"] = dict(changes["extra"])
            new = object.__new__(Leaf)
            for key in Leaf.__slots__:
                object.__setattr__(new, key, changes.get(key, getattr(self, key)))
            return new
        return replace(self, **changes)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildRef:
    """What a branch embeds about one child: enough to browse without opening it."""

    id: str
    kind: ItemKind
    title: str
    excerpt: str
    keywords: tuple[str, ...] = ()
    time_start: str | None = None
    """Earliest timestamp under this child."""
    time_end: str | None = None
    """Latest timestamp under this child."""
    leaf_count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "excerpt": self.excerpt,
            "keywords": list(self.keywords),
            "time_span": [self.time_start, self.time_end],
            "leaf_count": self.leaf_count,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChildRef:
        span = data.get("time_span") or [None, None]
        return cls(
            id=str(data["id"]),
            kind=cast(ItemKind, str(data["kind"])),
            title=str(data.get("title", "")),
            excerpt=str(data.get("excerpt", "")),
            keywords=tuple(str(k) for k in data.get("keywords") or ()),
            time_start=span[0],
            time_end=span[1],
            leaf_count=int(data.get("leaf_count", 1)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Branch:
    """A summary of children one layer down: leaves (layer 1) or branches (layer 2+)."""

    node_id: str
    layer: int
    """1 for a branch over leaves, 2 and up for branches over branches."""
    domain: str
    title: str
    summary: str
    """Representative sentences; what the branch says about everything below it."""
    keywords: tuple[str, ...] = ()
    children: tuple[ChildRef, ...] = ()
    parent_id: str | None = None
    time_start: str | None = None
    time_end: str | None = None
    leaf_count: int = 0
    project: str = ""
    """The project all children share, or empty."""
    created: str = ""
    """When the branch was written (canonical timestamp)."""
    backend: str = "heuristic"
    """The summarizer that wrote it."""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_id(self.node_id, "branch id")
        if self.layer < 1:
            raise ValueError("a branch lives on layer 1 or above")
        object.__setattr__(self, "domain", safe_domain(self.domain))
        object.__setattr__(self, "children", tuple(self.children))
        object.__setattr__(self, "keywords", tuple(self.keywords))
        object.__setattr__(self, "extra", dict(self.extra))
        if not self.created:
            object.__setattr__(self, "created", now_timestamp())

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "layer": self.layer,
            "domain": self.domain,
            "title": self.title,
            "summary": self.summary,
            "keywords": list(self.keywords),
            "parent_id": self.parent_id,
            "time_span": [self.time_start, self.time_end],
            "leaf_count": self.leaf_count,
            "project": self.project,
            "created": self.created,
            "backend": self.backend,
            "extra": dict(self.extra),
            "children": [c.to_json() for c in self.children],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Branch:
        span = data.get("time_span") or [None, None]
        return cls(
            node_id=str(data["node_id"]),
            layer=int(data["layer"]),
            domain=str(data["domain"]),
            title=str(data.get("title", "")),
            summary=str(data.get("summary", "")),
            keywords=tuple(str(k) for k in data.get("keywords") or ()),
            children=tuple(ChildRef.from_json(c) for c in data.get("children") or ()),
            parent_id=data.get("parent_id") or None,
            time_start=span[0],
            time_end=span[1],
            leaf_count=int(data.get("leaf_count", 0)),
            project=str(data.get("project") or ""),
            created=str(data.get("created") or ""),
            backend=str(data.get("backend") or "heuristic"),
            extra=dict(data.get("extra") or {}),
        )

    def evolve(self, **changes: Any) -> Branch:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)


@dataclass(frozen=True, slots=True, kw_only=True)
class DomainTrunk:
    """The trunk's view of one domain."""

    domain: str
    top: tuple[str, ...]
    """Ids of this domain's items that have no parent (top branches and loose leaves)."""
    leaves: int
    branches: int
    depth: int
    """Highest layer reached by a branch in this domain (0: leaves only)."""
    keywords: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "top": list(self.top),
            "leaves": self.leaves,
            "branches": self.branches,
            "depth": self.depth,
            "keywords": list(self.keywords),
        }

    @classmethod
    def from_json(cls, domain: str, data: Mapping[str, Any]) -> DomainTrunk:
        return cls(
            domain=domain,
            top=tuple(str(x) for x in data.get("top") or ()),
            leaves=int(data.get("leaves", 0)),
            branches=int(data.get("branches", 0)),
            depth=int(data.get("depth", 0)),
            keywords=tuple(str(k) for k in data.get("keywords") or ()),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Root:
    """``root.json``, the trunk: every domain with the items nothing else points to."""

    domains: tuple[DomainTrunk, ...] = ()
    generation: int = 0
    """Index generation the trunk was written at (grows with every committed change)."""
    updated: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "updated": self.updated,
            "domains": {d.domain: d.to_json() for d in self.domains},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Root:
        domains = data.get("domains") or {}
        return cls(
            domains=tuple(DomainTrunk.from_json(k, v) for k, v in sorted(domains.items())),
            generation=int(data.get("generation", 0)),
            updated=str(data.get("updated", "")),
        )

    @property
    def top_ids(self) -> tuple[str, ...]:
        """Every id the trunk references directly."""
        return tuple(i for d in self.domains for i in d.top)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreConfig:
    """``ihmt.config.json``: the store's knobs and its format version."""

    format_version: int = FORMAT_VERSION
    branch_factor: int = 8
    """Children per branch: when this many items of a domain have no parent, they are grouped."""
    target_tokens: int = 400
    """Size chunkers aim for when packing small blocks into one leaf."""
    max_tokens: int = 3000
    """A single block above this is stored whole and flagged oversized."""
    compact_tokens: int = 900
    """Budget of the compact answer handed to an agent."""
    beam_width: int = 3
    confidence_threshold: float = 0.45
    ambiguity_margin: float = 0.18
    max_clue_rounds: int = 3
    summarizer_backend: SummarizerBackend = "heuristic"
    summarizer_model: str = "claude-sonnet-4-5"
    code_chunk_mode: CodeChunkMode = "pack"
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Keys this version does not know, kept so an older tool never drops them."""

    def __post_init__(self) -> None:
        if self.branch_factor < 2:
            raise ValueError("branch_factor must be at least 2")
        if self.target_tokens < 1 or self.max_tokens < self.target_tokens:
            raise ValueError("need 1 <= target_tokens <= max_tokens")
        if self.compact_tokens < 100:
            raise ValueError("compact_tokens must be at least 100")
        object.__setattr__(self, "extra", dict(self.extra))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        for name in _CONFIG_FIELDS:
            out[name] = getattr(self, name)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StoreConfig:
        """Parse a config mapping (raises TypeError/ValueError on a bad value)."""
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key in _CONFIG_TYPES:
                want = _CONFIG_TYPES[key]
                if want is float and isinstance(value, int) and not isinstance(value, bool):
                    value = float(value)
                if not isinstance(value, want) or isinstance(value, bool):
                    raise TypeError(f"{key} must be {want.__name__}, not {value!r}")
                known[key] = value
            else:
                extra[key] = value
        return cls(**known, extra=extra)


_CONFIG_TYPES: dict[str, type] = {
    "format_version": int,
    "branch_factor": int,
    "target_tokens": int,
    "max_tokens": int,
    "compact_tokens": int,
    "beam_width": int,
    "confidence_threshold": float,
    "ambiguity_margin": float,
    "max_clue_rounds": int,
    "summarizer_backend": str,
    "summarizer_model": str,
    "code_chunk_mode": str,
}
_CONFIG_FIELDS = tuple(_CONFIG_TYPES)
