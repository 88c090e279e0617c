"""The dependency rule of STYLE.md §2, checked on the real tree and on planted offences.

The sources are checked by import-linter (the contracts in the root pyproject.toml), the
packages' tests/ folders by tools/check_layers.py itself."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_layers", ROOT / "tools" / "check_layers.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plant(root: Path, package: str, source: str, name: str = "mod.py") -> None:
    folder = root / "packages" / package.replace("_", "-") / "src" / package
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").touch()
    (folder / name).write_text(source)


def _plant_test(root: Path, package: str, source: str) -> None:
    folder = root / "packages" / package.replace("_", "-") / "tests"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_mod.py").write_text(source)


def test_the_real_tree_respects_the_layers() -> None:
    assert _checker().offences(ROOT) == []


def test_upward_sibling_and_private_imports_are_all_caught(tmp_path: Path) -> None:
    _plant(tmp_path, "ihmt_store", "import ihmt_navigator\n")
    _plant(tmp_path, "ihmt_store", "class Index: ...\n", name="_index.py")
    _plant(tmp_path, "ihmt_store", "", name="_store.py")
    _plant(tmp_path, "ihmt_facts", "from ihmt_chunkers import split\n")
    _plant(tmp_path, "ihmt_navigator", "from ihmt_store._index import Index\n")
    _plant(tmp_path, "ihmt_mcp", "from ihmt_store import _store\nfrom ihmt_cli import main\n")
    _plant(tmp_path, "ihmt_cli", "from ihmt_mcp import Memory\nimport json\n")
    found = _checker().offences(tmp_path)
    joined = "\n".join(found)
    assert "ihmt_store.mod -> ihmt_navigator (l.1): ihmt_store is not allowed" in joined
    assert "ihmt_facts.mod -> ihmt_chunkers (l.1): ihmt_facts is not allowed" in joined
    assert "ihmt_navigator.mod -> ihmt_store._index (l.1): Private modules" in joined
    assert "ihmt_mcp.mod -> ihmt_store._store (l.1): Private modules" in joined
    assert "ihmt_mcp.mod -> ihmt_cli (l.2): ihmt_mcp is not allowed" in joined
    assert len(found) == 5, found


def test_the_packages_tests_are_held_to_the_same_layers(tmp_path: Path) -> None:
    _plant_test(tmp_path, "ihmt_facts", "import ihmt_store\nfrom ihmt_chunkers import split\n")
    _plant_test(tmp_path, "ihmt_navigator", "from ihmt_store import _index\n")
    _plant_test(tmp_path, "ihmt_cli", "from ihmt_mcp import Memory\nfrom ihmt_cli import _app\n")
    found = _checker().offences(tmp_path)
    joined = "\n".join(found)
    assert "test_mod.py:2: ihmt_facts's tests must not import ihmt_chunkers" in joined
    assert "test_mod.py:1: ihmt_store._index is private to ihmt_store" in joined
    assert len(found) == 2, found


def test_the_checker_exits_non_zero_on_an_offence(tmp_path: Path) -> None:
    _plant(tmp_path, "ihmt_chunkers", "import ihmt_facts\n")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "check_layers.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "ihmt_chunkers is not allowed to import ihmt_facts" in result.stdout
