"""Helpers for tests, in this package and in the packages built on it.

Public on purpose: a sibling's tests build real stores with these instead of mocks.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ihmt_store._records import Leaf, leaf_id_for
from ihmt_store._store import Store

__all__ = ["killed_at_rename", "make_leaf", "store_with"]


def make_leaf(
    text: str,
    *,
    domain: str = "general",
    timestamp: str = "2025-01-01T00:00:00Z",
    source: str = "test",
    position: int = 0,
    **fields: Any,
) -> Leaf:
    """A leaf whose id is derived from its content, like the ingest pipeline makes them."""
    leaf_id = leaf_id_for(domain=domain, source=source, position=position, text=text)
    return Leaf(
        leaf_id=leaf_id, text=text, timestamp=timestamp, domain=domain, source=source, **fields
    )


def store_with(
    path: str | os.PathLike[str], texts: Iterable[str | tuple[str, str]] = (), **leaf_fields: Any
) -> tuple[Store, Sequence[Leaf]]:
    """Create a store at ``path`` holding one leaf per text (``(domain, text)`` pairs allowed)."""
    store = Store.create(Path(path))
    leaves = []
    for position, item in enumerate(texts):
        domain, text = item if isinstance(item, tuple) else ("general", item)
        leaves.append(make_leaf(text, domain=domain, position=position, **leaf_fields))
    stored = store.put_leaves(leaves)
    return store, stored


_KILLED_AT_RENAME = """\
import os, signal, sys
path, k = sys.argv[1], int(sys.argv[2])
real = os.replace
done = 0
def counting(src, dst):
    global done
    done += 1
    if done == k:
        os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst)
os.replace = counting
"""


def killed_at_rename(body: str) -> str:
    """Python source for ``python -c SOURCE PATH K``: it runs ``body`` (which sees
    ``path``) and dies by SIGKILL at its K-th ``os.replace``, then prints how many
    renames it made when it lives to the end.

    The fault is real (the kernel kills the process between two renames); only the
    moment is chosen.
    """
    return _KILLED_AT_RENAME + textwrap.dedent(body).strip() + "\nprint(done)\n"
