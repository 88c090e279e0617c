"""``Timeline``: the dated facts of a store, their history, contradictions and corrections."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from datetime import date, datetime
from typing import Any

from ihmt_facts._extract import extract
from ihmt_facts._fold import Key, KeyTimeline, State, change_id
from ihmt_facts._journal import Journal, JournalDamagedError, LeafRecord, Outdated
from ihmt_facts._leaf_facts import (
    FACT_TAG,
    FACTS_KEY,
    contains,
    dedupe,
    explicit_fact,
    explicit_items,
    fact_leaf,
    involves,
    record_facts_of_fact_leaf,
    same_fact,
)
from ihmt_facts._outdating import (
    CORRECTIONS_KEY,
    changed_facts,
    flag_superseded,
    with_correction,
    without_correction,
)
from ihmt_facts._pattern import Pattern
from ihmt_facts._records import (
    Contradiction,
    Extraction,
    Fact,
    FactState,
    Outcome,
    Recorded,
    TimelineStats,
    normalize_attribute,
    normalize_fact_input,
    normalize_subject,
    parse_key,
    parse_moment,
)
from ihmt_facts._rules import default_patterns
from ihmt_facts.errors import InvalidFactError, InvalidPatternError, UnknownLeafError
from ihmt_store import (
    Correction,
    Leaf,
    LeafNotFoundError,
    Store,
    now_timestamp,
)

logger = logging.getLogger(__name__)

Prepared = tuple[str, str, tuple[str, ...]]
"""The (text, project, tags) of a leaf whose facts :meth:`Timeline.prepare` gives."""

__all__ = ["JOURNAL_NAME", "Timeline"]

JOURNAL_NAME = "facts.jsonl"
"""The timeline's derived file under the store's ``state/``."""

_COMPACT_SLACK = 1000
"""Compact the journal once it holds this many lines more than there are live records,
or as many more as there are live records when that is more (so a compaction, which
rewrites them all, costs each appended line a bounded share whatever the store's size)."""


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
        self._patterns: tuple[Pattern, ...] | None = None if patterns is None else tuple(patterns)
        """The rules; None: the built-in ones, compiled when first used."""
        self._journal = Journal(store.state_file(JOURNAL_NAME))
        self._state: State | None = None
        self._mutex = threading.RLock()
        self._writes: ExitStack | None = None
        """Set while a write call runs: the store batch joins it on the first write."""
        self._batch_open = False
        self._prepared: dict[str, tuple[Prepared, tuple[Extraction, ...]]] = {}
        """What :meth:`prepare` gave: each leaf's rules' findings, made elsewhere."""
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
        if self._patterns is None:
            self._patterns = default_patterns()
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
            if any(p.name == pattern.name for p in self.patterns):
                raise InvalidPatternError(pattern.name, "a rule with that name already exists")
            self._patterns = (pattern, *self.patterns)
            self._prepared = {}

    def prepare(self, found: Mapping[str, tuple[Prepared, tuple[Extraction, ...]]]) -> None:
        """What these rules find in leaves about to be ingested, by leaf id, found
        elsewhere (a worker process reading a bulk ingest's files): used instead of running
        the rules again for a leaf whose (text, project, tags) are the key's. Replaces
        what an earlier call gave."""
        self._prepared = dict(found)

    def extract(
        self, text: str, *, project: str = "", tags: Sequence[str] = ()
    ) -> tuple[Extraction, ...]:
        """Run this timeline's rules over ``text`` without recording anything."""
        return extract(text, project=project, tags=tags, patterns=self.patterns)

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
        for the leaves their changes flag OUTDATED and one journal append. A :class:`Leaf`
        is taken as the store holds it (what ``put_leaves`` returned: a bulk ingest does
        not read back what it has just written); an id is read from the store.

        Returns:
            What :meth:`ingest` returns, one tuple per leaf.

        Raises:
            UnknownLeafError: an id is not the store's (those before it are recorded).
        """
        given = list(leaves)
        with self._writing() as pending:
            return tuple(
                tuple(
                    self._apply(leaf if isinstance(leaf, Leaf) else self._read_leaf(leaf), pending)
                )
                for leaf in given
            )

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
        items = [normalize_fact_input(item) for item in facts]
        results: list[Recorded] = []
        with self._writing() as pending:
            for subject, attribute, value, moment, source in items:
                results.append(self._record_one(subject, attribute, value, moment, source, pending))
        return tuple(results)

    def supersede(
        self, old_leaf: str, new_leaf: str, reason: str = "", *, hint: str = ""
    ) -> Correction:
        """Flag ``old_leaf`` OUTDATED, corrected by ``new_leaf`` (reversible with :meth:`restore`).

        When the new leaf restates some of the old leaf's (subject, attribute) pairs, the
        dates order those values as usual. When it states none of them, the old leaf's
        facts stop being current from the new leaf's date. The old leaf's list of
        corrections gains this one, with the facts it changed and ``hint`` (the words
        that described the part corrected), so that searches flag it only for what
        changed.

        Raises:
            UnknownLeafError: either leaf is unknown.
            ValueError: a leaf cannot supersede itself.
        """
        if old_leaf == new_leaf:
            raise ValueError(f"leaf {old_leaf!r} cannot supersede itself")
        with self._writing() as pending:
            newer = self._read_leaf(new_leaf)
            older = self._read_leaf(old_leaf)
            if newer.outdated_by is not None and newer.outdated_by.by == old_leaf:
                # Inferred the other way round (two statements of one moment, ordered by
                # id): the explicit correction says which is newer, so that flag goes.
                kept = without_correction(newer, old_leaf)
                extra = {} if kept is None else {CORRECTIONS_KEY: kept}
                newer = self._annotate(new_leaf, outdated_by=None, extra=extra)
            correction = Correction(by=newer.leaf_id, date=newer.timestamp, reason=reason)
            changed = changed_facts(self._record_of(older).facts, self._record_of(newer).facts)
            listed = with_correction(older, newer.leaf_id, newer.timestamp, changed, hint)
            older = self._annotate(
                old_leaf, outdated_by=correction, extra={CORRECTIONS_KEY: listed}
            )
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
            kept = without_correction(leaf, leaf.outdated_by.by)
            extra = {} if kept is None else {CORRECTIONS_KEY: kept}
            restored = self._annotate(old_leaf, outdated_by=None, extra=extra)
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

    def _timeline(self, key: Key) -> KeyTimeline:
        with self._reading() as state:
            return state.timeline(key)

    @contextmanager
    def _reading(self) -> Iterator[State]:
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
        self._state = State.load(records)
        return True

    def _rebuild_locked(self) -> None:
        records = []
        for leaf in self._store.iter_leaves():
            record = self._record_of(leaf)
            if record.facts:
                records.append(record)
        self._journal.rewrite(records)
        self._state = State.load(records)
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
            ready = self._prepared.pop(leaf.leaf_id, None)
            if ready is not None and ready[0] == (leaf.text, leaf.project, tuple(leaf.tags)):
                extracted = ready[1]
            else:
                extracted = extract(
                    leaf.text, project=leaf.project, tags=leaf.tags, patterns=self.patterns
                )
            for found in extracted:
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
        for item in explicit_items(leaf):
            try:
                facts.append(explicit_fact(item, leaf))
            except (InvalidFactError, ValueError, TypeError, KeyError, AttributeError):
                logger.warning("leaf %s holds a malformed explicit fact; skipped", leaf.leaf_id)
        outdated = leaf.outdated_by
        return LeafRecord(
            leaf.leaf_id,
            dedupe(facts),
            Outdated(outdated.by, outdated.date) if outdated else None,
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
            leaf = fact_leaf(subject, attribute, value, moment)
            known = state.leaves.get(leaf.leaf_id)
            if known is not None and known.facts == record_facts_of_fact_leaf(leaf):
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
            if not contains(known, fact):
                items = list(explicit_items(leaf))
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
            if same_fact(result.fact, fact):
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
            before = {change_id(c) for c in lost}
            new_changes.extend(c for c in gained if change_id(c) not in before)
        flag_superseded(state, self._store, self._annotate, self._record_of, new_changes, pending)
        old_facts = previous.facts if previous else ()
        results = []
        for f in record.facts:
            mine = tuple(c for c in new_changes if involves(c, f))
            if any(same_fact(f, o) for o in old_facts):
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

    def _new_or_confirmed(self, state: State, f: Fact) -> Outcome:
        period = state.period_of(f)
        if period is not None and period.count > 1:
            return Outcome.CONFIRMED
        return Outcome.NEW
