"""Every ``.py`` file of the running interpreter's standard library reconstructs exactly."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from ihmt_chunkers import split

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# Installed third-party packages live under the same folder; they are not the stdlib.
FILES = sorted(
    path
    for path in STDLIB.rglob("*.py")
    if path.relative_to(STDLIB).parts[0] not in ("site-packages", "dist-packages")
)
SHARDS = 6


def test_the_standard_library_has_at_least_500_files() -> None:
    assert len(FILES) >= 500, STDLIB


@pytest.mark.parametrize("shard", range(SHARDS))
def test_standard_library_files_reconstruct_byte_for_byte(shard: int) -> None:
    failures: list[str] = []
    checked = 0
    for path in FILES[shard::SHARDS]:
        try:
            text = path.read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # a few test files are deliberately not UTF-8
        if "\x00" in text:
            continue
        blocks = split(text, doc_type="code", language="python", mode="symbol")
        checked += 1
        if "".join(b.text for b in blocks) != text or not all(b.text for b in blocks):
            failures.append(str(path))
    assert checked >= 500 // SHARDS
    assert failures == []
