"""``ihmt sync`` through real subprocesses, with real git and a bare repository as the remote."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Ihmt = Callable[..., Any]
"""The ``ihmt`` fixture: run the installed command, get its code, out and err."""

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

STATUS_KEYS = {
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


def test_init_sync_and_status_between_two_machines(
    ihmt: Ihmt, tmp_path: Path, remote: Path
) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert ihmt("init", "--path", a).code == 0
    saved = ihmt("save", "The staging host runs PostgreSQL 15.", "--path", a, "--json")
    assert saved.code == 0, saved.err
    new_id = saved.json()["ids"][0]

    first = ihmt("sync", "--init", str(remote), "--path", a, "--json")
    assert first.code == 0, first.err
    assert first.json()["repository"] == "created" and first.json()["pushed"]

    # b has no store at all: --init makes one and fills it from the remote.
    joined = ihmt("sync", "--init", str(remote), "--path", b, "--json")
    assert joined.code == 0, joined.err
    assert joined.json()["remote_had_store"] and new_id in joined.json()["pulled"]["added"]
    found = ihmt("search", "staging host PostgreSQL", "--path", b, "--json")
    assert new_id in found.out

    assert ihmt("save", "Deploys go out on Tuesdays.", "--path", a).code == 0
    status = ihmt("sync", "--status", "--path", a, "--json")
    assert status.code == 0, status.err
    assert set(status.json()) == STATUS_KEYS
    assert status.json()["uncommitted"] == 1 and status.json()["initialised"]

    sent = ihmt("sync", "--path", a, "--json")
    assert sent.code == 0, sent.err
    report = sent.json()
    assert report["saved"] == 1 and report["pushed"] and report["message"].endswith("1 saved")
    assert set(report) == {
        "commit",
        "message",
        "saved",
        "corrected",
        "forgotten",
        "pulled",
        "pushed",
        "retries",
        "head",
        "followed_purges",
        "warnings",
    }
    behind = ihmt("sync", "--status", "--path", b, "--json").json()
    assert behind["behind"] >= 1 and behind["reachable"]
    got = ihmt("sync", "--path", b)
    assert got.code == 0 and got.out.startswith("Synced:") and "1 new" in got.out


def test_status_of_a_memory_not_synced(ihmt: Ihmt, tmp_path: Path) -> None:
    a = str(tmp_path / "a")
    ihmt("init", "--path", a)
    status = ihmt("sync", "--status", "--path", a, "--json")
    assert status.code == 0
    assert set(status.json()) == STATUS_KEYS and status.json()["initialised"] is False
    plain = ihmt("sync", "--path", a)
    assert plain.code == 1 and len(plain.err_lines) == 1
    assert "ihmt sync --init" in plain.err


def test_errors_are_one_line_and_lose_nothing(
    ihmt: Ihmt, tmp_path: Path, remote: Path, leaf_count: Callable[[Path], int]
) -> None:
    a = tmp_path / "a"
    ihmt("init", "--path", str(a))
    ihmt("sync", "--init", str(remote), "--path", str(a))
    ihmt("save", "The office closes at 7pm on Fridays.", "--path", str(a))
    remote.rename(tmp_path / "moved.git")
    offline = ihmt("sync", "--path", str(a))
    assert offline.code == 1 and len(offline.err_lines) == 1
    assert offline.err.startswith("ihmt: error: cannot reach the remote")
    assert "Traceback" not in offline.err
    assert leaf_count(a) == 1
    both = ihmt("sync", "--status", "--purge", "L-x", "--path", str(a))
    assert both.code == 2 and "cannot be combined" in both.err


def test_every_turns_background_syncing_on_and_off(
    ihmt: Ihmt, tmp_path: Path, remote: Path
) -> None:
    a = str(tmp_path / "a")
    ihmt("init", "--path", a)
    early = ihmt("sync", "--every", "10m", "--path", a)
    assert early.code == 1 and len(early.err_lines) == 1 and "ihmt sync --init" in early.err
    assert ihmt("sync", "--init", str(remote), "--path", a).code == 0
    on = ihmt("sync", "--every", "10m", "--path", a, "--json")
    assert on.code == 0, on.err
    assert on.json() == {"every": "10m"}
    kept = subprocess.run(
        ["git", "-C", a, "config", "--get", "ihmt.every"], capture_output=True, text=True
    )
    assert kept.stdout.strip() == "10m"
    status = ihmt("sync", "--status", "--path", a, "--json").json()
    assert status["every"] == "10m"
    plain = ihmt("sync", "--status", "--path", a)
    assert "in the background: every 10m" in plain.out
    bad = ihmt("sync", "--every", "sometimes", "--path", a)
    assert bad.code == 1 and len(bad.err_lines) == 1 and "10m" in bad.err
    assert "Traceback" not in bad.err
    assert ihmt("sync", "--status", "--path", a, "--json").json()["every"] == "10m"
    off = ihmt("sync", "--every", "off", "--path", a)
    assert off.code == 0 and "no longer syncs" in off.out
    assert ihmt("sync", "--status", "--path", a, "--json").json()["every"] == ""
    both = ihmt("sync", "--every", "1h", "--status", "--path", a)
    assert both.code == 2 and "cannot be combined" in both.err


def test_purge_of_a_live_memory_is_refused(ihmt: Ihmt, tmp_path: Path, remote: Path) -> None:
    a = str(tmp_path / "a")
    ihmt("init", "--path", a)
    new_id = ihmt("save", "The lab door code changes monthly.", "--path", a, "--json").json()[
        "ids"
    ][0]
    ihmt("sync", "--init", str(remote), "--path", a)
    refused = ihmt("sync", "--purge", new_id, "--path", a)
    assert refused.code == 1 and len(refused.err_lines) == 1
    assert f"ihmt forget {new_id}" in refused.err


def test_forget_then_purge_rewrites_the_history(ihmt: Ihmt, tmp_path: Path, remote: Path) -> None:
    a = str(tmp_path / "a")
    ihmt("init", "--path", a)
    saved = ihmt(
        "save", "The alarm panel code is kept by the facilities desk.", "--path", a, "--json"
    )
    assert saved.code == 0, saved.err
    gone = saved.json()["ids"][0]
    ihmt("sync", "--init", str(remote), "--path", a)
    forgot = ihmt("forget", gone, "--yes", "--path", a, "--json")
    assert forgot.code == 0 and forgot.json()["in_git_history"] is True
    purged = ihmt("sync", "--purge", gone, "--path", a, "--json")
    assert purged.code == 0, purged.err
    assert purged.json()["rewritten"] and purged.json()["pushed"]
    history = subprocess.run(
        [
            "git",
            "-C",
            a,
            "log",
            "--all",
            "--full-history",
            "--format=%H",
            "--",
            f"layer0/*/{gone}.txt",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert history.stdout == ""


FREEZE_HOOK = """#!/bin/sh
# Freeze the git command named in IHMT_TEST_FREEZE ("update-ref:prepared") once, when
# its ref transaction reaches that state (test_sync_cli.py).
cat >/dev/null
[ -n "$IHMT_TEST_FREEZE" ] || exit 0
[ -e "$IHMT_TEST_FREEZE_MARK" ] && exit 0
[ "$1" = "${IHMT_TEST_FREEZE#*:}" ] || exit 0
parent=$(tr '\\0' ' ' < /proc/$PPID/cmdline)
case " $parent " in *" ${IHMT_TEST_FREEZE%%:*} "*) ;; *) exit 0 ;; esac
touch "$IHMT_TEST_FREEZE_MARK"
sleep 30
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the hook reads /proc")
def test_a_fast_forward_killed_before_head_moved_is_finished_by_the_next_sync(
    tmp_path: Path,
    remote: Path,
    machine: Callable[..., Any],
    kill_sync_at_mark: Callable[..., None],
) -> None:
    """A machine that wrote nothing pulls by a fast-forward: the files and the index move
    first, then HEAD. SIGKILLed in between, the next sync finishes it: HEAD on the
    remote's commit, nothing of the other machine's sent back as this one's own."""
    run = machine
    a, b = tmp_path / "a", tmp_path / "b"
    run(a, "init")
    run(a, "save", "The office printer is on the second floor.")
    run(a, "sync", "--init", str(remote))
    run(b, "sync", "--init", str(remote))
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "reference-transaction").write_text(FREEZE_HOOK)
    (hooks / "reference-transaction").chmod(0o755)
    store_b = b / "ihmt_memory"
    subprocess.run(["git", "-C", str(store_b), "config", "core.hooksPath", str(hooks)], check=True)
    (new_id,) = run(a, "save", "The printer toner is ordered on Fridays.")["ids"]
    run(a, "sync")
    kill_sync_at_mark(b, tmp_path / "frozen", IHMT_TEST_FREEZE="update-ref:prepared")
    head = subprocess.run(
        ["git", "-C", str(store_b), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    upstream = subprocess.run(
        ["git", "-C", str(remote), "rev-parse", "main"], capture_output=True, text=True
    ).stdout
    assert head != upstream  # killed with the files moved and HEAD not yet

    again = run(b, "sync")
    assert again["commit"] == "" and again["pushed"]
    head = subprocess.run(
        ["git", "-C", str(store_b), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    assert head == upstream
    found = run(b, "search", "when is the printer toner ordered")
    assert new_id in json.dumps(found)
    status = subprocess.run(
        ["git", "-C", str(store_b), "status", "--porcelain"], capture_output=True, text=True
    )
    assert status.stdout == ""
