"""The pure timeline: the dated events of each (subject, attribute) and the periods they
fold into, kept up to date as leaves come and go. No store, no file: :mod:`ihmt_facts._timeline`
feeds it the leaves' records and reads its periods and changes."""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from operator import itemgetter
from typing import NamedTuple

from ihmt_facts._journal import LeafRecord
from ihmt_facts._records import Contradiction, Fact, FactState, FactStatus, value_key

__all__ = ["Key", "KeyTimeline", "State", "change_id"]

Key = tuple[str, str]
"""(subject, attribute): one timeline."""


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

    def state(self, key: Key) -> FactState:
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
class KeyTimeline:
    states: tuple[FactState, ...]
    changes: tuple[Contradiction, ...]


_EMPTY = KeyTimeline((), ())


def change_id(c: Contradiction) -> tuple[str, ...]:
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

    def __init__(self, key: Key) -> None:
        self.key = key
        self.events: list[_Event] = []
        """Sorted by :func:`_event_key`."""
        self.by_leaf: dict[str, tuple[_Event, ...]] = {}
        self.periods: list[_Period] = []
        self.opened: list[_EventKey] = []
        """``periods[i].opened``, for bisection."""
        self._view: KeyTimeline | None = None

    def view(self) -> KeyTimeline:
        if self._view is None:
            self._view = KeyTimeline(
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


class State:
    """Every leaf's facts and correction, indexed by (subject, attribute)."""

    def __init__(self) -> None:
        self.leaves: dict[str, LeafRecord] = {}
        self.by_key: dict[Key, set[str]] = {}
        self.corrected: dict[str, set[str]] = {}
        """Correcting leaf id -> leaves it corrected."""
        self.logs: dict[Key, _KeyLog] = {}

    def keys_of(self, leaf_id: str) -> set[Key]:
        record = self.leaves.get(leaf_id)
        return {(f.subject, f.attribute) for f in record.facts} if record else set()

    @classmethod
    def load(cls, records: Iterable[LeafRecord]) -> State:
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

    def put(self, record: LeafRecord) -> dict[Key, tuple[list[Contradiction], list[Contradiction]]]:
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
        updates: dict[Key, dict[str, tuple[_Event, ...]]] = {}
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

    def _events(self, leaf_id: str, key: Key) -> tuple[_Event, ...]:
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

    def timeline(self, key: Key) -> KeyTimeline:
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
