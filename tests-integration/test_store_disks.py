"""The CLI on a full disk and on a read-only mount (issue #13 D15, D26), with real mounts.

Each case runs a shell script in a private mount namespace (``unshare -m``): a small
tmpfs that fills up, or a read-only bind mount of the store. The mounts vanish with
the namespace. Skipped where mount namespaces are not allowed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

IHMT = str(Path(sys.executable).parent / "ihmt")


def _unshare() -> list[str]:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux)")
    base = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    probe = subprocess.run(
        [*base, "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt && umount /mnt"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"mount namespaces are not allowed here: {probe.stderr.decode().strip()}")
    return base


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(tmp_path),
        "IHMT_HOME": str(tmp_path / ".ihmt"),
        "IHMT_PROJECT": "",
        "IHMT": IHMT,
    }


def _sections(out: str) -> dict[str, tuple[int, str]]:
    """``== name`` … ``rc=N`` blocks of the script's output → {name: (rc, text)}. The CLI's
    ``note:`` lines (what the store repaired or cannot do, on stderr) are kept apart, in
    ``found["notes"]``, so each block's text is the command's own output."""
    found: dict[str, tuple[int, str]] = {}
    name, lines, notes = "", [], []
    for line in out.splitlines():
        if line.startswith(("ihmt: note: ", "note: ")):
            notes.append(line)
        elif line.startswith("== "):
            name, lines = line[3:].strip(), []
        elif line.startswith("rc=") and name:
            found[name] = (int(line[3:]), "\n".join(lines))
            name = ""
        else:
            lines.append(line)
    found["notes"] = (len(notes), "\n".join(notes))
    return found


FULL_DISK = r"""
set -u
D="$1"; FREE_KB="$2"
mount -t tmpfs -o size=4m tmpfs "$D" || exit 99
"$IHMT" --path "$D/s" init -q >/dev/null
"$IHMT" --path "$D/s" -q save "the falcon deploy uses pulumi zqwalrus" >/dev/null || exit 98
avail=$(df -k "$D" | awk 'NR==2 {print $4}')
fill=$((avail - FREE_KB))
if [ "$fill" -gt 0 ]; then dd if=/dev/zero of="$D/filler" bs=1k count="$fill" 2>/dev/null; fi
python3 -c "print(' '.join(f'word{i} note' for i in range(3000)))" > "$D/../big.txt"
echo "== big"; "$IHMT" --path "$D/s" -q save - < "$D/../big.txt" 2>&1; echo "rc=$?"
echo "== small"; "$IHMT" --path "$D/s" -q save "staging runs nginx qqotter" 2>&1; echo "rc=$?"
echo "== search"; "$IHMT" --path "$D/s" search zqwalrus 2>&1; echo "rc=$?"
echo "== stats"; "$IHMT" --path "$D/s" --json stats 2>&1; echo "rc=$?"
rm -f "$D/filler"
echo "== after"; "$IHMT" --path "$D/s" -q save "the cache is redis qqheron" 2>&1; echo "rc=$?"
echo "== otter"; "$IHMT" --path "$D/s" search qqotter 2>&1; echo "rc=$?"
echo "== found"; "$IHMT" --path "$D/s" search qqheron 2>&1; echo "rc=$?"
echo "== final"; "$IHMT" --path "$D/s" --json stats 2>&1; echo "rc=$?"
"""


@pytest.mark.parametrize("free_kb", [0, 4, 16, 40, 96])
def test_a_full_disk_keeps_reads_working_and_writes_say_the_disk_is_full(
    tmp_path: Path, free_kb: int
) -> None:
    # Issue #13 D15: after the first failed save every read answered
    # "unexpected OperationalError: database or disk is full … report it".
    base = _unshare()
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        [*base, "sh", "-c", FULL_DISK, "full-disk", str(disk), str(free_kb)],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = _sections(done.stdout)
    assert "unexpected" not in done.stdout, done.stdout
    assert "Traceback" not in done.stdout
    for write in ("big", "small"):
        rc, text = out[write]
        # Either it fit, or it says the disk is full; never a raw error.
        assert rc == 0 or "disk is full" in text, (write, text)
    rc, text = out["search"]
    assert rc == 0 and text.startswith("FOUND"), text
    rc, text = out["stats"]
    assert rc == 0 and json.loads(text)["unreachable"] == 0
    assert out["after"][0] == 0, out["after"]
    rc, text = out["found"]
    assert rc == 0 and text.startswith("FOUND"), text
    rc, text = out["final"]
    final = json.loads(text)
    assert final["unreachable"] == 0
    # Every acknowledged save is there (a big one may be several memories).
    assert final["leaves"] >= 2 + sum(out[w][0] == 0 for w in ("big", "small"))
    rc, text = out["otter"]
    assert text.startswith("FOUND") == (out["small"][0] == 0), text
    if free_kb == 0:
        assert out["small"][0] == 1  # nothing fits on a disk with no space at all


READ_ONLY = r"""
set -u
S="$1"
mount --bind "$S" "$S" && mount -o remount,bind,ro "$S" "$S" || exit 99
touch "$S/probe" 2>/dev/null && exit 97
echo "== search"; "$IHMT" --path "$S" search zqwalrus 2>&1; echo "rc=$?"
echo "== stats"; "$IHMT" --path "$S" --json stats 2>&1; echo "rc=$?"
echo "== tree"; "$IHMT" --path "$S" tree 2>&1; echo "rc=$?"
echo "== save"; "$IHMT" --path "$S" -q save "cannot be stored here" 2>&1; echo "rc=$?"
echo "== forget"; "$IHMT" --path "$S" -q forget --yes "$2" 2>&1; echo "rc=$?"
echo "== consolidate"; "$IHMT" --path "$S" -q consolidate --force 2>&1; echo "rc=$?"
"""


@pytest.mark.parametrize("index", ["present", "missing"])
def test_a_store_on_a_read_only_mount_can_be_searched_and_refuses_writes_plainly(
    tmp_path: Path, index: str
) -> None:
    # Issue #13 D26: every command opened ihmt.lock for writing and failed.
    base = _unshare()
    store = tmp_path / "s"
    env = _env(tmp_path)
    subprocess.run([IHMT, "--path", str(store), "init", "-q"], env=env, check=True)
    saved = subprocess.run(
        [IHMT, "--path", str(store), "--json", "save", "the falcon deploy uses pulumi zqwalrus"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    memory_id = json.loads(saved.stdout)["ids"][0]
    if index == "missing":
        shutil.rmtree(store / "state")
    before = sorted(p.relative_to(store).as_posix() for p in store.rglob("*"))
    done = subprocess.run(
        [*base, "sh", "-c", READ_ONLY, "read-only", str(store), memory_id],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = _sections(done.stdout)
    assert "unexpected" not in done.stdout and "Traceback" not in done.stdout
    # reads say, once per command, that writes cannot happen here
    assert "read-only disk or folder" in out["notes"][1], out["notes"]
    rc, text = out["search"]
    assert rc == 0 and text.startswith("FOUND"), text
    rc, text = out["stats"]
    assert rc == 0 and json.loads(text)["leaves"] == 1
    assert out["tree"][0] == 0 and memory_id in out["tree"][1]
    for write in ("save", "forget", "consolidate"):
        rc, text = out[write]
        assert rc == 1 and "read-only" in text, (write, text)
    assert sorted(p.relative_to(store).as_posix() for p in store.rglob("*")) == before
