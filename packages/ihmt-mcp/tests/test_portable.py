"""Import and export through ``Memory``: front matter, note folders, JSONL, IHMT stores."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_mcp import Memory, PortableMemory, write_jsonl, write_markdown
from ihmt_mcp._front_matter import (
    MAX_FRONT_MATTER,
    MAX_FRONT_MATTER_ALIASES,
    MAX_FRONT_MATTER_DEPTH,
    MAX_FRONT_MATTER_VALUES,
    FrontMatterTooLargeError,
    read_front_matter,
)
from ihmt_mcp._portable import NoteMeta


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    memory = Memory.init(tmp_path / "store", project="")
    yield memory
    memory.close()


def _leaf_of(memory: Memory, query: str) -> tuple[str, object]:
    answer = memory.search(query, detail="full")
    assert answer.status == "found", (query, answer.compact)
    assert answer.best is not None
    return answer.best.id, memory.store.read_leaf(answer.best.id)


# ---------------------------------------------------------------------- front matter
def test_front_matter_is_split_off_byte_for_byte() -> None:
    meta, body, problem = read_front_matter(
        "---\ntitle: Falcon\ntags: [a, '#b']\n---\n\nBody line.\n  indented\n"
    )
    assert meta == {"title": "Falcon", "tags": ["a", "#b"]} and not problem
    assert body == "Body line.\n  indented\n"
    assert read_front_matter("No front matter.\n---\n") == ({}, "No front matter.\n---\n", "")
    meta, body, problem = read_front_matter("---\ntitle: [unclosed\n---\nText\n")
    assert meta == {} and body.startswith("---") and "not valid YAML (line" in problem


def test_an_obsidian_vault_imports_cleanly(mem: Memory, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / ".obsidian" / "workspace.json").write_text('{"main": {"id": "abc"}}')
    (vault / ".trash").mkdir()
    (vault / ".trash" / "old.md").write_text("A deleted note about the zebrafish tank.\n")
    (vault / "Projects").mkdir()
    (vault / "Projects" / "Falcon scheduler.md").write_text(
        "---\n"
        "title: Falcon scheduler decision\n"
        "tags: [infra, '#decision']\n"
        "date: 2024-05-02\n"
        "project: falcon\n"
        "aliases: [scheduler]\n"
        "---\n"
        "We chose Nomad over Kubernetes for the falcon scheduler: the team is three people.\n"
        "See [[Deploys]].\n"
    )
    (vault / "Daily").mkdir()
    (vault / "Daily" / "2024-06-01.md").write_text(
        "Paired with Odile on the flaky billing export; the fix was a missing index.\n"
    )
    (vault / "Broken.md").write_text("---\ntitle: [oops\n---\nThe broken note mentions quokkas.\n")
    (vault / "attachments").mkdir()
    (vault / "attachments" / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00" + bytes(300))

    report = mem.ingest([vault])

    assert ("vault/attachments/diagram.png", "binary") in report.skipped
    assert any("Broken.md" in n and "not valid YAML" in n for n in report.warnings)
    sources = {e.source for e in mem.store.iter_entries("leaf")}
    assert not any(".obsidian" in s or ".trash" in s for s in sources), sources
    leaf_id, leaf = _leaf_of(mem, "Nomad Kubernetes scheduler")
    assert leaf.text.startswith("We chose Nomad")  # type: ignore[attr-defined]
    assert "title:" not in leaf.text and "---" not in leaf.text  # type: ignore[attr-defined]
    assert leaf.timestamp.startswith("2024-05-02")  # type: ignore[attr-defined]
    assert leaf.project == "falcon"  # type: ignore[attr-defined]
    assert {"infra", "decision"} <= set(leaf.tags)  # type: ignore[attr-defined]
    entry = mem.store.entry(leaf_id)
    assert entry is not None and entry.title == "Falcon scheduler decision"
    # a note without front matter and a note whose front matter is broken: kept, whole
    assert _leaf_of(mem, "flaky billing export index")[1].project == ""  # type: ignore[attr-defined]
    assert "quokkas" in _leaf_of(mem, "quokkas")[1].text  # type: ignore[attr-defined]


def test_a_basic_memory_folder_imports_cleanly(mem: Memory, tmp_path: Path) -> None:
    notes = tmp_path / "basic"
    notes.mkdir()
    (notes / "backups.md").write_text(
        "---\n"
        "title: Backups\n"
        "type: note\n"
        "permalink: backups\n"
        "tags:\n- sqlite\n- ops\n"
        "created: 2025-02-14T09:30:00\n"
        "---\n\n"
        "# Backups\n\n"
        "## Observations\n"
        "- [decision] Litestream streams the SQLite file to the bucket every second #backup\n\n"
        "## Relations\n"
        "- relates_to [[Storage]]\n"
    )
    (notes / "empty.md").write_text("---\ntitle: Only metadata\n---\n")
    report = mem.ingest([notes])
    assert ("basic/empty.md", "only front matter") in report.skipped
    _, leaf = _leaf_of(mem, "Litestream SQLite bucket")
    text = leaf.text  # type: ignore[attr-defined]
    assert text.startswith("# Backups") and "permalink" not in text and "type: note" not in text
    assert leaf.timestamp.startswith("2025-02-14")  # type: ignore[attr-defined]
    assert {"sqlite", "ops"} <= set(leaf.tags)  # type: ignore[attr-defined]


def test_a_jsonl_export_of_another_tool_imports_cleanly(mem: Memory, tmp_path: Path) -> None:
    lines = [
        {"text": "Ines prefers tabs in the Makefile.", "created_at": "2023-09-14T10:00:00Z"},
        {"memory": "The heron API rate limit is 600 requests a minute.", "tags": "api, heron"},
        "not an object",
        {"role": "system"},
    ]
    path = tmp_path / "other.jsonl"
    path.write_text(
        "\n".join(json.dumps(x) if not isinstance(x, str) else x for x in lines) + "\n\n"
    )
    report = mem.ingest([path])
    assert report.leaves == 2
    assert report.skipped == (("other.jsonl:3", report.skipped[0][1]),)
    assert "2 line(s) without a memory text" in report.skipped[0][1]
    _, tabs = _leaf_of(mem, "tabs Makefile")
    assert tabs.timestamp == "2023-09-14T10:00:00Z"  # type: ignore[attr-defined]
    _, limit = _leaf_of(mem, "heron rate limit")
    assert {"api", "heron"} <= set(limit.tags)  # type: ignore[attr-defined]
    again = mem.ingest([path])
    assert again.leaves == 2 and mem.stats().leaves == 2  # same leaves, no duplicates


def test_a_secret_in_an_import_is_skipped_and_said(mem: Memory, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    key = "ghp_" + "a1B2c3D4e5" * 4
    path.write_text(
        json.dumps({"content": f"The CI token is {key}", "source": "ci-note"})
        + "\n"
        + json.dumps({"content": "Builds run on the blue runners."})
        + "\n"
    )
    report = mem.ingest([path])
    assert report.leaves == 1
    assert [s for s, why in report.skipped if "GitHub" in why] == ["ci-note"]
    assert key not in json.dumps(report.to_json())


# ---------------------------------------------------------------------- round trip
def _filled(memory: Memory) -> dict[str, str]:
    ids: dict[str, str] = {}
    ids["madrid"] = memory.save("I live in Madrid, near Retiro park.", date="2024-03-11").ids[0]
    ids["valencia"] = memory.save("I moved to Valencia, in Ruzafa.", date="2026-02-03").ids[0]
    ids["pg15"] = memory.save(
        "The staging host runs PostgreSQL 15.", date="2025-01-10", project="falcon"
    ).ids[0]
    ids["pg17"] = memory.save(
        "Staging now runs PostgreSQL 17 on stg-db-01.",
        date="2025-06-01",
        project="falcon",
        replaces="staging PostgreSQL 15",
    ).ids[0]
    ids["lint"] = memory.save(
        "We lint with ruff, line length 100.", project="heron", tags=("style",)
    ).ids[0]
    return ids


QUERIES = ("where do I live", "staging PostgreSQL", "ruff line length", "Retiro park")


@pytest.mark.parametrize("fmt", ["jsonl", "markdown"])
def test_export_then_import_gives_the_same_answers(tmp_path: Path, fmt: str) -> None:
    source = Memory.init(tmp_path / "a", project="")
    ids = _filled(source)
    exported = list(source.export())
    assert len(exported) == 5
    by_id = {m.id: m for m in exported}
    assert by_id[ids["pg15"]].outdated_by == ids["pg17"]
    assert by_id[ids["pg15"]].project == "falcon" and by_id[ids["lint"]].tags[0] == "style"
    assert by_id[ids["madrid"]].outdated_by == ids["valencia"]  # the fact change's mark
    if fmt == "jsonl":
        target_path = tmp_path / "out.jsonl"
        with target_path.open("w", encoding="utf-8") as out:
            assert write_jsonl(exported, out) == 5
    else:
        target_path = tmp_path / "out"
        assert write_markdown(exported, target_path) == 5
        assert len(list((target_path / "falcon").glob("*.md"))) == 2
    target = Memory.init(tmp_path / "b", project="")
    report = target.ingest([target_path])
    assert report.leaves == 5 and not report.skipped
    for query in QUERIES:
        for project in ("", "falcon"):
            before = source.search(query, project=project, detail="full")
            after = target.search(query, project=project, detail="full")
            assert after.status == before.status, query
            assert [(h.id, h.outdated, h.content) for h in after.results] == [
                (h.id, h.outdated, h.content) for h in before.results
            ], query
            assert after.compact == before.compact, query
    assert [c.notice for c in target.conflicts()] == [c.notice for c in source.conflicts()]
    assert [c.old_id for c in target.corrections()] == [ids["pg15"]]
    again = target.ingest([target_path])
    assert again.leaves == 5 and target.stats().leaves == 5
    source.close()
    target.close()


def test_export_filters_by_project(mem: Memory) -> None:
    ids = _filled(mem)
    assert {m.id for m in mem.export(project="falcon")} == {ids["pg15"], ids["pg17"]}
    assert {m.id for m in mem.export(project="")} == {ids["madrid"], ids["valencia"]}
    out = io.StringIO()
    write_jsonl(mem.export(project="heron"), out)
    (line,) = out.getvalue().splitlines()
    data = json.loads(line)
    assert data["content"] == "We lint with ruff, line length 100."
    assert data["project"] == "heron" and data["outdated_by"] is None and data["timestamp"]


# ---------------------------------------------------------------------- the original's store
def _leaf_file(folder: Path, head: dict[str, object], text: str) -> None:
    domain = str(head["domain"])
    (folder / "layer0" / domain).mkdir(parents=True, exist_ok=True)
    (folder / "layer0" / domain / f"{head['leaf_id']}.txt").write_text(
        "<<<IHMT-META\n" + json.dumps(head, indent=2) + "\nIHMT-META>>>\n" + text,
        encoding="utf-8",
    )


def original_store(home: Path) -> Path:
    """A store as the original IHMT-MEMORY writes it, from its documented format: leaves
    with the <<<IHMT-META header (leaf_id, timestamp, data_type, domain, tags, parent_id,
    span, checksum, extra), branches, root.json, state/catalog.json, state/facts.json."""
    store = home / "ihmt_memory"
    (store / "layers" / "1").mkdir(parents=True)
    (store / "state").mkdir()
    (store / "ihmt.config.json").write_text(
        json.dumps({"branch_factor": 8, "target_tokens": 2000, "summarizer_backend": "heuristic"})
    )
    leaves = [
        ("L-personal-0001-8fc7cc9db8", "2024-03-11T09:00:00Z", "PERSONAL", "personal",
         "## 2024-03-11\nI live in Madrid, in a small flat near Retiro park.\n", {}),
        ("L-personal-0005-6cd0a05605", "2026-02-03T18:00:00Z", "PERSONAL", "personal",
         "## 2026-02-03\nI moved to Valencia. The new flat is in Ruzafa.\n", {}),
        ("L-software.infra-0000-3b1f0a9c2d", "2025-01-10T00:00:00Z", "GENERIC",
         "software.infra", "The staging host stg-db-01 runs PostgreSQL 15 on port 5432.\n",
         {"outdated_by": {"leaf_id": "L-software.infra-0001-77aa01bc3e",
                          "date": "2025-06-01T00:00:00Z",
                          "reason": "replaced: staging PostgreSQL 15"}}),
        ("L-software.infra-0001-77aa01bc3e", "2025-06-01T00:00:00Z", "GENERIC",
         "software.infra", "Staging now runs PostgreSQL 17 on stg-db-01.\n", {}),
        ("L-software.java-0001-84130ee123", "2026-09-09T17:45:00Z", "CODE", "software.java",
         "public Optional<String> reserveStock(Sku sku, int quantity) {\n  return hold(sku);\n}\n",
         {}),
    ]  # fmt: skip
    for leaf_id, when, kind, domain, text, more in leaves:
        head: dict[str, object] = {
            "leaf_id": leaf_id,
            "timestamp": when,
            "data_type": kind,
            "domain": domain,
            "tags": [f"type:{kind.lower()}"],
            "parent_id": f"N1-{domain}-5571a7baac",
            "span": {"start_line": 1, "end_line": text.count("\n")},
            "checksum": "sha256:0",
            "extra": {"context": "public final class InventoryService {"} if kind == "CODE" else {},
            **more,
        }
        _leaf_file(store, head, text)
    (store / "layer0" / "personal" / "L-personal-0009-badbadbad0.txt").write_text(
        "<<<IHMT-META\n{not json\nIHMT-META>>>\nlost\n"
    )
    (store / "layers" / "1" / "N1-personal-5571a7baac.json").write_text(
        json.dumps({"node_id": "N1-personal-5571a7baac", "layer": 1, "summary": "Madrid"})
    )
    (store / "root.json").write_text(json.dumps({"domains": {"personal": {}}, "counters": {}}))
    (store / "state" / "catalog.json").write_text(json.dumps({"L-personal-0001-8fc7cc9db8": {}}))
    timeline = {
        "user::location": [
            {"subject": "user", "attribute": "location", "value": "Madrid",
             "timestamp": "2024-03-11T09:00:00Z", "source_leaf": "L-personal-0001-8fc7cc9db8",
             "status": "HISTORICAL", "valid_from": "2024-03-11T09:00:00Z",
             "valid_to": "2026-02-03T18:00:00Z", "superseded_by": "L-personal-0005-6cd0a05605"},
            {"subject": "user", "attribute": "location", "value": "Valencia",
             "timestamp": "2026-02-03T18:00:00Z", "source_leaf": "L-personal-0005-6cd0a05605",
             "status": "ACTIVE", "valid_from": "2026-02-03T18:00:00Z", "valid_to": None,
             "superseded_by": None},
        ],
        "user::employer": [
            {"value": "Northwind", "timestamp": "2025-03-01T00:00:00Z",
             "source_leaf": "L-personal-0005-6cd0a05605", "status": "ACTIVE"},
        ],
    }  # fmt: skip
    (store / "state" / "facts.json").write_text(json.dumps({"timelines": timeline}))
    return store


def test_an_original_ihmt_memory_store_imports_with_dates_domains_and_history(
    mem: Memory, tmp_path: Path
) -> None:
    home = tmp_path / "old-home"
    original_store(home)
    report = mem.ingest([home])  # its IHMT_HOME: the ihmt_memory/ folder inside is found
    assert report.leaves == 5
    assert [why for name, why in report.skipped if "badbadbad0" in name] == [
        report.skipped[0][1]
    ] and "not valid JSON" in report.skipped[0][1]
    madrid = mem.store.read_leaf("L-personal-0001-8fc7cc9db8")
    assert madrid.timestamp == "2024-03-11T09:00:00Z" and madrid.domain == "personal"
    assert madrid.data_type == "PERSONAL" and madrid.text.startswith("## 2024-03-11\n")
    assert madrid.outdated_by is not None and madrid.outdated_by.by == "L-personal-0005-6cd0a05605"
    pg15 = mem.store.read_leaf("L-software.infra-0000-3b1f0a9c2d")
    assert pg15.outdated_by is not None and pg15.outdated_by.by.endswith("77aa01bc3e")
    code = mem.store.read_leaf("L-software.java-0001-84130ee123")
    assert code.domain == "software.java" and code.extra["context"].startswith("public final")
    where = mem.search("where do I live")
    assert where.status == "found" and "Valencia" in where.compact and "OUTDATED" in where.compact
    staging = mem.search("staging host PostgreSQL", detail="full")
    assert staging.best is not None and "PostgreSQL 17" in staging.best.content
    assert any(h.outdated for h in staging.results)
    assert mem.timeline.active("user", "employer").value == "Northwind"  # type: ignore[union-attr]
    assert any("Madrid" in c.notice and "Valencia" in c.notice for c in mem.conflicts())
    assert [c.old_id for c in mem.corrections()] == ["L-software.infra-0000-3b1f0a9c2d"]
    assert mem.stats().unreachable == 0
    assert mem.ingest([home]).leaves == 5 and mem.stats().leaves == 5  # idempotent


def test_importing_a_store_into_itself_is_refused(mem: Memory) -> None:
    from ihmt_mcp import FileRefusedError

    with pytest.raises(FileRefusedError, match="own store"):
        mem.ingest([mem.store.path])


def test_portable_memory_json_is_the_documented_object() -> None:
    item = PortableMemory(text="x", id="L-a-0000-0123456789", timestamp="2025-01-01T00:00:00Z")
    assert list(item.to_json()) == [
        "id", "content", "timestamp", "project", "domain", "type", "tags", "source", "title",
        "outdated_by", "corrected_on", "reason",
    ]  # fmt: skip


def test_an_import_reports_progress_in_bytes_like_a_file_ingest(
    mem: Memory, tmp_path: Path
) -> None:
    texts = [f"Note {n}: the heron build cache lives on volume {n}." for n in range(30)]
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join(json.dumps({"text": t}) for t in texts) + "\n")
    seen: list[tuple[int, int]] = []
    mem.ingest([path], progress=lambda done, total, _name: seen.append((done, total)))
    total = sum(len(t.encode("utf-8")) for t in texts)
    assert seen and all(t == total for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1][0] == total


# ---------------------------------------------------------------------- hostile front matter
def _nested_aliases(levels: int, width: int) -> str:
    """Front matter whose each level lists the one below ``width`` times, by alias."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels):
        items = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{items}]")
    lines.append(f"tags: *a{levels - 1}")
    return "---\n" + "\n".join(lines) + "\n---\nBody.\n"


def test_front_matter_aliases_are_bounded_by_count_and_by_expansion() -> None:
    at_cap = "---\nbase: &b [x, y]\n" + "".join(
        f"k{n}: *b\n" for n in range(MAX_FRONT_MATTER_ALIASES)
    ) + "---\nBody.\n"  # fmt: skip
    meta, body, problem = read_front_matter(at_cap)
    assert not problem and body == "Body.\n" and meta["k0"] == ["x", "y"]
    over = at_cap.replace("---\nBody", f"k{MAX_FRONT_MATTER_ALIASES}: *b\n---\nBody")
    meta, body, problem = read_front_matter(over)
    assert meta == {} and body == over and "YAML aliases" in problem and "kept as text" in problem
    # Few aliases, but each repeats a large list: bounded by the values they stand for.
    width = MAX_FRONT_MATTER_VALUES // 4
    wide = "---\na: &a [" + ", ".join(["x"] * width) + "]\nb: [*a, *a, *a, *a, *a]\n---\nB.\n"
    meta, body, problem = read_front_matter(wide)
    assert meta == {} and "values" in problem and "kept as text" in problem
    deep = "---\nk: " + "[" * (MAX_FRONT_MATTER_DEPTH + 2) + "]" * (MAX_FRONT_MATTER_DEPTH + 2)
    meta, _, problem = read_front_matter(deep + "\n---\nB.\n")
    assert meta == {} and "levels" in problem


def test_front_matter_longer_than_the_cap_is_refused_and_at_the_cap_is_read() -> None:
    def note(size: int) -> str:
        value = "v" * (size - len("\nk: \n"))
        return f"---\nk: {value}\n---\nThe body.\n"

    # The front matter runs from the line break after the opening '---' to the closing one.
    meta, body, problem = read_front_matter(note(MAX_FRONT_MATTER))
    assert not problem and body == "The body.\n" and len(meta["k"]) > 60_000
    with pytest.raises(FrontMatterTooLargeError, match="65,536 characters"):
        read_front_matter(note(MAX_FRONT_MATTER + 1))
    # Never closed, in a long text: still metadata that goes on and on.
    with pytest.raises(FrontMatterTooLargeError):
        read_front_matter("---\n" + "".join(f"k{n}: {'v' * 90}\n" for n in range(2000)))
    # A long note that merely starts with a rule is text, read whole.
    prose = "---\n" + "A paragraph of plain prose, no keys at all.\n\n" * 3000
    assert read_front_matter(prose) == ({}, prose, "")


_YAML_BITS = st.sampled_from(
    [
        "title: x", "tags: [a, b]", "&a [x, y]", "*a", "k: &a {b: *a}", "<<: *a", "- *a",
        "date: 2024-13-45", "date: 9999-12-31", "? [a]", "!!python/object:os.system x",
        "'", '"', "[[[[", "{", "k: |\n  text", "\t", "\ufeff", "---", "...", "%YAML 1.1",
        "k: " + "x" * 5000, "n: 1" + "0" * 5000, "k: !!binary AAAA", "k: &a\n  - *a",
    ]
)  # fmt: skip


@st.composite
def _front_matters(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.one_of(_YAML_BITS, st.text(max_size=40)), max_size=12))
    closing = draw(st.sampled_from(["---\n", "----  \n", "", "---"]))
    return "---\n" + "\n".join(lines) + "\n" + closing + draw(st.text(max_size=60))


@settings(max_examples=50, deadline=None)
@given(_front_matters())
def test_any_front_matter_is_read_or_refused_never_raises(text: str) -> None:
    try:
        meta, body, problem = read_front_matter(text)
    except FrontMatterTooLargeError:
        return
    assert isinstance(meta, dict) and isinstance(body, str) and isinstance(problem, str)
    assert not (meta and problem)
    NoteMeta.of(meta)  # whatever the values, never a traceback


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    note=st.one_of(
        _front_matters().map(lambda text: text.encode("utf-8", "surrogatepass")),
        st.binary(max_size=300).map(lambda data: b"---\n" + data),
        st.just(_nested_aliases(9, 9).encode()),
        st.integers(1, 4).map(lambda n: ("---\nk: " + "v" * (MAX_FRONT_MATTER * n)).encode()),
    )
)
def test_ingest_of_any_note_stores_it_or_skips_it_with_a_reason(
    tmp_path_factory: pytest.TempPathFactory, note: bytes
) -> None:
    folder = tmp_path_factory.mktemp("notes")
    (folder / "note.md").write_bytes(note)
    memory = Memory.init(folder / "store", project="")
    try:
        report = memory.ingest([folder / "note.md"])
    finally:
        memory.close()
    assert report.files == 1
    assert (report.leaves >= 1) != bool(report.skipped), report
    assert all(reason for _, reason in report.skipped)
    assert not report.notices  # no fact changed: problems are warnings
