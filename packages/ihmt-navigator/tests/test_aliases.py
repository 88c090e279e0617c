"""Aliases the store learns from its own memories: a project called by what it is, and an
abbreviation a memory spells out. Real stores, made-up memories."""

from __future__ import annotations

from pathlib import Path

import pytest

import ihmt_navigator._search as search_module
from ihmt_navigator import Navigator
from ihmt_navigator._aliases import (
    abbreviations,
    clipped,
    definition,
    profile,
    spells_out,
    stands_for,
)
from ihmt_store import Store
from ihmt_store.testing import make_leaf

QUOKKA = [
    "Started quokka: a Haskell compiler plugin that lints lens usage in large codebases.",
    "quokka error reporting: diagnostics are rendered with prettyprinter, one colour per severity.",
    "quokka builds with cabal 3.10 and GHC 9.6; the test suite runs under hspec.",
]
MARLIN = [
    "marlin is an Elm dashboard for greenhouse humidity sensors, hosted on Netlify.",
    "marlin error reporting: failed sensor reads show a red banner and retry after 30 seconds.",
    "marlin builds with elm-watch; the sensors push readings over MQTT every minute.",
]
GLOBAL = [
    "The billing ledger is snapshotted nightly and copied to a second region for disaster "
    "recovery; restores are rehearsed every quarter.",
    "The office coffee machine is descaled on the first Monday of the month.",
    "Invoices are exported to the accountant as CSV on the last working day.",
]


def _store(tmp_path: Path, *, definitions: bool = True) -> Store:
    store = Store.create(tmp_path / "store")
    leaves = []
    for project, texts in (("quokka", QUOKKA), ("marlin", MARLIN), ("", GLOBAL)):
        for position, text in enumerate(texts):
            if not definitions and position == 0 and project:
                continue  # no memory says what the project is
            leaves.append(make_leaf(text, position=position, source=project, project=project))
    store.put_leaves(leaves)
    return store


def _ids(store: Store) -> dict[str, str]:
    return {e.excerpt[:30]: e.id for e in store.iter_entries("leaf")}


def test_a_memory_defining_a_project_gives_it_a_profile(tmp_path: Path) -> None:
    store = _store(tmp_path)
    quokka = profile(store, "quokka")
    assert {"haskel", "plugin", "compil"} & quokka
    assert "quokka" not in quokka
    assert "elm" in profile(store, "marlin")
    # A sentence saying something about the project is not what it is.
    assert definition("marlin", "marlin is on Elm 0.19 now.") == ""
    assert definition("marlin", "Kicked off marlin, an Elm dashboard. It is small.").startswith(
        ", an Elm dashboard"
    )


def test_a_question_describing_a_project_is_answered_from_that_project(tmp_path: Path) -> None:
    store = _store(tmp_path)
    nav = Navigator(store)
    result = nav.search("How does the Haskell plugin render its error diagnostics?")
    assert result.status == "found"
    assert result.best is not None and result.best.project == "quokka"
    assert "prettyprinter" in result.best.content
    assert "quokka" in result.best.matched  # read as naming the project


def test_without_a_definition_nothing_is_learned_and_the_answer_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path, definitions=False)
    assert profile(store, "quokka") == frozenset()
    nav = Navigator(store)
    questions = [
        "How does the Haskell plugin render its error diagnostics?",
        "how is error reporting done in marlin?",
        "When is the coffee machine descaled?",
        "What's the DR plan for the payroll database?",
    ]
    learned = [nav.search(text) for text in questions]
    monkeypatch.setattr(search_module, "with_aliases", lambda store, q, leaves, scores: (q, leaves))
    plain = [nav.search(text) for text in questions]
    for got, want in zip(learned, plain, strict=True):
        assert (got.status, got.confidence) == (want.status, want.confidence)
        assert [h.id for h in got.results] == [h.id for h in want.results]


def test_an_abbreviation_a_memory_spells_out_is_held_by_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    nav = Navigator(store)
    result = nav.search("What's the DR story for the billing ledger snapshots?")
    assert result.status == "found"
    assert result.best is not None and "disaster recovery" in result.best.content
    assert "dr" in result.best.matched


def test_an_abbreviation_nothing_spells_out_stays_unknown(tmp_path: Path) -> None:
    store = _store(tmp_path)
    nav = Navigator(store)
    assert nav.search("What is the QXZ policy for the coffee machine?").status == "not_found"


def test_a_name_no_memory_holds_is_no_clipping_of_one_that_starts_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put_leaf(make_leaf("Decision for Quok: nightly builds run on the CI runner.", position=9))
    nav = Navigator(store)
    result = nav.search("Which CI runner does project Quokkalon use for nightly builds?")
    assert result.status == "not_found"
    assert "Nothing stored mentions 'Quokkalon'" in result.compact


def test_abbreviations_are_initials_numeronyms_and_clippings() -> None:
    assert abbreviations("Is the DR site on k8s or e2e only? db.m6g.large") == ["DR", "k8s"]
    assert abbreviations("a 200 GB data disk, 5MB parts") == []  # units, not initials
    assert spells_out("DR", "copied for disaster recovery.") == ["disaster", "recovery"]
    assert spells_out("k8s", "runs on Kubernetes 1.30") == ["Kubernetes"]
    assert spells_out("k8s", "runs on Nomad") == []
    assert spells_out("CR", "the CR is open") == []
    assert clipped("lib", "the core library and the binary")
    assert clipped("library", "see lib/ for the parser")
    assert not clipped("to", "tomorrow")  # a stop word clips nothing
    assert not clipped("versiones", "each of those versions")  # no word starts the other
    assert spells_out("ID", "the key is in Dorvault") == []  # "in" stands for no letter
    assert spells_out("CA", "renewing the certificate ACM issued") == []  # ACM is no word


def test_asked_in_another_project_a_described_one_answers(tmp_path: Path) -> None:
    store = _store(tmp_path)
    nav = Navigator(store)
    result = nav.search(
        "How does the Haskell plugin render its error diagnostics?", prefer_project="marlin"
    )
    assert result.status == "found"
    assert result.best is not None and result.best.project == "quokka"


def test_asked_in_the_described_project_its_words_are_not_read_as_its_name(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    nav = Navigator(store)
    result = nav.search(
        "Which Elm version do the greenhouse sensors need?", prefer_project="marlin"
    )
    assert result.best is None or "marlin" not in result.best.matched


def _ledger_store(tmp_path: Path, *, defined: bool) -> Store:
    texts = [
        "Backups of Zarbonite go to the tape library every night.",
        "Website backups go to an object bucket every night.",
        "The ZB replica sits in rack four of the basement room.",
        "The basement room has a replica of the old reception desk.",
    ]
    if defined:
        texts.append("In tickets we write ZB (Zarbonite) to save typing.")
    store = Store.create(tmp_path / "store")
    store.put_leaves([make_leaf(text, position=i) for i, text in enumerate(texts)])
    return store


def test_an_abbreviation_a_memory_defines_is_expanded_both_ways(tmp_path: Path) -> None:
    store = _ledger_store(tmp_path, defined=True)
    assert stands_for("ZB", "Zarbonite") and not stands_for("ART", "UTC-3")
    nav = Navigator(store)
    forward = nav.search("Where do ZB backups go?")
    assert forward.best is not None and "tape library" in forward.best.content
    assert "zb" in forward.best.matched
    backward = nav.search("Which rack holds the Zarbonite replica?")
    assert backward.best is not None and "rack four" in backward.best.content
    assert "zarbonit" in backward.best.matched or "zarbonite" in backward.best.matched


def test_without_the_definition_the_abbreviation_is_not_expanded(tmp_path: Path) -> None:
    store = _ledger_store(tmp_path / "plain", defined=False)
    nav = Navigator(store)
    forward = nav.search("Where do ZB backups go?")
    assert forward.best is None or "tape library" not in forward.best.content
    backward = nav.search("Which rack holds the Zarbonite replica?")
    assert backward.best is None or "rack four" not in backward.best.content
