"""The reviewed surface of ihmt-chunkers.

Every name in ``__all__`` is a promise to the packages that compose this one and to
anyone who embeds it. Adding or removing a name is an API change: make it on purpose,
update the snapshot below in the same change, and say why in the CHANGELOG, so that a
reviewer sees it (the rule the MCP python-sdk keeps in its VERSIONING document).
"""

from __future__ import annotations

from typing import get_args

import ihmt_chunkers

SURFACE = [
    "BinaryContentError",
    "Block",
    "BlockKind",
    "ChunkError",
    "Chunked",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TARGET_TOKENS",
    "Decoded",
    "Detection",
    "DocType",
    "Mode",
    "chunk",
    "decode",
    "detect",
    "parse_date",
    "split",
    "supported_languages",
]


def test_all_is_the_reviewed_surface() -> None:
    assert sorted(ihmt_chunkers.__all__) == SURFACE


def test_every_exported_name_exists() -> None:
    missing = [name for name in ihmt_chunkers.__all__ if not hasattr(ihmt_chunkers, name)]
    assert missing == []


def test_the_closed_sets_are_the_documented_values() -> None:
    assert get_args(ihmt_chunkers.Mode) == ("pack", "symbol")
    assert set(get_args(ihmt_chunkers.BlockKind)) == {
        "imports", "code", "function", "method", "class", "interface", "struct", "enum",
        "trait", "impl", "module", "type", "macro", "group",
        "paragraph", "passage", "entry", "section",
    }  # fmt: skip


def test_every_block_kind_a_splitter_emits_is_in_the_closed_set() -> None:
    samples = {
        "a.py": "import os\n\n\nclass A:\n    def m(self):\n        return 1\n\n\ndef f(): ...\n",
        "a.go": "package a\n\ntype S struct{}\n\ntype I interface{}\n\nfunc (s S) M() {}\n",
        "a.rs": "use x;\n\nstruct S;\n\nimpl S {}\n\ntrait T {}\n\nenum E { A }\n",
        "notes.md": "# Steps\n\n1. one\n2. two\n\nA paragraph.\n\nAnother one.\n",
        "log.txt": "2024-01-02: we met.\n\n2024-01-03: we shipped.\n",
    }
    kinds = set(get_args(ihmt_chunkers.BlockKind))
    for name, text in samples.items():
        for mode in get_args(ihmt_chunkers.Mode):
            blocks = ihmt_chunkers.chunk(text, name, mode=mode).blocks
            assert blocks, name
            assert {block.kind for block in blocks} <= kinds, name
