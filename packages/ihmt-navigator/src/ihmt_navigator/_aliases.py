"""Aliases a store learns from its own memories: a project called by what it is, and an
abbreviation that a memory spells out.

Two ways a question names what a memory holds in other words, both read from the
memories themselves, never from a word list:

- **A project called by what it is.** A memory that defines a project ("orbit is a Go
  service that…", "Started orbit: a…", "orbit = the…", "Kicked off orbit, a…") gives
  the project a *profile*: the words of that definition. A question that names no
  project but holds at least two words of one project's profile that no other
  project's profile holds ("the Go service"), asked outside that project, is read as
  naming it: its name joins the question's terms (so the rules for a project the
  question names apply), and each of its memories holds those words, as a memory
  saved in a project is about it whether its words say so or not. The memory that
  defines it holds them by definition, not as an answer: it ranks by the question's
  other words.
- **An abbreviation spelled out.** An abbreviation of the question that a candidate
  memory spells out, or one a memory uses where the question spells it out, is held
  by that memory: the initials of consecutive words ("DR" and "disaster recovery"),
  a numeronym ("k8s": a k, eight letters, an s; "kubernetes"), or the long form some
  memory defines it as ("PG (PostgreSQL)", "k8s, i.e. Kubernetes"); a word no memory
  holds that is one of the memory's words clipped ("lib" for "library"), or the other
  way round. An abbreviation no memory holds is then no name nothing stored
  mentions.

Profiles and definitions are read from the store (its full-text index, a few rows
each) and kept until its next write (:attr:`ihmt_store.Store.generation`). A store
whose memories define no project and spell out no abbreviation of the question answers
as before.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import replace

from ihmt_navigator._match import names_project
from ihmt_navigator._query import Query, rarity
from ihmt_navigator._question import SENTENCES
from ihmt_store import STOP_WORDS, Candidate, Store, fold, terms

__all__ = [
    "DEFINITIONS",
    "abbreviations",
    "clipped",
    "definition",
    "definitions",
    "described_project",
    "profile",
    "spells_out",
    "stands_for",
    "with_aliases",
]

DEFINITIONS = 50
"""Memories of a project holding its name that are read for a definition of it."""

_LINK = (
    r"\s*(?:=|:|,|\s(?:is|was|es|era|fue)\b)\s*"
    r"(?:(?:a|an|the|our|my|un|una|el|la|los|las|nuestro|nuestra|mi)\b|[^\W\d_][\w-]*['’]s\b)"
)
"""What joins a project's name to what it is: "orbit is a…", "orbit = the…", "orbit, a…",
"orbit: an…", "orbit es el…", "orbit is Acme's…" (a link, then an article or a
possessive: "orbit is on Go 1.22" says something about orbit, not what it is)."""
_ACRONYM = re.compile(r"(?<![\w.@/-])(?<!\d )(?<!\d)([A-Z]{2,6})s?(?![\w@/-])")
"""Capitals standing alone ("DR", "CRs"): an abbreviation of initials. Not a unit after
a number ("200 GB", "5MB"): it abbreviates a unit, never a phrase of the question
("the Orvel box" does not spell out GB)."""
_NUMERONYM = re.compile(r"(?<![\w.@/-])([^\W\d_])(\d{1,2})([^\W\d_])(?![\w@/-])")
"""A first letter, how many letters follow, a last letter ("k8s", "i18n")."""
_WORD = re.compile(r"[^\W\d_]+")
_SHORTEST = 3
"""The fewest letters of a word that spells out or clips an abbreviation, and that a
numeronym stands for between its ends ("e2e" or "p2p" are not numeronyms)."""

_CLIP = 2
"""Letters a word clipped ("lib") lacks at least, of the word it stands for ("library")."""

_lock = threading.Lock()
_profiles: dict[tuple[str, int, str], frozenset[str]] = {}
_definitions: dict[tuple[str, int, str], tuple[str, ...]] = {}
_KEPT = 4096
"""Profiles kept in memory (each a few dozen terms), across stores and generations."""


def definition(project: str, text: str) -> str:
    """What ``text`` says ``project`` is ("a Go service that…" of "Started orbit: a Go
    service that…"), up to the end of its sentence, or ""."""
    name = re.escape(project)
    link = re.compile(rf"(?<![\w-]){name}(?![\w-]){_LINK}", re.IGNORECASE)
    for sentence in SENTENCES.split(text):
        found = link.search(sentence)
        if found:
            return sentence[found.start() + len(project) :]
    return ""


def profile(store: Store, project: str) -> frozenset[str]:
    """The terms of the memories of ``project`` that define it, but for its name's
    (empty when none does); kept until the store's next write."""
    key = (str(store.path), store.generation, project)
    with _lock:
        known = _profiles.get(key)
    if known is not None:
        return known
    name = terms(project)
    found: set[str] = set()
    if name:
        for cand in store.candidates(name, limit=DEFINITIONS, kinds=("leaf",), project=project):
            found.update(terms(definition(project, cand.entry.excerpt)))
    out = frozenset(found - set(name))
    with _lock:
        if len(_profiles) >= _KEPT:
            _profiles.clear()
        _profiles[key] = out
    return out


def described_project(
    q: Query, profiles: dict[str, frozenset[str]]
) -> tuple[str, frozenset[str]] | None:
    """The one project whose profile holds at least two words of the question that no
    other profile holds, with the terms of those words; None when no project or more
    than one is so described."""
    held = {
        project: {group for group in q.groups if words.intersection(group)}
        for project, words in profiles.items()
    }
    own = {
        project: [g for g in groups if not any(g in held[o] for o in held if o != project)]
        for project, groups in held.items()
    }
    described = [project for project, groups in own.items() if len(groups) >= 2]
    if len(described) != 1:
        return None
    project = described[0]
    words = frozenset(t for group in own[project] for t in group if t in profiles[project])
    return project, words


def abbreviations(text: str) -> list[str]:
    """The abbreviations ``text`` uses: capitals standing alone and numeronyms."""
    out = [m.group(1) for m in _ACRONYM.finditer(text)]
    out += [m.group(0) for m in _NUMERONYM.finditer(text) if int(m.group(2)) >= _SHORTEST]
    return list(dict.fromkeys(out))


def spells_out(abbreviation: str, text: str) -> list[str]:
    """The words of ``text`` that spell ``abbreviation`` out: consecutive words whose
    initials it is ("disaster recovery" for "DR"), or one word it is the numeronym of
    ("kubernetes" for "k8s"); empty when none does."""
    words = _WORD.findall(text)
    numeronym = _NUMERONYM.fullmatch(abbreviation)
    if numeronym is not None:
        first, count, last = numeronym.group(1, 2, 3)
        return [
            w
            for w in words
            if len(w) == int(count) + 2
            and w[0].casefold() == first.casefold()
            and w[-1].casefold() == last.casefold()
        ][:1]
    letters = abbreviation.casefold()
    size = len(letters)
    initials = "".join(w[0] for w in words).casefold()
    start = initials.find(letters)
    while start >= 0:
        run = words[start : start + size]
        if all(_content(w) for w in run):
            return run
        start = initials.find(letters, start + 1)
    return []


def _content(word: str) -> bool:
    """A word that can stand for a letter of an abbreviation: not a stop word ("in
    Dorvault" does not spell out "ID"), of at least three letters, not an abbreviation
    itself ("certificate ACM" does not spell out "CA")."""
    return len(word) >= _SHORTEST and not word.isupper() and fold(word).casefold() not in STOP_WORDS


def clipped(word: str, text: str) -> bool:
    """True when ``word`` is a word of ``text`` clipped or one of them is ``word``
    clipped ("lib" and "library", "docs" and "docstrings"): one starts the other, which
    is at least :data:`_CLIP` letters longer, both of at least three letters and not
    stop words. Words as written, not their stems (a stem is not a clipping)."""
    return _clipped(fold(word).casefold(), _WORD.findall(fold(text).casefold()))


def _clipped(word: str, others: Sequence[str]) -> bool:
    """:func:`clipped`, of a folded word and the folded words of a text."""
    if not _content(word) or not word.isalpha():
        return False
    for other in others:
        if len(other) >= len(word) + _CLIP and other.startswith(word) and _content(other):
            return True
        if len(word) >= len(other) + _CLIP and word.startswith(other) and _content(other):
            return True
    return False


def stands_for(abbreviation: str, words: str) -> bool:
    """True when ``words`` can be what ``abbreviation`` is short for: they start with its
    first letter and hold its letters in order ("PG" and "PostgreSQL", "DR" and
    "disaster recovery"; not "ART" and "UTC-3"), or it is their numeronym."""
    numeronym = _NUMERONYM.fullmatch(abbreviation)
    if numeronym is not None:
        return bool(spells_out(abbreviation, words)) and len(_WORD.findall(words)) == 1
    letters = fold(abbreviation).casefold()
    folded = "".join(_WORD.findall(fold(words).casefold()))
    if not letters or not folded.startswith(letters[0]):
        return False
    at = 0
    for letter in letters:
        at = folded.find(letter, at)
        if at < 0:
            return False
        at += 1
    return True


def _defining(abbreviation: str) -> list[re.Pattern[str]]:
    """How a memory says what ``abbreviation`` stands for: "long form (ABBR)", "ABBR
    (long form)", "ABBR, i.e. long form", "ABBR = long form", "ABBR stands for long
    form"."""
    abbr = re.escape(abbreviation)
    long = r"[^\W\d_][\w'’.+-]*(?:\s+[\w'’.+-]+){0,4}"
    return [
        re.compile(rf"(?P<long>{long})\s*\(\s*{abbr}s?\s*\)"),
        re.compile(rf"(?<![\w-]){abbr}s?\s*\(\s*(?:i\.?e\.?,?\s*)?(?P<long>{long})\s*\)"),
        re.compile(
            rf"(?<![\w-]){abbr}s?(?:,?\s+i\.?e\.?,?|\s*=|\s+(?:stands for|is short for|means))"
            rf"\s+(?P<long>{long})"
        ),
    ]


def definitions(store: Store, abbreviation: str) -> tuple[str, ...]:
    """What the memories say ``abbreviation`` stands for (see :func:`stands_for`): each
    long form the shortest that fits; kept until the store's next write."""
    key = (str(store.path), store.generation, "\0" + abbreviation)
    with _lock:
        known = _definitions.get(key)
    if known is not None:
        return known
    found: dict[str, None] = {}
    words = terms(abbreviation)
    patterns = _defining(abbreviation)
    for cand in store.candidates(words, limit=DEFINITIONS, kinds=("leaf",)) if words else []:
        for pattern in patterns:
            for match in pattern.finditer(cand.entry.excerpt):
                long = _fitting(abbreviation, match.group("long"), pattern is patterns[0])
                if long:
                    found[long] = None
    out = tuple(found)
    with _lock:
        if len(_definitions) >= _KEPT:
            _definitions.clear()
        _definitions[key] = out
    return out


def _fitting(abbreviation: str, long: str, before: bool) -> str:
    """The fewest words of ``long`` (its last ones when it comes before the
    abbreviation, else its first ones) that the abbreviation stands for, or ""."""
    parts = long.split()
    for size in range(1, len(parts) + 1):
        chosen = parts[-size:] if before else parts[:size]
        text = " ".join(chosen)
        if stands_for(abbreviation, text) and all(_content(w) for w in chosen[:1]):
            return text
    return ""


def with_aliases(
    store: Store, q: Query, leaves: list[Candidate], scores: dict[str, float]
) -> tuple[Query, list[Candidate]]:
    """The question and its candidates once what the store learned is applied: a
    project the question describes is one it names, and an abbreviation a candidate
    spells out (or uses for words the question spells out) is held by it. Unchanged
    when nothing applies; ``scores`` are updated in place."""
    q, leaves = _described(store, q, leaves, scores)
    return _abbreviated(store, q, leaves)


def _described(
    store: Store, q: Query, leaves: list[Candidate], scores: dict[str, float]
) -> tuple[Query, list[Candidate]]:
    projects = sorted({c.entry.project for c in leaves if c.entry.project})
    if not projects or any(names_project(p, q.q_terms) for p in projects):
        return q, leaves
    found = described_project(q, {p: profile(store, p) for p in projects})
    if found is None:
        return q, leaves
    project, words = found
    if project in (q.options.prefer_project, q.options.project):
        return q, leaves  # asked in it: its words describe it by chance, not to name it
    _even(store, q, [c for c in leaves if c.entry.project == project], words, scores)
    name = [t for t in terms(project) if t not in q.q_terms]
    q = _with_terms(store, q, name)
    credit = (*name, *words)
    out = []
    for cand in leaves:
        extra = tuple(t for t in credit if t not in cand.matched)
        mine = extra and cand.entry.project == project
        out.append(replace(cand, matched=cand.matched + extra) if mine else cand)
    return q, out


def _abbreviated(store: Store, q: Query, leaves: list[Candidate]) -> tuple[Query, list[Candidate]]:
    asked = [a for a in abbreviations(q.text) if set(terms(a)) & set(q.q_terms)]
    # A word no memory holds may be one a memory holds clipped, or its clipping; not a
    # name ("project Quokkalon" is not a clipping of a memory's "Quok"): a name that no
    # memory holds says the question is about something never stored.
    words = _WORD.findall(q.text)
    unseen_words = [
        (w, t)
        for w in dict.fromkeys(words)
        if len(found := terms(w)) == 1
        and (t := found[0]) in q.q_terms
        and not q.df.get(t)
        and not (w[:1].isupper() and w != words[0])
    ]
    unseen_words = [(fold(w).casefold(), t) for w, t in unseen_words]
    spelled: dict[str, list[str]] = {}
    out: list[Candidate] = []
    learned: dict[str, int] = {}
    changed = False
    for cand in leaves:
        text = q.texts.get(cand.entry.id) or cand.entry.excerpt
        extra: list[str] = []
        held = frozenset(terms(text))
        for abbr in asked:
            short = [t for t in terms(abbr) if t in q.q_terms]
            if all(t in cand.matched for t in short):
                continue
            longs = definitions(store, abbr)
            if not spells_out(abbr, text) and not any(held.issuperset(terms(x)) for x in longs):
                continue
            extra += short
            for t in short:
                learned[t] = learned.get(t, 0) + 1
        others = _WORD.findall(fold(text).casefold()) if unseen_words else []
        for w, t in unseen_words:
            if t not in cand.matched and _clipped(w, others):
                extra.append(t)
                learned[t] = learned.get(t, 0) + 1
        for abbr in abbreviations(text):
            if abbr not in spelled:  # the question spelling out what the memory abbreviates
                spelled[abbr] = _spelled_in_question(store, q, abbr)
            extra += spelled[abbr]
        extra = [t for t in dict.fromkeys(extra) if t not in cand.matched]
        if extra:
            changed = True
            cand = replace(cand, matched=cand.matched + tuple(extra))
        out.append(cand)
    if not changed:
        return q, leaves
    unseen = {t: n for t, n in learned.items() if not q.df.get(t)}
    if unseen:
        df = {**q.df, **unseen}
        weights = {**q.weights, **{t: rarity(q.total, n) for t, n in unseen.items()}}
        q = replace(q, df=df, weights=weights)
    return q, out


def _spelled_in_question(store: Store, q: Query, abbreviation: str) -> list[str]:
    """The question's terms that spell out ``abbreviation`` (a memory's), by its
    initials or as a memory defines it; none when the question uses it as such."""
    if set(terms(abbreviation)) & set(q.q_terms):
        return []
    words = [t for w in spells_out(abbreviation, q.text) for t in terms(w)]
    if not words:
        asked = set(q.q_terms)
        for long in definitions(store, abbreviation):
            if asked.issuperset(terms(long)):
                words = terms(long)
                break
    return [t for t in words if t in q.q_terms]


def _even(
    store: Store,
    q: Query,
    mine: list[Candidate],
    words: frozenset[str],
    scores: dict[str, float],
) -> None:
    """A memory that defines the project holds the words describing it by definition,
    not as an answer: for a question that calls the project by them, it scores by the
    question's other words only (when there are some: "what is the Go service?" is
    answered by the definition)."""
    rest = [t for t in q.q_terms if t not in words]
    project = mine[0].entry.project if mine else ""
    defining = [c for c in mine if definition(project, c.entry.excerpt)]
    if not defining or not rest:
        return
    ids = [c.entry.id for c in defining]
    by_rest = {
        c.entry.id: c.score * q.factor(c)
        for c in store.candidates(rest, limit=len(ids), kinds=("leaf",), within=ids)
    }
    for i in ids:
        scores[i] = min(scores[i], by_rest.get(i, 0.0))


def _with_terms(store: Store, q: Query, extra: Sequence[str]) -> Query:
    """``q`` with ``extra`` terms (a project's name) among its terms."""
    if not extra:
        return q
    df = {**q.df, **store.document_frequencies(list(extra))}
    weights = {**q.weights, **{t: rarity(q.total, df.get(t, 0)) for t in extra}}
    return replace(q, q_terms=[*q.q_terms, *extra], df=df, weights=weights)
