"""Fact extraction: small declarative rules, English and Spanish, and the function that runs them.

A rule is a regular expression searched in each sentence (or, for clinical headers, each
line) plus where its subject, attribute and value come from. What turns a match into a
fact is shared by every rule: the value stops at the first clause boundary, loses
trailing filler ("Valencia now" → "Valencia"), must fit 60 characters and pass its kind's
check (a proper name starts with a capital, a port is a number…); a sentence that is a
question, a negation or a hypothesis ("if we migrate…", "no vivo en…") yields nothing.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ihmt_facts._records import (
    Extraction,
    normalize_attribute,
    normalize_subject,
    normalize_value,
    value_key,
)
from ihmt_facts.errors import InvalidFactError, InvalidPatternError

__all__ = [
    "DEFAULT_PATTERNS",
    "MAX_EXTRACTED_CHARS",
    "SUBJECT_RULES",
    "VALUE_KINDS",
    "Pattern",
    "extract",
]

MAX_EXTRACTED_CHARS = 60
"""Longest value extraction keeps; a longer one is not a fact but a paragraph."""

SUBJECT_RULES = frozenset({"user", "scope", "project", "host", "person", "patient"})
"""Where a rule's subject comes from:

- ``user``: the user;
- ``scope``: the leaf's project (``project:<name>``) when it has one, else the user;
- ``project``: the leaf's project, and no fact when it has none;
- ``host``: ``host:<name>`` from the ``name`` group (``host:<project>/<name>`` inside a
  project, so two projects' ``staging`` hosts stay apart);
- ``person``: ``person:<name>`` from the ``name`` group (a capitalised name);
- ``patient``: the patient of the record (a ``Paciente:``/``Patient:`` line above, or a
  ``patient:<name>`` tag on the leaf); no fact without one.
"""

VALUE_KINDS = frozenset({"name", "text", "tech", "list", "line", "port", "address", "os"})
"""How a value is cut and checked:

- ``name``: stops at a clause boundary; must start with a capital letter or a digit;
- ``text``: stops at a clause boundary;
- ``tech``: like text, but never a weekday, a month or a pronoun ("the meeting is on Monday");
- ``list``: keeps commas and "and"/"y" ("Python, Django and PostgreSQL");
- ``line``: the rest of the line, up to a full stop (clinical headers);
- ``port``: a number from 1 to 65535;
- ``address``: an IP address or a dotted host name;
- ``os``: starts with an operating system's name (Ubuntu, Debian, Windows, macOS…).
"""

_NAME_OK = re.compile(r"^[A-Za-z0-9][\w.-]{0,59}$")
_EXTRA_PLACEHOLDERS = frozenset({"pair", "value"})


@functools.lru_cache(maxsize=512)
def _compile(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.IGNORECASE)


# ---------------------------------------------------------------------- the words a rule needs
_FOLD_TO_ASCII = str.maketrans({"\u0130": "i", "\u0131": "i", "\u212a": "k", "\u017f": "s"})
"""The only characters that case-insensitive ``re`` matches with an ASCII letter and
that ``str.lower`` does not turn into it (checked over every code point)."""
_SIMPLE_CASE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789 áéíóúñü.,;:'’-_/#+@")


def _folded(text: str) -> str:
    """``text`` as :func:`_gate` words are compared with it."""
    return text.translate(_FOLD_TO_ASCII).lower()


@functools.lru_cache(maxsize=512)
def _gate(regex: str) -> frozenset[str] | None:
    """Words (lower-cased) one of which every match of ``regex`` holds, or None.

    Read off the parsed regex: a run of literal characters that every match must pass
    through, or one such run per branch of an alternation every match must take. A
    sentence holding none of them cannot match, so the rule is not run on it: most
    rules name a verb or a noun ("moved", "puerto", "prefer"), and a search that must
    try every position of every sentence is what extraction spends its time on.
    """
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(regex, re.IGNORECASE)
    except Exception:  # noqa: BLE001 - another Python's internals: no gate, same facts
        return None
    return _gate_of(parsed, _constants)


def _gate_of(items: Any, c: Any) -> frozenset[str] | None:
    best: frozenset[str] | None = None
    run: list[str] = []

    def consider(words: frozenset[str] | None) -> None:
        nonlocal best
        if not words or not all(set(w) <= _SIMPLE_CASE for w in words):
            return
        if best is None or min(map(len, words)) > min(map(len, best)):
            best = words

    def flush() -> None:
        if run:
            consider(frozenset({"".join(run).lower()}))
            run.clear()

    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}
    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        flush()
        if op is c.SUBPATTERN:
            consider(_gate_of(av[-1], c))
        elif op is getattr(c, "ATOMIC_GROUP", None):
            consider(_gate_of(av, c))
        elif op in repeats:
            low, _high, sub = av
            if low >= 1:
                consider(_gate_of(sub, c))
        elif op is c.BRANCH:
            branches = [_gate_of(b, c) for b in av[1]]
            if all(b is not None for b in branches):
                consider(frozenset().union(*(b for b in branches if b is not None)))
    flush()
    return best


class _Gated:
    """Rules with their gates, and the words of all the gates."""

    __slots__ = ("gates", "rules", "words")

    def __init__(self, rules: tuple[Pattern, ...]) -> None:
        self.rules = rules
        self.gates = tuple(_gate(r.regex) for r in rules)
        self.words = tuple(sorted({w for g in self.gates if g for w in g}))


@functools.lru_cache(maxsize=64)
def _gated(rules: tuple[Pattern, ...]) -> _Gated:
    return _Gated(rules)


def _candidates(rules: tuple[Pattern, ...], text: str) -> list[Pattern]:
    """The rules that may match ``text``, in order: those whose gate it passes."""
    gated = _gated(rules)
    folded = _folded(text)
    present = {w for w in gated.words if w in folded}
    return [
        rule
        for rule, gate in zip(gated.rules, gated.gates, strict=True)
        if gate is None or not gate.isdisjoint(present)
    ]


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
    subject: str
    """One of :data:`SUBJECT_RULES`."""
    attribute: str
    """The attribute, possibly with placeholders: ``{component}``, ``{topic}`` (any group),
    ``{value}`` (the value) and ``{pair}`` (value and ``other``, sorted: "spaces/tabs")."""
    value_kind: str = "text"
    """One of :data:`VALUE_KINDS`."""
    per_line: bool = False
    """Match whole lines (``Diagnosis: …`` headers) instead of sentences."""
    language: str = "en"
    """``en`` or ``es``; informative."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_OK.match(self.name):
            raise InvalidPatternError(
                str(self.name), "the name must be 1-60 letters, digits, . _ -"
            )
        try:
            compiled = _compile(self.regex)
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
            fields = {f for _, f, _, _ in string.Formatter().parse(self.attribute) if f is not None}
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

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled regex (case-insensitive)."""
        return _compile(self.regex)

    @property
    def placeholders(self) -> frozenset[str]:
        """The placeholders used in ``attribute``."""
        return frozenset(
            f for _, f, _, _ in string.Formatter().parse(self.attribute) if f is not None
        )


# ---------------------------------------------------------------------- regex fragments
_Q = "['’]"  # an apostrophe, straight or typographic
_ADV = r"(?:(?:now|currently|still|also|actually|already|just|recently|finally|really)\s+)?"
_ADV_ES = r"(?:(?:ahora|actualmente|ya|también|tambien|todavía|todavia|aún|aun)\s+)?"
# Every fragment that reads a token starts only where a token starts (a look-behind) and
# reads at most a bounded number of characters: each rule then costs linear time, even on
# a 200,000-character line with no space in it (issue #13, D7).
_HOST = r"(?<![\w.-])(?P<name>\w[\w.-]{0,252})"
_PERSON = (
    r"(?<![\w'’-])(?P<name>(?-i:[A-ZÁÉÍÓÚÑÜ][\w'’-]{1,60}"
    r"(?:\s+(?:de\s+|del\s+|van\s+|von\s+)?[A-ZÁÉÍÓÚÑÜ][\w'’-]{1,60})?))"
)
_FROM = r"(?:from\s+[\w.+#' -]{1,80}?\s+)?"
_DE = r"(?:de\s+[\w.+#' -]{1,80}?\s+)?"
_HEADS = (
    r"(?:staging|production|prod|pre-?prod|pre-production|dev|development|testing|qa|uat|"
    r"sandbox|ci|cd|ci/cd|backend|back-end|frontend|front-end|apis?|databases?|db|cache|queue|"
    r"auth|search|storage|web|website|site|apps?|application|cluster|infra|infrastructure|"
    r"monitoring|logging|hosting|deploys?|deployment|services?|servers?|workers?|scheduler|"
    r"gateway|proxy|broker|pipeline|repo|repository|registry|producci[oó]n|preproducci[oó]n|"
    r"pruebas|desarrollo|servicios?|servidor(?:es)?|aplicaci[oó]n|base\s+de\s+datos|"
    r"repositorio)\b"
)
"""Words that name a part of a project's system (the head of "the payments service")."""
# "Staging moved to PostgreSQL 17" is an environment, not a person who moved house.
_PERSON = r"(?!" + _HEADS + r")" + _PERSON
# A token holding a digit, a dot or an underscore ("k8s", "v2.api"), or an acronym.
_TECHY = (
    r"(?<![\w.-])(?=[\w-]{0,120}[\d._])[\w.-]{1,160}(?![\w.-])"
    r"|(?<![\w.-])(?-i:[A-Z]{2,}[\w-]{0,120})(?![\w-])"
)
_HOSTY = (
    r"(?P<name>(?<![\w.-])(?=[\w-]{0,120}[\d._-])[\w.-]{1,160}(?![\w.-])|"
    r"laptop|desktop|workstation|pc|mac|nas|router|"
    r"staging|production|prod|dev|ci|sandbox)"
)
_RUNS_OS = r"(?:runs|is\s+running|runs\s+on|is\s+on|uses|(?:was|has\s+been|is)\s+upgraded\s+to)"
_RUNS_OS_ES = r"(?:corre|usa|ejecuta|lleva|tiene|funciona\s+con)"
_COMPONENT = (
    r"(?P<component>(?:(?:the|our|my)\s+)?"
    r"(?:(?<![\w.+#-])(?!is\b|now\b|the\b|our\b)[\w.+#-]{1,60}\s+)?" + _HEADS + r"|" + _TECHY + r")"
)
_COMPONENT_ES = (
    r"(?P<component>(?:(?:el|la|los|las|nuestro|nuestra|nuestros|nuestras|mi)\s+)?"
    + _HEADS
    + r"(?:\s+de\s+(?-i:[a-záéíóúñü][\w-]*))?|"
    + _TECHY
    + r")"
)
_MIGRATE_COMPONENT = (
    r"(?P<component>(?:(?:the|our)\s+)?(?:(?<![\w.+#-])(?!from\b|to\b|over\b)[\w.+#-]{1,60}\s+)?"
    + _HEADS
    + r"|"
    + _TECHY
    + r")"
)
_MIGRATE_COMPONENT_ES = (
    r"(?P<component>(?:el|la|los|las|nuestro|nuestra|nuestros|nuestras)\s+"
    + _HEADS
    + r"(?:\s+de\s+(?-i:[a-záéíóúñü][\w-]*))?)"
)
_PREFER = (
    r"\bI\s+" + _ADV + r"(?:generally\s+|always\s+|usually\s+)?prefer\s+(?!not\b|no\b|to\s+not\b)"
)
_PREFER_ES = r"\b(?:yo\s+)?" + _ADV_ES + r"(?:siempre\s+|normalmente\s+)?prefiero\s+(?!no\b|nada\b)"
_CLINICAL = r"^\s*(?:[-*•]\s*)?(?:"


def _p(
    name: str,
    regex: str,
    subject: str,
    attribute: str,
    kind: str = "text",
    *,
    per_line: bool = False,
    language: str = "en",
) -> Pattern:
    return Pattern(
        name=name,
        regex=regex,
        subject=subject,
        attribute=attribute,
        value_kind=kind,
        per_line=per_line,
        language=language,
    )


DEFAULT_PATTERNS: tuple[Pattern, ...] = (
    # ------------------------------------------------------------ hosts: port, address, OS
    _p(
        "host-port-en",
        r"\b(?:the\s+)?(?:(?:server|host|service|machine|vm|box|container)\s+)?"
        + _HOST
        + r"\s+"
        + _ADV
        + r"(?:listens|runs|is\s+listening|is\s+running|is\s+served|is\s+exposed|"
        r"is\s+available|is\s+reachable|answers)\s+on\s+port\s+(?P<value>\d+)",
        "host",
        "port",
        "port",
    ),
    _p(
        "host-port-of-en",
        r"\b(?:the\s+)?port\s+(?:of|for|on)\s+(?:the\s+)?(?:(?:server|host|service)\s+)?"
        + _HOST
        + r"\s+is\s+"
        + _ADV
        + r"(?P<value>\d+)",
        "host",
        "port",
        "port",
    ),
    _p(
        "host-port-s-en",
        _HOST + _Q + r"s\s+port\s+is\s+" + _ADV + r"(?P<value>\d+)",
        "host",
        "port",
        "port",
    ),
    _p(
        "host-port-es",
        r"\b(?:el\s+)?(?:(?:servidor|servicio|host|máquina|maquina)\s+)?"
        + _HOST
        + r"\s+"
        + _ADV_ES
        + r"(?:escucha|corre|está|esta|funciona|atiende|responde)\s+en\s+el\s+puerto\s+"
        r"(?P<value>\d+)",
        "host",
        "port",
        "port",
        language="es",
    ),
    _p(
        "host-port-of-es",
        r"\bel\s+puerto\s+(?:de|del)\s+(?:(?:servidor|servicio)\s+)?"
        + _HOST
        + r"\s+es\s+"
        + _ADV_ES
        + r"(?:el\s+)?(?P<value>\d+)",
        "host",
        "port",
        "port",
        language="es",
    ),
    _p(
        "host-address-s-en",
        r"\b"
        + _HOST
        + _Q
        + r"s\s+(?:ip(?:\s+address)?|address|hostname)\s+is\s+"
        + _ADV
        + r"(?P<value>\S+)",
        "host",
        "address",
        "address",
    ),
    _p(
        "host-address-of-en",
        r"\bthe\s+(?:ip(?:\s+address)?|address|hostname)\s+(?:of|for)\s+(?:the\s+)?"
        r"(?:(?:server|host|machine|vm|box)\s+)?" + _HOST + r"\s+is\s+" + _ADV + r"(?P<value>\S+)",
        "host",
        "address",
        "address",
    ),
    _p(
        "host-address-at-en",
        r"\b(?:the\s+)?(?:(?:server|host|machine|vm|box)\s+)?"
        + _HOST
        + r"\s+is\s+"
        + _ADV
        + r"(?:at|reachable\s+at)\s+(?P<value>\d{1,3}(?:\.\d{1,3}){3})",
        "host",
        "address",
        "address",
    ),
    _p(
        "host-address-es",
        r"\bla\s+(?:ip|direcci[oó]n(?:\s+ip)?)\s+(?:de|del)\s+(?:(?:servidor|host)\s+)?"
        + _HOST
        + r"\s+es\s+"
        + _ADV_ES
        + r"(?P<value>\S+)",
        "host",
        "address",
        "address",
        language="es",
    ),
    _p(
        "host-address-tiene-es",
        r"\b(?:el\s+)?(?:(?:servidor|host)\s+)?"
        + _HOST
        + r"\s+tiene\s+"
        + _ADV_ES
        + r"(?:la\s+)?(?:ip|direcci[oó]n)\s+(?P<value>\S+)",
        "host",
        "address",
        "address",
        language="es",
    ),
    _p(
        "host-os-of-en",
        r"\bthe\s+(?:os|operating\s+system)\s+(?:of|on)\s+(?:the\s+)?"
        r"(?:(?:server|host|machine|vm|box)\s+)?" + _HOST + r"\s+is\s+" + _ADV + r"(?P<value>.+)",
        "host",
        "os",
        "text",
    ),
    _p(
        "host-os-en",
        r"\b(?:(?:the|my|our)\s+)?(?:server|host|machine|vm|box|laptop|desktop|workstation)\s+"
        + _HOST
        + r"\s+"
        + _ADV
        + _RUNS_OS
        + r"\s+(?P<value>.+)",
        "host",
        "os",
        "os",
    ),
    _p(
        "host-os-bare-en",
        r"\b(?:(?:the|my|our)\s+)?" + _HOSTY + r"\s+" + _ADV + _RUNS_OS + r"\s+(?P<value>.+)",
        "host",
        "os",
        "os",
    ),
    _p(
        "host-os-of-es",
        r"\bel\s+sistema\s+operativo\s+(?:de|del)\s+(?:(?:servidor|host)\s+)?"
        + _HOST
        + r"\s+es\s+"
        + _ADV_ES
        + r"(?P<value>.+)",
        "host",
        "os",
        "text",
        language="es",
    ),
    _p(
        "host-os-es",
        r"\b(?:(?:el|mi|nuestro)\s+)?(?:servidor|host|máquina|maquina|portátil|portatil)\s+"
        + _HOST
        + r"\s+"
        + _ADV_ES
        + _RUNS_OS_ES
        + r"\s+(?P<value>.+)",
        "host",
        "os",
        "os",
        language="es",
    ),
    _p(
        "host-os-bare-es",
        r"\b(?:(?:el|mi|nuestro)\s+)?"
        + _HOSTY
        + r"\s+"
        + _ADV_ES
        + _RUNS_OS_ES
        + r"\s+(?P<value>.+)",
        "host",
        "os",
        "os",
        language="es",
    ),
    # ------------------------------------------------------------ the user: where, who for
    _p(
        "user-location-en",
        r"\bI\s+"
        + _ADV
        + r"(?:live|am\s+living|am\s+based|reside|(?:have\s+)?been\s+living)\s+in\s+"
        r"(?P<value>.+)",
        "user",
        "location",
        "name",
    ),
    _p(
        "user-location-contracted-en",
        r"\bI"
        + _Q
        + r"(?:m|ve)\s+"
        + _ADV
        + r"(?:living|based|been\s+living)\s+in\s+(?P<value>.+)",
        "user",
        "location",
        "name",
    ),
    _p(
        "user-moved-en",
        r"\bI(?:\s+have|"
        + _Q
        + r"ve)?\s+"
        + _ADV
        + r"(?:moved|relocated)\s+"
        + _FROM
        + r"(?:back\s+)?to\s+(?P<value>.+)",
        "user",
        "location",
        "name",
    ),
    _p(
        "user-location-es",
        r"\b(?:vivo|resido)\s+" + _ADV_ES + r"en\s+(?P<value>.+)",
        "user",
        "location",
        "name",
        language="es",
    ),
    _p(
        "user-moved-es",
        r"\b(?:me|nos)\s+(?:he\s+|hemos\s+)?(?:mudado|mudé|mude|mudamos|trasladado|trasladé|"
        r"traslade|trasladamos|ido\s+a\s+vivir|fui\s+a\s+vivir|fuimos\s+a\s+vivir)\s+"
        r"(?:(?:definitivamente|ya|por\s+fin|finalmente)\s+)?" + _DE + r"a\s+(?P<value>.+)",
        "user",
        "location",
        "name",
        language="es",
    ),
    _p(
        "user-employer-en",
        r"\bI\s+" + _ADV + r"(?:work|am\s+working)\s+(?:at|for)\s+(?P<value>.+)",
        "user",
        "employer",
        "name",
    ),
    _p(
        "user-employer-contracted-en",
        r"\bI(?:" + _Q + r"m|\s+am)\s+" + _ADV + r"(?:working\s+(?:at|for)|employed\s+(?:at|by))\s+"
        r"(?P<value>.+)",
        "user",
        "employer",
        "name",
    ),
    _p(
        "user-employer-es",
        r"\b(?:trabajo|estoy\s+trabajando)\s+" + _ADV_ES + r"(?:en|para)\s+(?P<value>.+)",
        "user",
        "employer",
        "name",
        language="es",
    ),
    _p(
        "user-stack-en",
        r"\bmy\s+(?:tech(?:nology)?\s+)?stack\s+is\s+" + _ADV + r"(?P<value>.+)",
        "user",
        "stack",
        "list",
    ),
    _p(
        "user-stack-es",
        r"\bmi\s+stack\s+(?:es|son)\s+" + _ADV_ES + r"(?P<value>.+)",
        "user",
        "stack",
        "list",
        language="es",
    ),
    # ------------------------------------------------------------ preferences
    # Stated inside a project, a preference is that project's: "In toucan I prefer 120
    # characters" must not retire weka's line length.
    _p(
        "preference-over-en",
        _PREFER + r"(?P<value>.{1,200}?)\s+(?:over|to|rather\s+than|instead\s+of)\s+(?P<other>.+)",
        "scope",
        "preference:{pair}",
    ),
    _p(
        "preference-for-en",
        _PREFER + r"(?P<value>.{1,200}?)\s+for\s+(?P<topic>.+)",
        "scope",
        "preference:{topic}",
    ),
    _p("preference-en", _PREFER + r"(?P<value>.+)", "scope", "preference:{value}"),
    _p(
        "preference-over-es",
        _PREFER_ES
        + r"(?P<value>.{1,200}?)\s+(?:antes\s+que|en\s+vez\s+de|en\s+lugar\s+de|m[aá]s\s+que|"
        r"sobre|frente\s+a|al|a)\s+(?P<other>.+)",
        "scope",
        "preference:{pair}",
        language="es",
    ),
    _p(
        "preference-for-es",
        _PREFER_ES + r"(?P<value>.{1,200}?)\s+para\s+(?P<topic>.+)",
        "scope",
        "preference:{topic}",
        language="es",
    ),
    _p(
        "preference-es", _PREFER_ES + r"(?P<value>.+)", "scope", "preference:{value}", language="es"
    ),
    # ------------------------------------------------------------ other people
    _p(
        "person-employer-en",
        _PERSON + r"\s+" + _ADV + r"(?:works|is\s+" + _ADV + r"working)\s+(?:at|for)\s+"
        r"(?P<value>.+)",
        "person",
        "employer",
        "name",
    ),
    _p(
        "person-location-en",
        _PERSON + r"\s+" + _ADV + r"(?:lives|is\s+" + _ADV + r"(?:living|based))\s+in\s+"
        r"(?P<value>.+)",
        "person",
        "location",
        "name",
    ),
    _p(
        "person-moved-en",
        _PERSON
        + r"\s+(?:has\s+)?"
        + _ADV
        + r"(?:moved|relocated)\s+"
        + _FROM
        + r"(?:back\s+)?to\s+(?P<value>.+)",
        "person",
        "location",
        "name",
    ),
    _p(
        "person-employer-es",
        _PERSON + r"\s+" + _ADV_ES + r"trabaja\s+" + _ADV_ES + r"(?:en|para)\s+(?P<value>.+)",
        "person",
        "employer",
        "name",
        language="es",
    ),
    _p(
        "person-location-es",
        _PERSON + r"\s+" + _ADV_ES + r"(?:vive|reside)\s+" + _ADV_ES + r"en\s+(?P<value>.+)",
        "person",
        "location",
        "name",
        language="es",
    ),
    _p(
        "person-moved-es",
        _PERSON + r"\s+se\s+(?:ha\s+)?(?:mudado|mudó|mudo|trasladado|trasladó|traslado|"
        r"ido\s+a\s+vivir|fue\s+a\s+vivir)\s+" + _DE + r"a\s+(?P<value>.+)",
        "person",
        "location",
        "name",
        language="es",
    ),
    # ------------------------------------------------------------ a project's stack and parts
    _p(
        "scope-stack-en",
        r"\b(?:our|the\s+project" + _Q + r"s|this\s+project" + _Q + r"s|the)\s+"
        r"(?:tech(?:nology)?\s+)?stack\s+is\s+" + _ADV + r"(?P<value>.+)",
        "scope",
        "stack",
        "list",
    ),
    _p(
        "scope-stack-es",
        r"\b(?:nuestro|el)\s+stack\s+(?:tecnol[oó]gico\s+|del\s+proyecto\s+)?(?:es|son)\s+"
        + _ADV_ES
        + r"(?P<value>.+)",
        "scope",
        "stack",
        "list",
        language="es",
    ),
    _p(
        "scope-component-is-en",
        r"\b(?:our|the\s+project"
        + _Q
        + r"s|this\s+project"
        + _Q
        + r"s)\s+(?P<component>"
        + _HEADS
        + r")\s+is\s+"
        + _ADV
        + r"(?P<value>.+)",
        "scope",
        "{component}",
        "name",
    ),
    _p(
        "scope-component-is-es",
        r"\b(?:nuestro|nuestra)\s+(?P<component>" + _HEADS + r")"
        r"\s+(?:es|son)\s+" + _ADV_ES + r"(?P<value>.+)",
        "scope",
        "{component}",
        "name",
        language="es",
    ),
    _p(
        "scope-migrated-component-en",
        r"\bwe(?:\s+have|"
        + _Q
        + r"ve)?\s+"
        + _ADV
        + r"(?:migrated|switched|ported|moved)\s+"
        + _MIGRATE_COMPONENT
        + r"\s+"
        + _FROM
        + r"(?:over\s+)?to\s+(?P<value>.+)",
        "scope",
        "{component}",
        "tech",
    ),
    _p(
        "scope-migrated-en",
        r"\bwe(?:\s+have|"
        + _Q
        + r"ve)?\s+"
        + _ADV
        + r"(?:migrated|switched|ported)\s+"
        + _FROM
        + r"(?:over\s+)?to\s+(?P<value>.+)",
        "scope",
        "stack",
        "tech",
    ),
    _p(
        "scope-migrated-component-es",
        r"\b(?:hemos\s+)?(?:migramos|migrado|movimos|movido|pasamos|pasado|cambiamos|cambiado|"
        r"portamos|portado)\s+" + _MIGRATE_COMPONENT_ES + r"\s+" + _DE + r"a\s+(?P<value>.+)",
        "scope",
        "{component}",
        "tech",
        language="es",
    ),
    _p(
        "scope-migrated-es",
        r"\b(?:hemos\s+)?(?:migramos|migrado|cambiamos|cambiado|portamos|portado)\s+"
        + _DE
        + r"a\s+(?P<value>.+)",
        "scope",
        "stack",
        "tech",
        language="es",
    ),
    _p(
        "scope-runs-on-en",
        r"\b" + _COMPONENT + r"\s+" + _ADV + r"(?:runs|is\s+running|is\s+hosted|is\s+deployed|"
        r"lives|is\s+built|is\s+written)\s+(?:on|in)\s+(?:top\s+of\s+)?" + _ADV + r"(?P<value>.+)",
        "scope",
        "{component}",
        "tech",
    ),
    _p(
        "scope-moved-en",
        r"\b"
        + _COMPONENT
        + r"\s+(?:has\s+|was\s+|have\s+been\s+|has\s+been\s+)?"
        + _ADV
        + r"(?:moved|migrated|switched|upgraded)\s+"
        + _FROM
        + r"to\s+(?P<value>.+)",
        "scope",
        "{component}",
        "tech",
    ),
    _p(
        "scope-is-now-on-en",
        r"\b" + _COMPONENT + r"\s+is\s+now\s+(?:on|in)\s+(?P<value>.+)",
        "scope",
        "{component}",
        "tech",
    ),
    _p(
        "scope-is-on-now-en",
        r"\b" + _COMPONENT + r"\s+is\s+(?:on|in)\s+(?P<value>[^.;,!?]{1,120}?\s+now)\b",
        "scope",
        "{component}",
        "tech",
    ),
    _p(
        "scope-runs-on-es",
        r"\b" + _COMPONENT_ES + r"\s+" + _ADV_ES + r"(?:corre|funciona|se\s+ejecuta|vive|"
        r"est[aá]\s+desplegad[oa]|est[aá]\s+escrit[oa])\s+" + _ADV_ES + r"(?:en|sobre|con)\s+"
        r"(?P<value>.+)",
        "scope",
        "{component}",
        "tech",
        language="es",
    ),
    _p(
        "scope-moved-es",
        r"\b"
        + _COMPONENT_ES
        + r"\s+(?:se\s+)?(?:ha\s+)?(?:movido|mudado|migrado|pasado)\s+"
        + _DE
        + r"a\s+(?P<value>.+)",
        "scope",
        "{component}",
        "tech",
        language="es",
    ),
    _p(
        "scope-is-now-on-es",
        r"\b" + _COMPONENT_ES + r"\s+(?:ahora|ya)\s+est[aá]\s+en\s+(?P<value>.+)",
        "scope",
        "{component}",
        "tech",
        language="es",
    ),
    _p(
        "scope-is-on-now-es",
        r"\b" + _COMPONENT_ES + r"\s+est[aá]\s+en\s+(?P<value>[^.;,!?]{1,120}?\s+(?:ahora|ya))\b",
        "scope",
        "{component}",
        "tech",
        language="es",
    ),
    # ------------------------------------------------------------ clinical headers
    _p(
        "clinical-diagnosis",
        _CLINICAL + r"diagn[oó]stico(?:\s+principal)?|(?:primary\s+|main\s+|final\s+)?diagnosis|"
        r"dx|juicio\s+cl[ií]nico)\s*:\s*(?P<value>.+)$",
        "patient",
        "diagnosis",
        "line",
        per_line=True,
    ),
    _p(
        "clinical-treatment",
        _CLINICAL + r"tratamiento|treatment|tx|plan\s+terap[eé]utico)\s*:\s*(?P<value>.+)$",
        "patient",
        "treatment",
        "line",
        per_line=True,
    ),
    _p(
        "clinical-medication",
        _CLINICAL + r"medicaci[oó]n|medicamentos?|f[aá]rmacos|medications?|meds)\s*:\s*"
        r"(?P<value>.+)$",
        "patient",
        "medication",
        "line",
        per_line=True,
    ),
    _p(
        "clinical-allergies",
        _CLINICAL + r"alergias?|allerg(?:y|ies))\s*:\s*(?P<value>.+)$",
        "patient",
        "allergies",
        "line",
        per_line=True,
    ),
    # "Django 5.2", "Kotlin 1.9.0", "Nomad 1.7": the version of a named tool as the
    # memory states it (dotted numbers only: "Pixel 6" or "API 33" name no version). A
    # value being left ("from Terraform 1.5.7", "PostgreSQL 14 to 16") is not stated.
    _p(
        "tech-version",
        r"(?<![\w.-])(?<!from\s)(?<!de\s)(?P<component>(?-i:[A-Z][A-Za-z][\w+#-]{0,24}))"
        r"\s{1,3}v?(?P<value>\d{1,4}(?:\.\d{1,4}){1,2})(?![\w-])(?!\.\w)"
        r"(?!\s{1,3}(?:to|a|hasta|->|→)\s)",
        "scope",
        "{component} version",
        "tech",
    ),
)
"""The built-in rules, tried in this order; the first to claim a part of a sentence wins."""


# ---------------------------------------------------------------------- sentences and guards
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|(?<=[.!?])(?=[¿¡])")
_CLAUSE = re.compile(
    r"[,;:]|\s(?:and|but|so|then|y|e|pero|así\s+que|asi\s+que|entonces|luego)\s", re.IGNORECASE
)
_BLOCKERS = re.compile(
    r"\b(?:not|never|no|nor|no\s+longer|cannot|if|whether|maybe|perhaps|might|could|should|"
    r"would|will|shall|going\s+to|gonna|plans?\s+to|planned|planning|wants?\s+to|wanted|hope|"
    r"hoping|thinking|considering|used\s+to|unless|suppose|imagine|wonder|wish|pretend|ask|"
    r"asked|nunca|jam[aá]s|si|quiz[aá]s?|tal\s+vez|a\s+lo\s+mejor|podr[ií]amos|podr[ií]a|podemos|"
    r"deber[ií]amos|deber[ií]a|vamos\s+a|voy\s+a|va\s+a|van\s+a|quiero|queremos|quer[ií]a|"
    r"quer[ií]amos|pensamos|pienso|pensando|planeamos|planeo|gustar[ií]a|ojal[aá]|supongamos|"
    r"imagina|sol[ií]a|sol[ií]amos)\b|n" + _Q + r"t\b|" + _Q + r"(?:ll|d)\b",
    re.IGNORECASE,
)
_CONDITIONAL_START = re.compile(
    r"^\W*(?:if|when|whenever|once|unless|suppose|si|cuando|en\s+caso\s+de|suponiendo)\b",
    re.IGNORECASE,
)
_PATIENT_LINE = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:paciente|patient|nombre\s+del\s+paciente|patient\s+name)\s*:\s*(?P<name>.+)$",
    re.IGNORECASE,
)

# ---------------------------------------------------------------------- value cleaning
_STOP_WORDS = (
    r"and|but|because|since|so|while|whereas|where|which|who|whom|whose|when|until|after|before|"
    r"although|though|as|if|unless|with|without|for|from|via|y|e|pero|porque|aunque|donde|cuando|"
    r"mientras|hasta|desde|tras|que|como|si|pues|con|sin|para|por"
)
_LIST_STOP_WORDS = (
    r"but|because|since|so|while|whereas|where|which|when|until|although|though|unless|pero|"
    r"porque|aunque|donde|cuando|mientras|hasta|desde|que|pues"
)
_PUNCT_CUT = r"[;!?()\[\]{}\"“”«»]|\.(?=\s|$)|:\s|\s[-–—]\s"
_CUTS: dict[str, re.Pattern[str]] = {
    "clause": re.compile(rf"\s*(?:{_PUNCT_CUT}|,|\s(?:{_STOP_WORDS})\b)", re.IGNORECASE),
    "list": re.compile(rf"\s*(?:{_PUNCT_CUT}|\s(?:{_LIST_STOP_WORDS})\b)", re.IGNORECASE),
    "line": re.compile(r"\s*(?:\.(?=\s|$)|\s#\s)"),
}
_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|"
    r"diciembre"
)
_TRAILING = re.compile(
    r"\s+(?:now|nowadays|currently|today|these\s+days|right\s+now|anymore|any\s+more|already|"
    r"too|also|as\s+well|again|permanently|for\s+good|full[- ]time|instead|recently|lately|"
    r"finally|yesterday|last\s+(?:year|month|week|night)|this\s+(?:year|month|week)|"
    r"in\s+\d{4}|on\s+\d{4}-\d{2}-\d{2}|in\s+(?:" + _MONTHS + r")(?:\s+\d{4})?|ahora|"
    r"ahora\s+mismo|actualmente|ya|también|tambien|hoy|hoy\s+en\s+d[ií]a|de\s+nuevo|otra\s+vez|"
    r"definitivamente|recientemente|hace\s+poco|ayer|el\s+(?:año|mes)\s+pasado|"
    r"la\s+semana\s+pasada|este\s+(?:año|mes)|esta\s+semana|en\s+\d{4}|"
    r"en\s+(?:" + _MONTHS + r")(?:\s+(?:de\s+)?\d{4})?|por\s+fin|finalmente)$",
    re.IGNORECASE,
)
_LEADING = re.compile(
    r"^(?:now|currently|actually|ahora|actualmente|ya)\s+|^to\s+(?=\w+)", re.IGNORECASE
)
_DETERMINER = re.compile(
    r"^(?:the|our|my|el|la|los|las|nuestro|nuestra|nuestros|nuestras|mi)\s+", re.IGNORECASE
)
_QUOTES = "\"'`“”‘’«»*_"
_NOT_TECH = re.compile(
    r"^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|lunes|martes|mi[eé]rcoles|"
    r"jueves|viernes|s[aá]bado|domingo|" + _MONTHS + r"|vacation|holiday|holidays|leave|time|"
    r"track|fire|hold|call|break|sale|it|this|that|them|him|her|something|nothing|esto|eso|"
    r"algo|nada|vacaciones|baja|every|all|each|any|most|many|no|none|some|very|so|too|quite|"
    r"pretty|kind|sort|not|un|una|muy|bastante|demasiado|todo|todos|todas|cada|ning[uú]n|"
    r"ninguna|progress|page|a\s+mess|a\s+hurry)\b",
    re.IGNORECASE,
)
_OS = re.compile(
    r"^(?:ubuntu|debian|fedora|centos|rhel|red\s+hat|rocky|alma(?:linux)?|alpine|arch(?:\s+linux)?|"
    r"manjaro|mint|linux\s+mint|pop!?_os|windows|win(?:10|11)|macos|mac\s+os|os\s+x|osx|freebsd|"
    r"openbsd|netbsd|nixos|opensuse|suse|sles|amazon\s+linux|linux|raspbian|raspberry\s+pi\s+os|"
    r"proxmox|truenas|chromeos|gentoo|void\s+linux|kali)\b",
    re.IGNORECASE,
)
_HOSTNAME = re.compile(
    r"^(?=.*[a-z])[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$"
)
_NOT_A_NAME = frozenset(
    """i we you he she they it this that these those there here everyone everybody nobody
    someone somebody anyone who what which my our your his her their the a an yo tú tu él el
    ella nosotros nosotras ellos ellas usted ustedes nadie alguien todo todos todas mi nuestro
    nuestra su sus este esta estos estas eso esto quien quién la los las un una today now
    ahora hoy yesterday ayer also still then también luego entonces everything nothing
    something server host service machine box vm port""".split()  # noqa: SIM905 - a word list reads best as prose
)


def _clean_value(raw: str, kind: str) -> tuple[str, int] | None:
    """Cut ``raw`` at its clause boundary and trim filler; return (value, chars used)."""
    if kind == "port":
        digits = raw.strip()
        if not digits.isdigit() or not 1 <= int(digits) <= 65535:
            return None
        return str(int(digits)), len(raw)
    if kind == "address":
        token = raw.strip().split()[0] if raw.strip() else ""
        token = token.rstrip(".,;:)!?").strip(_QUOTES)
        if not _is_address(token):
            return None
        return token.lower(), raw.find(token) + len(token) if token in raw else len(raw)
    cut = _CUTS["list" if kind == "list" else "line" if kind == "line" else "clause"]
    found = cut.search(raw)
    part = raw[: found.start()] if found else raw
    used = len(part)
    text = part.strip().strip(_QUOTES).strip()
    text = _LEADING.sub("", text)
    while True:
        shorter = _TRAILING.sub("", text).rstrip(" ,:;-–—…").strip().strip(_QUOTES).strip()
        if shorter == text:
            break
        text = shorter
    if not text or len(text) > MAX_EXTRACTED_CHARS or not any(ch.isalnum() for ch in text):
        return None
    if kind == "name" and not (text[0].isupper() or text[0].isdigit()):
        return None
    if kind in ("tech", "list") and _NOT_TECH.match(text):
        return None
    if kind == "os" and not _OS.match(text):
        return None
    return text, used


def _is_address(token: str) -> bool:
    try:
        ipaddress.ip_address(token)
    except ValueError:
        return bool(_HOSTNAME.match(token.lower()))
    return True


def _clean_name(raw: str) -> str | None:
    """A subject name from a group: cut at its clause boundary, determiners dropped."""
    found = _CUTS["clause"].search(raw)
    text = (raw[: found.start()] if found else raw).strip().strip(_QUOTES).strip()
    text = _DETERMINER.sub("", text).strip()
    if not text or not any(ch.isalnum() for ch in text):
        return None
    if text.split()[0].casefold() in _NOT_A_NAME:
        return None
    return text


def _slug(text: str) -> str:
    return " ".join(text.casefold().split())


# ---------------------------------------------------------------------- running the rules
def _sentences(line: str) -> list[tuple[int, str]]:
    out = []
    start = 0
    for found in _SENTENCES.finditer(line):
        out.append((start, line[start : found.start()]))
        start = found.end()
    out.append((start, line[start:]))
    return [(offset, s) for offset, s in out if s.strip()]


def _is_blocked(sentence: str, start: int) -> bool:
    if sentence.rstrip().endswith("?") or "¿" in sentence[: start + 1]:
        return True
    if _CONDITIONAL_START.match(sentence):
        return True
    prefix = sentence[:start]
    clauses = _CLAUSE.split(prefix)
    return bool(_BLOCKERS.search(clauses[-1] if clauses else prefix))


def _subject(
    rule: Pattern, groups: dict[str, str | None], project: str, patient: str
) -> str | None:
    kind = rule.subject
    if kind == "user":
        return "user"
    if kind == "scope":
        return f"project:{project}" if project else "user"
    if kind == "project":
        return f"project:{project}" if project else None
    if kind == "patient":
        return f"patient:{patient}" if patient else None
    raw = groups.get("name")
    if not raw:
        return None
    if kind == "person":
        name = raw.strip()
        if name.split()[0].casefold() in _NOT_A_NAME or not name[0].isupper():
            return None
        return f"person:{name}"
    host = _clean_name(raw)
    if host is None or " " in host:
        return None
    return f"host:{project}/{host}" if project else f"host:{host}"


def _attribute(rule: Pattern, groups: dict[str, str | None], value: str) -> str | None:
    fields = rule.placeholders
    if not fields:
        return rule.attribute
    values: dict[str, str] = {}
    for field in fields:
        if field == "value":
            values[field] = _slug(value)
        elif field == "pair":
            other = _clean_value(groups.get("other") or "", "text")
            if other is None:
                return None
            values[field] = "/".join(sorted((_slug(value), _slug(other[0]))))
        else:
            raw = groups.get(field)
            name = _clean_name(raw) if raw else None
            if name is None:
                return None
            values[field] = _slug(name)
    return rule.attribute.format(**values)


def _claim_end(rule: Pattern, found: re.Match[str], used: int) -> int:
    end = found.start("value") + used
    for extra in ("other", "topic"):
        if extra in rule.compiled.groupindex and found.group(extra) is not None:
            cleaned = _clean_value(found.group(extra), "text")
            if cleaned is not None:
                end = max(end, found.start(extra) + cleaned[1])
    return end


def _build(
    rule: Pattern, found: re.Match[str], project: str, patient: str
) -> tuple[Extraction, int] | None:
    raw = found.group("value")
    if raw is None:
        return None
    cleaned = _clean_value(raw, rule.value_kind)
    if cleaned is None:
        return None
    value, used = cleaned
    groups = found.groupdict()
    subject = _subject(rule, groups, project, patient)
    attribute = _attribute(rule, groups, value)
    if subject is None or attribute is None:
        return None
    try:
        extraction = Extraction(
            subject=normalize_subject(subject),
            attribute=normalize_attribute(attribute),
            value=normalize_value(value, limit=MAX_EXTRACTED_CHARS),
            pattern=rule.name,
        )
    except InvalidFactError:
        return None
    return extraction, _claim_end(rule, found, used)


def _patient_from_tags(tags: Iterable[str]) -> str:
    for tag in tags:
        kind, sep, name = tag.partition(":")
        if sep and kind.strip().casefold() == "patient" and name.strip():
            return " ".join(name.split())
    return ""


def extract(
    text: str,
    *,
    project: str = "",
    tags: Sequence[str] = (),
    patterns: Sequence[Pattern] | None = None,
) -> tuple[Extraction, ...]:
    """Find the facts a text states, in the order it states them.

    Args:
        text: any text; a sentence without a fact yields nothing.
        project: the project the text belongs to (scopes "our stack…" sentences).
        tags: the leaf's tags; ``patient:<name>`` names the patient of a clinical record.
        patterns: the rules to run, in order (default: :data:`DEFAULT_PATTERNS`).
    """
    rules = DEFAULT_PATTERNS if patterns is None else tuple(patterns)
    line_rules = tuple(r for r in rules if r.per_line)
    sentence_rules = tuple(r for r in rules if not r.per_line)
    project = " ".join(project.split())
    patient = _patient_from_tags(tags)
    out: list[Extraction] = []
    seen: set[tuple[str, str, str]] = set()

    def keep(extraction: Extraction) -> None:
        ident = (extraction.subject, extraction.attribute, value_key(extraction.value))
        if ident not in seen:
            seen.add(ident)
            out.append(extraction)

    for line in text.splitlines():
        header = _PATIENT_LINE.match(line)
        if header:
            name = _clean_name(header.group("name"))
            if name:
                patient = name
            continue
        if _run_line_rules(line, line_rules, project, patient, keep):
            continue
        for _, sentence in _sentences(line):
            claimed: list[tuple[int, int]] = []
            for rule in _candidates(sentence_rules, sentence):
                for found in rule.compiled.finditer(sentence):
                    start = found.start()
                    if any(a <= start < b for a, b in claimed):
                        continue
                    if _is_blocked(sentence, start):
                        continue
                    built = _build(rule, found, project, patient)
                    if built is None:
                        continue
                    extraction, end = built
                    if any(start < b and a < end for a, b in claimed):
                        continue
                    claimed.append((start, end))
                    keep(extraction)
    return tuple(out)


def _run_line_rules(
    line: str,
    rules: tuple[Pattern, ...],
    project: str,
    patient: str,
    keep: Callable[[Extraction], None],
) -> bool:
    for rule in _candidates(rules, line):
        found = rule.compiled.search(line)
        if found is None:
            continue
        built = _build(rule, found, project, patient)
        if built is not None:
            keep(built[0])
            return True
    return False
