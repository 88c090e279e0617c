"""Secrets in memories that ``save`` never saw: a leaf edited by hand, or pulled from
another machine. ``save`` refuses a secret (:func:`ihmt_mcp._secrets.find_secrets`); a
file written around it is kept as it is (never deleted, never rewritten), but its secret
is not served by a search, not sent by a sync, and ``ihmt doctor`` lists it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ihmt_mcp._secrets import SecretFinding, find_secrets
from ihmt_store import MAX_LEAF_BYTES, Store

if TYPE_CHECKING:
    from ihmt_navigator import SearchResult

__all__ = ["WITHHELD", "secret_in", "secret_leaves", "withhold_lines", "withhold_secrets"]

WITHHELD = "[line withheld: it holds what looks like {kind}; remove it from the memory's file]"
"""What a search serves in place of a line that holds a secret."""

SCAN_BATCH = 500
"""Leaves read per batch by :func:`secret_leaves`."""


def secret_in(text: str) -> str:
    """What secret ``text`` seems to hold, and where (``an AWS access key, line 3``), or
    "" when none."""
    found = find_secrets(text)
    if not found:
        return ""
    return f"{found[0].kind}, line {found[0].line}"


def _withhold(text: str) -> str:
    found = find_secrets(text) if text else ()
    return withhold_lines(text, found) if found else text


def withhold_lines(text: str, found: Sequence[SecretFinding]) -> str:
    """``text`` with the lines of each finding (its first to its last) replaced by the
    :data:`WITHHELD` notice, at the line's indentation (same number of lines, so every
    other line keeps its number, and a block of code keeps its shape)."""
    lines = text.split("\n")
    for finding in found:
        for number in range(finding.line, max(finding.line, finding.last_line) + 1):
            if 0 < number <= len(lines):
                line = lines[number - 1]
                indent = line[: len(line) - len(line.lstrip())]
                lines[number - 1] = indent + WITHHELD.format(kind=finding.kind)
    return "\n".join(lines)


def withhold_secrets(result: SearchResult) -> SearchResult:
    """``result`` with every line that holds a secret replaced by a notice, in its
    rendered text and in each hit (ranking and verdict untouched). One scan of the
    whole answer when it holds none (nearly always)."""
    hits = result.results
    every = "\n".join([result.compact, *(f"{h.content}\n{h.excerpt}\n{h.title}" for h in hits)])
    if not find_secrets(every):
        return result
    withheld = tuple(
        replace(
            hit,
            content=_withhold(hit.content),
            excerpt=_withhold(hit.excerpt),
            title=_withhold(hit.title),
            passage=(
                None
                if hit.passage is None
                else replace(hit.passage, text=_withhold(hit.passage.text))
            ),
        )
        for hit in hits
    )
    return replace(result, compact=_withhold(result.compact), results=withheld)


def secret_leaves(store: Store, ids: Iterable[str] | None = None) -> Iterator[tuple[str, str, str]]:
    """``(id, path, what)`` of each leaf among ``ids`` (every leaf when None) whose file
    holds what looks like a secret. The files are read as bytes, as they are on disk: a
    hand edit is reported by ``doctor`` and adopted by the next search, not by this scan
    (a link, a file gone or over :data:`MAX_LEAF_BYTES` is skipped: ``doctor`` and
    ``rebuild`` report those)."""
    wanted = list(ids) if ids is not None else [entry.id for entry in store.iter_entries("leaf")]
    for start in range(0, len(wanted), SCAN_BATCH):
        entries = store.entries(wanted[start : start + SCAN_BATCH])
        for leaf_id, entry in entries.items():
            text = _file_text(store.path / entry.path)
            what = secret_in(text) if text else ""
            if what:
                yield leaf_id, entry.path, what


def _file_text(path: Path) -> str:
    """A leaf file's text as on disk, or "" when it is a link, gone or too big to read."""
    try:
        if path.is_symlink() or path.stat().st_size > MAX_LEAF_BYTES:
            return ""
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""
