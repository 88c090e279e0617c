"""ihmt-store: the IHMT memory as a tree of plain files, standard library only.

A store is one relocatable folder: leaves (``layer0/<domain>/<id>.txt``, a JSON header
and the text exactly as given), branches (``layers/<n>/<id>.json``, summaries of the
layer below), the trunk (``root.json``), the config (``ihmt.config.json``) and derived
state (``state/index.sqlite3``: the catalog and a full-text index, rebuilt from the
files at any time). Writes are atomic and serialised by an inter-process lock; a
crashed writer is recovered by the next one. ``FORMAT.md`` documents the layout.

Entry points:

- :class:`Store` — ``Store.open(path)`` / ``Store.create(path)``; ``put_leaf``,
  ``read_leaf``, ``candidates``, ``rebuild``.
- :class:`Leaf`, :class:`Branch` — the records written to disk.
- :func:`terms` — the one text normalisation used for indexing and querying.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ihmt_store._text import STOP_WORDS, estimate_tokens, fold, one_line, stem, terms
from ihmt_store.errors import (
    BranchNotFoundError,
    ConfigError,
    CorruptFileError,
    IhmtError,
    LeafNotFoundError,
    LockTimeoutError,
    StoreError,
    StoreFormatError,
    StoreIOError,
    StoreNotFoundError,
)

if TYPE_CHECKING:
    from ihmt_store._bm25 import idf
    from ihmt_store._derived import DerivedChanges
    from ihmt_store._files import HEADER_END, HEADER_START
    from ihmt_store._index import Candidate, Entry, FieldWeights
    from ihmt_store._records import (
        FORMAT_VERSION,
        Branch,
        ChildRef,
        Correction,
        DomainTrunk,
        Leaf,
        Root,
        Span,
        StoreConfig,
        leaf_id_for,
        normalize_timestamp,
        now_timestamp,
        safe_domain,
    )
    from ihmt_store._store import IOStats, Problem, Progress, RebuildReport, Store, StoreStats

# The records and the store load on first use: packages that only need the error root or
# the text normalisation (the chunkers, at import) do not pay for SQLite and dataclasses.
_LAZY: dict[str, str] = {
    "DerivedChanges": "ihmt_store._derived",
    "idf": "ihmt_store._bm25",
    **dict.fromkeys(("HEADER_END", "HEADER_START"), "ihmt_store._files"),
    **dict.fromkeys(("Candidate", "Entry", "FieldWeights"), "ihmt_store._index"),
    **dict.fromkeys(
        (
            "FORMAT_VERSION",
            "Branch",
            "ChildRef",
            "Correction",
            "DomainTrunk",
            "Leaf",
            "Root",
            "Span",
            "StoreConfig",
            "leaf_id_for",
            "normalize_timestamp",
            "now_timestamp",
            "safe_domain",
        ),
        "ihmt_store._records",
    ),
    **dict.fromkeys(
        ("IOStats", "Problem", "Progress", "RebuildReport", "Store", "StoreStats"),
        "ihmt_store._store",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ihmt_store' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__version__ = "0.1.0"

__all__ = [
    # the store
    "Store",
    "StoreStats",
    "RebuildReport",
    "Problem",
    "Progress",
    "IOStats",
    # records on disk
    "Leaf",
    "Branch",
    "ChildRef",
    "Correction",
    "Span",
    "Root",
    "DomainTrunk",
    "StoreConfig",
    "FORMAT_VERSION",
    "HEADER_START",
    "HEADER_END",
    "leaf_id_for",
    "normalize_timestamp",
    "now_timestamp",
    "safe_domain",
    # derived data of sibling packages (vectors)
    "DerivedChanges",
    # the derived index
    "Entry",
    "Candidate",
    "FieldWeights",
    "idf",
    # text
    "terms",
    "fold",
    "stem",
    "estimate_tokens",
    "one_line",
    "STOP_WORDS",
    # errors
    "IhmtError",
    "StoreError",
    "StoreNotFoundError",
    "StoreFormatError",
    "ConfigError",
    "LeafNotFoundError",
    "BranchNotFoundError",
    "CorruptFileError",
    "LockTimeoutError",
    "StoreIOError",
]
