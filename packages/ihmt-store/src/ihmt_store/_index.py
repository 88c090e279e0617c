"""The derived index: one SQLite file holding the catalog and two FTS5 full-text tables.

It is a cache of the leaves and branch files, never the source of truth: ``rebuild``
recreates it from them and incremental maintenance must produce the same rows.
WAL mode lets many processes read while the lock holder writes.

Leaves and branches have a full-text table each, and every ranking statistic (the number
of documents, each term's document frequency, the average length) is the leaves' alone.
A branch summary repeats its children's words, and each machine groups leaves into
branches in the order it received them: counting the summaries would make the same
question rank differently on two machines that hold the same memories (issue #18).
Branches are ranked against the leaves' statistics.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import operator
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ihmt_store._bm25 import IDF_FLOOR as _IDF_FLOOR
from ihmt_store._bm25 import K1 as _K1
from ihmt_store._bm25 import B as _B
from ihmt_store._bm25 import idf
from ihmt_store._records import Branch, Leaf
from ihmt_store._text import estimate_tokens, terms
from ihmt_store._types import ItemKind, Status

logger = logging.getLogger(__name__)

__all__ = [
    "SCHEMA_VERSION",
    "Candidate",
    "Entry",
    "FieldWeights",
    "Index",
    "branch_row",
    "leaf_row",
]

SCHEMA_VERSION = 10
"""Bumped whenever the index layout changes; a mismatch triggers a rebuild."""

EXCERPT_CHARS = 200

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    layer INTEGER NOT NULL,
    domain TEXT NOT NULL,
    project TEXT NOT NULL,
    parent_id TEXT,
    path TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    time_end TEXT,
    status TEXT NOT NULL,
    outdated_by TEXT,
    outdated_on TEXT,
    source TEXT NOT NULL,
    data_type TEXT NOT NULL,
    title TEXT NOT NULL,
    excerpt TEXT NOT NULL,
    tags TEXT NOT NULL,
    leaf_count INTEGER NOT NULL,
    size INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    indexed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS items_parent ON items(parent_id);
CREATE INDEX IF NOT EXISTS items_loose ON items(layer, domain, timestamp) WHERE parent_id IS NULL;
CREATE INDEX IF NOT EXISTS items_domain_layer ON items(domain, layer);
CREATE TABLE IF NOT EXISTS domains(
    domain TEXT PRIMARY KEY, leaves INTEGER NOT NULL, branches INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS items_corrector ON items(outdated_by) WHERE outdated_by IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, keywords, tags, body, tokenize = 'unicode61 remove_diacritics 0'
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_branches USING fts5(
    title, keywords, tags, body, tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS vocab(term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS members(branch_id TEXT NOT NULL, child_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS members_child ON members(child_id);
CREATE INDEX IF NOT EXISTS members_branch ON members(branch_id);
CREATE TABLE IF NOT EXISTS folded(
    leaf_id TEXT PRIMARY KEY, reason TEXT NOT NULL, extra TEXT NOT NULL
) WITHOUT ROWID;
"""


_CHUNK = 500
"""Values per ``IN (...)`` list, well under SQLite's limit on bound parameters."""

_TABLES: dict[ItemKind, str] = {"leaf": "fts", "branch": "fts_branches"}
"""The full-text table of each kind of item."""
_TOKENS: dict[ItemKind, str] = {"leaf": "indexed_tokens", "branch": "branch_tokens"}
"""The ``meta`` key counting the indexed terms of each kind (average lengths)."""


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
        """The entry of a row selected as ``SELECT {_COLUMNS}``."""
        values = dict(zip(_FIELDS, row, strict=True))
        values["tags"] = tuple(json.loads(values["tags"]))
        return cls(**values)


_FIELDS = tuple(field.name for field in dataclasses.fields(Entry))
"""The columns of the ``items`` table that an :class:`Entry` holds, in the table's order."""
_COLUMNS = ", ".join(_FIELDS)
_GET_FIELDS = operator.attrgetter(*_FIELDS)
_TAGS = _FIELDS.index("tags")


def _values(entry: Entry) -> list[Any]:
    """The values of ``entry`` for the ``items`` table, in its order (tags as JSON)."""
    values = list(_GET_FIELDS(entry))
    values[_TAGS] = json.dumps(list(entry.tags), ensure_ascii=False)
    return values


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldWeights:
    """BM25 weight of each indexed field."""

    title: float = 3.0
    keywords: float = 2.0
    tags: float = 1.5
    text: float = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A full-text match: the catalog entry and its BM25 score (higher is better)."""

    entry: Entry
    score: float
    matched: tuple[str, ...]
    """The query terms this item contains."""


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


class Index:
    """A connection to ``state/index.sqlite3``; every method is one short statement."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        if read_only:
            self.conn = _connect_read_only(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            # A deleted or replaced row is overwritten with zeros, not left in a free
            # block: a forgotten memory's words must not stay readable in the file.
            self.conn.execute("PRAGMA secure_delete=ON")
        self.conn.execute("PRAGMA foreign_keys=OFF")
        self._in_tx = False
        self._token_delta: Counter[ItemKind] = Counter()
        self._vocab_delta: Counter[str] = Counter()
        self._tx_key = -1
        self._cache_key = -1
        self._count_key = -1
        self._df_cache: dict[str, int] = {}
        self._count_cache: int | None = None
        self._docs_cache: tuple[int, int] | None = None

    def close(self) -> None:
        self.conn.close()

    def _rows_in(self, sql: str, values: Sequence[Any]) -> Iterator[Any]:
        """Run ``sql`` for every 500 of ``values``, its ``{marks}`` replaced by as many
        placeholders; yield the rows of all the runs."""
        for start in range(0, len(values), _CHUNK):
            part = list(values[start : start + _CHUNK])
            marks = ", ".join("?" * len(part))
            yield from self.conn.execute(sql.replace("{marks}", marks), part)

    # ---------------------------------------------------------------- schema
    def create_schema(self, *, building: bool = False) -> None:
        """Create the tables if missing and stamp the schema version.

        ``building``: stamp 0 instead, for a file about to be filled by a rebuild, which
        stamps the version in the same transaction as the rows (:meth:`stamp_schema`). A
        rebuild killed half-way leaves 0, which no reader accepts, so the next open
        builds the file again instead of trusting an empty catalog.
        """
        self.conn.executescript(_SCHEMA)
        self.conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?), ('generation', '0'), "
            "('indexed_tokens', '0'), ('branch_tokens', '0')",
            ("0" if building else str(SCHEMA_VERSION),),
        )

    def stamp_schema(self) -> None:
        """Stamp the schema version (inside the caller's transaction)."""
        self.conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))

    def is_sound(self) -> bool:
        """``PRAGMA quick_check``: every page and record is well formed."""
        try:
            rows = self.conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError:
            return False
        return rows == [("ok",)]

    def schema_version(self) -> int | None:
        """The schema stamped in the file, or None when the file is empty or foreign."""
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.DatabaseError:
            return None
        return int(row[0]) if row else None

    # ---------------------------------------------------------------- transactions
    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        self._in_tx = True
        # The committed statistics cannot change under this transaction: keep their cache.
        self._tx_key = self.generation()

    def commit(self, *, changed: bool = True) -> None:
        """Commit; ``generation`` grows only when something was written."""
        self._flush_tokens()
        self._flush_vocab()
        if changed:
            self.conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
            )
        self.conn.execute("COMMIT")
        self._in_tx = False

    def rollback(self) -> None:
        """Abandon the open transaction; never raises (the disk may be what failed)."""
        self._token_delta.clear()
        self._vocab_delta.clear()
        if self._in_tx:
            self._in_tx = False
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                logger.warning("rollback of %s failed: %s", self.path, exc)

    @property
    def in_transaction(self) -> bool:
        return self._in_tx

    def generation(self) -> int:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    # ---------------------------------------------------------------- writes
    def upsert(self, row: Entry, fields: Fields, members: Sequence[str] = ()) -> None:
        """Insert or replace one item, its full-text fields and, for a branch, its children
        as the branch file lists them."""
        if row.kind == "branch":
            self.conn.execute("DELETE FROM members WHERE branch_id = ?", (row.id,))
            self.conn.executemany(
                "INSERT INTO members(branch_id, child_id) VALUES (?, ?)",
                [(row.id, child) for child in members],
            )
        cur = self.conn.execute("SELECT rowid, indexed FROM items WHERE id = ?", (row.id,))
        found = cur.fetchone()
        if found is None:
            self.insert_new([(row, fields)])
            return
        rowid, was_indexed = found
        indexed = sum(len(f.split()) for f in fields)
        table = _TABLES[row.kind]
        if row.kind == "leaf":
            self._vocab_delta.update(set(" ".join(fields).split()))
        self._add_tokens(row.kind, indexed - was_indexed)
        self._forget_terms(rowid, row.kind)
        self.conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        self.conn.execute(
            f"UPDATE items SET ({_COLUMNS}, indexed) = ({', '.join('?' * (len(_FIELDS) + 1))}) "
            "WHERE rowid = ?",
            (*_values(row), indexed, rowid),
        )
        self.conn.execute(
            f"INSERT INTO {table}(rowid, title, keywords, tags, body) VALUES (?, ?, ?, ?, ?)",
            (rowid, *fields),
        )

    def insert_new(self, items: Sequence[tuple[Entry, Fields]]) -> None:
        """Insert items the catalog does not hold yet, in a handful of statements for all
        of them (a bulk ingest's leaves; :meth:`upsert` of one new item comes here too).

        Row ids derive from item ids; a 63-bit collision takes the next free one.
        """
        if not items:
            return
        wanted = [_stable_rowid(row.id) for row, _ in items]
        taken = {
            r[0] for r in self._rows_in("SELECT rowid FROM items WHERE rowid IN ({marks})", wanted)
        }
        rowids = []
        for rowid in wanted:
            while rowid in taken:
                rowid = (rowid + 1) & _ROWID_MASK
                if self.conn.execute("SELECT 1 FROM items WHERE rowid = ?", (rowid,)).fetchone():
                    taken.add(rowid)
            taken.add(rowid)
            rowids.append(rowid)
        catalog = []
        texts: dict[ItemKind, list[tuple[Any, ...]]] = {"leaf": [], "branch": []}
        per_domain: dict[tuple[str, ItemKind], int] = {}
        vocab = self._vocab_delta
        for rowid, (row, fields) in zip(rowids, items, strict=True):
            indexed = sum(len(f.split()) for f in fields)
            self._add_tokens(row.kind, indexed)
            catalog.append((rowid, *_values(row), indexed))
            texts[row.kind].append((rowid, *fields))
            if row.kind == "leaf":
                vocab.update(set(" ".join(fields).split()))
            key = (row.domain, row.kind)
            per_domain[key] = per_domain.get(key, 0) + 1
        marks = ", ".join("?" * (len(_FIELDS) + 2))
        self.conn.executemany(
            f"INSERT INTO items(rowid, {_COLUMNS}, indexed) VALUES ({marks})", catalog
        )
        for kind, rows in texts.items():
            if rows:
                self.conn.executemany(
                    f"INSERT INTO {_TABLES[kind]}(rowid, title, keywords, tags, body) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
        for (domain, kind), count in per_domain.items():
            self._count_domain(domain, kind, count)

    def _count_domain(self, domain: str, kind: ItemKind, delta: int) -> None:
        leaves, branches = (delta, 0) if kind == "leaf" else (0, delta)
        self.conn.execute(
            "INSERT INTO domains(domain, leaves, branches) VALUES (?, ?, ?) "
            "ON CONFLICT(domain) DO UPDATE SET leaves = leaves + excluded.leaves, "
            "branches = branches + excluded.branches",
            (domain, leaves, branches),
        )

    def domain_counts(self) -> list[tuple[str, int, int, int]]:
        """(domain, leaves, branches, depth) per domain, without scanning the catalog."""
        out = []
        for domain, leaves, branches in self.conn.execute(
            "SELECT domain, leaves, branches FROM domains WHERE leaves + branches > 0 "
            "ORDER BY domain"
        ).fetchall():
            depth = self.conn.execute(
                "SELECT MAX(layer) FROM items WHERE domain = ?", (domain,)
            ).fetchone()[0]
            out.append((domain, int(leaves), int(branches), int(depth or 0)))
        return out

    def set_parent(self, item_ids: Sequence[str], parent_id: str | None) -> None:
        """Change only the items' parent: their indexed text is unchanged."""
        self.conn.executemany(
            "UPDATE items SET parent_id = ? WHERE id = ?", [(parent_id, i) for i in item_ids]
        )

    def set_status(self, leaf_id: str, outdated_by: str | None, outdated_on: str | None) -> None:
        """Change only a leaf's OUTDATED flag (the fold of its notes decides it)."""
        self.conn.execute(
            "UPDATE items SET status = ?, outdated_by = ?, outdated_on = ? WHERE id = ?",
            ("outdated" if outdated_by else "active", outdated_by, outdated_on, leaf_id),
        )

    def set_folded(self, leaf_id: str, reason: str, extra: dict[str, Any]) -> None:
        """Keep what the fold of a leaf's notes gives beyond the catalog row: the reason
        of its correction and the ``extra`` keys notes added (none: no row)."""
        if not reason and not extra:
            self.conn.execute("DELETE FROM folded WHERE leaf_id = ?", (leaf_id,))
            return
        self.conn.execute(
            "INSERT INTO folded(leaf_id, reason, extra) VALUES (?, ?, ?) "
            "ON CONFLICT(leaf_id) DO UPDATE SET reason = excluded.reason, extra = excluded.extra",
            (leaf_id, reason, json.dumps(extra, ensure_ascii=False, sort_keys=True)),
        )

    def folded_of(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """``(reason, extra)`` of each leaf of ``ids`` whose notes give either."""
        out: dict[str, tuple[str, dict[str, Any]]] = {}
        sql = "SELECT leaf_id, reason, extra FROM folded WHERE leaf_id IN ({marks})"
        for leaf_id, reason, extra in self._rows_in(sql, ids):
            out[leaf_id] = (reason, json.loads(extra))
        return out

    def all_folded(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """:meth:`folded_of` for every leaf (one row per leaf whose notes give either)."""
        rows = self.conn.execute("SELECT leaf_id, reason, extra FROM folded")
        return {leaf_id: (reason, json.loads(extra)) for leaf_id, reason, extra in rows}

    def listing_branch(self, child_id: str) -> str | None:
        """The branch whose file lists ``child_id`` among its children (the lowest layer,
        then the smallest id, when an interrupted consolidation left two), or None."""
        row = self.conn.execute(
            "SELECT m.branch_id FROM members m JOIN items b ON b.id = m.branch_id "
            "WHERE m.child_id = ? ORDER BY b.layer, m.branch_id LIMIT 1",
            (child_id,),
        ).fetchone()
        return str(row[0]) if row else None

    def adopt_listed(self, branch_id: str, child_ids: Sequence[str]) -> None:
        """Give the loose leaves among ``child_ids`` the branch that lists them."""
        if not child_ids:
            return
        for start in range(0, len(child_ids), _CHUNK):
            part = list(child_ids[start : start + _CHUNK])
            marks = ", ".join("?" * len(part))
            self.conn.execute(
                f"UPDATE items SET parent_id = ? WHERE id IN ({marks}) AND layer = 0 "
                "AND parent_id IS NULL",
                (branch_id, *part),
            )

    def parents_from_members(self) -> None:
        """Give every leaf the parent its branch files name (a rebuild: leaves do not
        carry their parent from format 2 on)."""
        self.conn.execute(
            "UPDATE items SET parent_id = (SELECT m.branch_id FROM members m JOIN items b "
            "ON b.id = m.branch_id WHERE m.child_id = items.id ORDER BY b.layer, m.branch_id "
            "LIMIT 1) WHERE layer = 0"
        )

    def set_sizes(self, sizes: Sequence[tuple[int, str]]) -> None:
        """Record the file size of each ``(size, id)`` (known once the files are made)."""
        if sizes:
            self.conn.executemany("UPDATE items SET size = ? WHERE id = ?", sizes)

    def _add_tokens(self, kind: ItemKind, delta: int) -> None:
        # Summed in memory and written once at commit: one UPDATE per batch, not per row.
        self._token_delta[kind] += delta

    def _forget_terms(self, rowid: int, kind: ItemKind) -> None:
        """Take the terms of a leaf's current full-text row out of the vocabulary counts
        (only leaves are counted)."""
        if kind != "leaf":
            return
        old = self.conn.execute(
            "SELECT title, keywords, tags, body FROM fts WHERE rowid = ?", (rowid,)
        ).fetchone()
        if old is not None:
            self._vocab_delta.subtract(set(" ".join(old).split()))

    def _flush_vocab(self) -> None:
        # Document frequencies per term, summed in memory and written once at commit.
        changes = [(t, n) for t, n in self._vocab_delta.items() if n]
        self._vocab_delta.clear()
        if not changes:
            return
        self.conn.executemany(
            "INSERT INTO vocab(term, docs) VALUES (?, ?) "
            "ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs",
            changes,
        )
        gone = [(t,) for t, n in changes if n < 0]
        if gone:
            self.conn.executemany("DELETE FROM vocab WHERE term = ? AND docs <= 0", gone)

    def _flush_tokens(self) -> None:
        for kind, delta in self._token_delta.items():
            if delta:
                self.conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = ?",
                    (delta, _TOKENS[kind]),
                )
        self._token_delta.clear()

    def detach_children(self, parent_id: str) -> int:
        """Make the items naming ``parent_id`` loose (its file is gone); return how many."""
        cur = self.conn.execute(
            "UPDATE items SET parent_id = NULL WHERE parent_id = ?", (parent_id,)
        )
        return cur.rowcount

    def detach_orphans(self, ids: Sequence[str] | None = None) -> list[str]:
        """Make loose every item (of ``ids``, or all) whose parent is not in the catalog.

        A leaf or branch file may name a parent whose file was never written (a writer
        killed mid-batch by an older version) or was deleted by hand: the trunk then
        references the item directly, and the next consolidation groups it again.
        Returns the ids changed.
        """
        sql = (
            "SELECT a.id FROM items a WHERE a.parent_id IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM items b WHERE b.id = a.parent_id)"
        )
        if ids is None:
            found = [r[0] for r in self.conn.execute(sql)]
        else:
            found = [r[0] for r in self._rows_in(sql + " AND a.id IN ({marks})", ids)]
        self.set_parent(found, None)
        return found

    def scrub(self) -> None:
        """Leave no trace of deleted rows in the file: merge the full-text segments (the
        deleted terms go), zero freed pages, and empty the write-ahead log.

        Outside a transaction; best effort against other processes' open snapshots (a
        checkpoint cannot pass a reader; the next one finishes it).
        """
        conn = self.conn
        try:
            for table in _TABLES.values():
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        except sqlite3.OperationalError as exc:
            logger.warning("could not compact %s yet: %s", self.path, exc)
        for mode in ("TRUNCATE", "PASSIVE"):
            row = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            if row is not None and row[0] == 0:
                break

    def delete(self, item_id: str) -> bool:
        """Remove one item and its full-text row; True if it was there."""
        found = self.conn.execute(
            "SELECT rowid, indexed, domain, kind FROM items WHERE id = ?", (item_id,)
        ).fetchone()
        if found is None:
            return False
        rowid, indexed, domain, kind = found
        self._count_domain(domain, kind, -1)
        self._add_tokens(kind, -indexed)
        self._forget_terms(rowid, kind)
        self.conn.execute("DELETE FROM members WHERE branch_id = ?", (item_id,))
        self.conn.execute("DELETE FROM folded WHERE leaf_id = ?", (item_id,))
        self.conn.execute(f"DELETE FROM {_TABLES[kind]} WHERE rowid = ?", (rowid,))
        self.conn.execute("DELETE FROM items WHERE rowid = ?", (rowid,))
        return True

    def clear(self) -> None:
        """Drop every item (inside the caller's transaction)."""
        self.conn.execute("DELETE FROM items")
        self.conn.execute("DELETE FROM domains")
        for table in _TABLES.values():
            self.conn.execute(f"DELETE FROM {table}")
        self.conn.execute("DELETE FROM members")
        self.conn.execute("DELETE FROM folded")
        self.conn.execute("DELETE FROM vocab")
        self.conn.execute(
            "UPDATE meta SET value = '0' WHERE key IN ('indexed_tokens', 'branch_tokens')"
        )
        self._token_delta.clear()
        self._vocab_delta.clear()
        self._cache_key = -3  # the cached counts were of what was just deleted

    # ---------------------------------------------------------------- reads
    def get(self, item_id: str) -> Entry | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM items WHERE id = ?", (item_id,)).fetchone()
        return Entry._from_row(row) if row else None

    def get_many(self, ids: Sequence[str]) -> dict[str, Entry]:
        """The entries of ``ids`` that are in the catalog, by id."""
        out: dict[str, Entry] = {}
        for row in self._rows_in(f"SELECT {_COLUMNS} FROM items WHERE id IN ({{marks}})", ids):
            entry = Entry._from_row(row)
            out[entry.id] = entry
        return out

    def children(self, parent_id: str) -> list[Entry]:
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM items WHERE parent_id = ? ORDER BY timestamp, id",
            (parent_id,),
        )
        return [Entry._from_row(r) for r in rows]

    def loose(self, layer: int | None, domain: str | None) -> list[Entry]:
        """Items without a parent, oldest first, optionally of one layer and domain."""
        # The partial index holds only loose items: a handful, whatever the store size.
        sql = f"SELECT {_COLUMNS} FROM items INDEXED BY items_loose WHERE parent_id IS NULL"
        args: list[Any] = []
        if layer is not None:
            sql += " AND layer = ?"
            args.append(layer)
        if domain is not None:
            sql += " AND domain = ?"
            args.append(domain)
        sql += " ORDER BY layer, domain, timestamp, id"
        return [Entry._from_row(r) for r in self.conn.execute(sql, args)]

    def open_branch(self, domain: str, layer: int, below: int) -> Entry | None:
        """A branch of ``domain`` on ``layer`` with fewer than ``below`` children: a top
        one first, then the most recent."""
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM items b WHERE b.domain = ? AND b.layer = ? "
            "AND b.kind = 'branch' "
            "AND (SELECT COUNT(*) FROM items c WHERE c.parent_id = b.id) < ? "
            "ORDER BY b.parent_id IS NULL DESC, b.time_end DESC, b.id LIMIT 1",
            (domain, layer, below),
        ).fetchone()
        return Entry._from_row(row) if row else None

    def listed_in(self, child_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each child id, the branches whose files list it as a child."""
        out: dict[str, list[str]] = {}
        sql = (
            "SELECT branch_id, child_id FROM members WHERE child_id IN ({marks}) ORDER BY branch_id"
        )
        for branch, child in self._rows_in(sql, child_ids):
            out.setdefault(child, []).append(branch)
        return out

    def indexed_fields(self, item_id: str) -> Fields | None:
        """The four full-text fields an item is indexed with now, or None."""
        found = self.conn.execute(
            "SELECT rowid, kind FROM items WHERE id = ?", (item_id,)
        ).fetchone()
        if found is None:
            return None
        row = self.conn.execute(
            f"SELECT title, keywords, tags, body FROM {_TABLES[found[1]]} WHERE rowid = ?",
            (found[0],),
        ).fetchone()
        return (str(row[0]), str(row[1]), str(row[2]), str(row[3])) if row else None

    def corrected_by(self, leaf_id: str) -> list[Entry]:
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM items WHERE outdated_by = ? ORDER BY timestamp", (leaf_id,)
        )
        return [Entry._from_row(r) for r in rows]

    def iter_entries(self, kind: ItemKind | None = None) -> Iterator[Entry]:
        sql = f"SELECT {_COLUMNS} FROM items"
        args: tuple[Any, ...] = ()
        if kind is not None:
            sql += " WHERE kind = ?"
            args = (kind,)
        sql += " ORDER BY id"
        for row in self.conn.execute(sql, args):
            yield Entry._from_row(row)

    def ancestors(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each id in the catalog, its chain of parents, nearest first (one recursive
        query; ids not in the catalog are left out)."""
        out: dict[str, list[str]] = {}
        if not ids:
            return out
        marks = ", ".join("?" * len(ids))
        rows = self.conn.execute(
            f"WITH RECURSIVE up(start, id, parent, depth) AS ("
            f" SELECT id, id, parent_id, 0 FROM items WHERE id IN ({marks})"
            " UNION ALL SELECT up.start, items.id, items.parent_id, up.depth + 1"
            " FROM items JOIN up ON items.id = up.parent WHERE up.depth < 64)"
            " SELECT start, id, depth FROM up ORDER BY start, depth",
            list(ids),
        )
        for start, item, depth in rows:
            if depth:
                out[start].append(item)
            else:
                out[start] = []
        return out

    def leaf_sizes(self) -> list[tuple[str, int]]:
        """``(path, size)`` of every leaf, as the catalog knows them."""
        rows = self.conn.execute("SELECT path, size FROM items WHERE kind = 'leaf'")
        return rows.fetchall()

    def reachable(self) -> int:
        """Items whose chain of parents reaches the trunk (one recursive query)."""
        return int(
            self.conn.execute(
                "WITH RECURSIVE up(id) AS (SELECT id FROM items WHERE parent_id IS NULL "
                "UNION SELECT items.id FROM items JOIN up ON items.parent_id = up.id) "
                "SELECT COUNT(*) FROM up"
            ).fetchone()[0]
        )

    def counts(self) -> dict[str, Any]:
        """Totals used by ``stats``."""
        conn = self.conn
        leaves, leaf_bytes = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM items WHERE kind = 'leaf'"
        ).fetchone()
        branches, branch_bytes = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM items WHERE kind = 'branch'"
        ).fetchone()
        depth = conn.execute("SELECT COALESCE(MAX(layer), 0) FROM items").fetchone()[0]
        domains = dict(
            conn.execute(
                "SELECT domain, COUNT(*) FROM items WHERE kind = 'leaf' GROUP BY domain"
            ).fetchall()
        )
        loose_leaves = conn.execute(
            "SELECT COUNT(*) FROM items WHERE kind = 'leaf' AND parent_id IS NULL"
        ).fetchone()[0]
        outdated = conn.execute("SELECT COUNT(*) FROM items WHERE status = 'outdated'").fetchone()[
            0
        ]
        dangling = conn.execute(
            "SELECT COUNT(*) FROM items a WHERE a.parent_id IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM items b WHERE b.id = a.parent_id)"
        ).fetchone()[0]
        return {
            "leaves": leaves,
            "branches": branches,
            "depth": depth,
            "domains": domains,
            "unconsolidated": loose_leaves,
            "outdated": outdated,
            "dangling": dangling,
            "bytes": leaf_bytes + branch_bytes,
        }

    def _fresh(self) -> None:
        """Drop the statistics caches when anything was committed since (any process).

        Inside a transaction the committed statistics stay what they were at ``begin``
        (this connection's own changes are pending in memory until the commit), so the
        document-frequency cache survives; the item count does not.
        """
        key = self._tx_key if self._in_tx else self.generation()
        if key != self._cache_key:
            self._df_cache.clear()
            self._cache_key = key
        if key != self._count_key or self._in_tx:
            self._count_cache = None
            self._docs_cache = None
            self._count_key = key

    def term_frequencies(self, query_terms: Sequence[str]) -> dict[str, int]:
        """How many leaves contain each term (document frequency), from the vocabulary
        table the writes keep up to date (plus this transaction's pending changes)."""
        unique = sorted(set(query_terms))
        if not unique:
            return {}
        self._fresh()
        cache = self._df_cache
        missing = [t for t in unique if t not in cache]
        if missing:
            cache.update(dict.fromkeys(missing, 0))
            sql = "SELECT term, docs FROM vocab WHERE term IN ({marks})"
            cache.update(self._rows_in(sql, missing))
        pending = self._vocab_delta
        if pending:
            return {t: cache[t] + pending.get(t, 0) for t in unique}
        return {t: cache[t] for t in unique}

    def total_items(self) -> int:
        self._fresh()
        if self._count_cache is None:
            self._count_cache = int(self.conn.execute("SELECT COUNT(*) FROM items").fetchone()[0])
        return self._count_cache

    def documents(self, kind: ItemKind = "leaf") -> int:
        """How many items of ``kind`` the full-text index ranks (the leaves are the
        documents of every ranking statistic)."""
        self._fresh()
        if self._docs_cache is None:
            row = self.conn.execute(
                "SELECT COALESCE(SUM(leaves), 0), COALESCE(SUM(branches), 0) FROM domains"
            ).fetchone()
            self._docs_cache = (int(row[0]), int(row[1]))
        return self._docs_cache[0 if kind == "leaf" else 1]

    def _average_length(self, kind: ItemKind) -> float:
        """The average number of indexed terms of an item of ``kind`` (BM25's avgdl)."""
        stored = self.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (_TOKENS[kind],)
        ).fetchone()
        tokens = self._token_delta[kind] + int(stored[0] if stored else 0)
        return max(tokens / max(self.documents(kind), 1), 1e-9)

    def search(
        self,
        query_terms: Sequence[str],
        *,
        limit: int,
        weights: FieldWeights,
        kinds: Sequence[ItemKind],
        domain: str | None,
        project: str | None,
        source_prefix: str | None,
        ids: Sequence[str] | None = None,
        exact: int = 10,
        common: float | None = None,
    ) -> list[tuple[Entry, float, frozenset[str]]]:
        """Rank items by BM25 over the four fields; return (entry, score, terms present).

        Scores are FTS5's ``bm25()`` (BM25F: field-weighted term frequency, k1 = 1.2,
        b = 0.75, IDF floored at 1e-6) over the leaves' statistics, computed here for a
        small candidate set:

        1. the rarest query terms, up to ``_RARE_BUDGET`` documents between them, pick
           the documents that *must* be scored; each is scored exactly (when even the
           rarest term is too common, step 3 runs straight away);
        2. a document containing none of them can score at most
           ``(k1 + 1) * sum(idf)`` of the other terms; every scored document above that
           bound is certainly in its right place (MaxScore);
        3. when fewer than ``exact`` results are certain, FTS5 ranks every match.

        The first ``exact`` leaves are therefore always the true BM25 top; the rest are
        the best of what was scored. Branches are scored the same way against the
        leaves' statistics, from their own table (there the exhaustive step is FTS5's
        ranking by the branches' statistics, so their guarantee is only approximate).
        With both kinds, the two rankings are merged by score. With ``common`` (a share
        of the leaves), a term found in more of them than that (and in at least
        ``_COMMON_MIN``) only ranks documents that also hold a rarer query term (every
        term still counts in their scores); a query of common terms only is ranked on
        all of them.
        """
        unique = list(dict.fromkeys(t for t in query_terms if t))
        if not unique:
            return []
        df = self.term_frequencies(unique)
        present = sorted((t for t in unique if df.get(t)), key=lambda t: (df[t], t))
        if not present:
            return []
        n_docs = self.documents("leaf")
        idfs = {t: idf(n_docs, df[t]) for t in present}
        # A term in more than half the documents has BM25's floor weight and tells nothing
        # apart; it only drags in ties. It counts when nothing else matches.
        found = present
        present = [t for t in present if idfs[t] > _IDF_FLOOR] or present
        # With ``common``, the terms in more than that share of the items rank nothing
        # by themselves (they still count in every score below).
        ranking = present
        if common is not None:
            cut = max(common * n_docs, _COMMON_MIN)
            ranking = [t for t in present if df[t] <= cut] or present
        query = _TermQuery(found=found, present=present, ranking=ranking, df=df, idfs=idfs)
        scored: list[tuple[Entry, float, frozenset[str]]] = []
        for kind in ("leaf", "branch"):
            if kind in kinds:
                filters = _Filters((kind,), domain, project, source_prefix, ids)
                scored += self._search_table(kind, query, weights, filters, limit, exact)
        if len(kinds) > 1:
            scored.sort(key=lambda item: (-item[1], item[0].id))
        return scored[:limit]

    def _search_table(
        self,
        kind: ItemKind,
        query: _TermQuery,
        weights: FieldWeights,
        filters: _Filters,
        limit: int,
        exact: int,
    ) -> list[tuple[Entry, float, frozenset[str]]]:
        """:meth:`search` over the full-text table of one kind of item."""
        table = _TABLES[kind]
        avgdl = self._average_length(kind)
        found, present, ranking, df, idfs = (
            query.found,
            query.present,
            query.ranking,
            query.df,
            query.idfs,
        )
        rare: list[str] = []
        budget = 0
        # Ranking every match costs about one FTS5 row each; scoring a document here costs
        # tens of times more, so the rare-term path only pays off on large match sets.
        if sum(df[t] for t in ranking) > _EXHAUSTIVE_BELOW:
            for term in ranking:
                if budget + df[term] > _RARE_BUDGET:
                    break
                rare.append(term)
                budget += df[term]
        ids = filters.ids
        if ids is not None and len(ids) <= _DIRECT_IDS:
            # A few named items (the memories nearest in meaning): score them directly
            # instead of walking the postings of every query term.
            rowids = self._rowids_of(sorted(ids))
            direct = self._score_rows(
                table, rowids, found, present, idfs, avgdl, weights, filters, limit
            )
            return [item for item in direct if item[2]][:limit]
        others = present[len(rare) :]
        bound = (_K1 + 1) * sum(idfs[t] for t in others)
        scored: list[tuple[Entry, float, frozenset[str]]] = []
        if rare:
            rowids = [
                r[0]
                for r in self.conn.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (_match(rare),)
                )
            ]
            scored = self._score_rows(
                table, rowids, found, present, idfs, avgdl, weights, filters, limit
            )
        certain = sum(1 for _, score, _ in scored if score >= bound)
        if not rare or (others and certain < min(exact, limit)):
            pool = self._ranked_rowids(table, ranking, limit + exact, weights, filters)
            seen = {e.id for e, _, _ in scored}
            extra = self._score_rows(
                table, pool, found, present, idfs, avgdl, weights, filters, limit
            )
            scored.extend(item for item in extra if item[0].id not in seen)
            scored.sort(key=lambda item: (-item[1], item[0].id))
        return scored[:limit]

    def _rowids_of(self, ids: Sequence[str]) -> list[int]:
        sql = "SELECT rowid FROM items WHERE id IN ({marks})"
        return [row[0] for row in self._rows_in(sql, list(dict.fromkeys(ids)))]

    def _score_rows(
        self,
        table: str,
        rowids: Sequence[int],
        found: Sequence[str],
        present: Sequence[str],
        idfs: dict[str, float],
        avgdl: float,
        weights: FieldWeights,
        filters: _Filters,
        limit: int,
    ) -> list[tuple[Entry, float, frozenset[str]]]:
        """BM25 of each row, exactly as FTS5's ``bm25()`` computes it; best ``limit`` kept.

        ``present`` terms are scored; every ``found`` term the row holds is reported.
        """
        wanted = frozenset(found)
        scoring = frozenset(present)
        column_weights = (weights.title, weights.keywords, weights.tags, weights.text)
        raw: list[tuple[float, int, frozenset[str]]] = []
        sql = f"SELECT rowid, title, keywords, tags, body FROM {table} WHERE rowid IN ({{marks}})"
        for rowid, *texts in self._rows_in(sql, rowids):
            freq: dict[str, float] = {}
            length = 0
            for weight, text in zip(column_weights, texts, strict=True):
                words = text.split()
                length += len(words)
                for word in wanted.intersection(words):
                    freq[word] = freq.get(word, 0.0) + weight * words.count(word)
            norm = _K1 * (1 - _B + _B * length / avgdl)
            score = 0.0
            for term, f in freq.items():
                if term in scoring:
                    score += idfs[term] * f * (_K1 + 1) / (f + norm)
            raw.append((score, rowid, frozenset(freq)))
        if not raw:
            return []
        ordered = sorted(raw, key=lambda item: -item[0])
        step = max(limit * 2, 50)
        out: list[tuple[Entry, float, frozenset[str]]] = []
        # Entries are built best-first and only until ``limit`` of them pass the filters.
        for start in range(0, len(ordered), step):
            chunk_rows = ordered[start : start + step]
            marks = ", ".join("?" * len(chunk_rows))
            entries = {
                row[0]: Entry._from_row(row[1:])
                for row in self.conn.execute(
                    f"SELECT rowid, {_COLUMNS} FROM items WHERE rowid IN ({marks})",
                    [r[1] for r in chunk_rows],
                )
            }
            for score, rowid, terms_present in chunk_rows:
                entry = entries.get(rowid)
                if entry is not None and filters.keep(entry):
                    out.append((entry, score, terms_present))
            if len(out) >= limit and chunk_rows[-1][0] < out[limit - 1][1]:
                break
        out.sort(key=lambda item: (-item[1], item[0].id))
        return out

    def _ranked_rowids(
        self,
        table: str,
        present: Sequence[str],
        pool: int,
        weights: FieldWeights,
        filters: _Filters,
    ) -> list[int]:
        """FTS5's own ranking over every match of one table (the exhaustive path), ties
        broken by id."""
        weight_args = [weights.title, weights.keywords, weights.tags, weights.text]
        domain, project, source_prefix = filters.domain, filters.project, filters.source_prefix
        ids = filters.ids
        if domain is None and project is None and source_prefix is None and ids is None:
            # Row ids derive from item ids (see _stable_rowid), so ordering ties by rowid
            # gives the same pool whatever order the items were written in.
            rows = self.conn.execute(
                f"SELECT rowid, bm25({table}, ?, ?, ?, ?) AS r FROM {table} "
                f"WHERE {table} MATCH ? ORDER BY r, rowid LIMIT ?",
                [*weight_args, _match(present), pool],
            ).fetchall()
            return [r[0] for r in rows]
        sql = (
            f"SELECT items.rowid FROM {table} JOIN items ON items.rowid = {table}.rowid "
            f"WHERE {table} MATCH ?"
        )
        args: list[Any] = [_match(present)]
        if domain is not None:
            sql += " AND (items.domain = ? OR items.domain LIKE ?)"
            args.extend([domain, domain + ".%"])
        if project is not None:
            sql += " AND items.project = ?"
            args.append(project)
        if source_prefix is not None:
            sql += " AND substr(items.source, 1, ?) = ?"
            args.extend([len(source_prefix), source_prefix])
        if ids is not None:
            wanted = sorted(ids)
            sql += f" AND items.id IN ({', '.join('?' * len(wanted))})"
            args.extend(wanted)
        sql += f" ORDER BY bm25({table}, ?, ?, ?, ?), items.rowid LIMIT ?"
        args.extend([*weight_args, pool])
        return [r[0] for r in self.conn.execute(sql, args)]


@dataclass(frozen=True, slots=True)
class _TermQuery:
    """The terms of one search and their statistics, shared by both tables."""

    found: list[str]
    """Every query term some leaf holds (reported when a document has it)."""
    present: list[str]
    """The terms that score (those with more than the floor weight, unless none has)."""
    ranking: list[str]
    """The terms that may bring a document in (``common`` ones left out)."""
    df: dict[str, int]
    idfs: dict[str, float]


_EXHAUSTIVE_BELOW = 5000
"""Below this many term occurrences in documents, FTS5 ranks every match directly."""
_DIRECT_IDS = 1000
"""A search restricted to at most this many ids scores them directly."""
_RARE_BUDGET = 400
"""Documents the rarest query terms may bring in before the rest count as common."""
_COMMON_MIN = 1000
"""With ``common``: a term in fewer documents than this always ranks (its matches are
cheap to rank, and in a small store a few documents are a large share)."""


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """Open the index of a store on a read-only disk.

    A WAL database is readable read-only while its ``-shm`` file exists; without it
    (a clean close removed it) SQLite must be told the file cannot change: nothing can
    write a read-only disk, so that is true.
    """
    uri = path.resolve().as_uri()
    last: sqlite3.Error | None = None
    for mode in ("mode=ro", "immutable=1"):
        try:
            conn = sqlite3.connect(
                f"{uri}?{mode}",
                uri=True,
                timeout=30.0,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            last = exc
            continue
        return conn
    assert last is not None
    raise last


_ROWID_MASK = (1 << 63) - 1


def _stable_rowid(item_id: str) -> int:
    """A row id that depends only on the item id: rebuilds and incremental writes agree,
    so ties in ranking break the same way whatever the history of the store."""
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], "big") & _ROWID_MASK) or 1


def _match(query_terms: Sequence[str]) -> str:
    return " OR ".join(f'"{t}"' for t in query_terms)


class _Filters:
    """The candidate filters, checked on catalog entries."""

    def __init__(
        self,
        kinds: Sequence[ItemKind],
        domain: str | None,
        project: str | None,
        source_prefix: str | None,
        ids: Sequence[str] | None,
    ) -> None:
        self.kinds = frozenset(kinds)
        self.domain = domain
        self.project = project
        self.source_prefix = source_prefix
        self.ids = None if ids is None else frozenset(ids)

    def keep(self, entry: Entry) -> bool:
        if entry.kind not in self.kinds:
            return False
        if self.domain is not None and not (
            entry.domain == self.domain or entry.domain.startswith(self.domain + ".")
        ):
            return False
        if self.project is not None and entry.project != self.project:
            return False
        if self.source_prefix is not None and not entry.source.startswith(self.source_prefix):
            return False
        return self.ids is None or entry.id in self.ids
