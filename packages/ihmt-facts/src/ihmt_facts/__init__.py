"""ihmt-facts: facts and time for an IHMT memory — what is true now, and what was true then.

A fact is (subject, attribute, value, timestamp, source leaf); its subject is scoped (the
user, ``project:<name>``, ``host:<name>``, ``person:<name>``, ``patient:<name>``), so "we
migrated to Go" in one project never outdates another project's stack. Facts are
extracted from a leaf's text by small declarative EN/ES rules, or recorded explicitly.
Each (subject, attribute) keeps a dated timeline: the newest value ACTIVE, earlier ones
HISTORICAL with ``superseded_by`` and ``valid_from``/``valid_to``. Repeating a value is a
confirmation; a real change yields a notice ("On 2024-03-11 you said user location =
'Madrid', but on 2026-02-03 you updated to 'Valencia'.") and flags the superseded leaf
OUTDATED through the store. The timeline's file under ``state/`` is derived: it is
rebuilt from the leaves at any time.

Entry points:

- :class:`Timeline` — ``Timeline(store)``; ``ingest``, ``record_fact``, ``supersede``,
  ``restore``, ``forget``; ``active``, ``at``, ``history``, ``contradictions``, ``subjects``;
  ``rebuild``.
- :func:`extract` and :class:`Pattern` — the extraction rules, usable without a store.
"""

from typing import TYPE_CHECKING

from ihmt_facts._extract import extract
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
)
from ihmt_facts._rules import default_patterns
from ihmt_facts._timeline import JOURNAL_NAME, Timeline
from ihmt_facts._types import Language, SubjectRule, ValueKind
from ihmt_facts.errors import (
    FactError,
    InvalidDateError,
    InvalidFactError,
    InvalidPatternError,
    UnknownLeafError,
)

if TYPE_CHECKING:
    from ihmt_facts._rules import DEFAULT_PATTERNS


def __getattr__(name: str) -> object:
    # The built-in rules compile on first use (``_rules.default_patterns``), not at import.
    if name == "DEFAULT_PATTERNS":
        return default_patterns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    # the timeline
    "Timeline",
    "TimelineStats",
    "JOURNAL_NAME",
    # records
    "Fact",
    "FactState",
    "FactStatus",
    "Contradiction",
    "Recorded",
    "Outcome",
    "Extraction",
    # extraction rules
    "Pattern",
    "SubjectRule",
    "ValueKind",
    "Language",
    "extract",
    "DEFAULT_PATTERNS",
    # errors
    "FactError",
    "InvalidFactError",
    "InvalidDateError",
    "InvalidPatternError",
    "UnknownLeafError",
]
