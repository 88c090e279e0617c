"""``ihmt demo`` end to end: every answer kind, in a fresh folder, from the shipped examples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def test_the_demo_walks_through_every_step(ihmt: Callable[..., Any], tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    run = ihmt("demo", "--dir", str(folder))
    assert run.code == 0, run.err
    out = run.out
    for expected in (
        "$ ihmt ingest examples", "INGESTED 6 of 6", "software.java", "AMBIGUOUS",
        "clue> Benidorm", "REPLACED", "OUTDATED", "NOT FOUND", "$ ihmt tree", "unreachable     0",
    ):  # fmt: skip
        assert expected in out, expected
    assert run.err == ""
    assert (folder / "ihmt_memory" / "ihmt.config.json").is_file()
    assert sorted(p.name for p in (folder / "examples").iterdir()) == [
        "OrderService.java", "clinical-note.txt", "invoices.py", "journal.md", "recipe.md",
        "runbook.md",
    ]  # fmt: skip
    again = ihmt("demo", "--dir", str(folder))
    assert again.code == 1 and "already holds a memory" in again.err
