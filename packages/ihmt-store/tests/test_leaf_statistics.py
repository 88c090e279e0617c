"""Ranking statistics are the leaves' alone (issue #18).

Two machines that hold the same memories group them into different branches (each
consolidates in the order its memories arrived). A search must rank those memories the
same way on both: document frequencies, the number of documents and the average length
count leaves, never branch summaries.
"""

from __future__ import annotations

from pathlib import Path

from ihmt_store import Branch, ChildRef, Leaf, Store, terms
from ihmt_store.testing import make_leaf

TEXTS = (
    "the staging database moved to postgres seventeen in march",
    "postgres backups run every night at two from the staging host",
    "the deploy script pushes the web image to the registry",
    "our registry keeps images for thirty days",
    "the nightly job rotates the postgres logs",
    "ana reviews every migration of the staging database",
)


def _leaves() -> list[Leaf]:
    return [make_leaf(text, domain="infra", position=i) for i, text in enumerate(TEXTS)]


def _branch(store: Store, name: str, members: list[Leaf], summary: str) -> None:
    store.put_branch(
        Branch(
            node_id=f"N1-infra-{name}",
            layer=1,
            domain="infra",
            title=summary,
            summary=summary,
            keywords=tuple(summary.split()),
            children=tuple(
                ChildRef(id=x.leaf_id, kind="leaf", title=x.text, excerpt=x.text) for x in members
            ),
        )
    )
    store.set_parent([x.leaf_id for x in members], f"N1-infra-{name}")


def _ranking(store: Store, query: str) -> list[tuple[str, float, tuple[str, ...]]]:
    return [
        (c.entry.id, round(c.score, 9), c.matched)
        for c in store.candidates(query, limit=20, kinds=("leaf",))
    ]


def test_leaves_rank_the_same_whatever_branches_a_machine_built(tmp_path: Path) -> None:
    leaves = _leaves()
    bare = Store.create(tmp_path / "bare")
    bare.put_leaves(leaves)
    grouped = Store.create(tmp_path / "grouped")
    grouped.put_leaves(leaves)
    # This machine grouped them and wrote summaries that repeat the frequent words.
    _branch(grouped, "a", leaves[:3], "postgres staging postgres database registry")
    _branch(grouped, "b", leaves[3:], "postgres registry staging migration logs")
    words = terms("postgres staging registry database migration ana")
    assert grouped.document_frequencies(words) == bare.document_frequencies(words)
    (postgres,) = terms("postgres")
    assert grouped.document_frequencies([postgres]) == {postgres: 3}
    assert grouped.count("leaf") == bare.count("leaf") == len(TEXTS)
    assert grouped.count("branch") == 2
    for query in ("postgres staging", "registry images", "who reviews migrations", "ana"):
        assert _ranking(grouped, query) == _ranking(bare, query)


def test_branches_stay_searchable_on_their_own_table(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "s")
    leaves = _leaves()
    store.put_leaves(leaves)
    _branch(store, "a", leaves[:3], "postgres on the staging host")
    _branch(store, "b", leaves[3:], "registry images and log rotation")
    found = store.candidates("registry", kinds=("branch",))
    assert [c.entry.id for c in found] == ["N1-infra-b"]
    both = store.candidates("registry rotation", kinds=("leaf", "branch"), limit=10)
    kinds = {c.entry.kind for c in both}
    assert kinds == {"leaf", "branch"}
    scores = [c.score for c in both]
    assert scores == sorted(scores, reverse=True)


def test_removing_and_rewriting_branches_keeps_the_statistics(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "s")
    leaves = _leaves()
    store.put_leaves(leaves)
    before = _ranking(store, "postgres staging database")
    _branch(store, "a", leaves, "postgres postgres staging staging database")
    _branch(store, "a", leaves, "a rewritten summary about postgres")
    assert _ranking(store, "postgres staging database") == before
    store.remove_branch("N1-infra-a")
    assert store.count("branch") == 0
    assert _ranking(store, "postgres staging database") == before
    store.rebuild()
    assert _ranking(store, "postgres staging database") == before
