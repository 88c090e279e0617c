"""Leaves edited by hand: finding them, and listing them for ``ihmt doctor``.

A leaf's header carries the checksum of its text and the catalog its file's size; a text
that no longer matches either was edited outside IHMT. Reading such a leaf adopts the
edit (the read step in ``_access.py``); :func:`resized_leaves` and :func:`adopt_resized`
find and adopt the edits that changed a file's size, :func:`hand_edited` lists them all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ihmt_store._files import load_leaf, stored_checksum
from ihmt_store._index import Entry
from ihmt_store._records import checksum_of
from ihmt_store.errors import CorruptFileError, StoreError

__all__ = ["adopt_resized", "hand_edited", "resized_leaves"]


def resized_leaves(path: Path, sizes: Iterable[tuple[str, int]]) -> list[str]:
    """The leaves of ``sizes`` (``(rel, size)`` as the catalog knows them) whose file now
    has another size: one ``stat`` each, relative to its open folder where the system
    allows (a search at 50,000 memories makes 50,000 of them: no path is joined or walked
    from the root for each)."""
    root = str(path)
    changed = []
    if os.stat not in os.supports_dir_fd:
        for rel, size in sizes:
            try:
                if size and os.stat(os.path.join(root, rel)).st_size != size:
                    changed.append(rel)
            except OSError:
                continue
        return changed
    folders: dict[str, list[tuple[str, int, int]]] = {}
    for at, (rel, size) in enumerate(sizes):
        if size:
            folder, _, name = rel.rpartition("/")
            folders.setdefault(folder, []).append((name, size, at))
    found: list[tuple[int, str]] = []
    stat = os.stat
    for folder, leaves in folders.items():
        try:
            fd = os.open(os.path.join(root, folder), os.O_RDONLY)
        except OSError:
            continue
        try:
            for name, size, at in leaves:
                try:
                    if stat(name, dir_fd=fd).st_size != size:
                        found.append((at, f"{folder}/{name}" if folder else name))
                except OSError:
                    continue
        finally:
            os.close(fd)
    return [rel for _, rel in sorted(found)]  # in the catalog's order, as given


def adopt_resized(
    changed: Iterable[str], read_leaf: Callable[[str], object], edited: list[str]
) -> list[str]:
    """Read each leaf of ``changed`` (reading adopts an edit and adds it to ``edited``);
    the ids adopted."""
    found = []
    for rel in changed:
        before = len(edited)
        try:
            read_leaf(rel)
        except StoreError:
            continue
        if len(edited) > before:
            found.append(edited[-1])
    return found


def hand_edited(root: Path, entries: Iterable[Entry]) -> list[str]:
    """The leaves of ``entries`` whose text no longer matches their header's checksum or
    the size the catalog knows. Reads every leaf file."""
    out = []
    for entry in entries:
        try:
            # Read as search reads it: a file it will not use is not an edit it adopts
            # (``Store.file_problems`` lists it).
            leaf, data, _ = load_leaf(root / entry.path, root)
        except (CorruptFileError, OSError):
            continue
        stored = stored_checksum(data)
        if len(data) != entry.size and entry.size:
            out.append(entry.id)
            continue
        if stored is not None and stored != checksum_of(leaf.text):
            out.append(entry.id)
    return out
