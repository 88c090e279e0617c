"""After a pull: the derived state refreshed for the files that changed, and the commit
it was refreshed to recorded (so a killed sync's next run refreshes the rest)."""

from __future__ import annotations

import logging

from ihmt_mcp.sync._clone import Clone, replicated
from ihmt_mcp.sync._records import PulledChanges

logger = logging.getLogger(__name__)

__all__ = ["APPLY_SLICE", "apply_since", "catch_up"]

APPLY_SLICE = 2000
"""Pulled paths refreshed per hold of the store lock."""
MAX_PROBLEMS_SAID = 5
"""Pulled files a sync names among the ones it could not use as they are (the rest are
counted)."""


def catch_up(clone: Clone) -> PulledChanges:
    """Refresh the derived state from the commit it was last refreshed to up to HEAD
    (nothing when they are the same, or when no refresh was ever recorded)."""
    head = clone.git.rev("HEAD")
    refreshed = clone._state().get("refreshed")
    if not head or not isinstance(refreshed, str) or refreshed == head:
        return PulledChanges()
    return apply_since(clone, refreshed, head)


def apply_since(clone: Clone, before: str, head: str) -> PulledChanges:
    """Refresh the derived state for the files that changed from ``before`` to ``head``
    and record ``head`` as refreshed."""
    git = clone.git
    if not head or before == head:
        clone._save_state(refreshed=head, merging=None)
        return PulledChanges()
    diff = (
        git.run("diff", "--name-only", "--no-renames", "-z", before, head, check=False)
        if before
        else None
    )
    if diff is not None and diff.returncode == 0:
        paths = [p for p in diff.stdout.split("\0") if p]
    else:  # no refresh recorded, or its commit is gone (a purge rewrote it): all
        paths = git.paths("ls-tree", "-r", "--name-only", "-z", head)
    changed = [p for p in paths if replicated(p)]
    pulled = PulledChanges()
    problems: list[str] = []
    # In slices, each under the lock: a large pull never keeps an agent's save
    # waiting for more than one slice. Should the process die midway, the refreshed
    # commit is still ``before`` and the next sync applies the whole span again.
    for start in range(0, len(changed), APPLY_SLICE):
        with clone.store.locked():
            applied = clone.memory.apply_pulled(changed[start : start + APPLY_SLICE])
        problems += [f"{p.path}: {p.reason}" for p in applied.problems]
        pulled = pulled.merged(
            PulledChanges(
                added=tuple(applied.added),
                annotated=tuple(applied.annotated),
                removed=tuple(applied.removed),
            )
        )
    if pulled.added:
        from ihmt_mcp._withheld import secret_leaves

        for leaf_id, path, what in secret_leaves(clone.store, pulled.added):
            clone._warn(
                f"pulled {leaf_id} ({path}) holds what looks like {what}: searches do not "
                "show that line; remove the secret from the file on every machine"
            )
    for problem in problems[:MAX_PROBLEMS_SAID]:
        clone._warn(f"pulled {problem}")
    if len(problems) > MAX_PROBLEMS_SAID:
        clone._warn(
            f"and {len(problems) - MAX_PROBLEMS_SAID} more pulled file(s) not used as they "
            "are ('ihmt rebuild' lists them all)"
        )
    clone._save_state(refreshed=head, merging=None)
    logger.info("refreshed %d pulled path(s): %s", len(changed), pulled.describe())
    return pulled
