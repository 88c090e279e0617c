"""The scale benchmark of IHMT search: the numbers SPEC §1 promises, against flat BM25.

    python tools/bench/scale.py [--sizes 50 500 5000 50000] [--seed 0] [--out FILE]

Drives ihmt-store and ihmt-navigator directly (no MCP, no chunkers): memories from
``_memories.generate`` are saved as leaves with their project and date, consolidated
into the tree, corrections applied through the store's annotations; then every query
goes through ``Navigator.search``. ``_harness.evaluate`` scores it (recall@1/@5, update
accuracy, ambiguity, abstention, false abstention, tokens, latency, reads, save and
ingest rates) and, in the same run, a flat BM25 (bm25s) over the same texts with the
same tokenizer. A cold ``search`` in a fresh process is timed too.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Answer, run
from _memories import Memory

from ihmt_navigator import Consolidator, Navigator, StoreFrequencies, summarizer_for
from ihmt_store import Correction, Leaf, Store, StoreConfig, leaf_id_for

DOMAINS = {
    "decision": "decisions",
    "environment": "software.infra",
    "preference": "preferences",
    "person": "people",
    "project": "projects",
    "distractor": "notes",
}
BATCH = 1000

COLD = textwrap.dedent(
    """
    import sys, time
    t0 = time.perf_counter()
    from ihmt_store import Store
    from ihmt_navigator import Navigator
    result = Navigator(Store.open(sys.argv[1])).search(sys.argv[2])
    print(result.status, round((time.perf_counter() - t0) * 1000, 1))
    """
)


class NavigatorSystem:
    """The store and the navigator behind the harness's ``System`` protocol."""

    name = "ihmt-navigator"

    def __init__(self, folder: Path) -> None:
        self.path = folder / "memory"
        self.store = Store.create(self.path, StoreConfig())
        freq = StoreFrequencies(self.store)
        summarizer = summarizer_for("heuristic", document_frequency=freq, total=freq.total)
        self.consolidator = Consolidator(self.store, summarizer)
        self.navigator = Navigator(self.store)
        self._domain_of: dict[str, str] = {}
        self._id_of: dict[str, str] = {}
        self.cold_ms: list[float] = []

    def _leaf(self, memory: Memory, position: int) -> Leaf:
        domain = DOMAINS.get(memory.kind)
        if domain is None:  # a correction lives where what it corrects lives
            domain = self._domain_of.get(memory.supersedes or "", "notes")
        self._domain_of[memory.id_hint] = domain
        return Leaf(
            leaf_id=leaf_id_for(domain=domain, source="agent", position=position, text=memory.text),
            text=memory.text,
            timestamp=memory.date,
            domain=domain,
            source="agent",
            project=memory.project or "",
            tags=(f"kind:{memory.kind}",),
        )

    def ingest(self, memories: Sequence[Memory]) -> list[str]:
        ids: list[str] = []
        for start in range(0, len(memories), BATCH):
            chunk = memories[start : start + BATCH]
            leaves = [self._leaf(m, start + i) for i, m in enumerate(chunk)]
            # Saved and consolidated in one batch: a leaf is written to disk once, with
            # its parent already stamped.
            with self.store.batch():
                self.store.put_leaves(leaves)
                self.consolidator.consolidate(domains={leaf.domain for leaf in leaves})
            ids += [leaf.leaf_id for leaf in leaves]
        self._id_of.update((m.id_hint, i) for m, i in zip(memories, ids, strict=True))
        return ids

    def save(self, memory: Memory) -> str:
        leaf = self._leaf(memory, 1_000_000 + len(self._id_of))
        self.store.put_leaf(leaf)
        self.consolidator.consolidate(domains=[leaf.domain])
        self._id_of[memory.id_hint] = leaf.leaf_id
        return leaf.leaf_id

    def correct(self, old_id: str, new_id: str) -> None:
        newer = self.store.entry(new_id)
        when = newer.timestamp if newer else "2026-01-01"
        self.store.annotate(old_id, outdated_by=Correction(by=new_id, date=when))

    def search(self, query: str) -> Answer:
        result = self.navigator.search(query)
        ranked = [h.id for h in result.results]
        if len(self.cold_ms) < 5 and ranked:
            self.cold_ms.append(self._cold(query))
        return Answer(
            status=result.status,
            ranked_ids=ranked,
            outdated_ids={h.id for h in result.results if h.outdated},
            tokens=result.tokens,
            files_read=result.files_read,
            bytes_read=result.bytes_read,
        )

    def _cold(self, query: str) -> float:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", COLD, str(self.path), query],
            check=True,
            capture_output=True,
            text=True,
        )
        return (time.perf_counter() - start) * 1000

    def extra_metrics(self) -> dict[str, float]:
        stats = self.store.stats()
        return {
            "cold_search_ms_p50": statistics.median(self.cold_ms) if self.cold_ms else 0.0,
            "depth": float(stats.depth),
            "unreachable": float(stats.unreachable),
        }

    def close(self) -> None:
        extra = self.extra_metrics()
        print(
            f"  tree depth {extra['depth']:.0f}, unreachable {extra['unreachable']:.0f}, "
            f"cold process search p50 {extra['cold_search_ms_p50']:.0f} ms",
            file=sys.stderr,
        )
        self.store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 5000, 50000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "scale.json"
    )
    args = parser.parse_args(argv)
    run(NavigatorSystem, args.sizes, seed=args.seed, out=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
