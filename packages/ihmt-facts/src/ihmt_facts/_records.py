"""The records of the facts package and the normalisation every fact goes through."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime
from enum import Enum

from ihmt_facts._types import SUBJECT_KINDS
from ihmt_facts.errors import InvalidDateError, InvalidFactError
from ihmt_store import normalize_timestamp, one_line

__all__ = [
    "MAX_VALUE_CHARS",
    "Contradiction",
    "Extraction",
    "Fact",
    "FactState",
    "FactStatus",
    "Outcome",
    "Recorded",
    "TimelineStats",
    "normalize_attribute",
    "normalize_fact_input",
    "normalize_subject",
    "normalize_value",
    "parse_key",
    "parse_moment",
    "same_value",
]

MAX_VALUE_CHARS = 200
"""Longest value :meth:`Timeline.record_fact` accepts (extraction stops at 60)."""

_MAX_NAME_CHARS = 80
_DAY_ONLY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*$")


class FactStatus(str, Enum):
    """Where a value stands in its timeline."""

    ACTIVE = "ACTIVE"
    """The current value: nothing later replaced or retired it."""
    HISTORICAL = "HISTORICAL"
    """True during ``valid_from``–``valid_to``; a later value or a correction ended it."""


class Outcome(str, Enum):
    """What recording one fact did to its timeline."""

    NEW = "new"
    """The first value of its (subject, attribute), or the first after a retirement."""
    CONFIRMED = "confirmed"
    """The same value was already known for that time: a confirmation, not a change."""
    CHANGED = "changed"
    """A different value: at least one :class:`Contradiction` (with its notice)."""
    DUPLICATE = "duplicate"
    """Exactly this fact from this leaf was already recorded; nothing changed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """One statement: on ``timestamp``, ``subject``'s ``attribute`` was ``value``."""

    subject: str
    """Scoped subject: ``user``, ``project:<name>``, ``host:<name>``, ``person:<name>``,
    ``patient:<name>`` (lower case)."""
    attribute: str
    """What about the subject: ``location``, ``employer``, ``stack``, ``diagnosis``…"""
    value: str
    """The value as stated (whitespace collapsed)."""
    timestamp: str
    """When it was stated to be true (canonical UTC ``YYYY-MM-DDTHH:MM:SSZ``)."""
    source: str
    """Id of the leaf that holds the statement."""
    origin: str = "explicit"
    """``explicit`` for :meth:`Timeline.record_fact`, else the name of the extraction rule."""

    @property
    def key(self) -> str:
        """``subject::attribute``, the timeline this fact belongs to."""
        return f"{self.subject}::{self.attribute}"


@dataclass(frozen=True, slots=True, kw_only=True)
class FactState:
    """One period of a timeline: a value and the interval during which it held."""

    subject: str
    attribute: str
    value: str
    """The value as first stated in this period."""
    status: FactStatus
    valid_from: str
    """When the value was first stated (canonical timestamp)."""
    valid_to: str | None = None
    """When a later value or a correction ended it; None while ACTIVE."""
    superseded_by: str | None = None
    """Leaf that ended this value: the one stating the next value, or the correction."""
    sources: tuple[str, ...] = ()
    """Leaves that stated this value during the period, first statement first."""
    last_stated: str = ""
    """The latest statement (a confirmation moves it forward, never ``valid_from``)."""
    statements: int = 1
    """How many statements (the first one and its confirmations) the period holds."""

    @property
    def key(self) -> str:
        """``subject::attribute``."""
        return f"{self.subject}::{self.attribute}"

    @property
    def is_active(self) -> bool:
        """True for the current value."""
        return self.status is FactStatus.ACTIVE

    def holds_at(self, moment: str) -> bool:
        """True when canonical timestamp ``moment`` falls inside ``[valid_from, valid_to)``."""
        return self.valid_from <= moment and (self.valid_to is None or moment < self.valid_to)


@dataclass(frozen=True, slots=True, kw_only=True)
class Contradiction:
    """A real change: a later statement replaced an earlier, different value."""

    subject: str
    attribute: str
    old_value: str
    new_value: str
    old_date: str
    """The latest statement of the old value before the change (canonical timestamp)."""
    new_date: str
    """When the new value was stated (canonical timestamp)."""
    old_sources: tuple[str, ...]
    """Leaves that stated the old value; the timeline flags them OUTDATED."""
    new_source: str
    """Leaf that stated the new value."""

    @property
    def key(self) -> str:
        """``subject::attribute``."""
        return f"{self.subject}::{self.attribute}"

    @property
    def notice(self) -> str:
        """The sentence to relay, e.g. ``On 2024-03-11 you said user location = 'Madrid',
        but on 2026-02-03 you updated to 'Valencia'.``"""
        return (
            f"On {self.old_date[:10]} you said {self.subject} {self.attribute} = "
            f"'{self.old_value}', but on {self.new_date[:10]} you updated to '{self.new_value}'."
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Recorded:
    """What recording one fact did."""

    fact: Fact
    outcome: Outcome
    contradictions: tuple[Contradiction, ...] = ()
    """The changes this fact introduced (two when it slots between two values)."""

    @property
    def notices(self) -> tuple[str, ...]:
        """The notice of each contradiction, to relay to the user."""
        return tuple(c.notice for c in self.contradictions)


@dataclass(frozen=True, slots=True, kw_only=True)
class Extraction:
    """A fact found in a text by a rule, before it is dated and tied to a leaf."""

    subject: str
    attribute: str
    value: str
    pattern: str
    """Name of the rule that found it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TimelineStats:
    """Totals of a timeline."""

    leaves: int
    """Leaves holding at least one fact."""
    facts: int
    """Statements (extracted and explicit)."""
    keys: int
    """Distinct (subject, attribute) timelines."""
    subjects: int
    contradictions: int


# ---------------------------------------------------------------------- normalisation
def _has_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)


def normalize_subject(subject: str) -> str:
    """Return ``subject`` in canonical form: ``user`` or ``<kind>:<name>``, lower case.

    Raises:
        InvalidFactError: an unknown kind, a missing or over-long name.
    """
    if not isinstance(subject, str):
        raise TypeError(f"subject must be str, not {type(subject).__name__}")
    text = one_line(subject)
    if text.casefold() == "user":
        return "user"
    kind, sep, name = text.partition(":")
    kind = kind.strip().casefold()
    name = one_line(name).casefold()
    if not sep or kind not in SUBJECT_KINDS or kind == "user":
        raise InvalidFactError(
            f"invalid subject {subject!r}: use 'user' or one of "
            "project:<name>, host:<name>, person:<name>, patient:<name>",
            field="subject",
            value=subject,
        )
    if not name or len(name) > _MAX_NAME_CHARS or _has_control(name) or "::" in name:
        raise InvalidFactError(
            f"invalid subject {subject!r}: the name must be 1-{_MAX_NAME_CHARS} characters",
            field="subject",
            value=subject,
        )
    return f"{kind}:{name}"


def normalize_attribute(attribute: str) -> str:
    """Return ``attribute`` lower case with whitespace collapsed.

    Raises:
        InvalidFactError: empty, over-long, or holding ``::``, ``=`` or control characters.
    """
    if not isinstance(attribute, str):
        raise TypeError(f"attribute must be str, not {type(attribute).__name__}")
    text = one_line(attribute).casefold()
    if (
        not text
        or len(text) > _MAX_NAME_CHARS
        or "::" in text
        or "=" in text
        or _has_control(text)
        or not any(ch.isalnum() for ch in text)
    ):
        raise InvalidFactError(
            f"invalid attribute {attribute!r}: use 1-{_MAX_NAME_CHARS} characters "
            "with a letter or digit, no '::' or '='",
            field="attribute",
            value=attribute,
        )
    return text


def normalize_value(value: str, *, limit: int = MAX_VALUE_CHARS) -> str:
    """Return ``value`` with whitespace collapsed.

    Raises:
        InvalidFactError: empty, longer than ``limit``, without a letter or digit, or
            holding control characters.
    """
    if not isinstance(value, str):
        raise TypeError(f"value must be str, not {type(value).__name__}")
    text = one_line(value)
    if not text or not any(ch.isalnum() for ch in text):
        raise InvalidFactError(
            f"invalid value {value!r}: it must hold a letter or a digit", field="value", value=value
        )
    if len(text) > limit or _has_control(text):
        raise InvalidFactError(
            f"invalid value {value[:40]!r}…: at most {limit} printable characters",
            field="value",
            value=value,
        )
    return text


def normalize_fact_input(
    item: tuple[str, str, str, str | date | datetime | None, str | None] | Fact,
) -> tuple[str, str, str, str | None, str | None]:
    """One item given to ``Timeline.record_facts``, normalised: (subject, attribute,
    value, moment or None, source or None)."""
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


def same_value(a: str, b: str) -> bool:
    """True when two values say the same thing (case, spacing and a final dot aside)."""
    return value_key(a) == value_key(b)


def value_key(value: str) -> str:
    """The comparison form of a value."""
    return one_line(value.casefold()).rstrip(".")


def parse_key(key: str) -> tuple[str, str]:
    """Split ``subject::attribute`` into its normalised parts.

    Raises:
        InvalidFactError: no ``::`` or an invalid part.
    """
    subject, sep, attribute = key.partition("::")
    if not sep:
        raise InvalidFactError(
            f"invalid key {key!r}: expected 'subject::attribute', e.g. 'user::location'",
            field="key",
            value=key,
        )
    return normalize_subject(subject), normalize_attribute(attribute)


def parse_moment(value: str | date | datetime, *, end_of_day: bool = False) -> str:
    """Return ``value`` as a canonical timestamp.

    Args:
        end_of_day: read a bare date as its last second (``2024-12-31`` → 23:59:59), which
            is what "the state on that day" means; otherwise a bare date is midnight.

    Raises:
        InvalidDateError: not an ISO 8601 date or datetime.
    """
    if isinstance(value, datetime):
        return normalize_timestamp(value)
    if isinstance(value, date):
        bare = True
    elif isinstance(value, str):
        bare = bool(_DAY_ONLY.match(value))
    else:
        raise InvalidDateError(value)
    try:
        moment = normalize_timestamp(value)
    except (ValueError, OverflowError):
        raise InvalidDateError(value) from None
    if bare and end_of_day:
        moment = moment[:10] + "T23:59:59Z"
    return moment
