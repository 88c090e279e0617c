"""Consolidation: unparented items of a domain grouped into branches, layer by layer."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

from ihmt_navigator._summarize import ChildText, Frequencies, Summarizer, keywords_of
from ihmt_store import Branch, ChildRef, Entry, Progress, Store, now_timestamp, one_line

logger = logging.getLogger(__name__)

__all__ = ["PENDING", "ConsolidationReport", "Consolidator"]

EXCERPT_CHARS = 160
EVENTS_PER_BATCH = 64
SUMMARIES_PER_BATCH = 256
"""Pending branches summarised per store batch (one commit each) by
:meth:`Consolidator.summarize_pending`."""
PENDING = "pending"
"""The ``backend`` of a branch whose summary is still to be written: a bulk ingest groups
its memories into branches that list their children (ids, titles, spans, counts) and
leaves the summaries, which nothing reads while it runs, for afterwards
(:meth:`Consolidator.summarize_pending`). Until then the branch is titled by its first and
last child and has no summary and no keywords; a branch made over one of them is pending
too, so a summary never quotes one that is not written yet."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsolidationReport:
    """What one consolidation run did."""

    branches_created: tuple[str, ...] = ()
    """Ids of the branches written, lowest layer first."""
    repaired: tuple[str, ...] = ()
    """Children re-stamped after an interrupted run (the group was redone, not orphaned)."""
    domains: tuple[str, ...] = ()
    """Domains that changed."""
    branches_grown: tuple[str, ...] = ()
    """Partial branches a forced run filled with loose items instead of wrapping them."""

    @property
    def changed(self) -> bool:
        return bool(self.branches_created or self.repaired or self.branches_grown)


def branch_id(domain: str, layer: int, child_ids: Sequence[str]) -> str:
    """A branch id derived from its children: the same group always gets the same id."""
    digest = hashlib.sha256("\x1f".join(child_ids).encode("utf-8")).hexdigest()[:10]
    return f"N{layer}-{domain}-{digest}"


class Consolidator:
    """Runs summarization events over a store.

    When ``branch_factor`` items of one domain on one layer have no parent, they become
    the children of a new branch one layer up: the branch is written first and the
    children are stamped after, in one locked batch. The rule climbs layer by layer
    until nothing more can be grouped. Idempotent; ``force=True`` also closes partial
    groups: each fills a branch with room on the layer above (one an earlier forced run
    closed) before it becomes a branch of its own, and a branch never has a single child,
    so repeated forced runs keep the depth near log_B(n). A domain ends under one top
    branch, except for an item that had no sibling to join (the trunk references it).

    Args:
        frequencies: what a leaf's keywords are weighed against (the summarizer's own,
            as ``Memory`` builds both); the store itself when None.
        outline: branches list their children (ids, titles, spans, counts) and carry
            no summary and no keywords, made from the catalog alone: no leaf is read and
            the summarizer is never called. For a tree whose branches nobody reads as
            text (a project index: its tools answer from the symbols).
        deferred: branches are made as outlines whose summaries are still to be written
            (:data:`PENDING`); :meth:`summarize_pending` writes them. What a bulk ingest
            does: the words commit first, the summaries follow.
    """

    def __init__(
        self,
        store: Store,
        summarizer: Summarizer,
        *,
        frequencies: Frequencies | None = None,
        outline: bool = False,
        deferred: bool = False,
    ) -> None:
        self.store = store
        self.summarizer = summarizer
        self.outline = outline
        self.deferred = deferred
        self._frequencies: Frequencies = store if frequencies is None else frequencies
        self._total = 0
        self._stack = ExitStack()
        self._pending_events = 0
        self._progress: Progress | None = None
        self._grouped = 0
        self._to_group = 1
        self._absorbed: list[str] = []

    def consolidate(
        self,
        *,
        force: bool = False,
        domains: Iterable[str] | None = None,
        progress: Progress | None = None,
    ) -> ConsolidationReport:
        """Group what can be grouped; return what changed.

        Args:
            force: close partial groups too (see the class docstring).
            domains: only look at these domains (the ones a save just touched); all
                when None. Cost follows the number of loose items, not the store size.
            progress: called as ``progress(done, total, branch_id)`` after each event;
                ``total`` is the number of loose items at the start (items grouped so far
                is ``done``), a good measure of the work left.
        """
        store = self.store
        created: list[str] = []
        self._total = self._frequencies.count("leaf")
        with store.locked(), ExitStack() as stack:
            # Events are committed EVENTS_PER_BATCH at a time: one disk flush for many
            # files, and a crash loses at most one uncommitted batch (redone next run).
            self._stack = stack
            self._pending_events = 0
            stack.enter_context(store.batch())
            wanted = None if domains is None else sorted(set(domains))
            loose = (
                store.unparented()
                if wanted is None
                else [e for d in wanted for e in store.unparented(domain=d)]
            )
            repaired = self._repair(loose)
            self._progress = progress
            self._grouped = 0
            self._to_group = max(len(loose), 1)
            self._absorbed = []
            by_domain: dict[str, list[Entry]] = {}
            for entry in loose:
                by_domain.setdefault(entry.domain, []).append(entry)
            touched = []
            for domain in sorted(by_domain):
                # What was read above is still what is loose, unless repairs stamped some.
                known = None if repaired else by_domain[domain]
                grown = len(self._absorbed)
                made = self._consolidate_domain(domain, force=force, loose=known)
                if made or len(self._absorbed) > grown:
                    touched.append(domain)
                    created.extend(made)
        grown_ids = tuple(dict.fromkeys(self._absorbed))
        if created or repaired or grown_ids:
            self.refresh_root()
        if created:
            logger.info("consolidation wrote %d branch(es)", len(created))
        return ConsolidationReport(
            branches_created=tuple(created),
            repaired=tuple(repaired),
            domains=tuple(touched),
            branches_grown=grown_ids,
        )

    def _repair(self, loose: Sequence[Entry]) -> list[str]:
        """Finish stamping groups whose branch was written before a crash."""
        store = self.store
        if not loose:
            return []
        claims = store.listed_in([e.id for e in loose])
        repaired: list[str] = []
        for child, branches in sorted(claims.items()):
            for node in branches:
                if store.entry(node) is not None:
                    store.set_parent([child], node)
                    repaired.append(child)
                    break
        if repaired:
            logger.warning("finished %d interrupted consolidation stamp(s)", len(repaired))
        return repaired

    def _consolidate_domain(
        self, domain: str, *, force: bool, loose: Sequence[Entry] | None = None
    ) -> list[str]:
        store = self.store
        factor = store.config.branch_factor
        created: list[str] = []
        # Read once: under the lock only this run changes what is loose, so each new
        # branch joins the list of its layer here (in the catalog's order: oldest
        # first, then by id).
        by_layer: dict[int, list[Entry]] = {}
        for entry in store.unparented(domain=domain) if loose is None else loose:
            by_layer.setdefault(entry.layer, []).append(entry)
        layer = 0
        while True:
            loose_here = by_layer.pop(layer, [])
            higher = any(items for above, items in by_layer.items() if above > layer)
            if not loose_here and not higher:
                break
            groups: list[list[Entry]] = []
            while len(loose_here) >= factor:
                groups.append(loose_here[:factor])
                loose_here = loose_here[factor:]
            if force and loose_here:
                # A partial group first fills a branch a forced run closed before (one
                # with room, on the layer above), instead of being wrapped again: wrapping
                # it anew added a layer each run, so forced runs after each save built a
                # chain as deep as the store was long.
                loose_here, grown = self._absorb(domain, layer + 1, loose_here, factor)
                if grown is not None and by_layer.get(layer + 1):
                    above = by_layer[layer + 1]
                    fresh = store.entries([e.id for e in above])
                    by_layer[layer + 1] = [fresh[e.id] for e in above if e.id in fresh]
                if len(loose_here) == 1 and groups and factor > 2:
                    # One item over full groups made now: the last group lends it a sibling.
                    last = groups[-1]
                    groups[-1] = last[:-1]
                    loose_here = [last[-1], *loose_here]
                # Otherwise one item left over stays where it is (the trunk references it):
                # a branch over a single child is a layer that says nothing the child does
                # not, and the next forced run finds it a group.
                if len(loose_here) > 1:
                    groups.append(loose_here)
            made = [self._make_branch(domain, layer + 1, group) for group in groups]
            created.extend(made)
            if made:
                above = by_layer.setdefault(layer + 1, [])
                above.extend(store.entries(made).values())
                above.sort(key=lambda e: (e.timestamp, e.id))
            if not groups and not higher:
                break
            layer += 1
        return created

    def _absorb(
        self, domain: str, layer: int, items: Sequence[Entry], factor: int
    ) -> tuple[list[Entry], str | None]:
        """Add ``items`` to a branch on ``layer`` that has room (fewer than ``factor``
        children), rewriting it and the summaries above it; return what did not fit and
        the id of the branch that grew (None when none had room)."""
        store = self.store
        rest = list(items)
        grown: str | None = None
        while rest:
            target = store.open_branch(domain, layer, factor)
            if target is None:
                break
            kids = store.children(target.id)
            take, rest = rest[: factor - len(kids)], rest[factor - len(kids) :]
            node = self._summarized(store.read_branch(target.id), [*kids, *take])
            store.put_branch(node)
            store.set_parent([e.id for e in take], node.node_id)
            self._pending_events += 1
            self._grouped += len(take)
            for above in reversed(store.path_to(target.id)[:-1]):
                kids_above = store.children(above)
                store.put_branch(self._summarized(store.read_branch(above), kids_above))
            self._absorbed.append(node.node_id)
            grown = node.node_id
        return rest, grown

    def _make_branch(self, domain: str, layer: int, group: Sequence[Entry]) -> str:
        store = self.store
        ids = [e.id for e in group]
        node = self._summarized(
            Branch(
                node_id=branch_id(domain, layer, ids),
                layer=layer,
                domain=domain,
                title="",
                summary="",
                created=now_timestamp(),
            ),
            group,
        )
        # The branch first, then the children: were they ever to land apart, the branch
        # lists unstamped children and the next run finishes them (see _repair).
        store.put_branch(node)
        store.set_parent(ids, node.node_id)
        self._pending_events += 1
        self._grouped += len(ids)
        if self._progress is not None:
            total = max(self._to_group, self._grouped)
            self._progress(self._grouped, total, node.node_id)
        if self._pending_events >= EVENTS_PER_BATCH:
            self._stack.close()
            self._stack.enter_context(store.batch())
            self._pending_events = 0
        return node.node_id

    def _summarized(self, node: Branch, kids: Sequence[Entry]) -> Branch:
        """``node`` with its summary, child references, span and counts made from ``kids``."""
        if self.outline:
            return _outlined(node, kids)
        if self.deferred:
            return _outlined(node, kids, backend=PENDING)
        store = self.store
        children: list[ChildText] = []
        refs: list[ChildRef] = []
        leaves = iter(store.read_leaves([e.id for e in kids if e.kind == "leaf"]))
        for entry in kids:
            start: str | None
            end: str | None
            if entry.kind == "leaf":
                leaf = next(leaves)
                text = leaf.text
                keywords = keywords_of(
                    text, df=self._frequencies.document_frequencies, total=self._total
                )
                start = end = leaf.timestamp
                count = 1
            else:
                branch = store.read_branch(entry.id)
                if branch.backend == PENDING:
                    # Summarised over a summary not written yet: pending too, written after it.
                    return _outlined(node, kids, backend=PENDING)
                text = branch.summary
                keywords = branch.keywords[:6]
                start, end = branch.time_start, branch.time_end
                count = branch.leaf_count
            children.append(
                ChildText(
                    id=entry.id,
                    kind=entry.kind,
                    title=entry.title,
                    text=text,
                    keywords=keywords,
                    time_start=start,
                    time_end=end,
                    leaf_count=count,
                )
            )
            refs.append(
                ChildRef(
                    id=entry.id,
                    kind=entry.kind,
                    title=entry.title,
                    excerpt=one_line(text, EXCERPT_CHARS),
                    keywords=keywords,
                    time_start=start,
                    time_end=end,
                    leaf_count=count,
                )
            )
        summary = self.summarizer.summarize(children, domain=node.domain, layer=node.layer)
        projects = {e.project for e in kids}
        starts = [c.time_start for c in children if c.time_start]
        ends = [c.time_end for c in children if c.time_end]
        return node.evolve(
            title=summary.title,
            summary=summary.summary,
            keywords=summary.keywords,
            children=tuple(refs),
            time_start=min(starts) if starts else None,
            time_end=max(ends) if ends else None,
            leaf_count=sum(c.leaf_count for c in children),
            project=projects.pop() if len(projects) == 1 else "",
            backend=summary.backend,
        )

    def refresh(self, node_ids: Iterable[str]) -> tuple[str, ...]:
        """Re-summarise ``node_ids`` and every branch above them from their current children.

        What ``forget`` and a changed source file need: the summaries above the change are
        rewritten (lowest layer first, so each parent embeds its children's new excerpts),
        and nothing else of the tree. A branch left without children is removed. The trunk
        is rewritten when anything changed.

        Returns:
            The ids of the branches rewritten or removed.
        """
        store = self.store
        pending: set[str] = set()
        for node in node_ids:
            if store.entry(node) is not None:
                pending.update(store.path_to(node))
        entries = store.entries(sorted(pending))
        order = sorted((e for e in entries.values() if e.kind == "branch"), key=lambda e: e.layer)
        touched: list[str] = []
        self._total = self._frequencies.count("leaf")
        with store.batch():
            for entry in order:
                kids = store.children(entry.id)
                if not kids:
                    store.remove_branch(entry.id)
                else:
                    store.put_branch(self._summarized(store.read_branch(entry.id), kids))
                touched.append(entry.id)
        if touched:
            logger.info("rewrote %d branch summary(ies)", len(touched))
            self.refresh_root()
            if not self.outline:
                # The old summaries quoted what was forgotten: no trace of them in the
                # index (an outline quotes no text: ``forget`` scrubbed the leaf's own).
                store.compact()
        return tuple(touched)

    def pending(self) -> list[str]:
        """The branches whose summary is still to be written (:data:`PENDING`), lowest
        layer first. Only branches without a summary in the catalog are opened."""
        store = self.store
        maybe = sorted((e.layer, e.id) for e in store.iter_entries("branch") if not e.excerpt)
        return [node for _, node in maybe if store.read_branch(node).backend == PENDING]

    def summarize_pending(
        self,
        *,
        stop: threading.Event | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[str, ...]:
        """Write the summaries a bulk ingest left for later, lowest layer first (a parent
        quotes its children's), :data:`SUMMARIES_PER_BATCH` a commit, each batch under
        the store lock (saves go on between batches). The same summary as consolidation
        writes at once, weighed against the store as it is now. ``stop`` ends it after
        the current batch; what is left stays pending, for the next run.

        Returns:
            The ids of the branches summarised.
        """
        store = self.store
        # Every branch without a summary in the catalog: each is opened once, below, and
        # left as it is unless it is pending.
        candidates = sorted((e.layer, e.id) for e in store.iter_entries("branch") if not e.excerpt)
        done: list[str] = []
        self._total = self._frequencies.count("leaf")
        by_layer: dict[int, list[str]] = {}
        for layer, node in candidates:
            by_layer.setdefault(layer, []).append(node)
        todo = candidates
        handled = 0
        for layer in sorted(by_layer):
            ids = by_layer[layer]
            for start in range(0, len(ids), SUMMARIES_PER_BATCH):
                if stop is not None and stop.is_set():
                    break
                chunk = ids[start : start + SUMMARIES_PER_BATCH]
                with store.locked(), store.batch():
                    done.extend(self._summarize_now(chunk))
                handled += len(chunk)
                if progress is not None:
                    progress(handled, len(todo))
        if done:
            self.refresh_root()
            logger.info("wrote %d pending branch summary(ies)", len(done))
        return tuple(done)

    def _summarize_now(self, ids: Sequence[str]) -> list[str]:
        """Summarise the pending branches among ``ids`` (one layer), read afresh under
        the lock: one a save rewrote or removed meanwhile is left as it is."""
        store = self.store
        written = []
        entries = store.entries(list(ids))
        branches = []
        for node in ids:
            entry = entries.get(node)
            if entry is None or entry.kind != "branch" or entry.excerpt:
                continue
            branch = store.read_branch(node)
            if branch.backend == PENDING:
                branches.append(branch)
        # The children of the whole batch in one catalog query.
        found = store.entries([ref.id for branch in branches for ref in branch.children])
        for branch in branches:
            node = branch.node_id
            kids = [found[ref.id] for ref in branch.children if ref.id in found]
            if not kids:
                continue
            summarized = self._summarized(branch, kids)
            if summarized.backend == PENDING:
                continue  # a child still waits for its own (grouped meanwhile)
            store.put_branch(summarized)
            written.append(node)
        return written

    def refresh_root(self) -> None:
        """Rewrite ``root.json`` with each domain's top items and keywords."""
        store = self.store
        keywords: dict[str, tuple[str, ...]] = {}
        for entry in store.unparented():
            if entry.kind == "branch" and entry.domain not in keywords:
                keywords[entry.domain] = store.read_branch(entry.id).keywords[:8]
        store.refresh_root(keywords)


def _outlined(node: Branch, kids: Sequence[Entry], *, backend: str = "outline") -> Branch:
    """``node`` with child references, span and counts from the catalog rows of
    ``kids``; titled by its first and last child, with no summary and no keywords."""
    refs = tuple(
        ChildRef(
            id=entry.id,
            kind=entry.kind,
            title=entry.title,
            excerpt="",
            keywords=(),
            time_start=entry.timestamp,
            time_end=entry.time_end or entry.timestamp,
            leaf_count=entry.leaf_count or 1,
        )
        for entry in kids
    )
    first, last = kids[0].title, kids[-1].title
    projects = {entry.project for entry in kids}
    return node.evolve(
        title=first if first == last else f"{first} … {last}",
        summary="",
        keywords=(),
        children=refs,
        time_start=min((ref.time_start for ref in refs if ref.time_start), default=None),
        time_end=max((ref.time_end for ref in refs if ref.time_end), default=None),
        leaf_count=sum(ref.leaf_count for ref in refs),
        project=projects.pop() if len(projects) == 1 else "",
        backend=backend,
    )
