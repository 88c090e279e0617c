"""The save workflow: refuse what must not be stored (empty, too large, a secret), file
and split the text, store it, read its facts, settle ``replaces=``, consolidate. What
:meth:`Memory.save` runs."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING

from ihmt_chunkers import BinaryContentError
from ihmt_mcp._arguments import data_type_of, parse_content_type, parse_date, parse_domain
from ihmt_mcp._leaves import chunked_leaves
from ihmt_mcp._records import FiledAs, ReplaceOutcome, SaveResult
from ihmt_mcp._types import ContentType
from ihmt_mcp.errors import ContentTooLargeError, EmptyContentError, SecretRefusedError
from ihmt_store import now_timestamp

if TYPE_CHECKING:
    from ihmt_mcp._parts import MemoryParts

logger = logging.getLogger(__name__)

__all__ = ["MAX_SAVE_CHARS", "save_memory"]

MAX_SAVE_CHARS = 200_000
"""A single ``save`` above this is refused: memories are facts, not archives."""


def save_memory(
    memory: MemoryParts,
    content: str,
    domain: str = "general",
    content_type: ContentType = "auto",
    replaces: str = "",
    project: str | None = None,
    date: str | date | datetime | None = None,
    tags: Sequence[str] = (),
    source: str = "agent",
) -> SaveResult:
    """What :meth:`Memory.save` does (its docstring says what it raises)."""
    from ihmt_mcp._replaces import settle_replace
    from ihmt_mcp._secrets import find_secrets, normalise

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
    doc_type = parse_content_type(content_type)
    wanted_domain = parse_domain(domain)
    when = parse_date(date)
    proj = memory._project(project)
    try:
        detection, leaves = chunked_leaves(
            memory.store.config,
            content,
            None,
            doc_type=doc_type,
            domain=wanted_domain,
            source=source,
            id_source=f"{source}:{proj}",
            tags=tags,
            project=proj,
            default_time=when or now_timestamp(),
        )
    except BinaryContentError:
        raise ValueError("the content is binary data, not text; save it as words") from None
    if not leaves:
        raise EmptyContentError()
    target = memory._find_replaced(replaces, proj) if replaces.strip() else None
    with memory.store.batch():
        stored = memory.store.put_leaves(leaves)
        memory._write_vectors(stored)
    ids = tuple(leaf.leaf_id for leaf in stored)
    logger.info("saved %d leaf(s) in %s", len(ids), detection.domain)
    notices = memory._ingest_facts(ids)
    outcome = ReplaceOutcome(status="none")
    if target is not None:
        outcome = settle_replace(target, ids, replaces, memory._supersede)
    report = memory._consolidate_domains({leaf.domain for leaf in stored})
    return SaveResult(
        ids=ids,
        filed_as=FiledAs(
            doc_type=data_type_of(detection.doc_type),
            domain=detection.domain,
            tags=tuple(dict.fromkeys((*detection.tags, *tags))),
        ),
        project=proj,
        timestamp=stored[0].timestamp,
        notices=notices,
        replaced=outcome,
        branches_created=len(report.branches_created),
    )
