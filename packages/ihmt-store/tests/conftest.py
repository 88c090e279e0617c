from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ihmt_store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.create(tmp_path / "memory")
    yield s
    s.close()
