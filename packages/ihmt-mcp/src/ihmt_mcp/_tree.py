"""Rewriting the summaries above changed leaves, and nothing else of the tree."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from ihmt_navigator import ChildText, Summarizer, keywords_of
from ihmt_store import ChildRef, Store

logger = logging.getLogger(__name__)

__all__ = ["refresh_branches", "refresh_trunk"]

EXCERPT_CHARS = 160


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"


def refresh_branches(
    store: Store,
    summarizer: Summarizer,
    node_ids: Iterable[str],
    *,
    df: Callable[[Sequence[str]], Mapping[str, int]] | None = None,
) -> tuple[str, ...]:
    """Re-summarise ``node_ids`` and every branch above them from their current children.

    A branch left without children is removed (its parent is refreshed in turn). Lower
    layers are rewritten first, so each parent embeds its children's new excerpts.

    Returns:
        The ids of the branches rewritten or removed.
    """
    pending: set[str] = set()
    for node in node_ids:
        if store.entry(node) is not None:
            pending.update(store.path_to(node))
    touched: list[str] = []
    total = store.count()
    with store.batch():
        for node in sorted(pending, key=lambda n: _layer(store, n)):
            entry = store.entry(node)
            if entry is None or entry.kind != "branch":
                continue
            kids = store.children(node)
            if not kids:
                store.remove_branch(node)
                touched.append(node)
                continue
            texts: list[ChildText] = []
            refs: list[ChildRef] = []
            for kid in kids:
                if kid.kind == "leaf":
                    text = store.read_leaf(kid.id).text
                    keywords = keywords_of(text, df=df, total=total)
                    start: str | None = kid.timestamp
                    end: str | None = kid.timestamp
                    count = 1
                else:
                    child = store.read_branch(kid.id)
                    text = child.summary
                    keywords = child.keywords[:6]
                    start, end, count = child.time_start, child.time_end, child.leaf_count
                texts.append(
                    ChildText(
                        id=kid.id,
                        kind=kid.kind,
                        title=kid.title,
                        text=text,
                        keywords=keywords,
                        time_start=start,
                        time_end=end,
                        leaf_count=count,
                    )
                )
                refs.append(
                    ChildRef(
                        id=kid.id,
                        kind=kid.kind,
                        title=kid.title,
                        excerpt=_excerpt(text),
                        keywords=keywords,
                        time_start=start,
                        time_end=end,
                        leaf_count=count,
                    )
                )
            branch = store.read_branch(node)
            summary = summarizer.summarize(texts, domain=branch.domain, layer=branch.layer)
            starts = [t.time_start for t in texts if t.time_start]
            ends = [t.time_end for t in texts if t.time_end]
            projects = {k.project for k in kids}
            store.put_branch(
                branch.evolve(
                    title=summary.title,
                    summary=summary.summary,
                    keywords=summary.keywords,
                    children=tuple(refs),
                    time_start=min(starts) if starts else None,
                    time_end=max(ends) if ends else None,
                    leaf_count=sum(t.leaf_count for t in texts),
                    project=projects.pop() if len(projects) == 1 else "",
                    backend=summary.backend,
                )
            )
            touched.append(node)
    if touched:
        logger.info("rewrote %d branch summary(ies)", len(touched))
    return tuple(touched)


def _layer(store: Store, node: str) -> int:
    entry = store.entry(node)
    return entry.layer if entry is not None else 0


def refresh_trunk(store: Store) -> None:
    """Rewrite ``root.json`` with each domain's top keywords."""
    keywords: dict[str, tuple[str, ...]] = {}
    for entry in store.unparented():
        if entry.kind == "branch" and entry.domain not in keywords:
            keywords[entry.domain] = store.read_branch(entry.id).keywords[:8]
    store.refresh_root(keywords)
