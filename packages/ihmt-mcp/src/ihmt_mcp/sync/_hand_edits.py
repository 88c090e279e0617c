"""The versions the leaf merge driver set apart, saved as memories after the merge.

A leaf edited by hand on two machines keeps one version (``_leaf_merge`` decides, inside
``git merge``); the other is stashed under ``.git/ihmt/leaf-merges/`` and saved here, in
the sync's locked step that follows the merge, flagged OUTDATED by the leaf.
"""

from __future__ import annotations

import base64
import json
import logging
import re

from ihmt_mcp.sync._clone import Clone
from ihmt_mcp.sync._leaf_merge import LEAF_MERGES
from ihmt_store import CorruptFileError, Entry, Leaf, ReplicaFile, leaf_id_for

logger = logging.getLogger(__name__)

__all__ = ["settle_leaf_merges"]


def settle_leaf_merges(clone: Clone) -> list[str]:
    """Save as memories the versions of leaves the merge driver did not keep (it
    stashed them under ``.git/``, never opening the store), each flagged OUTDATED by
    the leaf that kept the other version; the ids saved. Under the lock.

    A stash of a merge that did not complete (HEAD still where the driver saw it:
    the merge was undone, or killed and is redone) is discarded: the other version
    is still on the other side and comes back with the merge."""
    folder = clone.folder / ".git" / LEAF_MERGES
    if not folder.is_dir():
        return []
    head = clone.git.rev("HEAD")
    saved: list[str] = []
    for stash in sorted(folder.glob("*.json")):
        try:
            record = json.loads(stash.read_text(encoding="utf-8"))
            other = base64.b64decode(record["other"], validate=True)
            leaf_id, merged_on = str(record["leaf"]), str(record["head"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("%s cannot be read (%s); left for a person", stash, exc)
            continue
        if merged_on != head:
            new_id = keep_other_version(clone, leaf_id, other)
            if new_id:
                saved.append(new_id)
        stash.unlink(missing_ok=True)
    return saved


def keep_other_version(clone: Clone, leaf_id: str, data: bytes) -> str:
    """Save ``data`` (a leaf file the merge replaced) as a memory of its own, OUTDATED
    by ``leaf_id``; its id ('' when there is nothing to save)."""
    store = clone.store
    if clone._forgotten(leaf_id):
        return ""  # forgotten on some machine: a tombstone wins, as everywhere
    other = _other_version(leaf_id, data, store.entry(leaf_id))
    if other is None:
        logger.warning("the other version of %s is not a leaf; left in git history", leaf_id)
        return ""
    present = store.entry(other.leaf_id)
    if present is None:
        clone.memory._store_group([other], consolidate=True)
    elif present.outdated_by == leaf_id:
        return other.leaf_id  # saved by an earlier run (killed before its stash went)
    if store.entry(leaf_id) is not None:
        try:
            clone.memory.mark_outdated(
                other.leaf_id,
                leaf_id,
                reason="edited by hand on two machines: the later edit is current",
            )
        except ValueError as exc:  # a correction cycle: both stay, neither flagged
            logger.warning("%s and %s: %s", other.leaf_id, leaf_id, exc)
    logger.info(
        "kept the other version of %s, edited on two machines, as %s", leaf_id, other.leaf_id
    )
    return other.leaf_id


def _other_version(leaf_id: str, data: bytes, current: Entry | None) -> Leaf | None:
    """The memory a replaced version of ``leaf_id`` becomes: its own header and text,
    with the id its text gives at the same place (never the leaf's own id)."""
    try:
        leaf = ReplicaFile.leaf(data).evolve(leaf_id=leaf_id)
    except CorruptFileError:
        # Its header was damaged by hand: the text, dated and filed as the leaf is.
        if current is None:
            return None
        try:
            text = ReplicaFile.text(data).decode("utf-8")
        except UnicodeDecodeError:
            return None
        leaf = Leaf(leaf_id=leaf_id, text=text, timestamp=current.timestamp, domain=current.domain)
    text = leaf.text
    match = re.search(r"-(\d{4,})-[0-9a-f]+$", leaf_id)
    position = int(match.group(1)) if match else 0
    new_id = leaf_id
    while new_id == leaf_id:
        new_id = leaf_id_for(domain=leaf.domain, source=leaf.source, position=position, text=text)
        position += 1
    return leaf.evolve(leaf_id=new_id)
