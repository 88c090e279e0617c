"""The clue loop of ``ihmt ask``: clues read line by line from stdin, and on a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Ihmt = Callable[..., Any]


def test_ask_reads_clues_from_stdin_until_the_answer_is_found(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("ask", "Luis", "--path", str(store), input="Benidorm\n")
    assert run.code == 0, run.err
    assert run.out.startswith("AMBIGUOUS")
    assert "clue> Benidorm" in run.out
    final = run.out.split("clue> Benidorm", 1)[1]
    assert final.strip().startswith("FOUND") and "Benidorm" in final


def test_ask_json_keeps_stdout_one_object(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("ask", "Luis", "--json", "--path", str(store), input="El Saler\n")
    assert run.code == 0, run.err
    data = run.json()
    assert data["status"] == "found" and data["clues"] == ["El Saler"]
    assert "Ortega" in data["results"][0]["content"]
    assert "AMBIGUOUS" in run.err  # the candidates were shown, on stderr


def test_ask_without_clues_stays_ambiguous(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("ask", "Luis", "--path", str(store), "--json", input="")
    assert run.code == 0, run.err
    assert run.json()["status"] == "ambiguous"


def test_ask_with_a_first_clue_needs_no_stdin(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("ask", "Luis", "--clue", "invoices pull request", "--path", str(store), "--json")
    assert run.json()["status"] == "found"
    assert "Marín" in run.json()["results"][0]["content"]


def _read_until(fd: int, marker: bytes, deadline: float) -> bytes:
    seen = b""
    while marker not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"timed out waiting for {marker!r}; got {seen!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    return seen


def test_ask_prompts_for_a_clue_on_a_terminal(
    store: Path, ihmt_bin: str, ihmt_env: dict[str, str], tmp_path: Path
) -> None:
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [ihmt_bin, "ask", "Luis", "--path", str(store)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**ihmt_env, "COLUMNS": "120"},
        cwd=tmp_path,
        close_fds=True,
    )
    os.close(follower)
    try:
        deadline = time.monotonic() + 60
        shown = _read_until(leader, b"Clue", deadline)
        assert b"AMBIGUOUS" in shown
        os.write(leader, b"Benidorm\n")
        rest = _read_until(leader, b"tokens", deadline)
        assert b"FOUND" in rest and b"Benidorm" in rest
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
        os.close(leader)
