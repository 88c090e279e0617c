"""The write lock and disk refusals, with real processes and real OS limits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ihmt_store import LockTimeoutError, Store, StoreIOError
from ihmt_store.testing import make_leaf

HOLD_LOCK = textwrap.dedent(
    """
    import sys, time
    from ihmt_store import Store
    store = Store.open(sys.argv[1])
    with store.locked():
        print("locked", flush=True)
        time.sleep(60)
    """
)


def _holder(path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_writer_waits_for_the_lock_and_times_out_with_the_holder_named(tmp_path: Path) -> None:
    Store.create(tmp_path / "m")
    holder = _holder(tmp_path / "m")
    try:
        store = Store.open(tmp_path / "m", lock_timeout=0.3)
        with pytest.raises(LockTimeoutError, match=f"process {holder.pid}") as caught:
            store.put_leaf(make_leaf("blocked"))
        assert caught.value.timeout == 0.3
        assert store.count("leaf") == 0
    finally:
        holder.kill()
        holder.communicate()


def test_a_lock_held_by_a_dead_process_is_free(tmp_path: Path) -> None:
    Store.create(tmp_path / "m")
    holder = _holder(tmp_path / "m")
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate()
    store = Store.open(tmp_path / "m", lock_timeout=2)
    store.put_leaf(make_leaf("after the crash"))
    assert store.count("leaf") == 1


def test_the_lock_is_reentrant_within_a_process(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "m")
    other = Store.open(tmp_path / "m", lock_timeout=1)
    with store.locked(), other.locked():
        other.put_leaf(make_leaf("nested"))
    assert store.count("leaf") == 1


FULL_DISK = textwrap.dedent(
    """
    import resource, signal, sys
    from ihmt_store import Store, StoreIOError
    from ihmt_store.testing import make_leaf
    store = Store.open(sys.argv[1])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
    try:
        store.put_leaf(make_leaf("x" * 200_000, position=9))
    except StoreIOError as exc:
        print("refused:", exc)
    else:
        print("accepted")
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_write_the_disk_refuses_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "m")
    kept = make_leaf("already saved")
    store.put_leaf(kept)
    out = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(tmp_path / "m")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.stdout.startswith("refused:"), out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    reopened = Store.open(tmp_path / "m")
    assert reopened.read_leaf(kept.leaf_id).text == "already saved"
    assert reopened.count("leaf") == 1
    leftovers = [p.name for p in (tmp_path / "m").rglob("*.ihmt-tmp")]
    assert leftovers == []


def test_store_io_error_is_an_os_error() -> None:
    assert issubclass(StoreIOError, OSError)
