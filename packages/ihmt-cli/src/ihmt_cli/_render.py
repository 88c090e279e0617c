"""Turn what ``Memory`` returns into the ``--json`` objects and the human text of each command.

The JSON shapes here are the stable contract documented in the package README.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ihmt_facts import Contradiction, Fact
    from ihmt_mcp import CorrectionRecord, IngestReport, MemoryStats, TreeItem
    from ihmt_navigator import Hit, SearchResult

__all__ = [
    "conflict_json",
    "correction_line",
    "fact_json",
    "ingest_text",
    "search_json",
    "search_mode_text",
    "search_text",
    "stats_text",
    "tree_item_json",
    "tree_text",
]


def _fields(record: object, *names: str) -> dict[str, Any]:
    """``record``'s attributes ``names``, in that order, a tuple as a list (for JSON)."""
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(record, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def hit_json(hit: Hit) -> dict[str, Any]:
    """One search result."""
    return {
        **_fields(
            hit,
            "id",
            "kind",
            "content",
            "title",
            "timestamp",
            "domain",
            "project",
            "source",
            "path",
        ),
        # Four significant digits, not four decimals: in a small store where every memory
        # holds the query's words BM25 scores are tiny, and rounding showed them as 0.0.
        "score": float(f"{hit.score:.4g}"),
        **_fields(hit, "outdated", "outdated_by", "corrected_on"),
    }


def search_json(result: SearchResult) -> dict[str, Any]:
    """The ``search`` (and ``ask``) object; ``clues`` only when a clue loop used some."""
    data: dict[str, Any] = {
        "query": result.query,
        "clue": result.clue,
        "status": result.status,
        "results": [hit_json(h) for h in result.results],
        "notices": list(result.notices),
        "confidence": round(result.confidence, 4),
        "compact": result.compact,
        "tokens": result.tokens,
        "node_reads": result.node_reads,
        "leaf_reads": result.leaf_reads,
        "bytes_read": result.bytes_read,
    }
    if result.clues:
        data["clues"] = list(result.clues)
    if result.signals:
        data["signals"] = dict(result.signals)
    return data


def search_text(result: SearchResult, *, full: bool) -> str:
    """The compact answer (exactly what an agent is handed), then what it cost."""
    lines = [result.compact.rstrip()]
    if full and result.results:
        lines.append("")
        for hit in result.results:
            flag = " OUTDATED" if hit.outdated else ""
            lines.append(
                f"  {hit.id}  score {hit.score:.2f}{flag}  {hit.timestamp[:10]}  "
                f"{' > '.join(hit.path)}"
            )
    if full and result.signals:
        weighed = " · ".join(f"{name} {value:g}" for name, value in result.signals.items())
        lines += ["", f"  decided on: {weighed}"]
    lines.append(
        f"({result.tokens} tokens · read {result.node_reads} branch and {result.leaf_reads} "
        f"leaf file(s), {result.bytes_read:,} bytes)"
    )
    return "\n".join(lines)


def stats_text(stats: MemoryStats) -> str:
    """``ihmt stats`` as an aligned table."""
    domains = " · ".join(f"{name} {count}" for name, count in stats.domains) or "(none)"
    rows = [
        ("memory", stats.path),
        ("leaves", f"{stats.leaves:,} ({stats.outdated} outdated)"),
        ("branches", f"{stats.branches:,}"),
        ("depth", str(stats.depth)),
        ("domains", domains),
        ("unconsolidated", f"{stats.unconsolidated:,}"),
        ("unreachable", f"{stats.unreachable:,}"),
        ("bytes", f"{stats.bytes:,}"),
    ]
    return "\n".join(f"{name:<15} {value}" for name, value in rows)


def tree_item_json(item: TreeItem) -> dict[str, Any]:
    """One line of the outline."""
    return _fields(item, "level", "id", "kind", "domain", "title", "leaf_count", "outdated")


def tree_text(items: tuple[TreeItem, ...]) -> str:
    """An indented outline: ``+`` a branch (with its memory count), ``-`` a memory."""
    from ihmt_store import one_line

    if not items:
        return "(the memory is empty: add something with 'ihmt save' or 'ihmt ingest')"
    lines = []
    domain = None
    for item in items:
        if item.domain != domain:
            domain = item.domain
            lines.append(f"{domain}/")
        pad = "  " * (item.level + 1)
        title = one_line(item.title, 72)
        if item.kind == "branch":
            lines.append(f"{pad}+ {title}  [{item.id}] · {item.leaf_count} memories")
        else:
            flag = " OUTDATED" if item.outdated else ""
            lines.append(f"{pad}- {title}  [{item.id}]{flag}")
    return "\n".join(lines)


def ingest_text(report: IngestReport, byte_count: int) -> str:
    """What was filed where, and what was left out."""
    lines = [
        f"INGESTED {report.files - len(report.skipped)} of {report.files} item(s), "
        f"{byte_count:,} bytes → {report.leaves} memories; "
        f"{report.branches_created} new branch(es)"
    ]
    lines.extend(f"CONTRADICTION: {notice}" for notice in report.notices)
    lines.extend(f"WARNING: {warning}" for warning in report.warnings)
    return "\n".join(lines)


def fact_json(fact: Fact) -> dict[str, Any]:
    """One recorded statement."""
    return _fields(fact, "subject", "attribute", "value", "timestamp", "source", "origin")


def conflict_json(conflict: Contradiction) -> dict[str, Any]:
    """One change of a fact's value."""
    return _fields(
        conflict,
        "subject",
        "attribute",
        "old_value",
        "new_value",
        "old_date",
        "new_date",
        "old_sources",
        "new_source",
        "notice",
    )


def correction_line(correction: CorrectionRecord) -> str:
    """One correction, dated like a fact line: old text → new text (old id → new id)."""
    # The correcting memory may not be in this store (a note synced before it): no text.
    newer = f'"{correction.new_text}"' if correction.new_text else "a memory not in this store"
    return (
        f'{correction.new_date[:10]}  corrected "{correction.old_text}" '
        f"({correction.old_date[:10]}) → {newer}  "
        f"({correction.old_id} → {correction.new_id})"
    )


def search_mode_text(search: dict[str, Any]) -> str:
    """What search uses: words only (and why), or words and meaning (and what is missing)."""
    if search["mode"] != "semantic":
        return f"words only: {search['reason']}"
    missing = search["vectors_missing"] or 0
    text = f"words and meaning ({search['model']})"
    if missing:
        text += f"; {missing:,} memories lack a vector: run 'ihmt index --semantic'"
    return text
