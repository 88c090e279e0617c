"""The line prefilter of the secret scan loses nothing: with and without it, the scan
finds the same kinds on the same lines, for every text of the secret corpus placed in a
file of code, and for any mix of those lines, code and blank lines."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_mcp._secret_lines import VENDOR_PLUGINS, keep_lines
from ihmt_mcp._secrets import _vendor_plugins, find_secrets, scan_text


def _corpus() -> ModuleType:
    path = Path(__file__).with_name("test_secrets_corpus.py")
    spec = importlib.util.spec_from_file_location("secrets_corpus_for_lines", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CORPUS = _corpus()
TEXTS: list[str] = [*CORPUS.POSITIVES, *CORPUS.NEGATIVES]

# Code with no trigger in it: every one of these lines is emptied by the prefilter.
CODE = [
    "def area(width, height):",
    "    return width * height",
    "",
    "",
    "class Shape:",
    "    def __init__(self, sides):",
    "        self.sides = sides",
    "",
    "    def perimeter(self, length):",
    "        total = 0",
    "        for side in range(self.sides):",
    "            total += length",
    "        return total",
    "",
]


def _both(text: str) -> tuple[tuple[object, ...], tuple[object, ...]]:
    return scan_text(text, prefilter=True), scan_text(text, prefilter=False)


def test_the_vendor_plugins_are_the_ones_the_triggers_were_checked_against() -> None:
    # A detect-secrets upgrade that adds a plugin fails here: read its patterns, add
    # what its shortest match needs to the triggers, then add its name.
    assert {type(plugin).__name__ for plugin in _vendor_plugins()} == VENDOR_PLUGINS


def test_code_without_triggers_is_emptied_and_a_secret_line_is_kept() -> None:
    keep, hot = keep_lines("\n".join(CODE))
    assert not any(keep[n] for n, line in enumerate(CODE) if line.strip())
    assert not any(hot)
    text = "\n".join([*CODE, "API_TOKEN=" + "9f86d081884c7d659a2feaa0c55ad015", *CODE])
    keep, hot = keep_lines(text)
    assert hot[len(CODE)] and keep[len(CODE)] and keep[len(CODE) - 1]
    assert [f.line for f in find_secrets(text)] == [len(CODE) + 1]


@pytest.mark.parametrize("text", TEXTS)
def test_each_corpus_text_inside_code_is_found_alike(text: str) -> None:
    placed = "\n".join([*CODE, text, *CODE])
    with_filter, without = _both(placed)
    assert with_filter == without
    assert not all(keep_lines(placed)[0])  # the prefilter did leave lines out


@pytest.mark.parametrize("text", CORPUS.POSITIVES)
def test_a_secret_split_over_lines_is_found_alike(text: str) -> None:
    # Every space turned into a newline, with a blank and a code line after it.
    broken = text.replace(" ", "\n")
    placed = "\n".join([*CODE, broken, "", CODE[1], *CODE])
    assert _both(placed)[0] == _both(placed)[1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(st.sampled_from(TEXTS), st.sampled_from(CODE), st.just("")),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(["\n", " ", "\n\n"]),
)
def test_any_mix_of_secrets_code_and_blank_lines_is_found_alike(
    parts: list[str], glue: str
) -> None:
    text = glue.join(parts)
    with_filter, without = _both(text)
    assert with_filter == without
