"""Format 2 under real git: three clones writing concurrently merge without a conflict.

The replication here is plain git (the sync driver in ihmt-mcp adds locking, messages
and errors on top): commit the replicated paths, ``git pull --no-rebase``, hand the
store the paths the merge changed, push. Whatever the order of the merges, every clone
ends with the same memories and the same OUTDATED flags as a rebuild from its files.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from ihmt_store import Branch, ChildRef, Correction, Store
from ihmt_store.testing import make_leaf

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(folder: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git in ``folder`` with a fixed identity and no user or system config."""
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, env=env
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stdout}{done.stderr}")
    return done


def _sync(store: Store) -> None:
    """Commit, merge the remote's side, apply what the merge changed, push."""
    folder = store.path
    git(folder, "add", "--all", "--", *[p for p in Store.REPLICATED if (folder / p).exists()])
    if git(folder, "diff", "--cached", "--quiet", check=False).returncode:
        git(folder, "commit", "-q", "-m", "sync")
    for _ in range(5):
        before = git(folder, "rev-parse", "HEAD").stdout.strip()
        git(folder, "fetch", "-q", "origin")
        if git(folder, "rev-parse", "-q", "--verify", "origin/main", check=False).returncode == 0:
            # No rename detection: notes of different memories look alike, and git
            # pairs a deleted note with a new one as a rename, then reports a
            # rename/delete conflict. merge-ort (git 2.39) does so even with
            # merge.renames=false and -X no-renames; the "resolve" strategy (a
            # three-way merge of trees) never detects renames.
            merged = git(folder, "merge", "-s", "resolve", "--no-edit", "origin/main", check=False)
            assert merged.returncode == 0, f"the merge conflicted: {merged.stdout}{merged.stderr}"
            changed = git(folder, "diff", "--name-only", "--no-renames", before, "HEAD").stdout
            store.apply_changes([p for p in changed.splitlines() if p])
        if git(folder, "push", "-q", "origin", "HEAD:main", check=False).returncode == 0:
            return
    raise AssertionError("push kept being rejected")


def _state(store: Store) -> dict[str, tuple[object, ...]]:
    out = {}
    for leaf in store.iter_leaves():
        by = leaf.outdated_by.by if leaf.outdated_by else None
        out[leaf.leaf_id] = (leaf.text, by, json.dumps(leaf.extra, sort_keys=True))
    return out


@pytest.mark.parametrize("seed", [1818, 7, 42])
def test_three_clones_merge_without_conflicts_and_agree(tmp_path: Path, seed: int) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    first = Store.create(tmp_path / "a")
    first.put_leaf(make_leaf("The first memory everyone starts from.", position=0))
    (first.path / ".gitignore").write_text("\n".join(Store.UNREPLICATED) + "\n")
    git(first.path, "init", "-q", "-b", "main")
    git(first.path, "remote", "add", "origin", str(remote))
    git(first.path, "add", ".gitignore")
    _sync(first)
    stores = [first]
    for name in ("b", "c"):
        git(tmp_path, "clone", "-q", str(remote), name)
        stores.append(Store.open(tmp_path / name))
    rng = random.Random(seed)
    saved = 1
    forgotten: set[str] = set()
    for round_ in range(60):
        store = rng.choice(stores)
        live = [e.id for e in store.iter_entries("leaf")]
        op = rng.random()
        if op < 0.35 or len(live) < 4:
            store.put_leaf(make_leaf(f"memory {saved} saved in round {round_}", position=saved))
            saved += 1
        elif op < 0.6:
            old, new = rng.sample(live, 2)
            store.annotate(old, outdated_by=Correction(by=new, date="2026-06-01", reason="r"))
        elif op < 0.72:
            store.annotate(rng.choice(live), outdated_by=None)
        elif op < 0.84:
            store.annotate(rng.choice(live), extra={f"k{round_ % 3}": round_})
        elif op < 0.92:
            gone = rng.choice(live)
            store.forget(gone)
            forgotten.add(gone)
        else:
            # Consolidation is local: branch files are not replicated, no leaf changes.
            refs = tuple(ChildRef(id=i, kind="leaf", title="t", excerpt="e") for i in live[:3])
            store.put_branch(
                Branch(node_id=f"N1-general-{round_:010d}", layer=1, domain="general",
                       title="t", summary="s", children=refs)
            )  # fmt: skip
        if rng.random() < 0.5:
            _sync(store)
    for _ in range(2):
        for store in stores:
            _sync(store)
    states = [_state(store) for store in stores]
    assert states[0] == states[1] == states[2]
    assert not forgotten & set(states[0])
    assert len(states[0]) >= 10
    merges = git(first.path, "rev-list", "--merges", "--count", "HEAD").stdout.strip()
    assert int(merges) >= 5, "the clones should have diverged and merged"
    for store in stores:
        assert not git(store.path, "status", "--porcelain", "--", *Store.REPLICATED).stdout
        store.rebuild()
        assert _state(store) == states[0]
        store.close()
