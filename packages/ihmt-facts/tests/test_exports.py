"""The reviewed surface of ihmt-facts.

Every name in ``__all__`` is a promise to the packages that compose this one (ihmt-mcp,
ihmt-cli, the tools) and to anyone who embeds it. Adding or removing a name is an API
change: make it on purpose, update the snapshot below in the same change, and say why in
the CHANGELOG, so that a reviewer sees it (the rule the MCP python-sdk keeps in its
VERSIONING document).
"""

from __future__ import annotations

from typing import get_args

import ihmt_facts

SURFACE = [
    "Contradiction",
    "DEFAULT_PATTERNS",
    "Extraction",
    "Fact",
    "FactError",
    "FactState",
    "FactStatus",
    "InvalidDateError",
    "InvalidFactError",
    "InvalidPatternError",
    "JOURNAL_NAME",
    "Language",
    "Outcome",
    "Pattern",
    "Recorded",
    "SubjectRule",
    "Timeline",
    "TimelineStats",
    "UnknownLeafError",
    "ValueKind",
    "extract",
]


def test_all_is_the_reviewed_surface() -> None:
    assert sorted(ihmt_facts.__all__) == SURFACE


def test_every_exported_name_exists() -> None:
    missing = [name for name in ihmt_facts.__all__ if not hasattr(ihmt_facts, name)]
    assert missing == []


def test_the_closed_sets_keep_their_values() -> None:
    assert get_args(ihmt_facts.SubjectRule) == (
        "user", "scope", "project", "host", "person", "patient",
    )  # fmt: skip
    assert get_args(ihmt_facts.ValueKind) == (
        "name", "text", "tech", "list", "line", "port", "address", "os",
    )  # fmt: skip
    assert get_args(ihmt_facts.Language) == ("en", "es")
    assert [s.value for s in ihmt_facts.FactStatus] == ["ACTIVE", "HISTORICAL"]
    assert [o.value for o in ihmt_facts.Outcome] == ["new", "confirmed", "changed", "duplicate"]


def test_every_built_in_rule_uses_a_value_of_the_closed_sets() -> None:
    for rule in ihmt_facts.DEFAULT_PATTERNS:
        assert rule.subject in get_args(ihmt_facts.SubjectRule)
        assert rule.value_kind in get_args(ihmt_facts.ValueKind)
        assert rule.language in get_args(ihmt_facts.Language)
