"""The chunkers' branch of the IHMT exception tree.

Everything here descends from :class:`ihmt_store.IhmtError`::

    IhmtError
    └── ChunkError
        └── BinaryContentError      (ValueError)   the input is not text: NUL bytes, or
                                                   mostly undecodable bytes

A splitter never fails on text: code that does not parse, an unknown language or a
10 MB single line all give blocks. Only input that is not text at all raises, so the
caller can decide to skip the file. A wrong argument (an unknown ``mode``, a budget
below one token, an unknown language name) is a plain ``ValueError`` outside the tree.
"""

from __future__ import annotations

from ihmt_store import IhmtError

__all__ = ["BinaryContentError", "ChunkError"]


class ChunkError(IhmtError):
    """Something in the input stops detection or splitting."""


class BinaryContentError(ChunkError, ValueError):
    """The input is binary, not text; ``cause`` says why (``"nul-bytes"`` or ``"undecodable"``)."""

    def __init__(self, message: str, *, cause: str) -> None:
        self.cause = cause
        super().__init__(message)
