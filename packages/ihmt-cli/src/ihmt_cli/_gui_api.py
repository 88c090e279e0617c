"""The ``/api/`` routes over the memory: reading it (info, tree, node, search, list,
facets, timeline) and the two writes the interface allows (forget, restore).

Every handler checks what the request gives, then runs its work on the memory thread
(:meth:`Gui.run`); ids are checked against their shape, then against the catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ihmt_cli._gui_guard import MAX_BODY
from ihmt_cli._gui_http import (
    checked_id,
    confirmed,
    endpoint,
    gui_of,
    json_body,
    number_param,
    text_param,
)
from ihmt_cli._gui_session import ApiError
from ihmt_cli._gui_setup import AGENTS, SCOPES, is_temporary, suggested_home
from ihmt_store import one_line, terms

if TYPE_CHECKING:
    from starlette.requests import Request

    from ihmt_mcp import Memory
    from ihmt_navigator import Hit
    from ihmt_store import Entry, Store

__all__ = [
    "facets",
    "forget",
    "info",
    "listing",
    "node",
    "restore",
    "search",
    "timeline",
    "tree",
]

LIST_LIMIT = 200
"""Most memories one Recent or search list shows."""
HISTORY_LIMIT = 50
"""Most memories a leaf's correction history walks, each way."""


# ---------------------------------------------------------------------- reading
@endpoint
async def info(request: Request) -> dict[str, Any]:
    """The store shown, the versions, what Set up suggests; the totals when there is one."""
    from importlib.metadata import version

    gui = gui_of(request)
    data: dict[str, Any] = {
        "store": str(gui.store_path),
        "home": str(gui.home),
        "exists": gui.has_store(),
        "version": version("ihmt-cli"),
        "suggested_home": suggested_home(),
        "suggested_project": "" if is_temporary(Path.cwd()) else str(Path.cwd()),
        "agents": list(AGENTS),
        "scopes": list(SCOPES),
        "max_body": MAX_BODY,
    }
    if data["exists"]:

        def read(memory: Memory) -> tuple[dict[str, Any], dict[str, Any]]:
            return memory.stats().to_json(), memory.search_mode()

        data["stats"], data["search"] = await gui.run(read)
    return data


@endpoint
async def tree(request: Request) -> dict[str, Any]:
    """Each domain's top branches and memories."""

    def read(memory: Memory) -> dict[str, Any]:
        store = memory.store
        domains = []
        for trunk in store.trunk().domains:
            entries = store.entries(list(trunk.top))
            items = [_summary(entries[i]) for i in trunk.top if i in entries]
            domains.append(
                {
                    "domain": trunk.domain,
                    "leaves": trunk.leaves,
                    "branches": trunk.branches,
                    "depth": trunk.depth,
                    "items": items,
                }
            )
        return {"store": str(memory.store.path), "domains": domains}

    return await gui_of(request).run(read)


@endpoint
async def node(request: Request) -> dict[str, Any]:
    """One branch (summary, children) or memory (text, notices, correction history)."""
    item_id = checked_id(request.path_params["item_id"])

    def read(memory: Memory) -> dict[str, Any]:
        store = memory.store
        entry = store.entry(item_id)
        if entry is None:
            raise ApiError(404, f"no memory or branch with id {item_id!r}", "not_found")
        data: dict[str, Any] = {"item": _summary(entry)}
        path = store.path_to(item_id)
        titles = store.entries(path)
        data["path"] = [{"id": i, "title": one_line(titles[i].title)} for i in path if i in titles]
        if entry.kind == "branch":
            branch = store.read_branch(item_id)
            data["summary"] = branch.summary
            data["keywords"] = list(branch.keywords)
            data["children"] = [_summary(c) for c in store.children(item_id)]
            return data
        leaf = store.read_leaf(item_id)
        data["text"] = leaf.text
        data["tags"] = list(leaf.tags)
        data["data_type"] = leaf.data_type
        notices: list[dict[str, Any]] = []
        if leaf.outdated_by is not None:
            newer = store.entry(leaf.outdated_by.by)
            notices.append(
                {
                    "kind": "outdated",
                    "by": leaf.outdated_by.by,
                    "by_title": one_line(newer.title) if newer else "",
                    "date": leaf.outdated_by.date,
                    "reason": leaf.outdated_by.reason,
                }
            )
        notices.extend(
            {
                "kind": "corrects",
                "by": old.id,
                "by_title": one_line(old.title),
                "date": old.outdated_on or "",
                "reason": "",
            }
            for old in store.corrections_of(item_id)
        )
        data["notices"] = notices
        data["history"] = _history(store, entry) if notices else []
        return data

    return await gui_of(request).run(read)


@endpoint
async def search(request: Request) -> dict[str, Any]:
    """Diagnose: a search with everything it read and why it answered so."""
    from ihmt_cli._render import search_json

    params = request.query_params
    query = text_param(params.get("q"), "the query", required=True)
    clue = text_param(params.get("clue"), "the clue") or None
    as_of = text_param(params.get("as_of"), "the date", limit=40) or None
    limit = number_param(params.get("limit"), "limit", default=5, low=1, high=50)

    def read(memory: Memory) -> dict[str, Any]:
        result = memory.search(query, clue=clue, as_of=as_of, limit=limit, detail="full")
        stats = memory.stats()
        data = search_json(result)
        for hit_data, hit in zip(data["results"], result.results, strict=True):
            hit_data["path_titles"] = list(hit.path_titles)
            hit_data["matched"] = list(hit.matched)
        data["files_read"] = result.files_read
        data["coverage"] = round(result.coverage, 4)
        data["margin"] = round(result.margin, 4)
        data["store"] = {
            "leaves": stats.leaves,
            "branches": stats.branches,
            "files": stats.leaves + stats.branches,
            "bytes": stats.bytes,
        }
        return data

    return await gui_of(request).run(read)


@endpoint
async def listing(request: Request) -> dict[str, Any]:
    """Explore's lists: the newest memories, or a search's, kept by the filters."""
    gui = gui_of(request)
    params = request.query_params
    query = text_param(params.get("q"), "the query")
    filters = _filters(params)
    limit = number_param(params.get("limit"), "limit", default=50, low=1, high=LIST_LIMIT)

    def read(memory: Memory) -> dict[str, Any]:
        data: dict[str, Any] = {"query": query, "filters": filters.to_json()}
        if not query:
            kept = [e for e in gui.listing(memory).leaves if filters.keeps(e)]
            data.update(mode="recent", total=len(kept), items=[_summary(e) for e in kept[:limit]])
            return data
        # Every project's memories are searched: the filters say which to keep.
        result = memory.search(
            query, project=filters.project or "", limit=LIST_LIMIT, detail="compact"
        )
        ids = _relevant(result.results)
        words_only = not ids
        # The search answers a question; a list also shows every other memory that
        # holds its words (all of them when the search abstained), best first.
        store = memory.store
        found = store.candidates(query, limit=LIST_LIMIT, kinds=("leaf",), project=filters.project)
        # Ranking leaves out a word found in half the memories or more (it tells nothing
        # apart); a list of the memories holding the words still shows them, after.
        for word in dict.fromkeys(terms(query)):
            found += store.candidates(
                [word], limit=LIST_LIMIT, kinds=("leaf",), project=filters.project
            )
        listed = set(ids)
        ids += [i for i in dict.fromkeys(c.entry.id for c in found) if i not in listed]
        entries = memory.store.entries(ids)
        kept = [entries[i] for i in ids if i in entries and filters.keeps(entries[i])]
        data.update(
            mode="search",
            status=result.status,
            words_only=words_only,
            total=len(kept),
            items=[_summary(e) for e in kept[:limit]],
            notices=list(result.notices),
        )
        return data

    return await gui.run(read)


@endpoint
async def facets(request: Request) -> dict[str, Any]:
    """The projects and tags Explore's filters offer, with how many memories each."""
    gui = gui_of(request)

    def read(memory: Memory) -> dict[str, Any]:
        found = gui.listing(memory)
        return {
            "memories": len(found.leaves),
            "newest": found.leaves[0].timestamp if found.leaves else None,
            "projects": [{"name": n, "count": c} for n, c in found.projects],
            "tags": [{"name": n, "count": c} for n, c in found.tags],
        }

    return await gui.run(read)


@endpoint
async def timeline(request: Request) -> dict[str, Any]:
    """Each fact's current value and history, and the contradictions, by subject."""
    from ihmt_cli._render import conflict_json

    subject = text_param(request.query_params.get("subject"), "the subject", limit=200)

    def read(memory: Memory) -> dict[str, Any]:
        line = memory.timeline
        subjects = line.subjects()
        wanted = [s for s in subjects if not subject or s == subject.lower()]
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for name in wanted:
            for state in line.history(name):
                groups.setdefault((state.subject, state.attribute), []).append(
                    {
                        "value": state.value,
                        "status": state.status.value,
                        "valid_from": state.valid_from,
                        "valid_to": state.valid_to,
                        "superseded_by": state.superseded_by,
                        "sources": list(state.sources),
                        "statements": state.statements,
                    }
                )
        timelines = [
            {
                "subject": subj,
                "attribute": attr,
                "active": next((s for s in states if s["status"] == "ACTIVE"), None),
                "history": [s for s in states if s["status"] != "ACTIVE"],
            }
            for (subj, attr), states in sorted(groups.items())
        ]
        conflicts = [
            conflict_json(c)
            for c in memory.conflicts(None)
            if not subject or c.subject == subject.lower()
        ]
        return {
            "subjects": list(subjects),
            "subject": subject,
            "timelines": timelines,
            "contradictions": conflicts,
        }

    return await gui_of(request).run(read)


# ---------------------------------------------------------------------- writing
@endpoint
async def forget(request: Request) -> dict[str, Any]:
    """Delete one memory for good (confirmed)."""
    body = await json_body(request)
    item_id = checked_id(body.get("id"))
    reason = text_param(body.get("reason"), "the reason", limit=500)
    confirmed(body, "forgetting")

    def write(memory: Memory) -> dict[str, Any]:
        _leaf(memory.store, item_id)
        result = memory.forget(item_id, reason=reason)
        return {**result.to_json(), "message": result.render()}

    return await gui_of(request).run(write)


@endpoint
async def restore(request: Request) -> dict[str, Any]:
    """Undo an OUTDATED mark (confirmed): the memory is current again."""
    body = await json_body(request)
    item_id = checked_id(body.get("id"))
    # The correction the page showed: a mark set since by another memory stays.
    seen_by = None if body.get("corrected_by") is None else checked_id(body["corrected_by"])
    confirmed(body, "restoring")

    def write(memory: Memory) -> dict[str, Any]:
        entry = _leaf(memory.store, item_id)
        if entry.outdated_by is None:
            raise ApiError(
                409, f"{item_id} is not OUTDATED: there is nothing to restore", "not_outdated"
            )
        return memory.restore(item_id, corrected_by=seen_by).to_json()

    return await gui_of(request).run(write)


# ---------------------------------------------------------------------- shapes
def _leaf(store: Store, item_id: str) -> Entry:
    """The catalog entry of the memory ``item_id``; a 404 when there is no such memory."""
    entry = store.entry(item_id)
    if entry is None or entry.kind != "leaf":
        raise ApiError(404, f"no memory with id {item_id!r}", "not_found")
    return entry


def _summary(entry: Entry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "kind": entry.kind,
        "title": one_line(entry.title),
        "domain": entry.domain,
        "project": entry.project,
        "timestamp": entry.timestamp,
        "time_end": entry.time_end,
        "leaf_count": entry.leaf_count if entry.kind == "branch" else 1,
        "outdated": entry.outdated_by is not None,
        "outdated_by": entry.outdated_by,
        "outdated_on": entry.outdated_on,
        "source": entry.source,
        "tags": list(entry.tags),
        "excerpt": entry.excerpt,
        "tokens": entry.tokens,
        "size": entry.size,
    }


def _relevant(hits: Sequence[Hit]) -> list[str]:
    """The ids of a search's hits worth listing: those holding a word of the question, or
    scoring at least half the best (a meaning match); the rest are the tree's neighbours."""
    best = max((hit.score for hit in hits), default=0.0)
    return [hit.id for hit in hits if hit.matched or (best > 0 and hit.score >= best / 2)]


def _history(store: Store, entry: Entry) -> list[dict[str, Any]]:
    """The correction chain through ``entry``: what it corrected (oldest first), then
    the memory itself, then what corrected it, and what corrected that, in order."""
    older: list[tuple[Entry, str]] = []
    seen = {entry.id}
    wave = [entry.id]
    while wave and len(older) < HISTORY_LIMIT:
        nxt = []
        for item in wave:
            for old in store.corrections_of(item):
                if old.id not in seen and len(older) < HISTORY_LIMIT:
                    seen.add(old.id)
                    older.append((old, item))
                    nxt.append(old.id)
        wave = nxt
    newer: list[Entry] = []
    current = entry
    while current.outdated_by and current.outdated_by not in seen and len(newer) < HISTORY_LIMIT:
        seen.add(current.outdated_by)
        found = store.entry(current.outdated_by)
        if found is None:
            break
        newer.append(found)
        current = found

    def row(item: Entry, relation: str, by: str | None) -> dict[str, Any]:
        return {**_summary(item), "relation": relation, "corrected_by": by}

    older.sort(key=lambda pair: (pair[0].timestamp, pair[0].id))
    rows = [row(old, "corrects", by) for old, by in older]
    rows.append(row(entry, "self", entry.outdated_by))
    rows.extend(row(item, "corrected_by", item.outdated_by) for item in newer)
    return rows


@dataclass(frozen=True)
class _Filters:
    """What an Explore list keeps: one project (``''`` = global only) and one tag."""

    project: str | None = None
    tag: str | None = None

    def keeps(self, entry: Entry) -> bool:
        if self.project is not None and entry.project != self.project:
            return False
        return self.tag is None or self.tag in entry.tags

    def to_json(self) -> dict[str, Any]:
        return {"project": self.project, "tag": self.tag}


def _filters(params: Any) -> _Filters:
    """``project=NAME`` (``global=1``: memories of no project) and ``tag=TAG``."""
    project = text_param(params.get("project"), "the project", limit=200) or None
    if params.get("global") == "1":
        if project is not None:
            raise ApiError(400, "choose one project or the global memories, not both")
        project = ""
    tag = text_param(params.get("tag"), "the tag", limit=200) or None
    return _Filters(project=project, tag=tag)
