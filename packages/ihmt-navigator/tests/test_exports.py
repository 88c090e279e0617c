"""The reviewed surface of ihmt-navigator.

Every name in ``__all__`` is a promise to the packages that compose this one (ihmt-mcp's
``Memory``, the CLI through it) and to anyone who embeds it. Adding or removing a name is
a deliberate API change, reviewed here: make it on purpose, update the snapshot below in
the same change, and say why in the CHANGELOG, so that a reviewer sees it (the rule the
MCP python-sdk keeps in its VERSIONING document). The same holds for the public methods
of ``Navigator`` and the fields of ``SearchOptions``, the record every caller builds.
"""

from __future__ import annotations

import dataclasses
from typing import get_args

import ihmt_navigator
from ihmt_navigator import Navigator, SearchOptions
from ihmt_navigator._records import CorrectionStatus, HitKind, Status

SURFACE = [
    "AnthropicSummarizer",
    "ChildText",
    "ClueProvider",
    "CodeSearch",
    "CodeSymbol",
    "ConsolidationReport",
    "Consolidator",
    "CorrectionMatch",
    "Detail",
    "Embedder",
    "Frequencies",
    "HeuristicSummarizer",
    "Hit",
    "InvalidFilterError",
    "Navigator",
    "NavigatorError",
    "NodeSummary",
    "PENDING",
    "Scope",
    "SearchError",
    "SearchOptions",
    "SearchResult",
    "SemanticMode",
    "Summarizer",
    "SummarizerError",
    "VectorIndex",
    "best_passage",
    "load_embedder",
    "summarizer_for",
]


def test_all_is_the_reviewed_surface() -> None:
    assert sorted(ihmt_navigator.__all__) == SURFACE


def test_every_exported_name_exists() -> None:
    missing = [name for name in ihmt_navigator.__all__ if not hasattr(ihmt_navigator, name)]
    assert missing == []


def test_the_navigator_has_three_public_methods() -> None:
    public = sorted(name for name in vars(Navigator) if not name.startswith("_"))
    assert public == ["ask", "find_corrected", "search"]


def test_search_options_are_the_reviewed_fields() -> None:
    assert [f.name for f in dataclasses.fields(SearchOptions)] == [
        "as_of",
        "domain",
        "project",
        "prefer_project",
        "scope",
        "path_prefix",
        "detail",
        "limit",
        "note_other_project",
        "alternatives",
    ]


def test_the_closed_sets_are_the_documented_values() -> None:
    assert get_args(ihmt_navigator.Detail) == ("compact", "full")
    assert get_args(ihmt_navigator.Scope) == ("main", "test", "all")
    assert get_args(Status) == ("found", "ambiguous", "not_found")
    assert get_args(HitKind) == ("leaf", "branch")
    assert get_args(CorrectionStatus) == ("found", "ambiguous", "not_found")
