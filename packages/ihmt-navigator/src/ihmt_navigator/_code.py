"""Code search: which symbols of a code store answer a question, best first.

A code store holds one leaf per symbol (``ihmt_mcp``'s project indexes). A question that
is an identifier is answered by name; any other by BM25 over the symbols' leaves, with
the navigator's clue weights and test-path rule, and (opt-in) re-ranked by meaning.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import ClassVar, NamedTuple

from ihmt_navigator._query import CLUE_BOTH, CLUE_ONE, is_test_path
from ihmt_navigator._records import Passage, Scope
from ihmt_navigator._render import best_passage
from ihmt_navigator._semantic import Embedder, VectorIndex
from ihmt_store import Store, terms

logger = logging.getLogger(__name__)

__all__ = ["CodeSearch", "CodeSymbol"]

CANDIDATES = 80
"""BM25's candidates for a question asked in words."""
NAMED_FILE = 1.5
"""Score factor for a symbol whose file is named by a word of the question."""
IMPORTS = 0.3
"""Score factor for a file's imports: they name everything and define nothing."""
PROSE = 0.5
"""Score factor for a block of prose (a paragraph or a passage of a README or of the
docs, a change log entry): find_code answers with code; the prose that describes it
comes after."""
PROSE_KINDS = frozenset({"kind:paragraph", "kind:passage", "kind:entry", "kind:section"})
LOOSE = 0.7
"""Score factor for loose code (a module's constants, a demo under ``__main__``, packed
together): a question asked in words is about what code does, which a function, a method
or a class says. Any factor from 0.5 to 0.85 gives the same answers on
``tools/bench/find_code.py``; 1.0 loses one of rich's."""
TEST_FILE = 0.6
"""Score factor for a test file's symbol when the scope is ``all``."""
RERANK = 20
"""With the semantic layer, how many of BM25's first candidates are re-ranked by
meaning."""
MEANING = 0.5
"""Re-ranked score: ``MEANING · cos′ + (1 − MEANING) · bm25′`` (cosines min-max scaled
over the window, BM25 divided by the best)."""

_IDENT = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*$")
"""A question that is a (qualified) identifier: ``fold``, ``Store.open``, ``a::b``."""
_NAMED = re.compile(
    r"`(?P<quoted>[^`\s]{1,200})`"  # `anything`
    r"|(?P<qualified>[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)+)"  # Store.open, a::b
    r"|(?P<called>[A-Za-z_$][\w$]*)\("  # fold(
    r"|(?P<snake>\b[A-Za-z]\w*_\w*)"  # load_orders, MAX_TOKENS, _entropy
    r"|(?P<camel>\b[A-Za-z][a-z0-9]+[A-Z]\w*)"  # OrderService, getUser
)
"""Names written as code inside a question in words: ``where is Store.open defined?``."""


class CodeSymbol(NamedTuple):
    """One symbol of a code store, as the caller's listing of its files knows it."""

    source: str
    """The file, relative to the codebase's root."""
    name: str
    """Its qualified name (``Class.method``), or '' for a block without one."""
    kind: str
    """The chunker's block kind (``function``, ``class``, ``imports``…)."""
    leaf_id: str


class CodeSearch:
    """Ranks the symbols of a code store for a question.

    Args:
        store: the code store (one leaf per symbol).
        embedder: re-ranks BM25's first candidates by meaning when given. Opt-in: with
            the shipped sentence encoder, which was not trained on code, it ranks worse
            than words alone (``tools/bench/find_code.py``); an embedder made for code
            can do better. Only the candidates are embedded (once each, kept in the
            store's derived data), so a first sync costs no more.
    """

    rerank: ClassVar[int] = RERANK
    """How many of BM25's first candidates the embedder re-ranks (and embeds)."""

    def __init__(self, store: Store, *, embedder: Embedder | None = None) -> None:
        self.store = store
        self._embedder = embedder
        self._vectors: VectorIndex | None = None

    def rank(
        self,
        question: str,
        symbols: Iterable[CodeSymbol],
        *,
        clue: str | None = None,
        scope: Scope = "main",
        prefix: str = "",
    ) -> list[str]:
        """The leaf ids that answer ``question``, best first (empty: none does).

        A question that is an identifier picks the symbols of that name (or ending in
        ``.name``) from ``symbols``, main code first; failing that, or for any other
        question, BM25 ranks the store's leaves under ``prefix`` in ``scope``. A
        question in words that writes a name as code (``Store.open``, ``load_orders``,
        ```fold```, ``fold(``) gets the symbols of that name first, then BM25's.
        """
        q = question.strip()
        if _IDENT.match(q):
            return self._by_name(q, symbols, scope, prefix) or self._ranked(q, clue, scope, prefix)
        # A question in words that names a symbol the index holds gets that symbol first,
        # always; what the words rank comes after it.
        names = _names_in(q)
        if not names:
            return self._ranked(q, clue, scope, prefix)
        listed = list(symbols)
        named: list[str] = []
        for name in names:
            named.extend(i for i in self._by_name(name, listed, scope, prefix) if i not in named)
        ranked = self._ranked(q, clue, scope, prefix)
        first = set(named)
        return named + [i for i in ranked if i not in first]

    def passage(self, text: str, question: str, clue: str | None, budget: int) -> Passage:
        """The lines of a symbol too long for ``budget`` tokens that answer best."""
        return best_passage(text, terms(f"{question} {clue or ''}"), budget)

    def _by_name(
        self, q: str, symbols: Iterable[CodeSymbol], scope: Scope, prefix: str
    ) -> list[str]:
        """Leaves whose symbol is exactly ``q`` (or ends with ``.q``), main code first.

        A name led by its module (``pkg.mod.Class.method``) also finds ``Class.method``
        in the file ``pkg/mod.*`` (or any file ``mod.*``).
        """
        want = q.replace("::", ".").replace("#", ".")
        parts = want.split(".")
        exact: list[tuple[int, str, str]] = []
        tails = {".".join(parts[cut:]): parts[:cut] for cut in range(1, len(parts))}
        for source, name, kind, leaf_id in symbols:
            if not name or kind == "imports":
                continue
            if name == want:
                rank = 0
            elif name.endswith("." + want):
                rank = 1
            elif name in tails and _module_is(source, tails[name]):
                rank = 0
            else:
                continue
            if not _in_scope(source, scope, prefix):
                continue
            exact.append((rank + (2 if is_test_path(source) else 0), source, leaf_id))
        exact.sort()
        return [leaf_id for _, _, leaf_id in exact]

    def _ranked(self, q: str, clue: str | None, scope: Scope, prefix: str) -> list[str]:
        q_terms = list(dict.fromkeys(terms(q)))
        c_terms = [t for t in dict.fromkeys(terms(clue or "")) if t not in q_terms]
        if not q_terms:
            return []
        found = self.store.candidates(
            q_terms + c_terms, limit=CANDIDATES, kinds=("leaf",), source_prefix=prefix or None
        )
        named = set(q_terms)
        scored: list[tuple[float, str]] = []
        for cand in found:
            entry = cand.entry
            if not _in_scope(entry.source, scope, prefix):
                continue
            score = cand.score
            stem = entry.source.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            if named & set(terms(stem)):
                score *= NAMED_FILE
            if "kind:imports" in entry.tags:
                score *= IMPORTS
            elif not PROSE_KINDS.isdisjoint(entry.tags):
                score *= PROSE
            elif "kind:code" in entry.tags:
                score *= LOOSE
            if scope == "all" and is_test_path(entry.source):
                score *= TEST_FILE
            if c_terms:
                has_q = any(t in q_terms for t in cand.matched)
                has_c = any(t in c_terms for t in cand.matched)
                score *= CLUE_BOTH if has_q and has_c else CLUE_ONE
            scored.append((score, entry.id))
        scored.sort(key=lambda item: (-item[0], item[1]))
        ranked = [leaf_id for _, leaf_id in scored]
        if self._embedder is not None and ranked:
            ranked = self._by_meaning(q, {i: s for s, i in scored}, ranked)
        return ranked

    def _by_meaning(self, q: str, scores: dict[str, float], ranked: list[str]) -> list[str]:
        """BM25's first candidates re-ranked with the embedder: a question phrased by
        behaviour meets the function by what its code and comments say."""
        assert self._embedder is not None
        if self._vectors is None:
            self._vectors = VectorIndex(self.store, self._embedder)
        window = ranked[: self.rerank]
        try:
            missing = self._vectors.missing(window)
            if missing:
                texts = {leaf.leaf_id: leaf.text for leaf in self.store.read_leaves(missing)}
                self._vectors.write(texts)
            sims = self._vectors.query(q)
        except Exception as exc:  # noqa: BLE001 (meaning is a bonus; words still answer)
            logger.warning("find_code ranks by words only: %s", exc)
            return ranked
        cos = {i: sims.of(i) for i in window}
        known = [c for c in cos.values() if c is not None]
        if not known:
            return ranked
        low, high = min(known), max(known)
        top = scores[window[0]] or 1.0

        def fused(item: str) -> float:
            c = cos[item]
            part = (c - low) / (high - low) if c is not None and high > low else 0.0
            return MEANING * part + (1 - MEANING) * scores[item] / top

        return sorted(window, key=lambda i: (-fused(i), i)) + ranked[self.rerank :]


def _names_in(question: str) -> list[str]:
    """The names written as code in ``question``, first seen first."""
    names: list[str] = []
    for match in _NAMED.finditer(question):
        name = next(group for group in match.groups() if group).strip("().")
        if _IDENT.match(name) and name not in names:
            names.append(name)
    return names


def _module_is(source: str, modules: list[str]) -> bool:
    """True when ``source`` is the file of the dotted module ``modules`` (``a.b`` is
    ``…a/b.py``), or of its last part alone."""
    stem = source.rsplit(".", 1)[0]
    path = "/".join(modules)
    return stem == path or stem.endswith("/" + path) or stem.rsplit("/", 1)[-1] == modules[-1]


def _in_scope(source: str, scope: Scope, prefix: str) -> bool:
    if prefix and not (source == prefix or source.startswith(prefix + "/")):
        return False
    if scope == "all":
        return True
    return (scope == "test") == is_test_path(source)
