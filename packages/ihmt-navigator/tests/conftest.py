from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from ihmt_navigator import Consolidator, Navigator, summarizer_for
from ihmt_store import Correction, Store, StoreConfig
from ihmt_store.testing import make_leaf

Note = tuple[str, str, str]  # (domain, date, text)

STORY: list[Note] = [
    ("personal", "2024-03-11", "I live in Madrid, in a flat near Retiro park."),
    ("personal", "2024-07-22", "Vacaciones en Benidorm con Luis Pardo, mi primo; comimos paella."),
    (
        "personal",
        "2026-08-30",
        "Fin de semana en la playa de El Saler con Luis Soler y su perro Toby.",
    ),
    ("work", "2024-11-30", "Cierre de trimestre: Luis Marín revisó el pull request de facturas."),
    ("personal", "2026-02-03", "I moved to Valencia; the new flat is in Ruzafa."),
    ("decisions", "2025-05-02", "We decided to use Pulumi for the falcon scheduler: typed stacks."),
    ("infra", "2025-01-10", "The staging host of falcon runs PostgreSQL 15 on port 5432."),
    ("infra", "2026-02-20", "Staging moved to PostgreSQL 17 last week; falcon migrations passed."),
    ("infra", "2025-03-01", "prod-eu runs nginx 1.25 behind the load balancer; TLS ends at nginx."),
    ("decisions", "2025-06-11", "Falcon billing uses Stripe webhooks; retries keyed by event id."),
    (
        "decisions",
        "2025-07-01",
        "Falcon search moved from Elasticsearch to Meilisearch for memory.",
    ),
    (
        "infra",
        "2025-08-09",
        "The falcon CI uses GitHub Actions with a self-hosted runner on ci-01.",
    ),
]


def fill(store: Store, notes: Sequence[Note], project: str = "") -> list[str]:
    ids = []
    for i, (domain, when, text) in enumerate(notes):
        leaf = make_leaf(text, domain=domain, timestamp=when, position=i, project=project)
        ids.append(store.put_leaf(leaf).leaf_id)
    return ids


@pytest.fixture
def make_store(tmp_path: Path) -> Iterator[Callable[..., Store]]:
    made: list[Store] = []

    def factory(branch_factor: int = 4, name: str = "m") -> Store:
        store = Store.create(tmp_path / name, StoreConfig(branch_factor=branch_factor))
        made.append(store)
        return store

    yield factory
    for store in made:
        store.close()


def consolidator(store: Store) -> Consolidator:
    return Consolidator(store, summarizer_for("heuristic", frequencies=store), frequencies=store)


@pytest.fixture(name="story_notes")
def story_notes_fixture() -> list[Note]:
    """The story's (domain, date, text) notes: people sharing a first name, two homes,
    decisions, hosts and their corrections."""
    return list(STORY)


@pytest.fixture(name="fill")
def fill_fixture() -> Callable[..., list[str]]:
    """Put (domain, date, text) notes into a store; returns their ids."""
    return fill


@pytest.fixture(name="consolidator")
def consolidator_fixture() -> Callable[[Store], Consolidator]:
    """A heuristic consolidator for a store."""
    return consolidator


@pytest.fixture
def story(make_store: Callable[..., Store]) -> tuple[Store, Navigator, list[str]]:
    store = make_store()
    ids = fill(store, STORY)
    store.annotate(ids[0], outdated_by=Correction(by=ids[4], date="2026-02-03"))
    store.annotate(ids[6], outdated_by=Correction(by=ids[7], date="2026-02-20"))
    consolidator(store).consolidate(force=True)
    return store, Navigator(store), ids
