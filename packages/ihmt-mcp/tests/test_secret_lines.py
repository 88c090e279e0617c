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


def test_the_installed_detect_secrets_is_a_release_the_triggers_were_checked_against() -> None:
    # Another release makes every scan import detect-secrets to list its plugins (and,
    # through it, requests): read its patterns, then add its version.
    from ihmt_mcp._secret_lines import CHECKED_VERSIONS
    from ihmt_mcp._secrets import _installed_version

    assert _installed_version() in CHECKED_VERSIONS


@pytest.mark.parametrize("text", CORPUS.POSITIVES)
def test_every_line_a_vendor_plugin_matches_is_one_it_is_given(text: str) -> None:
    from ihmt_mcp._secret_lines import plugin_can_match
    from ihmt_mcp._secrets import normalise

    for line in normalise(text).split("\n"):
        clipped = line[:4096]
        for plugin in _vendor_plugins():
            if list(plugin.analyze_line(filename="m.txt", line=clipped, line_number=1)):
                assert plugin_can_match(line), (type(plugin).__name__, line)


def test_a_scan_of_text_no_vendor_plugin_can_match_does_not_import_detect_secrets() -> None:
    import subprocess

    probe = (
        "import sys\n"
        "from ihmt_mcp._secrets import find_secrets\n"
        "text = 'FOUND: the token limit passed the key test\\n(307 tokens, 6 leaf files)'\n"
        "assert find_secrets(text) == ()\n"
        "assert 'detect_secrets' not in sys.modules, 'imported for nothing'\n"
        "assert find_secrets('npm config: //registry.example/:_authToken=npm_abc')\n"
        "assert 'detect_secrets' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
