"""Hostile leaf and note files at the CLI's edge: dates far in the future, bytes that are
not UTF-8, symbolic links, headers naming another id, files far larger than a memory.
Whatever a file holds, search, rebuild and doctor answer (and agree), and later writes work."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ihmt_store import MAX_LEAF_BYTES

Ihmt = Callable[..., Any]

PG15 = "The staging host runs PostgreSQL 15 on port 5432."
PG17 = "The staging host now runs PostgreSQL 17 on port 5432."


def _save(ihmt: Ihmt, store: Path, text: str, *args: str) -> str:
    run = ihmt("save", text, "--path", str(store), "--json", *args)
    assert run.code == 0, run.err
    return str(run.json()["ids"][0])


def _leaf_file(store: Path, leaf_id: str) -> Path:
    found = list(store.glob(f"layer0/*/{leaf_id}.txt"))
    assert len(found) == 1, found
    return found[0]


def _search(ihmt: Ihmt, store: Path, query: str) -> Any:
    run = ihmt("search", query, "--path", str(store), "--json")
    assert run.code == 0, run.err
    return run.json()


def _ids(answer: Any) -> list[str]:
    return [r["id"] for r in answer["results"]]


def _doctor(ihmt: Ihmt, store: Path) -> Any:
    run = ihmt("doctor", "--json", "--no-connect")
    assert run.code in (0, 1), run.err
    return run.json()


def _rebuild(ihmt: Ihmt, store: Path) -> Any:
    run = ihmt("rebuild", "--path", str(store), "--json")
    assert run.code == 0, run.err
    return run.json()


def _problems(report: Any) -> dict[str, str]:
    """Rebuild's problems (``path: reason``) by path."""
    return dict(p.split(": ", 1) for p in report["problems"])


def _hostile_copy(store: Path, leaf_id: str, new_id: str, **header: Any) -> Path:
    """A copy of a leaf under ``new_id`` with header keys changed (as a pull brings one)."""
    data = _leaf_file(store, leaf_id).read_bytes()
    head, _, text = data.partition(b"\nIHMT-META>>>\n")
    meta = json.loads(head.removeprefix(b"<<<IHMT-META\n"))
    meta.update(leaf_id=new_id, checksum=None, **header)
    meta.pop("checksum")
    target = _leaf_file(store, leaf_id).with_name(f"{new_id}.txt")
    target.write_bytes(b"<<<IHMT-META\n" + json.dumps(meta).encode() + b"\nIHMT-META>>>\n" + text)
    return target


# ---------------------------------------------------------------- a note dated 9999
def test_a_note_dated_year_9999_does_not_break_later_writes(ihmt: Ihmt, home: Path) -> None:
    store = home / "ihmt_memory"
    assert ihmt("init", "--path", str(store)).code == 0
    old = _save(ihmt, store, PG15, "--date", "2025-01-10")
    folder = store / "notes" / old
    folder.mkdir(parents=True)
    (folder / "99991231T235959.999Z-m-0badc10c0000-00000000.json").write_text(
        json.dumps(
            {
                "op": "extra",
                "leaf": old,
                "extra": {"pulled": True},
                "at": "9999-12-31T23:59:59.999Z",
                "machine": "m-0badc10c0000",
            }
        )
    )
    replaced = ihmt(
        "save", PG17, "--replaces", "staging PostgreSQL 15", "--path", str(store), "--json"
    )
    assert replaced.code == 0, replaced.err
    assert "out of range" not in replaced.err
    answer = _search(ihmt, store, "staging PostgreSQL 15")
    flagged = {r["id"]: r["outdated_by"] for r in answer["results"]}
    assert flagged[old] == replaced.json()["ids"][0]
    restored = ihmt("restore", old, "--path", str(store))
    assert restored.code == 0, restored.err
    assert "RESTORED" in restored.out


# ---------------------------------------------------------------- a leaf dated 9999
def test_a_leaf_dated_year_9999_is_refused_as_save_refuses_it(ihmt: Ihmt, home: Path) -> None:
    store = home / "ihmt_memory"
    assert ihmt("init", "--path", str(store)).code == 0
    old = _save(ihmt, store, PG15, "--date", "2025-01-10")
    refused = ihmt("save", PG17, "--date", "9999-12-31", "--path", str(store))
    assert refused.code == 1 and "in the future" in refused.err
    bogus = old[:-10] + "9999999999"
    planted = _hostile_copy(store, old, bogus, timestamp="9999-12-31T23:59:59Z")
    report = _rebuild(ihmt, store)
    problems = _problems(report)
    rel = planted.relative_to(store).as_posix()
    assert "in the future" in problems[rel]
    newer = _save(ihmt, store, PG17)
    answer = _search(ihmt, store, "staging PostgreSQL")
    assert bogus not in _ids(answer)
    assert _ids(answer)[0] == newer
    health = _doctor(ihmt, store)
    assert not health["store"]["ok"] and rel in health["store"]["error"]
    assert planted.exists()  # reported, never deleted


def test_front_matter_dated_year_9999_does_not_date_a_memory_there(
    ihmt: Ihmt, home: Path, tmp_path: Path
) -> None:
    store = home / "ihmt_memory"
    assert ihmt("init", "--path", str(store)).code == 0
    note = tmp_path / "note.md"
    note.write_text("---\ndate: 9999-12-31\n---\n\nThe Quibbler cluster runs on three hosts.\n")
    run = ihmt("ingest", str(note), "--path", str(store))
    assert run.code in (0, 1), run.err
    answer = _search(ihmt, store, "Quibbler cluster hosts")
    assert all(not r["timestamp"].startswith("9999") for r in answer["results"])


# ---------------------------------------------------------------- bytes that are not UTF-8
def test_a_leaf_with_a_latin1_byte_is_read_and_kept(ihmt: Ihmt, home: Path) -> None:
    store = home / "ihmt_memory"
    assert ihmt("init", "--path", str(store)).code == 0
    leaf_id = _save(ihmt, store, PG15, "--date", "2025-01-10")
    path = _leaf_file(store, leaf_id)
    with open(path, "ab") as handle:
        handle.write(b" caf\xe9")
    first = ihmt("search", "staging PostgreSQL", "--path", str(store), "--json")
    assert first.code == 0, first.err
    assert _ids(first.json()) == [leaf_id]
    assert "UTF-8" in first.err and len(first.err_lines) <= 2
    again = ihmt("search", "staging PostgreSQL", "--path", str(store), "--json")
    assert again.code == 0 and "UTF-8" not in again.err  # warned once
    assert path.read_bytes().endswith(b" caf\xe9")  # the file keeps its bytes
    report = _rebuild(ihmt, store)
    assert report["leaves"] == 1 and report["problems"] == []
    assert _ids(_search(ihmt, store, "staging PostgreSQL")) == [leaf_id]
    assert _doctor(ihmt, store)["store"]["ok"]


# ---------------------------------------------------------------- symbolic links
@pytest.mark.parametrize("target", ["outside", "another leaf"])
def test_a_leaf_replaced_by_a_symlink_is_dropped_from_answers_with_one_warning(
    ihmt: Ihmt, home: Path, tmp_path: Path, target: str
) -> None:
    store = home / "ihmt_memory"
    assert ihmt("init", "--path", str(store)).code == 0
    linked = _save(ihmt, store, PG15, "--date", "2025-01-10")
    other = _save(ihmt, store, "The staging host keeps its PostgreSQL backups in S3.")
    path = _leaf_file(store, linked)
    outside = tmp_path / "outside.txt"
    outside.write_text("staging PostgreSQL secrets of someone else")
    path.unlink()
    path.symlink_to(outside if target == "outside" else _leaf_file(store, other))
    run = ihmt("search", "staging PostgreSQL", "--path", str(store), "--json")
    assert run.code == 0, run.err
    assert linked not in _ids(run.json()) and other in _ids(run.json())
    assert linked in run.err and len(run.err_lines) == 1
    assert "someone else" not in run.out
    rel = path.relative_to(store).as_posix()
    health = _doctor(ihmt, store)
    assert not health["store"]["ok"] and rel in health["store"]["error"]
    assert "All good" not in ihmt("doctor", "--no-connect").out
    report = _rebuild(ihmt, store)
    assert list(_problems(report)) == [rel]
    assert path.is_symlink()  # reported, never deleted


# ---------------------------------------------------------------- doctor tells the truth
@pytest.mark.parametrize("damage", ["latin1 header", "symlink", "foreign id", "not a leaf"])
def test_doctor_names_the_files_rebuild_lists_as_problems(
    ihmt: Ihmt, home: Path, tmp_path: Path, damage: str
) -> None:
    store = home / "ihmt_memory"
    assert ihmt("init", "--path", str(store)).code == 0
    leaf_id = _save(ihmt, store, PG15, "--date", "2025-01-10")
    other = _save(ihmt, store, "Deploys go out on Tuesdays from the staging host.")
    path = _leaf_file(store, leaf_id)
    data = path.read_bytes()
    if damage == "latin1 header":
        path.write_bytes(data.replace(b'"source"', b'"sour\xe9e"', 1))
    elif damage == "symlink":
        path.unlink()
        path.symlink_to(tmp_path / "nowhere.txt")
    elif damage == "foreign id":
        path.write_bytes(data.replace(leaf_id.encode(), other.encode(), 1))
    else:
        path.write_bytes(b"just some words")
    health = _doctor(ihmt, store)
    rel = path.relative_to(store).as_posix()
    assert not health["store"]["ok"], health
    assert rel in health["store"]["error"]
    assert "next search re-indexes" not in health["store"]["error"]
    report = _rebuild(ihmt, store)
    assert rel in _problems(report)
    again = _doctor(ihmt, store)
    assert rel in again["store"]["error"]  # still there: rebuild cannot fix it
    assert ihmt("search", "staging host", "--path", str(store)).code == 0


# ---------------------------------------------------------------- a leaf far too large
def test_a_leaf_over_the_size_cap_is_a_problem_and_never_read_whole(ihmt: Ihmt, home: Path) -> None:
    store = home / "ihmt_memory"
    assert ihmt("init", "--path", str(store)).code == 0
    leaf_id = _save(ihmt, store, PG15, "--date", "2025-01-10")
    path = _leaf_file(store, leaf_id)
    with open(path, "ab") as handle:  # sparse: the size without the disk
        handle.truncate(MAX_LEAF_BYTES + 1)
    run = ihmt("search", "staging PostgreSQL", "--path", str(store), "--json")
    assert run.code == 0, run.err
    assert run.json()["bytes_read"] < MAX_LEAF_BYTES
    rel = path.relative_to(store).as_posix()
    report = _rebuild(ihmt, store)
    problems = _problems(report)
    assert "too large" in problems[rel]
    health = _doctor(ihmt, store)
    assert rel in health["store"]["error"]
    assert os.path.getsize(path) == MAX_LEAF_BYTES + 1  # kept as it is


# ---------------------------------------------------------------- an explicit restore wins
def test_an_explicit_restore_wins_over_an_inferred_correction(ihmt: Ihmt, home: Path) -> None:
    store = home / "ihmt_memory"
    assert ihmt("init", "--path", str(store)).code == 0
    old = _save(ihmt, store, PG15, "--date", "2025-01-10")
    new = _save(ihmt, store, PG17, "--replaces", "staging PostgreSQL 15")
    restored = ihmt("restore", old, "--path", str(store))
    assert restored.code == 0 and "RESTORED" in restored.out
    for query in ("staging PostgreSQL", "staging PostgreSQL 15", "PostgreSQL port"):
        answer = _search(ihmt, store, query)
        shown = {r["id"]: r for r in answer["results"]}
        assert old in shown, (query, answer)
        assert not shown[old]["outdated"] and shown[old]["outdated_by"] is None
        assert not any(old in notice for notice in answer["notices"]), answer["notices"]
    assert new in _ids(_search(ihmt, store, "staging PostgreSQL"))
