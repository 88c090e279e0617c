"""The records the chunkers hand out: blocks, detections, decoded text."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from ihmt_store import estimate_tokens

__all__ = ["Block", "BlockKind", "Chunked", "Decoded", "Detection", "DocType"]


class DocType(str, Enum):
    """What kind of document a text is; it decides which splitter runs."""

    CODE = "code"
    """Source code: split with tree-sitter into imports, functions, classes."""
    NARRATIVE = "narrative"
    """Novels, stories, essays: paragraph-atomic, chapter headings are hard boundaries."""
    TEMPORAL = "temporal"
    """Journals, chat logs, clinical records: one dated entry is atomic."""
    PROCESS = "process"
    """Recipes, runbooks, protocols: steps stay attached to their heading."""
    PERSONAL = "personal"
    """Notes about the user: preferences, people, personal facts."""
    GENERIC = "generic"
    """Anything else, agent notes included: paragraphs packed to the target size."""


BlockKind = Literal[
    # code
    "imports",
    "code",
    "function",
    "method",
    "class",
    "interface",
    "struct",
    "enum",
    "trait",
    "impl",
    "module",
    "type",
    "macro",
    "group",
    # text
    "paragraph",
    "passage",
    "entry",
    "section",
]
"""What a :class:`Block` holds. Code: ``imports`` (and file preamble), ``code`` (loose
statements), a symbol's kind, or ``group`` (several packed symbols). Text: a
``paragraph``, a ``passage`` (paragraphs packed together), a dated ``entry``, or a
``section`` (a heading with its steps)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """One unit a splitter never cuts: a function, a dated entry, a paragraph."""

    text: str
    """Exactly the source text; joining a document's blocks gives the document back."""
    start_line: int
    """First line of the block, 1-based."""
    end_line: int
    """Last line of the block, 1-based, inclusive. When a block ends in the middle of a
    line (a paragraph split at a sentence), the next block starts on that same line."""
    kind: BlockKind
    """What the block holds (:data:`BlockKind`)."""
    name: str = ""
    """The symbol's own name (``add``); empty when the block is not one symbol."""
    qualified_name: str = ""
    """The symbol's dotted path through its containers (``Inventory.add``)."""
    tags: tuple[str, ...] = ()
    """``type:code``, ``lang:python``, ``class:Inventory``, ``method:Inventory.add``,
    ``function:load``, ``type:text``…"""
    context: str = ""
    """Text that frames the block but is not part of it: the header lines of the
    classes a method sits in, or the heading of the chapter or section."""
    timestamp: str | None = None
    """ISO 8601 date or date-time found in the block's text (temporal documents)."""
    oversized: bool = False
    """True when the block alone exceeds max_tokens and was kept whole anyway."""
    oversize_reason: str = ""
    """Why an oversized block could not be split further; empty otherwise."""

    @property
    def tokens(self) -> int:
        """Estimated tokens of :attr:`text` (about four characters a token)."""
        return estimate_tokens(self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Detection:
    """What a document is: its type, its domain and how sure the detector is."""

    doc_type: DocType
    """The document type; it chooses the splitter."""
    domain: str
    """Dotted subject area: ``software.python``, ``medicine.clinical``, ``personal``."""
    confidence: float
    """0.0–1.0; 0.95 and above when an extension or an override decided."""
    language: str | None = None
    """The programming language for code (``python``, ``tsx``…), else None."""
    tags: tuple[str, ...] = ()
    """What kind of note it is and what it names: ``kind:decision``,
    ``kind:environment``, ``kind:preference``, ``kind:person``, ``kind:project``,
    ``project:falcon``, ``lang:go``…"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunked:
    """A detected and split document: what :func:`ihmt_chunkers.chunk` returns."""

    detection: Detection
    """The document's type and domain (after any override)."""
    blocks: tuple[Block, ...]
    """The blocks; ``"".join(b.text for b in blocks)`` is the input text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Decoded:
    """Text decoded from bytes by the documented rule of :func:`ihmt_chunkers.decode`."""

    text: str
    """The decoded text, without a byte order mark."""
    encoding: str
    """``utf-8``, ``utf-8-sig``, ``utf-16-le``, ``utf-16-be``, ``utf-32-le`` or ``utf-32-be``;
    for text in another encoding, the Python codec it was detected as (``cp1252``…)."""
    lossy: bool = False
    """True when invalid UTF-8 bytes were replaced by U+FFFD."""
    notice: str = ""
    """What was done when the bytes were not UTF-8, in plain words for the user (the
    encoding detected, or the bytes replaced); empty for UTF-8 text."""
