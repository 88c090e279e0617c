"""Secrets at the CLI's edge: refused by ``save`` and ``ingest`` whatever their shape,
never echoed by an error message, and a correction whose newer memory is missing said
plainly, as real ``ihmt`` subprocesses."""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_mcp import Memory

Ihmt = Callable[..., Any]

_R = random.Random(27)
_ALNUM = string.ascii_letters + string.digits


def _chars(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


# Made up here, in the issuers' shapes, so no secret-shaped literal sits in the file.
_AZURE_KEY = base64.b64encode(bytes(_R.randrange(256) for _ in range(64))).decode()
_VAULT = "hvs." + _chars(86, _ALNUM + "_-")
_NETRC_PASSWORD = _chars(20)
_GITHUB = "ghp_" + _chars(36)
_DASHES = "-" * 5
_OPENSSH = (
    f"{_DASHES}BEGIN OPENSSH PRIVATE KEY{_DASHES}\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU{_chars(60)}\n"
    f"{_DASHES}END OPENSSH PRIVATE KEY{_DASHES}"
)

PROBE_SECRETS = {
    "azure-storage-key": f"Backups go to globexbackups with storage key {_AZURE_KEY} for now.",
    "vault-token": f"use vault token {_VAULT}",
    "netrc-line": f"machine api.github.com login octocat password {_NETRC_PASSWORD}",
    "passphrase": "passphrase: correct horse battery staple",
}
"""Each with the part that must never be stored or echoed."""
_SECRET_PART = {
    "azure-storage-key": _AZURE_KEY,
    "vault-token": _VAULT,
    "netrc-line": _NETRC_PASSWORD,
    "passphrase": "correct horse battery staple",
}


# ---------------------------------------------------------------------- secrets refused
@pytest.mark.parametrize("name", sorted(PROBE_SECRETS))
def test_save_refuses_the_secret_and_never_echoes_it(
    ihmt: Ihmt, store: Path, leaf_count: Callable[[Path], int], name: str
) -> None:
    before = leaf_count(store)
    run = ihmt("save", PROBE_SECRETS[name], "--path", str(store))
    assert run.code == 1, (run.out, run.err)
    assert "not saved" in run.err and "secret" in run.err
    assert len(run.err_lines) == 1
    assert _SECRET_PART[name] not in run.out + run.err
    assert leaf_count(store) == before


def test_ingest_skips_every_file_holding_one_and_keeps_the_rest(
    ihmt: Ihmt, store: Path, leaf_count: Callable[[Path], int], tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in PROBE_SECRETS.items():
        (folder / f"{name}.md").write_text(f"# Setup\n\nNotes for staging.\n{text}\n", "utf-8")
    (folder / "plain.md").write_text("The Zorblax runbook says: restart the queue first.\n")
    before = leaf_count(store)
    run = ihmt("--json", "ingest", str(folder), "--path", str(store))
    assert run.code == 0, run.err
    report = run.json()
    skipped = {Path(item["path"]).stem: item["reason"] for item in report["skipped"]}
    assert set(skipped) == set(PROBE_SECRETS), skipped
    assert all("holds" in why for why in skipped.values()), skipped
    assert leaf_count(store) > before
    dump = json.dumps(report) + run.err
    assert not any(part in dump for part in _SECRET_PART.values())
    search = ihmt("search", "Zorblax runbook", "--path", str(store))
    assert "restart the queue" in search.out


# ---------------------------------------------------------------------- usage errors
_USAGE_CASES = {
    # the text starts with '-': click reads it as an unknown option
    "unknown-option": (["save", _OPENSSH], ["BEGIN OPENSSH", "b3BlbnNzaC1rZXktdjE"]),
    "unknown-option-with-value": (["save", f"--token={_GITHUB}"], [_GITHUB]),
    "extra-argument": (["save", "the deploy notes", _GITHUB], [_GITHUB]),
    "bad-integer": (["search", "staging", "--top-k", _VAULT], [_VAULT]),
}


@pytest.mark.parametrize("case", sorted(_USAGE_CASES))
def test_a_usage_error_never_echoes_a_secret_given_on_the_command_line(
    ihmt: Ihmt, store: Path, leaf_count: Callable[[Path], int], case: str
) -> None:
    args, hidden = _USAGE_CASES[case]
    before = leaf_count(store)
    run = ihmt(*args, "--path", str(store))
    assert run.code == 2, (run.out, run.err)
    assert len(run.err_lines) == 1, run.err
    for part in hidden:
        assert part not in run.out + run.err, run.err
    assert "--help" in run.err
    if case != "unknown-option-with-value":  # click names that one by its --name alone
        assert "not shown" in run.err
    assert leaf_count(store) == before


def test_a_usage_error_without_a_secret_still_names_the_bad_option(ihmt: Ihmt, store: Path) -> None:
    run = ihmt("save", "--colour", "blue", "--path", str(store))
    assert run.code == 2
    assert "No such option" in run.err and "--colour" in run.err


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    prefix=st.sampled_from(["-", "--", "--x=", ""]),
    secret=st.sampled_from([_GITHUB, _VAULT, "sk_live_" + _chars(40), _OPENSSH]),
    tail=st.text(alphabet=string.ascii_letters + " =-", max_size=12),
)
def test_no_usage_error_echoes_a_secret_whatever_its_place(
    ihmt: Ihmt, tmp_path: Path, prefix: str, secret: str, tail: str
) -> None:
    run = ihmt("tree", "--depth", "x", f"{prefix}{secret}{tail}", "--path", str(tmp_path))
    assert run.code == 2, run.err
    assert secret not in run.err and secret[8:40] not in run.err, run.err


# ---------------------------------------------------------------------- corrections
def _store_with_a_dangling_correction(tmp_path: Path) -> tuple[Path, str, str]:
    """A memory flagged OUTDATED by a note whose correcting memory this store lacks (a
    pull that brought the note before the leaf, or a hand edit)."""
    path = tmp_path / "dangling"
    memory = Memory.init(path, branch_factor=4)
    try:
        old_id = memory.save(
            "The Zorblax staging host runs PostgreSQL 15 on port 5432.",
            date="2025-01-10",
            project="",
        ).ids[0]
    finally:
        memory.close()
    domain = old_id.rsplit("-", 2)[0].removeprefix("L-")
    missing = f"L-{domain}-0000-00000000aa"
    note = {
        "op": "outdated",
        "leaf": old_id,
        "by": missing,
        "date": "2026-01-01T00:00:00Z",
        "at": "2026-12-01T10:00:00.120Z",
        "machine": "m-3f2a9c01b7de",
    }
    folder = path / "notes" / old_id
    folder.mkdir(parents=True)
    (folder / "20261201T100000.120Z-m-3f2a9c01b7de-ab12.json").write_text(json.dumps(note))
    return path, old_id, missing


def test_a_correction_by_a_missing_memory_is_said_without_empty_quotes(
    ihmt: Ihmt, tmp_path: Path
) -> None:
    path, old_id, missing = _store_with_a_dangling_correction(tmp_path)
    assert ihmt("rebuild", "--path", str(path)).code == 0
    search = ihmt("search", "Zorblax staging host", "--path", str(path))
    assert search.code == 0, search.err
    assert "OUTDATED" in search.out and old_id in search.out
    assert 'by ""' not in search.out and '""' not in search.out, search.out
    assert "corrected on 2026-01-01" in search.out and missing in search.out
    as_json = ihmt("search", "Zorblax staging host", "--json", "--path", str(path)).json()
    assert not any('""' in notice for notice in as_json["notices"]), as_json["notices"]
    conflicts = ihmt("conflicts", "--path", str(path))
    assert conflicts.code == 0, conflicts.err
    assert "CORRECTED" in conflicts.out and '""' not in conflicts.out, conflicts.out
    assert missing in conflicts.out
    facts = ihmt("facts", "--path", str(path))
    assert facts.code == 0, facts.err
    assert "Corrections:" in facts.out and '""' not in facts.out, facts.out
