"""The public surface: exports, chunk() overrides, lazy grammars, cheap import."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap

import pytest

import ihmt_chunkers
from ihmt_chunkers import Block, Chunked, Detection, DocType, chunk, supported_languages


def test_the_public_surface_is_exactly_all() -> None:
    public = {name for name in dir(ihmt_chunkers) if not name.startswith("_")}
    assert set(ihmt_chunkers.__all__) <= public
    assert {"chunk", "detect", "split", "decode", "parse_date", "Block", "DocType"} <= set(
        ihmt_chunkers.__all__
    )


def test_records_are_frozen() -> None:
    block = Block(text="x\n", start_line=1, end_line=1, kind="code")
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.text = "y"  # type: ignore[misc]
    assert block.tokens == 1


def test_supported_languages_lists_the_thirteen_plus_tsx() -> None:
    assert supported_languages() == (
        "c", "cpp", "csharp", "go", "java", "javascript", "kotlin", "php", "python", "ruby",
        "rust", "swift", "tsx", "typescript",
    )  # fmt: skip


def test_chunk_detects_and_splits_code_by_filename() -> None:
    result = chunk("import os\n\n\ndef f():\n    return os.sep\n", "pkg/mod.py", mode="symbol")
    assert isinstance(result, Chunked)
    assert result.detection.doc_type is DocType.CODE
    assert result.detection.domain == "software.python"
    assert [b.kind for b in result.blocks] == ["imports", "function"]


def test_chunk_overrides_type_and_domain() -> None:
    result = chunk("2024-01-02: a\n2024-01-03: b\n", doc_type="generic", domain="personal")
    assert result.detection == Detection(
        doc_type=DocType.GENERIC, domain="personal", confidence=1.0, tags=()
    )
    assert len(result.blocks) == 1


def test_chunk_language_override_implies_code() -> None:
    result = chunk("fn main() {}\n", language="rs")
    assert result.detection.doc_type is DocType.CODE
    assert result.detection.language == "rust"
    assert result.detection.domain == "software.rust"


def test_chunk_of_a_temporal_document_stamps_blocks() -> None:
    text = "2024-01-02: ran 5 km\n2024-01-03: rest day\n2024-01-04: ran 8 km\n"
    result = chunk(text)
    assert result.detection.doc_type is DocType.TEMPORAL
    assert [b.timestamp for b in result.blocks] == ["2024-01-02", "2024-01-03", "2024-01-04"]


def _run(code: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return completed.stdout.strip()


def test_importing_the_package_loads_no_grammar() -> None:
    out = _run(
        """
        import sys
        import ihmt_chunkers
        print(sorted(m for m in sys.modules if m.startswith("tree_sitter")))
        ihmt_chunkers.split("def f():\\n    pass\\n", doc_type="code", language="python")
        print(sorted(m for m in sys.modules if m.startswith("tree_sitter")))
        """
    )
    before, after = out.splitlines()
    assert before == "[]"
    assert "tree_sitter_python" in after and "tree_sitter_java" not in after


def test_every_grammar_loads() -> None:
    from ihmt_chunkers._languages import load_grammar

    assert all(load_grammar(name) is not None for name in supported_languages())
