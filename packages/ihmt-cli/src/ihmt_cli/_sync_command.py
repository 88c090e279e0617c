"""``ihmt sync``: one memory on every machine, with git as the replication engine."""

from __future__ import annotations

from typing import Any

import click

from ihmt_cli._base import State, command, open_memory, pass_state

__all__ = ["sync_command"]

NOT_SYNCED: dict[str, Any] = {
    "initialised": False,
    "remote": "",
    "branch": "",
    "reachable": False,
    "ahead": 0,
    "behind": 0,
    "uncommitted": 0,
    "last_sync": None,
    "every": "",
}
"""``--status --json`` of a memory that is not synced: the same keys as a synced one."""


@command("sync")
@click.option(
    "--init",
    "remote",
    metavar="REMOTE",
    help="Set up syncing with REMOTE (a git URL, or the path of a bare repository): "
    "creates the store's repository, merges the memory already on REMOTE (into an "
    "empty store: a clone), and pushes.",
)
@click.option(
    "--status",
    "show_status",
    is_flag=True,
    help="Fetch, then say how many commits are to pull and to push, and how many memory "
    "files changed since the last sync.",
)
@click.option(
    "--purge",
    "purge_id",
    metavar="ID",
    help="Rewrite the git history so that no commit holds the forgotten memory ID, then "
    "force-push; the other clones follow on their next sync.",
)
@click.option(
    "--every",
    "every",
    metavar="PERIOD",
    help="Have the MCP server sync this memory in the background every PERIOD (10m, 1h; "
    "off stops it). A setting of this machine (the clone's git config), read when the "
    "server starts; IHMT_SYNC_EVERY in the server's environment overrides it.",
)
@pass_state
def sync_command(
    state: State, remote: str | None, show_status: bool, purge_id: str | None, every: str | None
) -> None:
    """Sync this memory with its git remote: commit, pull, refresh, push.

    One commit per sync with a readable message; a merge, never a rebase; the derived
    state (index, facts, summaries) is refreshed for what was pulled. Errors are one
    line and lose nothing: what could not be pushed stays committed for the next sync.
    After `ihmt sync --every 10m` (or with IHMT_SYNC_EVERY=10m in its environment), the
    MCP server syncs in the background on that period, from its next start (off by
    default).

    --json prints, for a sync: {commit, message, saved, corrected, forgotten, pulled:
    {added, annotated, removed}, pushed, retries, head, followed_purges, warnings}
    (what it skipped or kept, also printed on stderr, one line each); with --status:
    {initialised, remote, branch, reachable, ahead, behind, uncommitted, last_sync,
    error, every}; with --every: {every}; with --init: {remote, branch, repository,
    remote_had_store, pulled, pushed, head}; with --purge: {id, paths, rewritten, pushed, others}.
    """
    chosen = [
        name
        for name, given in (
            ("--init", remote),
            ("--status", show_status),
            ("--purge", purge_id),
            ("--every", every is not None),
        )
        if given
    ]
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(chosen)} cannot be combined; give one of them")
    if remote is not None:
        _create_missing_store(state)
    from ihmt_mcp import Sync, SyncError
    from ihmt_store import Store

    if not chosen and Store.exists(state.path):
        # A committed config no command can read (pulled before syncs refused such
        # configs) would stop this sync too: the remote's, when valid, is taken first.
        taken = Sync.take_remote_config(state.path)
        if taken:
            state.remark(f"warning: {taken}")
    with open_memory(state) as memory:
        sync = Sync(memory)
        if remote is not None:
            done = sync.init(remote)
            state.emit(done.to_json(), done.render())
        elif show_status:
            try:
                status = sync.status()
            except SyncError as exc:
                if exc.reason != "not_initialised":
                    raise
                state.emit({**NOT_SYNCED, "error": str(exc)}, f"not synced: {exc}")
                return
            state.emit(status.to_json(), status.render())
        elif purge_id is not None:
            purged = sync.purge(purge_id)
            state.emit(purged.to_json(), purged.render())
        elif every is not None:
            kept = sync.set_every(every)
            text = (
                f"the MCP server syncs this memory every {kept}, from its next start"
                if kept
                else "the MCP server no longer syncs this memory in the background "
                "(from its next start)"
            )
            state.emit({"every": kept}, text)
        else:
            report = sync.sync()
            state.emit(report.to_json(), report.render())
            for warning in report.warnings:
                state.remark(f"warning: {warning}")


def _create_missing_store(state: State) -> None:
    """``--init`` into a folder with no memory yet: an empty one, which the remote fills."""
    from ihmt_mcp import Memory
    from ihmt_store import Store

    if Store.exists(state.path):
        return
    if state.path.exists() and not state.path.is_dir():
        raise click.ClickException(f"{state.path} is a file, not a folder; choose another --path")
    Memory.init(state.path, semantic="off").close()
