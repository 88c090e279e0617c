"""What every ``ihmt`` command shares: the global options, the :class:`State` they give, the
``command`` decorator, the shared option types, and the output helpers.

This module imports no command module: the command modules import it, and ``_app``
assembles them into the ``ihmt`` group. Everything heavy (the chunkers, the navigator,
the fact timeline) loads only when a command runs, so ``ihmt --help`` stays fast.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from ihmt_mcp import Memory

__all__ = [
    "EPILOG",
    "ISO_DATE",
    "MissingStoreError",
    "State",
    "clip",
    "command",
    "global_options",
    "non_empty_query",
    "open_memory",
    "pass_state",
    "progress_bar",
    "read_text_argument",
    "store_under",
    "terminal_safe",
]

F = TypeVar("F", bound=Callable[..., Any])

EPILOG = (
    "--path, --json, -v and -q also work after the command. The store defaults to "
    "$IHMT_HOME/ihmt_memory (IHMT_HOME defaults to ~/.ihmt)."
)


# ---------------------------------------------------------------------- global options
def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    # ctx.meta is shared by the whole context chain, so a value given after the
    # command (parsed later) overrides one given before it.
    if value not in (None, False):
        ctx.meta[f"ihmt.{param.name}"] = value
    return value


def _global_flag(*decls: str, hidden: bool, help: str) -> Callable[[F], F]:
    return click.option(
        *decls, is_flag=True, expose_value=False, callback=_remember, hidden=hidden, help=help
    )


def global_options(*, hidden: bool) -> Callable[[F], F]:
    """``--path``, ``--json``, ``-v`` and ``-q``, accepted on the group and every command."""

    def decorate(fn: F) -> F:
        options = [
            click.option(
                "--path",
                type=click.Path(path_type=Path),
                metavar="STORE",
                expose_value=False,
                callback=_remember,
                hidden=hidden,
                help="The memory store folder (default: $IHMT_HOME/ihmt_memory).",
            ),
            _global_flag(
                "--json",
                "json_output",
                hidden=hidden,
                help="Print one JSON object instead of text.",
            ),
            _global_flag(
                "-v",
                "--verbose",
                hidden=hidden,
                help="Log to stderr and show a traceback on errors.",
            ),
            _global_flag(
                "-q", "--quiet", hidden=hidden, help="No progress bars or remarks; only the result."
            ),
        ]
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


@dataclass(frozen=True)
class State:
    """The global options of one invocation, resolved once before its command runs."""

    given_path: Path | None
    """``--path`` as given (``~`` expanded), or None for the default store."""
    is_json: bool
    is_verbose: bool
    is_quiet: bool

    @classmethod
    def of(cls, ctx: click.Context) -> State:
        """The options every context of the chain recorded (the group's and the command's)."""
        meta = ctx.meta
        path = meta.get("ihmt.path")
        return cls(
            given_path=None if path is None else Path(path).expanduser(),
            is_json=bool(meta.get("ihmt.json_output")),
            is_verbose=bool(meta.get("ihmt.verbose")),
            is_quiet=bool(meta.get("ihmt.quiet")),
        )

    @cached_property
    def path(self) -> Path:
        """The store folder: ``--path``, else ``$IHMT_HOME/ihmt_memory`` (read when asked,
        so a command that needs no store never reads the environment for one)."""
        if self.given_path is not None:
            return self.given_path
        from ihmt_mcp import Settings

        return Settings.from_env().store_path.expanduser()

    @property
    def is_explicit_path(self) -> bool:
        return self.given_path is not None

    def emit(self, data: dict[str, Any], text: str) -> None:
        """Print ``data`` as one JSON object with ``--json``, else ``text`` (made inert)."""
        if self.is_json:
            import json

            click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            click.echo(terminal_safe(text))

    def remark(self, text: str) -> None:
        """A side remark on stderr (not with ``--quiet``)."""
        if not self.is_quiet:
            click.echo(terminal_safe(text), err=True)

    def path_flag(self) -> str:
        return f" --path {self.path}" if self.is_explicit_path else ""


pass_state = click.make_pass_decorator(State)
"""Hand a command the :class:`State` its invocation resolved, as its first argument."""


def _configure_logging(state: State) -> None:
    import logging

    if state.is_verbose:
        logging.basicConfig(
            level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
        )
    else:
        # The libraries' warnings would reach stderr through logging's last resort; the
        # CLI already says what went wrong in its one line.
        logging.getLogger().addHandler(logging.NullHandler())


class _Command(click.Command):
    """A command that resolves the global options once, before its callback runs.

    Not in the group's callback: click parses a command's own options (``ihmt stats
    --json``) only after the group's callback has run, so the one place that sees them
    all is the command's ``invoke``.
    """

    def __init__(self, *args: Any, configures_logging: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.configures_logging = configures_logging

    def invoke(self, ctx: click.Context) -> Any:
        state = State.of(ctx)
        ctx.obj = state
        if self.configures_logging:
            _configure_logging(state)
        return super().invoke(ctx)


def command(
    name: str, *, configures_logging: bool = True, **kwargs: Any
) -> Callable[[Callable[..., Any]], click.Command]:
    """A subcommand of ``ihmt`` that accepts the global options too.

    ``configures_logging=False`` leaves logging as it is: for the commands that set it
    up themselves (``mcp serve``, ``gui``, ``hook``) and those that never configured it
    (their stderr stays as it always was).
    """

    def decorate(fn: Callable[..., Any]) -> click.Command:
        return click.command(
            name, cls=_Command, epilog=EPILOG, configures_logging=configures_logging, **kwargs
        )(global_options(hidden=True)(fn))

    return decorate


# ---------------------------------------------------------------------- the store
class MissingStoreError(click.ClickException):
    """There is no memory at the path; the message says how to create one."""


def store_under(home: Path) -> Path:
    """The store folder of the IHMT_HOME ``home`` (what the server opens there)."""
    from ihmt_mcp import Settings

    return Settings.for_home(home).store_path


@contextmanager
def open_memory(state: State) -> Iterator[Memory]:
    """Open the existing memory at ``state.path`` (never create one implicitly)."""

    from ihmt_mcp import Memory, Settings
    from ihmt_store import Store

    if not Store.exists(state.path):
        raise MissingStoreError(
            f"no memory at {state.path}; create one with 'ihmt init{state.path_flag()}'"
        )
    settings = replace(Settings.from_env(), store_path=state.path)
    memory = Memory.open(settings)
    memory.hand_edit_shared = True  # each command is a new process: once a minute in all
    try:
        yield memory
    finally:
        # What the store repaired or cannot do (an index rebuilt after damage, a store on
        # a read-only disk): said once, on stderr, so --json output stays one object.
        for notice in memory.store.notices:
            state.remark(f"note: {notice}")
        memory.store.notices.clear()
        memory.close()


@contextmanager
def progress_bar(
    state: State, label: str, *, percent: bool = False
) -> Iterator[Callable[[int, int, str], None] | None]:
    """A progress callback drawing a bar on stderr, when stderr is a terminal.

    With ``percent`` the work is measured in bytes (an ingest): the bar shows the share
    done and the megabytes read so far instead of the counts.
    """
    if state.is_quiet or state.is_json or not sys.stderr.isatty():
        yield None
        return
    bars: list[Any] = []

    def update(done: int, total: int, name: str) -> None:
        if not bars:
            bar = click.progressbar(
                length=max(total, 1),
                label=label,
                file=sys.stderr,
                show_pos=not percent,
                show_percent=percent,
                item_show_func=lambda item: item,
            )
            bar.__enter__()
            bars.append(bar)
        bar = bars[0]
        bar.current_item = f"{done / 1e6:.1f} MB · {name[-32:]}" if percent else name[-40:]
        bar.update(max(0, done - bar.pos))

    try:
        yield update
    finally:
        if bars:
            bars[0].__exit__(None, None, None)


# ---------------------------------------------------------------------- terminal output
# C0 and C1 controls (but newline and tab), DEL, and the bidi marks and overrides.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` with every control sequence made visible and inert.

    Memory text is untrusted: an ESC, OSC 52 (writes the clipboard), a carriage return
    or a bidi override would act on the user's terminal. Newlines and tabs stay.
    """
    return _CONTROL.sub(_escape_control, text)


def _escape_control(match: re.Match[str]) -> str:
    char: str = match.group(0)
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def clip(text: str, width: int = 80) -> str:
    """``text`` cut to ``width`` characters, saying how much was left out."""
    if len(text) <= width:
        return text
    return f"{text[:width]}…(+{len(text) - width:,} chars)"


# ---------------------------------------------------------------------- parameter types
if TYPE_CHECKING:
    _ParamType = click.ParamType[str]
else:  # click < 8.2 has no generic ParamType
    _ParamType = click.ParamType


class IsoDate(_ParamType):
    """A calendar date, ``YYYY-MM-DD`` (a full ISO timestamp is accepted too)."""

    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        try:
            if len(text) == 10:
                date.fromisoformat(text)
            else:
                datetime.fromisoformat(text)
        except ValueError:
            self.fail(f"{value!r} is not a date; use YYYY-MM-DD, e.g. 2026-02-03", param, ctx)
        return text


ISO_DATE = IsoDate()


def read_text_argument(value: str, what: str) -> str:
    """``value``, or with ``-`` the UTF-8 text on stdin (at most ``MAX_FILE_BYTES``)."""
    if value != "-":
        return value
    from ihmt_mcp import MAX_FILE_BYTES

    # One limit for files and stdin, read in one bounded call: never more than the
    # limit plus one byte is held, however much is piped in.
    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise click.ClickException(
            f"{what} from stdin is too large: over {MAX_FILE_BYTES // (1024 * 1024)} MiB, the "
            "limit for stdin; write it to a file and ingest the file (any size)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise click.ClickException(
            f"{what} from stdin is not UTF-8 text; convert it (e.g. iconv -t utf-8) first"
        ) from None


def non_empty_query(query: str) -> str:
    """``query``, refused (a usage error) when it is only white space."""
    if not query.strip():
        raise click.UsageError("the query is empty; say what to look for, e.g. 'staging database'")
    return query
