"""The navigator's records: the options of a search, and what it answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal

from ihmt_navigator.errors import InvalidFilterError
from ihmt_store import normalize_timestamp

__all__ = [
    "CorrectionMatch",
    "CorrectionStatus",
    "Detail",
    "Hit",
    "HitKind",
    "Passage",
    "Scope",
    "SearchOptions",
    "SearchResult",
    "Status",
]

Status = Literal["found", "ambiguous", "not_found"]
"""How sure a search's answer is."""
CorrectionStatus = Literal["found", "ambiguous", "not_found"]
"""What a ``replaces`` hint matched: the memories to mark, several alike, or none."""
Detail = Literal["compact", "full"]
"""How much the rendering shows: ``full`` adds each hit's id, path, score and terms."""
Scope = Literal["main", "test", "all"]
"""Which memories of code: ``main`` (no tests), ``test`` (tests only) or ``all``."""
HitKind = Literal["leaf", "branch"]
"""A memory, or the summary of a branch of the tree."""

_DETAILS: tuple[Detail, ...] = ("compact", "full")
_SCOPES: tuple[Scope, ...] = ("main", "test", "all")


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOptions:
    """The filters and preferences of one search, validated when the record is made.

    One record travels from the caller (``Memory.search``, the CLI, a benchmark) down
    every step of the search; each round of a clue loop reuses it (the clue itself is
    part of the question, not an option).

    Raises:
        InvalidFilterError: a bad ``detail``, ``scope`` or ``as_of`` (checked in that
            order).
    """

    as_of: str | date | datetime | None = None
    """Leaves dated after it and corrections made after it are ignored. Given as an ISO
    date (the end of that day), a timestamp, a ``date`` or a ``datetime``; read back as
    the canonical timestamp string (``YYYY-MM-DDTHH:MM:SSZ``), or None."""
    domain: str | None = None
    """Only memories of this domain and the domains below it."""
    project: str | None = None
    """Only this project's memories."""
    prefer_project: str | None = None
    """Rank this project's memories and global ones above other projects'."""
    scope: Scope = "all"
    """``main`` (no tests), ``test`` (tests only) or ``all``."""
    path_prefix: str | None = None
    """Only memories whose source path starts with it."""
    detail: Detail = "compact"
    """``compact`` (bounded, for an agent) or ``full`` (ids, paths and scores too)."""
    limit: int = 5
    """At most this many results."""
    note_other_project: bool = False
    """A FOUND answer from a project other than ``prefer_project`` (a global memory
    never) ends with a NOTE naming that project, and the current one ("no project" when
    ``prefer_project`` is None). A composition that always knows the asker's project
    sets it (``Memory.search``)."""
    alternatives: tuple[str, ...] = ()
    """Other phrasings of the same question (at most :data:`MAX_ALTERNATIVES`), as an
    agent can give them at no cost ("database", "DB engine", "Postgres"). When the
    question as asked is NOT FOUND, each is searched, and the surest of their answers
    answers, saying which phrasing it is for. Blank and repeated ones are dropped."""

    def __post_init__(self) -> None:
        if self.detail not in _DETAILS:
            raise InvalidFilterError("detail", self.detail, "'compact' or 'full'")
        if self.scope not in _SCOPES:
            raise InvalidFilterError("scope", self.scope, "'main', 'test' or 'all'")
        object.__setattr__(self, "as_of", _canonical_as_of(self.as_of))
        object.__setattr__(self, "alternatives", _phrasings(self.alternatives))


MAX_ALTERNATIVES = 4
"""A search tries the question and at most this many other phrasings of it."""


def _phrasings(given: object) -> tuple[str, ...]:
    if isinstance(given, str):
        given = (given,)
    if not isinstance(given, (tuple, list)) or not all(isinstance(p, str) for p in given):
        raise InvalidFilterError("alternatives", given, "a list of phrasings of the question")
    kept = tuple(dict.fromkeys(p.strip() for p in given if p.strip()))
    if len(kept) > MAX_ALTERNATIVES:
        raise InvalidFilterError(
            "alternatives", f"{len(kept)} phrasings", f"at most {MAX_ALTERNATIVES}"
        )
    return kept


def _canonical_as_of(value: str | date | datetime | None) -> str | None:
    if value is None or value == "":
        return None
    moment = value
    if isinstance(value, str) and len(value.strip()) == 10:
        moment = value.strip() + "T23:59:59Z"  # a bare date means the end of that day
    try:
        return normalize_timestamp(moment)
    except ValueError:
        shown = value if not isinstance(value, str) or len(value) <= 60 else value[:59] + "…"
        raise InvalidFilterError("as_of", shown, "an ISO date such as 2025-12-31") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """The part of a long leaf that answers, with its place in the leaf."""

    start_line: int
    end_line: int
    total_lines: int
    text: str
    picked: bool = False
    """True when ``text`` is the leaf's lines and sentences that answer, picked between
    ``start_line`` and ``end_line`` (what was left out marked "…"), not every line of
    that span."""
    lead: str = ""
    """For picked lines, the sentence that answers best, with its line's date and
    speaker: the memory's line when it is listed among other matches."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """One memory (or branch) in an answer."""

    id: str
    kind: HitKind
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
    """Corrected in what the question asks (a memory corrected only in another of its
    facts answers as current)."""
    outdated_by: str | None = None
    corrected_on: str | None = None
    changed: str = ""
    """What the correction changed, when it recorded it ("rack changed to B7")."""
    passage: Passage | None = None
    """Set when the leaf was longer than the budget and only its best passage is shown."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult:
    """A search's answer: what was found, how sure, and the text an agent is handed."""

    query: str
    clue: str | None
    """The clue this search was given (the clues of a clue loop, joined), or None."""
    status: Status
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
    """How many clues the clue loop (:meth:`Navigator.ask`) used; 0 for a plain search."""
    clues: tuple[str, ...] = ()
    """Those clues, in the order given (a first clue given up front included)."""
    signals: dict[str, float] = field(default_factory=dict)
    """What the decision weighed, by name (empty when it was decided before any memory
    was weighed: no words to search by, or a name nothing stored mentions)."""

    @property
    def best(self) -> Hit | None:
        """The first result, if any."""
        return self.results[0] if self.results else None


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectionMatch:
    """What a ``replaces`` hint describes among the earlier memories."""

    status: CorrectionStatus
    """``found`` (mark ``targets``), ``ambiguous`` (several memories fit the same words:
    mark none, let the agent choose among ``candidates``) or ``not_found``."""
    targets: tuple[Hit, ...] = ()
    """The memories to mark OUTDATED: one, or several when each holds a different part
    of the hint ("on Nomad 1.7 with Consul locks" names two memories)."""
    candidates: tuple[Hit, ...] = ()
    """The other memories the hint fits, best first."""
    coverage: float = 0.0
    """How much of the hint (by rarity) the targets hold together."""
