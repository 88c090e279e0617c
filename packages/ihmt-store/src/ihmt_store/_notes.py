"""Annotations as immutable files, their fold, tombstones and this machine's clock.

Format version 2 keeps every user-level change to a memory in a file of its own,
``notes/<leaf_id>/<at>-<machine>-<random>.json``, written once and never changed. No
two machines can write the same path, so a replication engine merges them as a union of
files. The state of a memory is the fold of its notes in one total order — ``at``,
then ``machine``, then the file name — so every machine holding the same files gets
the same state, whatever order they arrived in.

A forget writes ``forgotten/<leaf_id>.json`` (the id only: its bytes are the same on
every machine, so two machines forgetting the same memory do not conflict), and a
tombstone wins over every leaf file and note of that id.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from hashlib import sha256
from pathlib import Path
from typing import Any, Literal

from ihmt_store._files import TEMP_SUFFIX, json_bytes, load_object, read_json
from ihmt_store._index import Entry, Index, leaf_row
from ihmt_store._layout import FORGOTTEN_DIR, NOTES_DIR
from ihmt_store._records import Correction, Leaf, check_id, normalize_timestamp
from ihmt_store.errors import CorruptFileError

logger = logging.getLogger(__name__)

__all__ = [
    "CLOCK_FILE",
    "Clock",
    "Folded",
    "Note",
    "NoteOp",
    "RESTORED_KEY",
    "fold",
    "index_leaf",
    "is_tombstoned",
    "migrated_note",
    "newest",
    "note_files",
    "note_rel",
    "parse_note",
    "read_notes",
    "refold",
    "state_of",
    "tombstone_bytes",
    "tombstone_rel",
]

NoteOp = Literal["outdated", "restored", "extra"]
"""What a note records: a correction (``outdated``), its undoing (``restored``), or
user-level keys merged into the leaf's ``extra`` (explicit facts)."""

RESTORED_KEY = "restored_from"
"""The ``extra`` key the fold fills with the memories whose correction of a leaf was
undone by an explicit restore (:attr:`Leaf.restored_from`)."""

CLOCK_FILE = "clock.json"
"""This machine's id and the newest note time it has seen, under ``state/``."""

_AT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

CLOCK_HORIZON_MS = 100 * 365 * 24 * 3600 * 1000
"""How far ahead of this machine's wall clock the note clock follows a time it reads
from a file (a note, ``clock.json``): a machine whose clock runs years ahead is still
followed, so a later decision here sorts after its notes; a time further ahead (a
note dated 9999-12-31) is not a clock's, and following it would leave no time to stamp
the next note with."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """One annotation file."""

    op: NoteOp
    leaf: str
    """The leaf it annotates (also its folder's name)."""
    at: str
    """Hybrid logical clock: UTC ``YYYY-MM-DDTHH:MM:SS.mmmZ``, past every note seen."""
    machine: str
    """The writer's random machine id (``m-<hex>``)."""
    name: str = ""
    """The file name (the last key of the fold's order)."""
    salt: str = ""
    """Random hex of a random length written first in the file (see :meth:`to_bytes`)."""
    by: str = ""
    """``outdated``: the correcting memory."""
    date: str = ""
    """``outdated``: the correction's date (canonical timestamp)."""
    reason: str = ""
    """``outdated``: why, in a few words (may be empty)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """``extra``: the keys merged into the leaf's ``extra``."""

    def order(self) -> tuple[str, str, str]:
        return (self.at, self.machine, self.name)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"salt": self.salt} if self.salt else {}
        out["op"] = self.op
        out["leaf"] = self.leaf
        if self.op == "outdated":
            out["by"] = self.by
            out["date"] = self.date
            if self.reason:
                out["reason"] = self.reason
        elif self.op == "extra":
            out["extra"] = dict(self.extra)
        out["at"] = self.at
        out["machine"] = self.machine
        return out

    def to_bytes(self) -> bytes:
        """One line of JSON, its random ``salt`` first.

        Git's rename detection compares files in 64-byte chunks; two notes of different
        memories written as indented JSON share most lines, and a merge that detects
        renames can pair a note deleted on both sides with a new one and stop on a
        rename/delete conflict. On one line, behind a salt of random length, their
        chunks rarely align: two such notes score well under git's 50% threshold.
        """
        return (json.dumps(self.to_json(), ensure_ascii=False) + "\n").encode("utf-8")


def note_rel(note: Note) -> str:
    """Path of a note's file, relative to the store."""
    return f"{NOTES_DIR}/{check_id(note.leaf, 'leaf id')}/{note.name}"


def tombstone_rel(leaf_id: str) -> str:
    """Path of a forgotten memory's tombstone, relative to the store."""
    return f"{FORGOTTEN_DIR}/{check_id(leaf_id, 'leaf id')}.json"


def tombstone_bytes(leaf_id: str) -> bytes:
    """A tombstone's bytes: a function of the id alone (see the module docstring)."""
    return json_bytes({"leaf_id": leaf_id, "forgotten": True})


def _name_for(at: str, machine: str, salt: str) -> str:
    stamp = at.replace("-", "").replace(":", "")
    return f"{stamp}-{machine}-{salt}.json"


def parse_note(data: bytes, path: Path) -> Note:
    """Parse a note file (raises CorruptFileError)."""
    obj = load_object(data, path)
    try:
        op = obj["op"]
        at = str(obj["at"])
        if not _AT.match(at):
            raise ValueError(f"'at' {at!r} is not YYYY-MM-DDTHH:MM:SS.mmmZ")
        common: dict[str, Any] = {
            "leaf": check_id(str(obj["leaf"]), "leaf id"),
            "at": at,
            "machine": str(obj["machine"]),
            "name": path.name,
        }
        if op == "outdated":
            return Note(
                op="outdated",
                by=check_id(str(obj["by"]), "leaf id"),
                date=normalize_timestamp(str(obj["date"])),
                reason=str(obj.get("reason") or ""),
                **common,
            )
        if op == "restored":
            return Note(op="restored", **common)
        if op == "extra":
            extra = obj["extra"]
            if not isinstance(extra, dict):
                raise ValueError("'extra' must be an object")
            return Note(op="extra", extra=extra, **common)
        raise ValueError(f"unknown op {op!r}")
    except KeyError as exc:
        raise CorruptFileError(f"note lacks {exc}", path=path) from None
    except (TypeError, ValueError) as exc:
        raise CorruptFileError(f"invalid note: {exc}", path=path) from None


def read_notes(root: Path, leaf_id: str) -> list[Note]:
    """Every readable note of ``leaf_id`` on disk (unreadable ones are logged and skipped;
    a note filed under another leaf's folder is skipped too)."""
    folder = root / NOTES_DIR / leaf_id
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        logger.warning("cannot list the notes of %s: %s", leaf_id, exc)
        return []
    out = []
    for name in names:
        if name.startswith(".") or not name.endswith(".json") or name.endswith(TEMP_SUFFIX):
            continue
        path = folder / name
        try:
            note = parse_note(path.read_bytes(), path)
        except (CorruptFileError, OSError) as exc:
            logger.warning("skipping note %s/%s: %s", leaf_id, name, exc)
            continue
        if note.leaf != leaf_id:
            logger.warning("skipping note %s/%s: it annotates %s", leaf_id, name, note.leaf)
            continue
        out.append(note)
    return out


@dataclass(frozen=True, slots=True)
class Folded:
    """The state of a memory: the fold of its notes."""

    outdated_by: Correction | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    newest: str = ""
    """The newest ``at`` among the notes (the clock moves past it)."""


def newest(notes: Iterable[Note]) -> str:
    """The newest ``at`` among ``notes`` ("" when none): what the clock moves past."""
    return max((n.at for n in notes), default="")


def fold(notes: Iterable[Note], forgotten: Iterable[str] = ()) -> Folded:
    """The state ``notes`` give a memory, in the one total order (at, machine, name).

    The OUTDATED flag is a last-writer-wins register: the last ``outdated`` or
    ``restored`` note decides. A ``restored`` note lists the correction it undid in
    ``extra[RESTORED_KEY]`` (until that memory corrects it again): search then never
    infers that correction on its own. A correction by a memory that is ``forgotten`` counts
    as never made (the flag falls back to the note before it). ``extra`` notes merge
    their keys, the later one winning a key. The same set of notes gives the same
    state in any order, and a note seen twice (the same name) counts once.
    """
    gone = set(forgotten)
    unique = {(n.name, n.at, n.machine): n for n in notes}
    current: Correction | None = None
    extra: dict[str, Any] = {}
    # What a restore undid does not depend on ``forgotten`` (a machine that has not
    # seen a forget yet, or does not refold for it, gets the same list).
    undone: dict[str, None] = {}
    marked = ""
    newest = ""
    for note in sorted(unique.values(), key=Note.order):
        newest = max(newest, note.at)
        if note.op == "outdated":
            marked = note.by
            undone.pop(note.by, None)
            if note.by in gone:
                continue
            current = Correction(by=note.by, date=note.date, reason=note.reason)
        elif note.op == "restored":
            if marked:
                undone[marked] = None
            marked = ""
            current = None
        else:
            extra.update(note.extra)
    if undone:
        kept = extra.get(RESTORED_KEY)
        earlier = [str(x) for x in kept] if isinstance(kept, list) else []
        extra[RESTORED_KEY] = sorted({*earlier, *undone})
    return Folded(outdated_by=current, extra=extra, newest=newest)


def migrated_note(leaf_id: str, correction: Correction) -> Note:
    """The note that carries a format-1 header's ``outdated_by``: its name and bytes
    follow from the leaf and the correction alone, so a migration run twice (or on two
    copies of one store) writes the same file."""
    at = correction.date[:-1] + ".000Z"
    full = sha256(
        "\x1f".join((leaf_id, correction.by, correction.date, correction.reason)).encode()
    ).hexdigest()
    digest = full[:12]
    machine = "m-format1"
    return Note(
        op="outdated",
        leaf=leaf_id,
        at=at,
        machine=machine,
        name=_name_for(at, machine, digest),
        salt=full[: 16 + int(full[-2:], 16) % 32],  # a length of its own, as tick's
        by=correction.by,
        date=correction.date,
        reason=correction.reason,
    )


def _ms(at: str) -> int:
    moment = datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def _now_ms() -> int:
    return int(datetime.now(timezone.utc).timestamp() * 1000)


def _at(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class Clock:
    """This machine's id and hybrid logical clock, kept in ``state/clock.json``.

    ``tick`` gives a time past the wall clock's last reading, every note this machine
    wrote and every note it has seen (``observe``), so a note written after reading
    another sorts after it even when this machine's wall clock is behind. Deleting
    ``state/`` gives a new machine id, which is fine: ids only break ties.
    Callers hold the store's lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._machine = ""
        self._last = 0

    def _load(self) -> None:
        if self._machine:
            return
        try:
            obj = read_json(self.path)
            machine = str(obj["machine"])
            if not re.match(r"^m-[0-9a-f]{8,32}$", machine):
                raise ValueError(machine)
            self._machine = machine
            last = int(obj.get("last", 0))
            self._last = last if 0 <= last <= _now_ms() + CLOCK_HORIZON_MS else 0
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self._machine = "m-" + secrets.token_hex(6)
            self._last = 0

    @property
    def machine(self) -> str:
        self._load()
        return self._machine

    def observe(self, at: str) -> None:
        """Move past a note time seen (pulled or on disk); saved by the next tick."""
        if not at:
            return
        self._load()
        try:
            seen = _ms(at)
        except (ValueError, OverflowError):
            return
        if seen > _now_ms() + CLOCK_HORIZON_MS:
            logger.warning("the note clock ignores the time %s, far in the future", at)
            return
        self._last = max(self._last, seen)

    def tick(self) -> str:
        """The next time to stamp a note with. Not saved here: the batch that writes the
        note writes :meth:`to_bytes` with it (one file per batch, not one per note)."""
        self._load()
        now = _now_ms()
        if self._last > now + CLOCK_HORIZON_MS:
            self._last = now  # never past what a note's name can say
        self._last = max(now, self._last + 1)
        return _at(self._last)

    def to_bytes(self) -> bytes:
        """The clock's file as it stands."""
        self._load()
        return json_bytes({"machine": self._machine, "last": self._last})

    def note(self, op: NoteOp, leaf: str, **fields: Any) -> Note:
        """A new note stamped now, with a unique file name."""
        at = self.tick()
        return Note(
            op=op,
            leaf=leaf,
            at=at,
            machine=self.machine,
            name=_name_for(at, self.machine, secrets.token_hex(4)),
            salt=secrets.token_hex(8 + secrets.randbelow(32)),
            **fields,
        )


# ---------------------------------------------------------------------- the catalog
_KEEP: Any = object()


def is_tombstoned(root: Path, leaf_id: str, gone: Iterable[str] = ()) -> bool:
    """Whether ``leaf_id`` is forgotten: a tombstone on disk, or one staged (``gone``)."""
    # Not tombstone_rel: the ids here may come unchecked from a merge's paths.
    return leaf_id in gone or (root / FORGOTTEN_DIR / f"{leaf_id}.json").is_file()


def state_of(
    root: Path,
    leaf_id: str,
    *,
    header: Correction | None = None,
    staged: Iterable[Note] = (),
    gone: Iterable[str] = (),
    on_disk: Sequence[Note] | None = None,
) -> Folded:
    """The fold of a leaf's notes on disk (``on_disk`` when the caller has read them),
    the notes ``staged`` in a batch, and a format-1 header's correction (``header``,
    read as the note its migration writes)."""
    disk = read_notes(root, leaf_id) if on_disk is None else on_disk
    notes = [*disk, *staged]
    if header is not None:
        notes.append(migrated_note(leaf_id, header))
    gone = set(gone)
    correctors = {n.by for n in notes if n.op == "outdated"}
    forgotten = {c for c in correctors if is_tombstoned(root, c, gone)}
    return fold(notes, forgotten)


def index_leaf(
    root: Path,
    index: Index,
    leaf: Leaf,
    rel: str,
    size: int,
    *,
    parent: str | None = _KEEP,
    staged: Iterable[Note] = (),
    gone: Iterable[str] = (),
) -> tuple[Entry, Folded]:
    """Index ``leaf`` (read from ``rel``) with the state its notes give it.

    Its parent is ``parent`` when given, else the catalog's (a leaf does not carry it),
    else the branch whose file lists it.
    """
    folded = state_of(root, leaf.leaf_id, header=leaf.outdated_by, staged=staged, gone=gone)
    if parent is _KEEP:
        existing = index.get(leaf.leaf_id)
        parent = existing.parent_id if existing is not None else index.listing_branch(leaf.leaf_id)
    row, fields = leaf_row(leaf.evolve(parent_id=parent, outdated_by=folded.outdated_by), rel, size)
    index.upsert(row, fields)
    _keep_folded(index, leaf.leaf_id, folded)
    return row, folded


def _keep_folded(index: Index, leaf_id: str, folded: Folded) -> None:
    reason = folded.outdated_by.reason if folded.outdated_by is not None else ""
    index.set_folded(leaf_id, reason, dict(folded.extra))


def refold(
    root: Path,
    index: Index,
    leaf_id: str,
    *,
    staged: Iterable[Note] = (),
    gone: Iterable[str] = (),
    on_disk: Sequence[Note] | None = None,
) -> Folded | None:
    """Fold a catalogued leaf's notes again and keep the result; None when the leaf is
    not in the catalog (its notes wait for it)."""
    entry = index.get(leaf_id)
    if entry is None or entry.kind != "leaf":
        return None
    folded = state_of(root, leaf_id, staged=staged, gone=gone, on_disk=on_disk)
    correction = folded.outdated_by
    index.set_status(
        leaf_id,
        correction.by if correction else None,
        correction.date if correction else None,
    )
    _keep_folded(index, leaf_id, folded)
    return folded


def note_files(root: Path, leaf_id: str) -> list[str]:
    """Store-relative paths of every file in a leaf's notes folder."""
    folder = root / NOTES_DIR / leaf_id
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [f"{NOTES_DIR}/{leaf_id}/{name}" for name in names]
