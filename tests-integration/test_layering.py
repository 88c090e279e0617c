"""The dependency rule of STYLE.md §2, checked on the real tree and on planted offences."""

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


def _plant(root: Path, package: str, source: str) -> None:
    folder = root / "packages" / package.replace("_", "-") / "src" / package
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mod.py").write_text(source)


def test_the_real_tree_respects_the_layers() -> None:
    assert _checker().offences(ROOT) == []


def test_upward_sibling_and_private_imports_are_all_caught(tmp_path: Path) -> None:
    _plant(tmp_path, "ihmt_store", "import ihmt_navigator\n")
    _plant(tmp_path, "ihmt_facts", "from ihmt_chunkers import split\n")
    _plant(tmp_path, "ihmt_navigator", "from ihmt_store._index import Index\n")
    _plant(tmp_path, "ihmt_mcp", "from ihmt_store import _store\nfrom ihmt_cli import main\n")
    _plant(tmp_path, "ihmt_cli", "from ihmt_mcp import Memory\nimport json\n")
    found = _checker().offences(tmp_path)
    joined = "\n".join(found)
    assert "ihmt_store must not import ihmt_navigator" in joined
    assert "ihmt_facts must not import ihmt_chunkers" in joined
    assert "ihmt_store._index is private to ihmt_store" in joined
    assert "ihmt_store._store is private to ihmt_store" in joined
    assert "ihmt_mcp must not import ihmt_cli" in joined
    assert len(found) == 5, found


def test_the_checker_exits_non_zero_on_an_offence(tmp_path: Path) -> None:
    _plant(tmp_path, "ihmt_chunkers", "import ihmt_facts\n")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "check_layers.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "ihmt_chunkers must not import ihmt_facts" in result.stdout
