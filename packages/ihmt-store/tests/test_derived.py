"""Derived per-item data of sibling packages: opaque bytes in named spaces, kept apart from
the search index, read incrementally, gone with the memory it belongs to."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ihmt_store import Store
from ihmt_store.testing import store_with

SPACE = "vectors/test-model@1"


def test_a_reader_gets_everything_first_then_only_what_changed(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["alpha note", "beta note", "gamma note"])
    a, b, c = (leaf.leaf_id for leaf in leaves)
    store.put_derived(SPACE, {a: b"\x01\x02", b: b"\x03\x04"})

    first = store.derived_changes(SPACE)
    assert first.reset
    assert dict(first.rows) == {a: b"\x01\x02", b: b"\x03\x04"}

    store.put_derived(SPACE, {c: b"\x05\x06", a: b"\x07\x08"})
    later = store.derived_changes(SPACE, first.epoch, first.seq)
    assert not later.reset
    assert list(later.rows) == [(c, b"\x05\x06"), (a, b"\x07\x08")]
    assert store.derived_changes(SPACE, later.epoch, later.seq).rows == ()
    assert store.derived_ids(SPACE) == {a, b, c}


def test_a_reader_can_take_everything_a_page_at_a_time(tmp_path: Path) -> None:
    texts = [f"note number {n}" for n in range(7)]
    store, leaves = store_with(tmp_path / "m", texts)
    ids = [leaf.leaf_id for leaf in leaves]
    store.put_derived(SPACE, {i: i.encode() for i in ids[:5]})
    store.put_derived(SPACE, {ids[1]: b"again"})  # rewritten: read once, as it is now
    seen: dict[str, bytes | None] = {}
    epoch, seq, pages = None, 0, 0
    while True:
        page = store.derived_changes(SPACE, epoch, seq, limit=2)
        assert page.reset == (pages == 0) and len(page.rows) <= 2
        seen.update(page.rows)
        epoch, seq, pages = page.epoch, page.seq, pages + 1
        if len(page.rows) < 2:
            break
    assert seen == {**{i: i.encode() for i in ids[:5]}, ids[1]: b"again"} and pages == 3
    store.forget(ids[0])
    store.put_derived(SPACE, {ids[6]: b"new"})
    after = store.derived_changes(SPACE, epoch, seq, limit=10)
    assert not after.reset and dict(after.rows) == {ids[0]: None, ids[6]: b"new"}


def test_spaces_do_not_mix(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["one memory"])
    item = leaves[0].leaf_id
    store.put_derived(SPACE, {item: b"old model"})
    store.put_derived("vectors/other@2", {item: b"new model"})
    assert dict(store.derived_changes(SPACE).rows) == {item: b"old model"}
    assert dict(store.derived_changes("vectors/other@2").rows) == {item: b"new model"}
    assert store.derived_counts() == {SPACE: 1, "vectors/other@2": 1}


def test_forgetting_a_memory_removes_its_data_in_every_space(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["keep this one", "forget this one"])
    keep, gone = (leaf.leaf_id for leaf in leaves)
    store.put_derived(SPACE, {keep: b"k", gone: b"g"})
    store.put_derived("vectors/other@2", {gone: b"g2"})
    seen = store.derived_changes(SPACE)

    store.forget(gone)

    assert store.derived_ids(SPACE) == {keep}
    assert store.derived_ids("vectors/other@2") == set()
    # A running reader learns of the removal without reading everything again.
    assert store.derived_changes(SPACE, seen.epoch, seen.seq).rows == ((gone, None),)
    # The bytes are gone from the file, not only unlisted (secure_delete).
    store.close()
    raw = (tmp_path / "m" / "state" / "derived.sqlite3").read_bytes()
    assert b"g2" not in raw


def test_clearing_a_space_makes_readers_start_over(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["a memory"])
    item = leaves[0].leaf_id
    store.put_derived(SPACE, {item: b"v1"})
    seen = store.derived_changes(SPACE)
    store.clear_derived(SPACE)
    after = store.derived_changes(SPACE, seen.epoch, seen.seq)
    assert after.reset and after.rows == ()
    store.put_derived(SPACE, {item: b"v2"})
    assert dict(store.derived_changes(SPACE, after.epoch, after.seq).rows) == {item: b"v2"}


def test_rebuild_keeps_the_data_of_live_memories_only(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["first memory", "second memory"])
    first, second = (leaf.leaf_id for leaf in leaves)
    store.put_derived(SPACE, {first: b"1", second: b"2", "L-general-9-deadbeef": b"stale"})
    store.rebuild()
    assert store.derived_ids(SPACE) == {first, second}


def test_a_damaged_file_is_replaced_and_said(tmp_path: Path) -> None:
    store, leaves = store_with(tmp_path / "m", ["a memory"])
    store.put_derived(SPACE, {leaves[0].leaf_id: b"v"})
    store.close()
    (tmp_path / "m" / "state" / "derived.sqlite3").write_bytes(b"not a database at all" * 100)
    for extra in ("-wal", "-shm"):
        (tmp_path / "m" / "state" / f"derived.sqlite3{extra}").unlink(missing_ok=True)

    reopened = Store.open(tmp_path / "m")
    assert reopened.derived_ids(SPACE) == set()
    assert any("derived.sqlite3 was damaged" in n for n in reopened.notices)
    reopened.put_derived(SPACE, {leaves[0].leaf_id: b"again"})
    assert reopened.derived_ids(SPACE) == {leaves[0].leaf_id}


@pytest.mark.parametrize("space", ["", "   ", "x" * 201])
def test_a_space_needs_a_name(tmp_path: Path, space: str) -> None:
    store, _ = store_with(tmp_path / "m", ["a memory"])
    with pytest.raises(ValueError, match="space"):
        store.put_derived(space, {"x": b"y"})


def test_the_search_index_file_cannot_be_claimed_by_a_sibling(tmp_path: Path) -> None:
    store, _ = store_with(tmp_path / "m", [])
    with pytest.raises(ValueError, match="invalid state file name"):
        store.state_file("derived.sqlite3")


WRITER = """
import sys
from pathlib import Path
from ihmt_store import Store
store = Store.open(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    store.put_derived("vectors/test-model@1", {f"{sys.argv[2]}-{i}": sys.argv[2].encode() * 4})
store.close()
"""


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    store, _ = store_with(tmp_path / "m", [])
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "m"), tag, "40"])
        for tag in "ab"
    ]
    assert [p.wait(120) for p in procs] == [0, 0]
    changes = store.derived_changes(SPACE)
    assert len(changes.rows) == 80
    assert changes.seq == 80  # every write got its own sequence number
