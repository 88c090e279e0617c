"""Walking a folder the way a developer sees it: no VCS, virtualenv, build or ignored files."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SKIP_DIRS", "GitIgnore", "walk_files"]

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".env", "env", "node_modules",
        "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
        ".idea", ".vscode", ".eggs", "build", "dist", "target", ".gradle", ".next",
        "site-packages", ".cache", ".ihmt",
    }
)  # fmt: skip
SKIP_FILES = frozenset(
    {"uv.lock", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "poetry.lock"}
)
SKIP_SUFFIXES = (".pyc", ".pyo", ".so", ".dll", ".dylib", ".class", ".jar", ".o", ".a", ".min.js")


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    negate: bool
    dir_only: bool


class GitIgnore:
    """The ``.gitignore`` rules of a folder tree (common subset: globs, ``/``, ``!``, ``**``)."""

    def __init__(self) -> None:
        self._rules: dict[str, list[_Rule]] = {}

    def load(self, folder: Path, rel: str) -> None:
        """Read ``folder/.gitignore`` (``rel``: the folder relative to the root, '' for it)."""
        try:
            lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        rules = []
        for raw in lines.splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.strip("/") if dir_only else line
            anchored = "/" in line.lstrip("/")[:-1] or line.startswith("/")
            line = line.lstrip("/")
            regex = fnmatch.translate(line).replace(r"(?s:", "(?s:", 1)
            regex = regex.replace(".*.*/", "(?:.*/)?").replace("/.*.*", "(?:/.*)?")
            if not anchored:
                regex = r"(?:.*/)?" + regex
            rules.append(_Rule(re.compile(regex), negate, dir_only))
        if rules:
            self._rules[rel] = rules

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """True when ``rel`` (a path relative to the root, ``/``-separated) is ignored."""
        result = False
        for base, rules in self._rules.items():
            if base and not rel.startswith(base + "/"):
                continue
            sub = rel[len(base) + 1 :] if base else rel
            for rule in rules:
                if rule.dir_only and not is_dir:
                    continue
                if rule.pattern.fullmatch(sub):
                    result = not rule.negate
        return result


def walk_files(root: Path, *, gitignore: bool = True) -> Iterator[tuple[Path, str]]:
    """Every file under ``root`` a developer would call source, as ``(path, relative path)``.

    Skips VCS, virtualenv, cache and build folders, lock files, compiled objects and,
    when ``gitignore`` is true, whatever the ``.gitignore`` files ignore. Sorted by path.
    """
    rules = GitIgnore()
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        rel_dir = here.relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        if gitignore:
            rules.load(here, rel_dir)
        kept = []
        for name in sorted(dirs):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name in SKIP_DIRS or name.endswith(".egg-info"):
                continue
            if gitignore and rules.ignored(rel, is_dir=True):
                continue
            if os.path.islink(here / name):
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if name in SKIP_FILES or name.endswith(SKIP_SUFFIXES) or name == ".gitignore":
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if gitignore and rules.ignored(rel, is_dir=False):
                continue
            yield here / name, rel
