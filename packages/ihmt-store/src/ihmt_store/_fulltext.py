"""Full-text search: BM25 over the leaves' and the branches' FTS5 tables.

:meth:`FullText.search` ranks with the leaves' statistics, scoring a small candidate set
exactly (the rarest query terms first, MaxScore for the rest) and falling back to FTS5's
own ranking when that set cannot settle the top; :class:`FieldWeights` weighs the four
fields and :class:`Candidate` is one result as the store returns it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ihmt_store._bm25 import IDF_FLOOR as _IDF_FLOOR
from ihmt_store._bm25 import K1 as _K1
from ihmt_store._bm25 import B as _B
from ihmt_store._bm25 import idf
from ihmt_store._connection import TABLES as _TABLES
from ihmt_store._rows import COLUMNS as _COLUMNS
from ihmt_store._rows import Entry
from ihmt_store._statistics import IndexStatistics
from ihmt_store._types import ItemKind

__all__ = ["Candidate", "FieldWeights", "FullText"]


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


class FullText(IndexStatistics):
    """Ranking of leaves and branches by BM25 over their full-text tables."""

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
