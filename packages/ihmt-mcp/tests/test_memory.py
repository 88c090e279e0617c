from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from ihmt_facts import JOURNAL_NAME, Timeline
from ihmt_mcp import (
    ContentTooLargeError,
    EmptyContentError,
    FileRefusedError,
    Memory,
    SecretRefusedError,
    Settings,
)
from ihmt_store import LeafNotFoundError, Store


def test_open_creates_the_store_on_first_use(settings: Settings) -> None:
    assert not settings.store_path.exists()
    with Memory.open(settings) as memory:
        assert (settings.store_path / "ihmt.config.json").exists()
        assert memory.stats().leaves == 0


def test_settings_read_the_environment_once(tmp_path: Path) -> None:
    env = {"IHMT_HOME": str(tmp_path / "h"), "IHMT_PROJECT": "falcon"}
    settings = Settings.from_env(env, cwd=tmp_path)
    assert settings.store_path == tmp_path / "h" / "ihmt_memory"
    assert settings.projects_dir == tmp_path / "h" / "ihmt_projects"
    assert settings.default_project() == "falcon"
    other = Settings.from_env(
        {"IHMT_HOME": str(tmp_path), "IHMT_PROJECTS_DIR": str(tmp_path / "p")}
    )
    assert other.projects_dir == tmp_path / "p"


def test_project_defaults_to_the_git_root_of_the_working_directory(tmp_path: Path) -> None:
    repo = tmp_path / "falcon"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert Settings.for_home(tmp_path / "h", cwd=repo / "src").default_project() == "falcon"
    assert Settings.for_home(tmp_path / "h", cwd=tmp_path).default_project() == ""


def test_init_applies_options_and_force_keeps_every_leaf(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "m", branch_factor=3, target_tokens=200)
    assert memory.store.config.branch_factor == 3
    saved = memory.save("We deploy on Fridays only after the smoke tests pass.")
    memory.close()
    again = Memory.init(tmp_path / "m", force=True)
    assert again.store.read_leaf(saved.ids[0]).text.startswith("We deploy")
    assert again.store.config.branch_factor == 3


def test_save_files_stores_and_reports_the_memory(memory: Memory) -> None:
    result = memory.save(
        "We decided to use Pulumi for the falcon scheduler because stacks are typed.",
        project="falcon",
        date="2026-02-03",
    )
    assert len(result.ids) == 1
    leaf = memory.store.read_leaf(result.ids[0])
    assert leaf.text.startswith("We decided to use Pulumi")
    assert leaf.project == "falcon"
    assert leaf.timestamp == "2026-02-03T00:00:00Z"
    assert result.filed_as.domain == leaf.domain
    assert "kind:decision" in result.filed_as.tags
    text = result.render()
    assert result.ids[0] in text and "project falcon" in text and "2026-02-03" in text
    assert result.to_json()["replaced"]["status"] == "none"


def test_saving_the_same_text_twice_keeps_one_leaf(memory: Memory) -> None:
    first = memory.save("The CI runner image is ubuntu-24.04.", date="2026-01-01")
    second = memory.save("The CI runner image is ubuntu-24.04.", date="2026-01-01")
    assert first.ids == second.ids
    assert memory.stats().leaves == 1


def test_domain_and_type_overrides_are_honoured(memory: Memory) -> None:
    result = memory.save("Grandma's flan: 4 eggs, 500 ml milk.", domain="process.cooking")
    assert result.filed_as.domain == "process.cooking"
    with pytest.raises(ValueError, match="content_type"):
        memory.save("anything at all", content_type="spreadsheet")
    with pytest.raises(ValueError, match="date"):
        memory.save("anything at all", date="yesterday-ish")


def test_empty_and_huge_saves_are_refused_and_write_nothing(memory: Memory) -> None:
    with pytest.raises(EmptyContentError):
        memory.save("   \n ")
    with pytest.raises(ContentTooLargeError) as info:
        memory.save("word " * 50_000)
    assert info.value.limit == 200_000
    assert memory.stats().leaves == 0


def test_a_temporal_save_takes_each_entrys_own_date(memory: Memory) -> None:
    result = memory.save(
        "2024-03-11: moved the staging database to db02.\n\n"
        "2024-05-02: rotated the backup schedule to nightly.\n",
        content_type="temporal",
    )
    stamps = sorted(memory.store.read_leaf(i).timestamp[:10] for i in result.ids)
    assert stamps == ["2024-03-11", "2024-05-02"]


def test_a_contradicting_fact_returns_the_notice_and_flags_the_old_memory(
    memory: Memory,
) -> None:
    old = memory.save("I live in Madrid.", date="2024-03-11", project="")
    new = memory.save("I moved to Valencia now.", date="2026-02-03", project="")
    assert new.notices == (
        "On 2024-03-11 you said user location = 'Madrid', but on 2026-02-03 you updated to "
        "'Valencia'.",
    )
    assert "CONTRADICTION" in new.render()
    assert memory.store.read_leaf(old.ids[0]).outdated_by is not None
    assert memory.search("where do I live?").best.id == new.ids[0]  # type: ignore[union-attr]


def test_replaces_with_a_clear_winner_supersedes_it(memory: Memory) -> None:
    old = memory.save("Staging runs PostgreSQL 16 on db01.", project="falcon", date="2025-01-01")
    memory.save("The falcon frontend is built with Svelte.", project="falcon", date="2025-01-02")
    new = memory.save(
        "Staging moved to PostgreSQL 17.",
        project="falcon",
        replaces="staging postgresql 16",
        date="2026-01-01",
    )
    assert new.replaced.status == "replaced"
    assert new.replaced.replaced == old.ids
    leaf = memory.store.read_leaf(old.ids[0])
    assert leaf.outdated_by is not None and leaf.outdated_by.by == new.ids[0]
    answer = memory.search("which PostgreSQL does staging run?", project="falcon")
    assert answer.best is not None and answer.best.id == new.ids[0]
    assert any("OUTDATED" in n for n in answer.notices)


def test_replaces_with_several_close_candidates_lists_them_and_changes_nothing(
    memory: Memory,
) -> None:
    a = memory.save("Luis Marín reviews the billing pull requests.", project="falcon")
    b = memory.save("Luis García owns the billing on-call rota.", project="falcon")
    new = memory.save("Carmen now owns billing.", project="falcon", replaces="Luis billing")
    assert new.replaced.status == "ambiguous"
    assert set(new.replaced.candidates) == {a.ids[0], b.ids[0]}
    for old in (a, b):
        assert f'mark_outdated(old_id="{old.ids[0]}", new_id="{new.ids[0]}")' in (
            new.replaced.message
        )
        assert memory.store.read_leaf(old.ids[0]).outdated_by is None
    settled = memory.mark_outdated(a.ids[0], new.ids[0])
    assert "OUTDATED" in settled
    assert memory.store.read_leaf(a.ids[0]).outdated_by is not None


def test_replaces_never_touches_another_projects_memory(memory: Memory) -> None:
    other = memory.save("Staging runs PostgreSQL 16.", project="heron", date="2025-01-01")
    new = memory.save(
        "Staging moved to PostgreSQL 17.",
        project="falcon",
        replaces="staging postgresql 16",
        date="2026-01-01",
    )
    assert new.replaced.status == "not_found"
    assert memory.store.read_leaf(other.ids[0]).outdated_by is None


def test_mark_outdated_and_restore_check_their_ids(memory: Memory) -> None:
    a = memory.save("The build uses Gradle 7.", date="2024-01-01")
    b = memory.save("The deploy script lives in ops/deploy.sh.", date="2025-01-01")
    with pytest.raises(LeafNotFoundError):
        memory.mark_outdated("L-nope-0000-0000000000", b.ids[0])
    with pytest.raises(ValueError, match="itself"):
        memory.mark_outdated(a.ids[0], a.ids[0])
    memory.mark_outdated(a.ids[0], b.ids[0])
    with pytest.raises(ValueError, match=f"new_id={b.ids[0]}"):
        memory.restore(a.ids[0], corrected_by=a.ids[0])
    assert memory.store.read_leaf(a.ids[0]).outdated_by is not None
    undone = memory.restore(a.ids[0], corrected_by=b.ids[0])
    assert undone.restored and undone.corrected_by == b.ids[0]
    assert undone.reason == "marked outdated" and undone.corrected_on == b.timestamp
    assert "current again" in undone.render()
    assert undone.to_json()["message"] == undone.render()
    assert memory.store.read_leaf(a.ids[0]).outdated_by is None
    answer = memory.search("Gradle 7 build", detail="full")
    assert answer.best is not None and answer.best.id == a.ids[0]
    assert not answer.best.outdated and not answer.notices
    again = memory.restore(a.ids[0])
    assert not again.restored and "nothing changed" in again.render()
    with pytest.raises(LeafNotFoundError):
        memory.restore("L-nope-0000-0000000000")


def test_search_prefers_the_current_project_and_names_the_other_one(memory: Memory) -> None:
    for n, topic in enumerate(("linting", "releases", "backups", "tracing", "billing")):
        memory.save(f"Note {n}: {topic} is handled by the platform team.", project="")
    mine = memory.save("The staging host is merlin, behind the VPN.", project="falcon")
    theirs = memory.save("The staging host is osprey, behind the VPN.", project="heron")
    answer = memory.search("staging host", project="falcon")
    assert answer.best is not None and answer.best.id == mine.ids[0]
    assert "from project falcon" in answer.compact and "comes from" not in answer.compact
    answer = memory.search("staging host", project="heron")
    assert answer.best is not None and answer.best.id == theirs.ids[0]
    other = memory.search("the osprey staging host", project="falcon")
    assert other.best is not None and other.best.id == theirs.ids[0]
    assert "comes from project heron" in other.compact


def test_forget_deletes_the_leaf_and_every_excerpt_of_it(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "m", branch_factor=2)
    keep = memory.save("The deploy window is Tuesday morning.", domain="ops", date="2025-01-01")
    gone = memory.save(
        "Oops the zanzibarquux vault phrase was pasted here.", domain="ops", date="2025-01-02"
    )
    memory.save("Backups run nightly at 02:00.", domain="ops", date="2025-01-03")
    memory.save("Monitoring lives in Grafana.", domain="ops", date="2025-01-04")
    memory.consolidate(force=True)
    assert memory.store.entry(gone.ids[0]).parent_id is not None  # type: ignore[union-attr]
    result = memory.forget(gone.ids[0], reason="pasted by mistake")
    assert result.id == gone.ids[0] and result.branches_refreshed
    assert "zanzibarquux" not in result.render()
    with pytest.raises(LeafNotFoundError):
        memory.store.read_leaf(gone.ids[0])
    for path in (tmp_path / "m").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".txt"):
            assert "zanzibarquux" not in path.read_text(encoding="utf-8"), path
    assert memory.search("zanzibarquux vault phrase").status == "not_found"
    assert memory.store.read_leaf(keep.ids[0])
    stats = memory.stats()
    assert stats.leaves == 3 and stats.unreachable == 0
    with pytest.raises(LeafNotFoundError):
        memory.forget(gone.ids[0], reason="again")


def test_a_forgotten_memory_leaves_no_vector_in_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("numpy")
    from ihmt_navigator import VectorIndex

    monkeypatch.setattr(VectorIndex, "snapshot_from", 2)  # a snapshot from two memories
    memory = Memory.init(tmp_path / "m", semantic="on")
    try:
        saved = [memory.save(text, date="2025-01-0" + str(i + 1)) for i, text in enumerate(
            ["The deploy window is Tuesday morning.", "The vault phrase is kept offline.",
             "Backups run nightly at 02:00."])]  # fmt: skip
        vectors = memory.vectors
        if vectors is None:
            pytest.skip("the semantic extra did not load")
        memory.search("deploy window")
        snapshots = list(memory.store.state_file("x").parent.glob("*.vectors"))
        assert len(snapshots) == 1 and saved[1].ids[0].encode() in snapshots[0].read_bytes()
        memory.forget(saved[1].ids[0])
        assert not snapshots[0].exists()
        fresh = Memory(memory.store, semantic="on")  # another process, later
        assert fresh.search("deploy window").status == "found"
        assert saved[1].ids[0] not in {i for i, _ in fresh.vectors.query("vault").top(3)}  # type: ignore[union-attr]
    finally:
        memory.close()


def test_forget_drops_the_facts_drawn_from_the_memory(memory: Memory) -> None:
    old = memory.save("I live in Madrid.", date="2024-03-11", project="")
    new = memory.save("I moved to Valencia now.", date="2026-02-03", project="")
    assert memory.store.read_leaf(old.ids[0]).outdated_by is not None
    journal = memory.store.state_file(JOURNAL_NAME)
    header = journal.read_bytes().splitlines()[0]  # a rebuild writes a new epoch

    result = memory.forget(new.ids[0], reason="wrong")

    assert (result.facts_removed, result.corrections_cleared) == (1, 1)
    state = memory.timeline.active("user", "location")
    assert state is not None and state.value == "Madrid"
    assert [s.value for s in memory.timeline.history("user")] == ["Madrid"]
    assert memory.conflicts() == ()
    assert memory.store.read_leaf(old.ids[0]).outdated_by is None
    # dropped in place, not by rebuilding the timeline
    assert journal.read_bytes().splitlines()[0] == header
    assert b"Valencia" not in journal.read_bytes()
    _assert_timeline_matches_a_rebuild(memory)


def test_forget_of_a_correction_makes_the_memory_it_corrected_current_again(
    memory: Memory,
) -> None:
    old = memory.save("I work at Acme.", date="2024-03-11", project="")
    fix = memory.save("Correction: that changed, see the new notes.", date="2025-01-01", project="")
    memory.mark_outdated(old.ids[0], fix.ids[0])
    assert memory.timeline.active("user", "employer") is None  # retired by the correction

    result = memory.forget(fix.ids[0], reason="wrong memory")

    assert (result.facts_removed, result.corrections_cleared) == (0, 1)
    assert memory.store.read_leaf(old.ids[0]).outdated_by is None
    state = memory.timeline.active("user", "employer")
    assert state is not None and (state.value, state.sources) == ("Acme", (old.ids[0],))
    _assert_timeline_matches_a_rebuild(memory)


def _assert_timeline_matches_a_rebuild(memory: Memory) -> None:
    """The memory's timeline equals one rebuilt from the leaves by another store object."""
    timeline = memory.timeline

    def dump(t: Timeline) -> tuple[object, ...]:
        return (
            tuple(t.history(s) for s in t.subjects()),
            t.contradictions(),
            t.facts(),
        )

    incremental = dump(timeline)
    other = Store.open(memory.store.path)
    try:
        Timeline(other).rebuild()
        assert dump(Timeline(other)) == incremental
    finally:
        other.close()
    assert dump(timeline) == incremental  # it followed the rebuilt file


def test_stats_report_the_shape_of_the_tree(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "m", branch_factor=2)
    for n in range(5):
        memory.save(f"Service number {n} listens on port 80{n}0.", domain="ops")
    stats = memory.stats().to_json()
    for key in ("leaves", "branches", "depth", "domains", "unconsolidated", "unreachable", "bytes"):
        assert key in stats
    assert stats["leaves"] == 5 and stats["branches"] >= 2 and stats["depth"] >= 1
    assert stats["unreachable"] == 0 and stats["domains"] == {"ops": 5}
    outline = memory.tree(depth=3)
    assert outline and outline[0].level == 0
    assert sum(1 for item in outline if item.kind == "leaf") == 5


def test_ingest_reads_folders_as_a_developer_sees_them(memory: Memory, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / ".git").mkdir(parents=True)
    (docs / "node_modules").mkdir()
    (docs / "runbook.md").write_text("# Restart\n\n1. Drain the node.\n2. Restart it.\n")
    (docs / "node_modules" / "x.md").write_text("ignored")
    (docs / ".git" / "HEAD").write_text("ref: main")
    (docs / "logo.png").write_bytes(b"\x89PNG\x00\x00binary")
    (docs / "leak.txt").write_text("password = Hunter2!xyz\n")
    seen: list[str] = []
    report = memory.ingest([docs], progress=lambda done, total, name: seen.append(name))
    assert report.leaves >= 1
    skipped = dict(report.skipped)
    assert skipped["docs/logo.png"] == "binary"
    assert "password" in skipped["docs/leak.txt"]
    assert all("node_modules" not in s and ".git" not in s for s in seen)
    text = memory.ingest(text="2024-01-02: ran 5 km", content_type="temporal")
    assert text.leaves == 1
    assert memory.search("drain the node restart").status == "found"


def test_a_second_memory_object_sees_the_first_ones_saves(settings: Settings) -> None:
    first = Memory.open(settings)
    second = Memory.open(settings)
    assert second.search("quokka").status == "not_found"
    saved = first.save("The team mascot is a quokka named Pip.")
    found = second.search("quokka mascot")
    assert found.best is not None and found.best.id == saved.ids[0]
    first.close()
    second.close()


def test_a_refused_secret_reaches_neither_disk_nor_logs(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "ghp_" + "a1B2c3D4e5" * 4
    with caplog.at_level("DEBUG"), pytest.raises(SecretRefusedError) as info:
        memory.save(f"The CI token is {secret}, keep it handy.")
    assert info.value.kinds == ("a GitHub token",)
    assert secret not in str(info.value)
    assert secret not in caplog.text
    for path in memory.store.path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes()
    assert Store.open(memory.store.path).stats().leaves == 0


def test_ingesting_a_latin1_file_stores_the_right_text_and_says_how_it_was_read(
    memory: Memory, tmp_path: Path
) -> None:
    notes = tmp_path / "notas.txt"
    notes.write_bytes(
        "Reunión con José en Cádiz: la migración de facturación se hará en marzo.\n".encode(
            "latin-1"
        )
    )
    report = memory.ingest([notes])
    assert report.leaves == 1
    assert any(n.startswith("notas.txt: not UTF-8: read as") for n in report.warnings)
    found = memory.search("reunión José Cádiz")
    assert found.best is not None and "Reunión con José en Cádiz" in found.best.content


def test_ingesting_a_folder_reports_what_the_walk_left_out_and_refuses_a_pipe(
    memory: Memory, tmp_path: Path
) -> None:
    folder = tmp_path / "proj"
    (folder / ".ssh").mkdir(parents=True)
    (folder / "README.md").write_text("# proj\n\nThe proj service renders invoices.\n")
    (folder / ".ssh" / "id_rsa").write_text("not really a key\n")
    (folder / "id_ed25519").write_text("not really a key either\n")
    report = memory.ingest([folder])
    assert report.leaves >= 1
    skipped = dict(report.skipped)
    assert any(name.endswith("id_ed25519") for name in skipped)
    assert report.files == 1 + len(report.skipped)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(FileRefusedError):
        memory.ingest([pipe])


def test_corrections_list_replaces_marks_that_no_fact_change_shows(memory: Memory) -> None:
    memory.save("I live in Madrid.", date="2024-01-01", project="")
    moved = memory.save("I live in Lyon now.", date="2025-01-01", project="")
    assert moved.notices  # a fact change: conflicts shows it, corrections need not
    old = memory.save("Staging runs PostgreSQL 15.", date="2025-01-10", project="falcon")
    new = memory.save(
        "Staging upgraded: PostgreSQL 17 now.",
        date="2025-06-01",
        project="falcon",
        replaces="staging PostgreSQL 15",
    )
    assert new.replaced.replaced == old.ids
    (fix,) = memory.corrections()
    assert (fix.old_id, fix.new_id, fix.project) == (old.ids[0], new.ids[0], "falcon")
    assert fix.old_date.startswith("2025-01-10") and fix.new_date.startswith("2025-06-01")
    assert fix.reason == "replaced: staging PostgreSQL 15"
    assert '"Staging runs PostgreSQL 15."' in fix.notice and "PostgreSQL 17" in fix.notice
    assert memory.corrections("project:falcon") == (fix,)
    assert memory.corrections("project:heron") == ()
    assert memory.corrections("user") == ()
    memory.restore(old.ids[0])
    assert memory.corrections() == ()


@pytest.mark.skipif(os.name == "nt", reason="POSIX cache folders")
def test_the_model_cache_lives_in_the_users_cache_folder_never_in_the_memory() -> None:
    base = {"IHMT_HOME": "/data/me/.ihmt", "HOME": "/home/me"}
    assert Settings.from_env(base).cache_dir == Path("/home/me/.cache/ihmt")
    xdg = Settings.from_env({**base, "XDG_CACHE_HOME": "/var/cache/me"})
    assert xdg.cache_dir == Path("/var/cache/me/ihmt")
    explicit = Settings.from_env({**base, "IHMT_CACHE_DIR": "/tmp/models"})
    assert explicit.cache_dir == Path("/tmp/models")
    assert Settings.from_env({"IHMT_HOME": "/x"}).cache_dir is None
    assert Settings.from_env({**base, "IHMT_SEMANTIC": " OFF "}).semantic == "off"


def test_a_memory_edited_by_hand_answers_with_its_new_text_and_facts(tmp_path: Path) -> None:
    memory = Memory.init(tmp_path / "m", semantic="off")
    try:
        saved = memory.save("I live in Madrid, near Retiro park.", date="2024-03-11")
        entry = memory.store.entry(saved.ids[0])
        assert entry is not None
        path = memory.store.path / entry.path
        path.write_bytes(path.read_bytes().replace(b"Madrid, near Retiro", b"Lisbon, in Alfama"))

        result = memory.search("Where do I live? Lisbon")
        assert result.status == "found" and "Alfama" in result.compact
        assert memory.store.edited == []  # refreshed
        assert [f.value for f in memory.facts("user", "location")] == ["Lisbon"]
        assert memory.search("Madrid Retiro").status == "not_found"
    finally:
        memory.close()


def test_a_memory_that_must_answer_fast_can_leave_the_scan_for_hand_edits(
    tmp_path: Path,
) -> None:
    memory = Memory.init(tmp_path / "m", semantic="off")
    try:
        saved = memory.save("The build cache lives on the shared volume.")
        entry = memory.store.entry(saved.ids[0])
        assert entry is not None
        path = memory.store.path / entry.path
        path.write_bytes(path.read_bytes().replace(b"shared volume", b"nvme scratch disk"))
        memory.hand_edit_check_s = None  # as a one-shot hook does
        assert memory.search("nvme scratch disk").status == "not_found"
        memory.hand_edit_check_s = 0.0
        assert memory.search("nvme scratch disk").status == "found"
    finally:
        memory.close()


def test_one_shot_processes_look_for_hand_edits_once_a_minute_between_them(
    tmp_path: Path,
) -> None:
    import os
    import time

    from ihmt_mcp._searching import HAND_EDIT_MARK

    def one_shot(query: str) -> str:  # what each `ihmt search` does, in a process of its own
        memory = Memory.open(Settings.for_home(tmp_path, cwd=tmp_path))
        memory.hand_edit_shared = True
        try:
            return memory.search(query).status
        finally:
            memory.close()

    saver = Memory.init(tmp_path / "ihmt_memory", semantic="off")
    saved = saver.save("The build cache lives on the shared volume.")
    entry = saver.store.entry(saved.ids[0])
    assert entry is not None
    path, mark = saver.store.path / entry.path, saver.store.state_file(HAND_EDIT_MARK)
    saver.close()
    assert one_shot("shared volume") == "found" and mark.exists()  # the first one looks
    path.write_bytes(path.read_bytes().replace(b"shared volume", b"nvme scratch disk"))
    assert one_shot("nvme scratch disk") == "not_found"  # another looked seconds ago
    old = time.time() - 61
    os.utime(mark, (old, old))
    assert one_shot("nvme scratch disk") == "found"  # a minute later, the next one looks


def test_a_model_that_fails_to_load_leaves_search_exactly_lexical(tmp_path: Path) -> None:
    words_only = Memory.init(tmp_path / "m", semantic="off")
    texts = [
        "Laptop backups go to a Backblaze B2 bucket every night.",
        "The team lunch moved to Thursdays.",
        "Staging runs PostgreSQL 17 on port 5432.",
    ]
    for text in texts:
        words_only.save(text, date="2025-01-10")
    settings = Settings.for_home(tmp_path, cwd=tmp_path)
    broken = Memory(
        words_only.store,
        settings=replace(settings, semantic_model="model2vec:/no/such/model"),
        semantic="on",
    )
    # Not installed here, or installed and the folder is missing: either way it says why.
    assert not broken.semantic_mode.active and broken.semantic_mode.reason
    for question in ("Where do backups go?", "¿A dónde van las copias?", "staging port"):
        a, b = broken.search(question), words_only.search(question)
        assert (a.status, [h.id for h in a.results], a.compact) == (
            b.status,
            [h.id for h in b.results],
            b.compact,
        )
    words_only.close()
