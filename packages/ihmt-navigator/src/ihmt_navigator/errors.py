"""The navigator's branch of the IHMT exception tree::

    IhmtError                      (ihmt_store)
    └── NavigatorError
        ├── SearchError
        │   └── InvalidFilterError (ValueError)   a bad as_of date, scope or detail
        └── SummarizerError                      a backend that cannot be used at all

An empty query is a plain ``ValueError`` (misuse, outside the tree). A summarizer that
fails while consolidating never raises: it falls back to the heuristic backend.
"""

from __future__ import annotations

from typing import Literal

from ihmt_store import IhmtError

__all__ = ["InvalidFilterError", "NavigatorError", "SearchError", "SummarizerError"]


class NavigatorError(IhmtError):
    """Something went wrong consolidating or searching."""


class SearchError(NavigatorError):
    """A search could not be carried out as asked."""


class InvalidFilterError(SearchError, ValueError):
    """A filter value is not valid: ``name`` says which, ``value`` what was given."""

    def __init__(
        self,
        name: Literal["as_of", "detail", "scope", "alternatives"],
        value: object,
        expected: str,
    ) -> None:
        self.name = name
        self.value = value
        super().__init__(f"invalid {name} {value!r}: expected {expected}")


class SummarizerError(NavigatorError):
    """A summarizer backend that cannot be built (unknown name)."""
