"""The commands that change a memory: ``init``, ``ingest``, ``save``, ``consolidate``,
``rebuild``, ``index``, ``forget``, ``restore`` and ``export`` (which writes a copy)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_args

import click

from ihmt_cli._base import (
    ISO_DATE,
    State,
    clip,
    command,
    open_memory,
    pass_state,
    progress_bar,
    read_text_argument,
)
from ihmt_cli._types import CONTENT_TYPES, Backend, ContentType, ExportFormat

__all__ = [
    "consolidate_command",
    "export_command",
    "forget_command",
    "index_command",
    "ingest_command",
    "init_command",
    "rebuild_command",
    "restore_command",
    "save_command",
]


# ---------------------------------------------------------------------- init
@command("init")
@click.option("--branch-factor", type=click.IntRange(min=2), help="Children per branch (2+).")
@click.option("--target-tokens", type=click.IntRange(min=1), help="Target size of one memory.")
@click.option("--backend", type=click.Choice(get_args(Backend)), help="Summarizer.")
@click.option("--model", help="Summarizer model id (anthropic backend).")
@click.option("--force", is_flag=True, help="Discard derived state and rebuild it (never a leaf).")
@pass_state
def init_command(
    state: State,
    branch_factor: int | None,
    target_tokens: int | None,
    backend: Backend | None,
    model: str | None,
    force: bool,
) -> None:
    """Create a memory store (or apply these options to the one there)."""
    from ihmt_mcp import Memory
    from ihmt_store import Store

    existed = Store.exists(state.path)
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
@click.option(
    "--embed-later",
    is_flag=True,
    help="Return once the memories are stored; their summaries and vectors come later.",
)
@pass_state
def ingest_command(
    state: State,
    paths: tuple[Path, ...],
    domain: str | None,
    content_type: ContentType | None,
    tags: tuple[str, ...],
    project: str | None,
    no_consolidate: bool,
    embed_later: bool,
) -> None:
    """Store files, folders (recursively) or '-' (stdin), split into memories.

    A Markdown note's YAML front matter (title, tags, date, project) describes it and stays
    out of its text. A .jsonl file, an 'ihmt export' folder and an IHMT store folder (the
    original IHMT-MEMORY's ihmt_memory/ or its IHMT_HOME) are imported memory by memory,
    with their dates, domains, projects, tags and OUTDATED links.

    The memories, their facts and their branches are stored first (found from then on),
    then the branches' summaries are written and, with the semantic layer on, the vectors
    computed, with a progress line: Ctrl-C stops that after the current batch, and what
    is left fills later (the MCP server does it, or 'ihmt index --semantic').
    --embed-later skips that step.
    """
    from ihmt_cli._render import ingest_text

    text: str | None = None
    sources = [p for p in paths if str(p) != "-"]
    if len(sources) != len(paths):
        text = read_text_argument("-", "the text")
        if not text.strip():
            raise click.UsageError("nothing to ingest: stdin was empty")
    for path in sources:
        if not path.exists():
            raise click.ClickException(f"no such file or folder: {path}; check the path")
    byte_count = len(text.encode("utf-8")) if text is not None else 0
    # Memory.ingest reports the bytes read so far, also inside one large file.
    with open_memory(state) as memory:
        with progress_bar(state, "Ingesting", percent=True) as progress:
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
        stopped = False  # the words' bar is closed: the vectors draw their own
        if not embed_later and report.leaves:
            report, stopped = _embed_now(state, memory, report)
    if report.skipped and report.files == len(report.skipped):
        reasons = "; ".join(f"{name} ({why})" for name, why in report.skipped[:5])
        more = f" and {len(report.skipped) - 5} more" if len(report.skipped) > 5 else ""
        raise click.ClickException(f"nothing ingested: {reasons}{more}")
    for name, why in report.skipped:
        state.remark(f"skipped {name}: {why}")
    state.emit({**report.to_json(), "bytes": byte_count}, ingest_text(report, byte_count))
    if stopped:
        raise SystemExit(130)  # interrupted: the memories are stored, some vectors wait


def _embed_now(state: State, memory: Any, report: Any) -> tuple[Any, bool]:
    """The branch summaries and the vectors ``ingest`` left for later, computed now, a
    batch a commit: the report as things then stand, and whether Ctrl-C stopped it (after
    its batch; a second Ctrl-C stops at once, and the batch under way is rolled back)."""
    import signal
    import threading

    from ihmt_mcp import fill_summaries, fill_vectors

    summaries = any("have no summary yet" in w for w in report.warnings)
    missing = memory.vectors_missing()
    if not missing and not summaries:
        return report, False
    stop = threading.Event()
    handled = threading.current_thread() is threading.main_thread()
    previous: Any = signal.getsignal(signal.SIGINT) if handled else None

    def interrupted(signum: int, frame: Any) -> None:
        del signum, frame
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    if handled:
        signal.signal(signal.SIGINT, interrupted)
    try:
        if summaries:
            state.remark("writing the branch summaries (Ctrl-C stops; the rest wait)")
            with progress_bar(state, "Summarising") as progress:
                report = fill_summaries(
                    memory,
                    report,
                    _counts_only(progress),
                    stop=stop,
                )
        if missing and not stop.is_set():
            state.remark(
                f"computing the vectors of {missing:,} memories (Ctrl-C stops; the rest wait)"
            )
            with progress_bar(state, "Embedding") as progress:
                report = fill_vectors(
                    memory,
                    report,
                    _counts_only(progress),
                    stop=stop,
                )
    finally:
        if handled:
            signal.signal(signal.SIGINT, previous or signal.default_int_handler)
    return report, stop.is_set()


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
@pass_state
def save_command(
    state: State,
    text: str,
    domain: str | None,
    when: str | None,
    replaces: str,
    project: str | None,
    content_type: ContentType,
    tags: tuple[str, ...],
) -> None:
    """Save one memory (TEXT, or '-' to read it from stdin).

    Its type and domain are chosen from its content (the output says how it was filed);
    --domain and --type override them.
    """
    content = read_text_argument(text, "the memory")
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
@pass_state
def consolidate_command(state: State, force: bool) -> None:
    """Build the summary branches that are due."""
    with open_memory(state) as memory, progress_bar(state, "Consolidating") as progress:
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
@pass_state
def rebuild_command(state: State) -> None:
    """Recreate every derived file (catalog, index, trunk, facts) from the leaves and branches."""
    with (
        open_memory(state) as memory,
        progress_bar(state, "Rebuilding") as progress,
        progress_bar(state, "Embedding") as embedding,
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


@command("index")
@click.option(
    "--semantic",
    is_flag=True,
    help="Embed every memory that has no vector yet (after installing the [semantic] extra).",
)
@pass_state
def index_command(state: State, semantic: bool) -> None:
    """Say what search uses; with --semantic, fill in the missing vectors.

    First it writes the branch summaries a large ingest left for later, if any.

    Vectors are written on every save. A memory saved before the [semantic] extra was
    installed, or with IHMT_SEMANTIC=off, has none until this runs (it shows a
    progress bar; about 2,000 memories a minute on a laptop core).
    """
    from ihmt_cli._render import search_mode_text
    from ihmt_mcp import fill_summaries

    with open_memory(state) as memory:
        embedded = 0
        # The branch summaries a large ingest left for later (none: a quick look).
        with progress_bar(state, "Summarising") as progress:
            fill_summaries(
                memory, None, None if progress is None else (lambda d, t: progress(d, t, ""))
            )
        if semantic:
            with progress_bar(state, "Embedding") as progress:
                embedded = memory.index_semantic(
                    None if progress is None else (lambda d, t: progress(d, t, ""))
                )
        search = memory.search_mode()
    head = f"INDEXED · {embedded:,} memories embedded" if semantic else "SEARCH"
    state.emit(
        {**search, "embedded": embedded},
        f"{head}\n{'search':<15} {search_mode_text(search)}",
    )


# ---------------------------------------------------------------------- forget
@command("forget")
@click.argument("memory_id", metavar="ID")
@click.option("--reason", default="", help="Why (returned, never logged).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_state
def forget_command(state: State, memory_id: str, reason: str, yes: bool) -> None:
    """Delete one memory for good, and every trace of its text in the summaries."""
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
@pass_state
def restore_command(state: State, memory_id: str, corrected_by: str | None) -> None:
    """Undo a wrong OUTDATED mark: memory ID is current again (both memories are kept).

    --json prints {id, restored, corrected_by, corrected_on, reason, message}; restored is
    false when ID was not flagged OUTDATED (nothing changed, exit 0).
    """
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
def _refuse_the_store(output: Path, store: Path) -> None:
    """Refuse an export into the store (its config, its leaves) or into a folder holding it:
    links resolved, so no other name for the store slips through."""
    target, home = output.resolve(), store.resolve()
    if target == home or home in target.parents:
        raise click.ClickException(
            f"{output} is inside the memory's store ({store}); export somewhere else"
        )
    if target in home.parents:
        raise click.ClickException(
            f"{output} holds the memory's store ({store}); export somewhere else"
        )


@command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(get_args(ExportFormat)),
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
@click.option("--force", is_flag=True, help="Overwrite an existing --output file.")
@pass_state
def export_command(
    state: State, fmt: ExportFormat, project: str | None, output: Path | None, force: bool
) -> None:
    """Write every memory with its id, date, project, domain, type, tags and OUTDATED link.

    'ihmt ingest' reads both formats back (into a fresh store it gives the same answers).
    A jsonl object: {id, content, timestamp, project, domain, type, tags, source, title,
    outdated_by, corrected_on, reason}. A markdown note: that front matter, then the text;
    the folder holds one note per memory under <project or _global>/ and ihmt-export.json.
    An existing file is overwritten only with --force; a folder must be new, empty or an
    earlier markdown export (replaced); nothing is ever written inside the store.
    --json prints {format, output, memories, outdated} (not with jsonl on stdout).
    """
    to_stdout = output is None or str(output) == "-"
    if fmt == "markdown" and to_stdout:
        raise click.UsageError("--format markdown writes a folder: give it with --output DIR")
    if to_stdout and state.is_json:
        raise click.UsageError("jsonl on stdout is the export itself: add --output FILE for --json")
    if fmt == "jsonl" and output is not None and not to_stdout and output.is_dir():
        raise click.ClickException(f"{output} is a folder; --format jsonl writes a file")
    from ihmt_mcp import write_jsonl, write_markdown

    outdated = [0]
    with open_memory(state) as memory:
        if output is not None and not to_stdout:
            _refuse_the_store(output, memory.store.path)
            if fmt == "jsonl" and (output.exists() or output.is_symlink()) and not force:
                raise click.ClickException(f"{output} already exists; give --force to overwrite it")

        def memories() -> Iterator[Any]:
            for item in memory.export(project=project):
                outdated[0] += bool(item.outdated_by)
                yield item

        if fmt == "markdown":
            assert output is not None
            try:
                count = write_markdown(memories(), output)
            except FileExistsError as exc:
                raise click.ClickException(str(exc)) from None
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


def _counts_only(
    progress: Callable[[int, int, str], None] | None,
) -> Callable[[int, int], None] | None:
    """A bar's callback for work that reports counts without a label."""
    if progress is None:
        return None
    bar = progress
    return lambda done, total: bar(done, total, "")
