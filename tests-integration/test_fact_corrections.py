"""Corrections at the level of facts through the real CLI, one process per command.

A memory states several facts about a server; a later one corrects only its rack. A
question about the rack gets the correction first and the old memory flagged with a
notice naming what changed; a question about its IP or its owner gets the old memory,
which still holds there, with no OUTDATED warning.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

IHMT = str(Path(sys.executable).parent / "ihmt")


class Cli:
    def __init__(self, tmp_path: Path) -> None:
        self.store = tmp_path / "s"
        self.env = {
            **os.environ,
            "HOME": str(tmp_path),
            "IHMT_HOME": str(tmp_path / ".ihmt"),
            "IHMT_PROJECT": "",
            "IHMT_SEMANTIC": "off",
        }

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            [IHMT, "--path", str(self.store), *args],
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
        return done.stdout

    def save(self, text: str, *args: str) -> str:
        return str(json.loads(self("--json", "save", text, *args))["ids"][0])

    def search(self, question: str) -> dict[str, Any]:
        return dict(json.loads(self("--json", "search", question)))


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    run = Cli(tmp_path)
    run("init", "-q")
    return run


def test_a_correction_outdates_the_fact_it_changes_not_the_memory(cli: Cli) -> None:
    old = cli.save(
        "Server atlas-7 sits in rack B3 of the Madrid datacenter; its IP is 10.0.4.17 "
        "and the platform team owns it.",
        "--date",
        "2026-03-01",
    )
    new = cli.save(
        "Server atlas-7 moved to rack B7 last week.",
        "--date",
        "2026-10-02",
        "--replaces",
        "atlas-7 rack B3",
    )

    moved = cli.search("Which rack is atlas-7 in?")
    assert moved["status"] == "found"
    ids = [r["id"] for r in moved["results"]]
    assert ids[0] == new and old in ids
    flagged = next(r for r in moved["results"] if r["id"] == old)
    assert flagged["outdated"] is True
    notice = next(n for n in moved["notices"] if n.startswith("OUTDATED"))
    assert "rack B3" in notice and "2026-10-02" in notice and new in notice

    for question in ("What is the IP address of atlas-7?", "Which team owns atlas-7?"):
        kept = cli.search(question)
        assert kept["status"] == "found", question
        first = kept["results"][0]
        assert first["id"] == old and first["outdated"] is False, question
        assert not any("OUTDATED" in n for n in kept["notices"]), question
        assert "OUTDATED" not in cli("search", question), question
