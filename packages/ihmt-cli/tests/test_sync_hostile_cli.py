"""``ihmt sync`` against what another clone pushed by hand: real ``ihmt`` processes, real
git, a bare repository as the remote. Each bad file is said once on stderr, in one line;
the sync goes on; no command stops working; nothing this machine holds is lost."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Ihmt = Callable[..., Any]

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


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, env=GIT_ENV
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def push_all(clone: Path) -> None:
    git(clone, "add", "--all")
    git(clone, "commit", "--quiet", "-m", "by hand")
    git(clone, "push", "--quiet", "origin", "HEAD:main")


def synced(ihmt: Ihmt, tmp_path: Path, remote: Path) -> tuple[Path, str, Path]:
    """This machine (a store with one memory, synced) and the other clone (plain git)."""
    a = tmp_path / "a" / "ihmt_memory"
    assert ihmt("init", "--path", str(a)).code == 0
    saved = ihmt(
        "save",
        "The staging host runs PostgreSQL 15.",
        "--domain",
        "infra",
        "--path",
        str(a),
        "--json",
    )
    leaf_id = saved.json()["ids"][0]
    assert ihmt("sync", "--init", str(remote), "--path", str(a)).code == 0
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "--quiet", str(remote), str(other)], check=True, env=GIT_ENV)
    return a, leaf_id, other


def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


def test_a_purge_record_with_a_bad_id_warns_once_and_every_sync_goes_on(
    ihmt: Ihmt, tmp_path: Path, remote: Path
) -> None:
    a, leaf_id, other = synced(ihmt, tmp_path, remote)
    (other / ".ihmt-purged").write_text("_x\n")
    (other / "forgotten").mkdir()
    (other / "forgotten" / "_x.json").write_text('{"leaf_id": "_x", "forgotten": true}')
    push_all(other)
    first = ihmt("sync", "--path", str(a))
    assert first.code == 0, first.err
    said = warnings_of(first.err)
    assert len(said) == 1 and "'_x'" in said[0] and ".ihmt-purged" in said[0]
    assert "Traceback" not in first.err
    second = ihmt("sync", "--path", str(a))
    assert second.code == 0 and warnings_of(second.err) == [], second.err
    assert leaf_id in ihmt("search", "staging host PostgreSQL", "--path", str(a)).out


def test_a_leaf_removed_with_git_rm_elsewhere_is_kept_and_said_in_one_line(
    ihmt: Ihmt, tmp_path: Path, remote: Path
) -> None:
    a, leaf_id, other = synced(ihmt, tmp_path, remote)
    [rel] = [p for p in git(other, "ls-files").split() if p.endswith(f"{leaf_id}.txt")]
    git(other, "rm", "--quiet", rel)
    git(other, "commit", "--quiet", "-m", "git rm")
    git(other, "push", "--quiet", "origin", "HEAD:main")
    done = ihmt("sync", "--path", str(a))
    assert done.code == 0, done.err
    assert "forgotten" not in done.out
    said = [w for w in warnings_of(done.err) if leaf_id in w]
    assert len(said) == 1 and "ihmt forget" in said[0]
    assert (a / rel).is_file()
    assert leaf_id in ihmt("search", "staging host PostgreSQL", "--path", str(a)).out
    assert rel in git(remote, "ls-tree", "-r", "--name-only", "main").split()


def test_a_leaf_in_the_wrong_domain_folder_is_said_and_indexed_as_rebuild_does(
    ihmt: Ihmt, tmp_path: Path, remote: Path
) -> None:
    a, leaf_id, other = synced(ihmt, tmp_path, remote)
    [rel] = [p for p in git(other, "ls-files").split() if p.endswith(f"{leaf_id}.txt")]
    header = (other / rel).read_text()
    domain = header.split('"domain": "')[1].split('"')[0]
    text = header.replace(leaf_id, leaf_id.replace(domain, "software.infra"))
    text = text.replace(f'"domain": "{domain}"', '"domain": "software.infra"')
    new_id = leaf_id.replace(domain, "software.infra")
    (other / "layer0" / "personal").mkdir(parents=True)
    (other / "layer0" / "personal" / f"{new_id}.txt").write_text(text)
    push_all(other)
    done = ihmt("sync", "--path", str(a))
    assert done.code == 0, done.err
    said = [w for w in warnings_of(done.err) if f"layer0/personal/{new_id}.txt" in w]
    assert len(said) == 1, done.err
    refreshed = ihmt("stats", "--path", str(a), "--json").json()["leaves"]
    found = ihmt("search", "staging host PostgreSQL", "--path", str(a), "--json").out
    rebuilt = ihmt("rebuild", "--path", str(a), "--json")
    assert rebuilt.code == 0, rebuilt.err
    said = [n for n in rebuilt.err.splitlines() if f"layer0/personal/{new_id}.txt" in n]
    assert len(said) == 1 and said[0].startswith("note: ")
    # The same memories before and after the rebuild: the two machines agree.
    assert ihmt("stats", "--path", str(a), "--json").json()["leaves"] == refreshed == 2
    assert new_id in found
    assert ihmt("search", "staging host PostgreSQL", "--path", str(a), "--json").out == found


@pytest.mark.parametrize("version", ["typo", "3"])
def test_a_bad_config_pushed_elsewhere_never_stops_this_machine(
    ihmt: Ihmt, tmp_path: Path, remote: Path, version: str
) -> None:
    a, leaf_id, other = synced(ihmt, tmp_path, remote)
    config = other / "ihmt.config.json"
    mine = (a / "ihmt.config.json").read_bytes()
    if version == "typo":
        config.write_text(config.read_text().replace('"branch_factor": 8', '"branch_factor": 8,,'))
    else:
        config.write_text(config.read_text().replace('"format_version": 2', '"format_version": 3'))
    push_all(other)
    assert ihmt("save", "Deploys go out on Tuesdays.", "--path", str(a)).code == 0
    done = ihmt("sync", "--path", str(a))
    assert "Traceback" not in done.err
    if version == "typo":
        assert done.code == 0, done.err
        assert [w for w in warnings_of(done.err) if "ihmt.config.json" in w]
        assert git(remote, "show", "main:ihmt.config.json").encode() == mine
    else:
        assert done.code == 1 and len(done.err.splitlines()) == 1 and "newer" in done.err
    assert (a / "ihmt.config.json").read_bytes() == mine
    assert leaf_id in ihmt("search", "staging host PostgreSQL", "--path", str(a)).out
    assert ihmt("sync", "--status", "--path", str(a)).code == 0


def test_a_bad_config_already_merged_here_is_fixed_by_pulling_the_remotes(
    ihmt: Ihmt, tmp_path: Path, remote: Path
) -> None:
    """A clone that merged a bad config before syncs refused it: every command fails,
    and 'ihmt sync' still pulls the fix another machine pushed."""
    a, leaf_id, other = synced(ihmt, tmp_path, remote)
    good = (a / "ihmt.config.json").read_text()
    (a / "ihmt.config.json").write_text(good.replace('"format_version": 2', '"format_version": 3'))
    git(a, "commit", "--quiet", "-am", "a bad config, merged by an older ihmt")
    assert ihmt("search", "staging host", "--path", str(a)).code == 1
    (other / "README").write_text("the remote moved on\n")
    push_all(other)
    done = ihmt("sync", "--path", str(a))
    assert done.code == 0, done.err
    assert [w for w in warnings_of(done.err) if "ihmt.config.json" in w]
    assert (a / "ihmt.config.json").read_text() == good
    assert leaf_id in ihmt("search", "staging host PostgreSQL", "--path", str(a)).out
    # Changed by hand here, it is never overwritten: one line says what to do.
    (a / "ihmt.config.json").write_text("{ not json")
    by_hand = ihmt("sync", "--path", str(a))
    assert by_hand.code == 1 and len(by_hand.err.splitlines()) == 1
    assert "checkout ihmt.config.json" in by_hand.err
    assert (a / "ihmt.config.json").read_text() == "{ not json"


def test_a_huge_period_is_refused_in_one_line(ihmt: Ihmt, tmp_path: Path, remote: Path) -> None:
    a, _leaf_id, _other = synced(ihmt, tmp_path, remote)
    for period in ("9" * 400 + "h", "99999999999999999999s", "25h"):
        done = ihmt("sync", "--every", period, "--path", str(a))
        assert done.code == 1 and len(done.err.splitlines()) == 1, done.err
        assert "24h" in done.err and "Traceback" not in done.err
    assert ihmt("sync", "--every", "24h", "--path", str(a)).code == 0


def test_a_secret_written_by_hand_is_not_pushed_and_doctor_lists_it(
    ihmt: Ihmt, tmp_path: Path, remote: Path
) -> None:
    a, leaf_id, _other = synced(ihmt, tmp_path, remote)
    [leaf] = list((a / "layer0").glob(f"*/{leaf_id}.txt"))
    leaf.write_text(leaf.read_text() + f"\nThe deploy key is {AWS_KEY}\n")
    done = ihmt("sync", "--path", str(a))
    assert done.code == 0, done.err
    said = [w for w in warnings_of(done.err) if leaf_id in w]
    assert len(said) == 1 and "secret" in said[0] and AWS_KEY not in said[0]
    rel = leaf.relative_to(a).as_posix()
    assert AWS_KEY not in git(remote, "show", f"main:{rel}")
    assert AWS_KEY in leaf.read_text()  # the user's file is never rewritten
    found = ihmt("search", "staging host PostgreSQL deploy", "--path", str(a), "--json")
    assert found.code == 0 and AWS_KEY not in found.out and leaf_id in found.out
    doctor = ihmt("doctor", "--no-connect", "--home", str(a.parent), "--json")
    assert rel in doctor.out and "secret" in doctor.out and AWS_KEY not in doctor.out
