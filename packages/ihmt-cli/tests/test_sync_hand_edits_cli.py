"""``ihmt sync`` of a leaf edited by hand on two machines, through real ``ihmt`` processes.

Real git, a bare repository in tmp_path as the remote, and a real SIGKILL of a sync
between its merge (which the leaf merge driver took part in) and the step that saves
the version the leaf did not keep.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the hook reads /proc"),
]

ORIGINAL = "The release branch is cut on Mondays and frozen for two days."
EARLIER = "The release branch is cut on Tuesdays and frozen for two days."
LATER = "The release branch is cut on Wednesdays and frozen for one day only."

HOOK = """#!/bin/sh
# Freeze the 'git merge' of a sync once, its commit made and the branch moved
# (test_sync_hand_edits_cli.py); its earlier ORIG_HEAD update does not count.
refs=$(cat)
[ "$1" = committed ] || exit 0
case "$refs" in *" refs/heads/"*) ;; *) exit 0 ;; esac
[ -n "$IHMT_TEST_FREEZE_MARK" ] || exit 0
[ -e "$IHMT_TEST_FREEZE_MARK" ] && exit 0
case " $(tr '\\0' ' ' < /proc/$PPID/cmdline) " in *" merge "*) ;; *) exit 0 ;; esac
touch "$IHMT_TEST_FREEZE_MARK"
sleep 30
"""


def edit_by_hand(home: Path, leaf_id: str, text: str) -> None:
    path = next((home / "ihmt_memory").glob(f"layer0/*/{leaf_id}.txt"))
    header, marker, _ = path.read_bytes().partition(b"\nIHMT-META>>>\n")
    path.write_bytes(header + marker + text.encode())


def texts(home: Path) -> dict[str, str]:
    found = {}
    for path in (home / "ihmt_memory").glob("layer0/*/*.txt"):
        data = path.read_bytes()
        assert b"<<<<<<<" not in data and b">>>>>>>" not in data
        found[path.stem] = data.partition(b"\nIHMT-META>>>\n")[2].decode()
    return found


def test_two_hand_edits_converge_and_a_sync_killed_after_its_merge_is_finished(
    tmp_path: Path,
    remote: Path,
    machine: Callable[..., Any],
    kill_sync_at_mark: Callable[..., None],
) -> None:
    ihmt = machine
    a, b = tmp_path / "a", tmp_path / "b"
    ihmt(a, "init")
    (leaf_id,) = ihmt(a, "save", ORIGINAL, "--domain", "process")["ids"]
    ihmt(a, "sync", "--init", str(remote))
    ihmt(b, "sync", "--init", str(remote))
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "reference-transaction").write_text(HOOK)
    (hooks / "reference-transaction").chmod(0o755)
    subprocess.run(
        ["git", "-C", str(b / "ihmt_memory"), "config", "core.hooksPath", str(hooks)], check=True
    )

    edit_by_hand(a, leaf_id, LATER)
    edit_by_hand(b, leaf_id, EARLIER)
    ihmt(b, "sync", GIT_COMMITTER_DATE="2026-05-04T09:00:00Z")  # b's edit, committed first
    # a merges b's edit (its own is the later one): no stop, b's text saved apart.
    sent = ihmt(a, "sync", GIT_COMMITTER_DATE="2026-05-04T17:00:00Z")
    assert sent["pushed"] and sent["saved"] == 1 and sent["corrected"] == 1

    # b edits again (a second hand edit, later still), and is killed right after the
    # merge of a's side, before it saved the version its leaf did not keep.
    edit_by_hand(b, leaf_id, EARLIER + " Ask the release manager first.")
    kill_sync_at_mark(b, tmp_path / "frozen", GIT_COMMITTER_DATE="2026-05-05T09:00:00Z")
    stashed = list((b / "ihmt_memory" / ".git" / "ihmt" / "leaf-merges").glob("*.json"))
    assert stashed, "the kill came after the driver stashed the other version"

    again = ihmt(b, "sync")
    assert again["pushed"]
    for _ in range(6):  # until a whole round sends and receives nothing
        rounds = [ihmt(a, "sync"), ihmt(b, "sync")]
        if not any(r["commit"] or any(r["pulled"].values()) for r in rounds):
            break
    else:
        raise AssertionError("the machines did not settle")
    final_a, final_b = texts(a), texts(b)
    assert final_a == final_b
    current = EARLIER + " Ask the release manager first."
    assert final_a[leaf_id] == current  # b's second edit is the latest
    assert LATER in final_a.values() and EARLIER in final_a.values()
    question = "when is the release branch cut and frozen"
    found_a, found_b = ihmt(a, "search", question), ihmt(b, "search", question)
    assert found_a == found_b
    flat = json.dumps(found_a)
    assert leaf_id in flat and "OUTDATED" in flat.upper()
    status = subprocess.run(
        ["git", "-C", str(b / "ihmt_memory"), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""
