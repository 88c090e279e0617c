"""The built-in rules are made without compiling them; each compiles when first needed.

``_rules.default_patterns`` skips ``Pattern``'s check (which compiles the regex) so that
extracting one memory's facts compiles only the rules its sentences may match. This file
is that check, for every built-in rule: made with ``Pattern(...)``, each one passes and
equals the rule as used, in the same order.
"""

from __future__ import annotations

import subprocess
import sys

from ihmt_facts import DEFAULT_PATTERNS, Pattern, extract
from ihmt_facts._rules import _RULES, default_patterns


def test_every_built_in_rule_passes_the_check_and_is_the_one_used() -> None:
    checked = tuple(Pattern(**rule._asdict()) for rule in _RULES)
    assert checked == DEFAULT_PATTERNS == default_patterns()
    assert [p.name for p in checked] == [p.name for p in DEFAULT_PATTERNS]
    assert len({p.name for p in checked}) == len(checked)
    for made, used in zip(checked, DEFAULT_PATTERNS, strict=True):
        assert made.compiled.pattern == used.compiled.pattern == used.regex
        assert made.compiled.groupindex == used.compiled.groupindex


def test_extracting_one_text_compiles_only_the_rules_it_may_match() -> None:
    code = (
        "from ihmt_facts import DEFAULT_PATTERNS, extract\n"
        "from ihmt_facts._pattern import compile_rule\n"
        "assert compile_rule.cache_info().currsize == 0\n"
        "found = extract('The staging host db01 runs on port 5432.')\n"
        "print(len(found), compile_rule.cache_info().currsize, len(DEFAULT_PATTERNS))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    found, compiled, rules = map(int, run.stdout.split())
    assert found >= 1
    assert 0 < compiled < rules
    # the same facts as with every rule compiled up front
    assert extract("The staging host db01 runs on port 5432.") == extract(
        "The staging host db01 runs on port 5432.",
        patterns=tuple(Pattern(**rule._asdict()) for rule in _RULES),
    )
