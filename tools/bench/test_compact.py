"""The long-conversation bench is honest: deterministic, each question answered by one
sentence its speaker said in one session, the export holding every turn.

Run: ``.venv/bin/python -m pytest -q tools/bench/test_compact.py -p no:cacheprovider``
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compact import GROUPS, export_text, figures, generate

from ihmt_store import estimate_tokens


def test_the_conversations_are_deterministic_and_long() -> None:
    sessions, questions = generate(0)
    again, asked = generate(0)
    assert [s.text() for s in sessions] == [s.text() for s in again]
    assert questions == asked
    assert len(questions) >= 80
    tokens = sorted(estimate_tokens(s.text()) for s in sessions)
    assert tokens[len(tokens) // 2] > 600  # longer than the compact budget's share


def test_each_question_is_answered_by_one_sentence_its_speaker_said() -> None:
    sessions, questions = generate(0)
    for q in questions:
        session = sessions[q.session]
        speakers = [who for who, _, said in session.turns if q.evidence in said]
        assert len(speakers) == 1 and speakers[0] in q.text
        others = [s for i, s in enumerate(sessions) if i != q.session]
        assert not any(q.evidence in s.text() for s in others)


def test_the_export_holds_every_turn_with_its_time_and_speaker() -> None:
    sessions, _ = generate(0)
    exported = "".join(export_text(sessions, g) for g in range(len(GROUPS)))
    for session in sessions:
        for who, at, said in session.turns:
            assert f"[{at:%Y-%m-%d %H:%M}] {who}: {said}\n" in exported


def test_the_figures_count_found_answers_apart() -> None:
    rows = [
        {"status": "found", "tokens": 300, "kept": True, "r1": True},
        {"status": "not_found", "tokens": 100, "kept": False, "r1": False},
    ]
    got = figures(rows)
    assert got["evidence"] == 0.5 and got["found_evidence"] == 1.0
    assert got["tokens_median"] == 200 and got["found_tokens_median"] == 300
    assert got["abstained"] == 0.5
