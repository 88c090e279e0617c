"""Date parsing: a table of English and Spanish formats."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from ihmt_chunkers import parse_date

D, DT = date, datetime

TABLE: list[tuple[str, date | None]] = [
    ("2024-03-11", D(2024, 3, 11)),
    ("2024-03-11T10:00", DT(2024, 3, 11, 10, 0)),
    ("2024-03-11T10:00:30", DT(2024, 3, 11, 10, 0, 30)),
    ("2024-03-11 10:00", DT(2024, 3, 11, 10, 0)),
    ("2024-03-11T10:00:00Z", DT(2024, 3, 11, 10, 0, tzinfo=timezone.utc)),
    ("2024-03-11T10:00+02:00", DT(2024, 3, 11, 10, 0, tzinfo=timezone(timedelta(hours=2)))),
    ("2024/03/11", D(2024, 3, 11)),
    ("2024.03.11", D(2024, 3, 11)),
    ("March 3, 2024", D(2024, 3, 3)),
    ("Mar 3, 2024", D(2024, 3, 3)),
    ("Mar 3 2024", D(2024, 3, 3)),
    ("March 3rd, 2024", D(2024, 3, 3)),
    ("Sept. 5, 2023", D(2023, 9, 5)),
    ("Sunday, March 3, 2024", D(2024, 3, 3)),
    ("3 March 2024", D(2024, 3, 3)),
    ("3rd of March 2024", D(2024, 3, 3)),
    ("Tuesday 5th of March, 2024", D(2024, 3, 5)),
    ("3-Mar-2024", D(2024, 3, 3)),
    ("3 de marzo de 2024", D(2024, 3, 3)),
    ("3 de marzo del 2024", D(2024, 3, 3)),
    ("domingo, 3 de marzo de 2024", D(2024, 3, 3)),
    ("1º de enero de 2024", D(2024, 1, 1)),
    ("15 agosto 2022", D(2022, 8, 15)),
    ("20 ago 2023", D(2023, 8, 20)),
    ("1 de septiembre de 2023", D(2023, 9, 1)),
    ("7 de setiembre de 2023", D(2023, 9, 7)),
    ("marzo 3, 2024", D(2024, 3, 3)),
    ("03/03/2024", D(2024, 3, 3)),
    ("03/04/2024", D(2024, 4, 3)),
    ("13/04/2024", D(2024, 4, 13)),
    ("04/13/2024", D(2024, 4, 13)),
    ("31/12/2024", D(2024, 12, 31)),
    ("3.3.2024", D(2024, 3, 3)),
    ("3-3-2024", D(2024, 3, 3)),
    ("03/04/24", D(2024, 4, 3)),
    ("[2024-03-03 10:00] Ana: hola", DT(2024, 3, 3, 10, 0)),
    ("03/03/2024, 10:00 - Ana: hola", DT(2024, 3, 3, 10, 0)),
    ("Session 4 — 8 May 2023", D(2023, 5, 8)),
    ("Sesión 4 — 8 de mayo de 2023", D(2023, 5, 8)),
    ("8 May 2023, 14:30", DT(2023, 5, 8, 14, 30)),
    ("March 3, 2024 at 5:30 PM", DT(2024, 3, 3, 17, 30)),
    ("3 de marzo de 2024 a las 10:30", DT(2024, 3, 3, 10, 30)),
    ("2024-01-02: went running", D(2024, 1, 2)),
    ("no date here", None),
    ("version 1.2.3 of the tool", None),
    ("31/02/2024", None),
    ("February 30, 2024", None),
]


def test_the_table_covers_at_least_30_formats() -> None:
    assert sum(1 for _, value in TABLE if value is not None) >= 30


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_parse_date(text: str, expected: date | None) -> None:
    assert parse_date(text) == expected


def test_month_first_when_the_caller_says_so() -> None:
    assert parse_date("03/04/2024", dayfirst=False) == D(2024, 3, 4)
    assert parse_date("13/04/2024", dayfirst=False) == D(2024, 4, 13)


def test_the_first_valid_date_in_a_text_wins() -> None:
    assert parse_date("31/02/2024 was a typo; we met on 2024-02-29") == D(2024, 2, 29)
