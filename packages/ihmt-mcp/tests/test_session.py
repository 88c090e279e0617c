from __future__ import annotations

from pathlib import Path

import pytest

from ihmt_mcp import FileRefusedError, PathRefusedError
from ihmt_mcp._session import FileReads, Scratch, digest


def _pytest_log(failing: str = "test_pay") -> str:
    lines = [f"collecting item {n}" for n in range(5)]
    lines += [f"tests/test_mod_{n}.py ........ [ {n}%]" for n in range(400)]
    lines.insert(200, f"FAILED tests/test_billing.py::{failing} - AssertionError: 3 != 4")
    lines.insert(150, "DeprecationWarning: the old API is going away")
    lines += ["=== short test summary ===", "== 1 failed, 3199 passed, 2 skipped in 41.2s =="]
    return "\n".join(lines)


def test_digest_keeps_head_failures_totals_and_tail_within_the_limit() -> None:
    log = _pytest_log()
    short = digest(log, "pytest")
    assert len(short) <= 2400
    assert short.startswith("DIGEST of pytest")
    assert "collecting item 0" in short
    assert "FAILED tests/test_billing.py::test_pay" in short
    assert "DeprecationWarning" in short
    assert "1 failed, 3199 passed, 2 skipped" in short
    assert "line(s) omitted" in short


def test_digest_of_a_short_output_is_the_output() -> None:
    assert "only line" in digest("only line", "x")


def test_notes_and_outputs_are_recalled_best_first() -> None:
    scratch = Scratch()
    assert "NOTHING NOTED" in scratch.recall("anything")
    scratch.add("The flaky test is test_refund_race; rerun with -p no:randomly.")
    scratch.add("Deploy checklist: migrate, warm caches, flip the flag.")
    scratch.add(_pytest_log("test_refund_totals"), kind="output", label="pytest run 1")
    best = scratch.recall("flaky refund test")
    assert best.startswith("RECALLED note #1")
    assert "Other matches" in best
    output = scratch.recall("pytest run", clue="refund totals")
    assert output.startswith("RECALLED output #3 'pytest run 1'")
    assert "test_refund_totals" in output
    assert "NOT FOUND" in scratch.recall("kubernetes helm chart")
    assert scratch.recall("#2").startswith("RECALLED note #2")
    with pytest.raises(ValueError, match="empty"):
        scratch.recall("  ")


def test_a_repeated_read_answers_unchanged_or_a_diff(tmp_path: Path) -> None:
    reads = FileReads()
    path = tmp_path / "app.py"
    path.write_text("a = 1\nb = 2\n")
    roots = (tmp_path,)
    first = reads.read("app.py", roots)
    assert first.startswith("FILE app.py") and "b = 2" in first
    assert reads.read(str(path), roots).startswith("UNCHANGED")
    path.write_text("a = 1\nb = 3\n")
    diff = reads.read("app.py", roots)
    assert diff.startswith("CHANGED") and "-b = 2" in diff and "+b = 3" in diff
    assert reads.read("app.py", roots, force=True).startswith("FILE app.py")


def test_reads_outside_the_roots_binary_and_huge_files_are_refused(tmp_path: Path) -> None:
    reads = FileReads()
    inside = tmp_path / "proj"
    inside.mkdir()
    (tmp_path / "outside.txt").write_text("no")
    with pytest.raises(PathRefusedError):
        reads.read("../outside.txt", (inside,))
    with pytest.raises(PathRefusedError):
        reads.read("/etc/hostname", (inside,))
    (inside / "blob.bin").write_bytes(b"\x00\x01\x02\x03" * 10)
    with pytest.raises(FileRefusedError, match="binary"):
        reads.read("blob.bin", (inside,))
    (inside / "big.txt").write_text("x" * (600 * 1024))
    with pytest.raises(FileRefusedError, match="512 KiB"):
        reads.read("big.txt", (inside,))
    assert reads.read("big.txt", (inside,), force=True).startswith("FILE big.txt")
    with pytest.raises(FileRefusedError, match="no such file"):
        reads.read("missing.txt", (inside,))
