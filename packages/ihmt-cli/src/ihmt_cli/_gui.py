"""``ihmt gui``: the local web interface over ``ihmt_mcp.Memory``.

Four screens (Set up, Explore, Diagnose, Timeline) in plain HTML/CSS/JS from
``gui_static/``, served by Starlette + uvicorn on 127.0.0.1 only. The rules that keep a
browser page on another site from reaching it:

- every ``/api/`` call carries the random token of the URL the command prints (header
  ``X-IHMT-Token`` or ``?token=``), compared in constant time: missing 401, wrong 403;
- ``Host`` must name a loopback address (DNS rebinding) and ``Origin``, when present,
  a loopback ``http://`` origin: else 400 / 403;
- static files are served from a fixed list of the folder's own files, nothing else;
- writes (create a store, forget or restore a memory, run ``ihmt install``) are POSTs of
  a JSON body of at most ``MAX_BODY`` bytes, and each needs an explicit confirmation;
- ids are checked against their shape, then against the catalog.

The memory is read-only here except ``forget`` and ``restore`` (which undoes an OUTDATED
mark); no leaf's text is ever edited. Every call into ``Memory`` runs on one worker
thread (SQLite connections stay on the thread that made them) and opens an existing
store only: the GUI never creates one implicitly.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ihmt_cli._app import CONFIG_FILE, State, command

if TYPE_CHECKING:
    import socket
    from concurrent.futures import ThreadPoolExecutor

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from ihmt_mcp import Memory
    from ihmt_navigator import Hit
    from ihmt_store import Entry, Store

__all__ = ["AGENTS", "MAX_BODY", "SCOPES", "Gui", "build_app", "gui_command", "install_argv"]

STATIC_DIR = Path(__file__).with_name("gui_static")
MAX_BODY = 64 * 1024
"""Largest POST body accepted (bytes); the biggest legitimate one is a folder path."""
TOKEN_HEADER = "x-ihmt-token"
AGENTS = ("claude-code", "codex", "opencode")
SCOPES = ("user", "project")
INSTALL_TIMEOUT = 120.0

_LOOPBACK_HOST = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?", re.IGNORECASE)
_LOOPBACK_ORIGIN = re.compile(
    r"http://(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?", re.IGNORECASE
)
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}

LIST_LIMIT = 200
"""Most memories one Recent or search list shows."""
HISTORY_LIMIT = 50
"""Most memories a leaf's correction history walks, each way."""

BAD_HOST = "bad Host: the interface answers only to 127.0.0.1"
OPEN_URL = "open the exact URL 'ihmt gui' printed"

T = TypeVar("T")


def _new_token() -> str:
    import secrets

    return secrets.token_urlsafe(32)


def _one_thread() -> ThreadPoolExecutor:
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="ihmt-gui")


class ApiError(Exception):
    """A request the API refuses: an HTTP status and one plain sentence."""

    def __init__(self, status: int, message: str, code: str = "bad_request") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


# ---------------------------------------------------------------------- the memory thread
@dataclass
class Gui:
    """The state of one ``ihmt gui`` server: the store it shows and its token."""

    store_path: Path
    home: Path
    token: str = field(default_factory=lambda: _new_token())
    _memory: Memory | None = None
    _opened: Path | None = None
    _pool: ThreadPoolExecutor = field(default_factory=lambda: _one_thread())
    _listing: _Listing | None = None

    def has_store(self) -> bool:
        return (self.store_path / CONFIG_FILE).is_file()

    async def run(self, fn: Callable[[Memory], T]) -> T:
        """Run ``fn(memory)`` on the memory thread (opening the store there on first use)."""
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._call, fn)

    def _call(self, fn: Callable[[Memory], T]) -> T:
        from dataclasses import replace

        from ihmt_mcp import Memory, Settings

        if self._memory is None or self._opened != self.store_path:
            if not self.has_store():
                raise ApiError(
                    404,
                    f"no memory at {self.store_path}; create it on the Set up screen",
                    "no_store",
                )
            if self._memory is not None:
                self._memory.close()
                self._memory = None
            settings = replace(Settings.from_env(), store_path=self.store_path)
            self._memory = Memory.open(settings)
            self._opened = self.store_path
        return fn(self._memory)

    async def offload(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the memory thread too (creating a store, switching to it)."""
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, fn)

    def listing(self, memory: Memory) -> _Listing:
        """Every memory newest first, with its projects and tags (on the memory thread).

        Rebuilt only when the store changed (its generation) or another store is shown.
        """
        store = memory.store
        generation = store.generation
        cached = self._listing
        if cached is not None and cached.store == store.path and cached.generation == generation:
            return cached
        self._listing = _Listing.of(store.path, generation, store.iter_entries("leaf"))
        return self._listing

    def close(self) -> None:
        def shut() -> None:
            if self._memory is not None:
                self._memory.close()
                self._memory = None

        self._pool.submit(shut).result(timeout=30)
        self._pool.shutdown(wait=True)


@dataclass(frozen=True)
class _Listing:
    """The memories of one store generation, newest first, and what filters them."""

    store: Path
    generation: int
    leaves: tuple[Entry, ...]
    projects: tuple[tuple[str, int], ...]
    """(project, memories), most memories first; '' is the global memories."""
    tags: tuple[tuple[str, int], ...]
    """(tag, memories), most memories first."""

    @classmethod
    def of(cls, store: Path, generation: int, entries: Iterable[Entry]) -> _Listing:
        from collections import Counter

        leaves = sorted(entries, key=lambda e: (e.timestamp, e.id), reverse=True)
        projects = Counter(e.project for e in leaves)
        tags = Counter(t for e in leaves for t in dict.fromkeys(e.tags))
        return cls(
            store=store,
            generation=generation,
            leaves=tuple(leaves),
            projects=tuple(sorted(projects.items(), key=lambda kv: (-kv[1], kv[0]))),
            tags=tuple(sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))),
        )


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


# ---------------------------------------------------------------------- the guard
class Guard:
    """ASGI middleware: loopback Host and Origin, the token on /api/, bounded POST bodies."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode("ascii")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        import hmac

        from starlette.datastructures import Headers, QueryParams

        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not _LOOPBACK_HOST.fullmatch(host):
            await _refuse(scope, receive, send, 400, BAD_HOST)
            return
        origin = headers.get("origin")
        if origin is not None and not _LOOPBACK_ORIGIN.fullmatch(origin):
            await _refuse(scope, receive, send, 403, "foreign Origin refused")
            return
        path: str = scope["path"]
        method: str = scope["method"]
        if path.startswith("/api/") or path == "/api":
            given = headers.get(TOKEN_HEADER) or QueryParams(scope["query_string"]).get("token")
            if not given:
                await _refuse(scope, receive, send, 401, "missing token: " + OPEN_URL)
                return
            if not hmac.compare_digest(given.encode("utf-8", "replace"), self.token):
                await _refuse(scope, receive, send, 403, "wrong token: " + OPEN_URL)
                return
        if method not in ("GET", "HEAD", "POST"):
            await _refuse(scope, receive, send, 405, "only GET and POST are served")
            return
        if method == "POST":
            length = headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
                await _refuse(scope, receive, send, 413, f"request body over {MAX_BODY} bytes")
                return
            if headers.get("content-type", "").split(";")[0].strip() != "application/json":
                await _refuse(scope, receive, send, 415, "POST bodies must be application/json")
                return
            receive = _bounded(receive)
        await self.app(scope, receive, send)


class _BodyTooLargeError(Exception):
    """A chunked body grew past ``MAX_BODY`` while it was read."""


def _bounded(receive: Receive) -> Receive:
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:
                raise _BodyTooLargeError
        return message

    return wrapped


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    from starlette.responses import JSONResponse

    response = JSONResponse({"error": message}, status_code=status, headers=SECURITY_HEADERS)
    await response(scope, receive, send)


# ---------------------------------------------------------------------- helpers
def _summary(entry: Entry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "kind": entry.kind,
        "title": " ".join(entry.title.split()),
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


def _checked_id(value: object) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise ApiError(400, "not a memory id", "bad_id")
    return value


def _text_param(value: object, name: str, *, limit: int = 2000, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str) or "\x00" in value or len(value) > limit:
        raise ApiError(400, f"{name} must be text of at most {limit} characters")
    if required and not value.strip():
        raise ApiError(400, f"{name} is empty")
    return value.strip()


def _folder_param(value: object, name: str) -> Path:
    text = _text_param(value, name, limit=4096, required=True)
    path = Path(text).expanduser()
    if not path.is_absolute():
        raise ApiError(400, f"{name} must be an absolute folder path, e.g. ~/.ihmt")
    return path


def _number(value: object, name: str, *, default: int, low: int, high: int) -> int:
    if value is None or value == "":
        return default
    if not isinstance(value, str) or not value.isdigit() or not low <= int(value) <= high:
        raise ApiError(400, f"{name} must be a whole number from {low} to {high}")
    return int(value)


def _filters(params: Any) -> _Filters:
    """``project=NAME`` (``global=1``: memories of no project) and ``tag=TAG``."""
    project = _text_param(params.get("project"), "the project", limit=200) or None
    if params.get("global") == "1":
        if project is not None:
            raise ApiError(400, "choose one project or the global memories, not both")
        project = ""
    tag = _text_param(params.get("tag"), "the tag", limit=200) or None
    return _Filters(project=project, tag=tag)


def _choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ApiError(400, f"{name} must be one of: {', '.join(choices)}")
    assert isinstance(value, str)
    return value


async def _json_body(request: Request) -> dict[str, Any]:
    import json

    try:
        raw = await request.body()
    except _BodyTooLargeError:
        raise ApiError(413, f"request body over {MAX_BODY} bytes", "too_large") from None
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "the body is not JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def install_argv(agent: str, scope: str, home: Path, *, dry_run: bool) -> list[str]:
    """The ``ihmt install`` child process the Set up screen runs (same interpreter)."""
    argv = [sys.executable, "-m", "ihmt_cli", "install", agent, "--scope", scope]
    argv += ["--home", str(home)]
    if dry_run:
        argv.append("--dry-run")
    return argv


def _shown_command(agent: str, scope: str, home: Path, *, dry_run: bool = False) -> str:
    import shlex

    words = ["ihmt", "install", agent, "--scope", scope, "--home", str(home)]
    if dry_run:
        words.append("--dry-run")
    return " ".join(shlex.quote(w) for w in words)


def _run_install(argv: list[str], cwd: Path | None) -> dict[str, Any]:
    import subprocess

    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ApiError(504, f"ihmt install did not finish in {INSTALL_TIMEOUT:.0f} s") from None
    return {
        "exit_code": done.returncode,
        "stdout": done.stdout.decode("utf-8", "replace"),
        "stderr": done.stderr.decode("utf-8", "replace"),
    }


def _is_temporary(path: Path) -> bool:
    import tempfile

    folders = {Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")}
    resolved = path.expanduser().resolve(strict=False)
    return any(resolved.is_relative_to(f.resolve(strict=False)) for f in folders)


def _suggested_home() -> str:
    """The memory folder Set up offers: ``IHMT_HOME`` (default ``~/.ihmt``), written with
    ``~`` when under the user's home; empty when it is a temporary folder (a demo's, a
    test's), which is no place for a memory meant to last."""
    from ihmt_mcp import Settings

    home = Settings.from_env().home
    if _is_temporary(home):
        return ""
    try:
        return str(Path("~") / home.relative_to(Path.home()))
    except (ValueError, RuntimeError):  # not under the user's home, or no home known
        return str(home)


def home_of(store_path: Path) -> Path:
    """The ``IHMT_HOME`` that holds ``store_path`` (its parent when named ihmt_memory)."""
    from ihmt_mcp import Settings

    if store_path.name == "ihmt_memory":
        return store_path.parent
    return Settings.from_env().home


# ---------------------------------------------------------------------- the API
def build_app(gui: Gui) -> Starlette:
    """The Starlette application: the static screens and the ``/api/`` routes, guarded."""
    import asyncio

    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Route

    static_files = {p.name: p for p in STATIC_DIR.iterdir() if p.is_file()}

    def ok(data: dict[str, Any], status: int = 200) -> Response:
        return JSONResponse(data, status_code=status, headers=SECURITY_HEADERS)

    def endpoint(
        fn: Callable[[Request], Awaitable[dict[str, Any]]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            from ihmt_store import IhmtError

            try:
                return ok(await fn(request))
            except ApiError as exc:
                return ok({"error": exc.message, "code": exc.code}, exc.status)
            except LookupError as exc:
                return ok({"error": _plain(exc), "code": "not_found"}, 404)
            except (IhmtError, ValueError, OSError) as exc:
                return ok({"error": _plain(exc), "code": "refused"}, 400)

        return wrapped

    async def index(request: Request) -> Response:
        return FileResponse(static_files["index.html"], headers=SECURITY_HEADERS)

    async def static(request: Request) -> Response:
        found = static_files.get(request.path_params["name"])
        if found is None:
            return ok({"error": "not found"}, 404)
        media = _CONTENT_TYPES.get(found.suffix, "application/octet-stream")
        return FileResponse(found, media_type=media, headers=SECURITY_HEADERS)

    # ------------------------------------------------------------------ reading
    @endpoint
    async def info(request: Request) -> dict[str, Any]:
        from importlib.metadata import version

        data: dict[str, Any] = {
            "store": str(gui.store_path),
            "home": str(gui.home),
            "exists": gui.has_store(),
            "version": version("ihmt-cli"),
            "suggested_home": _suggested_home(),
            "suggested_project": "" if _is_temporary(Path.cwd()) else str(Path.cwd()),
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

        return await gui.run(read)

    @endpoint
    async def node(request: Request) -> dict[str, Any]:
        item_id = _checked_id(request.path_params["item_id"])

        def read(memory: Memory) -> dict[str, Any]:
            store = memory.store
            entry = store.entry(item_id)
            if entry is None:
                raise ApiError(404, f"no memory or branch with id {item_id!r}", "not_found")
            data: dict[str, Any] = {"item": _summary(entry)}
            path = store.path_to(item_id)
            titles = store.entries(path)
            data["path"] = [
                {"id": i, "title": " ".join(titles[i].title.split())} for i in path if i in titles
            ]
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
                        "by_title": " ".join(newer.title.split()) if newer else "",
                        "date": leaf.outdated_by.date,
                        "reason": leaf.outdated_by.reason,
                    }
                )
            notices.extend(
                {
                    "kind": "corrects",
                    "by": old.id,
                    "by_title": " ".join(old.title.split()),
                    "date": old.outdated_on or "",
                    "reason": "",
                }
                for old in store.corrections_of(item_id)
            )
            data["notices"] = notices
            data["history"] = _history(store, entry) if notices else []
            return data

        return await gui.run(read)

    @endpoint
    async def search(request: Request) -> dict[str, Any]:
        from ihmt_cli._render import search_json

        params = request.query_params
        query = _text_param(params.get("q"), "the query", required=True)
        clue = _text_param(params.get("clue"), "the clue") or None
        as_of = _text_param(params.get("as_of"), "the date", limit=40) or None
        limit = _number(params.get("limit"), "limit", default=5, low=1, high=50)

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

        return await gui.run(read)

    @endpoint
    async def listing(request: Request) -> dict[str, Any]:
        """Explore's lists: the newest memories, or a search's, kept by the filters."""
        params = request.query_params
        query = _text_param(params.get("q"), "the query")
        filters = _filters(params)
        limit = _number(params.get("limit"), "limit", default=50, low=1, high=LIST_LIMIT)

        def read(memory: Memory) -> dict[str, Any]:
            data: dict[str, Any] = {"query": query, "filters": filters.to_json()}
            if not query:
                kept = [e for e in gui.listing(memory).leaves if filters.keeps(e)]
                data.update(
                    mode="recent", total=len(kept), items=[_summary(e) for e in kept[:limit]]
                )
                return data
            # Every project's memories are searched: the filters say which to keep.
            result = memory.search(
                query, project=filters.project or "", limit=LIST_LIMIT, detail="compact"
            )
            ids = _relevant(result.results)
            words_only = not ids
            # The search answers a question; a list also shows every other memory that
            # holds its words (all of them when the search abstained), best first.
            found = memory.store.candidates(
                query, limit=LIST_LIMIT, kinds=("leaf",), project=filters.project
            )
            listed = set(ids)
            ids += [c.entry.id for c in found if c.entry.id not in listed]
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
        from ihmt_cli._render import conflict_json

        subject = _text_param(request.query_params.get("subject"), "the subject", limit=200)

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

        return await gui.run(read)

    # ------------------------------------------------------------------ writing
    @endpoint
    async def forget(request: Request) -> dict[str, Any]:
        body = await _json_body(request)
        item_id = _checked_id(body.get("id"))
        reason = _text_param(body.get("reason"), "the reason", limit=500)
        if body.get("confirm") is not True:
            raise ApiError(400, "forgetting needs an explicit confirmation", "confirm")

        def write(memory: Memory) -> dict[str, Any]:
            entry = memory.store.entry(item_id)
            if entry is None or entry.kind != "leaf":
                raise ApiError(404, f"no memory with id {item_id!r}", "not_found")
            result = memory.forget(item_id, reason=reason)
            return {**result.to_json(), "message": result.render()}

        return await gui.run(write)

    @endpoint
    async def restore(request: Request) -> dict[str, Any]:
        body = await _json_body(request)
        item_id = _checked_id(body.get("id"))
        # The correction the page showed: a mark set since by another memory stays.
        seen_by = None if body.get("corrected_by") is None else _checked_id(body["corrected_by"])
        if body.get("confirm") is not True:
            raise ApiError(400, "restoring needs an explicit confirmation", "confirm")

        def write(memory: Memory) -> dict[str, Any]:
            entry = memory.store.entry(item_id)
            if entry is None or entry.kind != "leaf":
                raise ApiError(404, f"no memory with id {item_id!r}", "not_found")
            if entry.outdated_by is None:
                raise ApiError(
                    409, f"{item_id} is not OUTDATED: there is nothing to restore", "not_outdated"
                )
            return memory.restore(item_id, corrected_by=seen_by).to_json()

        return await gui.run(write)

    @endpoint
    async def setup_preview(request: Request) -> dict[str, Any]:
        params = request.query_params
        agent = _choice(params.get("agent"), "agent", AGENTS)
        scope = _choice(params.get("scope"), "scope", SCOPES)
        home = _folder_param(params.get("home"), "the memory folder")
        project_dir = _project_dir(params.get("project_dir"), scope)
        store = home / "ihmt_memory"
        data: dict[str, Any] = {
            "command": _shown_command(agent, scope, home),
            "dry_run_command": _shown_command(agent, scope, home, dry_run=True),
            "cwd": str(project_dir) if project_dir else None,
            "store": str(store),
            "store_exists": (store / CONFIG_FILE).is_file(),
        }
        argv = install_argv(agent, scope, home, dry_run=True)
        loop = asyncio.get_running_loop()
        data["preview"] = await loop.run_in_executor(None, _run_install, argv, project_dir)
        data["hooks"] = await loop.run_in_executor(None, _hooks_state, scope, project_dir)
        return data

    @endpoint
    async def setup_create(request: Request) -> dict[str, Any]:
        body = await _json_body(request)
        home = _folder_param(body.get("home"), "the memory folder")
        store = home / "ihmt_memory"

        def create() -> dict[str, Any]:
            from ihmt_mcp import Memory

            existed = (store / CONFIG_FILE).is_file()
            if store.exists() and not store.is_dir():
                raise ApiError(400, f"{store} is a file, not a folder")
            Memory.init(store).close()
            gui.store_path = store
            gui.home = home
            return {"store": str(store), "created": not existed}

        return await gui.offload(create)

    @endpoint
    async def setup_apply(request: Request) -> dict[str, Any]:
        body = await _json_body(request)
        agent = _choice(body.get("agent"), "agent", AGENTS)
        scope = _choice(body.get("scope"), "scope", SCOPES)
        home = _folder_param(body.get("home"), "the memory folder")
        project_dir = _project_dir(body.get("project_dir"), scope)
        if body.get("confirm") is not True:
            raise ApiError(400, "running ihmt install needs an explicit confirmation", "confirm")
        argv = install_argv(agent, scope, home, dry_run=False)
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(None, _run_install, argv, project_dir)
        return {**outcome, "command": _shown_command(agent, scope, home)}

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/static/{name:path}", static, methods=["GET"]),
        Route("/api/info", info, methods=["GET"]),
        Route("/api/tree", tree, methods=["GET"]),
        Route("/api/node/{item_id:path}", node, methods=["GET"]),
        Route("/api/search", search, methods=["GET"]),
        Route("/api/list", listing, methods=["GET"]),
        Route("/api/facets", facets, methods=["GET"]),
        Route("/api/timeline", timeline, methods=["GET"]),
        Route("/api/forget", forget, methods=["POST"]),
        Route("/api/restore", restore, methods=["POST"]),
        Route("/api/setup/preview", setup_preview, methods=["GET"]),
        Route("/api/setup/create", setup_create, methods=["POST"]),
        Route("/api/setup/apply", setup_apply, methods=["POST"]),
    ]
    return Starlette(routes=routes, middleware=[Middleware(Guard, token=gui.token)])


def _hooks_state(scope: str, project_dir: Path | None) -> list[dict[str, Any]]:
    """Per agent: are the recall hooks ``ihmt install`` adds there, in this scope."""
    from ihmt_cli._install import agent_paths, read_hooks

    out: list[dict[str, Any]] = []
    for agent in AGENTS:
        paths = agent_paths(agent, scope, project=project_dir)
        try:
            on: bool | None = all(read_hooks(paths).values())
        except click.ClickException:
            on = None  # a config file that does not parse: doctor says why
        out.append({"agent": agent, "on": on, "path": str(paths.hooks)})
    return out


def _project_dir(value: object, scope: str) -> Path | None:
    if scope != "project":
        return None
    folder = _folder_param(value, "the project folder")
    if not folder.is_dir():
        raise ApiError(400, f"the project folder {folder} does not exist")
    return folder


def _plain(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:
        return f"not found: {exc.args[0]}"
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.strerror}: {exc.filename}"
    return " ".join(str(exc).split()) or type(exc).__name__


# ---------------------------------------------------------------------- the command
def _listen(port: int) -> socket.socket:
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise click.ClickException(
            f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); choose another --port "
            "or --port 0 for any free one"
        ) from None
    sock.listen(64)
    return sock


@command("gui")
@click.option(
    "--port",
    type=click.IntRange(min=0, max=65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free port).",
)
@click.option("--no-browser", is_flag=True, help="Print the URL but do not open a browser.")
def gui_command(port: int, no_browser: bool) -> None:
    """Open the local web interface: Set up, Explore, Diagnose, Timeline (127.0.0.1 only)."""
    import uvicorn

    state = State.current()
    gui = Gui(store_path=state.path, home=home_of(state.path))
    app = build_app(gui)
    sock = _listen(port)
    bound = sock.getsockname()[1]
    url = f"http://127.0.0.1:{bound}/?token={gui.token}"
    if state.is_json:
        state.emit({"url": url, "port": bound, "store": str(state.path)}, url)
    else:
        click.echo(f"IHMT web interface for {state.path}")
        click.echo(url)
        click.echo("Press Ctrl+C to stop. The link holds a secret token: do not share it.")
    sys.stdout.flush()
    if not no_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        lifespan="off",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        gui.close()
