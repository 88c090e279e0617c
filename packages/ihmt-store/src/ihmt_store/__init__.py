"""ihmt-store: the IHMT tree of plain files (placeholder surface, filled in below)."""

from ihmt_store._text import estimate_tokens, terms
from ihmt_store.errors import IhmtError, StoreError

__all__ = ["IhmtError", "StoreError", "estimate_tokens", "terms"]
