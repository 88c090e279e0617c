"""What the repository promises about its own shape: modules a newcomer can read, and
documents that speak to users and contributors."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 700
"""A source module above this is cut along its seams (one concern a module)."""

INTERNAL = re.compile(r"\.\./shared\b|\bsession [0-9]+\b|\b(first|second|third) session\b")
"""What only the people building IHMT would understand: their folders, their work sessions
(lower case: "Session 4 — 8 May 2023" is a journal header the chunkers' README shows)."""


def test_no_source_module_is_over_700_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(ROOT.glob("packages/*/src/**/*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_document_speaks_of_the_builders_folders_or_sessions() -> None:
    documents = [
        *ROOT.glob("*.md"),
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("packages/*/*.md"),
        *ROOT.glob("templates/*.md"),
    ]
    assert documents
    found = {
        str(path.relative_to(ROOT)): match.group()
        for path in documents
        if (match := INTERNAL.search(path.read_text(encoding="utf-8")))
    }
    assert found == {}
