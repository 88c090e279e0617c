"""The values a caller passes to ``save``, ``ingest`` and ``search``, checked and made canonical.

Each check raises ``ValueError`` with a sentence the user can act on (the MCP tools and the
CLI show it as it is).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import cast

from ihmt_chunkers import DocType
from ihmt_mcp._types import ContentType, DataType
from ihmt_store import normalize_timestamp, one_line, safe_domain

__all__ = [
    "DOC_TYPE_NAMES",
    "FUTURE_SLACK",
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


FUTURE_SLACK = timedelta(days=1)
"""A memory may be dated up to a day ahead (time zones); a later date is refused: a
memory dated 9999-12-31 would outdate every real one after it forever."""


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
    """The timestamp of ``value``, an ISO date no later than :data:`FUTURE_SLACK` ahead."""
    if value is None or value == "":
        return None
    try:
        when = normalize_timestamp(value)
    except ValueError:
        shown = one_line(str(value), 60)
        raise ValueError(f"invalid date {shown!r}: use an ISO date such as 2026-02-03") from None
    latest = normalize_timestamp(datetime.now(timezone.utc) + FUTURE_SLACK)
    if when > latest:
        raise ValueError(
            f"the date {when[:10]} is in the future: date a memory when what it says became "
            "true (today or earlier)"
        )
    return when
