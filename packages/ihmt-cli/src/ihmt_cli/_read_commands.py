"""The commands that read a memory: ``search``, ``ask``, ``tree``, ``stats``, ``facts`` and
``conflicts``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ihmt_cli._base import (
    ISO_DATE,
    State,
    command,
    non_empty_query,
    open_memory,
    pass_state,
    terminal_safe,
)

if TYPE_CHECKING:
    from ihmt_navigator import SearchResult

__all__ = [
    "ask_command",
    "conflicts_command",
    "facts_command",
    "search_command",
    "stats_command",
    "tree_command",
]

F = TypeVar("F", bound=Callable[..., Any])


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
@click.option(
    "--or",
    "alternatives",
    multiple=True,
    metavar="PHRASING",
    help="Another phrasing of the question, tried when it is NOT FOUND (up to 4).",
)
@_search_options
@pass_state
def search_command(
    state: State,
    query: str,
    top_k: int,
    full: bool,
    alternatives: tuple[str, ...],
    clue: str | None,
    as_of: str | None,
    project: str | None,
) -> None:
    """Search the memory: FOUND, AMBIGUOUS or NOT FOUND, with the text an agent gets."""
    from ihmt_cli._render import search_json, search_text

    non_empty_query(query)
    with open_memory(state) as memory:
        result = memory.search(
            query,
            clue=clue,
            detail="full" if full else "compact",
            as_of=as_of,
            project=project,
            limit=top_k,
            alternatives=alternatives,
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


@command("ask")
@click.argument("query")
@click.option("--clue", help="A first clue.")
@pass_state
def ask_command(state: State, query: str, clue: str | None) -> None:
    """Search, and while the answer is AMBIGUOUS ask for clues (stdin: one per line)."""
    from ihmt_cli._render import search_json, search_text

    non_empty_query(query)
    is_terminal = sys.stdin.isatty()

    def next_clue(result: SearchResult) -> str | None:
        # The candidates, then the question (on stderr with --json: stdout is one object).
        click.echo(terminal_safe(result.compact.rstrip()), err=state.is_json)
        return _read_clue(state, is_terminal)

    with open_memory(state) as memory:
        result = memory.ask(query, next_clue, clue=clue)
    state.emit(search_json(result), search_text(result, full=False))


# ---------------------------------------------------------------------- inspection
@command("tree")
@click.option("--depth", type=click.IntRange(min=0, max=20), default=1, show_default=True)
@pass_state
def tree_command(state: State, depth: int) -> None:
    """Outline the tree: the domains' top branches and DEPTH levels below."""
    from ihmt_cli._render import tree_item_json, tree_text

    with open_memory(state) as memory:
        items = memory.tree(depth)
    state.emit({"items": [tree_item_json(i) for i in items]}, tree_text(items))


@command("stats")
@pass_state
def stats_command(state: State) -> None:
    """Totals: memories, branches, depth, domains, unreachable (always 0), bytes, and
    whether search uses meaning as well as words."""
    from ihmt_cli._render import search_mode_text, stats_text

    with open_memory(state) as memory:
        stats = memory.stats()
        search = memory.search_mode()
    state.emit(
        {**stats.to_json(), "search": search},
        f"{stats_text(stats)}\n{'search':<15} {search_mode_text(search)}",
    )


@command("facts")
@click.option("--subject", help="Only facts about this subject (e.g. 'user').")
@pass_state
def facts_command(state: State, subject: str | None) -> None:
    """The statements recorded from memories, oldest first, and the corrections made.

    A correction (save --replaces, mark_outdated) is listed even when no fact rule read
    either memory; --json adds it to "corrections" (each: old_id, old_date, old_text,
    new_id, new_date, new_text, project, reason, notice).
    """
    from ihmt_cli._render import correction_line, fact_json

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
@pass_state
def conflicts_command(state: State, subject: str | None) -> None:
    """Every change in the timeline, in date order: a fact's new value, or a correction.

    --json: "conflicts" holds the fact changes, "corrections" the memories flagged
    OUTDATED by a later one (save --replaces, mark_outdated) that no fact change shows.
    """
    from ihmt_cli._render import conflict_json

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
