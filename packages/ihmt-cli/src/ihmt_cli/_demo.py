"""``ihmt demo``: a walkthrough in a fresh workspace, from example files shipped in the package.

Every step is a real ``ihmt`` command run in-process against the demo store, printed with
the command line a user would type.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import click

__all__ = ["EXAMPLES", "run_demo"]

EXAMPLES = Path(__file__).resolve().parent / "examples"
"""The example files: a Java service, a Python module, a bilingual journal, a runbook, a
recipe and a clinical note."""

STEPS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    (
        "Create a memory (small branches, so the tree shows on a few files)",
        ("init", "--branch-factor", "4"),
        None,
    ),
    (
        "Ingest the example files: code, a journal, a runbook, a recipe, a clinical note",
        ("ingest", "{examples}"),
        None,
    ),
    (
        "A code search: which code refunds a paid order when it is cancelled?",
        ("search", "how is a paid order cancelled and refunded?"),
        None,
    ),
    ("Three people called Luis: AMBIGUOUS, then a clue settles it", ("ask", "Luis"), "Benidorm\n"),
    (
        "A correction: staging moved to PostgreSQL 17",
        (
            "save",
            "Staging now runs PostgreSQL 17 on stg-db-01; the upgrade went fine.",
            "--date",
            "2026-02-20",
            "--replaces",
            "staging PostgreSQL 15",
        ),
        None,
    ),
    (
        "The old memory is OUTDATED: the answer relays the correction",
        ("search", "which PostgreSQL version runs on staging?"),
        None,
    ),
    (
        "Something never stored: NOT FOUND, never a guess",
        ("search", "what is the wifi password of the Ocelot office?"),
        None,
    ),
    (
        "Consolidate: close the partial groups into summary branches",
        ("consolidate", "--force"),
        None,
    ),
    ("The tree: domains, branches and their summaries", ("tree", "--depth", "1"), None),
    ("The totals (unreachable must be 0)", ("stats",), None),
)


@contextmanager
def _demo_environment(stdin_text: str | None) -> Iterator[None]:
    """Global memories (no project from the cwd's git root), and a scripted stdin if given."""
    saved_project = os.environ.get("IHMT_PROJECT")
    saved_stdin = sys.stdin
    os.environ["IHMT_PROJECT"] = ""
    if stdin_text is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin_text.encode("utf-8")), encoding="utf-8")
    try:
        yield
    finally:
        sys.stdin = saved_stdin
        if saved_project is None:
            os.environ.pop("IHMT_PROJECT", None)
        else:
            os.environ["IHMT_PROJECT"] = saved_project


def _rule(title: str) -> str:
    return f"── {title} " + "─" * max(3, 88 - len(title))


def run_demo(folder: Path | None, cli: click.Command) -> float:
    """Build the demo memory in ``folder`` (default: a new temporary folder) with the
    commands of ``cli`` (the ``ihmt`` group); return seconds."""
    from ihmt_cli._base import store_under
    from ihmt_store import Store

    started = time.perf_counter()
    workspace = folder if folder is not None else Path(tempfile.mkdtemp(prefix="ihmt-demo-"))
    store = store_under(workspace)
    if Store.exists(store):
        raise click.ClickException(f"{store} already holds a memory; give the demo an empty --dir")
    examples = workspace / "examples"
    shutil.copytree(EXAMPLES, examples, dirs_exist_ok=True)
    # Files are dated by their mtime: pin it, so the correction below comes after them.
    pinned = datetime(2025, 6, 1, 9, 0).timestamp()
    for example in examples.iterdir():
        os.utime(example, (pinned, pinned))
    click.echo(f"IHMT demo · workspace {workspace}")
    click.echo(f"(every command below runs with --path {store})")
    for title, raw, stdin_text in STEPS:
        args = [a.replace("{examples}", str(examples)) for a in raw]
        shown = shlex.join(a.replace(str(workspace) + os.sep, "") for a in args)
        click.echo("")
        click.echo(_rule(title))
        click.echo(
            f"$ ihmt {shown}"
            + (f"   # clue from stdin: {stdin_text.strip()}" if stdin_text else "")
        )
        with _demo_environment(stdin_text):
            cli.main(
                [*args, "--path", str(store), "--quiet"], prog_name="ihmt", standalone_mode=False
            )
    elapsed = time.perf_counter() - started
    click.echo("")
    click.echo(
        f"Done in {elapsed:.1f} s. The memory is plain files: open {store}, or keep going "
        f"with 'ihmt search QUERY --path {store}'."
    )
    return elapsed
