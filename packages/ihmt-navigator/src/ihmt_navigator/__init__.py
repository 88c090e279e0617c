"""ihmt-navigator: consolidation into a tree of summaries, and a search that finds exactly.

Search is in two steps. *Find*: BM25 over every leaf and branch summary, from the
store's full-text index, with global document frequencies. *Answer with the tree*: the
path of each candidate, corrections first (an OUTDATED memory never outranks the one
that corrected it), the current project's memories before other projects', AMBIGUOUS
only for different referents (people sharing a first name, projects that each answer a
question asked in none), the memories about a subject for broad questions, NOT FOUND
when the best match shares only a stray word or lacks the value asked for, and a
bounded compact rendering for an agent. ``find_corrected`` says which earlier memories
a ``replaces`` hint describes.

Entry points:

- :class:`Navigator` — ``Navigator(store).search(query, SearchOptions(as_of=…), clue=…)``
  and ``ask(query, clue_provider, options, clue=…)`` (the one clue loop).
  :class:`SearchOptions` is the frozen record of a search's filters and preferences.
- :class:`Consolidator` — ``Consolidator(store, summarizer).consolidate(force=…)``.
- :class:`VectorIndex` and :func:`load_embedder` — the optional semantic layer
  (``[semantic]`` extra): ``Navigator(store, vectors=VectorIndex(store, embedder))``
  fuses BM25 with a multilingual sentence encoder.
- :class:`CodeSearch` — ranks the symbols of a code store (one leaf per symbol) for a
  question, with the same clue weights and test-path rule.
- :func:`summarizer_for` — the backend a store's config names (``heuristic`` or
  ``anthropic``, the latter from the ``[anthropic]`` extra).
"""

from ihmt_navigator._code import CodeSearch, CodeSymbol
from ihmt_navigator._consolidate import PENDING, ConsolidationReport, Consolidator
from ihmt_navigator._records import (
    CorrectionMatch,
    Detail,
    Hit,
    Scope,
    SearchOptions,
    SearchResult,
)
from ihmt_navigator._render import best_passage
from ihmt_navigator._search import ClueProvider, Navigator
from ihmt_navigator._semantic import (
    Embedder,
    SemanticMode,
    VectorIndex,
    load_embedder,
)
from ihmt_navigator._summarize import (
    AnthropicSummarizer,
    ChildText,
    Frequencies,
    HeuristicSummarizer,
    NodeSummary,
    Summarizer,
    summarizer_for,
)
from ihmt_navigator.errors import (
    InvalidFilterError,
    NavigatorError,
    SearchError,
    SummarizerError,
)

__version__ = "0.1.0"

__all__ = [
    # search
    "Navigator",
    "SearchResult",
    "SearchOptions",
    "Detail",
    "Scope",
    "CorrectionMatch",
    "Hit",
    "ClueProvider",
    "best_passage",
    # code search (a code store: one leaf per symbol)
    "CodeSearch",
    "CodeSymbol",
    # the optional semantic layer
    "Embedder",
    "SemanticMode",
    "VectorIndex",
    "load_embedder",
    # consolidation
    "Consolidator",
    "ConsolidationReport",
    "PENDING",
    # summarizers
    "Summarizer",
    "ChildText",
    "NodeSummary",
    "HeuristicSummarizer",
    "AnthropicSummarizer",
    "Frequencies",
    "summarizer_for",
    # errors
    "NavigatorError",
    "SearchError",
    "InvalidFilterError",
    "SummarizerError",
]
