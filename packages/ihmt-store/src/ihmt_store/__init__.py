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
- :func:`terms` — the one text normalisation used for indexing and querying;
  :func:`idf` — the one inverse document frequency the index ranks with.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ihmt_store._text import STOP_WORDS, estimate_tokens, fold, one_line, terms
from ihmt_store._types import CodeChunkMode, ItemKind, Status, SummarizerBackend
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
    from ihmt_store._files import MAX_LEAF_BYTES
    from ihmt_store._fulltext import Candidate, FieldWeights
    from ihmt_store._lifecycle import Problem, Progress, RebuildReport
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
        check_date,
        leaf_id_for,
        normalize_timestamp,
        now_timestamp,
        safe_domain,
    )
    from ihmt_store._replicate import AppliedChanges, ReplicaFile, ReplicaKind
    from ihmt_store._rows import Entry
    from ihmt_store._stats import IOStats, StoreStats
    from ihmt_store._store import Store

# The records and the store load on first use: packages that only need the error root or
# the text normalisation (the chunkers, at import) do not pay for SQLite and dataclasses.
_LAZY: dict[str, str] = {
    # name: the private module that defines it
    "Store": "_store",
    "StoreStats": "_stats",
    "IOStats": "_stats",
    "RebuildReport": "_lifecycle",
    "Problem": "_lifecycle",
    "Progress": "_lifecycle",
    "Leaf": "_records",
    "Branch": "_records",
    "ChildRef": "_records",
    "Correction": "_records",
    "Span": "_records",
    "Root": "_records",
    "DomainTrunk": "_records",
    "StoreConfig": "_records",
    "FORMAT_VERSION": "_records",
    "MAX_LEAF_BYTES": "_files",
    "check_date": "_records",
    "leaf_id_for": "_records",
    "normalize_timestamp": "_records",
    "now_timestamp": "_records",
    "safe_domain": "_records",
    "DerivedChanges": "_derived",
    "AppliedChanges": "_replicate",
    "ReplicaFile": "_replicate",
    "ReplicaKind": "_replicate",
    "Entry": "_rows",
    "Candidate": "_fulltext",
    "FieldWeights": "_fulltext",
    "idf": "_bm25",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ihmt_store' has no attribute {name!r}")
    value = getattr(import_module(f"ihmt_store.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__version__ = "0.1.0"

# Adding or removing a name here is an API change: tests/test_exports.py holds the list.
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
    "MAX_LEAF_BYTES",
    "check_date",
    "leaf_id_for",
    "normalize_timestamp",
    "now_timestamp",
    "safe_domain",
    # closed sets in the records and in Store's signatures
    "ItemKind",
    "Status",
    "SummarizerBackend",
    "CodeChunkMode",
    # replication (git, driven by ihmt-mcp): Store.apply_changes answers this; what the
    # replicated files hold, for an engine that must not open the store
    "AppliedChanges",
    "ReplicaFile",
    "ReplicaKind",
    # derived data of sibling packages (vectors)
    "DerivedChanges",
    # the derived index and its ranking
    "Entry",
    "Candidate",
    "FieldWeights",
    "idf",
    # text
    "terms",
    "fold",
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
