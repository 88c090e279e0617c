"""A rule is not run on a sentence that lacks every word it needs: the same facts, faster.

Extraction spent its time trying every rule at every position of every sentence; each
rule now names (read off its regex) the words one of which any match must hold. These
tests run extraction with and without that check and require the same facts.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ihmt_facts._extract as patterns
from ihmt_facts import DEFAULT_PATTERNS, Pattern, extract

WORDS = (
    "I", "we", "live", "moved", "to", "in", "Madrid", "Valencia", "the", "staging", "server",
    "runs", "on", "port", "8080", "Ubuntu", "24.04", "prefer", "tabs", "over", "spaces", "our",
    "stack", "is", "Go", "PostgreSQL", "17", "migrated", "Ana", "works", "at", "Acme", "vivo",
    "en", "me", "mudé", "a", "puerto", "usa", "Diagnóstico:", "Tratamiento:", "now", "db01",
    "İstanbul", "ıi", "K8s", "ſtack", "MOVED", "PREFER", "Puerto", ".", ",", ";", "?", "\n",
)  # fmt: skip


def _ungated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "_candidates", lambda gated, _text: list(gated.rules))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30), st.sampled_from(("", "shop")))
def test_any_sentence_gives_the_same_facts_with_and_without_gates(
    words: list[str], project: str
) -> None:
    text = " ".join(words)
    gated = extract(text, project=project)
    with pytest.MonkeyPatch.context() as patch:
        _ungated(patch)
        assert extract(text, project=project) == gated


def test_most_built_in_rules_have_a_gate_and_a_custom_rule_gets_one() -> None:
    gated = [p.name for p in DEFAULT_PATTERNS if patterns._gate(p.regex) is not None]
    assert len(gated) >= len(DEFAULT_PATTERNS) - 2
    rule = Pattern(name="editor", regex=r"\bmy editor is (?P<value>\w+)", subject="user",
                   attribute="editor")  # fmt: skip
    assert patterns._gate(rule.regex) == frozenset({"my editor is "})
    # A case-insensitive rule still matches words written in capitals or with a
    # character that only folds to ASCII in a regex (the Kelvin sign).
    assert extract("MY EDITOR IS vim", patterns=[rule])[0].value == "vim"
    assert extract("my editor is vim", patterns=[rule])
    assert patterns._candidates(patterns._gated((rule,)), "MY EDITOR IS vim") == [rule]
    assert patterns._candidates(patterns._gated((rule,)), "my editor was vim") == []
    assert patterns._folded("\u212a8s") == "k8s"
