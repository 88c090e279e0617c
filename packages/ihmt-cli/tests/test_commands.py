"""Every command through a real ``ihmt`` subprocess on a real store: text, --json, exit codes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ihmt_mcp import Memory, Settings

Ihmt = Callable[..., Any]


def test_help_lists_every_command(ihmt: Ihmt) -> None:
    run = ihmt("--help")
    assert run.code == 0
    for name in (
        "init", "ingest", "save", "consolidate", "rebuild", "search", "ask", "tree",
        "stats", "facts", "conflicts", "forget", "restore", "mcp", "version", "demo",
    ):  # fmt: skip
        assert f"  {name}" in run.out, name
    assert ihmt().code == 0  # no command: the help, not an error


def test_init_creates_a_store_then_reopens_it(ihmt: Ihmt, tmp_path: Path) -> None:
    path = tmp_path / "new"
    first = ihmt("init", "--path", str(path), "--branch-factor", "3", "--json")
    assert first.code == 0, first.err
    data = first.json()
    assert data["created"] is True and data["config"]["branch_factor"] == 3
    assert (path / "ihmt.config.json").is_file()
    again = ihmt("init", "--path", str(path))
    assert again.code == 0
    assert "Opened the existing memory" in again.out


def test_init_force_discards_derived_state_only(
    ihmt: Ihmt, store: Path, leaf_count: Callable[[Path], int]
) -> None:
    before = leaf_count(store)
    run = ihmt("init", "--force", "--path", str(store))
    assert run.code == 0, run.err
    assert "no memory was touched" in run.out
    assert leaf_count(store) == before
    assert ihmt("search", "Ruzafa", "--path", str(store), "--json").json()["status"] == "found"


def test_default_path_is_ihmt_home(ihmt: Ihmt, home: Path) -> None:
    assert ihmt("init").code == 0
    assert (home / "ihmt_memory" / "ihmt.config.json").is_file()
    assert ihmt("save", "The office plant is a ficus called Fernando.").code == 0
    assert ihmt("search", "ficus", "--json").json()["status"] == "found"


@pytest.mark.parametrize(
    "order",
    ["before", "after", "split"],
)
def test_path_and_json_work_on_both_sides_of_the_command(
    ihmt: Ihmt, store: Path, order: str
) -> None:
    p = ["--path", str(store)]
    if order == "before":
        args = [*p, "--json", "stats"]
    elif order == "after":
        args = ["stats", *p, "--json"]
    else:
        args = ["--json", "stats", *p]
    run = ihmt(*args)
    assert run.code == 0, run.err
    assert run.json()["leaves"] == 6


def test_save_prints_what_was_filed_and_json_has_the_contract(ihmt: Ihmt, store: Path) -> None:
    text = ihmt("save", "We picked Pulumi for the scheduler.", "--path", str(store))
    assert text.code == 0, text.err
    assert text.out.startswith("SAVED memory L-")
    run = ihmt(
        "save", "Staging now runs PostgreSQL 17 on port 5432.", "--date", "2026-02-20",
        "--replaces", "staging PostgreSQL 15", "--path", str(store), "--json",
    )  # fmt: skip
    assert run.code == 0, run.err
    data = run.json()
    assert set(data) >= {"ids", "filed_as", "notices", "replaced"}
    assert data["replaced"]["status"] == "replaced"
    assert data["timestamp"].startswith("2026-02-20")
    found = ihmt("search", "which PostgreSQL does staging run", "--path", str(store), "--json")
    result = found.json()
    assert result["results"][0]["id"] == data["ids"][0]
    assert any("OUTDATED" in n for n in result["notices"]) or "OUTDATED" in result["compact"]


def test_save_reads_stdin_and_reports_a_contradiction(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("save", "-", "--path", str(store), "--date", "2026-09-01", input="I live in Paris.")
    assert run.code == 0, run.err
    assert "CONTRADICTION" in run.out


def test_search_json_has_every_documented_field(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("search", "Ruzafa flat", "--path", str(store), "--json", "--top-k", "3")
    assert run.code == 0, run.err
    data = run.json()
    for key in (
        "status", "results", "notices", "confidence", "compact", "tokens",
        "node_reads", "leaf_reads", "bytes_read",
    ):  # fmt: skip
        assert key in data, key
    assert data["status"] == "found"
    hit = data["results"][0]
    for key in (
        "id", "content", "timestamp", "domain", "project", "source", "path", "score", "outdated",
    ):  # fmt: skip
        assert key in hit, key
    assert "Ruzafa" in hit["content"]


def test_search_compact_is_exactly_what_the_agent_gets(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("search", "Luis Ortega dog", "--path", str(store), "--json")
    settings = Settings.for_home(store.parent)
    # Words only, as the child runs (see conftest.child_env).
    memory = Memory.open(
        Settings(
            home=settings.home,
            store_path=store,
            projects_dir=settings.projects_dir,
            project="",
            semantic="off",
        )
    )
    try:
        expected = memory.search("Luis Ortega dog")
    finally:
        memory.close()
    assert run.json()["compact"] == expected.compact
    assert run.json()["tokens"] == expected.tokens


def test_search_text_shows_the_answer_and_its_cost(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("search", "Ruzafa", "--full", "--path", str(store))
    assert run.code == 0
    assert run.out.startswith("FOUND")
    assert "tokens · read" in run.out
    not_found = ihmt("search", "wifi password of the Ocelot office", "--path", str(store))
    assert not_found.code == 0 and not_found.out.startswith("NOT FOUND")


def test_search_tries_other_phrasings_when_the_question_is_not_found(
    ihmt: Ihmt, store: Path
) -> None:
    asked = "What is my home town these days?"
    assert ihmt("search", asked, "--path", str(store)).out.startswith("NOT FOUND")
    run = ihmt("search", asked, "--or", "where do I live", "--path", str(store), "--json")
    assert run.code == 0, run.err
    data = run.json()
    assert data["status"] == "found" and data["query"] == asked
    assert 'answered for the phrasing "where do I live"' in data["compact"]
    many = ["--or", "a", "--or", "b", "--or", "c", "--or", "d", "--or", "e"]
    refused = ihmt("search", asked, *many, "--path", str(store))
    assert refused.code != 0 and "at most 4" in refused.err
    assert "Traceback" not in refused.err and refused.err.count("\n") == 1


def test_search_full_and_json_show_what_the_decision_weighed(ihmt: Ihmt, store: Path) -> None:
    text = ihmt("search", "Ruzafa", "--full", "--path", str(store))
    assert text.code == 0
    (line,) = [line for line in text.out.splitlines() if "decided on:" in line]
    assert "matched 1" in line and "coverage " in line
    assert "decided on:" not in ihmt("search", "Ruzafa", "--path", str(store)).out
    data = ihmt("search", "Ruzafa", "--json", "--path", str(store)).json()
    assert data["signals"]["matched"] == 1.0
    assert all(0.0 <= value <= 1.0 for value in data["signals"].values())


def test_search_as_of_answers_with_the_past(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("search", "where do I live", "--as-of", "2025-01-01", "--path", str(store), "--json")
    assert run.code == 0, run.err
    assert "Madrid" in run.json()["compact"]


def test_stats_json_and_text(ihmt: Ihmt, store: Path) -> None:
    data = ihmt("stats", "--path", str(store), "--json").json()
    for key in ("leaves", "branches", "depth", "domains", "unconsolidated", "unreachable", "bytes"):
        assert key in data, key
    assert data["unreachable"] == 0 and data["leaves"] == 6
    text = ihmt("stats", "--path", str(store))
    assert "unreachable     0" in text.out


def test_tree_outlines_domains_and_branches(ihmt: Ihmt, store: Path) -> None:
    assert ihmt("consolidate", "--force", "--path", str(store)).code == 0
    run = ihmt("tree", "--depth", "2", "--path", str(store))
    assert run.code == 0, run.err
    assert "+ " in run.out and "memories" in run.out
    items = ihmt("tree", "--path", str(store), "--json").json()["items"]
    assert items and {"level", "id", "kind", "domain", "title", "leaf_count"} <= set(items[0])


def test_facts_and_conflicts(ihmt: Ihmt, store: Path) -> None:
    facts = ihmt("facts", "--path", str(store), "--json")
    assert facts.code == 0, facts.err
    assert any(f["value"].lower() == "valencia" for f in facts.json()["facts"])
    conflicts = ihmt("conflicts", "--subject", "user", "--path", str(store), "--json").json()
    assert any("Madrid" in c["notice"] for c in conflicts["conflicts"])
    text = ihmt("conflicts", "--path", str(store))
    assert "Madrid" in text.out and "Valencia" in text.out


def test_forget_deletes_the_memory(ihmt: Ihmt, store: Path) -> None:
    hit = ihmt("search", "Toby", "--path", str(store), "--json").json()["results"][0]
    run = ihmt("forget", hit["id"], "--yes", "--reason", "test", "--path", str(store), "--json")
    assert run.code == 0, run.err
    assert run.json()["id"] == hit["id"]
    after = ihmt("search", "Toby", "--path", str(store), "--json").json()
    assert hit["id"] not in [r["id"] for r in after["results"]]
    text = ihmt("forget", hit["id"], "--yes", "--path", str(store))
    assert text.code == 1 and "no memory with id" in text.err


def test_ingest_folder_and_stdin(ihmt: Ihmt, store: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text("# Deploy\n\nDeploys go out on Tuesdays via Argo CD.\n")
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    run = ihmt("ingest", str(docs), "--tag", "docs", "--path", str(store), "--json")
    assert run.code == 0, run.err
    data = run.json()
    assert data["files"] == 2 and data["leaves"] >= 1
    assert [s["reason"] for s in data["skipped"]] == ["binary"]
    piped = ihmt("ingest", "-", "--domain", "notes", "--path", str(store), input="Zanzibar trip.")
    assert piped.code == 0, piped.err
    assert piped.out.startswith("INGESTED 1 of 1")
    assert (
        ihmt("search", "Argo CD Tuesdays", "--path", str(store), "--json").json()["status"]
        == "found"
    )


def test_consolidate_and_rebuild(ihmt: Ihmt, store: Path) -> None:
    cons = ihmt("consolidate", "--force", "--path", str(store), "--json")
    assert cons.code == 0, cons.err
    assert "branches_created" in cons.json()
    rebuilt = ihmt("rebuild", "--path", str(store))
    assert rebuilt.code == 0, rebuilt.err
    assert rebuilt.out.startswith("REBUILT · 6 leaves")
    assert ihmt("rebuild", "--path", str(store), "--json").json()["problems"] == []


def test_version(ihmt: Ihmt) -> None:
    run = ihmt("version", "--json")
    assert run.code == 0
    assert run.json()["packages"]["ihmt-mcp"] == "0.1.0"
    assert ihmt("version").out.startswith("ihmt 0.1.0")
    assert ihmt("--version").out.strip() == "ihmt 0.1.0"


def test_mcp_serve_answers_initialize_over_stdio(
    store: Path, ihmt_bin: str, ihmt_env: dict[str, str], tmp_path: Path
) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    done = subprocess.run(
        [ihmt_bin, "mcp", "serve", "--path", str(store)],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        env=ihmt_env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["id"] == 1 and "serverInfo" in reply["result"]
    assert "Traceback" not in done.stderr


def test_save_help_says_saves_are_filed_from_their_content(ihmt: Ihmt) -> None:
    run = ihmt("save", "--help")
    assert run.code == 0
    assert "default: general" not in run.out
    assert "chosen from its content" in " ".join(run.out.split())


def test_restore_undoes_a_wrong_replaces_mark(ihmt: Ihmt, store: Path) -> None:
    path = ("--path", str(store))
    saved = ihmt(
        "save", "The staging host runs PostgreSQL 17 now.", "--date", "2025-06-01",
        "--replaces", "staging PostgreSQL 15", *path, "--json",
    ).json()  # fmt: skip
    assert saved["replaced"]["status"] == "replaced"
    old = saved["replaced"]["replaced"][0]
    assert f"ihmt restore {old}" in saved["replaced"]["message"]
    assert ihmt("search", "PostgreSQL 15 port 5432", *path, "--json").json()["notices"]
    wrong = ihmt("restore", old, "--by", old, *path)
    assert wrong.code == 1 and len(wrong.err_lines) == 1 and saved["ids"][0] in wrong.err
    run = ihmt("restore", old, *path, "--json")
    assert run.code == 0, run.err
    data = run.json()
    assert data["restored"] is True and data["corrected_by"] == saved["ids"][0]
    assert data["corrected_on"].startswith("2025-06-01")
    after = ihmt("search", "PostgreSQL 15 port 5432", *path, "--json").json()
    mine = [hit for hit in after["results"] if hit["id"] == old]
    assert mine and mine[0]["outdated"] is False and not after["notices"]
    again = ihmt("restore", old, *path)
    assert again.code == 0 and "nothing changed" in again.out
    unknown = ihmt("restore", "L-nope-0000-0000000000", *path)
    assert unknown.code == 1 and unknown.err_lines == [
        "ihmt: error: no memory with id 'L-nope-0000-0000000000'; 'ihmt search QUERY --full' "
        "shows ids"
    ]


def test_search_json_gives_real_scores_and_the_outdated_memorys_text(
    ihmt: Ihmt, store: Path
) -> None:
    path = ("--path", str(store))
    new = ihmt(
        "save", "Staging moved: the staging host runs PostgreSQL 17 on port 5433.",
        "--date", "2025-06-01", "--replaces", "staging PostgreSQL 15", *path, "--json",
    ).json()  # fmt: skip
    old_id = new["replaced"]["replaced"][0]
    data = ihmt("search", "staging host PostgreSQL port", *path, "--json", "--full").json()
    hits = {hit["id"]: hit for hit in data["results"]}
    assert data["status"] == "found" and data["results"][0]["id"] == new["ids"][0]
    assert all(hit["score"] > 0 for hit in data["results"])
    assert hits[old_id]["outdated"] is True and hits[old_id]["outdated_by"] == new["ids"][0]
    assert hits[old_id]["content"] == "The staging host runs PostgreSQL 15 on port 5432."
    assert 0 < data["confidence"] <= 1


def test_search_json_scores_are_not_rounded_away_in_a_tiny_store(
    ihmt: Ihmt, tmp_path: Path
) -> None:
    path = ("--path", str(tmp_path / "tiny"))
    assert ihmt("init", *path).code == 0
    ihmt("save", "The billing service is written in Go.", *path)
    ihmt("save", "The billing dashboard is built with Svelte.", *path)
    data = ihmt("search", "billing", *path, "--json").json()
    assert data["results"] and all(hit["score"] > 0 for hit in data["results"])


def test_facts_and_conflicts_show_a_replaces_correction(ihmt: Ihmt, store: Path) -> None:
    path = ("--path", str(store))
    saved = ihmt(
        "save", "Staging database upgraded: it runs PostgreSQL 17 now.", "--date",
        "2025-06-01", "--replaces", "staging PostgreSQL 15", *path, "--json",
    ).json()  # fmt: skip
    old = saved["replaced"]["replaced"][0]
    conflicts = ihmt("conflicts", *path, "--json").json()
    assert any("Madrid" in c["notice"] for c in conflicts["conflicts"])  # facts still there
    (fix,) = conflicts["corrections"]
    assert (fix["old_id"], fix["new_id"]) == (old, saved["ids"][0])
    assert "PostgreSQL 15" in fix["old_text"] and "PostgreSQL 17" in fix["new_text"]
    assert fix["new_date"].startswith("2025-06-01") and fix["reason"].startswith("replaced")
    text = ihmt("conflicts", *path).out.splitlines()
    assert text[0].startswith("CORRECTED: On 2025-01-10")  # 2025-06-01, before the 2026 move
    assert "Valencia" in text[1]
    facts = ihmt("facts", *path, "--json").json()
    assert [c["old_id"] for c in facts["corrections"]] == [old]
    assert "Corrections:" in ihmt("facts", *path).out
    # the user's facts do not name the staging memories: filtered out
    assert ihmt("conflicts", "--subject", "user", *path, "--json").json()["corrections"] == []
    restored = ihmt("restore", old, *path)
    assert restored.code == 0
    assert ihmt("conflicts", *path, "--json").json()["corrections"] == []
