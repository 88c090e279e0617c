"""The public surface of ihmt-store, written out in full.

Adding or removing a name here is an API change: make it deliberately, in the same
commit as the change to ``ihmt_store.__all__`` or to ``Store``, so a reviewer sees it
(the rule the MCP SDK's VERSIONING.md sets for its own exports). A name that only this
package uses stays private; its own tests import it from its private module.
"""

from __future__ import annotations

import ihmt_store
from ihmt_store import Store

EXPORTS = [
    "AppliedChanges",
    "Branch",
    "BranchNotFoundError",
    "Candidate",
    "ChildRef",
    "CodeChunkMode",
    "ConfigError",
    "Correction",
    "CorruptFileError",
    "DerivedChanges",
    "DomainTrunk",
    "Entry",
    "FORMAT_VERSION",
    "FieldWeights",
    "IOStats",
    "IhmtError",
    "ItemKind",
    "Leaf",
    "LeafNotFoundError",
    "LockTimeoutError",
    "MAX_LEAF_BYTES",
    "Problem",
    "Progress",
    "RebuildReport",
    "ReplicaFile",
    "ReplicaKind",
    "Root",
    "STOP_WORDS",
    "Span",
    "Status",
    "Store",
    "StoreConfig",
    "StoreError",
    "StoreFormatError",
    "StoreIOError",
    "StoreNotFoundError",
    "StoreStats",
    "SummarizerBackend",
    "check_date",
    "estimate_tokens",
    "fold",
    "idf",
    "leaf_id_for",
    "normalize_timestamp",
    "now_timestamp",
    "one_line",
    "safe_domain",
    "terms",
]

STORE_METHODS = [
    "REPLICATED",
    "UNREPLICATED",
    "adopt_hand_edits",
    "annotate",
    "apply_changes",
    "batch",
    "candidates",
    "children",
    "clear_derived",
    "close",
    "compact",
    "corrections_of",
    "count",
    "create",
    "derived_changes",
    "derived_counts",
    "derived_ids",
    "discard_derived",
    "document_frequencies",
    "entries",
    "entry",
    "exists",
    "file_problems",
    "forget",
    "generation",
    "hand_edits",
    "iter_entries",
    "iter_leaves",
    "listed_in",
    "locked",
    "open",
    "open_branch",
    "path_to",
    "paths_to",
    "put_branch",
    "put_derived",
    "put_leaf",
    "put_leaves",
    "read_branch",
    "read_leaf",
    "read_leaves",
    "read_root",
    "rebuild",
    "refresh_root",
    "remove_branch",
    "set_parent",
    "state_file",
    "stats",
    "trunk",
    "unparented",
    "update_config",
]


def test_the_package_exports_exactly_the_reviewed_names() -> None:
    assert sorted(ihmt_store.__all__) == EXPORTS
    assert len(ihmt_store.__all__) == len(set(ihmt_store.__all__))


def test_the_store_has_exactly_the_reviewed_public_methods() -> None:
    public = sorted(name for name in dir(Store) if not name.startswith("_"))
    assert public == STORE_METHODS
