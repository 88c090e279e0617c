"""The scale benchmark of IHMT search: the numbers SPEC §1 promises, against flat BM25.

    python tools/bench/scale.py [--sizes 50 500 5000 50000] [--seed 0] [--out FILE]
                                [--through navigator|memory|server]

Drives ihmt-store and ihmt-navigator directly (no MCP, no chunkers): memories from
``_memories.generate`` are saved as leaves with their project and date, consolidated
into the tree, corrections applied through the store's annotations; then every query
goes through ``Navigator.search``. ``_harness.evaluate`` scores it (recall@1/@5, update
accuracy, ambiguity, abstention, false abstention, tokens, latency, reads, save and
ingest rates) and, in the same run, a flat BM25 (bm25s) over the same texts with the
same tokenizer. A cold ``search`` in a fresh process is timed too.

``--through memory`` runs the same corpus through ``ihmt_mcp.Memory`` instead: every
memory is a ``Memory.save`` (detection, facts, incremental consolidation), a correction
is saved with ``replaces=`` (the first words of what it corrects) and only settled with
``mark_outdated`` when that did not resolve it; ``--through server`` ingests the same way,
then asks every query and times every save as a stdio round trip to ``python -m ihmt_mcp``.

``--semantic`` turns the semantic layer on (the ``[semantic]`` extra): the navigator
system embeds every memory as it ingests (so the ingest rate is the backfill rate) and
on every timed save, and fuses meaning into every search; through Memory or the server
it sets ``IHMT_SEMANTIC=on`` (``off`` without the flag), so both runs are comparable.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import re
import statistics
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Answer, run
from _memories import Memory

from ihmt_navigator import (
    Consolidator,
    Navigator,
    VectorIndex,
    load_embedder,
    summarizer_for,
)
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
    from ihmt_navigator import Navigator, VectorIndex, load_embedder
    store = Store.open(sys.argv[1])
    vectors = VectorIndex(store, load_embedder("on")[0]) if sys.argv[3] == "1" else None
    result = Navigator(store, vectors=vectors).search(sys.argv[2])
    print(result.status, round((time.perf_counter() - t0) * 1000, 1))
    """
)


class NavigatorSystem:
    """The store and the navigator behind the harness's ``System`` protocol."""

    name = "ihmt-navigator"

    def __init__(self, folder: Path, *, semantic: bool = False) -> None:
        self.path = folder / "memory"
        self.store = Store.create(self.path, StoreConfig())
        summarizer = summarizer_for("heuristic", frequencies=self.store)
        self.consolidator = Consolidator(self.store, summarizer, frequencies=self.store)
        self.vectors: VectorIndex | None = None
        self.embed_s = 0.0
        self.embedded = 0
        if semantic:
            embedder, mode = load_embedder("on")
            if embedder is None:
                raise SystemExit(f"--semantic: {mode.reason}")
            self.vectors = VectorIndex(self.store, embedder)
            self.name = f"ihmt-navigator + {embedder.name}"
        self.navigator = Navigator(self.store, vectors=self.vectors)
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
            self._embed(leaves)
            ids += [leaf.leaf_id for leaf in leaves]
        self._id_of.update((m.id_hint, i) for m, i in zip(memories, ids, strict=True))
        return ids

    def save(self, memory: Memory) -> str:
        leaf = self._leaf(memory, 1_000_000 + len(self._id_of))
        with self.store.batch():  # the save and its vector in one locked step, as Memory does
            self.store.put_leaf(leaf)
            self._embed([leaf])
        self.consolidator.consolidate(domains=[leaf.domain])
        self._id_of[memory.id_hint] = leaf.leaf_id
        return leaf.leaf_id

    def _embed(self, leaves: Sequence[Leaf]) -> None:
        if self.vectors is None:
            return
        started = time.perf_counter()
        for start in range(0, len(leaves), 64):  # the batch of a backfill
            chunk = leaves[start : start + 64]
            self.vectors.write({leaf.leaf_id: leaf.text for leaf in chunk})
        self.embed_s += time.perf_counter() - started
        self.embedded += len(leaves)

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
            [sys.executable, "-c", COLD, str(self.path), query, "1" if self.vectors else "0"],
            check=True,
            capture_output=True,
            text=True,
        )
        return (time.perf_counter() - start) * 1000

    def extra_metrics(self) -> dict[str, float]:
        stats = self.store.stats()
        return {
            "embedded_per_s": self.embedded / self.embed_s if self.embed_s else 0.0,
            "cold_search_ms_p50": statistics.median(self.cold_ms) if self.cold_ms else 0.0,
            "depth": float(stats.depth),
            "unreachable": float(stats.unreachable),
        }

    def close(self) -> None:
        extra = self.extra_metrics()
        print(
            f"  tree depth {extra['depth']:.0f}, unreachable {extra['unreachable']:.0f}, "
            f"cold process search p50 {extra['cold_search_ms_p50']:.0f} ms"
            + (f", embedded {extra['embedded_per_s']:.0f} memories/s" if self.vectors else ""),
            file=sys.stderr,
        )
        self.store.close()


class MemorySystem:
    """``ihmt_mcp.Memory``: the composition the MCP server and the CLI drive."""

    name = "ihmt-mcp Memory"

    def __init__(self, folder: Path) -> None:
        from ihmt_mcp import Memory, Settings

        self.home = folder / "home"
        self.memory = Memory.open(Settings.for_home(self.home, cwd=folder))
        self._text_of: dict[str, str] = {}
        self._id_of: dict[str, str] = {}
        self.replaced = 0
        self.replaces_asked = 0
        self.replace_outcomes: Counter[str] = Counter()
        self._shift_days = 0

    def _save(self, memory: Memory) -> str:
        replaces = ""
        if memory.supersedes and memory.supersedes in self._text_of:
            replaces = " ".join(self._text_of[memory.supersedes].split()[:8])
            self.replaces_asked += 1
        result = self.memory.save(
            memory.text, project=memory.project or "", date=self._dated(memory), replaces=replaces
        )
        if replaces:
            outcome = result.replaced.status
            if outcome == "replaced":
                right = result.replaced.replaced == (self._id_of.get(memory.supersedes or ""),)
                outcome = "replaced the right memory" if right else "replaced another memory"
                self.replaced += right
            self.replace_outcomes[outcome] += 1
        self._text_of[memory.id_hint] = memory.text
        self._id_of[memory.id_hint] = result.ids[0]
        return result.ids[0]

    def _dated(self, memory: Memory) -> str:
        """The memory's date, moved back by the same number of days for every memory when
        the corpus runs past today (a save dated in the future is refused)."""
        when = datetime.date.fromisoformat(memory.date[:10])
        return (when - datetime.timedelta(days=self._shift_days)).isoformat()

    def ingest(self, memories: Sequence[Memory]) -> list[str]:
        last = max((datetime.date.fromisoformat(m.date[:10]) for m in memories), default=None)
        today = datetime.date.today()
        room = datetime.timedelta(days=60)  # the timed saves come up to 40 days later
        if last is not None and last + room > today:
            self._shift_days = (last + room - today).days
        return [self._save(m) for m in memories]

    def save(self, memory: Memory) -> str:
        return self._save(memory)

    def correct(self, old_id: str, new_id: str) -> None:
        entry = self.memory.store.entry(old_id)
        if entry is not None and entry.outdated_by != new_id:
            self.memory.mark_outdated(old_id, new_id)

    def search(self, query: str) -> Answer:
        result = self.memory.search(query)
        return Answer(
            status=result.status,
            ranked_ids=[h.id for h in result.results],
            outdated_ids={h.id for h in result.results if h.outdated},
            tokens=result.tokens,
            files_read=result.files_read,
            bytes_read=result.bytes_read,
        )

    def close(self) -> None:
        stats = self.memory.stats()
        share = self.replaced / self.replaces_asked if self.replaces_asked else 0.0
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.replace_outcomes.items()))
        print(
            f"  through Memory: replaces= resolved the right memory {share:.1%} of "
            f"{self.replaces_asked} ({outcomes}); depth {stats.depth}, "
            f"unreachable {stats.unreachable}",
            file=sys.stderr,
        )
        self.memory.close()


class ServerSystem(MemorySystem):
    """Ingest through ``Memory``; then every query and timed save is an MCP stdio round trip."""

    name = "ihmt-mcp server (stdio)"

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self._portal_cm: Any = None
        self._portal: Any = None
        self._session: Any = None
        self._holder: Any = None
        self._done: Any = None

    def _connect(self) -> None:
        import anyio
        from anyio.from_thread import start_blocking_portal
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        # Started outside any git repository, like the in-process Memory (cwd=folder):
        # the server would otherwise take this repository as the current project and
        # rank the corpus's global memories above its projects' ones.
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ihmt_mcp"],
            env={
                "IHMT_HOME": str(self.home),
                "IHMT_SEMANTIC": os.environ.get("IHMT_SEMANTIC", "auto"),
            },
            cwd=str(self.home.parent),
        )
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()

        async def hold(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            # One task owns the session from start to end (anyio cancel scopes require it).
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self._done = anyio.Event()
                task_status.started(session)
                await self._done.wait()

        self._holder, self._session = self._portal.start_task(hold)

    def _call(self, tool: str, arguments: dict[str, Any]) -> str:
        if self._session is None:
            self._connect()
        result = self._portal.call(self._session.call_tool, tool, arguments)
        return "\n".join(getattr(c, "text", "") for c in result.content)

    def save(self, memory: Memory) -> str:
        text = self._call("save_memory", {"content": f"{memory.text} (as of {memory.date})"})
        return text.split()[2] if text.startswith("SAVED") else ""

    def search(self, query: str) -> Answer:
        text = self._call("search_memory", {"query": query, "detail": "full"})
        status = (
            "found"
            if text.startswith("FOUND")
            else "ambiguous"
            if text.startswith("AMBIGUOUS")
            else "not_found"
        )
        ids = re.findall(r"\((L-[\w.-]+)\)", text)
        flagged = {m.group(1) for m in re.finditer(r"\[OUTDATED\][^\n]*\((L-[\w.-]+)\)", text)}
        return Answer(
            status=status,
            ranked_ids=list(dict.fromkeys(ids)),
            outdated_ids=flagged,
            tokens=len(text) // 4,
        )

    def close(self) -> None:
        if self._session is not None:
            self._portal.call(self._done.set)
            self._holder.result(timeout=60)
            self._portal_cm.__exit__(None, None, None)
        super().close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 5000, 50000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results" / "scale.json"
    )
    parser.add_argument(
        "--through",
        choices=("navigator", "memory", "server"),
        default="navigator",
        help="drive the store and navigator directly, ihmt_mcp.Memory, or the stdio server",
    )
    parser.add_argument(
        "--semantic", action="store_true", help="with the semantic layer (the [semantic] extra)"
    )
    args = parser.parse_args(argv)
    systems = {"navigator": NavigatorSystem, "memory": MemorySystem, "server": ServerSystem}
    out = args.out
    if args.through != "navigator" and out.name == "scale.json":
        out = out.with_name(f"scale_{args.through}.json")
    if args.semantic and out.name.startswith("scale"):
        out = out.with_name(out.stem + "_semantic.json")
    factory: Any = systems[args.through]
    if args.through == "navigator":
        factory = functools.partial(NavigatorSystem, semantic=args.semantic)
    else:  # Memory and the server read it from the environment, as a user's would
        os.environ["IHMT_SEMANTIC"] = "on" if args.semantic else "off"
    run(factory, args.sizes, seed=args.seed, out=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
