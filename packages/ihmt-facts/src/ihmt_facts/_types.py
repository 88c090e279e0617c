"""The closed sets of the facts package, as types (the values are the strings on disk)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "SUBJECT_KINDS",
    "SUBJECT_RULES",
    "VALUE_KINDS",
    "FactField",
    "Language",
    "SubjectKind",
    "SubjectRule",
    "ValueKind",
]

SubjectKind = Literal["user", "project", "host", "person", "patient"]
"""What a fact can be about: the user, or a named project, host, person or patient."""

SubjectRule = Literal["user", "scope", "project", "host", "person", "patient"]
"""Where an extraction rule's subject comes from:

- ``user``: the user;
- ``scope``: the leaf's project (``project:<name>``) when it has one, else the user;
- ``project``: the leaf's project, and no fact when it has none;
- ``host``: ``host:<name>`` from the ``name`` group (``host:<project>/<name>`` inside a
  project, so two projects' ``staging`` hosts stay apart);
- ``person``: ``person:<name>`` from the ``name`` group (a capitalised name);
- ``patient``: the patient of the record (a ``Paciente:``/``Patient:`` line above, or a
  ``patient:<name>`` tag on the leaf); no fact without one.
"""

ValueKind = Literal["name", "text", "tech", "list", "line", "port", "address", "os"]
"""How an extracted value is cut and checked:

- ``name``: stops at a clause boundary; must start with a capital letter or a digit;
- ``text``: stops at a clause boundary;
- ``tech``: like text, but never a weekday, a month or a pronoun ("the meeting is on Monday");
- ``list``: keeps commas and "and"/"y" ("Python, Django and PostgreSQL");
- ``line``: the rest of the line, up to a full stop (clinical headers);
- ``port``: a number from 1 to 65535;
- ``address``: an IP address or a dotted host name;
- ``os``: starts with an operating system's name (Ubuntu, Debian, Windows, macOS…).
"""

Language = Literal["en", "es"]
"""The language a rule reads; informative."""

FactField = Literal["subject", "attribute", "value", "key"]
"""The part of a fact an :class:`~ihmt_facts.InvalidFactError` is about."""

SUBJECT_KINDS: tuple[SubjectKind, ...] = get_args(SubjectKind)
SUBJECT_RULES: frozenset[SubjectRule] = frozenset(get_args(SubjectRule))
VALUE_KINDS: frozenset[ValueKind] = frozenset(get_args(ValueKind))
