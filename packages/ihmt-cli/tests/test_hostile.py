"""Hostile input at the CLI's edge (issue #13): consent without a terminal, control
sequences in stored text, named pipes and devices, unbounded stdin and echoed ids."""

from __future__ import annotations

import os
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ihmt_cli._base import terminal_safe
from ihmt_mcp import MAX_FILE_BYTES

Ihmt = Callable[..., Any]

# Anything the terminal would act on: ESC (CSI, OSC), BEL, CR, backspace, C1 controls.
_ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
OSC52 = "\x1b]52;c;" + "cm0gLXJmIH4=" + "\x07"


def _first_id(ihmt: Ihmt, store: Path, query: str) -> str:
    run = ihmt("search", query, "--full", "--json", "--path", str(store))
    assert run.code == 0, run.err
    return str(run.json()["results"][0]["id"])


# ---------------------------------------------------------------------- D1
@pytest.mark.parametrize("stdin", ["n\n", "y\n", "", "yes\n"], ids=["n", "y", "devnull", "yes"])
def test_forget_without_yes_refuses_when_stdin_is_not_a_terminal(
    ihmt: Ihmt, store: Path, leaf_count: Callable[[Path], int], stdin: str
) -> None:
    leaf_id = _first_id(ihmt, store, "Benidorm paella")
    before = leaf_count(store)
    run = ihmt("forget", leaf_id, "--path", str(store), input=stdin)
    assert run.code == 1, (run.out, run.err)
    assert "--yes" in run.err and "terminal" in run.err
    assert len(run.err_lines) == 1
    assert leaf_count(store) == before
    assert ihmt("forget", leaf_id, "--yes", "--path", str(store)).code == 0
    assert leaf_count(store) == before - 1


# ---------------------------------------------------------------------- D18
def test_search_and_tree_print_stored_escape_sequences_inert(ihmt: Ihmt, store: Path) -> None:
    text = f"Zorblax deploy key rotation note {OSC52} then \x1b[2J\x1b[31mred\rX\u202eevil"
    saved = ihmt("save", text, "--path", str(store))
    assert saved.code == 0, saved.err
    for args in (["search", "Zorblax deploy", "--full"], ["tree", "--depth", "5"]):
        run = ihmt(*args, "--path", str(store))
        assert run.code == 0, run.err
        assert not _ACTIVE.search(run.out), repr(run.out)
        assert not _ACTIVE.search(run.err), repr(run.err)
    found = ihmt("search", "Zorblax deploy", "--full", "--path", str(store))
    assert "\\x1b]52;c;" in found.out  # shown, so the user sees what is stored
    as_json = ihmt("search", "Zorblax deploy", "--json", "--path", str(store)).json()
    assert OSC52 in as_json["results"][0]["content"]  # --json keeps the exact text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2100, blacklist_categories=("Cs",))))
def test_terminal_safe_leaves_no_active_control_and_keeps_printable_text(text: str) -> None:
    safe = terminal_safe(text)
    assert not _ACTIVE.search(safe)
    assert safe.count("\n") == text.count("\n")
    plain = "".join(c for c in text if c in string.printable and not _ACTIVE.match(c))
    assert all(c in safe for c in plain)


# ---------------------------------------------------------------------- D10
def test_ingest_of_a_folder_with_a_named_pipe_skips_it_and_says_why(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe Quibbler cluster runs on three hosts.\n")
    os.mkfifo(folder / "pipe.md")
    run = ihmt("ingest", str(folder), "--path", str(store), timeout=30)
    assert run.code == 0, run.err
    assert "pipe.md" in run.err and "named pipe" in run.err
    assert "INGESTED 1 of 2" in run.out


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null", "fifo"])
def test_ingest_of_a_device_or_pipe_is_one_clear_message(
    ihmt: Ihmt, store: Path, tmp_path: Path, leaf_count: Callable[[Path], int], target: str
) -> None:
    if target == "fifo":
        target = str(tmp_path / "a.fifo")
        os.mkfifo(target)
    before = leaf_count(store)
    run = ihmt("ingest", target, "--path", str(store), timeout=30)
    assert run.code == 1, (run.out, run.err)
    assert len(run.err_lines) == 1
    assert "not a regular file" in run.err
    assert "no such file" not in run.err
    assert leaf_count(store) == before


# ---------------------------------------------------------------------- D19
def test_ingest_stdin_over_the_file_limit_is_refused_with_one_message(
    ihmt: Ihmt, store: Path, leaf_count: Callable[[Path], int]
) -> None:
    before = leaf_count(store)
    run = ihmt("ingest", "-", "--path", str(store), input=b"word " * (MAX_FILE_BYTES // 5 + 10))
    assert run.code == 1, run.err[-300:]
    assert len(run.err_lines) == 1
    assert "too large" in run.err and "2 MiB" in run.err
    assert leaf_count(store) == before


def test_save_stdin_far_over_the_limit_is_refused_without_reading_it_all(
    ihmt: Ihmt, store: Path
) -> None:
    run = ihmt("save", "-", "--path", str(store), input=b"x" * (3 * MAX_FILE_BYTES))
    assert run.code == 1
    assert len(run.err_lines) == 1 and "too large" in run.err


@pytest.mark.parametrize("size", [2_000, 120_000])
def test_a_huge_id_given_to_forget_is_not_echoed_in_full(
    ihmt: Ihmt, store: Path, size: int
) -> None:
    run = ihmt("forget", "L-" + "a" * size, "--yes", "--path", str(store))
    assert run.code == 1
    assert len(run.err_lines) == 1 and "no memory with id" in run.err
    assert len(run.err) < 1_000, len(run.err)


def test_ask_echoes_clues_and_candidates_inert(ihmt: Ihmt, store: Path) -> None:
    saved = ihmt("save", f"Luis Quiroga{OSC52} hosts the paella contest", "--path", str(store))
    assert saved.code == 0, saved.err
    run = ihmt("ask", "Luis", "--path", str(store), input=f"Benidorm{OSC52}\n")
    assert run.code == 0, run.err
    assert "clue> Benidorm" in run.out
    assert not _ACTIVE.search(run.out) and not _ACTIVE.search(run.err), repr(run.out)


# ---------------------------------------------------------------------- D16, D20
def test_a_date_far_in_the_future_is_refused_and_year_one_is_saved(
    ihmt: Ihmt, store: Path, leaf_count: Callable[[Path], int]
) -> None:
    before = leaf_count(store)
    future = ihmt("save", "the far future", "--date", "9999-12-31", "--path", str(store))
    assert future.code != 0 and "in the future" in future.err and "Traceback" not in future.err
    assert leaf_count(store) == before
    old = ihmt("save", "long ago", "--date", "0001-01-01", "--json", "--path", str(store))
    assert old.code == 0, old.err
    assert leaf_count(store) == before + 1


def test_content_of_only_invisible_characters_is_not_a_memory(
    ihmt: Ihmt, store: Path, leaf_count: Callable[[Path], int]
) -> None:
    before = leaf_count(store)
    run = ihmt("save", "\u200b\u200c\u2060\ufeff", "--path", str(store))
    assert run.code != 0 and "Traceback" not in run.err
    assert leaf_count(store) == before
