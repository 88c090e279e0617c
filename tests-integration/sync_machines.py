"""Machines for the ``ihmt sync`` integration tests: each one a store, an ``IHMT_HOME``
and a ``HOME`` of its own, driven by the ``ihmt`` command in subprocesses; and what the
tests read of a clone afterwards. Shared by ``test_sync_convergence.py`` and
``test_sync_kill.py`` (on the path through pytest's ``pythonpath`` setting)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ihmt_store import Store

IHMT = [str(Path(sys.executable).parent / "ihmt")]


def seed(default: int) -> int:
    """``IHMT_SYNC_SEED``: a number replays a run, ``random`` draws one; else ``default``."""
    chosen = os.environ.get("IHMT_SYNC_SEED") or str(default)
    return random.SystemRandom().randrange(10**6) if chosen == "random" else int(chosen)


def git(folder: Path, *args: str) -> str:
    """``git -C FOLDER ARGS``, which must succeed; its output."""
    done = subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"},
    )
    assert done.returncode == 0, f"git {' '.join(args)} in {folder}: {done.stderr}"
    return done.stdout


def bare_remote(tmp_path: Path) -> Path:
    """A bare repository on local disk with ``main`` as its branch: the shared remote."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    git(remote, "symbolic-ref", "HEAD", "refs/heads/main")
    return remote


@dataclass
class Machine:
    """One computer: its own IHMT_HOME, HOME and store; ``ihmt`` run as a subprocess."""

    name: str
    home: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def store(self) -> Path:
        return self.home / "ihmt_memory"

    def run(
        self, *args: str, extra: dict[str, str] | None = None, timeout: float = 240
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*IHMT, *args],
            capture_output=True,
            text=True,
            env={**self.env, **(extra or {})},
            cwd=self.home.parent,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def ok(self, *args: str) -> dict[str, Any]:
        """``ihmt --json ARGS``, which must succeed; its JSON answer."""
        done = self.run("--json", *args)
        assert done.returncode == 0, f"{self.name}: ihmt {' '.join(args)}: {done.stderr}"
        assert done.stdout.strip(), f"{self.name}: ihmt {' '.join(args)} printed nothing"
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    def start(self, *args: str, extra: dict[str, str]) -> subprocess.Popen[str]:
        """``ihmt ARGS`` in a session of its own (so its process group can be killed)."""
        return subprocess.Popen(
            [*IHMT, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**self.env, **extra},
            cwd=self.home.parent,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def git(self, *args: str) -> str:
        return git(self.store, *args)


def make_machine(tmp_path: Path, name: str, hooks: Path | None = None) -> Machine:
    """A machine under ``tmp_path/name``; with ``hooks``, every repository it touches (its
    store, and the bare remote when its push runs receive-pack there) runs those hooks."""
    home = tmp_path / name / "ihmt"
    user_home = tmp_path / name / "user"
    user_home.mkdir(parents=True)
    if hooks is not None:
        (user_home / ".gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n", encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("IHMT_", "GIT_")) and k not in ("HOME", "XDG_CONFIG_HOME")
    }
    env.update(
        {
            "HOME": str(user_home),
            "IHMT_HOME": str(home),
            "IHMT_SEMANTIC": "off",
            "IHMT_PROJECT": "",
            "GIT_CONFIG_NOSYSTEM": "1",
            "NO_COLOR": "1",
        }
    )
    return Machine(name=name, home=home, env=env)


# ---------------------------------------------------------------------- reading a clone
def leaves(store: Path) -> dict[str, tuple[str, str, str]]:
    """Leaf id -> (text, status, outdated_by), as the store's catalog has them."""
    opened = Store.open(store)
    try:
        texts = {leaf.leaf_id: leaf.text for leaf in opened.iter_leaves()}
        return {
            e.id: (texts.get(e.id, "<no text>"), e.status, e.outdated_by or "")
            for e in opened.iter_entries("leaf")
        }
    finally:
        opened.close()


def leaf_files(store: Path) -> set[str]:
    return {p.stem for p in (store / "layer0").rglob("*.txt")}


def rebuilt(store: Path, copy: Path) -> dict[str, tuple[str, str, str]]:
    """:func:`leaves` of a copy of ``store`` (at ``copy``) whose derived state is rebuilt
    from the files, which must give no problem."""
    shutil.copytree(store, copy, ignore=shutil.ignore_patterns(".git"))
    opened = Store.open(copy)
    try:
        report = opened.rebuild()
        assert report.problems == (), report.problems
    finally:
        opened.close()
    return leaves(copy)


def conflict_markers(store: Path) -> list[str]:
    """Files of the store (outside ``.git``) holding a git conflict marker."""
    found = []
    for path in store.rglob("*"):
        if ".git" in path.relative_to(store).parts or not path.is_file():
            continue
        if re.search(rb"^(<<<<<<<|>>>>>>>) ", path.read_bytes(), flags=re.MULTILINE):
            found.append(str(path.relative_to(store)))
    return found
