"""Branch summaries after the words: a bulk ingest commits its memories, facts and branches,
and writes the branches' summaries afterwards; until then the branches say they have none,
and nothing acknowledged depends on them (a fill stopped or failing half-way loses no memory
and the next one finishes)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from ihmt_mcp import Memory, fill_summaries
from ihmt_mcp._summary_fill import INLINE_SUMMARIES, pending_summaries
from ihmt_mcp._vector_fill import VectorFill
from ihmt_navigator import PENDING, ChildText, Consolidator, HeuristicSummarizer, NodeSummary
from ihmt_store import Store

ENTRIES = INLINE_SUMMARIES + 150


def _journal(folder: Path, count: int) -> list[str]:
    """``count`` dated entries over three files; the lines written."""
    folder.mkdir()
    lines = [
        f"2024-{1 + n % 12:02d}-{1 + n % 28:02d} Host node{n} in rack {n % 40} runs agent {n}."
        for n in range(count)
    ]
    for part in range(3):
        (folder / f"log-{part}.md").write_text("\n".join(lines[part::3]) + "\n", "utf-8")
    return lines


def _lost(store: Store, lines: Sequence[str]) -> int:
    held: set[str] = set()
    for leaf in store.iter_leaves():
        held.update(leaf.text.splitlines())
    return sum(1 for line in lines if line not in held)


def _backends(store: Store) -> set[str]:
    return {store.read_branch(e.id).backend for e in store.iter_entries("branch")}


def test_a_large_ingest_writes_its_summaries_after_the_words(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "store", semantic="off")
    try:
        lines = _journal(tmp_path / "notes", ENTRIES)
        report = memory.ingest([tmp_path / "notes"], project="")
        store = memory.store
        assert report.leaves == ENTRIES and _lost(store, lines) == 0
        waiting = pending_summaries(memory)
        assert waiting == report.branches_created == store.count("branch") > 0
        assert any(f"{waiting:,} branches of the tree have no summary yet" in w for w in
                   report.warnings)  # fmt: skip
        # The words answer meanwhile, and a branch lists its children without a summary.
        result = memory.search("which host runs agent 1717?", project="")
        assert result.status == "found" and "node1717" in result.results[0].content
        top = next(e for e in store.iter_entries("branch"))
        outline = store.read_branch(top.id)
        assert outline.backend == PENDING and outline.summary == "" and outline.children

        filled = fill_summaries(memory, report)
        assert filled is not None
        assert not any("no summary yet" in w for w in filled.warnings)
        assert pending_summaries(memory) == 0 and _backends(store) == {"heuristic"}
        # What consolidation writes at once over the same children, against this store.
        written = store.read_branch(top.id)
        again = Consolidator(store, memory.summarizer, frequencies=store)
        again.refresh([top.id])
        redone = store.read_branch(top.id)
        assert written.summary and (written.title, written.summary, written.keywords) == (
            redone.title,
            redone.summary,
            redone.keywords,
        )
        assert [c.id for c in written.children] == [c.id for c in outline.children]
    finally:
        memory.close()


def test_a_small_ingest_writes_its_summaries_before_it_returns(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "store", semantic="off")
    try:
        _journal(tmp_path / "notes", 60)
        report = memory.ingest([tmp_path / "notes"], project="")
        assert report.branches_created > 0 and pending_summaries(memory) == 0
        assert not any("no summary yet" in w for w in report.warnings)
        assert _backends(memory.store) == {"heuristic"}
    finally:
        memory.close()


def test_the_fill_stops_between_batches_and_the_next_one_finishes(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "store", semantic="off")
    try:
        lines = _journal(tmp_path / "notes", ENTRIES)
        memory.ingest([tmp_path / "notes"], project="")
        waiting = pending_summaries(memory)
        stop = threading.Event()
        fill_summaries(memory, None, lambda done, total: stop.set(), stop=stop)
        left = pending_summaries(memory)
        assert 0 < left < waiting  # one batch committed, the rest wait
        # The MCP server's fill finishes them, before any vector.
        VectorFill(lambda: Memory(Store.open(tmp_path / "store"), semantic="off")).run()
        assert pending_summaries(memory) == 0 and _lost(memory.store, lines) == 0
    finally:
        memory.close()


class _Crashing(HeuristicSummarizer):
    """The real summarizer, failing on its ``after``-th call: a fill killed mid-batch."""

    def __init__(self, after: int, inner: HeuristicSummarizer) -> None:
        super().__init__()
        self.calls, self.after, self.inner = 0, after, inner

    def summarize(self, children: Sequence[ChildText], *, domain: str, layer: int) -> NodeSummary:
        self.calls += 1
        if self.calls == self.after:
            raise RuntimeError("killed")
        return self.inner.summarize(children, domain=domain, layer=layer)


def test_a_fill_that_fails_mid_batch_loses_nothing(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "store", semantic="off")
    try:
        lines = _journal(tmp_path / "notes", ENTRIES)
        memory.ingest([tmp_path / "notes"], project="")
        store = memory.store
        waiting = pending_summaries(memory)
        crashing = _Crashing(300, HeuristicSummarizer(store))  # in the second batch
        with pytest.raises(RuntimeError, match="killed"):
            Consolidator(store, crashing, frequencies=store).summarize_pending()
        left = pending_summaries(memory)
        assert 0 < left < waiting and _lost(store, lines) == 0
        assert store.count("leaf") == ENTRIES
    finally:
        memory.close()
    reopened = Memory(Store.open(tmp_path / "store"), semantic="off")
    try:
        fill_summaries(reopened)
        assert pending_summaries(reopened) == 0 and _lost(reopened.store, lines) == 0
        assert _backends(reopened.store) == {"heuristic"}
    finally:
        reopened.close()
