"""Narrative, temporal, process and generic splitting."""

from __future__ import annotations

import pytest

from ihmt_chunkers import Block, DocType, split


def _check(blocks: tuple[Block, ...], text: str) -> None:
    assert "".join(b.text for b in blocks) == text
    assert all(b.text for b in blocks)
    line = 1
    for block in blocks:
        assert block.start_line == line
        line = block.end_line + (1 if block.text.endswith("\n") else 0)


@pytest.mark.parametrize("doc_type", list(DocType))
def test_empty_text_gives_no_blocks(doc_type: DocType) -> None:
    assert split("", doc_type=doc_type) == ()


def test_journal_with_one_dated_line_per_entry_gives_one_block_per_line() -> None:
    text = (
        "2024-01-02: Went running by the river.\n"
        "2024-01-03: Rain all day.\n"
        "2024-01-04: Dinner with Ana.\n"
    )
    blocks = split(text, doc_type=DocType.TEMPORAL)
    assert [(b.start_line, b.end_line, b.timestamp) for b in blocks] == [
        (1, 1, "2024-01-02"),
        (2, 2, "2024-01-03"),
        (3, 3, "2024-01-04"),
    ]
    assert all(b.kind == "entry" for b in blocks)


def test_a_dated_entry_is_atomic_and_a_new_date_is_a_hard_boundary() -> None:
    text = (
        "Diario de Lucía\n\n"
        "3 de marzo de 2024\n"
        "Hoy empecé el curso.\n\nFue largo pero bien.\n\n"
        "Session 4 — 8 May 2023\n"
        "Worked on the parser.\n"
        "[2024-03-09 10:00] Ana: hola\n"
        "[2024-03-09 10:05] Luis: buenas\n"
    )
    blocks = split(text, doc_type="temporal", target_tokens=400)
    _check(blocks, text)
    assert [b.timestamp for b in blocks] == [None, "2024-03-03", "2023-05-08", "2024-03-09T10:00"]
    assert blocks[1].text == "3 de marzo de 2024\nHoy empecé el curso.\n\nFue largo pero bien.\n\n"
    assert blocks[3].start_line == 10 and blocks[3].end_line == 11


def test_an_oversized_entry_is_kept_whole_and_flagged() -> None:
    text = "2024-03-03\n" + "word " * 2000 + "\n2024-03-04\nshort\n"
    blocks = split(text, doc_type="temporal", target_tokens=100, max_tokens=200)
    assert len(blocks) == 2
    assert blocks[0].oversized and "dated entry" in blocks[0].oversize_reason
    assert blocks[1].timestamp == "2024-03-04"


def test_narrative_keeps_paragraphs_whole_and_breaks_at_scenes_and_chapters() -> None:
    text = (
        'Chapter 1\n\nThe night was cold. She walked home.\n\n"Wait," he said.\n\n'
        "***\n\nMorning came.\n\nCapítulo 2\nEl día siguiente se fue.\n"
    )
    blocks = split(text, doc_type="narrative", target_tokens=400)
    _check(blocks, text)
    assert [b.text for b in blocks] == [
        'Chapter 1\n\nThe night was cold. She walked home.\n\n"Wait," he said.\n\n***\n\n',
        "Morning came.\n\n",
        "Capítulo 2\nEl día siguiente se fue.\n",
    ]
    assert blocks[1].context == "Chapter 1"


def test_only_a_paragraph_over_max_tokens_is_split_at_sentences() -> None:
    sentence = "The river ran fast under the old stone bridge near the mill. "
    text = "Short opening paragraph.\n\n" + sentence * 60 + "\n\nClosing line.\n"
    blocks = split(text, doc_type="narrative", mode="symbol", target_tokens=100, max_tokens=200)
    _check(blocks, text)
    middle = [b for b in blocks if "river" in b.text]
    assert len(middle) > 1
    assert all(b.text.endswith((". ", ". \n\n")) for b in middle)
    assert all(b.tokens <= 100 for b in middle)
    assert not any(b.oversized for b in blocks)
    assert blocks[0].text == "Short opening paragraph.\n\n"


def test_process_steps_and_ingredients_stay_with_their_heading() -> None:
    text = (
        "# Lentejas\n\nIngredientes:\n- 300 g de lentejas\n- 1 cebolla\n\n"
        "Pasos:\n1. Remoja las lentejas.\n\n2. Sofríe la cebolla.\n3. Cuece 40 minutos.\n"
    )
    blocks = split(text, doc_type="process", mode="symbol")
    _check(blocks, text)
    assert [b.text.splitlines()[0] for b in blocks] == ["# Lentejas", "Ingredientes:", "Pasos:"]
    assert blocks[2].text.endswith("3. Cuece 40 minutos.\n")
    packed = split(text, doc_type="process")
    assert len(packed) == 1


def test_an_oversized_process_section_splits_at_paragraphs_with_its_heading_as_context() -> None:
    steps = "\n\n".join(
        f"{i}. Step number {i}: " + "check the service carefully. " * 20 for i in range(1, 8)
    )
    text = "Runbook:\n" + steps + "\n"
    blocks = split(text, doc_type="process", target_tokens=150, max_tokens=300)
    _check(blocks, text)
    assert len(blocks) > 1
    assert blocks[0].text.startswith("Runbook:\n1. Step")
    assert all(b.context == "Runbook:" for b in blocks[1:])


def test_generic_paragraphs_pack_to_the_target() -> None:
    paragraph = "A note about the build. " * 8
    text = "\n\n".join([paragraph] * 10) + "\n"
    blocks = split(text, doc_type="generic", target_tokens=150, max_tokens=400)
    _check(blocks, text)
    assert 1 < len(blocks) < 10
    assert all(b.tokens <= 150 for b in blocks)
    assert all(b.kind in ("paragraph", "passage") for b in blocks)


def test_a_fenced_code_block_with_blank_lines_is_one_paragraph() -> None:
    text = "Intro.\n\n```python\ndef f():\n\n    return 1\n```\n\nAfter.\n"
    blocks = split(text, doc_type="generic", mode="symbol")
    _check(blocks, text)
    assert blocks[1].text == "```python\ndef f():\n\n    return 1\n```\n\n"


def test_a_10_mb_single_line_is_an_oversized_block_not_a_hang() -> None:
    text = "x" * 10_000_000
    for doc_type in DocType:
        blocks = split(text, doc_type=doc_type)
        assert len(blocks) == 1
        assert blocks[0].oversized and blocks[0].oversize_reason


def test_crlf_text_reconstructs_in_every_splitter() -> None:
    text = "Title\r\n\r\n2024-01-02: one\r\n2024-01-03: two\r\n\r\nSteps:\r\n1. a\r\n2. b"
    for doc_type in DocType:
        _check(split(text, doc_type=doc_type, target_tokens=5, max_tokens=10), text)


def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="mode"):
        split("x", mode="lines")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 1"):
        split("x", target_tokens=0)
    with pytest.raises(ValueError, match="cannot be above"):
        split("x", target_tokens=500, max_tokens=100)
    with pytest.raises(ValueError, match="unknown doc_type"):
        split("x", doc_type="poem")


def test_journal_entries_of_one_day_are_blocks_of_their_own() -> None:
    text = (
        "2024-03-09: Decided to move the CI to Buildkite.\n"
        "2024-03-09: Staging runs PostgreSQL 15 on stg-db-01.\n"
        "2024-03-10: Alice now leads the mobile team.\n"
    )
    blocks = split(text, doc_type="temporal", target_tokens=400)
    _check(blocks, text)
    assert [b.text.strip()[:16] for b in blocks] == [
        "2024-03-09: Deci",
        "2024-03-09: Stag",
        "2024-03-10: Alic",
    ]
    assert [b.timestamp for b in blocks] == ["2024-03-09", "2024-03-09", "2024-03-10"]
