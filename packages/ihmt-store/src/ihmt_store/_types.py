"""The closed sets of values in the store's records and parameters, as types.

The values are the strings written to disk and to the catalog; a type only says which
ones exist.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["CodeChunkMode", "ItemKind", "Status", "SummarizerBackend"]

ItemKind = Literal["leaf", "branch"]
"""What a catalog item is: a leaf (a memory) or a branch (a summary of a layer below)."""

Status = Literal["active", "outdated"]
"""A catalog item's status: ``outdated`` once a later memory corrected it."""

SummarizerBackend = Literal["heuristic", "anthropic"]
"""The summarizer a store's config names (``summarizer_backend``)."""

CodeChunkMode = Literal["pack", "symbol"]
"""How code is cut into leaves (``code_chunk_mode``): small symbols packed, or one each."""
