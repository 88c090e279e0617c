"""`ihmt ingest` of a folder larger than one group: the memories, facts and branches are
committed first, then the command writes the branches' summaries itself; `--embed-later`
returns with the words and says what waits, and `ihmt index` writes them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ihmt_mcp import INLINE_SUMMARIES
from ihmt_store import Store

ENTRIES = INLINE_SUMMARIES + 100


def _journal(folder: Path, count: int) -> list[str]:
    folder.mkdir()
    lines = [
        f"2024-{1 + n % 12:02d}-{1 + n % 28:02d} Host node{n} runs agent {n}." for n in range(count)
    ]
    for part in range(3):
        (folder / f"log-{part}.md").write_text("\n".join(lines[part::3]) + "\n", "utf-8")
    return lines


def _run(ihmt_bin: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ihmt_bin, *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.fixture
def env(ihmt_env: dict[str, str]) -> dict[str, str]:
    return {**ihmt_env, "IHMT_SEMANTIC": "off"}


def _pending(path: Path) -> int:
    store = Store.open(path)
    try:
        return sum(
            1 for e in store.iter_entries("branch") if store.read_branch(e.id).backend == "pending"
        )
    finally:
        store.close()


def _held(path: Path) -> set[str]:
    store = Store.open(path)
    try:
        return {line for leaf in store.iter_leaves() for line in leaf.text.splitlines()}
    finally:
        store.close()


def test_ingest_ends_with_every_summary_written(
    ihmt_bin: str, env: dict[str, str], tmp_path: Path
) -> None:
    lines = _journal(tmp_path / "notes", ENTRIES)
    store = tmp_path / "store"
    assert _run(ihmt_bin, env, "--path", str(store), "-q", "init").returncode == 0
    done = _run(ihmt_bin, env, "--path", str(store), "--json", "ingest", str(tmp_path / "notes"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["leaves"] == ENTRIES and report["branches_created"] > 0
    assert not any("no summary yet" in w for w in report["warnings"])
    assert _pending(store) == 0 and set(lines) <= _held(store)


def test_embed_later_leaves_the_summaries_and_index_writes_them(
    ihmt_bin: str, env: dict[str, str], tmp_path: Path
) -> None:
    lines = _journal(tmp_path / "notes", ENTRIES)
    store = tmp_path / "store"
    assert _run(ihmt_bin, env, "--path", str(store), "-q", "init").returncode == 0
    done = _run(
        ihmt_bin, env, "--path", str(store), "--json", "ingest", str(tmp_path / "notes"),
        "--embed-later",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    waiting = _pending(store)
    assert waiting == report["branches_created"] > 0 and set(lines) <= _held(store)
    assert any(f"{waiting:,} branches of the tree have no summary yet" in w
               for w in report["warnings"])  # fmt: skip
    indexed = _run(ihmt_bin, env, "--path", str(store), "--json", "index")
    assert indexed.returncode == 0, indexed.stderr
    assert _pending(store) == 0
