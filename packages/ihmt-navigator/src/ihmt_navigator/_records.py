"""The navigator's result records."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CorrectionMatch", "Hit", "Passage", "SearchResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """The part of a long leaf that answers, with its place in the leaf."""

    start_line: int
    end_line: int
    total_lines: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """One memory (or branch) in an answer."""

    id: str
    kind: str
    """``leaf`` or ``branch``."""
    content: str
    """The leaf's text (or its best passage), or the branch's summary; empty when the
    file was not opened (other matches are rendered from the catalog)."""
    title: str
    excerpt: str
    timestamp: str
    domain: str
    project: str
    source: str
    path: tuple[str, ...]
    """Ids from the top of the tree down to this item."""
    path_titles: tuple[str, ...]
    """Titles of the branches above it, top first."""
    score: float
    matched: tuple[str, ...]
    """Query terms this item contains."""
    outdated: bool = False
    outdated_by: str | None = None
    corrected_on: str | None = None
    passage: Passage | None = None
    """Set when the leaf was longer than the budget and only its best passage is shown."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult:
    """A search's answer: what was found, how sure, and the text an agent is handed."""

    query: str
    clue: str | None
    status: str
    """``found``, ``ambiguous`` or ``not_found``."""
    results: tuple[Hit, ...]
    """Best first. For ``ambiguous``: the tied candidates."""
    notices: tuple[str, ...]
    """Corrections to relay (OUTDATED) and other remarks."""
    confidence: float
    """0.6 x coverage + 0.4 x margin."""
    coverage: float
    """How much of the query (weighted by rarity) the best memory contains."""
    margin: float
    """How far the best memory stands above the best rival about another subject."""
    compact: str
    """The bounded rendering handed to an agent."""
    tokens: int
    """Estimated tokens of ``compact``."""
    files_read: int
    bytes_read: int
    node_reads: int
    """Branch files opened."""
    leaf_reads: int
    """Leaf files opened."""
    broad: bool = False
    """True when a branch summary answered a broad question."""
    clue_rounds: int = 0

    @property
    def best(self) -> Hit | None:
        """The first result, if any."""
        return self.results[0] if self.results else None


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectionMatch:
    """What a ``replaces`` hint describes among the earlier memories."""

    status: str
    """``found`` (mark ``targets``), ``ambiguous`` (several memories fit the same words:
    mark none, let the agent choose among ``candidates``) or ``not_found``."""
    targets: tuple[Hit, ...] = ()
    """The memories to mark OUTDATED: one, or several when each holds a different part
    of the hint ("on Nomad 1.7 with Consul locks" names two memories)."""
    candidates: tuple[Hit, ...] = ()
    """The other memories the hint fits, best first."""
    coverage: float = 0.0
    """How much of the hint (by rarity) the targets hold together."""
