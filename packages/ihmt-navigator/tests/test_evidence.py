"""A long memory answers with its evidence: the sentences holding the question's words
or the value it asks for, with their date and speaker, within a share of the budget."""

from __future__ import annotations

import re
from collections.abc import Callable

from ihmt_navigator import Navigator
from ihmt_navigator._evidence import GAP, evidence_passage
from ihmt_navigator._hits import EVIDENCE_SHARE
from ihmt_store import Store, estimate_tokens
from ihmt_store.testing import make_leaf

CHAT = (
    "Honestly, work has been relentless this week. The weather has been all over the "
    "place lately. We should catch up properly over coffee soon. I barely slept last "
    "night because the neighbours had a party."
)


def _session(speakers: tuple[str, str], said: dict[int, tuple[str, str]], turns: int = 30) -> str:
    """A chat session: a heading with its date, one line of chit-chat per turn, and at
    the turns in ``said`` a speaker saying a fact in the middle of chit-chat."""
    lines = [f"Chat between {speakers[0]} and {speakers[1]} on 12 March 2023"]
    for turn in range(turns):
        who, fact = said.get(turn, (speakers[turn % 2], ""))
        middle = f" {fact}" if fact else ""
        lines.append(f"{who}: Haha, that is so true.{middle} {CHAT}")
    return "\n".join(lines)


def test_a_long_chat_answers_with_the_sentence_that_holds_the_evidence(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    fact = "We finally adopted a whippet puppy last weekend and named him Pretzel."
    text = _session(("Odalys", "Teodor"), {23: ("Teodor", fact)})
    leaf = store.put_leaf(make_leaf(text, timestamp="2023-03-12T18:30:00Z", position=1))
    assert estimate_tokens(text) > store.config.compact_tokens
    result = Navigator(store).search("What did Teodor name the whippet?")
    assert result.status == "found"
    best = result.best
    assert best is not None and best.passage is not None and best.passage.picked
    # The sentence with its speaker, the heading with the date, the id to read the rest.
    assert f"Teodor: … {fact}" in result.compact
    assert "Chat between Odalys and Teodor on 12 March 2023" in result.compact
    assert leaf.leaf_id in result.compact
    assert f"what answers from lines 1-{best.passage.end_line} of 31" in result.compact
    assert best.passage.start_line == 1 and best.passage.end_line == 25
    assert estimate_tokens(best.content) <= store.config.compact_tokens * EVIDENCE_SHARE
    assert result.tokens < estimate_tokens(text)


def test_another_long_match_is_listed_by_its_evidence_not_its_head(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    first = _session(("Odalys", "Teodor"), {5: ("Odalys", "I started bassoon lessons.")})
    second = _session(
        ("Odalys", "Teodor"), {17: ("Teodor", "My bassoon teacher moved the lessons to Friday.")}
    )
    store.put_leaf(make_leaf(first, timestamp="2023-03-12T18:30:00Z", position=1))
    store.put_leaf(make_leaf(second, timestamp="2023-04-02T18:30:00Z", position=2))
    result = Navigator(store).search("When are the bassoon lessons?", limit=2)
    assert result.status == "found" and len(result.results) == 2
    listed = result.compact.split("Other matches:")[1]
    assert "bassoon" in listed and "Chat between" not in listed


def test_the_value_asked_for_picks_its_sentence() -> None:
    text = "\n".join(
        [
            "Notes from the office move",
            *(
                f"[2024-05-0{d} 10:00] Ana: The printer room is on the second floor now."
                for d in (1, 2)
            ),
            "[2024-05-03 11:20] Ben: Boxes are done. The printer answers on 10.0.4.17 again.",
            "[2024-05-04 09:00] Ana: The printer needs new toner next week.",
        ]
    )
    ip = re.compile(r"\b\d{1,3}(\.\d{1,3}){3}\b")
    passage = evidence_passage(text, {"print": 1.0, "ip": 3.0}, (ip,), budget_tokens=30)
    assert passage is not None and passage.picked
    assert "[2024-05-03 11:20] Ben: … The printer answers on 10.0.4.17 again." in passage.text
    assert passage.lead == "[2024-05-03 11:20] Ben: … The printer answers on 10.0.4.17 again."
    assert estimate_tokens(passage.text) <= 30
    assert GAP in passage.text


def test_no_sentence_holding_the_question_gives_no_evidence() -> None:
    assert (
        evidence_passage("Lunch is at noon.\nThe bus leaves at six.", {"tax": 2.0}, (), 50) is None
    )


def test_long_code_is_shown_as_a_window_of_its_lines(make_store: Callable[..., Store]) -> None:
    store = make_store()
    body = [f"    total_{i} = compute_part({i})  # routine step" for i in range(120)]
    body[80] = "    checksum = crc32(payload)  # the plover checksum"
    text = "def build_report(payload):\n" + "\n".join(body)
    store.put_leaf(make_leaf(text, data_type="CODE", position=1))
    result = Navigator(store).search("plover checksum")
    best = result.best
    assert best is not None and best.passage is not None and not best.passage.picked
    assert "crc32(payload)" in best.content and GAP not in best.content
    assert best.passage.start_line <= 82 <= best.passage.end_line
