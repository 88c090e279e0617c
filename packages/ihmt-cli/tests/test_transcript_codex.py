"""Reading the user's turns from a rollout file the real Codex 0.171.0 wrote.

``fixtures/codex-0.171.0-rollout.jsonl`` is the rollout of a two-turn ``codex exec`` run
(tests-integration/test_agents_codex_stop.py: a stub model, the ihmt hooks installed; the
second turn through ``codex exec resume --last``), shrunk: long texts cut to their first
160 characters, the tool lists and the per-turn world state left out, paths made neutral.
It keeps what the reader must tell apart: developer instructions, the AGENTS.md and
environment block Codex sends as a ``user`` message, a hook's context (a developer
message), the user's text both as a ``response_item`` and as an ``item_completed`` event,
and the assistant's answers.
"""

from __future__ import annotations

from pathlib import Path

from ihmt_cli._transcript import read_new

ROLLOUT = Path(__file__).parent / "fixtures" / "codex-0.171.0-rollout.jsonl"
FIRST = "thanks. remember that the staging database runs on port 6543"
SECOND = "remember that the staging database runs on port 6543"


def test_a_real_rollout_gives_what_the_user_typed_once_per_turn() -> None:
    turns, offset = read_new(ROLLOUT, 0)

    assert [t.text for t in turns] == [FIRST, SECOND]
    assert [t.timestamp for t in turns] == ["2026-12-07T18:24:33.881Z", "2026-12-07T18:25:06.689Z"]
    assert offset == ROLLOUT.stat().st_size


def test_a_resumed_rollout_is_read_from_where_the_last_stop_ended() -> None:
    data = ROLLOUT.read_bytes()
    # where the first turn's stop read up to: the end of its task_complete line
    first_end = data.index(b"\n", data.index(b'"type":"task_complete"')) + 1

    turns, offset = read_new(ROLLOUT, first_end)

    assert [t.text for t in turns] == [SECOND]
    assert offset == len(data)
    assert read_new(ROLLOUT, offset) == ([], offset)
