"""The vectors as a process last held them, in one file a later process maps instead of
reading and quantizing every vector again.

A one-shot ``ihmt search`` at 50,000 memories spent most of a second reading 50 MB of
float16 vectors out of ``state/derived.sqlite3`` and quantizing them. The snapshot holds
what :class:`~ihmt_navigator._vectors.VectorIndex` made of them (the int8 codes, one
scale and one live flag a row, the ids in row order) and the derived table's position it
stands for, ``(epoch, seq)``; a reader maps the codes (the pages a question touches are
read, and the operating system shares them between processes) and reads from the table
only what was written after that position. It is a cache of a cache: delete it and the
next search reads the table, and writes it again.

A snapshot is trusted only as far as it matches the table: its space and width, its
sizes against the file's, and the item written at its position (a table deleted and
filled again starts its sequence over). It is plain numbers and text, never unpickled.

Layout: ``MAGIC``, a little-endian ``uint32`` header length, the JSON header, zero
padding to a multiple of 64 bytes, then the codes (rows × dim int8), the scales (rows
float32), the live flags (rows uint8) and the ids (UTF-8, one a line).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ihmt_store import Store

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

logger = logging.getLogger(__name__)

__all__ = ["Snapshot", "drop_snapshots", "read_snapshot", "snapshot_path", "write_snapshot"]

MAGIC = b"IHMTVEC1"
SUFFIX = ".vectors"
"""Every snapshot's file name ends so (one file per space) under the store's ``state/``."""
_ALIGN = 64


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a snapshot holds: the table's position it stands for, and the rows."""

    epoch: int
    seq: int
    mark: str
    """The item written at ``seq`` when it was taken ("" for none): the table's check."""
    ids: list[str]
    codes: NDArray[np.int8]
    """Mapped copy-on-write: a row changed in memory is never written back."""
    scale: NDArray[np.float32]
    live: NDArray[np.bool_]


def snapshot_path(store: Store, space: str) -> Path:
    """Where ``space``'s snapshot lives in ``store``."""
    return store.state_file(re.sub(r"[^A-Za-z0-9._-]", "_", space) + SUFFIX)


def drop_snapshots(store: Store) -> None:
    """Delete every vector snapshot of ``store``: a forgotten memory's vector must not
    stay on disk in one (the next search writes them again)."""
    folder = store.state_file("x" + SUFFIX).parent
    with contextlib.suppress(OSError):
        for path in folder.glob("*" + SUFFIX):
            with contextlib.suppress(OSError):
                path.unlink()


def mark_of(store: Store, space: str, epoch: int, seq: int) -> str:
    """The item written at ``seq`` in ``space`` ("" when none is)."""
    if seq <= 0:
        return ""
    rows = store.derived_changes(space, epoch, seq - 1, limit=1).rows
    return rows[0][0] if rows else ""


def read_snapshot(store: Store, space: str, dim: int) -> Snapshot | None:
    """``space``'s snapshot when there is one that matches the table, else None (a damaged
    or stale one is deleted)."""
    import numpy as np

    path = snapshot_path(store, space)
    try:
        with path.open("rb") as file:
            head = file.read(len(MAGIC) + 4)
            if len(head) < len(MAGIC) + 4 or head[: len(MAGIC)] != MAGIC:
                raise ValueError("not a vector snapshot")
            (length,) = struct.unpack("<I", head[len(MAGIC) :])
            if length > 1 << 16:
                raise ValueError("header too long")
            header = json.loads(file.read(length).decode("utf-8"))
            rows, start = int(header["rows"]), int(header["start"])
            if header["space"] != space or int(header["dim"]) != dim or rows < 0:
                raise ValueError("another space or width")
            tail = start + rows * dim
            size = os.fstat(file.fileno()).st_size
            if size != tail + rows * 5 + int(header["ids_bytes"]):
                raise ValueError("truncated")
            file.seek(tail)
            scale = np.frombuffer(file.read(rows * 4), dtype="<f4").astype(np.float32)
            live = np.frombuffer(file.read(rows), dtype=np.uint8).astype(bool)
            text = file.read(int(header["ids_bytes"])).decode("utf-8")
        ids = text.split("\n") if rows else []
        if len(ids) != rows:
            raise ValueError("ids and rows differ")
        epoch, seq = int(header["epoch"]), int(header["seq"])
        mark = str(header["mark"])
        if mark_of(store, space, epoch, seq) != mark:
            raise ValueError("the table was written anew since")
        # A plain array over the map: numpy's memmap class costs tens of microseconds
        # a row lookup, which a search makes by the hundred.
        codes: Any = (
            np.memmap(path, dtype=np.int8, mode="c", offset=start, shape=(rows, dim)).view(
                np.ndarray
            )
            if rows
            else np.zeros((0, dim), dtype=np.int8)
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        logger.info("the vector snapshot %s is not used (%s)", path, exc)
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return Snapshot(epoch, seq, mark, ids, codes, scale, live)


def write_snapshot(
    store: Store,
    space: str,
    position: tuple[int, int],
    ids: list[str],
    codes: NDArray[np.int8],
    scale: NDArray[np.float32],
    live: NDArray[np.bool_],
) -> None:
    """Write the first ``len(ids)`` rows as ``space``'s snapshot at the table's
    ``position`` (atomically: a reader sees the old file or the new one). A failure (a
    full disk, a read-only store) is logged: search goes on without it."""
    import numpy as np

    epoch, seq = position
    path = snapshot_path(store, space)
    rows, dim = len(ids), int(codes.shape[1])
    blob = "\n".join(ids).encode("utf-8")
    header: dict[str, Any] = {
        "space": space,
        "epoch": epoch,
        "seq": seq,
        "mark": mark_of(store, space, epoch, seq),
        "rows": rows,
        "dim": dim,
        "ids_bytes": len(blob),
        "start": 0,
    }
    for _ in range(2):  # the header's length holds the start it names
        text = json.dumps(header).encode("utf-8")
        first = len(MAGIC) + 4 + len(text)
        header["start"] = -(-first // _ALIGN) * _ALIGN
    text = json.dumps(header).encode("utf-8")
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temp.open("wb") as file:
            file.write(MAGIC + struct.pack("<I", len(text)) + text)
            file.write(b"\0" * (header["start"] - len(MAGIC) - 4 - len(text)))
            for begin in range(0, rows, 8192):
                file.write(np.ascontiguousarray(codes[begin : min(rows, begin + 8192)]).tobytes())
            file.write(np.asarray(scale[:rows], dtype="<f4").tobytes())
            file.write(np.asarray(live[:rows], dtype=np.uint8).tobytes())
            file.write(blob)
        os.replace(temp, path)
    except OSError as exc:
        logger.info("the vector snapshot %s is not written (%s)", path, exc)
        with contextlib.suppress(OSError):
            temp.unlink()
