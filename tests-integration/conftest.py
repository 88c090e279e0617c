from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.fixture
def python() -> str:
    """The interpreter of this test run; child processes use the same environment."""
    return sys.executable


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]
