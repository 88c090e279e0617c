"""A project index is derived (written without flushing): a writer killed at any point
leaves an index that answers from the files as they are now, never a half-written one."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ihmt_mcp import ProjectIndex

# The child syncs its index and dies by SIGKILL at the ``kill_at``-th rename of the sync
# (a file of the store's batch, the trunk, or the manifest, replaced after the store has
# committed): a real process killed mid-write, at a point the test chooses.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from ihmt_mcp import ProjectIndex

    root, base, target = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[4]
    kill_at = int(sys.argv[3])
    index = ProjectIndex(root, base)
    index.store  # opened (and created) before the count starts
    real, seen = os.replace, [0]

    def replace(src, dst, *args, **kwargs):
        if target and str(dst).endswith(target):
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst, *args, **kwargs)
        seen[0] += 1
        if seen[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    os.replace = replace
    index.map()
    print("synced without being killed", flush=True)
    """
)

_DEF = re.compile(r"^def (\w+)\(", re.MULTILINE)


def _module(n: int, version: int) -> str:
    return "".join(
        f"def func_{n}_{k}(value):\n    return value + {version * 1000 + k}  # v{version}\n\n\n"
        for k in range(12)
    )


def _killed_sync(root: Path, base: Path, kill_at: int, target: str = "") -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(base), str(kill_at), target],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)


def _assert_answers_from_the_files(root: Path, base: Path) -> None:
    """Every symbol is found with its current code; every leaf the index holds is code
    that is in its file now (nothing stale, nothing half-written is left to serve)."""
    index = ProjectIndex(root, base)
    try:
        listing = index.map()
        files = sorted(p for p in root.glob("*.py"))
        assert f" · {len(files)} files · " in listing.splitlines()[0]
        for path in files:
            text = path.read_text(encoding="utf-8")
            for name in _DEF.findall(text):
                answer = index.find(name)
                body = answer.split("\n", 1)[1]
                assert body in text, (name, answer)
                assert answer.startswith(f"{path.name}:"), (name, answer)
        store = index.store
        for entry in store.iter_entries("leaf"):
            held = (root / entry.source).read_text(encoding="utf-8")
            assert store.read_leaf(entry.id).text in held, entry.source
        assert store.stats().unreachable == 0
    finally:
        index.close()


@pytest.mark.parametrize("kill_at", [3, 40])
def test_a_first_map_killed_mid_write_is_rebuilt_and_answers_from_the_files(
    tmp_path: Path, kill_at: int
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    for n in range(8):
        (root / f"mod_{n}.py").write_text(_module(n, 1), encoding="utf-8")
    base = tmp_path / "indexes"
    _killed_sync(root, base, kill_at)
    _assert_answers_from_the_files(root, base)


@pytest.mark.parametrize(
    ("kill_at", "target"),
    [(2, ""), (12, ""), (0, "ihmt_mcp_manifest.json")],
    ids=["early-in-the-batch", "later-in-the-batch", "after-the-store-committed"],
)
def test_an_edit_synced_by_a_killed_writer_is_served_fresh_never_half(
    tmp_path: Path, kill_at: int, target: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    for n in range(8):
        (root / f"mod_{n}.py").write_text(_module(n, 1), encoding="utf-8")
    base = tmp_path / "indexes"
    ProjectIndex(root, base).map()
    for n in (1, 4, 6):
        (root / f"mod_{n}.py").write_text(_module(n, 2), encoding="utf-8")
    (root / "mod_7.py").unlink()
    (root / "mod_8.py").write_text(_module(8, 2), encoding="utf-8")
    _killed_sync(root, base, kill_at, target)
    # Edited again before the next call: what the dead writer indexed is stale now.
    for n in (4, 8):
        (root / f"mod_{n}.py").write_text(_module(n, 3), encoding="utf-8")
    _assert_answers_from_the_files(root, base)
    index = ProjectIndex(root, base)
    assert "# v3" in index.find("func_4_3")
    assert "# v2" in index.find("func_6_3")
    assert "mod_7.py" not in index.find("func_7_3")  # its file is gone
    index.close()


def test_an_edited_file_is_answered_with_its_code_and_lines_as_they_are_now(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    path = root / "mod_0.py"
    path.write_text(_module(0, 1), encoding="utf-8")
    index = ProjectIndex(root, tmp_path / "indexes")
    index.map()
    for run in range(3):
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\ndef added_{run}(value):\n    return value * {run}\n")
        answer = index.find(f"added_{run}")
        assert answer.startswith("mod_0.py:"), answer
        assert f"return value * {run}" in answer
    assert "return value + 1005" in index.find("func_0_5")
    # A symbol above grows by a line: the ones below keep their code, not their lines.
    grown = "    value += 1\n    return value + 1002"
    path.write_text(path.read_text(encoding="utf-8").replace("    return value + 1002", grown))
    first = path.read_text(encoding="utf-8").splitlines().index("def func_0_5(value):") + 1
    assert index.find("func_0_5").startswith(f"mod_0.py:{first}-{first + 1} · func_0_5")
    index.close()


@pytest.mark.parametrize("damage", ["truncated", "emptied", "text changed"])
def test_a_damaged_leaf_file_is_written_again_never_served(tmp_path: Path, damage: str) -> None:
    """What a power cut can leave of an unflushed file, or a hand in the index's folder."""
    root = tmp_path / "project"
    root.mkdir()
    for n in range(3):
        (root / f"mod_{n}.py").write_text(_module(n, 1), encoding="utf-8")
    index = ProjectIndex(root, tmp_path / "indexes")
    answer = index.find("func_1_4")
    leaf_id = next(e.id for e in index.store.iter_entries("leaf") if e.title.endswith("func_1_4"))
    path = index.store.path / index.store.entry(leaf_id).path
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) - 20])
    elif damage == "emptied":
        path.write_bytes(b"")
    else:
        path.write_bytes(data.replace(b"value + 1004", b"value - 9999"))
    index.close()
    for again in (index, ProjectIndex(root, tmp_path / "indexes")):
        assert again.find("func_1_4") == answer
    _assert_answers_from_the_files(root, tmp_path / "indexes")
