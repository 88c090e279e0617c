"""``ihmt sync``: one memory on every machine, with git as the replication engine.

The store folder is a git repository whose remote (``origin``) every machine pushes to.
Only what a user wrote is tracked (``Store.REPLICATED``); what each machine derives is
ignored (``Store.UNREPLICATED``) and rebuilt after a pull, at the cost of the pulled
changes. ``docs/sync.md`` describes the design; this package drives the ``git`` command.

A sync, step by step (:meth:`Sync.sync`):

1. finish what a killed sync left: a merge in progress is aborted (and redone below), an
   index lock no live git holds is removed, pulled files not yet refreshed are refreshed;
2. ``git fetch`` (no store lock: the network may be slow);
3. under the store lock: one commit of what changed (one ``git status``), the merge (a
   fast-forward with ``git read-tree -m -u`` when this machine wrote nothing, else
   ``git merge --no-edit``, never a rebase: the history is shared; a leaf edited by hand
   on both sides goes to the merge driver of ``_leaf_merge``, and the version it set
   apart is saved as a memory right after), then the refresh of the derived state, and
   the record of the refreshed commit in ``state/sync.json``;
4. ``git push`` (no store lock); a rejected push goes back to 2, at most three times.

Every failure is a :class:`SyncError` with one plain line, and nothing is lost: a commit
that cannot be pushed stays local for the next sync, a merge that stops is aborted.

Private to ``ihmt_mcp``: its public names (``Sync``, ``SyncError``, the records) are
re-exported by ``ihmt_mcp``. One module per concern:

- ``_driver``: :class:`Sync`, the façade that runs the steps in order;
- ``_clone``: the clone's layout, per-clone git settings and ``state/sync.json``;
- ``_git``: the ``git`` command and what is read from its output;
- ``_records``: :class:`SyncError` and the records each command returns;
- ``_recovery`` (step 1), ``_commit`` (3a), ``_merge`` (3b), ``_refresh`` (after a
  pull), ``_push`` (4); ``_hand_edits``: the versions the merge driver set apart;
- ``_leaf_merge``: the merge driver git runs (``python -m ihmt_mcp.sync._leaf_merge``);
- ``_setup`` (``--init``), ``_purge`` (``--purge``), ``_status`` (``--status``,
  ``--every``), ``_background`` (the MCP server's timer).

The names below load on first use (lazy_loader, PEP 562): git runs the merge driver as
``python -m ihmt_mcp.sync._leaf_merge``, which imports this file first and must load no
more than the driver needs.
"""

from typing import TYPE_CHECKING

import lazy_loader  # type: ignore[import-untyped]

if TYPE_CHECKING:
    from ihmt_mcp.sync._background import BackgroundSync
    from ihmt_mcp.sync._driver import Sync
    from ihmt_mcp.sync._records import (
        PulledChanges,
        PurgeReport,
        SyncError,
        SyncFailure,
        SyncInit,
        SyncReport,
        SyncStatus,
    )
    from ihmt_mcp.sync._status import background_period, is_synced, parse_period

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_background": ["BackgroundSync"],
        "_driver": ["Sync"],
        "_records": [
            "PulledChanges",
            "PurgeReport",
            "SyncError",
            "SyncFailure",
            "SyncInit",
            "SyncReport",
            "SyncStatus",
        ],
        "_status": ["background_period", "is_synced", "parse_period"],
    },
)

__all__ = [
    # the façade and what it returns
    "Sync",
    "SyncError",
    "SyncFailure",
    "SyncStatus",
    "SyncReport",
    "SyncInit",
    "PurgeReport",
    "PulledChanges",
    # for the MCP server and Memory.forget
    "BackgroundSync",
    "background_period",
    "is_synced",
    "parse_period",
]
