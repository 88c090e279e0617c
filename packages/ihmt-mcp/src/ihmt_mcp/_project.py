"""Project indexes: a private store per codebase, one leaf per symbol, synced on every call."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from itertools import chain
from pathlib import Path
from typing import Any, Literal, TypeGuard

from ihmt_chunkers import BinaryContentError, DocType, decode, detect, split
from ihmt_mcp._files import read_regular, refuse_unsafe_root, walk_files
from ihmt_mcp._project_records import FileRecord, Plan, SyncReport
from ihmt_mcp._secrets import find_secrets
from ihmt_mcp._withheld import withhold_lines
from ihmt_mcp.errors import FileRefusedError
from ihmt_navigator import (
    CodeSearch,
    CodeSymbol,
    Consolidator,
    Embedder,
    Scope,
    Summarizer,
    summarizer_for,
)
from ihmt_store import (
    CorruptFileError,
    Leaf,
    LeafNotFoundError,
    Span,
    Store,
    StoreConfig,
    estimate_tokens,
    leaf_id_for,
)

logger = logging.getLogger(__name__)

__all__ = [
    "CODE_DOMAIN",
    "MAX_INDEX_BYTES",
    "MAX_INDEX_FILES",
    "ProjectIndex",
    "SyncReport",
]

CODE_DOMAIN = "code"
"""One domain per project index, so its branches follow path order across languages."""
BRANCH_FACTOR = 32
"""Children per branch of a new project index (a memory store has 8)."""
MAX_INDEX_BYTES = 512 * 1024
"""Files larger than this are left out of the index."""
MAX_INDEX_FILES = 20_000
"""A folder with more files than this is not a project (a home folder, a disk root)."""
MANIFEST = "ihmt_mcp_manifest.json"
MANIFEST_VERSION = 4
"""2: files holding secrets are left out; 3: only their secret lines are, unless the
secret runs over several lines; 4: loose code packs under its class, docs in passages.
An older manifest is re-derived, so every file is chunked again on the next sync (a
file version 2 left out is indexed; an index has one layout)."""
_GENERATION = "generation"
"""The manifest's key for the store's generation it was written with. The store commits
first and the manifest is replaced after it, so a writer killed in between (or a store
recovered from an interrupted write) leaves the two apart: the manifest is then re-derived
from the store's catalog and every file hashed again, and what the dead writer left
half-done is redone or dropped, never served."""
_MANY_LINES = frozenset({"a private key", "a seed phrase"})
"""Kinds of secret that leave their whole file out of the index."""
_EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)
MapDetail = Literal["files", "symbols"]
"""What a project map lists: files with token sizes, or each file's symbols too."""
_MAP_DETAILS: tuple[MapDetail, ...] = ("files", "symbols")
_SCOPES: tuple[Scope, ...] = ("main", "test", "all")


class ProjectIndex:
    """The private code index of one codebase, under ``base``.

    Every call syncs first: size and mtime decide what may have moved, SHA-256 decides
    what did; changed files are re-chunked one symbol per leaf, removed ones forgotten,
    and only the branches above them are rewritten. :meth:`map` answers from the
    manifest as soon as the files are chunked and writes the store (leaves, search
    index, branches) in a thread behind it; every other call waits for that thread
    first, so find_code never reads a store behind the files.

    Args:
        embedder: re-ranks the candidates by meaning (see :class:`CodeSearch`).
    """

    def __init__(self, root: Path, base: Path, *, embedder: Embedder | None = None) -> None:
        if not root.is_dir():
            raise FileRefusedError(root, "it is not a folder; give the project's folder")
        refuse_unsafe_root(root)
        self.root = root
        digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:10]
        name = re.sub(r"[^a-z0-9._-]+", "-", root.name.lower()).strip("-") or "project"
        self.store_path = base / f"{name}-{digest}"
        self._store: Store | None = None
        self._manifest: dict[str, FileRecord] = {}
        self._manifest_stamp: tuple[int, int] | None = None
        self._manifest_generation = -1
        self._record_json: dict[str, tuple[tuple[int, int, str], str]] = {}
        self._summarizer: Summarizer | None = None
        self._embedder = embedder
        self._search: CodeSearch | None = None
        self._writer: threading.Thread | None = None
        """Writes what :meth:`map` found to the store after it answered."""

    @property
    def store(self) -> Store:
        """The index's own store (created on first use; written, when a map has just
        answered, once the writer thread is done)."""
        self._settle()
        if self._store is None:
            if not Store.exists(self.store_path):
                # Branches of code are outlines nobody reads as text: wide ones make a
                # shallower tree of fewer files (a first index creates every one).
                Store.create(self.store_path, StoreConfig(branch_factor=BRANCH_FACTOR)).close()
            # Derived from the codebase: atomic writes, no flush (a crash re-derives).
            self._store = Store.open(self.store_path, create=True, derived=True)
        return self._store

    def close(self) -> None:
        self._settle()
        if self._store is not None:
            self._store.close()

    def _summary(self) -> Summarizer:
        if self._summarizer is None:
            self._summarizer = summarizer_for("heuristic", frequencies=self.store)
        return self._summarizer

    # ------------------------------------------------------------------ manifest
    def _manifest_path(self) -> Path:
        return self.store.state_file(MANIFEST)

    def _load_manifest(self) -> None:
        path = self._manifest_path()
        generation = self.store.generation
        try:
            st = path.stat()
        except FileNotFoundError:
            if self._manifest_stamp is None or generation != self._manifest_generation:
                self._manifest = self._manifest_from_catalog()
                self._manifest_stamp = (0, 0)
                self._manifest_generation = generation
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._manifest_stamp and generation == self._manifest_generation:
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != MANIFEST_VERSION:
                raise ValueError("an older manifest")
            files = data["files"]
            self._manifest = {rel: FileRecord.from_json(rec) for rel, rec in files.items()}
            if data.get(_GENERATION) != generation:
                logger.warning("project index %s was left half-written; re-deriving it", path)
                self._manifest = self._manifest_from_catalog()
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            logger.warning("project manifest %s is unreadable; re-deriving it", path)
            self._manifest = self._manifest_from_catalog()
        self._manifest_stamp = stamp
        self._manifest_generation = generation

    def _manifest_from_catalog(self) -> dict[str, FileRecord]:
        """A manifest that forces every file to be hashed again, with its known leaves."""
        out: dict[str, FileRecord] = {}
        for entry in self.store.iter_entries("leaf"):
            out.setdefault(entry.source, FileRecord(size=-1, mtime_ns=-1, sha="")).leaves.append(
                entry.id
            )
        return out

    def _disk_stamp(self) -> tuple[int, int]:
        """The manifest file's stamp as :meth:`_load_manifest` keeps it ((0, 0): none)."""
        try:
            st = self._manifest_path().stat()
        except FileNotFoundError:
            return (0, 0)
        return (st.st_mtime_ns, st.st_size)

    def _save_manifest(self) -> None:
        path = self._manifest_path()
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        generation = self.store.generation
        # A record's JSON is kept while its file's size, mtime and hash stay (they decide
        # all it holds): an edit serialises the records it changed, not the whole project.
        cache, texts = self._record_json, []
        for rel, rec in self._manifest.items():
            key = (rec.size, rec.mtime_ns, rec.sha)
            held = cache.get(rel)
            if held is None or held[0] != key:
                held = cache[rel] = (key, json.dumps(rec.to_json(), separators=(",", ":")))
            texts.append(f"{json.dumps(rel)}:{held[1]}")
        for rel in cache.keys() - self._manifest.keys():
            del cache[rel]
        head = json.dumps({"version": MANIFEST_VERSION, _GENERATION: generation})
        tmp.write_text(f'{head[:-1]},"files":{{{",".join(texts)}}}}}', encoding="utf-8")
        os.replace(tmp, path)
        st = path.stat()
        self._manifest_stamp = (st.st_mtime_ns, st.st_size)
        self._manifest_generation = generation

    # ------------------------------------------------------------------ sync
    def sync(self) -> SyncReport:
        """Bring the index in line with the files on disk (cheap when nothing moved)."""
        self._settle()
        return self._sync(behind=False)

    def _sync(self, *, behind: bool) -> SyncReport:
        """Plan what the files ask (read, hash, chunk: the manifest in memory is then in
        line with them), and write it to the store: under the same lock, or (``behind``)
        in a thread of its own once this returns, when there is anything to write."""
        started = time.perf_counter()
        store = self.store
        with store.locked():
            try:
                plan = self._plan()
                if not plan.changed and not plan.removed:
                    if plan.dirty:
                        self._save_manifest()
                    return plan.report(started)
                if not behind:
                    return self._write(plan, started)
            except BaseException:
                self._manifest_stamp = None  # half brought in line: read again next time
                raise
        writer = threading.Thread(
            target=self._write_behind, args=(plan,), name=f"ihmt-index-{self.root.name}"
        )
        self._writer = writer
        writer.start()
        return plan.report(started)

    def _plan(self) -> Plan:
        """What the files on disk ask of the index, the manifest in memory brought in line
        with them (the caller holds the store's lock; nothing is written)."""
        store = self.store
        self._load_manifest()
        manifest = self._manifest
        listed: list[tuple[Path, str, os.stat_result]] = []
        for full, rel in walk_files(self.root):
            try:
                st = full.stat()
            except OSError:
                continue
            listed.append((full, rel, st))
            if len(listed) > MAX_INDEX_FILES:
                raise FileRefusedError(
                    self.root,
                    f"it holds more than {MAX_INDEX_FILES:,} files; give a project folder",
                )
        present = {rel for _, rel, _ in listed}
        plan = Plan(
            generation=store.generation,
            stamp=self._manifest_stamp,
            files=len(listed),
            removed=[(rel, manifest.pop(rel)) for rel in [r for r in manifest if r not in present]],
        )
        plan.dirty = bool(plan.removed)
        for rank, (full, rel, st) in enumerate(listed):
            rec = manifest.get(rel)
            if rec is not None and rec.size == st.st_size and rec.mtime_ns == st.st_mtime_ns:
                continue
            data, sha = b"", ""
            if st.st_size <= MAX_INDEX_BYTES:
                try:
                    data = read_regular(full)
                except OSError:
                    continue
                plan.hashed += 1
                sha = hashlib.sha256(data).hexdigest()
                if rec is not None and rec.sha == sha:
                    rec.size, rec.mtime_ns = st.st_size, st.st_mtime_ns
                    plan.dirty = True
                    continue
            record, leaves = self._chunk(rank, rel, data, sha, st)
            plan.changed.append((rel, rec, record, leaves))
            manifest[rel] = record
        return plan

    def _write(self, plan: Plan, started: float) -> SyncReport:
        """Write ``plan`` to the store, then the manifest (the caller holds the lock)."""
        store = self.store
        parents: set[str] = set()
        # One batch for the files and the branches above them: one flush to disk, and
        # a sync that fails half-way leaves the index as it was.
        with store.batch():
            for _rel, gone in plan.removed:
                parents |= self._drop(gone.leaves)
            # Every changed file's new symbols are written together: one catalog lookup
            # and one insert for all of them (a first index writes thousands).
            written: list[Leaf] = []
            joins: list[tuple[list[str], str]] = []
            for _rel, old, record, leaves in plan.changed:
                parents |= self._place(old, record, leaves, written, joins)
            if written:
                store.put_leaves(written)
            for fresh, old_parent in joins:
                if store.entry(old_parent) is not None:
                    # The new symbols of a changed file join its old branch: the tree keeps
                    # its path order and only that branch (and those above it) are
                    # rewritten.
                    store.set_parent(fresh, old_parent)
                    parents.add(old_parent)
            # Branches keep path order for the tree; nobody reads them as text here.
            consolidator = Consolidator(store, self._summary(), frequencies=store, outline=True)
            refreshed = consolidator.refresh([p for p in parents if store.entry(p) is not None])
            report = consolidator.consolidate(domains=[CODE_DOMAIN])
        self._save_manifest()
        done = plan.report(
            started,
            branches_refreshed=len(refreshed),
            branches_created=len(report.branches_created),
        )
        logger.info(
            "synced %s: %d changed, %d removed in %.3fs",
            self.root,
            len(done.changed),
            len(done.removed),
            done.seconds,
        )
        return done

    def _write_behind(self, plan: Plan) -> None:
        """:meth:`_write` in the writer thread. Another process that wrote the index
        since the plan was made (its generation or manifest moved) makes it void: the
        index is synced again from the files as they are then."""
        store = self.store
        try:
            with store.locked():
                if store.generation != plan.generation or self._disk_stamp() != plan.stamp:
                    logger.info("project index %s was written meanwhile; syncing again", self.root)
                    self._manifest_stamp = None  # reloaded from disk by the sync below
                    self._sync(behind=False)
                    return
                self._write(plan, time.perf_counter())
        except Exception:  # reported; the next call syncs again (and raises, if it fails)
            logger.exception("project index %s was not written; the next call retries", self.root)
            self._manifest_stamp = None

    def _settle(self) -> None:
        """Wait for the index's writer thread, if one runs (every call starts here)."""
        writer = self._writer
        if writer is not None and writer is not threading.current_thread():
            writer.join()
            self._writer = None

    def _drop(self, ids: list[str]) -> set[str]:
        store = self.store
        parents: set[str] = set()
        for leaf_id in ids:
            entry = store.entry(leaf_id)
            if entry is None:
                continue
            if entry.parent_id:
                parents.add(entry.parent_id)
            store.forget(leaf_id)
        return parents

    def _chunk(
        self, rank: int, rel: str, data: bytes, sha: str, st: os.stat_result
    ) -> tuple[FileRecord, list[Leaf]]:
        """One new or changed file's record and the leaves it is to hold (nothing is
        written)."""
        store = self.store
        record = FileRecord(size=st.st_size, mtime_ns=st.st_mtime_ns, sha=sha)
        text = ""
        if st.st_size > MAX_INDEX_BYTES:
            record.skipped = "too large"
        else:
            try:
                text = decode(data).text
            except BinaryContentError:
                record.skipped = "binary"
        found = find_secrets(text) if text else ()
        if any(finding.kind in _MANY_LINES for finding in found):
            # A key block or a seed phrase runs over lines a finding does not name.
            logger.info("left %s out of the index: it holds %s", rel, found[0].kind)
            record.skipped = "holds a secret"
            text = ""
        elif found:
            # The same rule as save_memory: a secret in a file must not reach the index or
            # a find_code answer. Its line is withheld, the rest of the file is indexed: a
            # whole module left out for one line (or one false alarm) is code nobody finds.
            logger.info("withheld %d line(s) of %s: what looks like a secret", len(found), rel)
            text = withhold_lines(text, found)
        leaves: list[Leaf] = []
        if text.strip():
            config = store.config
            detection = detect(text, filename=rel)
            code = detection.doc_type is DocType.CODE
            # Every method a leaf of its own, as find_code needs (a class above one token is
            # laid out member by member); what is no symbol (a class's docstring and
            # fields, a module's constants) packs up to the store's target, under its class
            # header: one leaf per symbol, not one per line of loose code. Prose (a README,
            # the docs) has no symbols: its paragraphs pack up to the target too.
            blocks = split(
                text,
                doc_type=detection.doc_type,
                language=detection.language,
                filename=rel,
                mode="symbol" if code else "pack",
                target_tokens=min(config.target_tokens, config.max_tokens),
                member_tokens=1 if code else None,
                max_tokens=config.max_tokens,
            )
            record.tokens = estimate_tokens(text)
            stamp = _EPOCH + timedelta(seconds=rank * 1000)
            for position, block in enumerate(blocks):
                if not block.text.strip():
                    continue
                leaf_id = leaf_id_for(
                    domain=CODE_DOMAIN, source=rel, position=position, text=block.text
                )
                extra: dict[str, Any] = {"kind": block.kind}
                if block.context:
                    extra["context"] = block.context
                if block.qualified_name:
                    extra["symbol"] = block.qualified_name
                title = f"{rel} {block.qualified_name or block.kind}"
                extra["title"] = title
                leaves.append(
                    Leaf(
                        leaf_id=leaf_id,
                        text=block.text,
                        timestamp=(stamp + timedelta(seconds=position)).strftime(
                            "%Y-%m-%dT%H:%M:%SZ"
                        ),
                        domain=CODE_DOMAIN,
                        data_type=detection.doc_type.value.upper(),
                        source=rel,
                        tags=(*block.tags, f"kind:{block.kind}"),
                        span=Span(start_line=block.start_line, end_line=block.end_line),
                        extra=extra,
                    )
                )
                last = block.start_line + max(0, len(block.text.rstrip().splitlines()) - 1)
                record.symbols.append(
                    [
                        block.qualified_name or block.name,
                        block.kind,
                        block.start_line,
                        last,
                        leaf_id,
                    ]
                )
        record.keys = [_leaf_key(leaf) for leaf in leaves]
        record.leaves = [leaf.leaf_id for leaf in leaves]
        return record, leaves

    def _place(
        self,
        old: FileRecord | None,
        record: FileRecord,
        leaves: list[Leaf],
        written: list[Leaf],
        joins: list[tuple[list[str], str]],
    ) -> set[str]:
        """Replace a file's ``old`` leaves by ``leaves`` in the batch: the stale ones are
        forgotten; the new or changed ones go to ``written``, and ``(new ids, old branch)``
        to ``joins`` when new symbols are to join the branch the old ones had. Returns
        the branches to refresh."""
        store = self.store
        old_ids = list(old.leaves) if old else []
        keep = set(record.leaves)
        held: dict[str, str] = {}
        if old is not None and len(old.keys) == len(old_ids):
            held = dict(zip(old_ids, old.keys, strict=True))
        old_parent = None
        for leaf_id in old_ids:
            entry = store.entry(leaf_id)
            if entry is not None and entry.parent_id:
                old_parent = entry.parent_id
                break
        parents = self._drop([i for i in old_ids if i not in keep])
        keys = zip(leaves, record.keys, strict=True)
        written.extend(leaf for leaf, key in keys if held.get(leaf.leaf_id) != key)
        known = set(old_ids)
        fresh = [i for i in record.leaves if i not in known]
        if fresh and old_parent is not None:
            joins.append((fresh, old_parent))
        return parents

    # ------------------------------------------------------------------ answers
    def _served(self, leaf_id: str) -> Leaf | None:
        """The leaf to answer with, exactly as this index wrote it; None when its file is
        damaged, gone or changed (a power cut before the derived store flushed it, a hand
        in the index's folder): the leaves of its source file are then written again."""
        store = self.store
        try:
            leaf = store.read_leaf(leaf_id)
        except (CorruptFileError, LeafNotFoundError):
            leaf = None
        rel = leaf.source if leaf is not None else None
        if rel is None:
            rel = next((r for r, rec in self._manifest.items() if leaf_id in rec.leaves), "")
        rec = self._manifest.get(rel)
        if rec is None or leaf_id not in rec.leaves or len(rec.keys) != len(rec.leaves):
            return leaf  # nothing to check it against (an index written before the digests)
        key = rec.keys[rec.leaves.index(leaf_id)]
        if leaf is not None and _leaf_key(leaf.evolve(parent_id=None, outdated_by=None)) == key:
            return leaf
        logger.warning("project index %s: a leaf of %s was damaged; re-indexing it", self.root, rel)
        with store.locked():
            with store.batch():
                self._drop(rec.leaves)
            rec.size, rec.mtime_ns, rec.sha, rec.leaves, rec.keys = -1, -1, "", [], []
            self._save_manifest()
        self.sync()
        return None

    def _files(self, subpath: str) -> list[tuple[str, FileRecord]]:
        prefix = _clean_subpath(subpath)
        return [
            (rel, rec)
            for rel, rec in sorted(self._manifest.items())
            if not rec.skipped and (not prefix or rel == prefix or rel.startswith(prefix + "/"))
        ]

    def map(self, *, detail: str = "files", subpath: str = "", budget: int = 6000) -> str:
        """Files with token sizes (``detail="symbols"``: with each symbol and its lines).

        Raises:
            ValueError: ``detail`` is not a :data:`MapDetail`.
        """
        if not _is_map_detail(detail):
            raise ValueError(f"unknown detail {detail!r}: use 'files' or 'symbols'")
        # The map is the manifest's: it answers once the files are read and chunked, and
        # the store (leaves, search index, branches) is written behind it, in a thread
        # the next call waits for (find_code reads the store; a map does not).
        self._settle()
        self._sync(behind=True)
        files = self._files(subpath)
        total = sum(rec.tokens for _, rec in files)
        where = f"{self.root}" + (f" › {_clean_subpath(subpath)}" if subpath else "")
        head = f"PROJECT MAP · {where} · {len(files)} files · ~{total:,} tokens to read it all"
        if not files:
            return head + "\nNo indexed files here (check the path and subpath)."
        lines = [head]
        for rel, rec in files:
            lines.append(f"{rel} · {rec.tokens:,} tok")
            if detail == "symbols":
                for name, kind, first, last, _ in rec.symbols:
                    if kind in ("imports", "code") or not name:
                        continue
                    lines.append(f"  {kind} {name} {first}-{last}")
        text = "\n".join(lines)
        if estimate_tokens(text) <= budget:
            return text
        folders: dict[str, list[int]] = {}
        for rel, rec in files:
            folder = rel.rsplit("/", 1)[0] if "/" in rel else "."
            acc = folders.setdefault(folder, [0, 0])
            acc[0] += 1
            acc[1] += rec.tokens
        out = [head, "(too large to list file by file: folders shown; pass subpath to zoom in)"]
        for folder, (count, tokens) in sorted(folders.items()):
            line = f"{folder}/ · {count} files · {tokens:,} tok"
            if estimate_tokens("\n".join([*out, line])) > budget:
                out.append("…")
                break
            out.append(line)
        return "\n".join(out)

    def find(
        self,
        query: str,
        *,
        scope: str = "main",
        subpath: str = "",
        clue: str | None = None,
        max_tokens: int = 1500,
    ) -> str:
        """The one symbol that answers ``query``, as ``file:first-last`` and its code.

        Raises:
            ValueError: an empty ``query``, or a ``scope`` that is not a
                :data:`~ihmt_navigator.Scope`.
        """
        if not query or not query.strip():
            raise ValueError("the query is empty: name a symbol or describe the code")
        if not _is_scope(scope):
            raise ValueError(f"unknown scope {scope!r}: use 'main', 'test' or 'all'")
        max_tokens = max(100, int(max_tokens))
        self.sync()
        prefix = _clean_subpath(subpath)
        q = query.strip()
        if self._search is None:
            self._search = CodeSearch(self.store, embedder=self._embedder)
        search = self._search

        def symbols() -> Iterator[CodeSymbol]:
            records = self._manifest.items()
            return chain.from_iterable(rec.code_symbols(r) for r, rec in records if not rec.skipped)

        picks = search.rank(q, symbols(), clue=clue, scope=scope, prefix=prefix)
        leaf = self._served(picks[0]) if picks else None
        if picks and leaf is None:  # repaired: rank again over what the files hold now
            picks = search.rank(q, symbols(), clue=clue, scope=scope, prefix=prefix)
            leaf = self.store.read_leaf(picks[0]) if picks else None
        if not picks or leaf is None:
            return (
                f"NOT FOUND · no code in {self.root.name}{'/' + prefix if prefix else ''} "
                f'answers "{q}" (scope {scope}). Try other words, scope="all", or project_map.'
            )
        store = self.store
        span = leaf.span
        first = span.start_line if span else 1
        body = leaf.text.rstrip("\n")
        note = ""
        if estimate_tokens(body) > max_tokens:
            passage = search.passage(body, q, clue, max_tokens)
            body = passage.text
            note = (
                f" (lines {first + passage.start_line - 1}-{first + passage.end_line - 1} of a "
                f"{passage.total_lines}-line symbol; raise max_tokens for all of it)"
            )
            first = first + passage.start_line - 1
            last = first + passage.end_line - passage.start_line
        else:
            body = body.rstrip()
            last = first + body.count("\n")
        symbol = str(leaf.extra.get("symbol") or leaf.extra.get("kind") or "")
        out = [f"{leaf.source}:{first}-{last} · {symbol}{note}".rstrip(" ·")]
        context = str(leaf.extra.get("context") or "").strip().splitlines()
        if context:
            out.append(f"(inside: {context[-1].strip()})")
        out.append(body)
        others = store.entries(picks[1:6])
        more = []
        for leaf_id in picks[1:6]:
            entry = others.get(leaf_id)
            if entry is None:
                continue
            more.append(f"- {entry.source} · {entry.title.split(' ', 1)[-1]}")
        if more:
            out.append("Other candidates:")
            out.extend(more)
        return "\n".join(out)


def _leaf_key(leaf: Leaf) -> str:
    """Changes whenever anything the leaf's file holds does (its lines, its context)."""
    return hashlib.blake2b(repr(leaf).encode("utf-8"), digest_size=8).hexdigest()


def _is_map_detail(value: str) -> TypeGuard[MapDetail]:
    return value in _MAP_DETAILS


def _is_scope(value: str) -> TypeGuard[Scope]:
    return value in _SCOPES


def _clean_subpath(subpath: str) -> str:
    cleaned = (subpath or "").replace("\\", "/").strip().strip("/")
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    return "" if cleaned == "." else cleaned
