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


# ---------------------------------------------------------------------- hostile notes
BOMB = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "tags: *i\n"
    "title: *i\n"
    "date: *i\n"
    "project: *i\n"
    "aliases: *i\n"
    "created: *i\n"
    "---\n"
    "Laughs..\n"
)
"""A "billion laughs" front matter: 423 bytes that expand to nine billion strings."""


def _vault_with(tmp_path: Path, name: str, note: str | bytes) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir(exist_ok=True)
    (vault / "Queue.md").write_text(
        "---\ntitle: Queue choice\n---\nHeron uses NATS JetStream for its work queue.\n"
    )
    data = note.encode("utf-8") if isinstance(note, str) else note
    (vault / name).write_bytes(data)
    return vault


def test_ingest_of_a_note_whose_front_matter_is_an_alias_bomb_keeps_it_as_text(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    assert len(BOMB.encode()) == 423
    vault = _vault_with(tmp_path, "bomb.md", BOMB)
    run = ihmt("ingest", str(vault), "--path", str(store), "--json")
    assert run.code == 0, run.err
    data = run.json()
    assert data["notices"] == [] and data["skipped"] == []
    [warning] = data["warnings"]
    assert warning.startswith("vault/bomb.md: ") and "YAML aliases" in warning
    assert "kept as text" in warning
    found = ihmt("search", "heron work queue", "--path", str(store), "--json").json()
    assert found["results"][0]["title"] == "Queue choice"


def test_ingest_of_a_note_with_ten_megabytes_of_front_matter_skips_it_and_says_why(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    value = "v" * 1000
    lines = [f"k{number}: {value}\n" for number in range(10_000)]
    note = "---\n" + "".join(lines) + "---\nThe body of an enormous note.\n"
    assert len(note) > 10_000_000
    vault = _vault_with(tmp_path, "huge.md", note)
    (vault / "middle.md").write_text("---\n" + "".join(lines[:1500]) + "---\nMiddle body.\n")
    before = len(list((store / "layer0").rglob("*.txt")))
    run = ihmt("ingest", str(vault), "--path", str(store), "--json")
    assert run.code == 0, run.err
    data = run.json()
    skipped = {item["path"]: item["reason"] for item in data["skipped"]}
    assert set(skipped) == {"vault/huge.md", "vault/middle.md"}
    assert skipped["vault/huge.md"] == skipped["vault/middle.md"]
    assert skipped["vault/huge.md"].startswith("its front matter is longer than 65,536 characters")
    assert data["leaves"] == 1  # only Queue.md
    assert len(list((store / "layer0").rglob("*.txt"))) == before + 1
    text = ihmt("ingest", str(vault), "--path", str(store))
    assert text.code == 0, text.err
    assert "skipped vault/huge.md: its front matter" in text.err


def test_ingest_of_an_export_or_store_skips_links_leading_out(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    secret_home = tmp_path / "victim"
    secret_home.mkdir()
    history = secret_home / ".bash_history"
    history.write_text("mysql -u root -h zanzibar-db-07\n")
    export = tmp_path / "export"
    assert ihmt("export", "--format", "markdown", "-o", str(export), "--path", str(store)).code == 0
    (export / "_global" / "evil.md").symlink_to(history)
    outside = tmp_path / "outside"
    head = {"leaf_id": "L-x-0001-aaaaaaaaaa", "timestamp": "2024-01-01T00:00:00Z",
            "domain": "x", "data_type": "GENERIC", "tags": []}  # fmt: skip
    outside.write_text(
        f"<<<IHMT-META\n{json.dumps(head)}\nIHMT-META>>>\nThe quetzal vault code is 4471.\n"
    )
    other = tmp_path / "other-store"
    (other / "layer0" / "x").mkdir(parents=True)
    (other / "root.json").write_text("{}")
    (other / "layer0" / "x" / "e.txt").symlink_to(outside)
    fresh = tmp_path / "fresh"
    assert ihmt("init", "--path", str(fresh)).code == 0
    run = ihmt("ingest", str(export), str(other), "--path", str(fresh), "--json")
    assert run.code == 0, run.err
    skipped = {item["path"]: item["reason"] for item in run.json()["skipped"]}
    assert skipped == {
        "export/_global/evil.md": "a link leading out of the folder",
        "other-store/layer0/x/e.txt": "a link leading out of the folder",
    }
    for query in ("zanzibar mysql root", "quetzal vault code"):
        data = ihmt("search", query, "--path", str(fresh), "--json", "--full").json()
        contents = " ".join(hit["content"] for hit in data["results"])
        assert "zanzibar" not in contents and "quetzal" not in contents


def test_export_refuses_to_overwrite_a_file_unless_forced(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    bashrc = tmp_path / ".bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH\n")
    run = ihmt("export", "-o", str(bashrc), "--path", str(store))
    assert run.code == 1 and run.err_lines == [
        f"ihmt: error: {bashrc} already exists; give --force to overwrite it"
    ]
    assert bashrc.read_text() == "export PATH=$HOME/bin:$PATH\n"
    forced = ihmt("export", "-o", str(bashrc), "--force", "--path", str(store))
    assert forced.code == 0, forced.err
    assert len(bashrc.read_text().splitlines()) == 6


@pytest.mark.parametrize("force", [False, True], ids=["plain", "forced"])
def test_export_refuses_any_path_inside_the_store(
    ihmt: Ihmt, store: Path, tmp_path: Path, force: bool
) -> None:
    config = store / "ihmt.config.json"
    before = config.read_bytes()
    link = tmp_path / "innocent.jsonl"
    link.symlink_to(config)
    extra = ["--force"] if force else []
    for fmt, target in (
        ("jsonl", config),
        ("jsonl", link),
        ("jsonl", store / "new.jsonl"),
        ("markdown", store / "exported"),
        ("markdown", store),
    ):
        run = ihmt("export", "--format", fmt, "-o", str(target), *extra, "--path", str(store))
        assert run.code == 1, (target, run.err)
        assert len(run.err_lines) == 1 and "inside the memory's store" in run.err, run.err
    assert config.read_bytes() == before
    assert not (store / "new.jsonl").exists() and not (store / "exported").exists()
    found = ihmt("search", "staging PostgreSQL", "--path", str(store), "--json")
    assert found.code == 0 and found.json()["status"] == "found"


def test_export_into_a_previous_export_replaces_it_and_refuses_other_folders(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    path = ("--path", str(store))
    out = tmp_path / "notes"
    assert ihmt("export", "--format", "markdown", "-o", str(out), *path).code == 0
    first = sorted(p.relative_to(out) for p in out.rglob("*.md"))
    assert len(first) == 6
    leaf_id = ihmt("search", "Benidorm paella", "--json", *path).json()["results"][0]["id"]
    assert ihmt("forget", leaf_id, "--yes", *path).code == 0
    again = ihmt("export", "--format", "markdown", "-o", str(out), *path, "--json")
    assert again.code == 0, again.err
    assert again.json()["memories"] == 5
    assert len(sorted(out.rglob("*.md"))) == 5  # the forgotten memory's note is gone
    notes = tmp_path / "vault"
    notes.mkdir()
    (notes / "mine.md").write_text("keep me")
    run = ihmt("export", "--format", "markdown", "-o", str(notes), "--force", *path)
    assert run.code == 1 and "not empty" in run.err
    assert [p.name for p in notes.iterdir()] == ["mine.md"]


def test_ingest_labels_front_matter_problems_as_warnings_not_contradictions(
    ihmt: Ihmt, store: Path, tmp_path: Path
) -> None:
    vault = _vault_with(tmp_path, "Broken.md", "---\ntitle: [oops\n---\nQuokkas sleep all day.\n")
    text = ihmt("ingest", str(vault), "--path", str(store))
    assert text.code == 0, text.err
    assert "CONTRADICTION" not in text.out
    assert "WARNING: vault/Broken.md: its front matter is not valid YAML" in text.out
    data = ihmt("ingest", str(vault), "--path", str(store), "--json").json()
    assert data["notices"] == []
    assert [w.split(":")[0] for w in data["warnings"]] == ["vault/Broken.md"]
