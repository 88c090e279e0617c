"""What another clone can push, against this machine's memory: real git, a bare remote.

Each test plays the other clone with plain git (a clone of the remote, files written by
hand, a commit, a push), then syncs this machine with :class:`Sync`: the sync never
crashes, never loses a memory this machine holds, and says in one line what it skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_mcp import Memory, Sync, SyncError
from ihmt_mcp.sync import BackgroundSync, parse_period

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "LC_ALL": "C",
}
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def git(folder: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, env=GIT_ENV
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout


def ids(memory: Memory) -> set[str]:
    return {entry.id for entry in memory.store.iter_entries("leaf")}


def other_clone(remote: Path, where: Path) -> Path:
    """A plain git clone of the remote: the other machine, driven by hand."""
    if where.exists():
        git(where, "pull", "--quiet", "--no-rebase", "origin", "main")
    else:
        subprocess.run(
            ["git", "clone", "--quiet", str(remote), str(where)], check=True, env=GIT_ENV
        )
    return where


def push_from(clone: Path, message: str = "by hand") -> None:
    git(clone, "add", "--all")
    git(clone, "commit", "--quiet", "--no-verify", "-m", message)
    git(clone, "push", "--quiet", "origin", "HEAD:main")


def leaf_file(memory: Memory, leaf_id: str) -> Path:
    entry = memory.store.entry(leaf_id)
    assert entry is not None
    return memory.store.path / entry.path


def synced_pair(machine: Callable[[str], Memory], remote: Path) -> tuple[Memory, str]:
    a = machine("a")
    kept = a.save("The staging host runs PostgreSQL 15 on port 5432.", domain="infra").ids[0]
    Sync(a, host="a").init(str(remote))
    return a, kept


# ---------------------------------------------------------------------- purge records
def test_a_pushed_purge_record_with_a_bad_id_is_skipped_with_one_warning(
    machine: Callable[[str], Memory], remote: Path, tmp_path: Path
) -> None:
    a, kept = synced_pair(machine, remote)
    other = other_clone(remote, tmp_path / "other")
    (other / ".ihmt-purged").write_text("_x\n../etc\n")
    (other / "forgotten").mkdir()
    (other / "forgotten" / "_x.json").write_text('{"leaf_id": "_x", "forgotten": true}')
    push_from(other)
    report = Sync(a, host="a").sync()
    assert report.pushed and kept in ids(a)
    said = [w for w in report.warnings if ".ihmt-purged" in w]
    assert len(said) == 1 and "'_x'" in said[0] and "\n" not in said[0], report.warnings
    # Every later sync goes on, and does not say it again.
    again = Sync(a, host="a").sync()
    assert again.pushed and not [w for w in again.warnings if ".ihmt-purged" in w]


# ---------------------------------------------------------------------- deletions
def test_a_leaf_deleted_with_git_rm_on_another_clone_stays_and_goes_back(
    machine: Callable[[str], Memory], remote: Path, tmp_path: Path
) -> None:
    a, kept = synced_pair(machine, remote)
    text = leaf_file(a, kept).read_bytes()
    other = other_clone(remote, tmp_path / "other")
    rel = leaf_file(a, kept).relative_to(a.store.path).as_posix()
    git(other, "rm", "--quiet", rel)
    git(other, "commit", "--quiet", "-m", "git rm by hand")
    git(other, "push", "--quiet", "origin", "HEAD:main")
    # This machine also wrote something: a real merge, not a fast-forward.
    a.save("Deploys go out on Tuesdays after the standup.", domain="process")
    report = Sync(a, host="a").sync()
    assert kept in ids(a) and leaf_file(a, kept).read_bytes() == text
    assert kept not in report.pulled.removed
    said = [w for w in report.warnings if kept in w]
    assert len(said) == 1 and "forget" in said[0]
    assert rel in git(remote, "ls-tree", "-r", "--name-only", "main").split()
    # A fast-forward too (this machine wrote nothing).
    other_clone(remote, other)
    git(other, "rm", "--quiet", rel)
    git(other, "commit", "--quiet", "-m", "git rm again")
    git(other, "push", "--quiet", "origin", "HEAD:main")
    again = Sync(a, host="a").sync()
    assert kept in ids(a) and kept not in again.pulled.removed
    assert [w for w in again.warnings if kept in w]
    assert git(a.store.path, "status", "--porcelain") == ""


def test_a_forget_on_another_clone_still_removes_the_memory(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, kept = synced_pair(machine, remote)
    b = machine("b")
    Sync(b, host="b").init(str(remote))
    b.forget(kept)
    Sync(b, host="b").sync()
    report = Sync(a, host="a").sync()
    assert kept in report.pulled.removed and kept not in ids(a)
    assert report.warnings == ()


# ---------------------------------------------------------------------- a misplaced leaf
def test_a_pulled_leaf_in_another_domains_folder_is_indexed_as_rebuild_does(
    machine: Callable[[str], Memory], remote: Path, tmp_path: Path
) -> None:
    a, _kept = synced_pair(machine, remote)
    b = machine("b")
    moved = b.save("The build farm has 12 runners in rack four.", domain="infra").ids[0]
    source = leaf_file(b, moved)
    other = other_clone(remote, tmp_path / "other")
    (other / "layer0" / "personal").mkdir(parents=True)
    (other / "layer0" / "personal" / source.name).write_bytes(source.read_bytes())
    push_from(other)
    report = Sync(a, host="a").sync()
    refreshed = ids(a)
    said = [w for w in report.warnings if f"layer0/personal/{source.name}" in w]
    assert len(said) == 1, report.warnings
    a.store.notices.clear()
    a.rebuild()
    assert ids(a) == refreshed and moved in refreshed
    assert [n for n in a.store.notices if f"layer0/personal/{source.name}" in n]


# ---------------------------------------------------------------------- the config
@pytest.mark.parametrize(
    "config",
    [
        pytest.param(
            lambda c: c.replace('"branch_factor": 8', '"branch_factor": "eight"'), id="typo"
        ),
        pytest.param(lambda c: c[: len(c) // 2], id="cut"),
        pytest.param(lambda c: c.replace('"format_version": 2', '"format_version": 3'), id="v3"),
    ],
)
def test_a_pushed_bad_config_is_refused_and_this_machines_kept(
    machine: Callable[[str], Memory],
    remote: Path,
    tmp_path: Path,
    config: Callable[[str], str],
) -> None:
    a, kept = synced_pair(machine, remote)
    mine = (a.store.path / "ihmt.config.json").read_bytes()
    other = other_clone(remote, tmp_path / "other")
    path = other / "ihmt.config.json"
    path.write_text(config(path.read_text()))
    push_from(other)
    a.save("Deploys go out on Tuesdays after the standup.", domain="process")
    newer = "3" in path.read_text().split('"format_version":')[1][:4]
    if newer:
        with pytest.raises(SyncError) as caught:
            Sync(a, host="a").sync()
        assert "newer" in str(caught.value) and "\n" not in str(caught.value)
    else:
        report = Sync(a, host="a").sync()
        assert report.pushed
        assert [w for w in report.warnings if "ihmt.config.json" in w]
    assert (a.store.path / "ihmt.config.json").read_bytes() == mine
    assert git(a.store.path, "show", "HEAD:ihmt.config.json").encode() == mine
    Memory.init(a.store.path, semantic="off").close()  # every command still opens it
    assert kept in ids(a)


# ---------------------------------------------------------------------- secrets
def test_a_secret_written_into_a_leaf_by_hand_is_not_pushed_nor_served(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, kept = synced_pair(machine, remote)
    path = leaf_file(a, kept)
    path.write_bytes(path.read_bytes() + f"\naws key {AWS_KEY}\n".encode())
    report = Sync(a, host="a").sync()
    assert [w for w in report.warnings if kept in w and "secret" in w]
    assert AWS_KEY not in git(remote, "show", f"main:{path.relative_to(a.store.path)}")
    assert path.read_bytes().endswith(f"{AWS_KEY}\n".encode())  # the user's file stays
    found = a.search("staging host PostgreSQL port")
    assert kept in [hit.id for hit in found.results] and "withheld" in found.compact
    assert AWS_KEY not in found.compact
    assert all(AWS_KEY not in hit.content for hit in found.results)


def test_a_secret_pushed_by_another_clone_is_not_served(
    machine: Callable[[str], Memory], remote: Path, tmp_path: Path
) -> None:
    a, _kept = synced_pair(machine, remote)
    b = machine("b")
    leaked = b.save("The release bot pushes tags with a token.", domain="infra").ids[0]
    source = leaf_file(b, leaked)
    other = other_clone(remote, tmp_path / "other")
    target = other / source.relative_to(b.store.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes() + f" It is {GITHUB_TOKEN}.".encode())
    push_from(other)
    report = Sync(a, host="a").sync()
    assert [w for w in report.warnings if leaked in w and "secret" in w]
    found = a.search("release bot pushes tags")
    assert leaked in [hit.id for hit in found.results] and "withheld" in found.compact
    assert GITHUB_TOKEN not in found.compact
    assert all(GITHUB_TOKEN not in hit.content for hit in found.results)


# ---------------------------------------------------------------------- periods, reports
def test_a_huge_period_is_refused_in_one_line() -> None:
    for text in ("9" * 400 + "h", "9" * 30, "1e999", str(10**20) + "s"):
        with pytest.raises(ValueError, match="period") as caught:
            parse_period(text)
        assert "\n" not in str(caught.value) and len(str(caught.value)) < 200
    assert parse_period("24h") == 24 * 3600
    with pytest.raises(ValueError, match="24h"):
        BackgroundSync(lambda: None, float("inf"))  # type: ignore[arg-type, return-value]


def test_a_sync_after_a_failed_push_says_what_it_pushed(
    machine: Callable[[str], Memory], remote: Path, tmp_path: Path
) -> None:
    a, _kept = synced_pair(machine, remote)
    a.save("Deploys go out on Tuesdays after the standup.", domain="process")
    away = tmp_path / "away.git"
    remote.rename(away)
    with pytest.raises(SyncError):
        Sync(a, host="a").sync()
    away.rename(remote)
    report = Sync(a, host="a").sync()
    assert report.pushed and report.commit == ""
    assert report.saved == 1
    assert "sent 1 saved" in report.render() and "nothing" not in report.render().split(";")[0]


# ---------------------------------------------------------------------- fuzz
_NAME = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=24
).filter(lambda n: n not in (".", "..", ".git"))
_WHERE = st.sampled_from(
    ["layer0/infra", "layer0/personal", "layer0", "notes", "notes/L-x", "forgotten", ".", "junk"]
)
_CONTENT = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.just(b"<<<IHMT-META\n{}\nIHMT-META>>>\nno header keys"),
    st.just(f"<<<IHMT-META\nnot json\nIHMT-META>>>\n{AWS_KEY}".encode()),
)
_ENTRY = st.tuples(_WHERE, _NAME, st.one_of(_CONTENT, st.just(None)))


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(entries=st.lists(_ENTRY, min_size=1, max_size=6), purged=st.lists(_NAME, max_size=3))
def test_a_pulled_tree_of_arbitrary_files_never_crashes_the_sync_nor_loses_a_memory(
    tmp_path_factory: pytest.TempPathFactory,
    entries: list[tuple[str, str, bytes | None]],
    purged: list[str],
) -> None:
    base = tmp_path_factory.mktemp("fuzz")
    remote = base / "remote.git"
    git(base, "init", "--quiet", "--bare", str(remote))
    git(remote, "symbolic-ref", "HEAD", "refs/heads/main")
    a = Memory.init(base / "a", semantic="off")
    try:
        kept = a.save("The staging host runs PostgreSQL 15 on port 5432.", domain="infra").ids
        Sync(a, host="a").init(str(remote))
        other = other_clone(remote, base / "other")
        for where, name, content in entries:
            folder = other / where
            if folder.exists() and not folder.is_dir():
                continue
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / name
            if target.exists() or target.is_symlink():
                continue
            try:
                if content is None:
                    target.symlink_to("/etc/passwd")
                else:
                    target.write_bytes(content)
            except OSError:
                continue  # a name this file system refuses
        (other / ".ihmt-purged").write_text("\n".join(purged) + "\n", errors="replace")
        git(other, "add", "--all")
        if git(other, "status", "--porcelain"):
            git(other, "commit", "--quiet", "-m", "anything")
            git(other, "push", "--quiet", "origin", "HEAD:main")
        a.save("Deploys go out on Tuesdays after the standup.", domain="process")
        said: list[str] = []
        try:
            said = list(Sync(a, host="a").sync().warnings)
        except SyncError as exc:  # one line, nothing lost
            said = [str(exc)]
        assert all("\n" not in line for line in said)
        assert set(kept) <= ids(a)
        assert json.loads((a.store.path / "ihmt.config.json").read_text())
    finally:
        a.close()


def test_a_huge_ihmt_sync_every_is_said_once_and_the_server_serves(
    machine: Callable[[str], Memory],
    remote: Path,
    tmp_path: Path,
    run_server: Callable[..., None],
    call: Callable[..., Any],
) -> None:
    home = tmp_path / "home"
    served = Memory.init(home / "ihmt_memory", semantic="off")
    Sync(served).init(str(remote))
    served.close()

    async def body(session: Any) -> None:
        error, _ = await call(session, "save_memory", content="The build farm has 12 runners.")
        assert not error

    run_server(body, home=home, env={"IHMT_SEMANTIC": "off", "IHMT_SYNC_EVERY": "9" * 400 + "h"})
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log and "OverflowError" not in log
    assert "too long a sync period" in log
