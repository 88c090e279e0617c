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

from ihmt_facts._patterns import (
    DEFAULT_PATTERNS,
    MAX_EXTRACTED_CHARS,
    SUBJECT_RULES,
    VALUE_KINDS,
    Pattern,
    extract,
)
from ihmt_facts._records import (
    MAX_VALUE_CHARS,
    SUBJECT_KINDS,
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
    same_value,
)
from ihmt_facts._timeline import FACT_DOMAIN, FACT_TAG, FACTS_KEY, JOURNAL_NAME, Timeline
from ihmt_facts.errors import (
    FactError,
    InvalidDateError,
    InvalidFactError,
    InvalidPatternError,
    UnknownLeafError,
)

__version__ = "0.1.0"

__all__ = [
    # the timeline
    "Timeline",
    "TimelineStats",
    "JOURNAL_NAME",
    "FACTS_KEY",
    "FACT_DOMAIN",
    "FACT_TAG",
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
    "extract",
    "DEFAULT_PATTERNS",
    "SUBJECT_RULES",
    "VALUE_KINDS",
    "MAX_EXTRACTED_CHARS",
    # normalisation
    "SUBJECT_KINDS",
    "MAX_VALUE_CHARS",
    "normalize_subject",
    "normalize_attribute",
    "normalize_value",
    "same_value",
    "parse_key",
    "parse_moment",
    # errors
    "FactError",
    "InvalidFactError",
    "InvalidDateError",
    "InvalidPatternError",
    "UnknownLeafError",
]
