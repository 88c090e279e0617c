from __future__ import annotations

import subprocess
import sys

import pytest

import ihmt_store


def test_every_public_name_resolves() -> None:
    for name in ihmt_store.__all__:
        assert getattr(ihmt_store, name) is not None, name
    assert set(dir(ihmt_store)) >= set(ihmt_store.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        ihmt_store.Nope  # noqa: B018 - the attribute access is the test


def test_importing_the_package_does_not_load_sqlite() -> None:
    code = (
        "import sys, ihmt_store; "
        "print('sqlite3' in sys.modules, 'ihmt_store._store' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_every_error_descends_from_the_root_and_a_builtin() -> None:
    pairs = {
        ihmt_store.StoreNotFoundError: FileNotFoundError,
        ihmt_store.StoreFormatError: ValueError,
        ihmt_store.ConfigError: ValueError,
        ihmt_store.LeafNotFoundError: LookupError,
        ihmt_store.BranchNotFoundError: LookupError,
        ihmt_store.CorruptFileError: ValueError,
        ihmt_store.LockTimeoutError: TimeoutError,
        ihmt_store.StoreIOError: OSError,
    }
    for error, builtin in pairs.items():
        assert issubclass(error, ihmt_store.StoreError)
        assert issubclass(error, ihmt_store.IhmtError)
        assert issubclass(error, builtin)
