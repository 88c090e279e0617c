"""A walkthrough of what has landed: the store and the navigator, on a small story.

    python tools/demo.py [--dir DIR]

Saves a dozen memories (a move from Madrid to Valencia, three people called Luis, a
staging database that was upgraded, a few project decisions), consolidates them into a
tree, and asks the questions an agent would: a targeted one, an ambiguous name and its
clue, a corrected fact, a broad question, and something never stored. ``ihmt demo``
replaces this once the command-line package lands.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

from ihmt_navigator import Consolidator, Navigator, StoreFrequencies, summarizer_for
from ihmt_store import Correction, Store, StoreConfig
from ihmt_store.testing import make_leaf

STORY = [
    ("personal", "2024-03-11", "", "I live in Madrid, in a flat near Retiro park."),
    ("personal", "2024-07-22", "", "Vacaciones en Benidorm con Luis, mi primo; comimos paella."),
    ("personal", "2026-08-30", "", "Fin de semana en El Saler con Luis Ortega y su perro Toby."),
    ("work", "2024-11-30", "falcon", "Luis Marín revisó el pull request del módulo de facturas."),
    ("personal", "2026-02-03", "", "I moved to Valencia; the new flat is in Ruzafa."),
    (
        "decisions",
        "2025-05-02",
        "falcon",
        "We decided to use Pulumi for the falcon scheduler because the stacks are typed.",
    ),
    (
        "infra",
        "2025-01-10",
        "falcon",
        "The staging host of falcon runs PostgreSQL 15 on port 5432.",
    ),
    (
        "infra",
        "2026-02-20",
        "falcon",
        "Staging moved to PostgreSQL 17 last week; the falcon migrations passed.",
    ),
    (
        "decisions",
        "2025-06-11",
        "falcon",
        "Falcon billing uses Stripe webhooks; retries are keyed by event id.",
    ),
    (
        "decisions",
        "2025-07-01",
        "falcon",
        "Falcon search moved from Elasticsearch to Meilisearch to save memory.",
    ),
    (
        "infra",
        "2025-08-09",
        "falcon",
        "The falcon CI uses GitHub Actions with a self-hosted runner on ci-01.",
    ),
]


def step(title: str, text: str) -> None:
    print(f"\n── {title} " + "─" * max(0, 70 - len(title)))
    print(textwrap.indent(text.rstrip(), "   "))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where to build the store")
    args = parser.parse_args(argv)
    folder = args.dir or Path(tempfile.mkdtemp(prefix="ihmt-demo-"))
    store = Store.create(folder / "ihmt_memory", StoreConfig(branch_factor=4))
    ids = []
    for position, (domain, when, project, text) in enumerate(STORY):
        leaf = make_leaf(text, domain=domain, timestamp=when, position=position, project=project)
        ids.append(store.put_leaf(leaf).leaf_id)
    step("saved", f"{len(ids)} memories into {store.path}")
    store.annotate(ids[0], outdated_by=Correction(by=ids[4], date="2026-02-03", reason="moved"))
    store.annotate(ids[6], outdated_by=Correction(by=ids[7], date="2026-02-20", reason="upgrade"))
    step("corrections", "Madrid → Valencia and PostgreSQL 15 → 17 recorded as corrections")
    freq = StoreFrequencies(store)
    summarizer = summarizer_for("heuristic", document_frequency=freq, total=freq.total)
    report = Consolidator(store, summarizer).consolidate(force=True)
    stats = store.stats()
    step(
        "consolidated",
        f"{len(report.branches_created)} branches; depth {stats.depth}; "
        f"unreachable {stats.unreachable}\n"
        + "\n".join(f"{e.id}: {e.title}" for e in store.iter_entries("branch")),
    )
    nav = Navigator(store)
    for question in (
        "why did we pick Pulumi for the scheduler?",
        "Luis",
        "which PostgreSQL does staging run?",
        "what do we know about falcon?",
        "what is the wifi password of the Ocelot office?",
    ):
        result = nav.search(question)
        step(
            f'search "{question}" → {result.status} ({result.tokens} tokens, '
            f"{result.files_read} file read)",
            result.compact,
        )
    answer = nav.ask("Luis", lambda ambiguous: "vacaciones en Benidorm")
    step('ask "Luis", clue "vacaciones en Benidorm"', answer.compact)
    then = nav.search("where do I live?", as_of="2025-01-01")
    step('search "where do I live?" as of 2025-01-01', then.compact)
    print(f"\nThe memory is plain files: open {store.path}")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
