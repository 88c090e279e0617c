"""Check the dependency direction of STYLE.md §2 by parsing every import.

Fails (exit 1, one line per offence) when a package imports upward, when two
layer-1 siblings import each other, or when anything imports another package's
private module (``ihmt_store._index``). Run: ``python tools/check_layers.py [ROOT]``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ALLOWED: dict[str, frozenset[str]] = {
    "ihmt_store": frozenset(),
    "ihmt_chunkers": frozenset({"ihmt_store"}),
    "ihmt_facts": frozenset({"ihmt_store"}),
    "ihmt_navigator": frozenset({"ihmt_store"}),
    "ihmt_mcp": frozenset({"ihmt_store", "ihmt_chunkers", "ihmt_facts", "ihmt_navigator"}),
    "ihmt_cli": frozenset(
        {"ihmt_store", "ihmt_chunkers", "ihmt_facts", "ihmt_navigator", "ihmt_mcp"}
    ),
}


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
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
                if alias.name.startswith("_") and node.module.split(".")[0] in ALLOWED
            )
    return found


def offences(root: Path) -> list[str]:
    """Every import that breaks the layering, as ``path:line: message``."""
    out: list[str] = []
    packages = root / "packages"
    for package, allowed in ALLOWED.items():
        base = packages / package.replace("_", "-")
        for folder in (base / "src" / package, base / "tests"):
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*.py")):
                try:
                    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
                except SyntaxError as exc:
                    out.append(f"{path}:{exc.lineno}: cannot parse: {exc.msg}")
                    continue
                for line, module in _imported_modules(tree):
                    parts = module.split(".")
                    top = parts[0]
                    if top not in ALLOWED or top == package:
                        continue
                    where = f"{path.relative_to(root)}:{line}"
                    if top not in allowed:
                        out.append(f"{where}: {package} must not import {top} (layering)")
                    elif any(p.startswith("_") for p in parts[1:]):
                        out.append(f"{where}: {module} is private to {top}")
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    problems = offences(root)
    for line in problems:
        print(line)
    if problems:
        print(f"layering check failed: {len(problems)} offence(s)")
        return 1
    print("layering check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
