"""Find and parse dates written in English and Spanish.

Recognised, with an optional time after the date (``10:00``, ``10:00:30``, ``5:30 PM``,
``at 5:30``, ``a las 10:30``, ``T10:00Z``, ``10h30``):

- ISO and year-first: ``2024-03-11``, ``2024-03-11T10:00``, ``2024/03/11``, ``2024.03.11``;
- day month year: ``3 March 2024``, ``3rd of March, 2024``, ``3-Mar-2024``,
  ``3 de marzo de 2024``, ``1º de enero del 2024``, ``15 agosto 2022``;
- month day year: ``March 3, 2024``, ``Sept. 5, 2023``, ``Mar 3 2024``, ``marzo 3, 2024``;
- numeric: ``03/03/2024``, ``3.3.2024``, ``3-3-2024``, ``03/03/24``.

The day/month rule for numeric dates: when the first number is above 12 it is the day,
when the second is above 12 the first is the month; when both could be either, the
first is the day (``dayfirst=True``, the European and Spanish order) unless the caller
passes ``dayfirst=False``. Two-digit years (``/`` only) are 2000–2069 and 1970–1999.
Impossible dates (``31/02/2024``) are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from ihmt_chunkers._regex import LazyRegex

__all__ = ["DateMatch", "find_date", "parse_date"]

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "january jan enero ene",
        "february feb febrero",
        "march mar marzo",
        "april apr abril abr",
        "may mayo",
        "june jun junio",
        "july jul julio",
        "august aug agosto ago",
        "september sep sept septiembre setiembre set",
        "october oct octubre",
        "november nov noviembre",
        "december dec diciembre dic",
    ),
    start=1,
):
    for _name in _names.split():
        _MONTHS[_name] = _number

_MONTH = "(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
_TIME = (
    r"(?:(?:\s*,\s*|\s+|\s*T\s*|\s+at\s+|\s*,?\s+a\s+las\s+|\s*@\s*|\s+-\s+)"
    r"(?P<H>[01]?\d|2[0-3])(?::|h(?=\d))(?P<M>[0-5]\d)(?::(?P<S>[0-5]\d)(?:[.,]\d+)?)?"
    r"(?:\s*(?P<ampm>[ap])\.?\s?m\b\.?)?"
    r"(?P<tz>Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?"
)
_ORD = r"(?:st|nd|rd|th|º|°|ª|ro|er)?"

_PATTERNS: tuple[tuple[str, LazyRegex], ...] = (
    (
        "ymd",
        LazyRegex(r"(?<![\d.])(?P<y>\d{4})([-/.])(?P<m>\d{1,2})\2(?P<d>\d{1,2})(?![\d])" + _TIME),
    ),
    (
        "dmy",
        LazyRegex(
            r"(?<![\w])(?P<d>\d{1,2})"
            + _ORD
            + r"\.?(?:\s*|-)(?:of\s+|de\s+)?"
            + _MONTH
            + r"(?:,?\s*|-)(?:de(?:l)?\s+)?(?P<y>\d{4})(?!\d)"
            + _TIME,
            re.IGNORECASE,
        ),
    ),
    (
        "mdy",
        LazyRegex(
            r"(?<![\w])"
            + _MONTH
            + r"\s*(?P<d>\d{1,2})"
            + _ORD
            + r"(?:,\s*|\s+)(?P<y>\d{4})(?!\d)"
            + _TIME,
            re.IGNORECASE,
        ),
    ),
    (
        "num",
        LazyRegex(
            r"(?<![\d/.\-])(?P<a>\d{1,2})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)"
            r"(?P<y>\d{4}|(?<=/)\d{2})(?![\d/.\-]\d)" + _TIME
        ),
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class DateMatch:
    """A date found in a text, with where it was found."""

    value: date
    """A ``date``, or a ``datetime`` when a time followed the date."""
    start: int
    """Offset of the first character of the date in the searched text."""
    end: int
    """Offset just past the date (and its time, if any)."""


def parse_date(text: str, *, dayfirst: bool = True) -> date | None:
    """Return the first date written in ``text``, or None.

    Args:
        text: Any text: ``"March 3, 2024"``, ``"[2024-03-03 10:00] Ana: hi"``,
            ``"Sesión 4 — 8 de mayo de 2023"``.
        dayfirst: How to read a numeric date whose two first numbers are both 12 or
            less (``03/04/2024``): day first (3 April) by default, month first if False.

    Returns:
        A ``date``, or a ``datetime`` when a time follows the date (timezone-aware
        when the text gives an offset), or None when no valid date is written.
    """
    found = find_date(text, dayfirst=dayfirst)
    return found.value if found else None


def find_date(text: str, *, dayfirst: bool = True, limit: int | None = None) -> DateMatch | None:
    """Find the earliest valid date in ``text`` (or in its first ``limit`` characters)."""
    best: DateMatch | None = None
    window = text if limit is None else text[:limit]
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(window):
            if best is not None and match.start() >= best.start:
                break
            value = _build(kind, match, dayfirst=dayfirst)
            if value is None:
                continue
            candidate = DateMatch(value=value, start=match.start(), end=match.end())
            if best is None or candidate.start < best.start:
                best = candidate
            break
    return best


def _build(kind: str, match: re.Match[str], *, dayfirst: bool) -> date | None:
    groups = match.groupdict()
    year = int(groups["y"])
    if kind == "ymd":
        month, day = int(groups["m"]), int(groups["d"])
    elif kind in ("dmy", "mdy"):
        month = _MONTHS[groups["mon"].lower()]
        day = int(groups["d"])
    else:
        first, second = int(groups["a"]), int(groups["b"])
        if first > 12 or (second <= 12 and dayfirst):
            day, month = first, second
        else:
            day, month = second, first
        if len(groups["y"]) == 2:
            year += 2000 if year < 70 else 1900
    try:
        day_value = date(year, month, day)
    except ValueError:
        return None
    if groups.get("H") is None:
        return day_value
    hour, minute = int(groups["H"]), int(groups["M"])
    second_value = int(groups["S"]) if groups.get("S") else 0
    ampm = (groups.get("ampm") or "").lower()
    if ampm:
        if hour > 12 or hour == 0:
            return day_value
        hour = hour % 12 + (12 if ampm == "p" else 0)
    tz = _timezone(groups.get("tz"))
    return datetime(year, month, day, hour, minute, second_value, tzinfo=tz)


def _timezone(raw: str | None) -> timezone | None:
    if not raw:
        return None
    if raw == "Z":
        return timezone.utc
    sign = -1 if raw[0] == "-" else 1
    digits = raw[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
