from __future__ import annotations

import json
import logging
import math
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from ihmt_store import (
    Branch,
    ChildRef,
    ConfigError,
    Correction,
    FieldWeights,
    LeafNotFoundError,
    Store,
    StoreConfig,
    StoreFormatError,
    StoreNotFoundError,
    idf,
    terms,
)
from ihmt_store._layout import leaf_rel
from ihmt_store.testing import make_leaf, store_with


def _answers(store: Store, query: str) -> list[tuple[str, float]]:
    return [(c.entry.id, round(c.score, 6)) for c in store.candidates(query, limit=10)]


def _catalog(store: Store) -> list[tuple[object, ...]]:
    return [
        (
            e.id,
            e.kind,
            e.layer,
            e.domain,
            e.project,
            e.parent_id,
            e.path,
            e.timestamp,
            e.status,
            e.outdated_by,
            e.source,
            e.title,
            e.tags,
            e.size,
        )
        for e in store.iter_entries()
    ]


# ------------------------------------------------------------------ creating and opening
def test_a_new_store_has_the_documented_layout(tmp_path: Path) -> None:
    Store.create(tmp_path / "m", StoreConfig(branch_factor=4))
    for name in ("ihmt.config.json", "root.json", "layer0", "layers", "state/index.sqlite3"):
        assert (tmp_path / "m" / name).exists(), name
    config = json.loads((tmp_path / "m" / "ihmt.config.json").read_text())
    assert config["format_version"] == 2
    assert config["branch_factor"] == 4
    assert Store.open(tmp_path / "m").config.branch_factor == 4


def test_opening_a_missing_store_says_how_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFoundError, match="ihmt init") as caught:
        Store.open(tmp_path / "nothing")
    assert caught.value.path == tmp_path / "nothing"
    assert isinstance(caught.value, FileNotFoundError)


def test_open_with_create_makes_the_store_on_first_use(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "fresh", create=True)
    assert store.stats().leaves == 0


def test_a_non_empty_foreign_folder_is_not_turned_into_a_store(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "thesis.txt").write_text("mine")
    with pytest.raises(StoreFormatError, match="not an IHMT store"):
        Store.create(tmp_path / "docs")
    assert (tmp_path / "docs" / "thesis.txt").read_text() == "mine"


def test_a_store_from_a_newer_version_is_refused_with_an_upgrade_message(tmp_path: Path) -> None:
    Store.create(tmp_path / "m")
    cfg = tmp_path / "m" / "ihmt.config.json"
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "format_version": 99}))
    with pytest.raises(StoreFormatError, match="upgrade ihmt") as caught:
        Store.open(tmp_path / "m")
    assert caught.value.found == 99


def test_an_older_store_is_upgraded_in_place_without_touching_leaves(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["remember the milk"])
    leaf_file = tmp_path / "m" / store.entry(leaves[0].leaf_id).path  # type: ignore[union-attr]
    before = leaf_file.read_bytes()
    store.close()
    cfg = tmp_path / "m" / "ihmt.config.json"
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "format_version": 0}))
    reopened = Store.open(tmp_path / "m")
    assert reopened.config.format_version == 2
    assert json.loads(cfg.read_text())["format_version"] == 2
    # A leaf already in the format-2 shape is not rewritten by the migration.
    assert leaf_file.read_bytes() == before
    assert reopened.read_leaf(leaves[0].leaf_id).text == "remember the milk"


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "not valid JSON"), ('{"branch_factor": "many"}', "branch_factor must be int")],
)
def test_a_malformed_config_is_a_clear_error_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    Store.create(tmp_path / "m")
    (tmp_path / "m" / "ihmt.config.json").write_text(content)
    with pytest.raises(ConfigError, match=message) as caught:
        Store.open(tmp_path / "m")
    assert "ihmt.config.json" in str(caught.value)


# ------------------------------------------------------------------ leaves
def test_a_saved_leaf_reads_back_exactly(store: Store) -> None:
    leaf = make_leaf(
        "Decided: Pulumi for the falcon scheduler\r\nbecause of typed stacks", domain="decisions"
    )
    store.put_leaf(leaf)
    assert store.read_leaf(leaf.leaf_id) == leaf
    entry = store.entry(leaf.leaf_id)
    assert entry is not None
    assert entry.path == f"layer0/decisions/{leaf.leaf_id}.txt"
    assert entry.status == "active"


def test_reingesting_an_unchanged_leaf_rewrites_the_same_leaf(store: Store) -> None:
    leaf = make_leaf("the same memory", source="notes.md")
    store.put_leaf(leaf)
    generation = store.generation
    store.put_leaf(make_leaf("the same memory", source="notes.md"))
    assert store.count("leaf") == 1
    assert len(list((store.path / "layer0" / "general").iterdir())) == 1
    assert store.generation >= generation


def test_rewriting_a_leaf_keeps_its_parent_and_its_correction(store: Store) -> None:
    leaf = make_leaf("old fact")
    store.put_leaf(leaf)
    store.put_branch(
        Branch(node_id="N1-general-a", layer=1, domain="general", title="t", summary="s")
    )
    store.set_parent([leaf.leaf_id], "N1-general-a")
    store.annotate(leaf.leaf_id, outdated_by=Correction(by="L-general-0000-new", date="2026-01-01"))
    store.put_leaf(make_leaf("old fact"))
    back = store.read_leaf(leaf.leaf_id)
    assert back.parent_id == "N1-general-a"
    assert back.outdated_by is not None and back.outdated_by.by == "L-general-0000-new"


def test_annotating_flags_outdated_and_restore_undoes_it(store: Store) -> None:
    old = make_leaf("staging runs PostgreSQL 15", timestamp="2025-01-01")
    new = make_leaf("staging moved to PostgreSQL 17", timestamp="2026-02-03")
    store.put_leaves([old, new])
    store.annotate(old.leaf_id, outdated_by=Correction(by=new.leaf_id, date="2026-02-03"))
    assert store.entry(old.leaf_id).status == "outdated"  # type: ignore[union-attr]
    assert [e.id for e in store.corrections_of(new.leaf_id)] == [old.leaf_id]
    assert store.read_leaf(old.leaf_id).text == "staging runs PostgreSQL 15"
    store.annotate(old.leaf_id, outdated_by=None)
    assert store.entry(old.leaf_id).status == "active"  # type: ignore[union-attr]
    assert store.corrections_of(new.leaf_id) == []


def test_an_unknown_id_is_a_lookup_error_with_the_id(store: Store) -> None:
    with pytest.raises(LeafNotFoundError, match="L-nope") as caught:
        store.read_leaf("L-nope")
    assert caught.value.leaf_id == "L-nope"
    assert isinstance(caught.value, LookupError)
    with pytest.raises(LeafNotFoundError):
        store.annotate("L-nope", outdated_by=None)
    with pytest.raises(LeafNotFoundError):
        store.forget("L-nope")


def test_forget_deletes_the_leaf_its_index_rows_and_its_excerpt_in_the_parent(store: Store) -> None:
    secret = make_leaf("my token is hunter2 oops", position=1)
    keep = make_leaf("keep this one", position=2)
    store.put_leaves([secret, keep])
    refs = tuple(
        ChildRef(id=x.leaf_id, kind="leaf", title=x.text, excerpt=x.text) for x in (secret, keep)
    )
    store.put_branch(
        Branch(
            node_id="N1-general-b",
            layer=1,
            domain="general",
            title="t",
            summary="s",
            children=refs,
            leaf_count=2,
        )
    )
    store.set_parent([secret.leaf_id, keep.leaf_id], "N1-general-b")
    gone = store.forget(secret.leaf_id)
    assert gone.id == secret.leaf_id
    assert not (store.path / gone.path).exists()
    assert store.entry(secret.leaf_id) is None
    assert store.candidates("hunter2") == []
    branch = store.read_branch("N1-general-b")
    assert [c.id for c in branch.children] == [keep.leaf_id]
    assert "hunter2" not in (store.path / "layers/1/N1-general-b.json").read_text()
    assert store.stats().unreachable == 0


def test_forgetting_a_correction_restores_what_it_had_outdated(store: Store) -> None:
    old, new = make_leaf("v1", position=1), make_leaf("v2", position=2)
    store.put_leaves([old, new])
    store.annotate(old.leaf_id, outdated_by=Correction(by=new.leaf_id, date="2026-01-01"))
    store.forget(new.leaf_id)
    assert store.read_leaf(old.leaf_id).outdated_by is None


# ------------------------------------------------------------------ branches and the trunk
def _two_level(store: Store) -> list[str]:
    leaves = [make_leaf(f"note {i} about falcon", position=i, domain="projects") for i in range(4)]
    store.put_leaves(leaves)
    ids = [x.leaf_id for x in leaves]
    store.put_branch(
        Branch(node_id="N1-projects-a", layer=1, domain="projects", title="a", summary="first two")
    )
    store.set_parent(ids[:2], "N1-projects-a")
    store.put_branch(
        Branch(node_id="N1-projects-b", layer=1, domain="projects", title="b", summary="last two")
    )
    store.set_parent(ids[2:], "N1-projects-b")
    store.put_branch(
        Branch(node_id="N2-projects-top", layer=2, domain="projects", title="top", summary="all")
    )
    store.set_parent(["N1-projects-a", "N1-projects-b"], "N2-projects-top")
    return ids


def test_the_catalog_answers_children_paths_and_loose_items(store: Store) -> None:
    ids = _two_level(store)
    assert [e.id for e in store.children("N1-projects-a")] == sorted(
        ids[:2], key=lambda i: (store.entry(i).timestamp, i)
    )  # type: ignore[union-attr]
    assert store.path_to(ids[3]) == ["N2-projects-top", "N1-projects-b", ids[3]]
    assert [e.id for e in store.unparented()] == ["N2-projects-top"]
    assert store.unparented(layer=0) == []
    assert store.read_leaf(ids[0]).parent_id == "N1-projects-a"
    stats = store.stats()
    assert (stats.leaves, stats.branches, stats.depth, stats.unreachable) == (4, 3, 2, 0)
    assert stats.unconsolidated == 0


def test_the_trunk_references_everything_without_a_parent(store: Store) -> None:
    _two_level(store)
    loose = make_leaf("not consolidated yet", domain="personal")
    store.put_leaf(loose)
    root = store.refresh_root()
    assert set(root.top_ids) == {"N2-projects-top", loose.leaf_id}
    on_disk = json.loads((store.path / "root.json").read_text())
    assert on_disk["domains"]["personal"]["top"] == [loose.leaf_id]
    assert store.read_root().top_ids == root.top_ids


def test_an_item_under_a_missing_branch_counts_as_unreachable(store: Store) -> None:
    # Format 2: a leaf never names its parent (a parent given for a missing branch is
    # not kept); a branch file still does, and may name one that is gone.
    leaf = store.put_leaf(make_leaf("orphan").evolve(parent_id="N1-general-gone"))
    assert leaf.parent_id is None and store.stats().unreachable == 0
    store.put_branch(
        Branch(node_id="N1-general-lost", layer=1, domain="general", title="t", summary="s",
               parent_id="N2-general-gone")
    )  # fmt: skip
    assert store.stats().unreachable == 1


def test_removing_a_branch_returns_its_children_to_the_trunk(store: Store) -> None:
    ids = _two_level(store)
    store.remove_branch("N1-projects-a")
    assert {e.id for e in store.unparented()} == {"N2-projects-top", ids[0], ids[1]}
    assert store.stats().unreachable == 0
    assert store.count("leaf") == 4


# ------------------------------------------------------------------ full-text candidates
def test_candidates_use_global_frequencies_and_field_weights(store: Store) -> None:
    store.put_leaves(
        [
            make_leaf("the deploy pipeline uses Jenkins", position=1, extra={"title": "CI notes"}),
            make_leaf("Jenkins", position=2, extra={"title": "Jenkins upgrade plan"}),
            make_leaf("deploy deploy deploy", position=3),
        ]
    )
    ranked = store.candidates("jenkins upgrade")
    assert ranked[0].entry.title == "Jenkins upgrade plan"
    assert set(ranked[0].matched) == {"jenkin", "upgrad"}
    no_title = FieldWeights(title=0.0, keywords=0.0, tags=0.0, text=1.0)
    flat = {c.entry.title: c.score for c in store.candidates("jenkins upgrade", weights=no_title)}
    assert flat["Jenkins upgrade plan"] < ranked[0].score
    df = store.document_frequencies(terms("jenkins deploy missing"))
    assert df == {"jenkin": 2, "deploy": 2, "miss": 0}


def test_stemming_lets_decide_find_decided(store: Store) -> None:
    store.put_leaf(make_leaf("We decided to drop Redis for the session cache"))
    assert store.candidates("why did we decide about redis")[0].entry.excerpt.startswith(
        "We decided"
    )


def test_candidates_filter_by_domain_project_kind_and_source(store: Store) -> None:
    store.put_leaves(
        [
            make_leaf(
                "staging host db01",
                domain="software.infra",
                project="falcon",
                source="src/a.py",
                position=1,
            ),
            make_leaf(
                "staging host db02",
                domain="software.infra",
                project="hawk",
                source="tests/b.py",
                position=2,
            ),
            make_leaf("staging cat", domain="personal", position=3),
        ]
    )
    assert {c.entry.project for c in store.candidates("staging", domain="software")} == {
        "falcon",
        "hawk",
    }
    assert [c.entry.project for c in store.candidates("staging", project="hawk")] == ["hawk"]
    assert [c.entry.source for c in store.candidates("staging", source_prefix="src/")] == [
        "src/a.py"
    ]
    assert store.candidates("staging", kinds=("branch",)) == []
    assert store.candidates("") == []
    assert store.candidates("the of and") == []


def test_accents_and_case_do_not_matter_in_search(store: Store) -> None:
    store.put_leaf(make_leaf("La migración a PostgreSQL terminó en marzo"))
    assert store.candidates("MIGRACION postgresql")


# ------------------------------------------------------------------ rebuild and recovery
def test_rebuild_from_the_files_gives_the_same_catalog_and_answers(tmp_path: Path) -> None:
    """Thousands of mixed writes maintained incrementally, then rebuilt from the files."""
    import random

    rng = random.Random(11)
    store = Store.create(tmp_path / "m")
    alive: list[str] = []
    branches = 0
    for i in range(2500):
        op = rng.random()
        if op < 0.7 or len(alive) < 10:
            domain = rng.choice(["infra", "personal", "decisions"])
            text = f"memory {i} about host{i % 17} and project{i % 5} {rng.choice(['x', 'y'])}"
            leaf = make_leaf(text, position=i, domain=domain, timestamp=f"2025-01-{1 + i % 28:02d}")
            if rng.random() < 0.3:
                with store.batch():
                    store.put_leaf(leaf)
                    store.put_leaf(leaf.evolve(text=text + " (edited)"))
            else:
                store.put_leaf(leaf)
            alive.append(leaf.leaf_id)
        elif op < 0.8:
            old, new = rng.sample(alive, 2)
            store.annotate(old, outdated_by=Correction(by=new, date="2026-01-01", reason="changed"))
        elif op < 0.85:
            store.annotate(rng.choice(alive), outdated_by=None)
        elif op < 0.9:
            gone = alive.pop(rng.randrange(len(alive)))
            store.forget(gone)
        else:
            loose = store.unparented(layer=0)[:4]
            if loose:
                node = f"N1-{loose[0].domain}-{branches}"
                branches += 1
                store.put_branch(
                    Branch(
                        node_id=node,
                        layer=1,
                        domain=loose[0].domain,
                        title=f"group {node}",
                        summary=" ".join(e.title for e in loose),
                        # A branch lists its children (format 2: the only record of
                        # a leaf's parent on disk), as consolidation writes it.
                        children=tuple(
                            ChildRef(id=e.id, kind="leaf", title=e.title, excerpt=e.excerpt)
                            for e in loose
                        ),
                    )
                )
                store.set_parent([e.id for e in loose], node)
    queries = ["host3 project2", "memory 42", "edited host7", "group"]
    before = (_catalog(store), [_answers(store, q) for q in queries], store.stats().to_json())
    trunk_before = store.trunk().domains
    report = store.rebuild()
    assert store.trunk().domains == trunk_before
    assert report.problems == ()
    after = (_catalog(store), [_answers(store, q) for q in queries], store.stats().to_json())
    assert after[:2] == before[:2]
    assert {k: v for k, v in after[2].items() if k != "generation"} == {
        k: v for k, v in before[2].items() if k != "generation"
    }
    store.close()
    shutil.rmtree(tmp_path / "m" / "state")
    reopened = Store.open(tmp_path / "m")
    assert (_catalog(reopened), [_answers(reopened, q) for q in queries]) == before[:2]


def test_a_damaged_index_is_rebuilt_on_open_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store, leaves = store_with(tmp_path / "m", ["alpha fact", "beta fact"])
    store.close()
    db = tmp_path / "m" / "state" / "index.sqlite3"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING):
        reopened = Store.open(tmp_path / "m")
    assert "rebuilt from the memory files" in caplog.text
    assert reopened.read_leaf(leaves[1].leaf_id).text == "beta fact"
    assert reopened.candidates("beta")[0].entry.id == leaves[1].leaf_id


def test_a_malformed_leaf_is_reported_by_path_and_skipped(tmp_path: Path) -> None:
    store, _ = store_with(tmp_path / "m", ["good one"])
    bad = tmp_path / "m" / "layer0" / "general" / "L-general-0009-broken.txt"
    bad.write_text("<<<IHMT-META\n{broken\nIHMT-META>>>\nstill my words")
    report = store.rebuild()
    assert [p.path for p in report.problems] == ["layer0/general/L-general-0009-broken.txt"]
    assert "unreadable leaf header" in report.problems[0].reason
    assert bad.read_text().endswith("still my words")
    assert store.count("leaf") == 1


def test_a_dead_writers_journal_is_redone_from_the_files(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "m")
    leaf = make_leaf("written but never indexed")
    rel = leaf_rel(leaf.leaf_id, leaf.domain)
    store.close()
    from ihmt_store._files import leaf_bytes

    (tmp_path / "m" / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "m" / rel).write_bytes(leaf_bytes(leaf))
    stray = tmp_path / "m" / "layer0" / "general" / f".{leaf.leaf_id}.txt.123-ab.ihmt-tmp"
    stray.write_bytes(b"half")
    (tmp_path / "m" / "state" / "journal").write_text(
        rel + "\nlayer0/general/L-general-0000-vanished.txt\n"
    )
    reopened = Store.open(tmp_path / "m")
    assert reopened.read_leaf(leaf.leaf_id).text == "written but never indexed"
    assert not stray.exists()
    assert not (tmp_path / "m" / "state" / "journal").exists()
    assert (tmp_path / "m" / rel).exists()


def test_readers_see_another_writers_commits_without_reopening(tmp_path: Path) -> None:
    writer = Store.create(tmp_path / "m")
    reader = Store.open(tmp_path / "m")
    assert reader.candidates("kiwi") == []
    leaf = make_leaf("kiwi is the release codename")
    writer.put_leaf(leaf)
    assert reader.candidates("kiwi")[0].entry.id == leaf.leaf_id
    assert reader.read_leaf(leaf.leaf_id).text == leaf.text


def test_the_store_folder_is_relocatable(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["portable memory"])
    store.close()
    shutil.copytree(tmp_path / "m", tmp_path / "elsewhere" / "m")
    shutil.rmtree(tmp_path / "m")
    moved = Store.open(tmp_path / "elsewhere" / "m")
    assert moved.read_leaf(leaves[0].leaf_id).text == "portable memory"
    for path in (tmp_path / "elsewhere" / "m").rglob("*.json"):
        assert str(tmp_path) not in path.read_text()
    with sqlite3.connect(tmp_path / "elsewhere" / "m" / "state" / "index.sqlite3") as conn:
        paths = [row[0] for row in conn.execute("SELECT path FROM items")]
    assert all(not os.path.isabs(p) for p in paths)


def test_a_failed_batch_changes_nothing(store: Store) -> None:
    kept = store.put_leaf(make_leaf("saved before", position=0))
    first = make_leaf("first of the batch", position=1)

    def failing_batch() -> None:
        with store.batch():
            store.put_leaf(first)
            store.forget(kept.leaf_id)
            assert store.entry(first.leaf_id) is not None  # visible inside the batch
            raise RuntimeError("boom")

    generation = store.generation
    with pytest.raises(RuntimeError, match="boom"):
        failing_batch()
    assert store.entry(first.leaf_id) is None
    assert not (store.path / leaf_rel(first.leaf_id, "general")).exists()
    assert store.read_leaf(kept.leaf_id).text == "saved before"
    assert not (store.path / "state" / "journal").exists()
    assert list(store.path.rglob("*.ihmt-tmp")) == []
    assert store.generation == generation


def test_an_empty_batch_does_not_move_the_generation(store: Store) -> None:
    generation = store.generation
    with store.batch():
        pass
    assert store.generation == generation


def test_reads_inside_a_batch_see_its_own_writes(store: Store) -> None:
    leaf = make_leaf("staged")
    with store.batch():
        store.put_leaf(leaf)
        store.annotate(leaf.leaf_id, extra={"seen": True})
        assert store.read_leaf(leaf.leaf_id).extra == {"seen": True}
        assert not (store.path / leaf_rel(leaf.leaf_id, "general")).exists()
    assert store.read_leaf(leaf.leaf_id).extra == {"seen": True}


def test_state_files_of_sibling_packages_stay_inside_state(store: Store) -> None:
    assert store.state_file("facts.sqlite3") == store.path / "state" / "facts.sqlite3"
    with pytest.raises(ValueError, match="invalid state file"):
        store.state_file("../root.json")
    with pytest.raises(ValueError, match="invalid state file"):
        store.state_file("index.sqlite3")


def test_update_config_validates_and_persists(store: Store) -> None:
    store.update_config(branch_factor=5)
    assert Store.open(store.path).config.branch_factor == 5
    with pytest.raises(ValueError, match="branch_factor must be int"):
        store.update_config(branch_factor="x")


def test_io_counters_count_files_and_bytes_read(store: Store) -> None:
    leaf = make_leaf("count me")
    store.put_leaf(leaf)
    before = store.io.snapshot()
    store.read_leaf(leaf.leaf_id)
    assert store.io.files_read == before.files_read + 1
    assert store.io.bytes_read - before.bytes_read == store.entry(leaf.leaf_id).size  # type: ignore[union-attr]


def test_the_fast_candidate_path_returns_the_true_bm25_top(tmp_path: Path) -> None:
    """Scoring only the documents of the rarest terms (MaxScore) must not change the top.

    The reference is FTS5's own bm25() over every match, without the terms found in
    more than half the documents (their IDF is floored; they only add ties).
    """
    import random
    import sqlite3 as sql

    rng = random.Random(5)
    words = ["falcon", "hawk", "staging", "postgres", "redis", "deploy", "luis", "ana", "billing"]
    store = Store.create(tmp_path / "m")
    with store.batch():
        store.put_leaves(
            make_leaf(" ".join(rng.choices(words, k=rng.randint(3, 12))) + f" code{i}", position=i)
            for i in range(3000)
        )
    conn = sql.connect(store.path / "state" / "index.sqlite3")
    queries = [
        f"{rng.choice(words)} {rng.choice(words)} code{rng.randrange(3000)}" for _ in range(25)
    ]
    queries += ["falcon staging", "luis", "postgres redis deploy billing"]
    for query in queries:
        got = [(c.entry.id, round(c.score, 9)) for c in store.candidates(query, limit=10, exact=10)]
        df = store.document_frequencies(terms(query))
        telling = [t for t in df if df[t] and df[t] <= 1500] or [t for t in df if df[t]]
        match = " OR ".join(f'"{t}"' for t in telling)
        want = conn.execute(
            "SELECT items.id, ROUND(-bm25(fts, 3.0, 2.0, 1.5, 1.0), 9) FROM fts "
            "JOIN items ON items.rowid = fts.rowid WHERE fts MATCH ? "
            "ORDER BY bm25(fts, 3.0, 2.0, 1.5, 1.0), items.id LIMIT 10",
            (match,),
        ).fetchall()
        # Scores agree to 9 decimals; among scores that equal (ties), the order is free,
        # so ids are compared group by group, except the group cut at the end of the list.
        assert [score for _, score in got] == [row[1] for row in want], query
        last = want[-1][1] if want else None
        assert {i for i, sc in got if sc != last} == {row[0] for row in want if row[1] != last}
    conn.close()


def test_a_branch_listing_a_leaf_is_its_parent(store: Store) -> None:
    """Format 2: the branch's list is the only record of a leaf's parent on disk, so a
    consolidation interrupted before its stamps leaves no unstamped leaf: the catalog
    and a rebuild both take the listing branch."""
    a, b = make_leaf("a", position=1), make_leaf("b", position=2)
    store.put_leaves([a, b])
    refs = tuple(ChildRef(id=x.leaf_id, kind="leaf", title="t", excerpt="e") for x in (a, b))
    store.put_branch(
        Branch(
            node_id="N1-general-x", layer=1, domain="general", title="t", summary="s", children=refs
        )
    )
    store.set_parent([a.leaf_id], "N1-general-x")
    assert store.listed_in([a.leaf_id, b.leaf_id]) == {
        a.leaf_id: ["N1-general-x"],
        b.leaf_id: ["N1-general-x"],
    }
    assert store.entry(b.leaf_id).parent_id == "N1-general-x"  # type: ignore[union-attr]
    store.rebuild()
    assert store.listed_in([b.leaf_id]) == {b.leaf_id: ["N1-general-x"]}
    assert store.entry(b.leaf_id).parent_id == "N1-general-x"  # type: ignore[union-attr]


def test_rebuild_reports_its_progress(store: Store) -> None:
    store.put_leaves(make_leaf(f"note {i}", position=i) for i in range(5))
    seen: list[tuple[int, int]] = []
    store.rebuild(progress=lambda done, total, name: seen.append((done, total)))
    assert seen == [(i, 5) for i in range(1, 6)]


def test_document_frequencies_equal_fts5s_own_counts_after_mixed_writes(tmp_path: Path) -> None:
    """The vocabulary table the writes maintain agrees with FTS5's count of rows per term,
    after saves, rewrites, annotations, branches, forgets and a rebuild; and inside a
    batch the counts include what the batch has written so far."""
    import random

    rng = random.Random(11)
    words = [
        "falcon", "hawk", "staging", "postgres", "redis", "deploy", "Luis", "Ana", "billing",
        "café", "décidé", "node.js", "C++", "v2.3", "ÜBER", "naïve", "k8s",
    ]  # fmt: skip
    store = Store.create(tmp_path / "m")

    def text() -> str:
        return " ".join(rng.choices(words, k=rng.randint(1, 9)))

    leaves = [make_leaf(text(), position=i) for i in range(300)]
    with store.batch():
        store.put_leaves(leaves[:200])
        inside = store.document_frequencies(terms(" ".join(words)))
        assert sum(inside.values()) > 0, "a batch sees the counts of its own writes"
    store.put_leaves(leaves[200:])
    for leaf in rng.sample(leaves, 60):  # rewrites with new text keep their id
        store.put_leaf(leaf.evolve(text=text()))
    for leaf in rng.sample(leaves, 20):
        store.annotate(leaf.leaf_id, extra={"keywords": rng.sample(words, 2)})
    refs = tuple(ChildRef(id=x.leaf_id, kind="leaf", title="t", excerpt="e") for x in leaves[:8])
    store.put_branch(
        Branch(node_id="N1-general-v", layer=1, domain="general", title="Falcon hawk",
               summary=text(), keywords=("redis",), children=refs)
    )  # fmt: skip
    forgotten = {x.leaf_id for x in rng.sample(leaves[8:], 40)}
    for leaf_id in forgotten:
        store.forget(leaf_id)

    def fts5_counts() -> dict[str, int]:
        conn = sqlite3.connect(store.path / "state" / "index.sqlite3")
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, fts, 'row')")
        counts = dict(conn.execute("SELECT term, doc FROM temp.v").fetchall())
        conn.close()
        return counts

    want = fts5_counts()
    assert len(want) > 15
    assert store.document_frequencies([*sorted(want), "nowhere"]) == {**want, "nowhere": 0}
    store.rebuild()
    assert store.document_frequencies(sorted(want)) == fts5_counts() == want


def test_common_terms_rank_only_documents_holding_a_rarer_query_term(tmp_path: Path) -> None:
    """``common``: a word in more than that share of the items brings in no document by
    itself, still counts in the scores, and still ranks a query made only of such words."""
    store = Store.create(tmp_path / "m")
    with store.batch():
        # "staging" and "deploy" in 1,200 of 3,000 items each (common: over 5 % and over
        # the 1,000 documents below which every term ranks), "falcon" in 1 %.
        store.put_leaves(
            make_leaf(
                f"note {i}"
                + (" staging" if i % 5 in (0, 1) else "")
                + (" deploy" if i % 5 in (1, 2) else "")
                + (" falcon" if i % 100 == 0 else ""),
                position=i,
            )
            for i in range(3000)
        )
        only_common = make_leaf("staging staging staging deploy deploy", position=9000)
        both = make_leaf("falcon staging deploy", position=9001)
        store.put_leaves([only_common, both])
    exact = store.candidates("falcon staging deploy", limit=50)
    pruned = store.candidates("falcon staging deploy", limit=50, common=0.05)
    assert exact[0].entry.id == pruned[0].entry.id == both.leaf_id
    assert only_common.leaf_id in {c.entry.id for c in exact}
    assert only_common.leaf_id not in {c.entry.id for c in pruned}
    assert all("falcon" in c.matched for c in pruned)
    # Shared candidates keep their full score: the common words still count.
    scores = {c.entry.id: c.score for c in exact}
    assert all(abs(c.score - scores[c.entry.id]) < 1e-9 for c in pruned if c.entry.id in scores)
    # In a small store no word is common enough to be left out.
    small = Store.create(tmp_path / "small")
    small.put_leaves([make_leaf("falcon staging", position=1), make_leaf("staging", position=2)])
    assert [c.entry.id for c in small.candidates("falcon staging", common=0.05)] == [
        c.entry.id for c in small.candidates("falcon staging")
    ]
    # Nothing rarer in the question: the common words rank after all.
    assert store.candidates("staging deploy", limit=5, common=0.05)[0].entry.id == (
        store.candidates("staging deploy", limit=5)[0].entry.id
    )


def test_an_index_of_an_older_normalisation_is_rebuilt_so_new_word_forms_meet(
    tmp_path: Path,
) -> None:
    store = Store.create(tmp_path / "m")
    leaf = store.put_leaf(make_leaf("Cutting a release: run the release script on main."))
    store.close()
    db = tmp_path / "m" / "state" / "index.sqlite3"
    with sqlite3.connect(db) as conn:
        # an index written before "cutting" met "cut" (schema 6) holds other terms: here,
        # none at all, so only a rebuild can answer
        conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema'")
        conn.execute("DELETE FROM fts")
    reopened = Store.open(tmp_path / "m")
    try:
        found = reopened.candidates("how are releases cut")
        assert [c.entry.id for c in found if c.entry.kind == "leaf"] == [leaf.leaf_id]
        assert "cut" in found[0].matched
    finally:
        reopened.close()


# ------------------------------------------------------------------ titles
@pytest.mark.parametrize(
    ("text", "title"),
    [
        (
            "## 2024-03-11\nMoved the staging database to a new host.",
            "Moved the staging database to a new host.",
        ),
        (
            "### Monday, March 11 2024\n\n- [x] **Standup**: invoices ship Friday",
            "Standup: invoices ship Friday",
        ),
        (
            "# lunes 11 de marzo de 2024\n> Comida con Bruno en el puerto",
            "Comida con Bruno en el puerto",
        ),
        ("# Journal", "Journal"),
        ("```python\ndef ship(): ...\n```", "def ship(): ..."),
        ("## 2024-03-11\n\n---\n", "2024-03-11"),
        ("I prefer tabs over spaces.", "I prefer tabs over spaces."),
    ],
)
def test_a_leaf_title_is_its_first_line_that_says_something(
    store: Store, text: str, title: str
) -> None:
    leaf = store.put_leaf(make_leaf(text))
    entry = store.entry(leaf.leaf_id)
    assert entry is not None and entry.title == title


def test_a_given_title_wins_over_the_text(store: Store) -> None:
    leaf = store.put_leaf(make_leaf("## 2024-03-11\nbody", extra={"title": "Ferry plans"}))
    entry = store.entry(leaf.leaf_id)
    assert entry is not None and entry.title == "Ferry plans"


def test_a_search_within_a_few_ids_scores_exactly_those_holding_a_term(tmp_path: Path) -> None:
    texts = [f"note {n} about the harbor team and its weekly review" for n in range(30)]
    texts += [f"unrelated memo {n} on lunch plans" for n in range(30)]
    store, leaves = store_with(tmp_path / "m", texts)
    everything = {c.entry.id: c for c in store.candidates("harbor review", limit=100)}
    chosen = [leaves[3].leaf_id, leaves[17].leaf_id, leaves[40].leaf_id]  # the last: no term
    within = store.candidates("harbor review", limit=10, within=chosen)
    expected = sorted(chosen[:2], key=lambda i: (-everything[i].score, i))
    assert [c.entry.id for c in within] == expected
    for cand in within:
        assert cand.score == pytest.approx(everything[cand.entry.id].score)
        assert set(cand.matched) == {"harbor", "review"}


def test_a_leaf_edited_by_hand_is_reindexed_when_read(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["The staging database runs on port 5432."])
    leaf = leaves[0]
    path = tmp_path / "m" / store.entry(leaf.leaf_id).path  # type: ignore[union-attr]
    data = path.read_bytes()
    path.write_bytes(data.replace(b"port 5432", b"port 6543 behind pgbouncer"))
    assert store.hand_edits() == [leaf.leaf_id]

    read = store.read_leaf(leaf.leaf_id)
    assert "pgbouncer" in read.text
    assert store.edited == [leaf.leaf_id]
    assert any("edited by hand" in n for n in store.notices)
    assert [c.entry.id for c in store.candidates("pgbouncer")] == [leaf.leaf_id]
    assert store.candidates("5432") == []
    # Adopted once: the header now carries the new text's checksum; the text is as edited.
    assert store.hand_edits() == []
    assert b"port 6543 behind pgbouncer" in path.read_bytes()


# ------------------------------------------------------------------ the store's layout, for callers
def test_exists_says_whether_a_store_lives_at_a_path(tmp_path: Path) -> None:
    assert not Store.exists(tmp_path / "m")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "notes.txt").write_text("not a store")
    assert not Store.exists(tmp_path / "m")
    Store.create(tmp_path / "n").close()
    assert Store.exists(tmp_path / "n")
    assert Store.exists(str(tmp_path / "n"))


def test_discarding_derived_state_keeps_every_file_and_the_next_open_rebuilds(
    tmp_path: Path,
) -> None:
    store, leaves = store_with(tmp_path / "m", ["alpha fact", "beta fact"])
    store.put_derived("vectors", {leaves[0].leaf_id: b"\x01"})
    (store.state_file("facts.json")).write_text("{}")
    (store.path / "state" / "cache").mkdir()
    (store.path / "state" / "cache" / "x.bin").write_bytes(b"x")
    store.close()
    kept = {
        p.relative_to(tmp_path / "m"): p.read_bytes()
        for p in (tmp_path / "m").rglob("*")
        if p.is_file() and "state" not in p.parts and p.name != "ihmt.lock"
    }
    Store.discard_derived(tmp_path / "m")
    assert list((tmp_path / "m" / "state").iterdir()) == []
    after = {
        p.relative_to(tmp_path / "m"): p.read_bytes()
        for p in (tmp_path / "m").rglob("*")
        if p.is_file() and "state" not in p.parts and p.name != "ihmt.lock"
    }
    assert after == kept
    reopened = Store.open(tmp_path / "m")
    assert [c.entry.id for c in reopened.candidates("alpha")] == [leaves[0].leaf_id]
    assert reopened.derived_ids("vectors") == set()
    Store.discard_derived(tmp_path / "nothing here")  # no store: nothing to do


def test_read_leaf_takes_the_entry_a_caller_holds_without_asking_the_catalog(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaf = store.put_leaf(make_leaf("read through the entry"))
    entry = store.candidates("entry")[0].entry
    index = store._idx

    def no_lookup(item_id: str) -> None:
        raise AssertionError(f"the catalog was asked for {item_id}")

    monkeypatch.setattr(index, "get", no_lookup)
    assert store.read_leaf(entry) == leaf
    monkeypatch.undo()
    store.put_branch(
        Branch(node_id="N1-general-a", layer=1, domain="general", title="a", summary="s")
    )
    branch_entry = store.entry("N1-general-a")
    assert branch_entry is not None
    with pytest.raises(LeafNotFoundError) as caught:
        store.read_leaf(branch_entry)
    assert caught.value.leaf_id == "N1-general-a"


def test_paths_to_answers_every_item_in_one_catalog_query(store: Store) -> None:
    ids = _two_level(store)
    statements: list[str] = []
    store._idx.conn.set_trace_callback(statements.append)
    try:
        paths = store.paths_to([ids[0], ids[3], "L-nope", "N1-projects-b"])
    finally:
        store._idx.conn.set_trace_callback(None)
    assert paths == {
        ids[0]: ["N2-projects-top", "N1-projects-a", ids[0]],
        ids[3]: ["N2-projects-top", "N1-projects-b", ids[3]],
        "L-nope": [],
        "N1-projects-b": ["N2-projects-top", "N1-projects-b"],
    }
    assert len([s for s in statements if "items" in s]) == 1
    with pytest.raises(LeafNotFoundError):
        store.path_to("L-nope")


def test_idf_is_fts5s_formula_floored_for_terms_in_most_items() -> None:
    assert idf(10, 1) == pytest.approx(math.log(9.5 / 1.5))
    assert idf(1000, 3) > idf(1000, 30) > idf(1000, 300)
    assert idf(10, 5) == 1e-6  # found in half the items: the floor
    assert idf(10, 9) == 1e-6


def test_leaves_resized_by_hand_in_several_folders_are_adopted_in_catalog_order(
    tmp_path: Path,
) -> None:
    texts = [("work", "The deploy runs at noon."), ("home", "The boiler is serviced in May.")]
    texts += [("work", "Standup is at nine."), ("home", "Bins go out on Tuesday.")]
    store, leaves = store_with(tmp_path / "m", texts)
    try:
        edited = [leaves[3], leaves[0]]
        for leaf in edited:
            entry = store.entry(leaf.leaf_id)
            assert entry is not None
            path = store.path / entry.path
            path.write_bytes(path.read_bytes() + b" Always.")
        same = store.entry(leaves[1].leaf_id)
        assert same is not None  # an edit of the same size waits for the leaf's next read
        path = store.path / same.path
        path.write_bytes(path.read_bytes().replace(b"May", b"Jun"))
        order = [rel for rel, _ in store._idx.leaf_sizes()]
        adopted = store.adopt_hand_edits()
        assert sorted(adopted) == sorted(leaf.leaf_id for leaf in edited)
        paths = [store.entry(i).path for i in adopted]  # type: ignore[union-attr]
        assert paths == sorted(paths, key=order.index)
        assert "Always." in store.read_leaf(leaves[3].leaf_id).text
    finally:
        store.close()
