"""``Timeline``: the dated facts of a store, their history, contradictions and corrections."""

from __future__ import annotations

import logging
import re
import threading
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from enum import IntEnum
from operator import itemgetter
from typing import Any, NamedTuple

from ihmt_facts._extract import extract
from ihmt_facts._journal import Journal, JournalDamagedError, LeafRecord, Outdated
from ihmt_facts._pattern import Pattern
from ihmt_facts._records import (
    Contradiction,
    Extraction,
    Fact,
    FactState,
    FactStatus,
    Outcome,
    Recorded,
    TimelineStats,
    normalize_attribute,
    normalize_subject,
    normalize_value,
    parse_key,
    parse_moment,
    value_key,
)
from ihmt_facts._rules import DEFAULT_PATTERNS
from ihmt_facts.errors import InvalidFactError, InvalidPatternError, UnknownLeafError
from ihmt_store import (
    Correction,
    Leaf,
    LeafNotFoundError,
    Store,
    leaf_id_for,
    now_timestamp,
)

logger = logging.getLogger(__name__)

__all__ = ["JOURNAL_NAME", "Timeline"]

JOURNAL_NAME = "facts.jsonl"
"""The timeline's derived file under the store's ``state/``."""
FACTS_KEY = "facts"
"""Key of a leaf header's ``extra`` holding the facts recorded explicitly about it."""
FACT_DOMAIN = "facts"
"""Domain of the small leaves that hold facts recorded without a source leaf."""
FACT_SOURCE = "ihmt-facts"
FACT_TAG = "kind:fact"
"""Tag of those leaves; their text is never run through the extraction rules."""

_COMPACT_SLACK = 1000
"""Compact the journal once it holds this many lines more than there are live records,
or as many more as there are live records when that is more (so a compaction, which
rewrites them all, costs each appended line a bounded share whatever the store's size)."""

_Key = tuple[str, str]


# ---------------------------------------------------------------------- the pure timeline
class _EventKind(IntEnum):
    """What an event does to its fact; at one moment, statements come before retirements."""

    STATES = 0
    """The leaf states the fact."""
    RETIRES = 1
    """The fact stops holding: its leaf was corrected by a leaf about something else."""


class _Event(NamedTuple):
    """One dated step of a key's timeline; the first four fields order the events."""

    moment: str
    kind: _EventKind
    leaf_id: str
    position: int
    """Where the fact stands among its leaf's facts."""
    fact: Fact
    retired_by: str | None
    """For a RETIRES event, the correcting leaf; else None."""


_STATES, _RETIRES = _EventKind.STATES, _EventKind.RETIRES  # hot loops: no class lookup

_EventKey = tuple[str, _EventKind, str, int]
"""(moment, kind, leaf id, position): what orders the events of a key; unique."""
_event_key: Callable[[_Event], _EventKey] = itemgetter(0, 1, 2, 3)
"""The sort key of the events (a C function: the folds sort and bisect on it)."""


@dataclass(slots=True)
class _Period:
    """One value's run in a key's timeline, opened by the event ``opened``."""

    opened: _EventKey
    value: str
    """The value as first stated in the period."""
    vkey: str
    """Its comparison form (:func:`value_key`)."""
    start: str
    sources: list[str]
    """Leaves that stated the value in the period, first statement first."""
    source_set: set[str]
    last: str
    """The latest statement."""
    count: int
    """Statements in the period."""
    live: set[tuple[str, int]]
    """(leaf id, position) of the statements not retired yet; the last retirement ends it."""
    change: Contradiction | None
    """The change that opened it (None for the first value or after a retirement)."""
    end: str | None = None
    by: str | None = None
    """The leaf that ended it."""

    def state(self, key: _Key) -> FactState:
        return FactState(
            subject=key[0],
            attribute=key[1],
            value=self.value,
            status=FactStatus.ACTIVE if self.end is None else FactStatus.HISTORICAL,
            valid_from=self.start,
            valid_to=self.end,
            superseded_by=self.by,
            sources=tuple(self.sources),
            last_stated=self.last,
            statements=self.count,
        )


@dataclass(frozen=True, slots=True)
class _KeyTimeline:
    states: tuple[FactState, ...]
    changes: tuple[Contradiction, ...]


_EMPTY = _KeyTimeline((), ())


def _change_id(c: Contradiction) -> tuple[str, ...]:
    return (c.old_date, value_key(c.old_value), c.new_date, value_key(c.new_value), c.new_source)


class _KeyLog:
    """The dated events of one (subject, attribute) and the periods they fold into.

    Kept up to date as leaves come and go, at a cost that follows what changed, never
    the key's whole history: events appended after the last one continue the fold from
    where it stands; an event inserted or removed earlier refolds from the period that
    holds it and stops as soon as a period opens exactly as it did before (from there
    on nothing can differ). The result is the same as folding every event again.
    """

    __slots__ = ("_view", "by_leaf", "events", "key", "opened", "periods")

    def __init__(self, key: _Key) -> None:
        self.key = key
        self.events: list[_Event] = []
        """Sorted by :func:`_event_key`."""
        self.by_leaf: dict[str, tuple[_Event, ...]] = {}
        self.periods: list[_Period] = []
        self.opened: list[_EventKey] = []
        """``periods[i].opened``, for bisection."""
        self._view: _KeyTimeline | None = None

    def view(self) -> _KeyTimeline:
        if self._view is None:
            self._view = _KeyTimeline(
                tuple(p.state(self.key) for p in self.periods),
                tuple(p.change for p in self.periods if p.change is not None),
            )
        return self._view

    def period_of(self, event: _EventKey) -> _Period | None:
        """The period a STATES event belongs to."""
        at = bisect_right(self.opened, event) - 1
        return self.periods[at] if at >= 0 else None

    def replace(
        self, updates: Mapping[str, tuple[_Event, ...]]
    ) -> tuple[list[Contradiction], list[Contradiction]]:
        """Give leaves new events; returns (changes the timeline lost, changes it gained)."""
        events = self.events
        last = _event_key(events[-1]) if events else None
        lowest: _EventKey | None = None
        highest: _EventKey | None = None
        appended = True
        for leaf_id, new in updates.items():
            old = self.by_leaf.get(leaf_id, ())
            if old == new:
                continue
            for event in old:
                key = _event_key(event)
                at = bisect_left(events, key, key=_event_key)
                del events[at]
                appended = False
                lowest = key if lowest is None or key < lowest else lowest
                highest = key if highest is None or key > highest else highest
            for event in new:
                key = _event_key(event)
                if last is not None and key <= last:
                    appended = False
                insort(events, event, key=_event_key)
                lowest = key if lowest is None or key < lowest else lowest
                highest = key if highest is None or key > highest else highest
            if new:
                self.by_leaf[leaf_id] = new
            else:
                self.by_leaf.pop(leaf_id, None)
        if lowest is None or highest is None:
            return [], []
        self._view = None
        if appended:
            return [], self._append(bisect_left(events, lowest, key=_event_key))
        return self._refold(lowest, highest)

    def _append(self, start: int) -> list[Contradiction]:
        periods = self.periods
        current = periods[-1] if periods and periods[-1].end is None else None
        gained: list[Contradiction] = []
        for event in self.events[start:]:
            current = self._step(current, event, gained)
        return gained

    def _refold(
        self, lowest: _EventKey, highest: _EventKey
    ) -> tuple[list[Contradiction], list[Contradiction]]:
        old_periods, old_opened = self.periods, self.opened
        events = self.events
        keep = bisect_left(old_opened, lowest) - 1  # the last period opened before the edit
        gained: list[Contradiction] = []
        current: _Period | None = None
        self.periods, self.opened = old_periods[: max(keep, 0)], old_opened[: max(keep, 0)]
        start = 0
        if keep >= 0:
            first = old_periods[keep]
            start = bisect_left(events, first.opened, key=_event_key)
            # Its opening event and everything before it are unchanged: so is its change.
            current = self._open(events[start], first.change)
            start += 1
        for index in range(start, len(events)):
            event = events[index]
            key = _event_key(event)
            if key > highest and event.kind is _STATES:
                at = bisect_left(old_opened, key)
                if (
                    at < len(old_opened)
                    and old_opened[at] == key
                    and (current is None or current.vkey != value_key(event.fact.value))
                ):
                    # It opens a period here, as it did before: from here on the old fold
                    # holds, but for the change that opens it.
                    lost = [p.change for p in old_periods[keep + 1 : at + 1] if p.change]
                    change = self._close(current, event)
                    reused = old_periods[at]
                    reused.change = change
                    if change is not None:
                        gained.append(change)
                    self.periods.append(reused)
                    self.opened.append(key)
                    self.periods.extend(old_periods[at + 1 :])
                    self.opened.extend(old_opened[at + 1 :])
                    return lost, gained
            current = self._step(current, event, gained)
        lost = [p.change for p in old_periods[keep + 1 :] if p.change is not None]
        return lost, gained

    def _step(
        self, current: _Period | None, event: _Event, gained: list[Contradiction]
    ) -> _Period | None:
        moment, kind, leaf_id, position, fact, retired_by = event
        if kind is _RETIRES:
            if current is not None and (leaf_id, position) in current.live:
                current.live.discard((leaf_id, position))
                if not current.live:
                    current.end, current.by = moment, retired_by
                    return None
            return current
        vkey = value_key(fact.value)
        if current is not None and current.vkey == vkey:
            current.live.add((leaf_id, position))
            if leaf_id not in current.source_set:
                current.source_set.add(leaf_id)
                current.sources.append(leaf_id)
            current.last = moment
            current.count += 1
            return current
        change = self._close(current, event)
        if change is not None:
            gained.append(change)
        return self._open(event, change)

    def _close(self, current: _Period | None, event: _Event) -> Contradiction | None:
        """End ``current`` at ``event``, which states another value."""
        if current is None:
            return None
        current.end, current.by = event.moment, event.leaf_id
        return Contradiction(
            subject=self.key[0],
            attribute=self.key[1],
            old_value=current.value,
            new_value=event.fact.value,
            old_date=current.last,
            new_date=event.moment,
            old_sources=tuple(current.sources),
            new_source=event.leaf_id,
        )

    def _open(self, event: _Event, change: Contradiction | None) -> _Period:
        """Open the period ``event`` states, after ``change``."""
        moment, _, leaf_id, position = opened = _event_key(event)
        period = _Period(
            opened=opened,
            value=event.fact.value,
            vkey=value_key(event.fact.value),
            start=moment,
            sources=[leaf_id],
            source_set={leaf_id},
            last=moment,
            count=1,
            live={(leaf_id, position)},
            change=change,
        )
        self.periods.append(period)
        self.opened.append(period.opened)
        return period


class _State:
    """Every leaf's facts and correction, indexed by (subject, attribute)."""

    def __init__(self) -> None:
        self.leaves: dict[str, LeafRecord] = {}
        self.by_key: dict[_Key, set[str]] = {}
        self.corrected: dict[str, set[str]] = {}
        """Correcting leaf id -> leaves it corrected."""
        self.logs: dict[_Key, _KeyLog] = {}

    def keys_of(self, leaf_id: str) -> set[_Key]:
        record = self.leaves.get(leaf_id)
        return {(f.subject, f.attribute) for f in record.facts} if record else set()

    @classmethod
    def load(cls, records: Iterable[LeafRecord]) -> _State:
        """A state built in one pass from distinct leaves' records (journal load, rebuild)."""
        state = cls()
        leaves, by_key, corrected = state.leaves, state.by_key, state.corrected
        for record in records:
            if not record.facts:
                continue
            leaves[record.leaf_id] = record
            for f in record.facts:
                holders = by_key.get((f.subject, f.attribute))
                if holders is None:
                    by_key[(f.subject, f.attribute)] = {record.leaf_id}
                else:
                    holders.add(record.leaf_id)
            if record.outdated:
                corrected.setdefault(record.outdated.by, set()).add(record.leaf_id)
        for key, holders in by_key.items():
            log = state.logs[key] = _KeyLog(key)
            for leaf_id in holders:
                log.by_leaf[leaf_id] = state._events(leaf_id, key)
            log.events = sorted(
                (e for events in log.by_leaf.values() for e in events), key=_event_key
            )
            log._append(0)
        return state

    def put(
        self, record: LeafRecord
    ) -> dict[_Key, tuple[list[Contradiction], list[Contradiction]]]:
        """Record one leaf's facts and correction.

        Returns, per key whose timeline moved: the changes it lost and those it gained.
        """
        leaf_id = record.leaf_id
        previous = self.leaves.get(leaf_id)
        keys = self.keys_of(leaf_id)
        if previous is not None:
            for key in keys:
                holders = self.by_key.get(key)
                if holders is not None:
                    holders.discard(leaf_id)
                    if not holders:
                        del self.by_key[key]
            if previous.outdated:
                fixed = self.corrected.get(previous.outdated.by)
                if fixed is not None:
                    fixed.discard(leaf_id)
                    if not fixed:
                        del self.corrected[previous.outdated.by]
        if not record.facts:
            self.leaves.pop(leaf_id, None)
        else:
            self.leaves[leaf_id] = record
            for f in record.facts:
                self.by_key.setdefault((f.subject, f.attribute), set()).add(leaf_id)
            if record.outdated:
                self.corrected.setdefault(record.outdated.by, set()).add(leaf_id)
        # This leaf's events, and those of the leaves it corrected (whether its facts
        # explain their correction decides whether their facts retire).
        updates: dict[_Key, dict[str, tuple[_Event, ...]]] = {}
        for key in keys | self.keys_of(leaf_id):
            updates.setdefault(key, {})[leaf_id] = self._events(leaf_id, key)
        for old in self.corrected.get(leaf_id, ()):
            for key in self.keys_of(old):
                updates.setdefault(key, {})[old] = self._events(old, key)
        moved = {}
        for key, changes in updates.items():
            log = self.logs.get(key)
            if log is None:
                log = self.logs[key] = _KeyLog(key)
            lost, gained = log.replace(changes)
            if not log.events:
                del self.logs[key]
            if lost or gained:
                moved[key] = (lost, gained)
        return moved

    def _events(self, leaf_id: str, key: _Key) -> tuple[_Event, ...]:
        record = self.leaves.get(leaf_id)
        if record is None:
            return ()
        retire = record.outdated if record.outdated else None
        if retire is not None and self.explained(leaf_id, retire.by):
            retire = None
        events: list[_Event] = []
        for position, f in enumerate(record.facts):
            if (f.subject, f.attribute) != key:
                continue
            events.append(_Event(f.timestamp, _STATES, leaf_id, position, f, None))
            if retire is not None:
                moment = max(retire.date, f.timestamp)
                events.append(_Event(moment, _RETIRES, leaf_id, position, f, retire.by))
        return tuple(events)

    def explained(self, leaf_id: str, by: str) -> bool:
        """True when the correcting leaf restates one of the corrected leaf's keys.

        Such a correction is a change of value the dates already order; a correction
        by a leaf about something else retires the corrected leaf's facts instead.
        """
        return bool(self.keys_of(leaf_id) & self.keys_of(by))

    def timeline(self, key: _Key) -> _KeyTimeline:
        log = self.logs.get(key)
        return _EMPTY if log is None else log.view()

    def period_of(self, f: Fact) -> _Period | None:
        """The first period of ``f``'s key that its leaf states with ``f``'s value."""
        log = self.logs.get((f.subject, f.attribute))
        if log is None:
            return None
        vkey = value_key(f.value)
        found: _Period | None = None
        for event in log.by_leaf.get(f.source, ()):
            if event.kind is _STATES and value_key(event.fact.value) == vkey:
                period = log.period_of(_event_key(event))
                if period is not None and (found is None or period.opened < found.opened):
                    found = period
        return found


# ---------------------------------------------------------------------- the public class
class Timeline:
    """The dated, scoped facts of one store: what is true now, and what was true then.

    Facts come from leaves: extracted from their text by the rules (:meth:`ingest`) or
    recorded explicitly (:meth:`record_fact`, kept in the source leaf's header ``extra``,
    or in a small leaf of its own when there is no source). Each (subject, attribute)
    keeps a timeline: the newest value ACTIVE, earlier ones HISTORICAL with
    ``superseded_by`` and ``valid_from``/``valid_to``; nothing is deleted unless its leaf
    is (:meth:`forget`). A real change returns a notice and flags the superseded leaf
    OUTDATED through the store.

    The timeline's own file (``state/facts.jsonl``) is a cache: :meth:`rebuild` recreates
    it from the leaves (their text, their explicit facts and their corrections). Writes
    take the store's lock; facts recorded by other processes are picked up on the next
    call. Writes made to leaves behind the timeline's back (a leaf saved without
    :meth:`ingest`, a correction set with ``Store.annotate``) are seen after
    :meth:`rebuild`.
    """

    def __init__(self, store: Store, *, patterns: Sequence[Pattern] | None = None) -> None:
        """Open the timeline of ``store``.

        Args:
            patterns: extraction rules (default: :data:`DEFAULT_PATTERNS`).
        """
        self._store = store
        self._patterns: tuple[Pattern, ...] = (
            DEFAULT_PATTERNS if patterns is None else tuple(patterns)
        )
        self._journal = Journal(store.state_file(JOURNAL_NAME))
        self._state: _State | None = None
        self._mutex = threading.RLock()
        self._writes: ExitStack | None = None
        """Set while a write call runs: the store batch joins it on the first write."""
        self._batch_open = False
        with self._reading():
            pass  # load the journal now (or rebuild it from the leaves when it is missing)

    def __repr__(self) -> str:
        return f"Timeline({self._store!r})"

    @property
    def store(self) -> Store:
        """The store the facts live in."""
        return self._store

    # ================================================================= rules
    @property
    def patterns(self) -> tuple[Pattern, ...]:
        """The extraction rules, in the order they are tried."""
        return self._patterns

    def add_pattern(self, pattern: Pattern) -> None:
        """Add an extraction rule, tried before the built-in ones.

        It applies to leaves ingested from now on; :meth:`rebuild` applies it to all
        (a rebuild must run with the same rules to give the same timeline).

        Raises:
            InvalidPatternError: a rule with that name already exists.
        """
        if not isinstance(pattern, Pattern):
            raise TypeError(f"expected a Pattern, not {type(pattern).__name__}")
        with self._mutex:
            if any(p.name == pattern.name for p in self._patterns):
                raise InvalidPatternError(pattern.name, "a rule with that name already exists")
            self._patterns = (pattern, *self._patterns)

    def extract(
        self, text: str, *, project: str = "", tags: Sequence[str] = ()
    ) -> tuple[Extraction, ...]:
        """Run this timeline's rules over ``text`` without recording anything."""
        return extract(text, project=project, tags=tags, patterns=self._patterns)

    # ================================================================= writing
    def ingest(self, leaf: Leaf | str) -> tuple[Recorded, ...]:
        """Extract the facts of a stored leaf and record them (idempotent).

        The leaf is read back from the store, so what is recorded is exactly what a
        rebuild will find. Code leaves and fact leaves are not run through the rules.

        Returns:
            One :class:`Recorded` per fact of the leaf (``DUPLICATE`` when re-ingested).

        Raises:
            UnknownLeafError: the store holds no such leaf.
        """
        leaf_id = leaf.leaf_id if isinstance(leaf, Leaf) else leaf
        with self._writing() as pending:
            stored = self._read_leaf(leaf_id)
            return tuple(self._apply(stored, pending))

    def ingest_many(self, leaves: Iterable[Leaf | str]) -> tuple[tuple[Recorded, ...], ...]:
        """:meth:`ingest` for many leaves, in order, in one locked step (bulk ingests).

        The same as ingesting them one by one, at the cost of one lock, one store commit
        for the leaves their changes flag OUTDATED and one journal append.

        Returns:
            What :meth:`ingest` returns, one tuple per leaf.

        Raises:
            UnknownLeafError: a leaf is not in the store (those before it are recorded).
        """
        ids = [leaf.leaf_id if isinstance(leaf, Leaf) else leaf for leaf in leaves]
        with self._writing() as pending:
            return tuple(tuple(self._apply(self._read_leaf(i), pending)) for i in ids)

    def record_fact(
        self,
        subject: str,
        attribute: str,
        value: str,
        *,
        timestamp: str | date | datetime | None = None,
        source: str | None = None,
    ) -> Recorded:
        """Record one fact explicitly.

        Args:
            subject: ``user``, ``project:<name>``, ``host:<name>``, ``person:<name>`` or
                ``patient:<name>``.
            attribute: ``location``, ``employer``, ``stack``…
            value: the value (1-200 printable characters).
            timestamp: when it became true (ISO 8601); default: the source leaf's
                timestamp, or now.
            source: id of the leaf that states it; the fact is kept in that leaf's header.
                Without one, a small leaf holding the fact is written.

        Returns:
            What it did: NEW, CONFIRMED, CHANGED (with its notices) or DUPLICATE.

        Raises:
            InvalidFactError: a malformed subject, attribute or value.
            InvalidDateError: ``timestamp`` cannot be parsed.
            UnknownLeafError: ``source`` is not a leaf of the store.
        """
        return self.record_facts(
            [(subject, attribute, value, timestamp, source)],
        )[0]

    def record_facts(
        self,
        facts: Iterable[tuple[str, str, str, str | date | datetime | None, str | None] | Fact],
    ) -> tuple[Recorded, ...]:
        """Record many facts in one locked step (what bulk imports use).

        Each item is a :class:`Fact` (an empty ``source`` asks for a fact leaf) or a
        tuple ``(subject, attribute, value, timestamp, source)`` as for
        :meth:`record_fact`. All items are validated before anything is written.
        """
        items = [self._normalize_input(item) for item in facts]
        results: list[Recorded] = []
        with self._writing() as pending:
            for subject, attribute, value, moment, source in items:
                results.append(self._record_one(subject, attribute, value, moment, source, pending))
        return tuple(results)

    def supersede(self, old_leaf: str, new_leaf: str, reason: str = "") -> Correction:
        """Flag ``old_leaf`` OUTDATED, corrected by ``new_leaf`` (reversible with :meth:`restore`).

        When the new leaf restates some of the old leaf's (subject, attribute) pairs, the
        dates order those values as usual. When it states none of them, the old leaf's
        facts stop being current from the new leaf's date.

        Raises:
            UnknownLeafError: either leaf is unknown.
            ValueError: a leaf cannot supersede itself.
        """
        if old_leaf == new_leaf:
            raise ValueError(f"leaf {old_leaf!r} cannot supersede itself")
        with self._writing() as pending:
            newer = self._read_leaf(new_leaf)
            self._read_leaf(old_leaf)
            correction = Correction(by=newer.leaf_id, date=newer.timestamp, reason=reason)
            older = self._annotate(old_leaf, outdated_by=correction)
            self._apply(newer, pending)
            self._apply(older, pending)
        return correction

    def restore(self, old_leaf: str) -> Correction | None:
        """Undo a supersession: ``old_leaf`` is no longer flagged OUTDATED.

        Returns:
            The correction that was removed, or None when the leaf was not flagged.

        Raises:
            UnknownLeafError: no such leaf.
        """
        with self._writing() as pending:
            leaf = self._read_leaf(old_leaf)
            if leaf.outdated_by is None:
                return None
            restored = self._annotate(old_leaf, outdated_by=None)
            self._apply(restored, pending)
            return leaf.outdated_by

    def forget(self, leaf: Leaf | str) -> int:
        """Drop everything the timeline holds from one leaf, for a leaf the store forgets.

        The leaf's facts leave every timeline, and so do the changes they made: a value
        they had superseded is current again unless another leaf supersedes it too. The
        leaves it had flagged OUTDATED are no longer retired by it (``Store.forget``
        clears those flags on disk), so facts it had retired are current again. The
        removal is one journal line, which other processes follow on their next call, and
        the earlier lines holding the leaf's facts are overwritten in place, so no value
        drawn from a forgotten memory stays in the timeline's file. The cost follows the
        leaf's facts, the leaves it corrected and the timelines they touch; never the
        size of the store.

        Call it just before ``Store.forget(leaf_id)``, both inside one
        ``Store.locked()`` (``ihmt_mcp.Memory.forget`` does): should the process die in
        between, the leaf is still there and forgetting it again finishes the job. Called
        after ``Store.forget`` it gives the same timeline. It writes no leaf: if the store
        keeps the leaf, the timeline lags behind the leaves until :meth:`rebuild`.

        Returns:
            How many facts were dropped. A leaf the timeline holds nothing about (no fact,
            no correction of a leaf with facts) is a no-op: 0, nothing written.
        """
        leaf_id = leaf.leaf_id if isinstance(leaf, Leaf) else leaf
        with self._store.locked():
            with self._writing() as pending:
                dropped = self._forget(leaf_id, pending)
            if pending:
                with self._mutex:
                    self._journal.blank(leaf_id)
        return dropped

    def rebuild(self) -> TimelineStats:
        """Recreate the timeline's file from the leaves (text, explicit facts, corrections)."""
        with self._store.locked(), self._mutex:
            self._rebuild_locked()
            return self._stats()

    # ================================================================= reading
    def active(self, subject: str, attribute: str) -> FactState | None:
        """The current value of ``subject``'s ``attribute``, or None."""
        key = (normalize_subject(subject), normalize_attribute(attribute))
        states = self._timeline(key).states
        return states[-1] if states and states[-1].is_active else None

    def at(self, when: str | date | datetime, subject: str, attribute: str) -> FactState | None:
        """The value that held at ``when`` (a bare date means the end of that day), or None.

        Raises:
            InvalidDateError: ``when`` cannot be parsed.
        """
        moment = parse_moment(when, end_of_day=True)
        key = (normalize_subject(subject), normalize_attribute(attribute))
        for state in self._timeline(key).states:
            if state.holds_at(moment):
                return state
        return None

    def active_state(self, key: str) -> FactState | None:
        """:meth:`active` for a ``subject::attribute`` key, e.g. ``user::location``."""
        subject, attribute = parse_key(key)
        return self.active(subject, attribute)

    def state_at(self, when: str | date | datetime, key: str) -> FactState | None:
        """:meth:`at` for a ``subject::attribute`` key."""
        subject, attribute = parse_key(key)
        return self.at(when, subject, attribute)

    def history(self, subject: str, attribute: str | None = None) -> tuple[FactState, ...]:
        """Every period of ``subject``'s timelines (one attribute, or all), oldest first."""
        subject = normalize_subject(subject)
        with self._reading() as state:
            if attribute is not None:
                keys = [(subject, normalize_attribute(attribute))]
            else:
                keys = sorted(k for k in state.by_key if k[0] == subject)
            return tuple(s for key in keys for s in state.timeline(key).states)

    def contradictions(self, subject: str | None = None) -> tuple[Contradiction, ...]:
        """Every real change of value (of one subject, or all), in date order."""
        wanted = None if subject is None else normalize_subject(subject)
        with self._reading() as state:
            found = [
                change
                for key in state.by_key
                if wanted is None or key[0] == wanted
                for change in state.timeline(key).changes
            ]
        return tuple(sorted(found, key=lambda c: (c.new_date, c.subject, c.attribute)))

    def subjects(self) -> tuple[str, ...]:
        """Every subject with at least one fact, sorted."""
        with self._reading() as state:
            return tuple(sorted({key[0] for key in state.by_key}))

    def facts(self, subject: str | None = None, attribute: str | None = None) -> tuple[Fact, ...]:
        """The statements themselves (extracted and explicit), oldest first."""
        wanted_subject = None if subject is None else normalize_subject(subject)
        wanted_attribute = None if attribute is None else normalize_attribute(attribute)
        with self._reading() as state:
            found = [
                f
                for record in state.leaves.values()
                for f in record.facts
                if (wanted_subject is None or f.subject == wanted_subject)
                and (wanted_attribute is None or f.attribute == wanted_attribute)
            ]
        return tuple(sorted(found, key=lambda f: (f.timestamp, f.source, f.subject, f.attribute)))

    def facts_of(self, leaf_id: str) -> tuple[Fact, ...]:
        """The facts the timeline holds from one leaf (empty when none)."""
        with self._reading() as state:
            record = state.leaves.get(leaf_id)
            return record.facts if record else ()

    def stats(self) -> TimelineStats:
        """Totals: leaves with facts, statements, timelines, subjects, contradictions."""
        with self._reading():
            return self._stats()

    # ================================================================= internals: state
    def _stats(self) -> TimelineStats:
        state = self._state
        assert state is not None
        return TimelineStats(
            leaves=len(state.leaves),
            facts=sum(len(r.facts) for r in state.leaves.values()),
            keys=len(state.by_key),
            subjects=len({k[0] for k in state.by_key}),
            contradictions=sum(len(state.timeline(k).changes) for k in state.by_key),
        )

    def _timeline(self, key: _Key) -> _KeyTimeline:
        with self._reading() as state:
            return state.timeline(key)

    @contextmanager
    def _reading(self) -> Iterator[_State]:
        with self._mutex:
            if self._sync():
                assert self._state is not None
                yield self._state
                return
        # No usable journal: rebuild it under the store's lock (always taken before the
        # mutex, so a reader and a writer never wait on each other crosswise).
        with self._store.locked(), self._mutex:
            if not self._sync():
                self._rebuild_locked()
            assert self._state is not None
            yield self._state

    @contextmanager
    def _writing(self) -> Iterator[list[LeafRecord]]:
        """Lock, catch up, let the caller write leaves, then journal what changed."""
        pending: list[LeafRecord] = []
        with self._store.locked(), self._mutex:
            if not self._sync():
                self._rebuild_locked()
            writes = ExitStack()
            self._writes, self._batch_open = writes, False
            try:
                with writes:  # commits the leaves before the journal says they exist
                    yield pending
            finally:
                self._writes, self._batch_open = None, False
                # Leaves written before an error are on disk: journal them too, so the
                # cache never lags behind an acknowledged leaf.
                if pending:
                    self._journal.append(pending)
                    self._maybe_compact()

    def _sync(self) -> bool:
        """Catch up with the journal; False when it is missing or damaged (rebuild it)."""
        if self._state is not None and self._journal.is_current():
            return True
        try:
            if self._state is not None:
                new = self._journal.read_new()
                if new is not None:
                    for record in new:
                        self._state.put(record)
                    return True
            records = self._journal.read_all()
        except FileNotFoundError:
            return False
        except JournalDamagedError as exc:
            logger.warning(
                "fact journal %s is damaged (%s); rebuilding it", self._journal.path, exc
            )
            return False
        self._state = _State.load(records)
        return True

    def _rebuild_locked(self) -> None:
        records = []
        for leaf in self._store.iter_leaves():
            record = self._record_of(leaf)
            if record.facts:
                records.append(record)
        self._journal.rewrite(records)
        self._state = _State.load(records)
        logger.info("fact timeline rebuilt: %d leaves with facts", len(records))

    def _maybe_compact(self) -> None:
        state = self._state
        live = len(state.leaves) if state is not None else 0
        if state is None or self._journal.lines <= live + max(live, _COMPACT_SLACK):
            return
        logger.info("compacting %s (%d lines)", self._journal.path, self._journal.lines)
        self._journal.rewrite(sorted(state.leaves.values(), key=lambda r: r.leaf_id))

    # ================================================================= internals: leaves
    def _put_leaf(self, leaf: Leaf) -> Leaf:
        self._join_batch()
        return self._store.put_leaf(leaf)

    def _annotate(self, leaf_id: str, **changes: Any) -> Leaf:
        self._join_batch()
        return self._store.annotate(leaf_id, **changes)

    def _join_batch(self) -> None:
        """Group this call's leaf writes into one store commit, opened on the first write
        (so a call that writes nothing commits nothing)."""
        if self._writes is not None and not self._batch_open:
            self._writes.enter_context(self._store.batch())
            self._batch_open = True

    def _read_leaf(self, leaf_id: str) -> Leaf:
        try:
            return self._store.read_leaf(leaf_id)
        except LeafNotFoundError:
            raise UnknownLeafError(leaf_id) from None
        except ValueError:
            # An id that cannot even be a file name is not a leaf of this store.
            raise UnknownLeafError(str(leaf_id)) from None

    def _record_of(self, leaf: Leaf) -> LeafRecord:
        """Everything the timeline derives from one leaf (the same code for every path)."""
        facts: list[Fact] = []
        if leaf.data_type != "CODE" and FACT_TAG not in leaf.tags:
            for found in extract(
                leaf.text, project=leaf.project, tags=leaf.tags, patterns=self._patterns
            ):
                facts.append(
                    Fact(
                        subject=found.subject,
                        attribute=found.attribute,
                        value=found.value,
                        timestamp=leaf.timestamp,
                        source=leaf.leaf_id,
                        origin=found.pattern,
                    )
                )
        for item in _explicit_items(leaf):
            try:
                facts.append(_explicit_fact(item, leaf))
            except (InvalidFactError, ValueError, TypeError, KeyError, AttributeError):
                logger.warning("leaf %s holds a malformed explicit fact; skipped", leaf.leaf_id)
        outdated = leaf.outdated_by
        return LeafRecord(
            leaf.leaf_id,
            _dedupe(facts),
            Outdated(outdated.by, outdated.date) if outdated else None,
        )

    def _normalize_input(
        self, item: tuple[str, str, str, str | date | datetime | None, str | None] | Fact
    ) -> tuple[str, str, str, str | None, str | None]:
        if isinstance(item, Fact):
            subject, attribute, value = item.subject, item.attribute, item.value
            when: str | date | datetime | None = item.timestamp
            source: str | None = item.source or None
        else:
            subject, attribute, value, when, source = item
        return (
            normalize_subject(subject),
            normalize_attribute(attribute),
            normalize_value(value),
            None if when is None else parse_moment(when),
            source,
        )

    def _record_one(
        self,
        subject: str,
        attribute: str,
        value: str,
        moment: str | None,
        source: str | None,
        pending: list[LeafRecord],
    ) -> Recorded:
        state = self._state
        assert state is not None
        if source is None:
            moment = moment or now_timestamp()
            leaf = _fact_leaf(subject, attribute, value, moment)
            known = state.leaves.get(leaf.leaf_id)
            if known is not None and known.facts == _record_facts_of_fact_leaf(leaf):
                leaf = self._read_leaf(leaf.leaf_id)  # already stored: no write, no commit
            else:
                leaf = self._put_leaf(leaf)
        else:
            leaf = self._read_leaf(source)
            moment = moment or leaf.timestamp
        fact = Fact(
            subject=subject, attribute=attribute, value=value, timestamp=moment, source=leaf.leaf_id
        )
        if source is not None:
            known = state.leaves.get(leaf.leaf_id) or self._record_of(leaf)
            if not _contains(known, fact):
                items = list(_explicit_items(leaf))
                items.append(
                    {
                        "subject": subject,
                        "attribute": attribute,
                        "value": value,
                        "timestamp": moment,
                    }
                )
                leaf = self._annotate(leaf.leaf_id, extra={FACTS_KEY: items})
        for result in self._apply(leaf, pending):
            if _same_fact(result.fact, fact):
                return Recorded(
                    fact=fact, outcome=result.outcome, contradictions=result.contradictions
                )
        raise AssertionError("a recorded fact is missing from its leaf")  # pragma: no cover

    def _apply(self, leaf: Leaf, pending: list[LeafRecord]) -> list[Recorded]:
        """Put one leaf's facts into the timeline and flag the leaves they supersede.

        The changes reported (and flagged) are those the timeline holds with this leaf
        and would not hold without it, so applying a leaf twice reports the same.
        """
        state = self._state
        assert state is not None
        leaf_id = leaf.leaf_id
        record = self._record_of(leaf)
        previous = state.leaves.get(leaf_id)
        if previous is None and not record.facts:
            return []
        if previous is not None:
            state.put(LeafRecord(leaf_id, (), None))
        moved = state.put(record)
        if record != previous:
            pending.append(record)
        # The timelines refold only where this leaf's events fall: what they gained
        # there and did not hold without the leaf is what it changed.
        new_changes: list[Contradiction] = []
        for key in sorted(moved):
            lost, gained = moved[key]
            before = {_change_id(c) for c in lost}
            new_changes.extend(c for c in gained if _change_id(c) not in before)
        self._flag_superseded(new_changes, pending)
        old_facts = previous.facts if previous else ()
        results = []
        for f in record.facts:
            mine = tuple(c for c in new_changes if _involves(c, f))
            if any(_same_fact(f, o) for o in old_facts):
                outcome = Outcome.DUPLICATE
            elif mine:
                outcome = Outcome.CHANGED
            else:
                outcome = self._new_or_confirmed(state, f)
            results.append(Recorded(fact=f, outcome=outcome, contradictions=mine))
        return results

    def _forget(self, leaf_id: str, pending: list[LeafRecord]) -> int:
        state = self._state
        assert state is not None
        record = state.leaves.get(leaf_id)
        fixed = sorted(state.corrected.get(leaf_id, ()))
        for old in fixed:
            # Whatever flag the catalog holds now is the one a rebuild will read: none
            # once Store.forget ran, still this leaf's just before it.
            entry = self._store.entry(old)
            outdated = None
            if entry is not None and entry.outdated_by and entry.outdated_by != leaf_id:
                outdated = Outdated(entry.outdated_by, entry.outdated_on or "")
            update = LeafRecord(old, state.leaves[old].facts, outdated)
            state.put(update)
            pending.append(update)
        if record is None:
            return 0
        removal = LeafRecord(leaf_id, (), None)
        state.put(removal)
        pending.append(removal)
        return len(record.facts)

    def _new_or_confirmed(self, state: _State, f: Fact) -> Outcome:
        period = state.period_of(f)
        if period is not None and period.count > 1:
            return Outcome.CONFIRMED
        return Outcome.NEW

    def _flag_superseded(self, changes: list[Contradiction], pending: list[LeafRecord]) -> None:
        """Annotate the leaves a change superseded, through the store (one flag per leaf)."""
        state = self._state
        assert state is not None
        done: set[str] = set()
        restated = {(c.new_source, c.subject, c.attribute) for c in changes}
        for change in sorted(changes, key=lambda c: c.new_date):
            if _names_only_its_subject(change.subject, change.attribute.removesuffix(" version")):
                continue  # recorded, but too vague to hide a memory
            for old in change.old_sources:
                if old == change.new_source or old in done:
                    continue
                if change.attribute.endswith(VERSION_SUFFIX) and not _all_restated(
                    state.leaves.get(old), change.new_source, restated
                ):
                    continue  # one tool's version moved; the rest of that memory holds
                done.add(old)
                entry = self._store.entry(old)
                if entry is None:
                    continue
                current = entry.outdated_by
                if current == change.new_source:
                    continue
                if current is not None and not state.explained(old, current):
                    continue  # an explicit supersession wins over a change of one value
                annotated = self._annotate(
                    old,
                    outdated_by=Correction(
                        by=change.new_source, date=change.new_date, reason=change.notice
                    ),
                )
                known = state.leaves.get(old)
                record = (
                    LeafRecord(old, known.facts, Outdated(change.new_source, change.new_date))
                    if known is not None
                    else self._record_of(annotated)
                )
                state.put(record)
                pending.append(record)


# ---------------------------------------------------------------------- helpers
_WORDS = re.compile(r"[^\W_]+")


VERSION_SUFFIX = " version"
"""Attributes of the ``tech-version`` rule ("django version")."""


def _all_restated(
    record: LeafRecord | None, new_source: str, restated: set[tuple[str, str, str]]
) -> bool:
    """True when the new leaf gives a new value for every fact of the old one, and there
    are several: a memory that says "Django 4.2 and Python 3.11" is outdated by one that
    says "Django 5.2 and Python 3.13", not by one that only moves Python. A single
    version is no evidence that two memories are about the same machine or component
    ("the canary box runs Python 3.11" does not outdate "db-primary runs Python 3.13")."""
    if record is None or len(record.facts) < 2:
        return False
    return all((new_source, f.subject, f.attribute) in restated for f in record.facts)


def _names_only_its_subject(subject: str, attribute: str) -> bool:
    """True when the attribute is made only of words of the subject's own name.

    "falcon-api moved to Nomad 1.7" gives (project:falcon-api, api): that says
    what the project moved to, not which part of it, so a later move of any part would
    read as a change of the same value. Such a change is recorded and relayed, but it
    does not flag the earlier memory OUTDATED: when in doubt, nothing is hidden.
    """
    name = set(_WORDS.findall(subject.partition(":")[2].casefold()))
    words = set(_WORDS.findall(attribute.casefold()))
    return bool(words) and words <= name


def _explicit_items(leaf: Leaf) -> list[Any]:
    items = leaf.extra.get(FACTS_KEY) if isinstance(leaf.extra, Mapping) else None
    return list(items) if isinstance(items, list) else []


def _explicit_fact(item: Mapping[str, Any], leaf: Leaf) -> Fact:
    when = item.get("timestamp")
    return Fact(
        subject=normalize_subject(item["subject"]),
        attribute=normalize_attribute(item["attribute"]),
        value=normalize_value(item["value"]),
        timestamp=parse_moment(when) if when else leaf.timestamp,
        source=leaf.leaf_id,
        origin="explicit",
    )


def _same_fact(a: Fact, b: Fact) -> bool:
    return (
        a.subject == b.subject
        and a.attribute == b.attribute
        and a.timestamp == b.timestamp
        and a.source == b.source
        and value_key(a.value) == value_key(b.value)
    )


def _contains(record: LeafRecord | None, fact: Fact) -> bool:
    return record is not None and any(_same_fact(f, fact) for f in record.facts)


def _dedupe(facts: list[Fact]) -> tuple[Fact, ...]:
    kept: list[Fact] = []
    for f in facts:
        if not any(_same_fact(f, k) for k in kept):
            kept.append(f)
    return tuple(kept)


def _involves(change: Contradiction, f: Fact) -> bool:
    if (change.subject, change.attribute) != (f.subject, f.attribute):
        return False
    if change.new_source == f.source and value_key(change.new_value) == value_key(f.value):
        return True
    return f.source in change.old_sources and value_key(change.old_value) == value_key(f.value)


def _record_facts_of_fact_leaf(leaf: Leaf) -> tuple[Fact, ...]:
    return tuple(_explicit_fact(item, leaf) for item in _explicit_items(leaf))


def _fact_leaf(subject: str, attribute: str, value: str, moment: str) -> Leaf:
    when = moment[:10] if moment.endswith("T00:00:00Z") else moment
    text = f"Fact: {subject} {attribute} = '{value}' (as of {when})"
    project = ""
    kind, _, name = subject.partition(":")
    if kind == "project":
        project = name
    elif kind == "host" and "/" in name:
        project = name.split("/", 1)[0]
    return Leaf(
        leaf_id=leaf_id_for(domain=FACT_DOMAIN, source=FACT_SOURCE, position=0, text=text),
        text=text,
        timestamp=moment,
        domain=FACT_DOMAIN,
        data_type="PERSONAL",
        source=FACT_SOURCE,
        tags=(FACT_TAG,),
        project=project,
        extra={
            FACTS_KEY: [
                {"subject": subject, "attribute": attribute, "value": value, "timestamp": moment}
            ]
        },
    )
