"""``ihmt export`` and ``ihmt ingest`` of notes, exports and an original IHMT-MEMORY store,
through the real ``ihmt`` command on real stores."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Ihmt = Callable[..., Any]

QUERIES = ("where do I live", "staging host PostgreSQL", "Luis")
"""A correction by fact, one by replaces=, and an AMBIGUOUS answer (the in-process test
in ihmt-mcp compares many more)."""


def _answers(ihmt: Ihmt, path: Path) -> list[tuple[str, list[tuple[str, bool, str]], str]]:
    out = []
    for query in QUERIES:
        data = ihmt("search", query, "--path", str(path), "--json", "--full").json()
        hits = [(h["id"], h["outdated"], h["content"]) for h in data["results"]]
        out.append((data["status"], hits, data["compact"]))
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "markdown"])
def test_export_then_ingest_into_a_fresh_store_gives_the_same_answers(
    ihmt: Ihmt, store: Path, tmp_path: Path, fmt: str
) -> None:
    saved = ihmt(
        "save", "The staging host runs PostgreSQL 17 now.", "--date", "2025-06-01",
        "--replaces", "staging PostgreSQL 15", "--path", str(store), "--json",
    ).json()  # fmt: skip
    assert saved["replaced"]["status"] == "replaced"
    out = tmp_path / ("export.jsonl" if fmt == "jsonl" else "export")
    run = ihmt("export", "--format", fmt, "-o", str(out), "--path", str(store), "--json")
    assert run.code == 0, run.err
    assert run.json() == {"format": fmt, "output": str(out), "memories": 7, "outdated": 2}
    fresh = tmp_path / "fresh"
    assert ihmt("init", "--path", str(fresh)).code == 0
    imported = ihmt("ingest", str(out), "--path", str(fresh), "--json")
    assert imported.code == 0, imported.err
    assert imported.json()["leaves"] == 7 and imported.json()["skipped"] == []
    assert _answers(ihmt, fresh) == _answers(ihmt, store)
    conflicts = ihmt("conflicts", "--path", str(fresh), "--json").json()
    assert [c["old_id"] for c in conflicts["corrections"]] == saved["replaced"]["replaced"]


def test_export_jsonl_to_stdout_with_every_field_and_a_project_filter(
    ihmt: Ihmt, store: Path
) -> None:
    ihmt("save", "Falcon deploys on Fridays are frozen.", "--project", "falcon",
         "--path", str(store))  # fmt: skip
    run = ihmt("export", "--path", str(store))
    assert run.code == 0, run.err
    lines = [json.loads(line) for line in run.out.splitlines()]
    assert len(lines) == 7 and "exported 7 memories" in run.err
    assert [x["timestamp"] for x in lines] == sorted(x["timestamp"] for x in lines)
    madrid = next(x for x in lines if "Madrid" in x["content"])
    assert madrid["outdated_by"] and madrid["corrected_on"].startswith("2026-02-03")
    assert set(madrid) == {
        "id", "content", "timestamp", "project", "domain", "type", "tags", "source", "title",
        "outdated_by", "corrected_on", "reason",
    }  # fmt: skip
    only = ihmt("export", "--project", "falcon", "--path", str(store)).out.splitlines()
    assert [json.loads(line)["content"] for line in only] == [
        "Falcon deploys on Fridays are frozen."
    ]


def test_export_refuses_what_it_cannot_write_in_one_line(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    path = ("--path", str(store))
    no_folder = ihmt("export", "--format", "markdown", *path)
    assert no_folder.code == 2 and "--output DIR" in no_folder.err
    both = ihmt("export", "--json", *path)
    assert both.code == 2 and "--output FILE" in both.err
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("keep me")
    full = ihmt("export", "--format", "markdown", "-o", str(busy), *path)
    assert full.code == 1 and full.err_lines == [
        f"ihmt: error: {busy} is not empty; export into a new or empty folder"
    ]
    assert (busy / "mine.txt").read_text() == "keep me"
    folder = ihmt("export", "-o", str(busy), *path)
    assert folder.code == 1 and "is a folder" in folder.err


def test_ingest_of_notes_keeps_front_matter_out_of_the_text(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / ".obsidian" / "app.json").write_text('{"legacyEditor": false}')
    (vault / "Decisions.md").write_text(
        "---\ntitle: Queue choice\ntags: [decision, heron]\ndate: 2025-04-07\n"
        "project: heron\n---\n\nHeron uses NATS JetStream for its work queue, not Kafka.\n"
    )
    run = ihmt("ingest", str(vault), "--path", str(store), "--json")
    assert run.code == 0, run.err
    assert run.json()["files"] == 1  # .obsidian/ is the app's, not the user's notes
    data = ihmt("search", "heron work queue", "--path", str(store), "--json").json()
    hit = data["results"][0]
    assert hit["content"] == "Heron uses NATS JetStream for its work queue, not Kafka.\n"
    assert hit["timestamp"].startswith("2025-04-07") and hit["project"] == "heron"
    assert hit["title"] == "Queue choice"


def test_ingest_of_an_original_ihmt_memory_home(ihmt: Ihmt, store: Path, tmp_path: Path) -> None:
    old = tmp_path / "old-home" / "ihmt_memory"
    (old / "layer0" / "software.infra").mkdir(parents=True)
    (old / "root.json").write_text('{"domains": {}}')
    leaves = [
        ("L-software.infra-0000-1111111111", "2024-02-01T00:00:00Z",
         "The build cache lives on cache-01, a 2 TB disk.\n",
         {"leaf_id": "L-software.infra-0001-2222222222", "date": "2025-08-01T00:00:00Z"}),
        ("L-software.infra-0001-2222222222", "2025-08-01T00:00:00Z",
         "The build cache moved to cache-02, a 4 TB disk.\n", None),
    ]  # fmt: skip
    for leaf_id, when, text, outdated in leaves:
        head: dict[str, Any] = {
            "leaf_id": leaf_id, "timestamp": when, "data_type": "GENERIC",
            "domain": "software.infra", "tags": ["type:generic"], "parent_id": None,
            "span": None, "checksum": "sha256:0", "extra": {},
        }  # fmt: skip
        if outdated:
            head["outdated_by"] = outdated
        (old / "layer0" / "software.infra" / f"{leaf_id}.txt").write_text(
            f"<<<IHMT-META\n{json.dumps(head, indent=2)}\nIHMT-META>>>\n{text}"
        )
    run = ihmt("ingest", str(tmp_path / "old-home"), "--path", str(store))
    assert run.code == 0, run.err
    assert run.out.startswith("INGESTED 2 of 2")
    data = ihmt("search", "build cache disk", "--path", str(store), "--json").json()
    first, second = data["results"][:2]
    assert first["id"] == "L-software.infra-0001-2222222222" and not first["outdated"]
    assert second["id"] == "L-software.infra-0000-1111111111" and second["outdated"]
    assert second["timestamp"] == "2024-02-01T00:00:00Z" and second["domain"] == "software.infra"
