"""The benchmark corpus is honest: deterministic, answerable, never copied, never leaking.

Run: ``.venv/bin/python -m pytest -q tools/bench/test_memories.py -p no:cacheprovider``
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _memories import (
    AMBIGUOUS,
    CITIES,
    FOUND,
    MEMORY_KINDS,
    NOT_FOUND,
    QUERY_KINDS,
    ROLES,
    Corpus,
    detail_token,
    generate,
)

from ihmt_store import terms

SIZES = (50, 137, 500, 5000, 50_000)


@cache
def corpus(size: int, seed: int = 0) -> Corpus:
    return generate(size, seed)


@cache
def vocabulary(size: int) -> frozenset[str]:
    """Every index term of every memory, through the store's own tokenizer."""
    return frozenset(t for m in corpus(size).memories for t in terms(m.text))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold())


def test_same_seed_gives_the_same_corpus_and_another_seed_does_not() -> None:
    assert generate(500, 3) == generate(500, 3)
    assert generate(500, 3).memories != generate(500, 4).memories


@pytest.mark.parametrize("size", [10, 49, 50_001])
def test_sizes_outside_the_range_are_refused(size: int) -> None:
    with pytest.raises(ValueError, match="size must be between"):
        generate(size)


@pytest.mark.parametrize("size", SIZES)
def test_corpus_has_the_requested_size_every_kind_and_dated_order(size: int) -> None:
    c = corpus(size)
    assert len(c.memories) == size
    assert {m.kind for m in c.memories} == set(MEMORY_KINDS)
    assert len({m.id_hint for m in c.memories}) == size
    dates = [m.date for m in c.memories]
    assert dates == sorted(dates)
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", d) for d in dates)


@pytest.mark.parametrize("size", SIZES)
def test_queries_are_stratified_and_capped(size: int) -> None:
    kinds = Counter(q.kind for q in corpus(size).queries)
    assert set(kinds) == set(QUERY_KINDS)
    assert 60 <= sum(kinds.values()) <= 400
    assert kinds["targeted"] >= 0.5 * sum(kinds.values())
    assert len({q.text for q in corpus(size).queries}) == len(corpus(size).queries)


@pytest.mark.parametrize("size", SIZES)
def test_every_expected_memory_exists_and_is_current(size: int) -> None:
    c = corpus(size)
    by_id = {m.id_hint: m for m in c.memories}
    superseded = {m.supersedes for m in c.memories if m.supersedes}
    for q in c.queries:
        if q.kind in ("targeted", "update"):
            assert q.expected in by_id, q
            assert q.expected not in superseded, q
            assert q.expected_status == FOUND
        else:
            assert q.expected is None
    for q in c.queries:
        if q.kind == "update":
            assert q.outdated, q
            assert q.outdated[0] == by_id[q.expected].supersedes  # type: ignore[index]
            assert all(by_id[old].subject == by_id[q.expected].subject for old in q.outdated)  # type: ignore[index]


@pytest.mark.parametrize("size", SIZES)
def test_queries_paraphrase_instead_of_copying_the_memory(size: int) -> None:
    c = corpus(size)
    by_id = {m.id_hint: m for m in c.memories}
    for q in c.queries:
        if q.expected is None:
            continue
        memory = by_id[q.expected].text.casefold()
        query = q.text.casefold()
        assert memory not in query and query not in memory
        # Subject names run up to five content words ("uptime SLA of kakapo's CLI tooling");
        # no longer run of content words (stop words dropped, stemmed) comes from the memory.
        words = terms(memory)
        runs = {tuple(words[i : i + 6]) for i in range(len(words) - 5)}
        qwords = terms(query)
        shared = runs.intersection(tuple(qwords[i : i + 6]) for i in range(len(qwords) - 5))
        assert not shared, (q.text, by_id[q.expected].text)


@pytest.mark.parametrize("size", SIZES)
def test_targeted_queries_that_name_the_memory_carry_its_unique_detail(size: int) -> None:
    c = corpus(size)
    by_id = {m.id_hint: m for m in c.memories}
    named = [q for q in c.queries if q.kind == "targeted" and q.names_memory]
    described = [q for q in c.queries if q.kind == "targeted" and not q.names_memory]
    assert named and described
    for q in named:
        assert detail_token(by_id[q.expected].unique) in _words(q.text)  # type: ignore[index]
    for q in described:
        assert detail_token(by_id[q.expected].unique) not in _words(q.text)  # type: ignore[index]


@pytest.mark.parametrize("size", SIZES)
def test_each_unique_detail_occurs_in_its_memory_and_no_other(size: int) -> None:
    c = corpus(size)
    holders: Counter[str] = Counter()
    for m in c.memories:
        holders.update(set(terms(m.text)))
    for m in c.memories:
        assert m.unique in m.text, m
        token = detail_token(m.unique)
        assert token in terms(m.text), m
        assert holders[token] == 1, m


@pytest.mark.parametrize("size", SIZES)
def test_three_people_called_luis_with_different_surnames_roles_and_places(size: int) -> None:
    c = corpus(size)
    luis = [m for m in c.memories if m.kind == "person" and m.subject.startswith("person:Luis ")]
    assert len({m.subject for m in luis}) >= 3

    def longest(options: tuple[str, ...] | list[str], text: str) -> str:
        found = [o for o in options if re.search(rf"\b{re.escape(o)}\b", text)]
        return max(found, key=len)

    profiles = {(longest(ROLES, m.text), longest(CITIES, m.text), m.subject) for m in luis}
    roles, cities, names = zip(*profiles, strict=True)
    assert len(set(roles)) >= 3 and len(set(cities)) >= 3 and len(set(names)) >= 3
    bare = [q for q in c.queries if q.kind == "ambiguous" and "Luis" in q.text.split(" ")[-1]]
    bare += [q for q in c.queries if q.kind == "ambiguous" and re.search(r"\bLuis\b", q.text)]
    assert bare
    for q in bare:
        assert q.expected_status == AMBIGUOUS
        assert len(q.candidates) >= 3


@pytest.mark.parametrize("size", SIZES)
def test_corrections_supersede_an_earlier_memory_about_the_same_subject(size: int) -> None:
    c = corpus(size)
    position = {m.id_hint: i for i, m in enumerate(c.memories)}
    by_id = {m.id_hint: m for m in c.memories}
    corrections = [m for m in c.memories if m.supersedes]
    assert corrections
    assert all(m.kind == "correction" for m in corrections)
    assert all(m.supersedes for m in c.memories if m.kind == "correction")
    targets = Counter(m.supersedes for m in corrections)
    assert max(targets.values()) == 1, "a memory is corrected at most once; chains go on"
    for m in corrections:
        old = by_id[m.supersedes]  # type: ignore[index]
        assert old.date < m.date, (old, m)
        assert position[old.id_hint] < position[m.id_hint]
        assert old.subject == m.subject and m.subject


@pytest.mark.parametrize("size", SIZES)
def test_never_stored_queries_ask_about_words_no_memory_contains(size: int) -> None:
    c = corpus(size)
    vocab = vocabulary(size)
    never = [q for q in c.queries if q.kind == "never_stored"]
    assert never
    for q in never:
        assert q.expected_status == NOT_FOUND and q.unique
        assert not set(terms(q.unique)) & vocab, q
    # Mostly worded with the store's vocabulary, so a search has something to wrongly match.
    worded = [q for q in never if set(terms(q.text)) & vocab]
    assert len(worded) >= 0.75 * len(never)


def test_texts_are_varied_at_5000() -> None:
    c = corpus(5000)
    texts = [m.text for m in c.memories]
    assert len(set(texts)) >= 0.99 * len(texts)
    # Varied beyond the unique detail too.
    masked = {m.text.replace(m.unique, "#") for m in c.memories}
    assert len(masked) >= 0.99 * len(texts)
    skeletons = {re.sub(r"[A-Za-z0-9.%'-]+", "w", m.text)[:40] for m in c.memories}
    assert len(skeletons) >= 60
