"""What an item becomes in the derived index: its catalog row and its full-text fields.

:class:`Entry` is one row of the catalog (the ``items`` table); :func:`leaf_row` and
:func:`branch_row` make the row and the four normalised full-text fields (title, keywords,
tags, body) of a leaf or a branch, the same way for a rebuild and for an incremental write.
Row ids derive from item ids (:func:`stable_rowid`), so both agree on them too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import operator
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ihmt_store._records import Branch, Leaf
from ihmt_store._text import estimate_tokens, terms
from ihmt_store._types import ItemKind, Status

__all__ = [
    "COLUMNS",
    "EXCERPT_CHARS",
    "FIELDS",
    "ROWID_MASK",
    "Entry",
    "Fields",
    "branch_row",
    "leaf_row",
    "leaf_title",
    "row_values",
    "stable_rowid",
]

EXCERPT_CHARS = 200


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One catalog row: where an item lives and what it is, without opening its file."""

    id: str
    kind: ItemKind
    layer: int
    """0 for a leaf, 1.. for branches."""
    domain: str
    project: str
    parent_id: str | None
    path: str
    """Path of the item's file relative to the store, with ``/`` separators."""
    timestamp: str
    """A leaf's timestamp; a branch's earliest child timestamp."""
    time_end: str | None
    status: Status
    """``active``, or ``outdated`` once a later memory corrected it."""
    outdated_by: str | None
    outdated_on: str | None
    source: str
    data_type: str
    title: str
    excerpt: str
    """The first characters of the text (leaf) or summary (branch)."""
    tags: tuple[str, ...]
    leaf_count: int
    size: int
    """Bytes of the item's file."""
    tokens: int
    """Estimated tokens of the leaf text or branch summary."""

    @property
    def is_leaf(self) -> bool:
        return self.kind == "leaf"

    @classmethod
    def _from_row(cls, row: Sequence[Any]) -> Entry:
        """The entry of a row selected as ``SELECT {COLUMNS}``."""
        values = dict(zip(FIELDS, row, strict=True))
        tags = values["tags"]
        values["tags"] = () if tags == "[]" else tuple(json.loads(tags))  # most have none
        return cls(**values)


FIELDS = tuple(field.name for field in dataclasses.fields(Entry))
"""The columns of the ``items`` table that an :class:`Entry` holds, in the table's order."""
COLUMNS = ", ".join(FIELDS)
_GETFIELDS = operator.attrgetter(*FIELDS)
_TAGS = FIELDS.index("tags")


def row_values(entry: Entry) -> list[Any]:
    """The values of ``entry`` for the ``items`` table, in its order (tags as JSON)."""
    values = list(_GETFIELDS(entry))
    values[_TAGS] = json.dumps(list(entry.tags), ensure_ascii=False)
    return values


@lru_cache(maxsize=1024)
def _indexed(text: str) -> str:
    """The normalised terms of ``text`` as the full-text table stores them.

    Cached: a short memory's title is its whole text, so it is normalised once.
    """
    return " ".join(terms(text))


# Markdown a line starts with (headings, quotes, bullets, checkboxes, numbers) and the
# emphasis around words: neither says anything in a title.
_LINE_MARKUP = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,3}[.)]\s+)+")
_EMPHASIS = re.compile(r"\*\*|__")
_LETTERS = re.compile(r"[^\W\d_]+")
# The words of a date or time ("Monday, March 11", "lunes 11 de marzo", "9am UTC").
_DATE_TEXT = (
    "mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday friday "
    "saturday sunday jan feb mar apr may jun jul aug sep sept oct nov dec january february "
    "march april june july august september october november december am pm t z utc gmt "
    "lunes martes miércoles miercoles jueves viernes sábado sabado domingo enero febrero "
    "marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre "
    "de del"
)
_DATE_WORDS = frozenset(_DATE_TEXT.split())


def _title_line(line: str) -> str:
    line = line.strip()
    if line.startswith(("```", "~~~")):
        return ""
    return " ".join(_EMPHASIS.sub("", _LINE_MARKUP.sub("", line)).split())


def _says_something(line: str) -> bool:
    """False for a line that is only a date, a time or punctuation ("## 2024-03-11")."""
    return any(w.lower() not in _DATE_WORDS for w in _LETTERS.findall(line))


def leaf_title(leaf: Leaf) -> str:
    """A one-line title for a leaf: ``extra.title`` when given, else its first line that
    says something, without Markdown markup (a dated heading such as ``## 2024-03-11``
    gives way to the line below it: the date is the leaf's timestamp already)."""
    given = leaf.extra.get("title")
    if isinstance(given, str) and given.strip():
        return given.strip()[:120]
    first = ""
    for raw in leaf.text.splitlines():
        line = _title_line(raw)
        if not line:
            continue
        if _says_something(line):
            return line[:120]
        first = first or line
    return first[:120]


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"


def _tag_words(tags: Iterable[str]) -> str:
    return " ".join(t.replace(":", " ") for t in tags)


Fields = tuple[str, str, str, str]
"""The four full-text fields of an item: title, keywords, tags, body (normalised terms)."""


def leaf_row(leaf: Leaf, path: str, size: int) -> tuple[Entry, Fields]:
    """The catalog row and the four full-text fields of a leaf."""
    keywords = " ".join(str(k) for k in leaf.extra.get("keywords", ()) or ())
    title = leaf_title(leaf)
    row = Entry(
        id=leaf.leaf_id,
        kind="leaf",
        layer=0,
        domain=leaf.domain,
        project=leaf.project,
        parent_id=leaf.parent_id,
        path=path,
        timestamp=leaf.timestamp,
        time_end=None,
        status="outdated" if leaf.outdated_by else "active",
        outdated_by=leaf.outdated_by.by if leaf.outdated_by else None,
        outdated_on=leaf.outdated_by.date if leaf.outdated_by else None,
        source=leaf.source,
        data_type=leaf.data_type,
        title=title,
        excerpt=_excerpt(leaf.text),
        tags=leaf.tags,
        leaf_count=1,
        size=size,
        tokens=estimate_tokens(leaf.text),
    )
    fields = (
        _indexed(title),
        _indexed(keywords + " " + leaf.domain.replace(".", " ")),
        _indexed(_tag_words(leaf.tags)),
        _indexed(leaf.text),
    )
    return row, fields


def branch_row(branch: Branch, path: str, size: int) -> tuple[Entry, Fields]:
    """The catalog row and the four full-text fields of a branch."""
    row = Entry(
        id=branch.node_id,
        kind="branch",
        layer=branch.layer,
        domain=branch.domain,
        project=branch.project,
        parent_id=branch.parent_id,
        path=path,
        timestamp=branch.time_start or branch.created,
        time_end=branch.time_end,
        status="active",
        outdated_by=None,
        outdated_on=None,
        source="",
        data_type="BRANCH",
        title=branch.title,
        excerpt=_excerpt(branch.summary),
        tags=(),
        leaf_count=branch.leaf_count,
        size=size,
        tokens=estimate_tokens(branch.summary),
    )
    fields = (
        _indexed(branch.title),
        _indexed(" ".join(branch.keywords)),
        _indexed(branch.domain.replace(".", " ")),
        _indexed(branch.summary),
    )
    return row, fields


ROWID_MASK = (1 << 63) - 1


def stable_rowid(item_id: str) -> int:
    """A row id that depends only on the item id: rebuilds and incremental writes agree,
    so ties in ranking break the same way whatever the history of the store."""
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], "big") & ROWID_MASK) or 1
