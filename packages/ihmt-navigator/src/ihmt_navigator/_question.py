"""Reading a question: what it is about, what it asks for, and how it is asked.

Pure functions of the question's text (and the store's normalisation of words): the
words that only say how a question is asked, broad cues, names and identifiers, the
period it names, and the shape of the value it asks for. ``_decide`` decides with them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Literal

from ihmt_navigator._shapes import ANSWER_TYPES
from ihmt_store import terms

_QUERY_FLUFF_WORDS = """
know knew tell remember recall say said mention mentioned anything something thing things stuff
please again current currently latest memory memories stored saved note notes info information
sabemos saber sabes recuerdas recuerda dime dijimos dije cosa cosas algo actual actualmente
whose use uses used using come comes
"""


QUERY_FLUFF: frozenset[str] = frozenset(terms(_QUERY_FLUFF_WORDS))
"""Words of how a question is asked, not of what it is about (normalised)."""


BROAD_CUES = re.compile(
    r"\b(what do (we|i|you) know|everything|overview|summar(y|ise|ize)|tell me about|"
    r"all about|(stored|saved|noted) about|history (with|of)|"
    r"qu[eé] sabemos|resumen|resume|todo sobre|h[aá]blame de)\b",
    re.IGNORECASE,
)


_YES_NO = re.compile(
    r"^\W*(is|are|was|were|do|does|did|can|could|should|will|would|have|has|es|son|hay|"
    r"tiene|tienen|puedo|podemos|vamos|estamos)\b",
    re.IGNORECASE,
)


_SECRET_ASKED = re.compile(
    r"\b(password|passphrase|api[ -]?key|secret key|access key|token|contrase[nñ]a)s?\b",
    re.IGNORECASE,
)


_VERSION_OF = re.compile(
    r"\b(?:which|what|qu[eé])(?:'s|’s)?\s+(?:\S+\s+){0,3}?"
    r"(?!(?:the|a|an|our|your|its|el|la|su)\s)(?P<before>[\w.+#-]+)\s+versions?\b"
    r"|\bversi(?:on|ón)(?:es|s)?\s+(?:of|de|del)\s+(?:(?:the|el|la|los|las)\s+)?"
    r"(?P<after>[\w.+#-]+)",
    re.IGNORECASE,
)
"""'Which NVIDIA driver version…', 'the version of Postgres': the thing whose version is
asked for, which the answer must name ('Which Redis version does falcon depend on?' is
not answered by falcon's Go version)."""


_WHERE = re.compile(r"\b(where|d[oó]nde|which vault|how do i get)\b", re.IGNORECASE)


_NOTHING = re.compile(r"(?!)")
"""Saves refuse secrets, so no memory holds the value of a password or a key: asked for
one ("what's the MapTiler API key?"), the answer is NOT FOUND. Where one is kept is a
fair question ("where is the staging password?")."""


_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january enero jan ene",
            "february febrero feb",
            "march marzo mar",
            "april abril apr abr",
            "may mayo",
            "june junio jun",
            "july julio jul",
            "august agosto aug ago",
            "september septiembre setiembre sep sept",
            "october octubre oct",
            "november noviembre nov",
            "december diciembre dec dic",
        ),
        start=1,
    )
    for name in names.split()
}


_PART = {
    "early": (1, 4), "mid": (5, 8), "middle of": (5, 8), "late": (9, 12), "start of": (1, 3),
    "beginning of": (1, 3), "end of": (10, 12), "principios de": (1, 4), "mediados de": (5, 8),
    "finales de": (9, 12), "fines de": (9, 12),
}  # fmt: skip


_TIME_EXPR = re.compile(
    r"\b(?:(?P<part>early|mid|middle of|late|start of|beginning of|end of|principios de|"
    r"mediados de|finales de|fines de)[\s-]+(?:the\s+)?)?(?:(?P<month>"
    + "|".join(sorted(_MONTHS, key=len, reverse=True))
    + r")\.?\s+(?:(?:of|de)\s+)?)?(?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def time_span(query: str) -> tuple[tuple[str, str] | None, str]:
    """The period a question names ("in April 2023", "mid-2024", "a finales de 2023") as
    (first day, last day), and the question without it."""
    match = _TIME_EXPR.search(query)
    if match is None:
        return None, query
    year = int(match.group("year"))
    month = match.group("month")
    part = (match.group("part") or "").lower()
    if month:
        first = last = _MONTHS[month.lower()]
    else:
        first, last = _PART.get(" ".join(part.split()), (1, 12))
    end = date(year + (last == 12), last % 12 + 1, 1) - timedelta(days=1)
    span = (f"{year:04d}-{first:02d}-01", end.isoformat())
    return span, query[: match.start()] + " " + query[match.end() :]


SENTENCES = re.compile(r"(?<=[.!?])\s+")


NAME_WORD = re.compile(r"[^\W_][\w./#+-]*[^\W_]|[^\W_]", re.UNICODE)


def is_name(word: str, position: int) -> bool:
    """An identifier, a number or a capitalised word that does not start the sentence.
    Two letters make a name only written as one ("Nx", "Qt"): "AI" or "DB" are words."""
    if len(word) < 2:
        return False
    if len(word) == 2:
        return position > 0 and word[0].isupper() and word[1].islower()
    if any(ch.isdigit() for ch in word):
        return True
    if word.isupper() or any(ch.isupper() for ch in word[1:]):
        return True
    return position > 0 and word[0].isupper()


_TICKET = re.compile(r"[^\W\d_][\w#/-]*\d{3,}|\d{3,}[\w#/-]*[^\W\d_]", re.UNICODE)
_COMPOUND = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)+", re.UNICODE)
"""Parts joined by hyphens, underscores or dots: "cache-dove-20", "web-1.example.org"."""
_YEAR_PART = re.compile(r"(?<![^\W_])(?:19|20)\d\d(?![^\W_])")
"""A year among the parts says a period ("mid-2024", "Q3-2025"), not a name."""


def compound_names(query: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each compound name with a number in it that the question names, with its terms:
    parts joined by hyphens, underscores or dots ("cache-dove-20", "db01.prod"); not a
    period ("mid-2024") nor a ticket (:data:`_TICKET`: "DEC-11878")."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for word in NAME_WORD.findall(query):
        if (
            _COMPOUND.fullmatch(word)
            and any(ch.isdigit() for ch in word)
            and any(ch.isalpha() for ch in word)
            and not _YEAR_PART.search(word)
            and not _TICKET.fullmatch(word)
        ):
            parts = tuple(terms(word))
            if len(parts) >= 2:
                out.append((word, parts))
    return out


def identifiers(query: str) -> list[tuple[str, ...]]:
    """The terms that make each identifier the question names: the numbered terms of a
    ticket ("DEC-11878", "PR #68779"), every term of a compound name
    (:func:`compound_names`). A year, a version or "k8s" is none."""
    named = compound_names(query)
    out = [parts for _, parts in named]
    compounds = {word for word, _ in named}
    for word in NAME_WORD.findall(query):
        if word not in compounds and _TICKET.fullmatch(word):
            numbered = tuple(t for t in terms(word) if any(ch.isdigit() for ch in t))
            if numbered:
                out.append(numbered)
    return out


def name_words(query: str) -> list[str]:
    """The names in a question: identifiers, numbers, capitalised words inside a
    sentence."""
    return [
        word
        for sentence in SENTENCES.split(query)
        for position, word in enumerate(NAME_WORD.findall(sentence))
        if is_name(word, position)
    ]


def name_terms(query: str) -> list[str]:
    """The terms of the names in a question."""
    return [t for word in name_words(query) for t in terms(word)]


def bare_names(query: str) -> list[str]:
    """Capitalised names in the question not followed by another capitalised word
    (a first name alone); a one-word question counts as a name."""
    words = NAME_WORD.findall(query)
    out: list[str] = []
    for position, word in enumerate(words):
        capital = word[:1].isupper() and word[1:].islower() and len(word) >= 3
        nxt = words[position + 1] if position + 1 < len(words) else ""
        followed = nxt[:1].isupper()
        if capital and not followed and (position > 0 or len(words) == 1):
            out.append(word.removesuffix("'s").removesuffix("’s"))
    return out


_HEAD_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")
_LINK_WORDS = "and or in on at for with to is was are were of from by y o en de del con para"
_LINKS = frozenset(_LINK_WORDS.split())
_DAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday"
_DAYS = frozenset(_DAY_NAMES.split())


def head_names(query: str) -> list[str]:
    """Single capitalised names the question is about, not names that describe
    something else: "in Orbaz, and why?", "Orbaz's budget", but not "the Rust CLI"
    (a name before a noun), "Visual Studio Code" (a longer name), "Podman or
    Docker" (a choice between two), a month or a day, nor the question's first word."""
    tokens = [m.group() for m in _HEAD_TOKEN.finditer(query)]
    out: list[str] = []
    for position, token in enumerate(tokens[1:], start=1):
        base = token.removesuffix("'s").removesuffix("’s")
        if not (base[:1].isupper() and base[1:].islower() and len(base) >= 3):
            continue
        if base.lower() in _MONTHS or base.lower() in _DAYS:
            continue
        before = tokens[position - 1]
        after = tokens[position + 1] if position + 1 < len(tokens) else ""
        beyond = tokens[position + 2] if position + 2 < len(tokens) else ""
        if before[:1].isupper() or after[:1].isupper() or before.lower() in ("or", "o"):
            continue
        if after.lower() in ("or", "o") and beyond[:1].isupper():
            continue
        if base != token or not after or not after[:1].isalnum() or after.lower() in _LINKS:
            out.append(base)
    return out


def question_terms(query: str) -> tuple[tuple[str, str] | None, list[str]]:
    """The period a question names (see :func:`time_span`) and the terms of what it is
    about: without the words of how it is asked ("summarize", "tell me about", "please")
    nor the period ("in April 2023"), which the memories' dates answer better than their
    words. A question that is only a period keeps its words, and names no period."""
    asking = set(terms(" ".join(m.group(0) for m in BROAD_CUES.finditer(query))))
    span, timeless = time_span(query)
    words = [t for t in dict.fromkeys(terms(timeless)) if t not in QUERY_FLUFF]
    if not words:
        span, words = None, [t for t in dict.fromkeys(terms(query)) if t not in QUERY_FLUFF]
    return span, [t for t in words if t not in asking]


def word_groups(query: str, q_terms: Sequence[str]) -> list[tuple[str, ...]]:
    """The question's words, each as the query terms it gives ("k8s" gives k8s, k and 8:
    one word, counted once)."""
    wanted = set(q_terms)
    groups: dict[tuple[str, ...], None] = {}
    for chunk in query.split():
        group = tuple(t for t in dict.fromkeys(terms(chunk)) if t in wanted)
        if group:
            groups[group] = None
    return list(groups)


def asked_for(query: str) -> list[tuple[str, re.Pattern[str]]]:
    """The shapes of value the question asks for (none for a yes/no question)."""
    return list(_asked_for(query))


@functools.lru_cache(maxsize=64)
def _asked_for(query: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """:func:`asked_for`, read once per question: a search asks it of every corrected
    memory it judges."""
    if _YES_NO.search(query):
        return ()
    asked = [(name, shape) for name, cue, shape in ANSWER_TYPES if cue.search(query)]
    if _SECRET_ASKED.search(query) and not _WHERE.search(query):
        asked.append(("a secret (secrets are never saved)", _NOTHING))
    thing = version_asked(query)
    if thing:
        asked.append((f"a {thing} version", version_of(thing)))
    return tuple(asked)


def version_asked(query: str) -> str | None:
    """The thing whose version the question asks for ("Which Quarry version…": "Quarry")."""
    versioned = _VERSION_OF.search(query)
    return (versioned.group("before") or versioned.group("after")) if versioned else None


def asked_words(query: str) -> frozenset[str]:
    """The terms of the words that ask for a value ("IP" in "the printer's IP?"): a
    memory holding a value of that shape holds what they ask, though not the word."""
    out: set[str] = set()
    for _, cue, _ in ANSWER_TYPES:
        for found in cue.finditer(query):
            out.update(terms(found.group()))
    versioned = _VERSION_OF.search(query)
    if versioned:
        out.update(terms("version"))
    return frozenset(out)


def version_number(thing: str) -> re.Pattern[str]:
    """``thing`` followed by its version number ("Quarry 8.4", "Python v3.12"): group 1."""
    return re.compile(rf"(?<![\w.-]){re.escape(thing)}\s+v?(\d+(?:\.\d+)*)(?![\w.])", re.IGNORECASE)


_VERSION = (
    r"(?<![\w.-])(?!\d{4}-\d\d-\d\d)v?\d+(?:\.\d+)*"
    r"(?:\.x|[a-z]+\d*|-(?:rc|alpha|beta|pre|dev)[\w.]*)?(?![\w-]|\.\d)"
)
"""A version number on its own ("15", "3.12", "v1.14.2", "7.x", "v1alpha1", "2.0-rc1"),
not a date ("2025-02-11") nor a part of a name ("ACME-02")."""


def version_of(thing: str) -> re.Pattern[str]:
    """A memory that gives ``thing``'s version names it with a version number a few words
    away ("Postgres 15", "moved Quarry from 8.1 to 8.4", "version 3 of Quarry") or later
    in the clause that says "Quarry version" ("the Quarry version in the chart is now
    8.4"); a date or a count elsewhere in the memory is no version of it."""
    word = rf"(?<![^\W_]){re.escape(thing)}(?![^\W_])"  # "Rust" in "rust-toolchain.toml"
    after = word + r"(?:[-.][\w.-]*|['’]s)?(?:[\s:=(@,]+[^\s\d]\S*){0,4}[\s:=(@,]+" + _VERSION
    before = _VERSION + r"(?:[\s,]+[^\s\d]\S*){0,2}\s+" + word
    named = word + r"\s+versi(?:on|ón)\b[^.;\n]{0,48}?(?<![\w.-])" + _VERSION  # "X version … 16"
    return re.compile(f"{after}|{before}|{named}", re.IGNORECASE)


_EN_FUNCTION_WORDS = """
the of and to is are was were what which who whom where when how does do did my our we you it
this that from with for on at by an be been has have in as or not its they he she his her will can
"""
_ES_FUNCTION_WORDS = """
de la el los las que qué del por para con una un es son se cómo como cuál cuáles dónde quién
quiénes mi mis nos nuestro nuestra tiene está están al lo le y su sus cuándo cuánto cuánta
"""
Language = Literal["en", "es", ""]
"""A language :func:`language_of` tells apart (``""``: not clearly either)."""
_FUNCTION_WORDS: dict[Language, frozenset[str]] = {
    "en": frozenset(_EN_FUNCTION_WORDS.split()),
    "es": frozenset(_ES_FUNCTION_WORDS.split()),
}
_LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)


def language_of(text: str) -> Language:
    """``en`` or ``es`` when the text's function words say so clearly, else ''.

    Only to know when a question and a memory are in different languages: then that
    they share no words says nothing about whether the memory answers.
    """
    words = [w.casefold() for w in _LETTERS.findall(text[:2000])]
    hits = {lang: sum(w in marks for w in words) for lang, marks in _FUNCTION_WORDS.items()}
    (first, most), (_, second) = sorted(hits.items(), key=lambda kv: -kv[1])
    return first if most >= 2 and most >= 2 * second else ""


def is_broad(query: str) -> bool:
    """A question about everything on a subject ("what do we know about X?")."""
    return bool(BROAD_CUES.search(query))
