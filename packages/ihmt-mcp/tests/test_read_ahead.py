"""A folder large enough is read a few files ahead by a worker process: what it stores,
skips and warns about is what reading each file here gives."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from ihmt_mcp import Memory
from ihmt_mcp._ingest import IngestOptions
from ihmt_mcp._read_ahead import READ_AHEAD_BYTES, ReadAhead, read_file
from ihmt_store import StoreConfig

TOKEN = "ghp_" + "a1B2c3D4e5" * 4


def _folder(folder: Path) -> list[str]:
    """Notes over READ_AHEAD_BYTES, one holding a token, one binary, one in Latin-1."""
    folder.mkdir()
    lines = [
        f"2024-{1 + n % 12:02d}-{1 + n % 28:02d} Host node{n} runs agent {n}"
        " for the nightly builds of the billing team."
        for n in range(13500)
    ]
    per = len(lines) // 3
    for part in range(3):
        text = "\n".join(lines[part * per : (part + 1) * per]) + "\n"
        (folder / f"log-{part}.md").write_text(text, "utf-8")
    (folder / "leak.md").write_text(f"2024-02-02 the deploy token is {TOKEN}\n", "utf-8")
    (folder / "blob.md").write_bytes(bytes(range(256)) * 64)
    (folder / "old.txt").write_bytes("2024-03-03 Café crème for the team\n".encode("latin-1"))
    assert sum(p.stat().st_size for p in folder.iterdir()) > READ_AHEAD_BYTES
    return lines[: 3 * per]


def test_a_large_folder_read_ahead_stores_what_reading_here_gives(tmp_path: Path) -> None:
    lines = _folder(tmp_path / "notes")
    memory = Memory.init(tmp_path / "store", semantic="off")
    try:
        report = memory.ingest([tmp_path / "notes"], project="")
        held = {line for leaf in memory.store.iter_leaves() for line in leaf.text.splitlines()}
        assert set(lines) <= held and TOKEN not in "".join(held)
        assert sorted(report.skipped) == [
            ("notes/blob.md", "binary"),
            ("notes/leak.md", "holds a GitHub token"),
        ]
        assert any("old.txt" in w for w in report.warnings)  # its encoding was guessed
    finally:
        memory.close()


_COMPARE = """
import sys
from pathlib import Path
from ihmt_facts import DEFAULT_PATTERNS
from ihmt_mcp._ingest import IngestOptions
from ihmt_mcp._read_ahead import ReadAhead, read_file
from ihmt_store import StoreConfig

config, options = StoreConfig(), IngestOptions(project="")
jobs = [(f"notes/{p.name}", p) for p in sorted(Path(sys.argv[1]).iterdir())]
ahead = ReadAhead(config, options, jobs, DEFAULT_PATTERNS)
try:
    assert ahead.forked, "no worker"
    for name, full in jobs:
        read = ahead.take(name, full)
        assert read == read_file(config, options, name, full, DEFAULT_PATTERNS), name
        assert set(read[3]) == {leaf.leaf_id for leaf in read[0]}, name
finally:
    ahead.close()
print("same")
"""


def test_the_worker_reads_each_file_as_this_process_does(tmp_path: Path) -> None:
    # In a process of its own: the worker is forked only from a process of one thread.
    _folder(tmp_path / "notes")
    done = subprocess.run(
        [sys.executable, "-c", _COMPARE, str(tmp_path / "notes")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stderr


def test_with_other_threads_running_the_files_are_read_here(tmp_path: Path) -> None:
    _folder(tmp_path / "notes")
    config, options = StoreConfig(), IngestOptions(project="")
    jobs = [(f"notes/{p.name}", p) for p in sorted((tmp_path / "notes").iterdir())]
    gate = threading.Event()
    other = threading.Thread(target=gate.wait)
    other.start()
    try:
        ahead = ReadAhead(config, options, jobs)
        try:
            assert not ahead.forked
            for name, full in jobs:
                assert ahead.take(name, full) == read_file(config, options, name, full)
        finally:
            ahead.close()
    finally:
        gate.set()
        other.join()
