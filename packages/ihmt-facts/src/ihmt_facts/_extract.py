"""Fact extraction: the engine that runs the rules over a text.

What turns a match into a fact is shared by every rule (the rules themselves are data, in
:mod:`ihmt_facts._rules`; the words they share, in :mod:`ihmt_facts._vocabulary`): the
value stops at the first clause boundary, loses trailing filler ("Valencia now" →
"Valencia"), must fit 60 characters and pass its kind's check (a proper name starts with
a capital, a port is a number…); a sentence that is a question, a negation or a
hypothesis ("if we migrate…", "no vivo en…") yields nothing.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ihmt_facts._pattern import Pattern
from ihmt_facts._records import (
    Extraction,
    normalize_attribute,
    normalize_subject,
    normalize_value,
    value_key,
)
from ihmt_facts._rules import default_patterns
from ihmt_facts._types import ValueKind
from ihmt_facts._vocabulary import (
    BLOCKERS,
    CLAUSE,
    CONDITIONAL_START,
    CUTS,
    DETERMINER,
    HOSTNAME,
    LEADING,
    NOT_A_NAME,
    NOT_TECH,
    OS,
    PATIENT_LINE,
    QUOTES,
    SENTENCES,
    TRAILING,
)
from ihmt_facts.errors import InvalidFactError
from ihmt_store import one_line

__all__ = ["MAX_EXTRACTED_CHARS", "extract"]

MAX_EXTRACTED_CHARS = 60
"""Longest value extraction keeps; a longer one is not a fact but a paragraph."""


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


_PLANS: dict[int, tuple[tuple[Pattern, ...], _Gated, _Gated]] = {}


def _plan(rules: tuple[Pattern, ...]) -> tuple[_Gated, _Gated]:
    """The line rules and the sentence rules of ``rules``, gated; found by the tuple's
    identity (hashing every rule of it once per sentence was a tenth of an ingest)."""
    held = _PLANS.get(id(rules))
    if held is not None and held[0] is rules:
        return held[1], held[2]
    lines = _gated(tuple(r for r in rules if r.per_line))
    sentences = _gated(tuple(r for r in rules if not r.per_line))
    if len(_PLANS) >= 64:
        _PLANS.clear()
    _PLANS[id(rules)] = (rules, lines, sentences)
    return lines, sentences


def _candidates(gated: _Gated, text: str) -> list[Pattern]:
    """The rules that may match ``text``, in order: those whose gate it passes."""
    folded = _folded(text)
    present = {w for w in gated.words if w in folded}
    return [
        rule
        for rule, gate in zip(gated.rules, gated.gates, strict=True)
        if gate is None or not gate.isdisjoint(present)
    ]


# ---------------------------------------------------------------------- cleaning a value
def _clean_value(raw: str, kind: ValueKind) -> tuple[str, int] | None:
    """Cut ``raw`` at its clause boundary and trim filler; return (value, chars used)."""
    if kind == "port":
        digits = raw.strip()
        if not digits.isdigit() or not 1 <= int(digits) <= 65535:
            return None
        return str(int(digits)), len(raw)
    if kind == "address":
        token = raw.strip().split()[0] if raw.strip() else ""
        token = token.rstrip(".,;:)!?").strip(QUOTES)
        if not _is_address(token):
            return None
        return token.lower(), raw.find(token) + len(token) if token in raw else len(raw)
    cut = CUTS["list" if kind == "list" else "line" if kind == "line" else "clause"]
    found = cut.search(raw)
    part = raw[: found.start()] if found else raw
    used = len(part)
    text = part.strip().strip(QUOTES).strip()
    text = LEADING.sub("", text)
    while True:
        shorter = TRAILING.sub("", text).rstrip(" ,:;-–—…").strip().strip(QUOTES).strip()
        if shorter == text:
            break
        text = shorter
    if not text or len(text) > MAX_EXTRACTED_CHARS or not any(ch.isalnum() for ch in text):
        return None
    if kind == "name" and not (text[0].isupper() or text[0].isdigit()):
        return None
    if kind in ("tech", "list") and NOT_TECH.match(text):
        return None
    if kind == "os" and not OS.match(text):
        return None
    return text, used


def _is_address(token: str) -> bool:
    try:
        ipaddress.ip_address(token)
    except ValueError:
        return bool(HOSTNAME.match(token.lower()))
    return True


def _clean_name(raw: str) -> str | None:
    """A subject name from a group: cut at its clause boundary, determiners dropped."""
    found = CUTS["clause"].search(raw)
    text = (raw[: found.start()] if found else raw).strip().strip(QUOTES).strip()
    text = DETERMINER.sub("", text).strip()
    if not text or not any(ch.isalnum() for ch in text):
        return None
    if text.split()[0].casefold() in NOT_A_NAME:
        return None
    return text


def _slug(text: str) -> str:
    return one_line(text.casefold())


def _sentences(line: str) -> list[tuple[int, str]]:
    out = []
    start = 0
    for found in SENTENCES.finditer(line):
        out.append((start, line[start : found.start()]))
        start = found.end()
    out.append((start, line[start:]))
    return [(offset, s) for offset, s in out if s.strip()]


def _is_blocked(sentence: str, start: int) -> bool:
    if sentence.rstrip().endswith("?") or "¿" in sentence[: start + 1]:
        return True
    if CONDITIONAL_START.match(sentence):
        return True
    prefix = sentence[:start]
    clauses = CLAUSE.split(prefix)
    return bool(BLOCKERS.search(clauses[-1] if clauses else prefix))


def _subject(
    rule: Pattern, groups: dict[str, str | None], project: str, patient: str
) -> str | None:
    kind = rule.subject
    if kind == "user":
        return "user"
    if kind == "scope":
        return f"project:{project}" if project else "user"
    if kind == "project":
        # A decision of the memory's project, or of the project its text is filed under
        # ("Decision for falcon: …"); with neither, it is about no known subject.
        if project:
            return f"project:{project}"
        label = groups.get("name")
        named = _clean_name(label) if label else None
        return f"project:{named}" if named and " " not in named else None
    if kind == "patient":
        return f"patient:{patient}" if patient else None
    raw = groups.get("name")
    if not raw:
        return None
    if kind == "person":
        name = raw.strip()
        if name.split()[0].casefold() in NOT_A_NAME or not name[0].isupper():
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
            return one_line(name)
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
    rules = default_patterns() if patterns is None else tuple(patterns)
    line_rules, sentence_rules = _plan(rules)
    project = one_line(project)
    patient = _patient_from_tags(tags)
    out: list[Extraction] = []
    seen: set[tuple[str, str, str]] = set()

    def keep(extraction: Extraction) -> None:
        ident = (extraction.subject, extraction.attribute, value_key(extraction.value))
        if ident not in seen:
            seen.add(ident)
            out.append(extraction)

    for line in text.splitlines():
        header = PATIENT_LINE.match(line)
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
    return _anchored(out, text, project)


def _host_name(subject: str) -> str | None:
    """The host a ``host:`` subject names (without its project), else None."""
    kind, _, name = subject.partition(":")
    return name.rpartition("/")[2] if kind == "host" else None


def _is_named(host: str) -> bool:
    """A host name that names one machine ("cache-dove-20", "web-1.example.org"), not a
    word that any machine has ("ssh", "nginx")."""
    return any(ch.isdigit() or ch in ".-_" for ch in host)


_MACHINE = re.compile(
    r"\b(?:[Hh]ost|[Ss]erver|[Mm]achine|vm|VM|box|node|[Ss]ervidor|m[aá]quina|nodo)\s+"
    r"(?P<name>(?<![\w.-])(?=[\w.-]*[^\W\d_])\w[\w.-]{0,160}\w)(?![\w-])"
)
"""A machine the text names by its kind: "host cache-dove-20", "the server web-1"."""


def _machines(found: list[Extraction], text: str, project: str) -> set[str]:
    """The ``host:`` subjects of the machines a text names: those its facts are about,
    and those it calls a host, a server or a machine by a name ("host cache-dove-20 was
    reinstalled with…"), though no rule read a fact of them."""
    named = {
        e.subject for e in found if (host := _host_name(e.subject)) is not None and _is_named(host)
    }
    for mention in _MACHINE.finditer(text):
        host = mention.group("name").rstrip(".")
        if _is_named(host):
            named.add(normalize_subject(f"host:{project}/{host}" if project else f"host:{host}"))
    return named


def _anchored(found: list[Extraction], text: str, project: str) -> tuple[Extraction, ...]:
    """A text's facts with every subject the thing it names: "host cache-dove-20 runs
    FreeBSD; SSH listens on port 28167" states cache-dove-20's SSH port, not a port of a
    host called "ssh" that every such text would share, and "host batch-7 runs Arch with
    Python 3.12" states batch-7's Python version, not the user's. When the text names
    exactly one machine, a fact about a bare word ("ssh", "redis") becomes that
    machine's (attribute "ssh port"), and so does a version read for the whole scope;
    when it names several, which one is meant is unknown: the bare word's fact is left
    out rather than given to all of them, and a version stays the scope's."""
    named = _machines(found, text, project)
    scope = f"project:{project}" if project else "user"
    out: list[Extraction] = []

    def add(extraction: Extraction) -> None:
        if extraction not in out:
            out.append(extraction)

    for e in found:
        host = _host_name(e.subject)
        if len(named) == 1 and e.subject == scope and e.attribute.endswith(" version"):
            add(
                Extraction(
                    subject=next(iter(named)),
                    attribute=e.attribute,
                    value=e.value,
                    pattern=e.pattern,
                )
            )
        elif host is None or _is_named(host) or not named:
            add(e)
        elif len(named) == 1:
            try:
                attribute = normalize_attribute(f"{host} {e.attribute}")
            except InvalidFactError:
                continue
            add(
                Extraction(
                    subject=next(iter(named)), attribute=attribute, value=e.value, pattern=e.pattern
                )
            )
    return tuple(out)


def _run_line_rules(
    line: str,
    rules: _Gated,
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
