from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest

from ihmt_facts import Timeline
from ihmt_store import Leaf, Store, leaf_id_for

_REPORT: list[str] = []


class PutLeaf(Protocol):
    def __call__(
        self,
        text: str,
        timestamp: str,
        *,
        project: str = "",
        tags: Sequence[str] = (),
        domain: str = "personal",
        data_type: str = "GENERIC",
        extra: dict[str, Any] | None = None,
    ) -> Leaf: ...


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.create(tmp_path / "memory")
    yield s
    s.close()


@pytest.fixture
def timeline(store: Store) -> Timeline:
    return Timeline(store)


@pytest.fixture
def put(store: Store) -> PutLeaf:
    """Save a leaf the way the ingest pipeline does (the caller ingests it)."""
    counter = iter(range(10_000))

    def _put(
        text: str,
        timestamp: str,
        *,
        project: str = "",
        tags: Sequence[str] = (),
        domain: str = "personal",
        data_type: str = "GENERIC",
        extra: dict[str, Any] | None = None,
    ) -> Leaf:
        position = next(counter)
        leaf = Leaf(
            leaf_id=leaf_id_for(domain=domain, source="test", position=position, text=text),
            text=text,
            timestamp=timestamp,
            domain=domain,
            data_type=data_type,
            source="test",
            project=project,
            tags=tuple(tags),
            extra=extra or {},
        )
        return store.put_leaf(leaf)

    return _put


@pytest.fixture
def report() -> Callable[[str], None]:
    """Lines shown in the terminal summary (extraction precision and recall)."""

    def _report(line: str) -> None:
        print(line)
        _REPORT.append(line)

    return _report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _REPORT:
        terminalreporter.section("ihmt-facts extraction quality")
        for line in _REPORT:
            terminalreporter.write_line(line)
