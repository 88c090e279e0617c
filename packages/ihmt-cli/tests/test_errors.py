"""Bad input: one clear line on stderr, exit 1 (2 for usage errors), no traceback, nothing lost."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

Ihmt = Callable[..., Any]
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _prepare(case: str, tmp_path: Path, store: Path) -> None:
    if case == "binary file":
        (tmp_path / "photo.bin").write_bytes(bytes(range(256)) * 8)
    elif case == "empty file":
        (tmp_path / "empty.txt").write_text("")
    elif case == "file holding a secret":
        (tmp_path / "env.txt").write_text(f"token = {GITHUB_TOKEN}\n")
    elif case == "newer store format":
        config = json.loads((store / "ihmt.config.json").read_text())
        config["format_version"] = 99
        (store / "ihmt.config.json").write_text(json.dumps(config))
    elif case == "malformed config":
        (store / "ihmt.config.json").write_text("{ this is not json")
    elif case == "a folder that is not a store":
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "notes.txt").write_text("hello")
    elif case == "init on a file":
        (tmp_path / "plain.txt").write_text("x")
    elif case == "unreadable file":
        (tmp_path / "secret.txt").write_text("private")
        (tmp_path / "secret.txt").chmod(0)
    elif case == "dangling symlink":
        (tmp_path / "gone.txt").symlink_to(tmp_path / "nowhere.txt")


# (name, args, stdin, exit code, a fragment of the message)
CASES: list[tuple[str, list[str], str | bytes | None, int, str]] = [
    ("missing store", ["search", "x", "--path", "{tmp}/nope"], None, 1, "ihmt init --path"),
    ("a folder that is not a store", ["stats", "--path", "{tmp}/other"], None, 1, "no memory at"),
    ("empty query", ["search", "", "--path", "{store}"], None, 2, "query is empty"),
    ("blank ask", ["ask", "   ", "--path", "{store}"], None, 2, "query is empty"),
    (
        "unknown id",
        ["forget", "L-nope", "--yes", "--path", "{store}"],
        None,
        1,
        "no memory with id",
    ),
    ("missing id", ["forget", "--path", "{store}"], None, 2, "Missing argument 'ID'"),
    ("binary file", ["ingest", "{tmp}/photo.bin", "--path", "{store}"], None, 1, "binary"),
    ("empty file", ["ingest", "{tmp}/empty.txt", "--path", "{store}"], None, 1, "empty"),
    ("file holding a secret", ["ingest", "{tmp}/env.txt", "--path", "{store}"], None, 1, "GitHub"),
    ("no such file", ["ingest", "{tmp}/absent.md", "--path", "{store}"], None, 1, "no such file"),
    ("dangling symlink", ["ingest", "{tmp}/gone.txt", "--path", "{store}"], None, 1, "no such"),
    ("unreadable file", ["ingest", "{tmp}/secret.txt", "--path", "{store}"], None, 1, "unreadable"),
    ("empty stdin ingest", ["ingest", "-", "--path", "{store}"], "", 2, "stdin was empty"),
    (
        "date that is not a date",
        ["save", "x y", "--date", "yesterday", "--path", "{store}"],
        None,
        2,
        "not a date",
    ),
    (
        "as-of that is not a date",
        ["search", "Luis", "--as-of", "2026-13-45", "--path", "{store}"],
        None,
        2,
        "not a date",
    ),
    ("empty save", ["save", "", "--path", "{store}"], None, 1, "nothing to save"),
    ("blank save from stdin", ["save", "-", "--path", "{store}"], "  \n ", 1, "nothing to save"),
    (
        "secret in a save",
        ["save", f"my token is {GITHUB_TOKEN}", "--path", "{store}"],
        None,
        1,
        "GitHub",
    ),
    ("huge save", ["save", "-", "--path", "{store}"], "word " * 50_000, 1, "too large"),
    ("non-UTF-8 stdin", ["save", "-", "--path", "{store}"], b"caf\xe9 \xff\xfe", 1, "not UTF-8"),
    ("newer store format", ["stats", "--path", "{store}"], None, 1, "newer IHMT"),
    ("malformed config", ["stats", "--path", "{store}"], None, 1, "ihmt.config.json"),
    ("bad domain", ["save", "x y z", "--domain", "../..", "--path", "{store}"], None, 1, "domain"),
    ("unknown command", ["serch", "Luis"], None, 2, "No such command"),
    ("unknown option", ["search", "Luis", "--bogus", "--path", "{store}"], None, 2, "--bogus"),
    ("top-k zero", ["search", "Luis", "--top-k", "0", "--path", "{store}"], None, 2, "top-k"),
    ("negative depth", ["tree", "--depth", "-1", "--path", "{store}"], None, 2, "depth"),
    (
        "branch factor 1",
        ["init", "--branch-factor", "1", "--path", "{tmp}/s2"],
        None,
        2,
        "branch-factor",
    ),
    ("bad content type", ["save", "x", "--type", "poem", "--path", "{store}"], None, 2, "--type"),
    ("init on a file", ["init", "--path", "{tmp}/plain.txt"], None, 1, "is a file"),
]


@pytest.mark.parametrize(
    ("case", "args", "stdin", "code", "fragment"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_input_gets_one_clear_line_and_loses_nothing(
    ihmt: Ihmt,
    store: Path,
    tmp_path: Path,
    leaf_count: Callable[[Path], int],
    case: str,
    args: list[str],
    stdin: str | bytes | None,
    code: int,
    fragment: str,
) -> None:
    if case == "unreadable file" and os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    before = leaf_count(store)
    _prepare(case, tmp_path, store)
    argv = [a.replace("{store}", str(store)).replace("{tmp}", str(tmp_path)) for a in args]
    run = ihmt(*argv, input=stdin)
    assert run.code == code, (run.out, run.err)
    assert "Traceback" not in run.err
    assert len(run.err_lines) == 1, run.err
    assert run.err_lines[0].startswith("ihmt: error: ")
    assert fragment.lower() in run.err.lower(), run.err
    if case not in ("newer store format", "malformed config"):
        assert leaf_count(store) == before


def test_verbose_shows_the_traceback_for_debugging(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("save", "", "--path", str(store), "-v")
    assert run.code == 1
    assert "Traceback" in run.err and run.err_lines[-1].startswith("ihmt: error: ")


def test_a_newer_store_is_left_untouched(ihmt: Ihmt, store: Path) -> None:
    config = json.loads((store / "ihmt.config.json").read_text())
    config["format_version"] = 99
    raw = json.dumps(config)
    (store / "ihmt.config.json").write_text(raw)
    leaves = sorted(p.name for p in store.rglob("*.md"))
    assert ihmt("save", "new thing", "--path", str(store)).code == 1
    assert (store / "ihmt.config.json").read_text() == raw
    assert sorted(p.name for p in store.rglob("*.md")) == leaves


def _in_terminal(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, bytes, str]:
    """Run ``args`` with stderr on a pseudo-terminal; return (code, terminal bytes, stdout)."""
    import pty
    import select

    leader, follower = pty.openpty()
    child = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower, env=env, cwd=cwd
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 120
    try:
        while child.poll() is None or select.select([leader], [], [], 0)[0]:
            assert time.monotonic() < deadline, "the command took too long"
            if select.select([leader], [], [], 0.5)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        out = child.communicate(timeout=60)[0].decode()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
        os.close(leader)
    return child.returncode, seen, out


def test_two_thousand_files_show_a_progress_bar_on_a_terminal(
    store: Path, ihmt_bin: str, ihmt_env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(2000):
        (folder / f"n{i:04d}.txt").write_text(f"note {i} about topic {i % 37} and word w{i}\n")
    code, seen, out = _in_terminal(
        [ihmt_bin, "ingest", str(folder), "--no-consolidate", "--path", str(store)],
        ihmt_env,
        tmp_path,
    )
    assert code == 0, seen.decode(errors="replace")[-500:]
    assert b"Ingesting" in seen and b"100%" in seen  # the share of the bytes read
    assert b" MB \xc2\xb7 many/n" in seen  # bytes done, then the file being read
    assert out.startswith("INGESTED 2000 of 2000")
    # consolidation and rebuild of those 2,000 memories draw their own bars
    code, seen, out = _in_terminal(
        [ihmt_bin, "consolidate", "--path", str(store)], ihmt_env, tmp_path
    )
    assert code == 0, seen.decode(errors="replace")[-500:]
    assert b"Consolidating" in seen and out.startswith("CONSOLIDATED")
    code, seen, out = _in_terminal([ihmt_bin, "rebuild", "--path", str(store)], ihmt_env, tmp_path)
    assert code == 0, seen.decode(errors="replace")[-500:]
    assert b"Rebuilding" in seen and out.startswith("REBUILT · 20")


def test_one_large_journal_streams_with_a_bar_that_moves_inside_it(
    store: Path, ihmt_bin: str, ihmt_env: dict[str, str], tmp_path: Path
) -> None:
    """Over 2 MiB, once refused: read a segment at a time, the bar follows the bytes."""
    start = date(2023, 1, 1)
    lines = [  # forty calls a day: a day's entries pack into a few memories
        f"{start + timedelta(days=i // 40)} Call {i} with the Orvane team about "
        f"ticket ORV-{i:05d}; next step agreed, notes in the shared folder.\n"
        for i in range(30_000)
    ]
    journal = tmp_path / "journal.md"
    journal.write_text("# Journal\n\n" + "".join(lines), encoding="utf-8")
    assert journal.stat().st_size > 2 * 1024 * 1024
    code, seen, out = _in_terminal(
        [ihmt_bin, "ingest", str(journal), "--no-consolidate", "--path", str(store)],
        {**ihmt_env, "IHMT_SEMANTIC": "off"},  # the words; vectors are another cost
        tmp_path,
    )
    assert code == 0, seen.decode(errors="replace")[-500:]
    shown = {int(p) for p in re.findall(rb"(\d+)%", seen)}
    assert 100 in shown and any(0 < p < 100 for p in shown)  # it moved within the one file
    assert b" MB \xc2\xb7 journal.md" in seen
    assert out.startswith("INGESTED 1 of 1")
