"""Format migrations of the files, run under the lock when an older store opens.

Format 1 → 2 takes the annotations out of leaf headers: ``outdated_by`` becomes a note
(whose name and bytes follow from the leaf and the correction alone), then the header
is rewritten without ``parent_id`` and ``outdated_by`` in one atomic rename. Each step
is safe to repeat: a migration killed at any point is finished by the next open, and a
leaf already rewritten is left alone.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ihmt_store._files import (
    TEMP_SUFFIX,
    fsync_dir,
    parse_leaf,
    replace_temp,
    sync_paths,
    within,
    without_format1_keys,
    write_temp,
)
from ihmt_store._layout import LEAF_DIR
from ihmt_store._notes import migrated_note, note_rel
from ihmt_store.errors import CorruptFileError

logger = logging.getLogger(__name__)

__all__ = ["migrate_leaves"]

_CHUNK = 512
"""Files written, flushed together and renamed per step."""


def migrate_leaves(root: Path) -> int:
    """Rewrite every format-1 leaf of the store at ``root`` to format 2; return how
    many were rewritten. Unreadable leaves are logged and left as they are."""
    todo: list[tuple[Path, bytes, bytes]] = []
    done = 0
    for full in _leaf_files(root):
        try:
            data = full.read_bytes()
            new = without_format1_keys(data, full)
        except (OSError, CorruptFileError) as exc:
            logger.warning("not migrated, left as it is: %s (%s)", full, exc)
            continue
        if new is None:
            continue
        todo.append((full, data, new))
        if len(todo) >= _CHUNK:
            done += _rewrite(root, todo)
            todo = []
    if todo:
        done += _rewrite(root, todo)
    if done:
        logger.warning("migrated %d leaf header(s) of %s to format 2", done, root)
    return done


def _leaf_files(root: Path) -> list[Path]:
    folder = root / LEAF_DIR
    out: list[Path] = []
    if not folder.is_dir() or not within(folder, root):
        return out
    for sub, dirs, files in os.walk(folder):
        here = Path(sub)
        dirs[:] = sorted(d for d in dirs if within(here / d, root))
        for name in sorted(files):
            if name.startswith(".") or not name.endswith(".txt") or name.endswith(TEMP_SUFFIX):
                continue
            full = here / name
            if full.is_symlink() and not within(full, root):
                continue
            out.append(full)
    return out


def _rewrite(root: Path, todo: list[tuple[Path, bytes, bytes]]) -> int:
    """Notes first (flushed and in place), then the headers (flushed, then renamed)."""
    notes: list[tuple[Path, Path]] = []
    for full, data, _ in todo:
        try:
            leaf = parse_leaf(data, full)
        except CorruptFileError as exc:
            logger.warning("not migrated, left as it is: %s", exc)
            continue
        if leaf.outdated_by is None:
            continue
        note = migrated_note(leaf.leaf_id, leaf.outdated_by)
        target = root / note_rel(note)
        if target.exists():
            continue  # written by a run that was killed before its header
        notes.append((write_temp(target, note.to_bytes()), target))
    _land(notes)
    leaves = [(write_temp(full, new, mkdir=False), full) for full, _, new in todo]
    _land(leaves)
    return len(leaves)


def _land(moves: list[tuple[Path, Path]]) -> None:
    if not moves:
        return
    sync_paths(tmp for tmp, _ in moves)
    for tmp, target in moves:
        replace_temp(tmp, target)
    for folder in {target.parent for _, target in moves}:
        fsync_dir(folder)
