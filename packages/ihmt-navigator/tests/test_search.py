from __future__ import annotations

from collections.abc import Callable

import pytest

from ihmt_navigator import InvalidFilterError, Navigator, SearchResult
from ihmt_store import Correction, FieldWeights, Store, estimate_tokens
from ihmt_store.testing import make_leaf

Story = tuple[Store, Navigator, list[str]]


def test_a_targeted_question_finds_its_memory(story: Story) -> None:
    _, nav, ids = story
    result = nav.search("why did we pick Pulumi for the scheduler?")
    assert result.status == "found"
    assert result.best is not None and result.best.id == ids[5]
    assert "Pulumi" in result.best.content
    assert result.best.path[-1] == ids[5] and len(result.best.path) >= 2
    assert result.compact.startswith("FOUND")
    assert 0 < result.confidence <= 1
    assert result.leaf_reads == 1 and result.bytes_read > 0


def test_stemming_finds_decided_from_decide(story: Story) -> None:
    _, nav, ids = story
    assert nav.search("what did we decide for the falcon scheduler").best.id == ids[5]  # type: ignore[union-attr]


def test_three_people_called_luis_is_ambiguous_with_one_line_each(story: Story) -> None:
    _, nav, ids = story
    result = nav.search("Luis")
    assert result.status == "ambiguous"
    assert {h.id for h in result.results} == {ids[1], ids[2], ids[3]}
    assert result.margin < 0.18
    assert "AMBIGUOUS" in result.compact and "clue" in result.compact
    lines = [line for line in result.compact.splitlines() if line[:2] in ("1.", "2.", "3.")]
    assert len(lines) == 3
    assert all("20" in line for line in lines)  # each with its date


def test_a_clue_is_a_joint_cross_reference(story: Story) -> None:
    _, nav, ids = story
    plain = {h.id: h.score for h in nav.search("Luis").results}
    result = nav.search("Luis", clue="vacaciones en Benidorm")
    assert result.status == "found"
    assert result.best.id == ids[1]  # type: ignore[union-attr]
    others = {h.id: h.score for h in result.results[1:]}
    # both groups matched: x1.6 over its BM25; only one group: x0.7
    assert result.best.score > plain[ids[1]] * 1.6 * 0.99  # type: ignore[union-attr]
    assert others[ids[2]] == pytest.approx(plain[ids[2]] * 0.7, rel=0.3)


def test_the_clue_loop_asks_a_callable_until_it_can_answer(story: Story) -> None:
    _, nav, ids = story
    asked: list[SearchResult] = []

    def agent(result: SearchResult) -> str:
        asked.append(result)
        return ["cousin", "El Saler"][len(asked) - 1]

    result = nav.ask("Luis", agent)
    assert result.status == "found"
    assert result.best.id == ids[2]  # type: ignore[union-attr]
    assert result.clue_rounds == 2
    assert all(r.status == "ambiguous" for r in asked)


def test_the_clue_loop_stops_when_the_person_declines(story: Story) -> None:
    _, nav, _ = story
    result = nav.ask("Luis", lambda _: "")
    assert result.status == "ambiguous"
    assert result.clue_rounds == 0


def test_the_clue_loop_is_bounded_by_max_clue_rounds(story: Story) -> None:
    store, nav, _ = story
    calls: list[int] = []
    result = nav.ask("Luis", lambda _: calls.append(1) or "zzz unrelated")
    assert result.status == "ambiguous"
    assert len(calls) == store.config.max_clue_rounds


def test_a_question_about_something_never_stored_is_not_found(story: Story) -> None:
    _, nav, _ = story
    for question in ("kubernetes helm charts", "what is the wifi password of the ocelot office?"):
        result = nav.search(question)
        assert result.status == "not_found", question
        assert result.compact.startswith("NOT FOUND")
        assert result.results == ()


def test_a_stray_shared_word_is_not_an_answer(make_store: Callable[..., Store]) -> None:
    store = make_store()
    for i in range(30):
        store.put_leaf(make_leaf(f"service s{i} deploys with the usual pipeline", position=i))
    nav = Navigator(store)
    result = nav.search("which pipeline does the ocelot team use for mobile releases?")
    assert result.status == "not_found"
    assert "pipelin" in result.compact


def test_the_correction_comes_first_and_the_old_memory_is_relayed(story: Story) -> None:
    _, nav, ids = story
    result = nav.search("which PostgreSQL version does staging run on port 5432?")
    # the old memory matches better (port 5432) but was corrected
    assert result.best.id == ids[7]  # type: ignore[union-attr]
    order = [h.id for h in result.results]
    assert order.index(ids[7]) < order.index(ids[6])
    old = next(h for h in result.results if h.id == ids[6])
    assert old.outdated and old.outdated_by == ids[7]
    assert any("OUTDATED" in n and ids[6] in n and ids[7] in n for n in result.notices)
    assert "OUTDATED" in result.compact


def test_an_outdated_memory_never_outranks_its_correction_even_off_the_candidates(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    old = store.put_leaf(
        make_leaf("I live in Madrid near Retiro", timestamp="2024-03-11", position=1)
    )
    new = store.put_leaf(make_leaf("Moved to Valencia", timestamp="2026-02-03", position=2))
    store.annotate(old.leaf_id, outdated_by=Correction(by=new.leaf_id, date="2026-02-03"))
    result = Navigator(store).search("where do I live, Retiro?")
    assert [h.id for h in result.results[:2]] == [new.leaf_id, old.leaf_id]
    assert "Valencia" in result.best.content  # type: ignore[union-attr]


def test_as_of_answers_with_the_timeline_as_it_stood(story: Story) -> None:
    _, nav, ids = story
    now = nav.search("where do I live?")
    then = nav.search("where do I live?", as_of="2025-01-01")
    assert now.best.id == ids[4]  # type: ignore[union-attr]
    assert then.best.id == ids[0]  # type: ignore[union-attr]
    assert then.notices == ()
    assert not any(h.id == ids[4] for h in then.results)


def test_a_bad_filter_is_a_clear_error(story: Story) -> None:
    _, nav, _ = story
    with pytest.raises(InvalidFilterError, match="as_of"):
        nav.search("x", as_of="last spring")
    with pytest.raises(InvalidFilterError, match="scope"):
        nav.search("x", scope="everything")
    with pytest.raises(InvalidFilterError, match="detail"):
        nav.search("x", detail="verbose")
    with pytest.raises(ValueError, match="empty"):
        nav.search("   ")


def test_filters_by_domain_project_scope_and_path(make_store: Callable[..., Store]) -> None:
    store = make_store()
    leaves = [
        make_leaf(
            "def reserve_stock(): soft hold",
            domain="software.python",
            source="src/stock.py",
            project="shop",
            position=1,
        ),
        make_leaf(
            "def test_reserve_stock(): soft hold",
            domain="software.python",
            source="tests/test_stock.py",
            project="shop",
            position=2,
        ),
        make_leaf(
            "reserve stock soft hold in the warehouse notes",
            domain="notes",
            project="depot",
            position=3,
        ),
    ]
    store.put_leaves(leaves)
    nav = Navigator(store)
    ids = [x.leaf_id for x in leaves]

    def found(**options: object) -> set[str]:
        return {h.id for h in nav.search("reserve stock soft hold", limit=5, **options).results}  # type: ignore[arg-type]

    assert found(domain="software") <= {ids[0], ids[1]}
    assert found(project="depot") == {ids[2]}
    assert ids[1] not in found(scope="main")
    assert found(scope="test", domain="software") == {ids[1]}
    assert found(path_prefix="src/") == {ids[0]}


def test_the_current_project_and_global_memories_rank_first(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    mine = store.put_leaf(make_leaf("deploy with blue green switch", project="falcon", position=1))
    other = store.put_leaf(
        make_leaf("deploy with blue green switch today", project="hawk", position=2)
    )
    result = Navigator(store).search("blue green deploy switch", prefer_project="falcon")
    assert result.best.id == mine.leaf_id  # type: ignore[union-attr]
    assert "from project falcon" in result.compact
    elsewhere = Navigator(store).search("blue green deploy switch", prefer_project="hawk")
    assert elsewhere.best.id == other.leaf_id  # type: ignore[union-attr]


def test_a_long_leaf_is_shown_as_its_best_passage_with_line_numbers(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    lines = [f"line {i}: routine log output with nothing special" for i in range(400)]
    lines[250] = "line 250: the reservation timeout is 45 seconds for plover checkout"
    leaf = store.put_leaf(make_leaf("\n".join(lines), position=1))
    result = Navigator(store).search("plover checkout reservation timeout")
    best = result.best
    assert best is not None and best.passage is not None
    assert best.passage.start_line <= 251 <= best.passage.end_line
    assert best.passage.total_lines == 400
    assert "45 seconds" in best.content
    assert f"lines {best.passage.start_line}-{best.passage.end_line} of 400" in result.compact
    assert leaf.leaf_id in result.compact
    assert result.tokens <= store.config.compact_tokens


def test_the_compact_rendering_stays_within_the_budget(make_store: Callable[..., Store]) -> None:
    store = make_store()
    for i in range(120):
        store.put_leaf(make_leaf(f"falcon note {i}: " + "falcon detail words " * 40, position=i))
    result = Navigator(store).search("falcon note details", limit=50)
    assert result.tokens == estimate_tokens(result.compact)
    assert result.tokens <= store.config.compact_tokens
    full = Navigator(store).search("falcon note details", detail="full", limit=50)
    assert full.tokens <= store.config.compact_tokens
    assert "score" in full.compact


def test_full_detail_adds_ids_paths_and_scores(story: Story) -> None:
    _, nav, ids = story
    result = nav.search("Pulumi scheduler", detail="full")
    assert f"id: {ids[5]}" in result.compact
    assert "path: root → N" in result.compact
    assert "score" in result.compact


def test_a_broad_question_is_answered_by_the_memories_about_it_current_first(
    story: Story,
) -> None:
    _, nav, _ = story
    result = nav.search("what do we know about falcon?")
    assert result.status == "found" and result.broad
    assert len(result.results) == 5
    assert all(h.kind == "leaf" and "falcon" in h.content.lower() for h in result.results)
    flags = [h.outdated for h in result.results]
    assert flags == sorted(flags)  # current memories first, history after
    assert "Best memory" in result.compact and "Other memories about it:" in result.compact
    # the branch most of them sit under is named, without opening its file
    assert any("sit under" in n for n in result.notices)
    assert result.node_reads == 0


def test_a_broad_question_is_never_ambiguous_even_when_every_memory_ties(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    for i in range(4):
        store.put_leaf(make_leaf(f"Maite note {i}: daycare day {i}", position=i))
    result = Navigator(store).search("What have I stored about Maite?")
    assert result.status == "found" and len(result.results) == 4


def test_field_weights_change_the_ranking(make_store: Callable[..., Store]) -> None:
    store = make_store()
    titled = store.put_leaf(make_leaf("body text", extra={"title": "Grafana alerts"}, position=1))
    store.put_leaf(
        make_leaf("Incident notes\ngrafana grafana alerts alerts in the body only", position=2)
    )
    store.put_leaf(make_leaf("unrelated filler", position=3))
    store.put_leaf(make_leaf("more unrelated filler", position=4))
    by_title = Navigator(store).search("grafana alerts")
    assert by_title.best.id == titled.leaf_id  # type: ignore[union-attr]
    body_only = Navigator(store, weights=FieldWeights(title=0.0, keywords=0.0, tags=0.0, text=1.0))
    assert body_only.search("grafana alerts").best.id != titled.leaf_id  # type: ignore[union-attr]


def test_reads_are_bounded_and_counted(story: Story) -> None:
    _, nav, _ = story
    result = nav.search("nginx TLS prod-eu")
    assert result.files_read == result.leaf_reads + result.node_reads
    assert result.files_read <= 2
