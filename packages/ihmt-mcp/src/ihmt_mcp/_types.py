"""The closed sets of values in ihmt-mcp's records and parameters, as types.

The values are the strings the tools, the CLI's ``--json`` and the files already carry;
a type only says which ones exist.
"""

from __future__ import annotations

from typing import Literal

from ihmt_store import ItemKind  # a line of the tree; defined once, by the store

__all__ = ["ContentType", "DataType", "ItemKind", "ReplaceStatus", "ScratchKind"]

ContentType = Literal["auto", "generic", "personal", "temporal", "process", "narrative", "code"]
"""How a text is split into memories (``auto`` reads its content). ``save`` and ``ingest``
also take these in any case and with spaces around, and refuse any other value with a
sentence naming these."""

DataType = Literal["GENERIC", "PERSONAL", "TEMPORAL", "PROCESS", "NARRATIVE", "CODE"]
"""The document type a memory was filed as (a leaf's ``data_type``)."""

ReplaceStatus = Literal["replaced", "ambiguous", "not_found", "none"]
"""What ``save(..., replaces=...)`` did: marked one memory, found several, found none, or
was not asked."""

ScratchKind = Literal["note", "output"]
"""What a session keeps for ``recall``: a ``note``, or a long output given to ``digest_output``."""
