"""``Sync``: real git, real stores, a bare repository in tmp_path as the remote."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from ihmt_mcp import Memory, Sync, SyncError
from ihmt_mcp.sync import BackgroundSync, background_period, is_synced, parse_period
from ihmt_store import Store

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "LC_ALL": "C",
}


def git(folder: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        env=GIT_ENV,
        check=False,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout


def every_object_text(repo: Path) -> str:
    """The content of every object the repository holds, reachable or not."""
    listing = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    names = listing.split()
    done = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="\n".join(names) + "\n",
        capture_output=True,
        text=True,
        errors="replace",
        check=True,
    )
    return done.stdout


def ids(memory: Memory) -> set[str]:
    return {entry.id for entry in memory.store.iter_entries("leaf")}


def outdated(memory: Memory) -> set[str]:
    return {entry.id for entry in memory.store.iter_entries("leaf") if entry.status == "outdated"}


def found(memory: Memory, query: str) -> list[str]:
    return [hit.id for hit in memory.search(query).results]


# ---------------------------------------------------------------------- init
def test_init_on_an_empty_remote_pushes_the_memory_and_nothing_derived(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    saved = a.save("The staging host runs PostgreSQL 15 on port 5432.", domain="infra").ids
    done = Sync(a, host="laptop").init(str(remote))
    assert done.repository == "created"
    assert not done.remote_had_store
    assert is_synced(a.store.path)
    assert done.pushed
    tracked = git(remote, "ls-tree", "-r", "--name-only", "main").split()
    assert "ihmt.config.json" in tracked and ".gitignore" in tracked
    assert any(path.endswith(f"{saved[0]}.txt") for path in tracked)
    assert not [p for p in tracked if p.startswith(("state/", "layers/")) or p == "root.json"]
    ignore = (a.store.path / ".gitignore").read_text()
    for pattern in Store.UNREPLICATED:
        assert pattern in ignore.splitlines()
    subject = git(remote, "log", "-1", "--format=%s", "main")
    assert subject.startswith("ihmt sync on laptop: 1 saved")


def test_an_empty_store_and_a_remote_make_a_clone(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    a.save("Deploys go out on Tuesdays after the standup.", domain="process")
    Sync(a, host="a").init(str(remote))
    b = machine("b")
    joined = Sync(b, host="b").init(str(remote))
    assert joined.remote_had_store
    assert ids(b) == ids(a)
    assert set(joined.pulled.added) == ids(a)
    assert found(b, "when do deploys go out") == found(a, "when do deploys go out") != []


def test_init_refuses_a_remote_that_is_not_a_memory(
    machine: Callable[[str], Memory], remote: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "--quiet", "-b", "main")
    (other / "README.md").write_text("a project\n")
    git(other, "add", "README.md")
    git(other, "commit", "--quiet", "-m", "readme")
    git(other, "push", "--quiet", str(remote), "main")
    a = machine("a")
    saved = a.save("The office wifi is named bluefin-5g.", domain="office").ids
    with pytest.raises(SyncError) as caught:
        Sync(a).init(str(remote))
    assert caught.value.reason == "unrelated"
    assert "\n" not in str(caught.value)
    assert ids(a) == set(saved)
    assert git(remote, "log", "--format=%s", "main").split("\n")[0] == "readme"


def test_an_init_killed_while_it_made_the_repository_leaves_no_half_repository(
    machine: Callable[[str], Memory], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by tests-integration/test_sync_kill.py (a clone's ``sync --init`` killed
    after 0.5 s): ``git init`` killed among its files left a ``.git`` with no
    ``objects`` folder, and every later ``--init`` refused it as "not a git repository
    of this folder". The repository is made aside and moved in whole."""
    a = machine("a")
    a.save("The staging host runs PostgreSQL 15 on port 5432.", domain="infra")
    Sync(a).init(str(remote))
    b = machine("b")

    def killed(src: object, dst: object) -> None:
        raise KeyboardInterrupt  # the process dies here, the repository made aside

    with monkeypatch.context() as patched:
        patched.setattr("ihmt_mcp.sync._setup.os.rename", killed)
        with pytest.raises(KeyboardInterrupt):
            Sync(b).init(str(remote))
    assert not (b.store.path / ".git").exists()
    assert list(b.store.path.glob(".ihmt-git-init-*"))
    # What a git init killed among its files left aside, too.
    half = b.store.path / ".ihmt-git-init-999999999" / ".git"
    half.mkdir(parents=True)
    (half / "HEAD").write_text("ref: refs/heads/master\n")
    joined = Sync(b).init(str(remote))
    assert joined.repository == "created" and joined.remote_had_store
    assert ids(b) == ids(a)
    assert not list(b.store.path.glob(".ihmt-git-init-*"))
    assert git(b.store.path, "status", "--porcelain") == ""


@pytest.mark.parametrize("again", ["init", "sync"])
def test_a_config_lock_left_by_a_killed_git_config_is_removed_first(
    machine: Callable[[str], Memory], remote: Path, again: str
) -> None:
    """Found by tests-integration/test_sync_kill.py (a clone's ``sync --init`` killed
    after 0.3 s): a ``git config`` killed mid-write left ``.git/config.lock``, and every
    later ``--init`` failed in ``git remote add`` ("could not lock config file")."""
    a = machine("a")
    a.save("The staging host runs PostgreSQL 15 on port 5432.", domain="infra")
    Sync(a).init(str(remote))
    b = machine("b")
    if again == "init":  # killed before the remote was recorded
        git(b.store.path, "init", "--quiet")
    else:
        Sync(b).init(str(remote))
        git(b.store.path, "config", "--unset", "core.untrackedCache")  # a setting to write
    (b.store.path / ".git" / "config.lock").write_text("")
    if again == "init":
        Sync(b).init(str(remote))
    else:
        Sync(b).sync()
    assert not (b.store.path / ".git" / "config.lock").exists()
    assert ids(b) == ids(a)


# ---------------------------------------------------------------------- round trips
def test_a_save_on_one_machine_is_found_on_the_other_after_sync(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a, host="a").init(str(remote))
    Sync(b, host="b").init(str(remote))
    new = a.save("The release checklist lives in docs/release.md.", domain="process").ids
    sent = Sync(a, host="a").sync()
    assert sent.saved == len(new) and sent.pushed
    assert sent.message == f"ihmt sync on a: {len(new)} saved"
    got = Sync(b, host="b").sync()
    assert set(got.pulled.added) == set(new)
    assert found(b, "release checklist")[0] == new[0]
    back = b.save("Code review needs two approvals on the payments service.").ids
    Sync(b, host="b").sync()
    Sync(a, host="a").sync()
    assert ids(a) == ids(b) and set(back) <= ids(a)


def test_a_sync_with_nothing_new_makes_no_commit(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    before = git(remote, "rev-parse", "main")
    report = Sync(a).sync()
    assert report.commit == "" and report.pushed and not report.pulled
    assert git(remote, "rev-parse", "main") == before


def test_status_counts_what_is_ahead_behind_and_uncommitted(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    a.save("The nightly backup runs at 02:00 UTC.", domain="infra")
    Sync(a).sync()
    status = Sync(b).status()
    assert (status.behind, status.ahead, status.uncommitted) == (1, 0, 0)
    assert status.reachable and status.last_sync
    b.save("The build cache lives on the ci-cache volume.", domain="infra")
    assert Sync(b).status().uncommitted == 1
    Sync(b).sync()
    after = Sync(b).status()
    assert (after.behind, after.ahead, after.uncommitted) == (0, 0, 0)
    assert Sync(a).status().behind == 2  # b's commit, and its merge of a's
    record = status.to_json()
    assert set(record) == {
        "initialised",
        "remote",
        "branch",
        "reachable",
        "ahead",
        "behind",
        "uncommitted",
        "last_sync",
        "error",
        "every",
    }
    json.dumps(record)


def test_a_correction_on_one_machine_and_a_forget_on_another_converge(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    old = a.save("The API gateway runs on port 8080.", domain="infra").ids[0]
    gone = a.save("The team lunch is on Fridays at noon.", domain="team").ids[0]
    Sync(a).sync()
    Sync(b).init(str(remote))
    assert {old, gone} <= ids(b)
    new = a.save(
        "The API gateway moved to port 9090.", domain="infra", replaces="API gateway port"
    ).ids[0]
    assert old in outdated(a)
    b.forget(gone)
    Sync(a).sync()
    Sync(b).sync()
    Sync(a).sync()
    assert ids(a) == ids(b)
    assert gone not in ids(a) and new in ids(b)
    assert outdated(a) == outdated(b) == {old}
    assert found(a, "API gateway port") == found(b, "API gateway port")


def test_a_forget_removes_the_memory_on_every_machine(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    gone = a.save("The old VPN endpoint is vpn1.example.org.", domain="infra").ids[0]
    Sync(a).sync()
    Sync(b).init(str(remote))
    assert gone in ids(b)
    a.forget(gone)
    report = Sync(a).sync()
    assert report.forgotten == 1 and "1 forgotten" in report.message
    pulled = Sync(b).sync().pulled
    assert gone in pulled.removed and gone not in ids(b)
    assert found(b, "VPN endpoint") == []


# ---------------------------------------------------------------------- errors
def test_not_initialised_is_one_line(machine: Callable[[str], Memory]) -> None:
    a = machine("a")
    assert not is_synced(a.store.path)
    with pytest.raises(SyncError) as caught:
        Sync(a).sync()
    assert caught.value.reason == "not_initialised"
    assert "ihmt sync --init" in str(caught.value) and "\n" not in str(caught.value)


def test_no_git_installed_is_one_line(
    machine: Callable[[str], Memory], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    a = machine("a")
    (a.store.path / ".git").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(SyncError) as caught:
        Sync(a).sync()
    assert caught.value.reason == "no_git" and "install git" in str(caught.value)


def test_an_unreachable_remote_keeps_the_commit_for_the_next_sync(
    machine: Callable[[str], Memory], remote: Path, tmp_path: Path
) -> None:
    a = machine("a")
    Sync(a, host="a").init(str(remote))
    saved = a.save("The on-call rota changes every Monday.", domain="team").ids
    away = tmp_path / "away.git"
    remote.rename(away)
    with pytest.raises(SyncError) as caught:
        Sync(a, host="a").sync()
    assert caught.value.reason == "unreachable"
    assert "\n" not in str(caught.value) and "next sync" in str(caught.value)
    assert git(a.store.path, "log", "-1", "--format=%s") == "ihmt sync on a: 1 saved\n"
    status = Sync(a).status()
    assert not status.reachable and status.ahead == 1
    away.rename(remote)
    assert Sync(a, host="a").sync().pushed
    assert set(saved) <= {
        Path(p).stem for p in git(remote, "ls-tree", "-r", "--name-only", "main").split()
    }


class _Racing(Sync):
    """A sync during whose every fetch another machine pushes (a real race, forced)."""

    def __init__(self, memory: Memory, other: Memory, rounds: int) -> None:
        super().__init__(memory, host="racer")
        self.other = other
        self.rounds = rounds

    def _fetch(self) -> None:
        super()._fetch()
        if self.rounds > 0:
            self.rounds -= 1
            self.other.save(f"Race note number {self.rounds} about the build farm.")
            Sync(self.other, host="other").sync()


def test_a_rejected_push_pulls_again_and_pushes(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    mine = a.save("The staging cluster is in eu-west-1.", domain="infra").ids
    report = _Racing(a, b, rounds=2).sync()
    assert report.pushed and report.retries == 2
    Sync(b).sync()
    assert ids(a) == ids(b) and set(mine) <= ids(b)


def test_a_push_rejected_every_time_gives_up_in_one_line_and_keeps_the_commit(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    mine = a.save("The status page is status.example.org.", domain="infra").ids
    with pytest.raises(SyncError) as caught:
        _Racing(a, b, rounds=10).sync()
    assert caught.value.reason == "rejected" and "\n" not in str(caught.value)
    assert set(mine) <= ids(a)
    assert git(a.store.path, "status", "--porcelain", "--", "layer0") == ""
    assert Sync(a).sync().pushed
    Sync(b).sync()
    assert set(mine) <= ids(b)


def test_a_dirty_index_is_refused_with_its_paths(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    (a.store.path / "todo.md").write_text("by hand\n")
    git(a.store.path, "add", "todo.md")
    saved = a.save("The design review is every other Thursday.", domain="team").ids
    with pytest.raises(SyncError) as caught:
        Sync(a).sync()
    assert caught.value.reason == "dirty_index" and caught.value.paths == ("todo.md",)
    assert "todo.md" in str(caught.value) and "\n" not in str(caught.value)
    assert set(saved) <= ids(a)
    git(a.store.path, "restore", "--staged", "todo.md")
    assert Sync(a).sync().saved == len(saved)


def test_a_detached_head_is_refused(machine: Callable[[str], Memory], remote: Path) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    git(a.store.path, "checkout", "--quiet", "--detach")
    with pytest.raises(SyncError) as caught:
        Sync(a).sync()
    assert caught.value.reason == "detached" and "\n" not in str(caught.value)


def test_a_conflict_on_a_foreign_file_is_undone_and_named(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    notes = a.store.path / "NOTES.md"
    notes.write_text("first\n")
    git(a.store.path, "add", "NOTES.md")
    git(a.store.path, "commit", "--quiet", "-m", "notes by hand")
    Sync(a).sync()
    Sync(b).init(str(remote))
    for memory, text in ((a, "from a\n"), (b, "from b\n")):
        (memory.store.path / "NOTES.md").write_text(text)
        git(memory.store.path, "commit", "--quiet", "-am", "edit by hand")
    Sync(a).sync()
    kept = b.save("The feature freeze starts on the 12th.", domain="process").ids
    with pytest.raises(SyncError) as caught:
        Sync(b).sync()
    assert caught.value.reason == "conflict" and caught.value.paths == ("NOTES.md",)
    assert "NOTES.md" in str(caught.value) and "\n" not in str(caught.value)
    assert not (b.store.path / ".git" / "MERGE_HEAD").exists()
    assert (b.store.path / "NOTES.md").read_text() == "from b\n"
    assert set(kept) <= ids(b)
    assert "<<<<<<<" not in "".join(p.read_text() for p in b.store.path.rglob("*.txt"))


def test_no_rename_detection_moves_a_leaf_into_another_domain(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    old = a.save("The search service uses port 4100 for its internal API.", domain="search")
    Sync(a).sync()
    Sync(b).init(str(remote))
    # a empties the folder layer0/search and adds a near copy elsewhere: to git's rename
    # detection, a folder renamed; b meanwhile adds a leaf to that folder.
    a.forget(old.ids[0])
    moved = a.save("The search service uses port 4100 for its internal API!", domain="deploy")
    Sync(a).sync()
    mine = b.save("Search results are cached for ten minutes.", domain="search").ids[0]
    assert Sync(b).sync().pushed
    assert (b.store.path / "layer0" / "search" / f"{mine}.txt").is_file()
    Sync(a).sync()
    assert ids(a) == ids(b) == {moved.ids[0], mine}


def test_the_same_memory_saved_on_two_machines_merges_to_one_file(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    text = "Production deploys need a second reviewer from the platform team."
    first = a.save(text, domain="process", date="2026-01-05").ids[0]
    second = b.save(text, domain="process", date="2026-03-09").ids[0]
    assert first == second  # one id (a hash of the text), two headers (two dates)
    Sync(a).sync()
    assert Sync(b).sync().pushed
    Sync(a).sync()
    rel = next(a.store.path.glob(f"layer0/*/{first}.txt")).relative_to(a.store.path)
    assert (a.store.path / rel).read_bytes() == (b.store.path / rel).read_bytes()
    assert a.store.entry(first) == b.store.entry(first)
    assert "<<<<<<<" not in (a.store.path / rel).read_text()


def test_a_leaf_edited_by_hand_here_and_forgotten_there_is_forgotten(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    gone = a.save("The legacy FTP server closes at the end of the quarter.").ids[0]
    Sync(a).sync()
    Sync(b).init(str(remote))
    a.forget(gone)
    Sync(a).sync()
    leaf = next(b.store.path.glob(f"layer0/*/{gone}.txt"))
    leaf.write_bytes(leaf.read_bytes() + b" (edited by hand)")
    assert Sync(b).sync().pushed
    assert gone not in ids(b) and not leaf.exists()
    Sync(a).sync()
    assert ids(a) == ids(b)


def test_a_merge_left_by_a_killed_sync_is_aborted_and_redone(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    theirs = a.save("The analytics database is read-only on weekends.", domain="data").ids
    Sync(a).sync()
    mine = b.save("The search service caches answers for five minutes.", domain="data").ids
    git(b.store.path, "add", "layer0")
    git(b.store.path, "commit", "--quiet", "-m", "a sync's commit")
    git(b.store.path, "fetch", "--quiet", "origin")
    git(b.store.path, "merge", "--no-commit", "--no-ff", "origin/main")
    assert (b.store.path / ".git" / "MERGE_HEAD").exists()
    (b.store.path / ".git" / "index.lock").write_text("")
    report = Sync(b).sync()
    assert report.pushed
    assert not (b.store.path / ".git" / "index.lock").exists()
    assert set(theirs) <= ids(b) and set(mine) <= ids(b)
    Sync(a).sync()
    assert ids(a) == ids(b)


def test_files_pulled_but_not_refreshed_are_refreshed_by_the_next_sync(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    theirs = a.save("The incident channel is #inc-bridge.", domain="team").ids
    Sync(a).sync()
    # A sync killed right after its merge: the files are there, the index does not know them.
    git(b.store.path, "fetch", "--quiet", "origin")
    git(b.store.path, "merge", "--quiet", "--no-edit", "origin/main")
    assert not set(theirs) <= ids(b)
    Sync(b).sync()
    assert set(theirs) <= ids(b)


def test_a_file_cut_short_by_a_killed_merge_is_written_again(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    theirs = a.save("The runbook for a failed deploy: roll back, then page the owner.").ids[0]
    Sync(a).sync()
    # A merge killed while writing the working tree: half a file, no commit, the
    # bookkeeping saying a merge was under way.
    git(b.store.path, "fetch", "--quiet", "origin")
    rel = next(a.store.path.glob(f"layer0/*/{theirs}.txt")).relative_to(a.store.path)
    whole = (a.store.path / rel).read_bytes()
    (b.store.path / rel).parent.mkdir(parents=True, exist_ok=True)
    (b.store.path / rel).write_bytes(whole[: len(whole) // 2])
    record = b.store.state_file("sync.json")
    data = json.loads(record.read_text())
    data["merging"] = {
        "before": git(b.store.path, "rev-parse", "HEAD").strip(),
        "upstream": git(b.store.path, "rev-parse", "origin/main").strip(),
    }
    record.write_text(json.dumps(data))
    assert Sync(b).sync().pushed
    assert (b.store.path / rel).read_bytes() == whole
    assert b.store.read_leaf(theirs).text == a.store.read_leaf(theirs).text


def test_a_leaf_deleted_by_hand_comes_back_and_its_deletion_is_not_sent(
    machine: Callable[[str], Memory], remote: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    kept = a.save("The VPN certificate is renewed every March.", domain="infra").ids[0]
    also = a.save("A note saved with the deletion pending.", domain="infra").ids[0]
    Sync(a).sync()
    leaf = next(a.store.path.glob(f"layer0/*/{kept}.txt"))
    whole = leaf.read_bytes()
    leaf.unlink()
    fresh = a.save("The build badge is on the README.", domain="infra").ids[0]
    with caplog.at_level(logging.WARNING, logger="ihmt_mcp.sync"):
        report = Sync(a).sync()
    assert "deleted by hand" in caplog.text
    assert report.saved == 1 and report.pushed
    assert leaf.read_bytes() == whole
    tracked = git(remote, "ls-tree", "-r", "--name-only", "main")
    assert all(i in tracked for i in (kept, also, fresh))
    assert git(a.store.path, "status", "--porcelain", "--", "layer0") == ""


def test_a_new_notes_folder_and_a_new_domain_are_committed(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    """git status names a folder nothing in which is tracked once (``notes/L-…/``): the
    commit takes every file in it."""
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    old = a.save("The cron host is cron-1.", domain="brand-new").ids[0]
    new = a.save("The cron host moved to cron-2.", domain="other-new").ids[0]
    a.mark_outdated(old, new)
    report = Sync(a).sync()
    assert report.saved == 2 and report.corrected == 1
    Sync(b).init(str(remote))
    assert ids(b) == {old, new} and outdated(b) == {old}


def test_new_memories_are_committed_whatever_the_users_status_settings(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    git(a.store.path, "config", "status.showUntrackedFiles", "no")
    git(a.store.path, "config", "status.renames", "true")
    saved = a.save("The test runner shards by file size.", domain="ci").ids
    assert Sync(a).sync().saved == len(saved) == 1
    assert saved[0] in git(remote, "ls-tree", "-r", "--name-only", "main")


def test_a_fast_forward_killed_before_head_moved_is_finished_by_the_next_sync(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    theirs = a.save("The wiki moved to wiki.internal.", domain="tools").ids
    Sync(a).sync()
    # b wrote nothing: its pull is a fast-forward, killed after the files and the index
    # were moved to the fetched commit and before HEAD followed.
    git(b.store.path, "fetch", "--quiet", "origin")
    head = git(b.store.path, "rev-parse", "HEAD").strip()
    upstream = git(b.store.path, "rev-parse", "origin/main").strip()
    record = b.store.state_file("sync.json")
    data = json.loads(record.read_text())
    data["merging"] = {"before": head, "upstream": upstream, "fast_forward": True}
    record.write_text(json.dumps(data))
    git(b.store.path, "read-tree", "-m", "-u", head, upstream)
    report = Sync(b).sync()
    assert report.commit == "" and report.pushed  # nothing of a's sent back as b's own
    assert git(b.store.path, "rev-parse", "HEAD").strip() == upstream
    assert set(theirs) <= ids(b)
    assert git(b.store.path, "status", "--porcelain") == ""


def _merging(memory: Memory, *, fast_forward: bool = False) -> None:
    """Record in ``state/sync.json`` that a merge of ``origin/main`` is under way (as the
    sync does before it starts git)."""
    record = memory.store.state_file("sync.json")
    data = json.loads(record.read_text())
    data["merging"] = {
        "before": git(memory.store.path, "rev-parse", "HEAD").strip(),
        "upstream": git(memory.store.path, "rev-parse", "origin/main").strip(),
        **({"fast_forward": True} if fast_forward else {}),
    }
    record.write_text(json.dumps(data))


def test_a_merge_killed_after_writing_the_remotes_files_is_redone_and_indexed(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    """Found by tests-integration/test_sync_kill.py (seed 99, a loaded CI machine): a
    ``git merge`` killed after its strategy wrote the remote's files and the index, before
    it recorded MERGE_HEAD and committed. The complete files stayed, the next sync
    committed them as this machine's own and recorded its refresh past them: on disk,
    never in the catalog."""
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    theirs = {a.save(f"The deploy of service {n} is frozen on Fridays.").ids[0] for n in range(3)}
    Sync(a).sync()
    # b's sync: its own commit (its refresh recorded with it), the fetch, then the merge.
    mine = b.save("The search service caches answers for five minutes.").ids[0]
    git(b.store.path, "add", "layer0")
    git(b.store.path, "commit", "--quiet", "-m", "a sync's commit")
    state = json.loads(b.store.state_file("sync.json").read_text())
    state["refreshed"] = git(b.store.path, "rev-parse", "HEAD").strip()
    b.store.state_file("sync.json").write_text(json.dumps(state))
    git(b.store.path, "fetch", "--quiet", "origin")
    _merging(b)
    git(b.store.path, "merge", "--quiet", "--no-commit", "--no-ff", "origin/main")
    for name in ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE"):
        (b.store.path / ".git" / name).unlink()
    assert theirs <= {p.stem for p in b.store.path.glob("layer0/*/*.txt")}
    assert not theirs <= ids(b)

    report = Sync(b).sync()
    assert report.pushed
    assert {mine} | theirs <= ids(b)
    # Merged and refreshed as the remote's, not committed as b's own.
    assert report.saved == 1 and not set(report.pulled.added) - theirs
    assert git(b.store.path, "status", "--porcelain") == ""
    Sync(a).sync()
    assert ids(a) == ids(b) == {p.stem for p in b.store.path.glob("layer0/*/*.txt")}


def test_a_fast_forward_killed_while_it_wrote_the_files_is_redone_and_indexed(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    """``git read-tree -m -u`` killed after it wrote some of the remote's files, before it
    wrote the index: the files are there, untracked, and nothing indexed them."""
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    theirs = [a.save(f"The release train {n} leaves on Tuesdays.").ids[0] for n in range(3)]
    Sync(a).sync()
    git(b.store.path, "fetch", "--quiet", "origin")
    _merging(b, fast_forward=True)
    for leaf_id in theirs[:2]:  # the third not written yet
        rel = next(a.store.path.glob(f"layer0/*/{leaf_id}.txt")).relative_to(a.store.path)
        (b.store.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (b.store.path / rel).write_bytes((a.store.path / rel).read_bytes())

    report = Sync(b).sync()
    assert report.pushed and report.commit == ""  # nothing of a's sent back as b's own
    assert set(report.pulled.added) == set(theirs) <= ids(b)
    assert git(b.store.path, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
    assert git(b.store.path, "status", "--porcelain") == ""


def test_a_memory_file_committed_that_the_catalog_lacks_is_indexed_first(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    """Whatever put a leaf file in the folder without the store (here a copy by hand),
    the commit that sends it indexes it before recording its refresh past it."""
    a, b = machine("a"), machine("b")
    Sync(b).init(str(remote))
    copied = a.save("The on-call rota changes on Mondays.").ids[0]
    rel = next(a.store.path.glob(f"layer0/*/{copied}.txt")).relative_to(a.store.path)
    (b.store.path / rel).parent.mkdir(parents=True, exist_ok=True)
    (b.store.path / rel).write_bytes((a.store.path / rel).read_bytes())
    assert copied not in ids(b)
    report = Sync(b).sync()
    assert report.saved == 1 and report.pushed
    assert copied in ids(b)
    assert found(b, "on-call rota") == [copied]


def test_a_pull_into_a_machine_that_wrote_nothing_is_a_fast_forward(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    theirs = a.save("The load balancer drains for thirty seconds.", domain="infra").ids
    Sync(a).sync()
    report = Sync(b).sync()
    assert set(report.pulled.added) == set(theirs) and report.commit == ""
    assert git(b.store.path, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
    assert "fast-forward" in git(b.store.path, "reflog", "-1", "--format=%gs")
    assert found(b, "load balancer drains") == list(theirs)


def test_a_clone_set_up_before_gets_its_git_settings_on_the_next_sync(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    git(a.store.path, "config", "--unset", "core.untrackedCache")
    Sync(a).sync()
    assert git(a.store.path, "config", "--get", "core.untrackedCache").strip() == "true"


def test_a_clone_whose_driver_names_the_old_module_gets_the_new_command_on_the_next_sync(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    old = f"'{sys.executable}' -m ihmt_mcp._leaf_merge %O %A %B %P"
    git(a.store.path, "config", "merge.ihmt-leaf.driver", old)
    Sync(a).sync()
    driver = git(a.store.path, "config", "--get", "merge.ihmt-leaf.driver").strip()
    assert driver == f"'{sys.executable}' -m ihmt_mcp.sync._leaf_merge %O %A %B %P"


def test_the_merge_driver_runs_as_a_module_and_says_its_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error", "-m", "ihmt_mcp.sync._leaf_merge"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "usage: python -m ihmt_mcp.sync._leaf_merge %O %A %B %P\n"


# ---------------------------------------------------------------------- purge
SECRETISH = "The door code of the server room is seven four four one, ask Quentin."


def test_purge_removes_a_forgotten_memory_from_every_object_of_every_clone(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    gone = a.save(SECRETISH, domain="office").ids[0]
    keep = a.save("The printer on floor two needs A4 paper.", domain="office").ids[0]
    Sync(a).sync()
    Sync(b).init(str(remote))
    assert "seven four four one" in every_object_text(b.store.path)
    with pytest.raises(SyncError) as caught:
        Sync(a).purge(gone)
    assert caught.value.reason == "not_forgotten" and "ihmt forget" in str(caught.value)
    a.forget(gone)
    purged = Sync(a).purge(gone)
    assert purged.rewritten and purged.pushed and "ihmt sync" in purged.others
    assert "seven four four one" not in every_object_text(a.store.path)
    # The host's own garbage collection (a bare repository in tmp_path: run it here).
    git(remote, "reflog", "expire", "--expire=now", "--all")
    git(remote, "gc", "--quiet", "--prune=now")
    assert "seven four four one" not in every_object_text(remote)
    # The other clone follows the purge on its next sync, and pushes nothing of it back.
    mine = b.save("The coffee machine is descaled on Mondays.", domain="office").ids[0]
    report = Sync(b).sync()
    assert report.followed_purges == (gone,)
    assert gone not in ids(b) and keep in ids(b) and mine in ids(b)
    assert "seven four four one" not in every_object_text(b.store.path)
    git(remote, "gc", "--quiet", "--prune=now")
    assert "seven four four one" not in every_object_text(remote)
    Sync(a).sync()
    assert ids(a) == ids(b)


def test_a_purge_the_remote_refuses_blocks_syncs_until_it_is_finished(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    gone = a.save(SECRETISH, domain="office").ids[0]
    Sync(a).sync()
    a.forget(gone)
    git(remote, "config", "receive.denyNonFastForwards", "true")
    with pytest.raises(SyncError) as caught:
        Sync(a).purge(gone)
    assert caught.value.reason == "rejected" and "\n" not in str(caught.value)
    with pytest.raises(SyncError) as waiting:
        Sync(a).sync()
    assert f"ihmt sync --purge {gone}" in str(waiting.value)
    git(remote, "config", "receive.denyNonFastForwards", "false")
    assert Sync(a).purge(gone).pushed
    assert "seven four four one" not in every_object_text(a.store.path)
    git(remote, "reflog", "expire", "--expire=now", "--all")
    git(remote, "gc", "--quiet", "--prune=now")
    assert "seven four four one" not in every_object_text(remote)
    assert Sync(a).sync().pushed


def test_a_memory_saved_again_after_its_purge_stays_on_every_clone(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    text = "The release train leaves every second Wednesday."
    first = a.save(text, domain="process").ids[0]
    Sync(a).sync()
    Sync(b).init(str(remote))
    a.forget(first)
    Sync(a).purge(first)
    again = a.save(text, domain="process").ids[0]
    Sync(a).sync()
    assert again == first
    report = Sync(b).sync()
    assert report.followed_purges == ()
    assert first in ids(a) and first in ids(b)
    Sync(a).sync()
    assert ids(a) == ids(b)


def test_purging_a_memory_no_commit_holds_rewrites_nothing(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    Sync(a).init(str(remote))
    gone = a.save("A draft note never synced about the offsite.", domain="team").ids[0]
    a.forget(gone)
    report = Sync(a).purge(gone)
    assert not report.rewritten and "nothing to purge" in report.render()


# ---------------------------------------------------------------------- background
def test_parse_period() -> None:
    assert parse_period("10m") == 600
    assert parse_period("30s") == 30
    assert parse_period("1h") == 3600
    assert parse_period("off") is None and parse_period("") is None
    with pytest.raises(ValueError, match="not a period"):
        parse_period("soon")
    with pytest.raises(ValueError, match="too short"):
        parse_period("0.5s")


def test_a_background_round_syncs_and_a_failing_round_only_logs(
    machine: Callable[[str], Memory],
    remote: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    a, b = machine("a"), machine("b")
    Sync(a).init(str(remote))
    Sync(b).init(str(remote))
    a.save("The design system lives in the ui-kit repository.", domain="design")
    path = b.store.path

    def open_b() -> Memory:
        return Memory.init(path, semantic="off")

    rounds = BackgroundSync(open_b, 60, folder=path)
    report = rounds.run_once()
    assert report is not None and report.pushed
    Sync(a).sync()
    report = rounds.run_once()
    assert report is not None and report.pulled.added
    remote.rename(tmp_path / "gone.git")
    with caplog.at_level(logging.WARNING, logger="ihmt_mcp.sync"):
        assert rounds.run_once() is None
    assert "background sync failed" in caplog.text and rounds.last_error


def test_a_round_on_a_memory_not_synced_opens_nothing(tmp_path: Path) -> None:
    opened: list[int] = []

    def open_memory() -> Memory:
        opened.append(1)
        raise AssertionError("a store that is not synced is never opened")

    rounds = BackgroundSync(open_memory, 60, folder=tmp_path / "nowhere")
    assert rounds.run_once() is None and opened == [] and rounds.last_error == ""


# ---------------------------------------------------------------------- the memory
def test_forget_on_a_synced_memory_says_it_lives_in_history(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    local = a.save("A memory forgotten before any sync.").ids[0]
    assert "ihmt sync --purge" not in a.forget(local).render()
    Sync(a).init(str(remote))
    gone = a.save("The old build server was called rusty-01.").ids[0]
    Sync(a).sync()
    result = a.forget(gone)
    assert result.in_git_history and result.to_json()["in_git_history"] is True
    assert f"ihmt sync --purge {gone}" in result.render()
    assert "git history" in result.render()


@pytest.mark.parametrize("asked_by", ["IHMT_SYNC_EVERY", "ihmt sync --every"])
def test_the_mcp_server_syncs_in_the_background_when_asked(
    machine: Callable[[str], Memory],
    remote: Path,
    tmp_path: Path,
    run_server: Callable[..., None],
    call: Callable[..., Any],
    asked_by: str,
) -> None:
    home = tmp_path / "home"
    served = Memory.init(home / "ihmt_memory", semantic="off")
    Sync(served).init(str(remote))
    env = {"IHMT_SEMANTIC": "off"}
    if asked_by == "IHMT_SYNC_EVERY":
        env["IHMT_SYNC_EVERY"] = "1s"
    else:
        assert Sync(served).set_every("1s") == "1s"
        assert Sync(served).status().every == "1s"
    served.close()

    async def body(session: Any) -> None:
        error, _ = await call(
            session, "save_memory", content="The staging database is called pg-stage-2."
        )
        assert not error
        # Bounded: the round runs every second; give it at most 60.
        with anyio.fail_after(60):
            while "1 saved" not in git(remote, "log", "--format=%s", "main"):
                await anyio.sleep(0.2)

    run_server(body, home=home, env=env)
    b = machine("b")
    Sync(b).init(str(remote))
    assert ["pg-stage-2" in leaf.text for leaf in b.store.iter_leaves()] == [True]


def test_every_is_a_setting_of_this_clone_only(
    machine: Callable[[str], Memory], remote: Path
) -> None:
    a = machine("a")
    with pytest.raises(SyncError) as refused:
        Sync(a).set_every("10m")
    assert refused.value.reason == "not_initialised"
    Sync(a).init(str(remote))
    with pytest.raises(SyncError) as bad:
        Sync(a).set_every("every tuesday")
    assert bad.value.reason == "bad_period" and "10m" in str(bad.value)
    assert Sync(a).set_every(" 10M ") == "10m"
    assert background_period(a.store.path) == "10m"
    assert "every 10m" in Sync(a).status().render()
    Sync(a).sync()
    b = machine("b")
    Sync(b).init(str(remote))
    # Never replicated: the other machine's server does not sync because this one does.
    assert background_period(b.store.path) == ""
    assert Sync(a).set_every("off") == ""
    assert background_period(a.store.path) == ""
    assert "in the background: off" in Sync(a).status().render()
