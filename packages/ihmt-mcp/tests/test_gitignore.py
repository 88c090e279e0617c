"""Project indexes skip what ``.gitignore`` ignores, by git's own rules (``pathspec``).

The oracle is git itself: the files ``walk_files`` keeps are the files
``git ls-files --others --exclude-standard`` lists for the same tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ihmt_mcp._files import walk_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git as the oracle")

# Nested files, negation, anchoring, `**`, a folder-only rule, escapes and comments.
TREE: dict[str, str] = {
    ".gitignore": (
        "# build output\n/gen\n**/cache/\n*.log\n!keep.log\ndoc/*.txt\n\\#notes.py\nout/\ntmp_*\n"
    ),
    "gen/a.py": "",
    "lib/gen/b.py": "",  # /gen is anchored to the root: this one stays
    "lib/cache/c.py": "",
    "deep/er/cache/d.py": "",
    "app.log": "",
    "keep.log": "",
    "doc/guide.txt": "",
    "doc/sub/deep.txt": "",  # doc/*.txt does not reach into doc/sub
    "#notes.py": "",
    "out": "",  # a file named like the folder-only rule `out/`: kept
    "tmp_x.py": "",
    "src/main.py": "",
    "src/.gitignore": "*.py\n!main.py\n!keep_*.py\n",
    "src/helper.py": "",
    "src/keep_me.py": "",
    "src/sub/.gitignore": "!helper.py\n",
    "src/sub/helper.py": "",  # re-included below the parent's *.py
    "src/sub/other.py": "",
}


def _plant(root: Path) -> None:
    for rel, text in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _git_keeps(root: Path) -> set[str]:
    # Only the tree's own .gitignore files: no user or system excludes.
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    env["XDG_CONFIG_HOME"] = str(root.parent / "no-config")
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=root,
        check=True,
        capture_output=True,
        env=env,
    ).stdout.decode()
    return {rel for rel in listed.split("\0") if rel and not rel.endswith(".gitignore")}


def test_walk_keeps_exactly_what_git_keeps(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _plant(root)
    ours = {rel for _path, rel in walk_files(root)}
    git = _git_keeps(root)
    assert ours == git
    # What the rules mean, spelled out (so a wrong oracle cannot hide a regression).
    assert {"lib/gen/b.py", "keep.log", "doc/sub/deep.txt", "out"} <= ours
    assert {"src/main.py", "src/keep_me.py", "src/sub/helper.py"} <= ours
    assert not ours & {"gen/a.py", "lib/cache/c.py", "deep/er/cache/d.py", "app.log"}
    assert not ours & {"doc/guide.txt", "#notes.py", "tmp_x.py", "src/helper.py"}
    assert "src/sub/other.py" not in ours


def test_gitignore_can_be_turned_off(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _plant(root)
    ours = {rel for _path, rel in walk_files(root, gitignore=False)}
    assert {"gen/a.py", "app.log", "src/helper.py", "src/sub/other.py"} <= ours
