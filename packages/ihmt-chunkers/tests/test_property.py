"""Property: random edits of the fixtures still reconstruct byte for byte."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ihmt_chunkers import split

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "code").iterdir())
TEXTS = {path.name: path.read_bytes().decode("utf-8") for path in FIXTURES}

_EDIT = st.tuples(
    st.sampled_from(["delete", "duplicate", "drop_open", "drop_close", "swap", "crlf"]),
    st.integers(min_value=0, max_value=10_000),
)


def _apply(text: str, edits: list[tuple[str, int]]) -> str:
    lines = text.splitlines(keepends=True)
    for action, seed in edits:
        if not lines:
            break
        index = seed % len(lines)
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif action == "drop_open":
            lines[index] = lines[index].replace("{", "", 1).replace("(", "", 1)
        elif action == "drop_close":
            lines[index] = lines[index].replace("}", "", 1).replace("end", "", 1)
        elif action == "swap":
            other = (seed // 7) % len(lines)
            lines[index], lines[other] = lines[other], lines[index]
        else:
            lines[index] = lines[index].replace("\n", "\r\n")
    return "".join(lines)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    name=st.sampled_from(sorted(TEXTS)),
    edits=st.lists(_EDIT, min_size=1, max_size=12),
    mode=st.sampled_from(["pack", "symbol"]),
    target=st.sampled_from([1, 50, 200, 400]),
)
def test_random_edits_reconstruct_and_leave_no_empty_block(
    name: str, edits: list[tuple[str, int]], mode: str, target: int
) -> None:
    text = _apply(TEXTS[name], edits)
    blocks = split(
        text,
        doc_type="code",
        filename=name,
        mode=mode,  # type: ignore[arg-type]
        target_tokens=target,
        max_tokens=max(target, 300),
    )
    assert "".join(b.text for b in blocks) == text
    assert all(b.text for b in blocks)
    line = 1
    for block in blocks:
        assert block.start_line == line
        assert block.end_line >= block.start_line
        line = block.end_line + (1 if block.text.endswith("\n") else 0)
