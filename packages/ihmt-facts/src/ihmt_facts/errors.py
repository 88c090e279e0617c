"""The facts package's branch of the IHMT exception tree.

::

    IhmtError                        (ihmt_store)
    └── FactError
        ├── InvalidFactError     (ValueError)   a subject, attribute or value that is unusable
        ├── InvalidDateError     (ValueError)   a date or timestamp that cannot be parsed
        ├── InvalidPatternError  (ValueError)   a rule that does not compile or is incomplete
        └── UnknownLeafError     (LookupError)  a leaf id the store does not hold

Nothing here is raised for a sentence that holds no fact: extraction simply yields nothing.
A wrong argument type stays a plain ``TypeError`` outside the tree.
"""

from __future__ import annotations

from ihmt_facts._types import FactField
from ihmt_store import IhmtError

__all__ = [
    "FactError",
    "InvalidDateError",
    "InvalidFactError",
    "InvalidPatternError",
    "UnknownLeafError",
]


class FactError(IhmtError):
    """Something about a fact, a date, a rule or a source leaf is unusable."""


class InvalidFactError(FactError, ValueError):
    """A fact cannot be recorded: ``field`` (subject, attribute or value) holds ``value``."""

    def __init__(self, message: str, *, field: FactField, value: object) -> None:
        self.field = field
        self.value = value
        super().__init__(message)


class InvalidDateError(FactError, ValueError):
    """``value`` is not an ISO 8601 date or datetime."""

    def __init__(self, value: object) -> None:
        self.value = value
        super().__init__(f"invalid date {value!r}: expected ISO 8601, e.g. 2024-03-11")


class InvalidPatternError(FactError, ValueError):
    """The extraction rule ``name`` cannot be used, for ``reason``."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"invalid fact pattern {name!r}: {reason}")


class UnknownLeafError(FactError, LookupError):
    """No leaf with ``leaf_id`` in the store."""

    def __init__(self, leaf_id: str) -> None:
        self.leaf_id = leaf_id
        super().__init__(f"no memory with id {leaf_id!r}")

    def __str__(self) -> str:  # LookupError would otherwise print the repr of args
        return str(self.args[0])
