"""Who or what a question refers to, when the memories hold several referents it does
not tell apart: people who share the first name it uses (:func:`namesakes`), projects
that each answer it (:func:`project_split`). :func:`decide` asks for a clue then. Or
when the memory that answers its other words is about another referent than the one
it names (:func:`another_referent`): NOT FOUND.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ihmt_navigator._match import NAMESAKE_POOL, indistinct, names_project, same_subject
from ihmt_navigator._query import Query
from ihmt_navigator._question import bare_names, head_names
from ihmt_navigator._signals import people_named, surname_after
from ihmt_store import Candidate, Store, terms

__all__ = ["another_referent", "namesakes", "people_called", "project_split"]

NAMES_CHECKED = 20
"""How many memories holding a word are read to tell whether it is used only in names."""


def namesakes(
    store: Store, q: Query, ranked: Sequence[Candidate], *, asks_value: bool
) -> list[Candidate]:
    """Candidates in which a bare name of the question belongs to different people.

    "Luis" asked alone, while memories say "Luis Carrasco" and "Luis Sato", has several
    referents; "Luis Sato" in the question has one. Every candidate counts, however far
    down: a person many memories mention by first name alone pushes the memories that
    give a namesake's full name down the list, and the namesake still exists. A word
    after the name is a surname only if the memories use it only in names
    (:func:`only_in_names`): "Orbit Widgets" and "Orbit Themes" are not two people
    called Orbit.

    What else the question asks about can single one of them out: "Luis's cat" is about
    the Luis whose memories mention a cat, so only the memories holding as much of the
    rest of the question as any are weighed. A value asked for does not (``asks_value``:
    an email, a phone number…): every person has one, so "Greta's email" is a question
    about either Greta even when the memory holds only one Greta's.

    Returns:
        The first memory of each person, then the other best memories of the name;
        empty when the name has one referent.
    """
    for name in bare_names(q.text):
        mention = re.compile(rf"\b{re.escape(name)}\b")
        holders = [c for c in ranked if mention.search(c.entry.excerpt)]
        weighed = holders
        if not asks_value:
            rest = set(q.q_terms) - set(terms(name))

            def held(cand: Candidate, rest: set[str] = rest) -> float:
                return sum(q.weights.get(t, 0.0) for t in rest.intersection(cand.matched))

            most = max((held(c) for c in holders), default=0.0)
            if most > 0:
                weighed = [c for c in holders if held(c) >= most - 1e-9]
        people: dict[str, Candidate] = {}
        for cand in weighed:
            who = surname_after(name, cand.entry.excerpt)
            if who is not None and who not in people and is_surname(store, q, who):
                people[who] = cand
        if len(people) >= 2:
            firsts = list(people.values())
            near = [c for c in holders[:NAMESAKE_POOL] if not q.is_outdated(c.entry)]
            return [*firsts, *(c for c in near if c not in firsts)]
    return []


def people_called(store: Store, q: Query, name: str, texts: Sequence[str]) -> set[str]:
    """The people ``name`` belongs to in ``texts``, by surnames the memories use only in
    names (:func:`only_in_names`): what :func:`namesakes` counts, for the signal."""
    return {who for who in people_named(name, texts) if is_surname(store, q, who)}


def is_surname(store: Store, q: Query, word: str) -> bool:
    """:func:`only_in_names`, asked of the store once per word in this call."""
    if word not in q.surnames:
        q.surnames[word] = only_in_names(store, word)
    return q.surnames[word]


def only_in_names(store: Store, word: str) -> bool:
    """Whether the memories use ``word`` only as part of a name: always capitalised, and
    always after another capitalised word ("Ana Vidal", "Marta Vidal's"). A product
    ("on Slack"), a common word ("channels") or an acronym is not a surname."""
    if not word[1:2].islower() or any(ch.isupper() for ch in word[2:]):
        return False
    # Not inside an address: "a.vidal@example.org" is Vidal's email, not a use of the word.
    use = re.compile(rf"(?<![\w.@/-]){re.escape(word)}(?![\w@/-])", re.IGNORECASE)
    for cand in store.candidates(terms(word), limit=NAMES_CHECKED, kinds=("leaf",)):
        text = cand.entry.excerpt
        for found in use.finditer(text):
            before = text[: found.start()].rstrip().rsplit(None, 1)[-1:] or [""]
            if found.group() != word or not before[0][:1].isupper():
                return False
    return True


def project_split(
    q: Query,
    best: Candidate,
    ranked: Sequence[Candidate],
    scores: dict[str, float],
    *,
    dated: bool,
) -> list[Candidate]:
    """Memories of different projects that answer the question equally well, or that
    each answer a question about a practice (:func:`practice_split`; not when it names a
    period, ``dated``: it asks what happened then), when the asker is in no project and
    names none: the best of each project."""
    options, weights = q.options, q.weights
    if options.prefer_project or options.project or not best.entry.project:
        return []
    if names_project(best.entry.project, list(weights)):
        return []
    per_project: dict[str, Candidate] = {}
    for cand in ranked:
        project = cand.entry.project
        if not project or project in per_project or q.is_outdated(cand.entry):
            continue
        if scores[cand.entry.id] < 0.5 * scores[best.entry.id] or not indistinct(
            best, cand, weights
        ):
            continue
        if cand is not best and same_subject(best, cand):
            continue
        per_project[project] = cand
    if len(per_project) < 2 and not dated:
        per_project = practice_split(q, best, ranked)
    return list(per_project.values()) if len(per_project) >= 2 else []


_PERSONAL = re.compile(r"\bI\b|(?i:\b(?:me|my|mine|myself|yo|mi|mis)\b)")
"""A question in the first person singular: about the asker, not a project's practice."""


def practice_split(q: Query, best: Candidate, ranked: Sequence[Candidate]) -> dict[str, Candidate]:
    """The best memory of each project, when what the best memory holds of the question
    is held by other projects' memories too: every word of it by some, and half of it
    (by rarity) by one. The question asks about a practice each project has ("where do
    errors get reported?", "which linters do we use?") and names nothing that only one
    of them has; a combination of words only one project has is no practice. Nor is a
    question about oneself ("my laptop") or about a person the memories name."""
    if _PERSONAL.search(q.text) or any(
        surname_after(name, c.entry.excerpt) for name in bare_names(q.text) for c in ranked
    ):
        return {}
    held = {t: q.weights[t] for t in best.matched if t in q.weights}
    total = sum(held.values())
    others = [
        c
        for c in ranked
        if c.entry.project not in ("", best.entry.project) and not q.is_outdated(c.entry)
    ]
    if not total or any(not any(t in c.matched for c in others) for t in held):
        return {}
    if not any(sum(held.get(t, 0.0) for t in c.matched) >= total / 2 for c in others):
        return {}
    per_project = {best.entry.project: best}
    for cand in others:
        if any(t in held for t in cand.matched):
            per_project.setdefault(cand.entry.project, cand)
    return per_project


def another_referent(
    q: Query,
    judged: Candidate,
    ranked: Sequence[Candidate],
    projects: frozenset[str],
    nearest: Candidate | None,
) -> str | None:
    """A name the question is about (:func:`head_names`) that the memory judged best
    does not mention, while other memories do: that memory answers the question's other
    words about something else ("the geocoding module" of Kelmo, asked about Orbaz's).
    Not when a memory that mentions the name holds half of what the best holds of the
    rest of the question (it is the one to rank) or is nearest in meaning (``nearest``:
    it may say the rest in other words or another language), nor for a project's name
    (the project rules weigh those), nor for a name no memory holds (certainly NOT
    FOUND).

    Returns:
        The name, or None.
    """
    for name in head_names(q.text):
        parts = terms(name)
        if not parts or any(q.df.get(t, 0) == 0 for t in parts):
            continue
        if any(all(t in c.matched for t in parts) for c in (judged, nearest) if c is not None):
            continue
        if any(names_project(project, parts) for project in projects):
            continue
        rest = {t: q.weights[t] for t in judged.matched if t in q.weights and t not in parts}
        total = sum(rest.values())
        holders = (c for c in ranked if all(t in c.matched for t in parts))
        if any(sum(rest.get(t, 0.0) for t in c.matched) >= total / 2 for c in holders):
            continue
        return name
    return None
