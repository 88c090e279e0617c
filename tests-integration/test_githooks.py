"""The repository's own git hooks (``tools/githooks``), run by real git."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HOOKS = Path(__file__).resolve().parents[1] / "tools" / "githooks"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _commit(repo: Path, *message: str) -> subprocess.CompletedProcess[str]:
    args = [arg for part in message for arg in ("-m", part)]
    return subprocess.run(
        ["git", "-C", str(repo), "commit", "--allow-empty", "-q", *args],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for key, value in (
        ("core.hooksPath", str(HOOKS)),
        ("user.name", "Hook Test"),
        ("user.email", "hooks@example.invalid"),
    ):
        subprocess.run(["git", "-C", str(tmp_path), "config", key, value], check=True)
    return tmp_path


def test_a_subject_of_72_characters_is_accepted_with_a_long_body(repo: Path) -> None:
    done = _commit(repo, "s" * 72, "b" * 300)
    assert done.returncode == 0, done.stderr


def test_a_subject_longer_than_72_characters_is_refused(repo: Path) -> None:
    done = _commit(repo, "s" * 73)
    assert done.returncode != 0
    assert "73 characters" in done.stderr
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--oneline"], capture_output=True, text=True
    )
    assert log.stdout == ""  # nothing was committed
