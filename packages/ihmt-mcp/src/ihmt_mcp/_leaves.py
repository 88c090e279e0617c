"""A text into leaves: the chunkers detect and split it, each block becomes a ``Leaf``.

One pipeline for a save, an ingested file (whole or a segment at a time) and an imported
memory of another tool.
"""

from __future__ import annotations

from collections.abc import Sequence

from ihmt_chunkers import Block, Detection, DocType, chunk
from ihmt_store import Leaf, Span, StoreConfig, check_date, leaf_id_for

__all__ = ["chunked_leaves", "make_leaves"]


def _own_date(stamp: str | None) -> str | None:
    """A block's own date (a dated entry's), unless the store refuses it: an entry dated
    in the future (a plan) is dated as the rest of the text."""
    if not stamp:
        return None
    try:
        return check_date(stamp)
    except ValueError:
        return None


def make_leaves(
    blocks: Sequence[Block],
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
    """One leaf per block that holds more than white space.

    Args:
        id_source: what a leaf's id is derived from, with its position and text.
        first_position, first_line: where ``blocks`` start in their document (a large
            file's later segment).
        spans: record each leaf's lines even when there is one block.
    """
    several = spans or len(blocks) > 1
    leaves: list[Leaf] = []
    for position, block in enumerate(blocks, first_position):
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
                timestamp=_own_date(block.timestamp) or default_time,
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


def chunked_leaves(
    config: StoreConfig,
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
    """Detect and split ``body`` with the store's block sizes, then make its leaves."""
    chunked = chunk(
        body,
        filename,
        doc_type=doc_type,
        domain=domain,
        target_tokens=config.target_tokens,
        max_tokens=config.max_tokens,
    )
    detection = chunked.detection
    leaves = make_leaves(
        chunked.blocks,
        domain=detection.domain,
        data_type=detection.doc_type.value.upper(),
        source=source,
        id_source=id_source,
        tags=(*detection.tags, *tags),
        project=project,
        default_time=default_time,
    )
    return detection, leaves
