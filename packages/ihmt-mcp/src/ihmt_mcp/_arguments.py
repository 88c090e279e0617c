"""The values a caller passes to ``save``, ``ingest`` and ``search``, checked and made canonical.

Each check raises ``ValueError`` with a sentence the user can act on (the MCP tools and the
CLI show it as it is).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import cast

from ihmt_chunkers import DocType
from ihmt_mcp._types import ContentType, DataType
from ihmt_store import check_date, normalize_timestamp, one_line, safe_domain

__all__ = [
    "DOC_TYPE_NAMES",
    "data_type_of",
    "parse_content_type",
    "parse_date",
    "parse_domain",
]

DETECT_DOMAINS = frozenset({"", "general", "auto"})
"""Domains that mean "file it where its content belongs"."""
CONTENT_TYPES = {t.value: t for t in DocType}
DOC_TYPE_NAMES = frozenset(t.value.upper() for t in DocType)
"""The stored ``data_type`` names (``GENERIC``, ``CODE``…)."""


def data_type_of(doc_type: DocType) -> DataType:
    """The name a memory of ``doc_type`` is filed under (``GENERIC``, ``CODE``…)."""
    return cast(DataType, doc_type.value.upper())


def parse_content_type(value: ContentType | str | None) -> DocType | None:
    """The document type ``value`` names; None for ``auto`` (detect it)."""
    if value is None:
        return None
    key = value.strip().lower()
    if key in ("", "auto"):
        return None
    if key not in CONTENT_TYPES:
        kinds = ", ".join(["auto", *CONTENT_TYPES])
        raise ValueError(f"unknown content_type {value!r}: use one of {kinds}")
    return CONTENT_TYPES[key]


def parse_domain(value: str | None) -> str | None:
    """The domain ``value`` names; None for one that means "detect it"."""
    if value is None or value.strip().lower() in DETECT_DOMAINS:
        return None
    try:
        return safe_domain(value.strip().lower())
    except ValueError:
        raise ValueError(
            f"invalid domain {value!r}: use dotted lower-case words such as 'software.infra'"
        ) from None


def parse_date(value: str | date | datetime | None) -> str | None:
    """The timestamp of ``value``, an ISO date no later than the store allows (a day
    ahead: :func:`ihmt_store.check_date`, the one rule for a memory's date)."""
    if value is None or value == "":
        return None
    try:
        normalize_timestamp(value)
    except ValueError:
        shown = one_line(str(value), 60)
        raise ValueError(f"invalid date {shown!r}: use an ISO date such as 2026-02-03") from None
    return check_date(value)
