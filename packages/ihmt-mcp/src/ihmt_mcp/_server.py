"""The stdio MCP server: ten thin tools over one :class:`Memory`."""

from __future__ import annotations

import logging
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import unquote, urlparse

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from ihmt_mcp._files import confine_project
from ihmt_mcp._settings import Settings, find_project_root
from ihmt_mcp.errors import USER_ERRORS, plain_message

if TYPE_CHECKING:
    from ihmt_mcp._memory import Memory
    from ihmt_mcp._session import FileReads, Scratch
    from ihmt_mcp._types import ContentType
    from ihmt_mcp.sync import BackgroundSync

logger = logging.getLogger(__name__)

_Fn = TypeVar("_Fn", bound=Callable[..., Any])

__all__ = ["INSTRUCTIONS", "TOOL_NAMES", "build_server", "main"]

INSTRUCTIONS = (
    "Long-term memory shared by all the user's agents and sessions. Search it before answering "
    "anything that depends on earlier sessions; save durable facts (decisions and why, setup, "
    "preferences, people, corrections) with their date. Never guess on AMBIGUOUS: ask or give a "
    "clue. Always relay OUTDATED and CONTRADICTION notices. Never save secrets."
)

TOOL_NAMES = (
    "search_memory",
    "save_memory",
    "mark_outdated",
    "project_map",
    "find_code",
    "read_file",
    "note",
    "recall",
    "digest_output",
    "forget_memory",
)

_READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
_ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_SETTLE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

MAX_NOTE_CHARS = 200_000
"""A note is a few lines to keep through a compaction, never a file."""
MAX_OUTPUT_CHARS = 20_000_000
"""digest_output keeps the whole text for recall: a long log fits, an endless stream not."""
MAX_MESSAGE_CHARS = 300
"""An error sentence may quote what the client sent (a 100 KB id): it is clipped to this."""


def _text(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def _sentence(exc: BaseException) -> str:
    """One plain sentence from an error: the first line of its :func:`plain_message`,
    clipped, capitalised, with a full stop."""
    if isinstance(exc, OSError) and exc.strerror and not str(exc).startswith(exc.strerror):
        # The tools' own wording for a system error, "<strerror> <file>", without the
        # colon plain_message puts in (and also when no file is named).
        text = f"{exc.strerror}{f' {exc.filename}' if exc.filename else ''}"
    else:
        message = plain_message(exc).strip()
        text = message.splitlines()[0] if message else type(exc).__name__
    if len(text) > MAX_MESSAGE_CHARS:
        text = f"{text[:MAX_MESSAGE_CHARS]}…(+{len(text) - MAX_MESSAGE_CHARS:,} chars)"
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


class _Service:
    """What the tools share: the memory (opened on first use), the session state, the roots."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._memory: Memory | None = None
        self._scratch: Scratch | None = None
        self._reads: FileReads | None = None
        self._roots: tuple[Path, ...] | None = None
        # Tools run on worker threads so the event loop always answers. The memory (a
        # store, its index connection, lazily built parts) is used by one tool at a time;
        # the session tools have their own lock, so a slow save never holds up a note.
        self.memory_lock = threading.Lock()
        self.session_lock = threading.Lock()

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            from ihmt_mcp._memory import Memory

            self._memory = Memory.open(self.settings)
        return self._memory

    @property
    def scratch(self) -> Scratch:
        if self._scratch is None:
            from ihmt_mcp._session import Scratch

            self._scratch = Scratch()
        return self._scratch

    @property
    def reads(self) -> FileReads:
        if self._reads is None:
            from ihmt_mcp._session import FileReads

            self._reads = FileReads()
        return self._reads

    # Resolving a path and looking for a git root touch the disk (a network mount may
    # hang): they run on a worker thread, like the tools' work, never on the event loop.
    async def roots(self, ctx: Context[Any, Any] | None) -> tuple[Path, ...]:
        """The client's roots (asked once per session), else the working directory."""
        if self._roots is None:
            self._roots = await _client_roots(ctx)
        return self._roots or (await anyio.to_thread.run_sync(self.settings.cwd.resolve),)

    async def code_roots(self, ctx: Context[Any, Any] | None) -> tuple[Path, ...]:
        """Where code tools may index: the client's roots, else the cwd's git root."""
        await self.roots(ctx)
        if self._roots:
            return self._roots

        def cwd_root() -> Path:
            cwd = self.settings.cwd.resolve()
            return find_project_root(cwd) or cwd

        return (await anyio.to_thread.run_sync(cwd_root),)

    async def project(self, ctx: Context[Any, Any] | None) -> Callable[[], str]:
        """How to name the project of this session (IHMT_PROJECT, the client's root, or
        the cwd's git root): called on the tool's worker thread, as part of its work (a
        thread hop of its own would cost a search more than the lookup)."""
        if self.settings.project is not None:
            name = self.settings.project.strip()
            return lambda: name
        if self._roots is None:
            self._roots = await _client_roots(ctx)
        if self._roots:
            first = self._roots[0]
            return lambda: (find_project_root(first) or first).name
        return self.settings.default_project


async def _client_roots(ctx: Context[Any, Any] | None) -> tuple[Path, ...]:
    if ctx is None:
        return ()
    try:
        caps = ctx.client_capabilities
        if caps is None or caps.roots is None:
            return ()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # roots are deprecated in the newest protocol only
            listed = await ctx.session.list_roots()
    except Exception as exc:  # noqa: BLE001 - a client that cannot list roots just has none
        logger.info("client roots unavailable: %s", type(exc).__name__)
        return ()
    paths = [urlparse(str(root.uri)) for root in listed.roots]
    local = [Path(unquote(uri.path)) for uri in paths if uri.scheme == "file"]
    return await anyio.to_thread.run_sync(lambda: tuple(path.resolve() for path in local))


async def _run(name: str, work: Callable[[], str], lock: threading.Lock) -> CallToolResult:
    """Run one tool's blocking ``work`` on a worker thread, one at a time per ``lock``."""

    def guarded() -> CallToolResult:
        with lock:
            return _guard(name, work)

    return await anyio.to_thread.run_sync(guarded)


def _guard(name: str, work: Callable[[], str]) -> CallToolResult:
    """Run one tool; any failure becomes a tool error with one plain sentence."""
    try:
        return _text(work())
    except USER_ERRORS as exc:
        logger.info("%s refused: %s", name, type(exc).__name__)
        return _text(_sentence(exc), error=True)
    except Exception:  # the protocol edge: a bug must not reach the client as a traceback
        logger.exception("%s failed unexpectedly", name)
        return _text(
            f"{name} failed because of an internal error; the details are in the server log.",
            error=True,
        )


def build_server(settings: Settings | None = None) -> MCPServer:
    """The IHMT MCP server over the memory ``settings`` point at (nothing is opened yet)."""
    service = _Service(settings or Settings.from_env())
    tools: list[Tool] = []

    def tool(annotations: ToolAnnotations) -> Callable[[_Fn], _Fn]:
        def register(fn: _Fn) -> _Fn:
            made = Tool.from_function(fn, annotations=annotations, structured_output=False)
            # Titles repeat the parameter names; without them tools/list stays small.
            made.parameters = _untitled(made.parameters)
            tools.append(made)
            return fn

        return register

    @tool(_READ)
    async def search_memory(
        query: str,
        ctx: Context[Any, Any],
        clue: str | None = None,
        detail: str = "compact",
        as_of: str | None = None,
        alternatives: list[str] | None = None,
    ) -> CallToolResult:
        """Search long-term memory; call before answering anything that may depend on earlier sessions. FOUND: best memory with date and project; relay every OUTDATED note and answer with the current version. AMBIGUOUS: never guess; ask the user or retry with clue (place, date, project, surname). NOT FOUND: say you do not know. alternatives: up to 4 other phrasings of the same question in other words (e.g. ["database of billing", "DB engine", "Postgres"]), tried when it is NOT FOUND as asked. detail="full" adds ids and paths; as_of="YYYY-MM-DD" answers as of then."""  # noqa: E501
        project = await service.project(ctx)
        return await _run(
            "search_memory",
            lambda: (
                service.memory.search(
                    query,
                    clue=clue,
                    detail=detail,
                    as_of=as_of,
                    project=project(),
                    alternatives=alternatives or (),
                ).compact
            ),
            service.memory_lock,
        )

    @tool(_ADD)
    async def save_memory(
        content: str,
        ctx: Context[Any, Any],
        domain: str = "general",
        content_type: str = "auto",
        replaces: str = "",
    ) -> CallToolResult:
        """Save something durable: a decision and why, setup, a preference, a person, a correction. One fact per call, with its date when known; filed automatically under the current project. If it corrects an earlier memory, pass replaces="a few words about the old one"; if several fit, the reply gives the exact mark_outdated call. Relay CONTRADICTION notices. Secrets (keys, tokens, passwords) are refused."""  # noqa: E501
        project = await service.project(ctx)
        return await _run(
            "save_memory",
            lambda: service.memory.save(
                content,
                domain=domain,
                # Any text the client sent: save refuses an unknown one with a sentence.
                content_type=cast("ContentType", content_type),
                replaces=replaces,
                project=project(),
            ).render(),
            service.memory_lock,
        )

    @tool(_SETTLE)
    async def mark_outdated(old_id: str, new_id: str, undo: bool = False) -> CallToolResult:
        """Settle a replaces= that matched several memories: flag old_id OUTDATED, corrected by new_id. undo=true removes a wrong mark new_id set instead: old_id is current again."""  # noqa: E501

        def work() -> str:
            if undo:
                return service.memory.restore(old_id, corrected_by=new_id).render()
            return service.memory.mark_outdated(old_id, new_id)

        return await _run("mark_outdated", work, service.memory_lock)

    @tool(_READ)
    async def project_map(
        path: str, ctx: Context[Any, Any], detail: str = "files", subpath: str = ""
    ) -> CallToolResult:
        """Map of a codebase folder: files with token sizes; detail="symbols" adds each class/function with its lines."""  # noqa: E501
        roots = await service.code_roots(ctx)
        return await _run(
            "project_map",
            lambda: service.memory.project_map(
                confine_project(path, roots), detail=detail, subpath=subpath
            ),
            service.memory_lock,
        )

    @tool(_READ)
    async def find_code(
        query: str,
        path: str,
        ctx: Context[Any, Any],
        scope: str = "main",
        subpath: str = "",
        clue: str | None = None,
        max_tokens: int = 1500,
    ) -> CallToolResult:
        """Find the code answering query (symbol name or description) in the codebase at path: just that symbol as file:first-last + code, plus other candidates. scope: main (no tests), test, all."""  # noqa: E501
        roots = await service.code_roots(ctx)
        return await _run(
            "find_code",
            lambda: service.memory.find_code(
                query,
                confine_project(path, roots),
                scope=scope,
                subpath=subpath,
                clue=clue,
                max_tokens=max_tokens,
            ),
            service.memory_lock,
        )

    @tool(_READ)
    async def read_file(path: str, ctx: Context[Any, Any], force: bool = False) -> CallToolResult:
        """Read a project text file. Re-reading it this session answers UNCHANGED or a unified diff; force=true returns it whole and allows files over 512 KiB."""  # noqa: E501
        roots = await service.roots(ctx)
        return await _run(
            "read_file", lambda: service.reads.read(path, roots, force=force), service.session_lock
        )

    @tool(_ADD)
    async def note(text: str) -> CallToolResult:
        """Scratch note for this session: survives context compaction, gone when the session ends. Lasting facts go to save_memory."""  # noqa: E501

        def work() -> str:
            if not text or not text.strip():
                raise ValueError("the note is empty")
            if len(text) > MAX_NOTE_CHARS:
                raise ValueError(
                    f"the note is too large ({len(text):,} characters, the limit is "
                    f"{MAX_NOTE_CHARS:,}); note the point, or pass a long output to digest_output"
                )
            number = service.scratch.add(text)
            return f"NOTED #{number}; recall finds it for the rest of this session."

        return await _run("note", work, service.session_lock)

    @tool(_READ)
    async def recall(query: str, clue: str | None = None) -> CallToolResult:
        """Search this session's notes and digested outputs (long-term memory: search_memory)."""
        return await _run(
            "recall", lambda: service.scratch.recall(query, clue), service.session_lock
        )

    @tool(_ADD)
    async def digest_output(text: str, label: str = "output") -> CallToolResult:
        """Condense a long output or log to first lines, errors, failures, warnings, test totals, last lines; the full text stays recallable by label."""  # noqa: E501

        def work() -> str:
            from ihmt_mcp._session import digest

            if not text or not text.strip():
                raise ValueError("the output is empty")
            if len(text) > MAX_OUTPUT_CHARS:
                raise ValueError(
                    f"the output is too large ({len(text):,} characters, the limit is "
                    f"{MAX_OUTPUT_CHARS:,}); pass its last part or write it to a file"
                )
            number = service.scratch.add(text, kind="output", label=label)
            kept = f"(full text kept as output #{number}: recall it by label)"
            return f"{digest(text, label)}\n{kept}"

        return await _run("digest_output", work, service.session_lock)

    @tool(_DELETE)
    async def forget_memory(memory_id: str, reason: str) -> CallToolResult:
        """Delete one memory for good (a secret saved by mistake, an entry the user wants gone). For changed facts, save the new one with replaces= instead."""  # noqa: E501

        def work() -> str:
            if not reason or not reason.strip():
                raise ValueError("say why the memory is deleted (reason)")
            return service.memory.forget(memory_id, reason).render()

        return await _run("forget_memory", work, service.memory_lock)

    return _IhmtServer(
        name="ihmt-memory",
        instructions=INSTRUCTIONS,
        version=_version(),
        log_level=service.settings.log_level,  # type: ignore[arg-type]
        tools=tools,
    )


class _IhmtServer(MCPServer):
    """The SDK's server with two answers it does not give on its own (issue #13, D23).

    - A line that is not a valid JSON-RPC message (not JSON, truncated, a batch, a wrong
      or missing ``jsonrpc``, ``params`` that are not an object…) gets a JSON-RPC error
      reply, with the request's id when one can be read, instead of silence: the SDK's
      stdio transport turns such a line into an exception its dispatcher only logs.
    - Arguments of the wrong type get one plain sentence naming each field, instead of
      pydantic's multi-line text with a documentation URL.
    """

    async def run_stdio_async(self) -> None:
        from mcp.server.stdio import stdio_server
        from mcp.shared.message import SessionMessage

        lowlevel = getattr(self, "_lowlevel_server", None)
        if lowlevel is None:  # an SDK that moved it: serve without the extra replies
            logger.warning("MCP SDK layout changed; malformed requests get no reply")
            await super().run_stdio_async()
            return
        async with stdio_server() as (read_stream, write_stream):
            relay_send, relay_receive = anyio.create_memory_object_stream[
                SessionMessage | Exception
            ](0)

            async def relay() -> None:
                async with relay_send:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            reply = malformed_reply(item)
                        elif _is_request_without_id(item.message):
                            reply = _bad_id_reply()
                        else:
                            await relay_send.send(item)
                            continue
                        logger.info("malformed request refused: %s", reply.error.message)
                        await write_stream.send(SessionMessage(reply))

            async with anyio.create_task_group() as group:
                group.start_soon(relay)
                await lowlevel.run(
                    relay_receive, write_stream, lowlevel.create_initialization_options()
                )
                group.cancel_scope.cancel()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import ValidationError

        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            return _text(argument_sentence(name, exc.__cause__), error=True)


def _is_request_without_id(message: Any) -> bool:
    """A "notification" whose method is a request's: the SDK reads a request whose id is
    an object, a boolean or a float as a notification (the id is dropped), and would
    never answer it. MCP's own notifications all start with ``notifications/``."""
    from mcp_types import JSONRPCNotification

    return isinstance(message, JSONRPCNotification) and not message.method.startswith(
        "notifications/"
    )


def _bad_id_reply() -> Any:
    from mcp_types import ErrorData, JSONRPCError

    return JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=ErrorData(
            code=-32600,
            message="Invalid request: a request needs an id that is a string or an integer",
        ),
    )


_JSON_TYPES = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "an object",
    "list_type": "a list",
    "float_type": "a number",
    "float_parsing": "a number",
}


def argument_sentence(tool: str, error: Any) -> str:
    """One plain sentence for the argument errors of a tool call (no URL, no values)."""
    parts: list[str] = []
    for item in error.errors()[:5]:
        field = ".".join(str(p) for p in item.get("loc", ())) or "arguments"
        kind = str(item.get("type", ""))
        if kind == "missing":
            parts.append(f"{field} is required")
        elif kind in _JSON_TYPES:
            parts.append(f"{field} must be {_JSON_TYPES[kind]}")
        else:
            parts.append(f"{field} is not valid ({str(item.get('msg', kind)).rstrip('.')})")
    listed = "; ".join(dict.fromkeys(parts)) or "the arguments are not valid"
    return _sentence(ValueError(f"wrong arguments for {tool}: {listed}"))


def malformed_reply(error: Exception) -> Any:
    """The JSON-RPC error answering a line the SDK could not read as a message.

    Code -32700 when the line is not JSON, -32600 when it is JSON but not a valid
    request, -32602 when only ``params`` is wrong. The id is the request's when it can
    be read (a lone-surrogate escape still lets Python's own parser read it), else null.
    """
    import json

    from mcp_types import ErrorData, JSONRPCError

    errors: list[dict[str, Any]] = []
    errors_of = getattr(error, "errors", None)
    if callable(errors_of):
        try:
            errors = list(errors_of())
        except Exception:  # noqa: BLE001 - an odd exception still gets an answer
            errors = []
    raw: Any = None
    code, message = -32600, "Invalid request: not a JSON-RPC 2.0 message"
    if errors and errors[0].get("type") == "json_invalid":
        code, message = -32700, "Parse error: the line is not valid JSON"
        text = errors[0].get("input")
        try:
            raw = json.loads(text) if isinstance(text, str) else None
            message = "Invalid request: not strict JSON (a lone surrogate escape, NaN or Infinity)"
            code = -32600
        except (ValueError, RecursionError):
            if isinstance(text, str) and text.count("[") + text.count("{") > 500:
                message = "Parse error: the JSON is nested too deeply"
    else:
        for item in errors:
            value = item.get("input")
            if isinstance(value, (dict, list)):
                raw = value
                break
    if isinstance(raw, list):
        message = "Invalid request: batches (JSON arrays) are not supported; send one message"
    elif isinstance(raw, dict):
        fields = {str(item.get("loc", ("", ""))[-1]) for item in errors if item.get("loc")}
        if raw.get("jsonrpc") != "2.0":
            message = 'Invalid request: "jsonrpc" must be "2.0"'
        elif "params" in raw and not isinstance(raw.get("params"), dict) and "params" in fields:
            code, message = -32602, "Invalid params: params must be an object"
        elif "method" in raw and not isinstance(raw.get("method"), str):
            message = "Invalid request: method must be a string"
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        request_id = None
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def _untitled(schema: Any) -> Any:
    """``schema`` without the ``title`` keys pydantic adds."""
    if isinstance(schema, dict):
        return {
            k: _untitled(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


def _version() -> str:
    from ihmt_mcp import __version__

    return __version__


def _warm_up(settings: Settings) -> None:
    from ihmt_mcp._secrets import _vendor_plugins
    from ihmt_navigator import load_embedder

    load_embedder(settings.semantic, model=settings.semantic_model, cache_dir=settings.cache_dir)
    # The secret check imports detect-secrets only for a line it can match (a one-shot
    # command mostly never does); a server pays for it here, not in a save it times.
    _vendor_plugins()


def _open_memory(settings: Settings) -> Memory:
    """A memory of its own for a background thread (the store lock serialises it)."""
    from ihmt_mcp._memory import Memory

    return Memory.open(settings)


def _background_sync(settings: Settings) -> BackgroundSync | None:
    """Sync the memory with its git remote on a period, in a thread with a memory of its
    own: ``IHMT_SYNC_EVERY`` in the server's environment, else what ``ihmt sync --every``
    set in the clone's git config. Off by default; a bad value only logs."""
    if not settings.sync_every and not (settings.store_path / ".git").is_dir():
        return None  # not synced: nothing to ask git
    from ihmt_mcp.sync import BackgroundSync, background_period, parse_period

    given, source = settings.sync_every, "IHMT_SYNC_EVERY"
    if not given:
        given, source = background_period(settings.store_path), "ihmt sync --every"
    if not given:
        return None
    try:
        period = parse_period(given)
    except ValueError as exc:
        logger.warning("%s ignored: %s", source, exc)
        return None
    if period is None:
        return None

    rounds = BackgroundSync(lambda: _open_memory(settings), period, folder=settings.store_path)
    rounds.start()
    logger.info("syncing the memory with its git remote every %.0f s", period)
    return rounds


def main(argv: list[str] | None = None) -> int:
    """Run the stdio server (the ``ihmt-mcp`` command). Logs go to stderr, never stdout."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        sys.stderr.write(
            "usage: ihmt-mcp\n\nThe IHMT memory as a stdio MCP server. The store is "
            "$IHMT_HOME/ihmt_memory (default ~/.ihmt), created on first use.\n"
        )
        return 0
    settings = Settings.from_env()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    server = build_server(settings)
    background = _background_sync(settings)
    # The sentence encoder (the [semantic] extra) loads while the client says hello, so
    # that the first search does not wait for it; the process keeps it warm after that.
    threading.Thread(target=_warm_up, args=(settings,), daemon=True).start()
    # The vectors an ingest left to compute (ihmt_mcp._vector_fill), in a thread too.
    from ihmt_mcp._vector_fill import VectorFill

    fill = VectorFill(lambda: _open_memory(settings))
    fill.start()
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        return 130
    finally:
        fill.stop()
        if background is not None:
            background.stop()
    return 0
