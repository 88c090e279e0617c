"""The click commands of ``ihmt``: thin wrappers over ``ihmt_mcp.Memory``.

Everything heavy (the chunkers, the navigator, the fact timeline) loads only when a
command runs, so ``ihmt --help`` stays fast.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from ihmt_mcp import Memory
    from ihmt_navigator import SearchResult

__all__ = ["CONFIG_FILE", "State", "cli"]

CONFIG_FILE = "ihmt.config.json"
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
            click.option(
                "--json",
                "json_output",
                is_flag=True,
                expose_value=False,
                callback=_remember,
                hidden=hidden,
                help="Print one JSON object instead of text.",
            ),
            click.option(
                "-v",
                "--verbose",
                is_flag=True,
                expose_value=False,
                callback=_remember,
                hidden=hidden,
                help="Log to stderr and show a traceback on errors.",
            ),
            click.option(
                "-q",
                "--quiet",
                is_flag=True,
                expose_value=False,
                callback=_remember,
                hidden=hidden,
                help="No progress bars or remarks; only the result.",
            ),
        ]
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


@dataclass(frozen=True, slots=True)
class State:
    """The global options of one invocation."""

    path: Path
    is_json: bool
    is_verbose: bool
    is_quiet: bool
    is_explicit_path: bool

    @classmethod
    def current(cls) -> State:
        meta = click.get_current_context().meta
        path = meta.get("ihmt.path")
        explicit = path is not None
        if path is None:
            from ihmt_mcp import Settings

            path = Settings.from_env().store_path
        return cls(
            path=Path(path).expanduser(),
            is_json=bool(meta.get("ihmt.json_output")),
            is_verbose=bool(meta.get("ihmt.verbose")),
            is_quiet=bool(meta.get("ihmt.quiet")),
            is_explicit_path=explicit,
        )

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


class MissingStoreError(click.ClickException):
    """There is no memory at the path; the message says how to create one."""


@contextmanager
def open_memory(state: State) -> Iterator[Memory]:
    """Open the existing memory at ``state.path`` (never create one implicitly)."""

    from ihmt_mcp import Memory, Settings

    if not (state.path / CONFIG_FILE).is_file():
        raise MissingStoreError(
            f"no memory at {state.path}; create one with 'ihmt init{state.path_flag()}'"
        )
    settings = replace(Settings.from_env(), store_path=state.path)
    memory = Memory.open(settings)
    try:
        yield memory
    finally:
        # What the store repaired or cannot do (an index rebuilt after damage, a store on
        # a read-only disk): said once, on stderr, so --json output stays one object.
        for notice in memory.store.notices:
            state.remark(f"note: {notice}")
        memory.store.notices.clear()
        memory.close()


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
CONTENT_TYPES = ("auto", "generic", "personal", "temporal", "process", "narrative", "code")


def _read_text_argument(value: str, what: str) -> str:
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


def _non_empty_query(query: str) -> str:
    if not query.strip():
        raise click.UsageError("the query is empty; say what to look for, e.g. 'staging database'")
    return query


# ---------------------------------------------------------------------- the group
@click.group(
    invoke_without_command=True,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@global_options(hidden=False)
@click.version_option(package_name="ihmt-cli", prog_name="ihmt", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """IHMT: long-term memory for AI coding agents, as a tree of plain files.

    Start with 'ihmt demo', or 'ihmt init' then 'ihmt save' and 'ihmt search'.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def command(name: str, **kwargs: Any) -> Callable[[F], click.Command]:
    """A subcommand of ``ihmt`` that accepts the global options too."""

    def decorate(fn: F) -> click.Command:
        return cli.command(name, epilog=EPILOG, **kwargs)(global_options(hidden=True)(fn))

    return decorate


# ---------------------------------------------------------------------- init
@command("init")
@click.option("--branch-factor", type=click.IntRange(min=2), help="Children per branch (2+).")
@click.option("--target-tokens", type=click.IntRange(min=1), help="Target size of one memory.")
@click.option("--backend", type=click.Choice(["heuristic", "anthropic"]), help="Summarizer.")
@click.option("--model", help="Summarizer model id (anthropic backend).")
@click.option("--force", is_flag=True, help="Discard derived state and rebuild it (never a leaf).")
def init_command(
    branch_factor: int | None,
    target_tokens: int | None,
    backend: str | None,
    model: str | None,
    force: bool,
) -> None:
    """Create a memory store (or apply these options to the one there)."""
    from ihmt_mcp import Memory

    state = State.current()
    _configure_logging(state)
    existed = (state.path / CONFIG_FILE).is_file()
    if not existed and state.path.exists() and not state.path.is_dir():
        raise click.ClickException(f"{state.path} is a file, not a folder; choose another --path")
    memory = Memory.init(
        state.path,
        branch_factor=branch_factor,
        target_tokens=target_tokens,
        backend=backend,
        model=model,
        force=force,
    )
    try:
        config = memory.store.config.to_json()
        leaves = memory.stats().leaves
    finally:
        memory.close()
    verb = "Opened the existing" if existed else "Created a new"
    lines = [f"{verb} memory at {state.path} ({leaves} memories)."]
    if force:
        lines.append(
            "--force: discarded the derived state (state/) and rebuilt it from the files; "
            "no memory was touched."
        )
    if not existed:
        lines.append(f"Next: ihmt save 'what to remember'{state.path_flag()}")
    state.emit(
        {
            "path": str(state.path),
            "created": not existed,
            "forced": force,
            "leaves": leaves,
            "config": config,
        },
        "\n".join(lines),
    )


# ---------------------------------------------------------------------- ingest
@command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--domain", help="File everything under this domain.")
@click.option("--type", "content_type", type=click.Choice(CONTENT_TYPES[1:]), help="Force a type.")
@click.option("--tag", "tags", multiple=True, help="A tag to add (repeatable).")
@click.option("--project", help="Project to record (default: the current git root's name).")
@click.option("--no-consolidate", is_flag=True, help="Do not build branches now.")
def ingest_command(
    paths: tuple[Path, ...],
    domain: str | None,
    content_type: str | None,
    tags: tuple[str, ...],
    project: str | None,
    no_consolidate: bool,
) -> None:
    """Store files, folders (recursively) or '-' (stdin), split into memories.

    A Markdown note's YAML front matter (title, tags, date, project) describes it and stays
    out of its text. A .jsonl file, an 'ihmt export' folder and an IHMT store folder (the
    original IHMT-MEMORY's ihmt_memory/ or its IHMT_HOME) are imported memory by memory,
    with their dates, domains, projects, tags and OUTDATED links.
    """
    from ihmt_cli._render import ingest_text

    state = State.current()
    _configure_logging(state)
    text: str | None = None
    sources = [p for p in paths if str(p) != "-"]
    if len(sources) != len(paths):
        text = _read_text_argument("-", "the text")
        if not text.strip():
            raise click.UsageError("nothing to ingest: stdin was empty")
    for path in sources:
        if not path.exists():
            raise click.ClickException(f"no such file or folder: {path}; check the path")
    byte_count = len(text.encode("utf-8")) if text is not None else 0
    # Memory.ingest reports the bytes read so far, also inside one large file.
    with open_memory(state) as memory, _progress(state, "Ingesting", percent=True) as progress:
        report = memory.ingest(
            sources,
            text=text,
            domain=domain,
            content_type=content_type,
            tags=tags,
            project=project,
            consolidate=not no_consolidate,
            progress=progress,
        )
        stored = {name for name, _ in report.skipped}
        byte_count += _bytes_of(sources, stored)
    if report.skipped and report.files == len(report.skipped):
        reasons = "; ".join(f"{name} ({why})" for name, why in report.skipped[:5])
        more = f" and {len(report.skipped) - 5} more" if len(report.skipped) > 5 else ""
        raise click.ClickException(f"nothing ingested: {reasons}{more}")
    for name, why in report.skipped:
        state.remark(f"skipped {name}: {why}")
    state.emit({**report.to_json(), "bytes": byte_count}, ingest_text(report, byte_count))


def _bytes_of(sources: list[Path], skipped: set[str]) -> int:
    total = 0
    for path in sources:
        if path.is_file() and path.name not in skipped:
            total += path.stat().st_size
        elif path.is_dir():
            for root, _dirs, files in os.walk(path):
                for name in files:
                    try:
                        total += (Path(root) / name).stat().st_size
                    except OSError:
                        continue
    return total


@contextmanager
def _progress(
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


# ---------------------------------------------------------------------- save
@command("save")
@click.argument("text")
@click.option(
    "--domain",
    metavar="D",
    help="File it under this domain (default: chosen from its content, e.g. software.infra).",
)
@click.option(
    "--date",
    "when",
    type=ISO_DATE,
    help="When it became true (default: a date in the text, else today).",
)
@click.option("--replaces", default="", help="Words describing an earlier memory it corrects.")
@click.option("--project", help="Project to record ('' = global; default: the git root's name).")
@click.option(
    "--type",
    "content_type",
    type=click.Choice(CONTENT_TYPES),
    default="auto",
    show_default=True,
    help="How to split it; auto reads its content.",
)
@click.option("--tag", "tags", multiple=True, help="A tag to add (repeatable).")
def save_command(
    text: str,
    domain: str | None,
    when: str | None,
    replaces: str,
    project: str | None,
    content_type: str,
    tags: tuple[str, ...],
) -> None:
    """Save one memory (TEXT, or '-' to read it from stdin).

    Its type and domain are chosen from its content (the output says how it was filed);
    --domain and --type override them.
    """
    state = State.current()
    _configure_logging(state)
    content = _read_text_argument(text, "the memory")
    with open_memory(state) as memory:
        result = memory.save(
            content,
            domain=domain or "general",
            content_type=content_type,
            replaces=replaces,
            project=project,
            date=when,
            tags=tags,
        )
    state.emit(result.to_json(), result.render())


# ---------------------------------------------------------------------- consolidate, rebuild
@command("consolidate")
@click.option("--force", is_flag=True, help="Also close partial groups (a fuller tree).")
def consolidate_command(force: bool) -> None:
    """Build the summary branches that are due."""
    state = State.current()
    _configure_logging(state)
    with open_memory(state) as memory, _progress(state, "Consolidating") as progress:
        state.remark("Consolidating…")
        report = memory.consolidate(force=force, progress=progress)
        stats = memory.stats()
    state.emit(
        {
            "branches_created": list(report.branches_created),
            "repaired": list(report.repaired),
            "domains": list(report.domains),
            "depth": stats.depth,
            "unconsolidated": stats.unconsolidated,
        },
        f"CONSOLIDATED · {len(report.branches_created)} new branch(es) in "
        f"{len(report.domains)} domain(s) · depth {stats.depth} · "
        f"{stats.unconsolidated} memories not in a branch yet",
    )


@command("rebuild")
def rebuild_command() -> None:
    """Recreate every derived file (catalog, index, trunk, facts) from the leaves and branches."""
    state = State.current()
    _configure_logging(state)
    with (
        open_memory(state) as memory,
        _progress(state, "Rebuilding") as progress,
        _progress(state, "Embedding") as embedding,
    ):
        state.remark("Rebuilding the catalog, the search index, the trunk and the facts…")
        report, facts = memory.rebuild(
            progress=progress,
            vector_progress=None if embedding is None else (lambda d, t: embedding(d, t, "")),
        )
    problems = [f"{p.path}: {p.reason}" for p in report.problems]
    lines = [
        f"REBUILT · {report.leaves} leaves, {report.branches} branches, {facts.facts} facts "
        f"({facts.contradictions} contradictions)"
    ]
    lines.extend(f"PROBLEM: {p}" for p in problems)
    state.emit(
        {
            "leaves": report.leaves,
            "branches": report.branches,
            "facts": facts.facts,
            "contradictions": facts.contradictions,
            "temp_files_removed": report.temp_files_removed,
            "problems": problems,
        },
        "\n".join(lines),
    )


# ---------------------------------------------------------------------- search, ask
def _search_options(fn: F) -> F:
    for option in reversed(
        [
            click.option("--clue", help="A detail that tells candidates apart."),
            click.option("--as-of", type=ISO_DATE, help="Answer as of this date."),
            click.option("--project", help="Prefer this project (default: the current one)."),
        ]
    ):
        fn = option(fn)
    return fn


@command("search")
@click.argument("query")
@click.option("--top-k", type=click.IntRange(min=1, max=100), default=5, show_default=True)
@click.option("--full", is_flag=True, help="Show ids, paths and scores of every result.")
@_search_options
def search_command(
    query: str,
    top_k: int,
    full: bool,
    clue: str | None,
    as_of: str | None,
    project: str | None,
) -> None:
    """Search the memory: FOUND, AMBIGUOUS or NOT FOUND, with the text an agent gets."""
    from ihmt_cli._render import search_json, search_text

    state = State.current()
    _configure_logging(state)
    _non_empty_query(query)
    with open_memory(state) as memory:
        result = memory.search(
            query,
            clue=clue,
            detail="full" if full else "compact",
            as_of=as_of,
            project=project,
            limit=top_k,
        )
    state.emit(search_json(result), search_text(result, full=full))


def _read_clue(state: State, is_terminal: bool) -> str | None:
    if is_terminal:
        try:
            answer: str = click.prompt(
                "Clue (a place, date, surname…; empty to stop)",
                default="",
                show_default=False,
                err=state.is_json,
            )
        except click.Abort:
            click.echo("", err=True)
            return None
        return answer.strip() or None
    line = sys.stdin.readline()
    if not line:
        return None
    clue = line.strip()
    if clue:
        click.echo(terminal_safe(f"clue> {clue}"), err=state.is_json)
    return clue or None


def ask_loop(
    memory: Memory,
    query: str,
    first_clue: str | None,
    provider: Callable[[SearchResult], str | None],
    *,
    echo: Callable[[str], None],
) -> tuple[SearchResult, tuple[str, ...]]:
    """Search; while AMBIGUOUS, show the candidates and ask ``provider`` for a clue."""
    clues: list[str] = [first_clue.strip()] if first_clue and first_clue.strip() else []
    result = memory.search(query, clue=" ".join(clues) or None)
    rounds = memory.store.config.max_clue_rounds
    while result.status == "ambiguous" and len(clues) < rounds + (1 if first_clue else 0):
        echo(result.compact.rstrip())
        clue = provider(result)
        if not clue:
            break
        clues.append(clue)
        result = memory.search(query, clue=" ".join(clues))
    return result, tuple(clues)


@command("ask")
@click.argument("query")
@click.option("--clue", help="A first clue.")
def ask_command(query: str, clue: str | None) -> None:
    """Search, and while the answer is AMBIGUOUS ask for clues (stdin: one per line)."""
    from ihmt_cli._render import search_json, search_text

    state = State.current()
    _configure_logging(state)
    _non_empty_query(query)
    is_terminal = sys.stdin.isatty()
    with open_memory(state) as memory:
        result, clues = ask_loop(
            memory,
            query,
            clue,
            lambda _result: _read_clue(state, is_terminal),
            echo=lambda text: click.echo(terminal_safe(text), err=state.is_json),
        )
    state.emit(search_json(result, clues=clues), search_text(result, full=False))


# ---------------------------------------------------------------------- inspection
@command("tree")
@click.option("--depth", type=click.IntRange(min=0, max=20), default=1, show_default=True)
def tree_command(depth: int) -> None:
    """Outline the tree: the domains' top branches and DEPTH levels below."""
    from ihmt_cli._render import tree_text

    state = State.current()
    _configure_logging(state)
    with open_memory(state) as memory:
        items = memory.tree(depth)
    state.emit(
        {
            "items": [
                {
                    "level": i.level,
                    "id": i.id,
                    "kind": i.kind,
                    "domain": i.domain,
                    "title": i.title,
                    "leaf_count": i.leaf_count,
                    "outdated": i.outdated,
                }
                for i in items
            ]
        },
        tree_text(items),
    )


@command("stats")
def stats_command() -> None:
    """Totals: memories, branches, depth, domains, unreachable (always 0), bytes, and
    whether search uses meaning as well as words."""
    from ihmt_cli._render import stats_text

    state = State.current()
    _configure_logging(state)
    with open_memory(state) as memory:
        stats = memory.stats()
        search = memory.search_mode()
    state.emit(
        {**stats.to_json(), "search": search},
        f"{stats_text(stats)}\n{'search':<15} {_search_mode_text(search)}",
    )


def _search_mode_text(search: dict[str, Any]) -> str:
    if search["mode"] != "semantic":
        return f"words only: {search['reason']}"
    missing = search["vectors_missing"] or 0
    text = f"words and meaning ({search['model']})"
    if missing:
        text += f"; {missing:,} memories lack a vector: run 'ihmt index --semantic'"
    return text


@command("index")
@click.option(
    "--semantic",
    is_flag=True,
    help="Embed every memory that has no vector yet (after installing the [semantic] extra).",
)
def index_command(semantic: bool) -> None:
    """Say what search uses; with --semantic, fill in the missing vectors.

    Vectors are written on every save. A memory saved before the [semantic] extra was
    installed, or with IHMT_SEMANTIC=off, has none until this runs (it shows a
    progress bar; about 2,000 memories a minute on a laptop core).
    """
    state = State.current()
    _configure_logging(state)
    with open_memory(state) as memory:
        embedded = 0
        if semantic:
            with _progress(state, "Embedding") as progress:
                embedded = memory.index_semantic(
                    None if progress is None else (lambda d, t: progress(d, t, ""))
                )
        search = memory.search_mode()
    head = f"INDEXED · {embedded:,} memories embedded" if semantic else "SEARCH"
    state.emit(
        {**search, "embedded": embedded},
        f"{head}\n{'search':<15} {_search_mode_text(search)}",
    )


@command("facts")
@click.option("--subject", help="Only facts about this subject (e.g. 'user').")
def facts_command(subject: str | None) -> None:
    """The statements recorded from memories, oldest first, and the corrections made.

    A correction (save --replaces, mark_outdated) is listed even when no fact rule read
    either memory; --json adds it to "corrections" (each: old_id, old_date, old_text,
    new_id, new_date, new_text, project, reason, notice).
    """
    from ihmt_cli._render import correction_line, fact_json

    state = State.current()
    _configure_logging(state)
    with open_memory(state) as memory:
        facts = memory.facts(subject)
        corrections = memory.corrections(subject)
    lines = [
        f"{f.timestamp[:10]}  {f.subject} {f.attribute} = {f.value!r}  ({f.source})" for f in facts
    ]
    if corrections:
        lines += ["", "Corrections:"] if lines else ["Corrections:"]
        lines += [correction_line(c) for c in corrections]
    state.emit(
        {"facts": [fact_json(f) for f in facts], "corrections": [c.to_json() for c in corrections]},
        "\n".join(lines) or "(no facts recorded)",
    )


@command("conflicts")
@click.option("--subject", help="Only changes about this subject.")
def conflicts_command(subject: str | None) -> None:
    """Every change in the timeline, in date order: a fact's new value, or a correction.

    --json: "conflicts" holds the fact changes, "corrections" the memories flagged
    OUTDATED by a later one (save --replaces, mark_outdated) that no fact change shows.
    """
    from ihmt_cli._render import conflict_json

    state = State.current()
    _configure_logging(state)
    with open_memory(state) as memory:
        found = memory.conflicts(subject)
        corrections = memory.corrections(subject)
    dated = sorted(
        [(c.new_date, c.notice) for c in found]
        + [(c.new_date, f"CORRECTED: {c.notice}") for c in corrections],
        key=lambda item: item[0],
    )
    text = "\n".join(notice for _, notice in dated)
    state.emit(
        {
            "conflicts": [conflict_json(c) for c in found],
            "corrections": [c.to_json() for c in corrections],
        },
        text or "(no contradictions or corrections)",
    )


# ---------------------------------------------------------------------- forget
@command("forget")
@click.argument("memory_id", metavar="ID")
@click.option("--reason", default="", help="Why (returned, never logged).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def forget_command(memory_id: str, reason: str, yes: bool) -> None:
    """Delete one memory for good, and every trace of its text in the summaries."""
    state = State.current()
    _configure_logging(state)
    with open_memory(state) as memory:
        entry = memory.store.entry(memory_id)
        if entry is None or entry.kind != "leaf":
            raise click.ClickException(
                f"no memory with id {clip(memory_id)!r}; 'ihmt search QUERY --full' shows ids"
            )
        if not yes and not sys.stdin.isatty():
            # Without a terminal nobody can answer: a piped "n" or /dev/null must never
            # count as consent to delete for good.
            raise click.ClickException(
                f"not forgetting {memory_id}: there is no terminal to confirm on; "
                "pass --yes to forget it without asking"
            )
        if not yes:
            click.confirm(
                f"Forget {memory_id} ({entry.domain}, {entry.timestamp[:10]}) for good?",
                abort=True,
                err=True,
            )
        result = memory.forget(memory_id, reason=reason)
    state.emit({**result.to_json(), "reason": reason}, result.render())


# ---------------------------------------------------------------------- restore
@command("restore")
@click.argument("memory_id", metavar="ID")
@click.option("--by", "corrected_by", metavar="NEW_ID", help="Only undo the mark NEW_ID set.")
def restore_command(memory_id: str, corrected_by: str | None) -> None:
    """Undo a wrong OUTDATED mark: memory ID is current again (both memories are kept).

    --json prints {id, restored, corrected_by, corrected_on, reason, message}; restored is
    false when ID was not flagged OUTDATED (nothing changed, exit 0).
    """
    state = State.current()
    _configure_logging(state)
    with open_memory(state) as memory:
        entry = memory.store.entry(memory_id)
        if entry is None or entry.kind != "leaf":
            raise click.ClickException(
                f"no memory with id {clip(memory_id)!r}; 'ihmt search QUERY --full' shows ids"
            )
        try:
            result = memory.restore(memory_id, corrected_by=corrected_by)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
    state.emit(result.to_json(), result.render())


# ---------------------------------------------------------------------- export
@command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "markdown"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one object per memory; markdown: a folder of notes with front matter.",
)
@click.option("--project", help="Only this project's memories ('' = only the global ones).")
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path),
    help="File (jsonl) or folder (markdown) to write; jsonl defaults to stdout.",
)
def export_command(fmt: str, project: str | None, output: Path | None) -> None:
    """Write every memory with its id, date, project, domain, type, tags and OUTDATED link.

    'ihmt ingest' reads both formats back (into a fresh store it gives the same answers).
    A jsonl object: {id, content, timestamp, project, domain, type, tags, source, title,
    outdated_by, corrected_on, reason}. A markdown note: that front matter, then the text;
    the folder holds one note per memory under <project or _global>/ and ihmt-export.json.
    --json prints {format, output, memories, outdated} (not with jsonl on stdout).
    """
    state = State.current()
    _configure_logging(state)
    to_stdout = output is None or str(output) == "-"
    if fmt == "markdown" and to_stdout:
        raise click.UsageError("--format markdown writes a folder: give it with --output DIR")
    if to_stdout and state.is_json:
        raise click.UsageError("jsonl on stdout is the export itself: add --output FILE for --json")
    if output is not None and not to_stdout:
        if fmt == "markdown" and output.exists() and not output.is_dir():
            raise click.ClickException(f"{output} is a file; --format markdown writes a folder")
        if fmt == "markdown" and output.is_dir() and any(output.iterdir()):
            raise click.ClickException(f"{output} is not empty; export into a new or empty folder")
        if fmt == "jsonl" and output.is_dir():
            raise click.ClickException(f"{output} is a folder; --format jsonl writes a file")
    from ihmt_mcp import write_jsonl, write_markdown

    outdated = [0]
    with open_memory(state) as memory:

        def memories() -> Iterator[Any]:
            for item in memory.export(project=project):
                outdated[0] += bool(item.outdated_by)
                yield item

        if fmt == "markdown":
            assert output is not None
            count = write_markdown(memories(), output)
        elif to_stdout:
            count = write_jsonl(memories(), sys.stdout)
        else:
            assert output is not None
            if output.parent and not output.parent.exists():
                raise click.ClickException(f"no such folder: {output.parent}")
            with output.open("w", encoding="utf-8") as out:
                count = write_jsonl(memories(), out)
    if to_stdout:
        state.remark(f"exported {count} memories ({outdated[0]} OUTDATED)")
        return
    state.emit(
        {"format": fmt, "output": str(output), "memories": count, "outdated": outdated[0]},
        f"EXPORTED {count} memories ({outdated[0]} OUTDATED) as {fmt} to {output}",
    )


# ---------------------------------------------------------------------- mcp, version, demo
@cli.group("mcp", epilog=EPILOG)
@global_options(hidden=True)
def mcp_group() -> None:
    """The MCP server."""


@mcp_group.command("serve", epilog=EPILOG)
@global_options(hidden=True)
def mcp_serve_command() -> None:
    """Run the stdio MCP server over the memory (logs go to stderr)."""
    state = State.current()
    if not state.is_explicit_path:
        import ihmt_mcp

        raise SystemExit(ihmt_mcp.main([]))
    import logging

    from ihmt_mcp import Settings, build_server

    settings = replace(Settings.from_env(), store_path=state.path)
    handler = logging.StreamHandler(sys.stderr)
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(settings.log_level)
    try:
        build_server(settings).run("stdio")
    except KeyboardInterrupt:
        raise SystemExit(130) from None


PACKAGES = ("ihmt-cli", "ihmt-mcp", "ihmt-navigator", "ihmt-facts", "ihmt-chunkers", "ihmt-store")


@command("version")
def version_command() -> None:
    """The versions of ihmt and its packages."""
    from importlib.metadata import PackageNotFoundError, version

    state = State.current()
    found: dict[str, str] = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    rest = ", ".join(f"{k} {v}" for k, v in found.items() if k != "ihmt-cli")
    state.emit(
        {"version": found["ihmt-cli"], "packages": found},
        f"ihmt {found['ihmt-cli']} ({rest}; Python {sys.version.split()[0]})",
    )


@command("demo")
@click.option(
    "--dir",
    "folder",
    type=click.Path(path_type=Path, file_okay=False),
    help="Where to build the demo memory (default: a new temporary folder).",
)
def demo_command(folder: Path | None) -> None:
    """Walk through ingest, search, a clue loop, OUTDATED, NOT FOUND, the tree and stats."""
    from ihmt_cli._demo import run_demo

    run_demo(folder)


# ---------------------------------------------------------------------- gui (registers itself)
from ihmt_cli import _gui as _gui  # noqa: E402 — imported last: it attaches `ihmt gui` to `cli`

# isort: split
# ---------------------------------------------------------------------- install, uninstall, doctor
from ihmt_cli import _agents as _agents  # noqa: E402 — imported last: attaches its commands
