"""Shared fixtures: the installed ``ihmt`` run as a real subprocess on real stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ihmt_mcp import Memory
from ihmt_store import Store

JOURNAL = (
    ("I live in Madrid, in a flat near Retiro park.", "2024-03-11"),
    ("Vacaciones en Benidorm con Luis, mi primo; comimos paella en la playa.", "2024-07-22"),
    ("Luis Marín, from work, reviewed the pull request of the invoices module.", "2024-11-30"),
    ("Fin de semana en El Saler con Luis Ortega y su perro Toby.", "2026-08-30"),
    ("I moved to Valencia; the new flat is in Ruzafa.", "2026-02-03"),
    ("The staging host runs PostgreSQL 15 on port 5432.", "2025-01-10"),
)


@dataclass(frozen=True)
class Run:
    """The outcome of one ``ihmt`` subprocess."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def ihmt_executable() -> str:
    found = Path(sys.executable).parent / "ihmt"
    assert found.exists(), f"the ihmt console script is not installed beside {sys.executable}"
    return str(found)


def child_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["IHMT_HOME"] = str(home)
    env["IHMT_PROJECT"] = ""  # global memories, whatever git root the tests run in
    # Words only unless a test says otherwise: loading the sentence encoder costs each
    # process most of a second; test_semantic_cli.py runs the commands with it.
    env.setdefault("IHMT_SEMANTIC", "off")
    env.pop("IHMT_PROJECTS_DIR", None)
    return env


@pytest.fixture
def ihmt_bin() -> str:
    """The installed console script."""
    return ihmt_executable()


@pytest.fixture
def ihmt_env(home: Path) -> dict[str, str]:
    """The environment of a child ``ihmt``: IHMT_HOME in tmp_path, no project."""
    return child_env(home)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def ihmt(home: Path, tmp_path: Path) -> Callable[..., Run]:
    """Run ``ihmt ARGS`` (stdin from ``input``) with IHMT_HOME in tmp_path; bounded."""

    def run(*args: str, input: str | bytes | None = None, timeout: float = 60) -> Run:
        data = input.encode("utf-8") if isinstance(input, str) else input
        done = subprocess.run(
            [ihmt_executable(), *args],
            input=data if data is not None else b"",
            capture_output=True,
            env=child_env(home),
            cwd=tmp_path,
            timeout=timeout,
            check=False,
        )
        return Run(
            done.returncode,
            done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"),
        )

    return run


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A memory holding the journal above (three people called Luis), built in-process."""
    path = tmp_path / "store"
    memory = Memory.init(path, branch_factor=4)
    try:
        for text, when in JOURNAL:
            memory.save(text, date=when, project="")
    finally:
        memory.close()
    return path


@pytest.fixture
def leaf_count() -> Callable[[Path], int]:
    """Leaves on disk (to show a failed command lost nothing)."""

    def count(path: Path) -> int:
        opened = Store.open(path)
        try:
            return opened.stats().leaves
        finally:
            opened.close()

    return count


def machine_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of an ``ihmt`` standing for one machine of a sync test: its home,
    words only, no ``GIT_*`` of the caller's (``extra`` may set some)."""
    base = {k: v for k, v in child_env(home).items() if not k.startswith("GIT_")}
    return {**base, "IHMT_SEMANTIC": "off", **extra}


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare git repository in tmp_path, HEAD on ``main``: the remote of a sync test."""
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return bare


@pytest.fixture
def machine() -> Callable[..., Any]:
    """Run ``ihmt --json ARGS`` as the machine whose home is given (keyword arguments go
    to its environment); assert it succeeded and return its JSON answer."""

    def run(home: Path, *args: str, **extra: str) -> Any:
        done = subprocess.run(
            [ihmt_executable(), "--json", *args],
            capture_output=True,
            text=True,
            env=machine_env(home, **extra),
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, f"ihmt {' '.join(args)}: {done.stderr}"
        return json.loads(done.stdout)

    return run


@pytest.fixture
def kill_sync_at_mark() -> Callable[..., None]:
    """Start ``ihmt --json sync`` as the machine of ``home``, wait until a git hook of the
    test touches ``mark`` (``IHMT_TEST_FREEZE_MARK``; the hook then sleeps), and SIGKILL
    the sync with every git it started."""

    def kill(home: Path, mark: Path, **extra: str) -> None:
        proc = subprocess.Popen(
            [ihmt_executable(), "--json", "sync"],
            env=machine_env(home, IHMT_TEST_FREEZE_MARK=str(mark), **extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert mark.exists(), proc.communicate(timeout=60)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)

    return kill
