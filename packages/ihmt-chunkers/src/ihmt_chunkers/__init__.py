"""ihmt-chunkers: what a document is, and how to split it without cutting a logical block.

A pure library: text in, records out; it never touches the disk or the store.

Entry points:

- :func:`chunk` — detect a document's type and domain, then split it: the one call an
  ingest pipeline needs.
- :func:`detect` and :func:`split` — the two halves, for callers that know the type
  (``split(source, doc_type=DocType.CODE, filename="a.py", mode="symbol")``).
- :func:`decode` — bytes to text by one documented rule; binary data raises
  :class:`BinaryContentError`.

The invariant of every splitter: ``"".join(b.text for b in blocks) == text``. A block
is never cut inside a function, a dated entry or a paragraph that fits; one over
``max_tokens`` that cannot be cut is kept whole and flagged ``oversized``.

Grammars load on first use, so importing this package is cheap.
"""

from ihmt_chunkers._chunk import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TARGET_TOKENS,
    Mode,
    chunk,
    detect,
    split,
)
from ihmt_chunkers._dates import parse_date
from ihmt_chunkers._decode import decode
from ihmt_chunkers._languages import supported_languages
from ihmt_chunkers._records import Block, BlockKind, Chunked, Decoded, Detection, DocType
from ihmt_chunkers.errors import BinaryContentError, ChunkError

__version__ = "0.1.0"

__all__ = [
    # defaults
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TARGET_TOKENS",
    # errors
    "BinaryContentError",
    # records
    "Block",
    "BlockKind",
    "ChunkError",
    "Chunked",
    "Decoded",
    "Detection",
    "DocType",
    "Mode",
    # functions
    "chunk",
    "decode",
    "detect",
    "parse_date",
    "split",
    "supported_languages",
]
