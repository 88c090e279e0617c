"""Leaf and note files holding anything: bytes that are not UTF-8, headers naming another
id or a date far ahead, symbolic links, files far larger than a memory. Search, rebuild
and the check ``doctor`` runs never crash, never delete a file, and agree on which files
are memories; the note clock never follows a time it could not stamp past."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_store import MAX_LEAF_BYTES, Correction, CorruptFileError, Store, check_date
from ihmt_store._files import leaf_bytes, parse_leaf_lossy
from ihmt_store._layout import leaf_rel
from ihmt_store._notes import Clock, fold, parse_note
from ihmt_store.testing import make_leaf, store_with

WORDS = ["staging host runs PostgreSQL", "deploys go out on Tuesdays", "backups live in S3"]


def _agree(store: Store) -> None:
    """Rebuild, ``file_problems`` and search agree; nothing raises."""
    before = {p: p.read_bytes() if p.is_file() else None for p in _files(store.path)}
    problems = {p.path for p in store.file_problems()}
    report = store.rebuild()
    assert {p.path for p in report.problems} == problems
    assert {p.path for p in store.file_problems()} == problems
    indexed = {e.path for e in store.iter_entries("leaf")}
    assert not indexed & problems
    for entry in store.iter_entries("leaf"):
        store.read_leaf(entry.id)  # every memory the index holds reads back
    for words in WORDS:
        for cand in store.candidates(words):
            if cand.entry.kind == "leaf":
                store.read_leaf(cand.entry)
    after = {p: p.read_bytes() if p.is_file() else None for p in _files(store.path)}
    assert set(after) >= set(before)  # nothing deleted
    for path, data in before.items():
        if data is not None and path.suffix == ".txt":
            # Texts keep their bytes (a header may gain its checksum).
            assert after[path] is not None
            assert (
                after[path].split(b"\nIHMT-META>>>\n", 1)[-1]
                == data.split(b"\nIHMT-META>>>\n", 1)[-1]
            )


def _files(root: Path) -> list[Path]:
    return [p for p in (root / "layer0").rglob("*") if p.is_file() or p.is_symlink()]


# ---------------------------------------------------------------- the clock
def test_a_note_dated_year_9999_does_not_stop_the_clock(tmp_path: Path) -> None:
    clock = Clock(tmp_path / "clock.json")
    clock.observe("9999-12-31T23:59:59.999Z")
    stamped = clock.tick()
    assert stamped < "2200" and stamped >= check_date("2000-01-01")[:4]
    assert clock.note("restored", "L-x").at > stamped


def test_a_clock_file_poisoned_far_ahead_is_not_followed(tmp_path: Path) -> None:
    path = tmp_path / "clock.json"
    path.write_text(json.dumps({"machine": "m-0123456789ab", "last": 253402300799999}))
    clock = Clock(path)
    assert clock.tick() < "2200"
    assert clock.machine == "m-0123456789ab"


def test_a_clock_years_ahead_is_still_followed(tmp_path: Path) -> None:
    clock = Clock(tmp_path / "clock.json")
    clock.observe("2031-01-01T00:00:00.000Z")
    assert clock.tick() > "2031-01-01T00:00:00.000Z"


@settings(max_examples=40, deadline=None)
@given(st.from_regex(r"\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z"))
def test_whatever_time_a_note_carries_the_next_tick_works(at: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        clock = Clock(Path(folder) / "clock.json")
        clock.observe(at)
        first = clock.tick()
        second = clock.tick()
        assert first < second
        parse_note(
            json.dumps(
                {"op": "restored", "leaf": "L-x", "at": second, "machine": clock.machine}
            ).encode(),
            Path(folder) / "n.json",
        )


# ---------------------------------------------------------------- dates
def test_the_store_refuses_to_write_a_leaf_dated_in_the_future(tmp_path: Path) -> None:
    store, _ = store_with(tmp_path / "m", ["an old memory"])
    with store, pytest.raises(ValueError, match="in the future"):
        store.put_leaf(make_leaf("a bogus one", timestamp="9999-12-31T23:59:59Z"))
    assert check_date("2025-01-10") == "2025-01-10T00:00:00Z"
    with pytest.raises(ValueError, match="in the future"):
        check_date("9999-12-31")


def test_a_leaf_file_dated_in_the_future_is_a_problem_not_a_memory(tmp_path: Path) -> None:
    store, (leaf,) = store_with(tmp_path / "m", [WORDS[0]])
    bogus = make_leaf(WORDS[0] + " 17", position=5)
    data = leaf_bytes(bogus).replace(b"2025-01-01T00:00:00Z", b"9999-12-31T23:59:59Z")
    path = tmp_path / "m" / leaf_rel(bogus.leaf_id, "general")
    path.write_bytes(data)
    with store:
        changes = store.apply_changes([leaf_rel(bogus.leaf_id, "general")])
        assert "in the future" in changes.problems[0].reason and not changes.added
        _agree(store)
        assert [e.id for e in store.iter_entries("leaf")] == [leaf.leaf_id]
    assert path.read_bytes() == data


# ---------------------------------------------------------------- bytes, links, sizes
def test_a_text_that_is_not_utf8_is_read_with_replacement_and_keeps_its_bytes(
    tmp_path: Path,
) -> None:
    store, (leaf,) = store_with(tmp_path / "m", [WORDS[0]])
    path = tmp_path / "m" / leaf_rel(leaf.leaf_id, "general")
    with open(path, "ab") as handle:
        handle.write(b" caf\xe9")
    with store:
        assert store.read_leaf(leaf.leaf_id).text.endswith(" caf\ufffd")
        assert any("UTF-8" in n for n in store.notices)
        store.notices.clear()
        assert store.read_leaf(leaf.leaf_id).text.endswith(" caf\ufffd")
        assert not store.notices  # said once: the header now carries its checksum
        assert path.read_bytes().endswith(b" caf\xe9")
        _agree(store)


def test_a_leaf_over_the_cap_is_never_read_whole(tmp_path: Path) -> None:
    store, (leaf, other) = store_with(tmp_path / "m", [WORDS[0], WORDS[0] + " too"])
    path = tmp_path / "m" / leaf_rel(leaf.leaf_id, "general")
    with open(path, "ab") as handle:
        handle.truncate(MAX_LEAF_BYTES + 1)
    with store:
        found = [c.entry.id for c in store.candidates(WORDS[0])]
        assert found == [other.leaf_id] and store.io.bytes_read == 0
        assert any("too large" in n for n in store.notices)
        with pytest.raises(CorruptFileError, match="too large"):
            store.read_leaf(leaf.leaf_id)
        assert store.io.bytes_read == 0
        _agree(store)
    with pytest.raises(ValueError, match="too large"):
        store.put_leaf(make_leaf("x" * (MAX_LEAF_BYTES + 1), position=9))


def test_restore_records_which_correction_it_undid(tmp_path: Path) -> None:
    store, (old, new) = store_with(tmp_path / "m", [WORDS[0], WORDS[0] + " now 17"])
    with store:
        store.annotate(old.leaf_id, outdated_by=Correction(by=new.leaf_id, date="2026-01-01"))
        assert store.read_leaf(old.leaf_id).restored_from == ()
        store.annotate(old.leaf_id, outdated_by=None)
        assert store.read_leaf(old.leaf_id).restored_from == (new.leaf_id,)
        store.rebuild()
        assert store.read_leaf(old.leaf_id).restored_from == (new.leaf_id,)
        store.annotate(old.leaf_id, outdated_by=Correction(by=new.leaf_id, date="2026-01-02"))
        again = store.read_leaf(old.leaf_id)
        assert again.restored_from == () and again.outdated_by is not None
    assert fold([]).extra == {}


# ---------------------------------------------------------------- fuzz
_HEADER_KEYS = st.dictionaries(
    st.sampled_from(["leaf_id", "timestamp", "domain", "tags", "extra", "span", "checksum"]),
    st.one_of(
        st.none(),
        st.integers(),
        st.text(max_size=30),
        st.sampled_from(["9999-12-31T23:59:59Z", "0001-01-01", "L-general-0000-other"]),
        st.lists(st.text(max_size=5), max_size=3),
    ),
    max_size=4,
)


@st.composite
def _damage(draw: st.DrawFn) -> tuple[str, bytes | dict[str, object]]:
    kind = draw(st.sampled_from(["bytes", "header", "append", "link-out", "link-in", "big", "dir"]))
    if kind == "bytes":
        return kind, draw(st.binary(max_size=200))
    if kind == "append":
        return kind, draw(st.binary(min_size=1, max_size=40))
    if kind == "header":
        return kind, draw(_HEADER_KEYS)
    return kind, b""


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(damages=st.lists(_damage(), min_size=1, max_size=3))
def test_any_leaf_file_leaves_search_rebuild_and_doctor_agreeing(
    tmp_path_factory: pytest.TempPathFactory, damages: list[tuple[str, object]]
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    store, leaves = store_with(root / "m", WORDS)
    with store:
        for (kind, value), leaf in zip(damages, leaves, strict=False):
            path = root / "m" / leaf_rel(leaf.leaf_id, "general")
            data = path.read_bytes()
            if kind == "bytes":
                assert isinstance(value, bytes)
                path.write_bytes(value)
            elif kind == "append":
                assert isinstance(value, bytes)
                path.write_bytes(data + value)
            elif kind == "header":
                assert isinstance(value, dict)
                head, _, text = data.partition(b"\nIHMT-META>>>\n")
                meta = json.loads(head.removeprefix(b"<<<IHMT-META\n"))
                meta.update(value)
                path.write_bytes(
                    b"<<<IHMT-META\n" + json.dumps(meta).encode() + b"\nIHMT-META>>>\n" + text
                )
            elif kind in ("link-out", "link-in"):
                target = root / "outside.txt" if kind == "link-out" else root / "m" / "a.txt"
                target.write_bytes(data)
                path.unlink()
                path.symlink_to(target)
            elif kind == "big":
                with open(path, "ab") as handle:
                    handle.truncate(MAX_LEAF_BYTES + 1)
            else:
                path.unlink()
                path.mkdir()
        # Before a rebuild, search reads what the index still names: never a crash.
        for words in WORDS:
            for cand in store.candidates(words):
                try:
                    store.read_leaf(cand.entry)
                except CorruptFileError:
                    pass
        _agree(store)
        assert len(store.notices) <= 2 * len(damages) + 2
    for item in root.rglob("*"):
        if item.is_symlink():
            os.unlink(item)


def test_a_text_that_is_not_utf8_parses_and_says_so() -> None:
    data = leaf_bytes(make_leaf("plain")) + b"\xff\xfe"
    leaf, lossy = parse_leaf_lossy(data, Path("layer0/general/x.txt"))
    assert lossy and leaf.text == "plain\ufffd\ufffd"
    assert parse_leaf_lossy(leaf_bytes(make_leaf("plain")), Path("x.txt"))[1] is False
