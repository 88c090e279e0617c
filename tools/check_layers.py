"""Check the dependency direction of STYLE.md §2.

Two parts, one report:

1. **The packages' sources, by import-linter** (``lint-imports``), with the contracts
   in the root ``pyproject.toml`` under ``[tool.importlinter]``: a ``layers`` contract
   (imports point down; the layer-1 siblings never import each other, directly or
   through another module) and a ``private_modules`` contract (nothing imports another
   package's private module, such as ``ihmt_store._index``).
2. **The packages' ``tests/`` folders, here**: import-linter only analyses importable
   packages, and a package's tests are loose files run with ``--import-mode=importlib``.
   They get the same two rules, read from the same ``layers`` contract: the tests of
   ``ihmt-facts`` may import ``ihmt_store`` but not ``ihmt_chunkers``, nor another
   package's private module. (At run time ``tools/isolated_tests.py`` would catch the
   first too, by failing; this catches it in a second, before any venv is built.)

Fails (exit 1, one line per offence). Run: ``python tools/check_layers.py [ROOT]``;
``ROOT`` (default: this repository) holds ``packages/<name>/src/<import_name>``; the
contracts are always this repository's.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CONFIG = HERE / "pyproject.toml"


def layers(config: Path = CONFIG) -> list[list[str]]:
    """The ``layers`` contract, top first; each layer a list of independent siblings."""
    with open(config, "rb") as handle:
        contracts = tomllib.load(handle)["tool"]["importlinter"]["contracts"]
    contract = next(c for c in contracts if c["type"] == "layers")
    return [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]


def allowed_imports(config: Path = CONFIG) -> dict[str, frozenset[str]]:
    """For each package, the IHMT packages it may import: those of the layers below."""
    stack = layers(config)
    return {
        package: frozenset(name for below in stack[depth + 1 :] for name in below)
        for depth, layer in enumerate(stack)
        for package in layer
    }


def import_linter_offences(root: Path) -> list[str]:
    """import-linter's broken contracts for ``root``'s sources, one line per import."""
    sources = [str(p) for p in sorted((root / "packages").glob("*/src")) if p.is_dir()]
    env = {
        **os.environ,
        # The tree under check comes first, ahead of the workspace's editable installs.
        "PYTHONPATH": os.pathsep.join([*sources, os.environ.get("PYTHONPATH", "")]),
    }
    command = [
        sys.executable,
        "-c",
        "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())",
        "--no-cache",
        str(CONFIG),
    ]
    try:
        result = subprocess.run(
            command, cwd=root, env=env, capture_output=True, text=True, check=False
        )
    except OSError as exc:
        return [f"import-linter could not run: {exc}"]
    if result.returncode == 0:
        return []
    if "ModuleNotFoundError: No module named 'importlinter'" in result.stderr:
        return ["import-linter is not installed: run `make sync` (it is in the dev group)"]
    out: list[str] = []
    context = ""
    in_report = False
    for line in result.stdout.splitlines():
        if line.strip() == "Broken contracts":
            in_report = True
        elif in_report and line.endswith(":") and not line.startswith("-"):
            context = line.rstrip(":")
        elif in_report and line.startswith("- "):
            out.append(f"{line[2:].strip()}: {context} (import-linter)")
    return out or [f"import-linter failed:\n{result.stdout}{result.stderr}".rstrip()]


def _imported_modules(tree: ast.AST, ours: frozenset[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            # `from ihmt_store import _index` reaches a private module too
            found.extend(
                (node.lineno, f"{node.module}.{alias.name}")
                for alias in node.names
                if alias.name.startswith("_") and node.module.split(".")[0] in ours
            )
    return found


def test_offences(root: Path) -> list[str]:
    """Every import in a package's ``tests/`` that breaks the layering."""
    allowed = allowed_imports()
    ours = frozenset(allowed)
    out: list[str] = []
    for package, may_import in allowed.items():
        folder = root / "packages" / package.replace("_", "-") / "tests"
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.py")):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            except SyntaxError as exc:
                out.append(f"{path}:{exc.lineno}: cannot parse: {exc.msg}")
                continue
            for line, module in _imported_modules(tree, ours):
                parts = module.split(".")
                top = parts[0]
                if top not in ours or top == package:
                    continue
                where = f"{path.relative_to(root)}:{line}"
                if top not in may_import:
                    out.append(f"{where}: {package}'s tests must not import {top} (layering)")
                elif any(p.startswith("_") and not re.fullmatch(r"__\w+__", p) for p in parts[1:]):
                    out.append(f"{where}: {module} is private to {top}")
    return out


def offences(root: Path) -> list[str]:
    """Every import under ``root`` that breaks the layering: sources, then tests."""
    return import_linter_offences(root) + test_offences(root)


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve() if len(argv) > 1 else HERE
    problems = offences(root)
    for line in problems:
        print(line)
    if problems:
        print(f"layering check failed: {len(problems)} offence(s)")
        return 1
    print("layering check passed (import-linter on the sources, and the tests/ folders)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
