"""``Pattern``: one declarative extraction rule, checked when it is made."""

from __future__ import annotations

import dataclasses
import functools
import re
import string
from dataclasses import dataclass

from ihmt_facts._records import normalize_attribute
from ihmt_facts._types import SUBJECT_RULES, VALUE_KINDS, Language, SubjectRule, ValueKind
from ihmt_facts.errors import InvalidFactError, InvalidPatternError

__all__ = ["Pattern", "compile_rule"]

_NAME_OK = re.compile(r"^[A-Za-z0-9][\w.-]{0,59}$")
_EXTRA_PLACEHOLDERS = frozenset({"pair", "value"})


@functools.lru_cache(maxsize=512)
def compile_rule(regex: str) -> re.Pattern[str]:
    """``regex`` compiled as every rule is searched: case-insensitively."""
    return re.compile(regex, re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pattern:
    """One extraction rule: where a fact is said, and what it is about.

    Example::

        Pattern(name="editor-en", regex=r"\\bmy editor is (?P<value>.+)",
                subject="user", attribute="editor")
    """

    name: str
    """Unique name; recorded as the ``origin`` of every fact it finds."""
    regex: str
    """Searched case-insensitively in each sentence (each line when ``per_line``). Must
    define the group ``value``; may define ``name`` (the subject's name), ``component``,
    ``topic`` and ``other``, used by ``attribute`` placeholders."""
    subject: SubjectRule
    """Where the subject comes from (see :data:`SubjectRule`)."""
    attribute: str
    """The attribute, possibly with placeholders: ``{component}``, ``{topic}`` (any group),
    ``{value}`` (the value) and ``{pair}`` (value and ``other``, sorted: "spaces/tabs")."""
    value_kind: ValueKind = "text"
    """How the value is cut and checked (see :data:`ValueKind`)."""
    per_line: bool = False
    """Match whole lines (``Diagnosis: …`` headers) instead of sentences."""
    language: Language = "en"
    """``en`` or ``es``; informative."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_OK.match(self.name):
            raise InvalidPatternError(
                str(self.name), "the name must be 1-60 letters, digits, . _ -"
            )
        try:
            compiled = compile_rule(self.regex)
        except (re.error, TypeError) as exc:
            raise InvalidPatternError(self.name, f"the regex does not compile: {exc}") from None
        groups = set(compiled.groupindex)
        if "value" not in groups:
            raise InvalidPatternError(self.name, "the regex needs a (?P<value>...) group")
        if self.subject not in SUBJECT_RULES:
            raise InvalidPatternError(
                self.name, f"subject must be one of {', '.join(sorted(SUBJECT_RULES))}"
            )
        if self.subject in ("host", "person") and "name" not in groups:
            raise InvalidPatternError(
                self.name, f"a {self.subject} rule needs a (?P<name>...) group"
            )
        if self.value_kind not in VALUE_KINDS:
            raise InvalidPatternError(
                self.name, f"value_kind must be one of {', '.join(sorted(VALUE_KINDS))}"
            )
        try:
            fields = _placeholders(self.attribute)
        except (ValueError, TypeError) as exc:
            raise InvalidPatternError(self.name, f"bad attribute template: {exc}") from None
        unknown = fields - groups - _EXTRA_PLACEHOLDERS
        if unknown:
            raise InvalidPatternError(
                self.name, f"attribute placeholder(s) {sorted(unknown)} are not regex groups"
            )
        if "pair" in fields and "other" not in groups:
            raise InvalidPatternError(self.name, "{pair} needs an (?P<other>...) group")
        if not fields:
            try:
                normalize_attribute(self.attribute)
            except InvalidFactError as exc:
                raise InvalidPatternError(self.name, str(exc)) from None

    @classmethod
    def _unchecked(cls, **fields: object) -> Pattern:
        """A rule made without :meth:`__post_init__`'s check, which compiles the regex:
        for rules checked elsewhere (the built-in ones, by
        ``tests/test_rules_compiled_on_use.py``), so each compiles only when first used.
        Every field not given takes its default."""
        made = object.__new__(cls)
        for spec in dataclasses.fields(cls):
            value = fields.get(spec.name, spec.default)
            if value is dataclasses.MISSING:
                raise TypeError(f"Pattern._unchecked needs {spec.name!r}")
            object.__setattr__(made, spec.name, value)
        return made

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled regex (case-insensitive)."""
        return compile_rule(self.regex)

    @property
    def placeholders(self) -> frozenset[str]:
        """The placeholders used in ``attribute``."""
        return _placeholders(self.attribute)


def _placeholders(template: str) -> frozenset[str]:
    return frozenset(f for _, f, _, _ in string.Formatter().parse(template) if f is not None)
