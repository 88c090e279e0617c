"""Import: the memories another IHMT, an export or another tool wrote, stored as ours.

The readers in :mod:`ihmt_mcp._portable` turn a ``.jsonl`` file, a Markdown export or a
store folder into :class:`ImportBatch` records; this module stores them, one leaf per
memory, then records their facts and the OUTDATED links between them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ihmt_mcp._arguments import DOC_TYPE_NAMES, parse_content_type, parse_domain
from ihmt_mcp._ingest import INGEST_GROUP, IngestOptions, Progress, ingest_files
from ihmt_mcp._leaves import chunked_leaves
from ihmt_mcp._portable import (
    ImportBatch,
    PortableMemory,
    find_ihmt_store,
    is_jsonl,
    is_markdown_export,
    read_ihmt_store,
    read_jsonl,
    read_markdown_export,
)
from ihmt_mcp._records import IngestReport
from ihmt_mcp._secrets import find_secrets
from ihmt_mcp._types import ContentType
from ihmt_mcp.errors import FileRefusedError
from ihmt_store import IhmtError, Leaf, LeafNotFoundError, leaf_id_for, now_timestamp, safe_domain

if TYPE_CHECKING:
    from ihmt_mcp._parts import MemoryParts

logger = logging.getLogger(__name__)

__all__ = ["import_batches", "ingest_sources", "portable_sources"]


def portable_sources(
    own_store: Path, sources: Sequence[str | os.PathLike[str]]
) -> tuple[list[ImportBatch], list[str | os.PathLike[str]]]:
    """Read the sources that are exports or stores; return them and the others.

    Raises:
        FileRefusedError: a source is the store ``own_store`` itself.
    """
    batches: list[ImportBatch] = []
    rest: list[str | os.PathLike[str]] = []
    for raw in sources:
        path = Path(raw).expanduser()
        if is_jsonl(path):
            batches.append(read_jsonl(path, path.name))
        elif is_markdown_export(path):
            batches.append(read_markdown_export(path))
        elif path.is_dir() and (found := find_ihmt_store(path)) is not None:
            if found.resolve() == own_store.resolve():
                raise FileRefusedError(path, "it is this memory's own store")
            batches.append(read_ihmt_store(found, path.name))
        else:
            rest.append(raw)
    return batches, rest


def ingest_sources(
    memory: MemoryParts,
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
    """What :meth:`Memory.ingest` does: the exports and stores among ``sources`` are
    imported memory by memory, the other files and folders (and ``text``) ingested."""
    portable, sources = portable_sources(memory.store.path, sources)
    imported = None
    if portable:
        imported = import_batches(
            memory,
            portable,
            project=memory._project(project),
            tags=tags,
            consolidate=consolidate,
            progress=progress,
        )
        if not sources and text is None:
            from ihmt_mcp._vector_fill import vectors_later

            return vectors_later(memory, imported)
    options = IngestOptions(
        doc_type=parse_content_type(content_type),
        domain=parse_domain(domain),
        project=memory._project(project),
        tags=tuple(tags),
    )
    report = ingest_files(
        memory,
        sources,
        options,
        text=text,
        source_name=source_name,
        consolidate=consolidate,
        progress=progress,
    )
    from ihmt_mcp._summary_fill import summaries_later
    from ihmt_mcp._vector_fill import vectors_later

    report = summaries_later(memory, report)
    return vectors_later(memory, report if imported is None else imported.merged(report))


def import_batches(
    memory: MemoryParts,
    batches: Sequence[ImportBatch],
    *,
    project: str,
    tags: Sequence[str],
    consolidate: bool,
    progress: Progress | None,
) -> IngestReport:
    """Store what the readers of ``_portable`` found: one leaf per memory, exactly as
    read, keeping its id (when free), date, domain, project and tags; then the facts
    and the OUTDATED links between them. Re-importing the same data rewrites the same
    leaves. A memory holding a secret is skipped and reported.
    """
    skipped: list[tuple[str, str]] = [s for b in batches for s in b.skipped]
    notices: list[str] = []
    warnings: list[str] = [w for b in batches for w in b.warnings]
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
        made = _imported_leaves(memory, item, number, project, tags)
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
        stored, branches, said = memory._store_group(group, consolidate=consolidate)
        written += len(stored)
        created += branches
        notices.extend(said)
        if progress is not None:
            progress(done_bytes, total_bytes, stored[-1].source if stored else "")
    changed, left_out = _import_facts(memory, batches, id_map)
    notices.extend(changed)
    warnings.extend(left_out)
    warnings.extend(_import_links(memory, items, batches, id_map))
    logger.info("imported %d memory(ies) into %d leaf(s)", len(items), written)
    return IngestReport(
        files=len(items) + len([s for b in batches for s in b.skipped]),
        leaves=written,
        skipped=tuple(skipped),
        notices=tuple(dict.fromkeys(notices)),
        branches_created=created,
        warnings=tuple(dict.fromkeys(warnings)),
    )


def _imported_leaves(
    memory: MemoryParts, item: PortableMemory, number: int, project: str, tags: Sequence[str]
) -> list[Leaf]:
    store = memory.store
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
        _, made = chunked_leaves(
            store.config,
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
    derived = leaf_id_for(domain=domain, source=f"import:{item.source}", position=0, text=item.text)
    new_id = derived
    if item.id:
        existing = store.entry(item.id)
        if existing is None or (
            existing.kind == "leaf" and store.read_leaf(item.id).text == item.text
        ):
            new_id = item.id
    data_type = item.data_type if item.data_type in DOC_TYPE_NAMES else "GENERIC"

    def leaf(leaf_id: str) -> Leaf:
        return Leaf(
            leaf_id=leaf_id,
            text=item.text,
            timestamp=when,
            domain=domain,
            data_type=data_type,
            source=item.source,
            tags=all_tags,
            project=owner,
            extra=extra,
        )

    try:
        return [leaf(new_id)]
    except ValueError:  # an id that is not one of ours: derive one
        return [leaf(derived)]


def _import_facts(
    memory: MemoryParts, batches: Sequence[ImportBatch], id_map: dict[str, str]
) -> tuple[list[str], list[str]]:
    """Record the facts a store's timeline held, as explicit facts of their leaves; the
    notices of the facts that changed, and a warning when some could not be recorded."""
    from ihmt_facts import Fact

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
                for recorded in memory.timeline.record_facts([fact]):
                    notices.extend(recorded.notices)
            except (IhmtError, ValueError):
                left += 1
    if not left:
        return notices, []
    return notices, [f"{left} imported fact(s) could not be recorded (unknown leaf or value)"]


def _import_links(
    memory: MemoryParts,
    items: Sequence[PortableMemory],
    batches: Sequence[ImportBatch],
    id_map: dict[str, str],
) -> list[str]:
    """Flag each imported memory OUTDATED by the one that corrected it; a warning for each
    correction that could not be."""
    store = memory.store
    links = [(m.id, m.outdated_by, m.reason) for m in items if m.id and m.outdated_by]
    links += [link for b in batches for link in b.links]
    notices: list[str] = []
    done: set[tuple[str, str]] = set()
    for old, new, reason in links:
        old_id = id_map.get(old)
        new_id = id_map.get(new) or (new if store.entry(new) is not None else None)
        if old_id is None or new_id is None or old_id == new_id or (old_id, new_id) in done:
            continue
        done.add((old_id, new_id))
        current = store.read_leaf(old_id).outdated_by
        if current is not None and current.by == new_id:
            continue
        try:
            memory.mark_outdated(old_id, new_id, reason=reason or "imported")
        except (LeafNotFoundError, ValueError) as exc:
            notices.append(f"correction {old} → {new} not imported: {exc}")
    return notices
