"""Large files ingest a segment at a time: bounded memory, nothing lost, nothing cut.

The segment and whole-read sizes are made small here, so that a file of a few hundred
kilobytes crosses many segment ends (the real ones: 2 MiB read whole, 1 MiB segments).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

import ihmt_mcp._ingest as memory_module
from ihmt_chunkers import chunk
from ihmt_mcp import Memory, Settings

NAMES = ("Ilsa Varga", "Tomo Renk", "Petra Hollis", "Oren Madsu", "Wen Castell")
PROJECTS = ("nimbus", "quill", "harbor", "lattice")
NOTES = (
    "Met {name} about the {project} rollout; we agreed to ship on Thursday.",
    "The {project} staging database now runs PostgreSQL {n}.",
    "{name} prefers reviews in the morning, before standup.",
    "I moved to {city} this week.",
    "Ticket {project}-{n} closed: the cache now expires after {n} minutes.",
    "Long day. Paired with {name} on the {project} importer until late.\n"
    "  Follow-up: write the migration notes.",
)


@pytest.fixture
def small_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_module, "MAX_FILE_BYTES", 8 * 1024)
    monkeypatch.setattr(memory_module, "STREAM_SEGMENT", 4 * 1024)
    monkeypatch.setattr(memory_module, "_MAX_CARRY", 16 * 1024)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    settings = Settings.for_home(tmp_path / "home", cwd=tmp_path)
    mem = Memory.open(dataclasses.replace(settings, semantic="off"))
    yield mem
    mem.close()


def _journal(entries: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = ["# Work log\n", "\n"]
    for i in range(entries):
        day = f"2024-{1 + (i // 60) % 12:02d}-{1 + (i // 3) % 28:02d}"
        note = rng.choice(NOTES).format(
            name=rng.choice(NAMES),
            project=rng.choice(PROJECTS),
            n=rng.randint(10, 99),
            city=rng.choice(("Lisbon", "Porto", "Ghent")),
        )
        lines.append(f"{day} {note}\n")
    return "".join(lines)


def _texts_in_order(memory: Memory) -> list[str]:
    leaves = sorted(memory.store.iter_leaves(), key=lambda leaf: leaf.span.start_line)
    return [leaf.text for leaf in leaves]


@pytest.mark.usefixtures("small_segments")
def test_a_large_journal_is_stored_in_segments_as_if_it_were_read_whole(
    memory: Memory, tmp_path: Path
) -> None:
    text = _journal(3000)
    path = tmp_path / "worklog.md"
    path.write_text(text, encoding="utf-8")
    seen: list[tuple[int, int, str]] = []

    report = memory.ingest([path], project="", progress=lambda *a: seen.append(a))

    whole = chunk(text, "worklog.md")
    stored = _texts_in_order(memory)
    assert "".join(stored) == text  # nothing lost, nothing added
    assert stored == [b.text for b in whole.blocks if b.text.strip()]  # and nothing cut
    assert report.leaves == len(stored) and report.skipped == ()
    spans = sorted(
        (leaf.span.start_line, leaf.span.end_line) for leaf in memory.store.iter_leaves()
    )
    assert spans[0][0] == 1 and spans[-1][1] == text.count("\n")
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(spans))
    # Progress follows the bytes, more than once for this one file, up to its size.
    done = [d for d, _, _ in seen]
    assert len(seen) > 10 and done == sorted(done)
    assert seen[-1][:2] == (path.stat().st_size, path.stat().st_size)
    # Dated entries carry their dates, and their facts reached the timeline.
    assert any(leaf.timestamp.startswith("2024-12") for leaf in memory.store.iter_leaves())
    assert {f.value for f in memory.facts("user", "location")} == {"Lisbon", "Porto", "Ghent"}

    again = memory.ingest([path], project="")  # unchanged: the same leaves, no duplicates
    assert again.leaves == report.leaves
    assert memory.store.stats().leaves == report.leaves


@pytest.mark.usefixtures("small_segments")
def test_a_secret_deep_in_a_large_file_skips_it_before_anything_is_written(
    memory: Memory, tmp_path: Path
) -> None:
    text = _journal(2000)
    cut = len(text) * 3 // 4
    secret = "ghp_" + "a1B2c3D4e5" * 4
    path = tmp_path / "export.txt"
    path.write_text(f"{text[:cut]}\nthe deploy token is {secret}\n{text[cut:]}", encoding="utf-8")

    seen: list[tuple[int, int, str]] = []
    report = memory.ingest([path], progress=lambda *a: seen.append(a))

    assert report.leaves == 0
    assert "GitHub token" in dict(report.skipped)["export.txt"]
    assert seen == [(path.stat().st_size, path.stat().st_size, "export.txt")]
    assert memory.store.stats().leaves == 0


@pytest.mark.usefixtures("small_segments")
def test_a_private_key_across_a_segment_end_is_still_found(memory: Memory, tmp_path: Path) -> None:
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "".join("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
                  for _ in range(40))
        + "-----END OPENSSH PRIVATE KEY-----\n"
    )  # fmt: skip
    before = "x" * (memory_module.STREAM_SEGMENT - 100) + "\n"
    path = tmp_path / "dump.txt"
    path.write_text(_journal(400) + before + key + _journal(400), encoding="utf-8")

    report = memory.ingest([path])

    assert report.leaves == 0 and "private key" in dict(report.skipped)["dump.txt"]


@pytest.mark.usefixtures("small_segments")
def test_a_large_binary_file_is_skipped(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "blob.log"
    path.write_bytes(_journal(500).encode() + b"\x00\x01" * 4000)

    report = memory.ingest([path])

    assert report.leaves == 0 and dict(report.skipped)["blob.log"] == "binary"


@pytest.mark.usefixtures("small_segments")
def test_a_line_with_no_end_is_stored_in_pieces_losing_nothing(
    memory: Memory, tmp_path: Path
) -> None:
    text = " ".join(f"word{i}" for i in range(40_000))  # ~300 KB, no line end at all
    path = tmp_path / "one-line.txt"
    path.write_text(text, encoding="utf-8")

    report = memory.ingest([path])

    stored = sorted((leaf.text for leaf in memory.store.iter_leaves()), key=text.find)
    assert "".join(stored) == text
    assert report.leaves == len(stored) > 1
    assert (
        max(len(t) for t in stored) <= 2 * memory_module._MAX_CARRY + memory_module.STREAM_SEGMENT
    )


@pytest.mark.usefixtures("small_segments")
def test_a_large_note_keeps_its_front_matter_out_of_the_text_as_a_small_one_does(
    memory: Memory, tmp_path: Path
) -> None:
    head = "---\ntitle: Orvane work log\ntags: [orvane, log]\nproject: orvane\n---\n\n"
    body = _journal(2000)
    path = tmp_path / "orvane.md"
    path.write_text(head + body, encoding="utf-8")

    report = memory.ingest([path])

    stored = _texts_in_order(memory)
    assert "".join(stored) == body and report.leaves == len(stored) > 1
    leaves = list(memory.store.iter_leaves())
    assert {leaf.project for leaf in leaves} == {"orvane"}
    assert all({"orvane", "log"} <= set(leaf.tags) for leaf in leaves)
    first = min(leaves, key=lambda leaf: leaf.span.start_line)
    assert first.extra.get("title") == "Orvane work log"
    assert first.span.start_line == head.count("\n") + 1  # lines of the file, as it is
