"""Summarizer backends: what a branch says about the children below it."""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, Protocol, runtime_checkable

from ihmt_navigator._records import HitKind
from ihmt_navigator.errors import SummarizerError
from ihmt_store import STOP_WORDS, fold, one_line, terms

logger = logging.getLogger(__name__)

__all__ = [
    "AnthropicSummarizer",
    "ChildText",
    "Frequencies",
    "HeuristicSummarizer",
    "NodeSummary",
    "Summarizer",
    "keywords_of",
    "summarizer_for",
]

SUMMARY_CHARS = 420
TITLE_TERMS = 3

_GENERIC_WORDS = frozenset(
    terms(
        "use uses used using run runs running move moved moving decide decided choose chose "
        "pick picked make made get got go went set add added keep kept need needs want "
        "new old now today week month year day time thing things way note notes "
        "usar usa usamos uso mover movimos decidir decidimos elegir elegimos nuevo nueva hoy"
    )
)
"""Words too general to name what a branch is about (normalised)."""

_NUMERIC = re.compile(r"^[\d.,:/T+-]+$")
"""Dates, times and figures: they belong to the time span, not to the title."""

_STARTS = re.compile(r"(?<=[.!?:;])\s+|\n+\W*")
"""Where a capital says nothing: after a full stop, and at the start of every line."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n{2,}|\n(?=\s*[-*•]|\s*\d+[.)]\s)")
_WORD = re.compile(r"[^\W_][\w.+#-]*[^\W_]|[^\W_]", re.UNICODE)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildText:
    """What a summarizer reads of one child."""

    id: str
    kind: HitKind
    """``leaf`` or ``branch``."""
    title: str
    text: str
    """A leaf's text, or a branch's summary."""
    keywords: tuple[str, ...] = ()
    time_start: str | None = None
    time_end: str | None = None
    leaf_count: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSummary:
    """What a summarizer returns for a group of children."""

    title: str
    summary: str
    keywords: tuple[str, ...]
    backend: str
    """Which backend actually wrote it (a fallback says ``heuristic``)."""


@runtime_checkable
class Summarizer(Protocol):
    """Condenses children into a branch summary.

    Contract: deterministic for the same input where the backend allows it; never
    raises for content reasons (a backend that cannot answer falls back); the title is
    one line, the summary a few sentences, keywords in order of importance.
    """

    name: str

    def summarize(
        self, children: Sequence[ChildText], *, domain: str, layer: int
    ) -> NodeSummary: ...


DocumentFrequency = Callable[[Sequence[str]], Mapping[str, int]]


class Frequencies(Protocol):
    """What keywords are weighed against: how many leaves of a store hold each term, and
    how many leaves it holds. A :class:`ihmt_store.Store` is one (its index caches the
    frequencies until the next commit); ``Memory`` hands the same one to the summarizer
    and to every consolidator."""

    def document_frequencies(self, query_terms: Sequence[str]) -> Mapping[str, int]: ...

    def count(self, kind: Literal["leaf"]) -> int: ...


class _Shape:
    """The heuristic's view of a store's frequencies: each term's as first read, until
    the store has grown by a tenth (or shrunk). A branch's keywords need the shape of the
    frequencies, not the digits; and the summaries written depend on it (weighing them
    against the exact figures instead changes some branches' keywords and titles)."""

    def __init__(self, source: Frequencies) -> None:
        self._source = source
        self._seen: dict[str, int] = {}
        self._count = -1

    def total(self) -> int:
        count = self._source.count("leaf")
        if self._count < 0 or count > self._count * 1.1 + 10 or count < self._count:
            self._seen.clear()
            self._count = count
        return count

    def __call__(self, query_terms: Sequence[str]) -> Mapping[str, int]:
        if self._count < 0:
            self.total()
        missing = [t for t in dict.fromkeys(query_terms) if t not in self._seen]
        if missing:
            self._seen.update(self._source.document_frequencies(missing))
        return {t: self._seen[t] for t in query_terms}


def _surface_forms(texts: Sequence[str]) -> dict[str, dict[str, int]]:
    """Map each index term to the words that produced it, as written, with their counts.

    A capital at the start of a sentence says nothing, so that word counts lower-cased;
    a capital elsewhere marks a name.
    """
    forms: dict[str, dict[str, int]] = {}
    for text in texts:
        for word, shown in _walk(text):
            for term in _word_terms(word):
                seen = forms.get(term)
                if seen is None:
                    forms[term] = {shown: 1}
                else:
                    seen[shown] = seen.get(shown, 0) + 1
    return forms


@lru_cache(maxsize=4096)
def _walk(text: str) -> tuple[tuple[str, str], ...]:
    """Each word of ``text`` with the form it is shown in: lower-cased when a capital
    only marks the start of a sentence. Cached: a leaf's keywords and its branch's
    summary walk the same text."""
    return tuple(
        (word, word.lower() if position == 0 and word[1:].islower() else word)
        for sentence in _STARTS.split(text)
        for position, word in enumerate(_WORD.findall(sentence))
    )


@lru_cache(maxsize=65536)
def _word_terms(word: str) -> tuple[str, ...]:
    return tuple(terms(word))


@lru_cache(maxsize=65536)
def _keyword_head(word: str) -> str | None:
    """The index term a word counts under as a keyword, or None for words that never
    make one (stop words, figures, single letters)."""
    found = _word_terms(word)
    if not found or len(word) < 2 or _NUMERIC.match(word) or fold(word) in STOP_WORDS:
        return None
    return found[0]


def _weights(
    texts: Sequence[str], df: DocumentFrequency | None, total: int | None
) -> dict[str, float]:
    """TF-IDF of every term over ``texts``, against the store when ``df`` is given."""
    counts: Counter[str] = Counter()
    present: Counter[str] = Counter()
    for text in texts:
        found = terms(text)
        counts.update(found)
        present.update(set(found))
    if not counts:
        return {}
    if df is not None and total:
        freqs = df(list(counts))
        n = max(total, 1)
        return {
            t: (1 + math.log(c)) * math.log(1 + n / (1 + freqs.get(t, 0)))
            for t, c in counts.items()
        }
    n = len(texts)
    return {t: (1 + math.log(c)) * math.log(1 + n / present[t]) for t, c in counts.items()}


def _readable(term: str, forms: Mapping[str, Mapping[str, int]]) -> str:
    seen = forms.get(term)
    if not seen:
        return term
    # A capital anywhere but at a sentence start marks a name: that spelling wins.
    named = {form: count for form, count in seen.items() if form != form.lower()}
    pool = named or seen
    return max(pool.items(), key=lambda kv: (kv[1], -len(kv[0]), kv[0]))[0]


def keywords_of(
    text: str, *, limit: int = 6, df: DocumentFrequency | None = None, total: int | None = None
) -> tuple[str, ...]:
    """The most telling words of one text, as written (TF-IDF against the store if given)."""
    counts: dict[str, int] = {}
    shown: dict[str, dict[str, int]] = {}
    for word, form in _walk(text):
        head = _keyword_head(word)
        if head is None:
            continue
        counts[head] = counts.get(head, 0) + 1
        seen = shown.get(head)
        if seen is None:
            shown[head] = {form: 1}
        else:
            seen[form] = seen.get(form, 0) + 1
    if not counts:
        return ()
    if df is not None and total:
        freqs = df(list(counts))
        n = max(total, 1)
        weight = {
            t: (1 + math.log(c)) * math.log(1 + n / (1 + freqs.get(t, 0)))
            for t, c in counts.items()
        }
    else:
        weight = {t: 1 + math.log(c) for t, c in counts.items()}
    named = {t for t, seen in shown.items() if any(f != f.lower() for f in seen)}
    ranked = sorted(weight, key=lambda t: (-weight[t], t not in named, t))
    out: list[str] = []
    for term in ranked:
        word = _readable(term, shown)
        if word.lower() not in (o.lower() for o in out):
            out.append(word)
        if len(out) == limit:
            break
    return tuple(out)


def _span_label(children: Sequence[ChildText]) -> str:
    starts = [c.time_start for c in children if c.time_start]
    ends = [c.time_end or c.time_start for c in children if c.time_end or c.time_start]
    if not starts:
        return ""
    first, last = min(starts)[:10], max(e for e in ends if e)[:10]
    return first if first == last else f"{first} → {last}"


class HeuristicSummarizer:
    """Offline, deterministic extractive summaries: TF-IDF terms and representative sentences.

    Args:
        frequencies: the store's document frequencies; keywords are then weighed against
            the whole store, not only against the siblings.
    """

    name = "heuristic"

    def __init__(self, frequencies: Frequencies | None = None) -> None:
        self._shape = _Shape(frequencies) if frequencies is not None else None

    def summarize(self, children: Sequence[ChildText], *, domain: str, layer: int) -> NodeSummary:
        texts = [f"{c.title}\n{c.text}" if c.kind == "branch" else c.text for c in children]
        shape = self._shape
        if shape is None:
            weights = _weights(texts, None, None)
        else:
            weights = _weights(texts, shape, shape.total())
        forms = _surface_forms(texts)
        ranked = sorted(weights, key=lambda t: (-weights[t], t))
        keywords: list[str] = []
        for term in ranked:
            word = _readable(term, forms)
            if fold(word) in STOP_WORDS or len(word) < 2 or word.isdigit():
                continue
            if term in _GENERIC_WORDS or _NUMERIC.match(word):
                continue
            if word.lower() not in (k.lower() for k in keywords):
                keywords.append(word)
            if len(keywords) == 10:
                break
        # Names first in the title: capitalised words and identifiers say what it is about.
        entities = [k for k in keywords if k[:1].isupper() or any(ch.isdigit() for ch in k)]
        title_words = (entities + [k for k in keywords if k not in entities])[:TITLE_TERMS]
        span = _span_label(children)
        title = ", ".join(title_words) or domain
        if span:
            title = f"{title} · {span}"
        summary = self._sentences(children, weights)
        return NodeSummary(
            title=title, summary=summary, keywords=tuple(keywords), backend=self.name
        )

    def _sentences(self, children: Sequence[ChildText], weights: Mapping[str, float]) -> str:
        scored: list[tuple[float, int, int, str]] = []
        for index, child in enumerate(children):
            for position, sentence in enumerate(_SENTENCE.split(child.text)):
                flat = one_line(sentence)
                if len(flat) < 12:
                    continue
                unique = set(terms(flat))
                if not unique:
                    continue
                value = sum(weights.get(t, 0.0) for t in unique) / math.sqrt(len(unique) + 4)
                scored.append((value, index, position, flat))
        chosen: list[tuple[int, int, str]] = []
        used_children: set[int] = set()
        length = 0
        for value, index, position, flat in sorted(scored, key=lambda s: (-s[0], s[1], s[2])):
            del value
            if index in used_children:
                continue
            piece = one_line(flat, 200)
            if length + len(piece) > SUMMARY_CHARS and chosen:
                break
            chosen.append((index, position, piece))
            used_children.add(index)
            length += len(piece) + 1
        chosen.sort()
        return " ".join(piece for _, _, piece in chosen)


_PROMPT = """You summarise a group of notes from a developer's long-term memory so that an
agent can browse them. Domain: {domain}. Layer: {layer} (1 = raw notes, higher = summaries).

Reply with one JSON object and nothing else:
{{"title": "<at most 10 words naming the subjects, no dates>",
  "summary": "<2 or 3 factual sentences, at most 420 characters>",
  "keywords": ["<up to 10 distinctive words>"]}}

Notes:
{notes}
"""


class AnthropicSummarizer:
    """Summaries written by a Claude model; every failure falls back to the heuristic.

    Used only when selected; needs the ``anthropic`` package (``pip install
    'ihmt-navigator[anthropic]'``) and ``ANTHROPIC_API_KEY`` (or ``api_key``). A missing
    SDK, a missing key, a network error or an unparseable reply is logged and the
    heuristic summary is returned instead, so a consolidation is never lost.

    Args:
        model: the model id.
        api_key: overrides ``ANTHROPIC_API_KEY``.
        client_options: extra keyword arguments for ``anthropic.Anthropic`` (tests pass
            an ``http_client`` with a fake transport here).
        fallback: the backend used when this one cannot answer.
    """

    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        client_options: Mapping[str, Any] | None = None,
        fallback: Summarizer | None = None,
        max_tokens: int = 400,
    ) -> None:
        self.model = model
        self._api_key = api_key
        self._options = dict(client_options or {})
        self._fallback = fallback or HeuristicSummarizer()
        self._max_tokens = max_tokens
        self._client: Any = None

    def _get_client(self) -> Any:
        if self._client is not None:
            return self._client
        try:
            import anthropic
        except ImportError:
            raise RuntimeError(
                "the anthropic SDK is not installed: pip install 'ihmt-navigator[anthropic]'"
            ) from None
        key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise RuntimeError("ANTHROPIC_API_KEY is not set")
        self._client = anthropic.Anthropic(api_key=key, max_retries=0, **self._options)
        return self._client

    def summarize(self, children: Sequence[ChildText], *, domain: str, layer: int) -> NodeSummary:
        try:
            client = self._get_client()
            notes = "\n".join(
                f"- [{(c.time_start or '')[:10]}] {c.title}: {c.text[:600]}" for c in children
            )
            reply = client.messages.create(
                model=self.model,
                max_tokens=self._max_tokens,
                messages=[
                    {
                        "role": "user",
                        "content": _PROMPT.format(domain=domain, layer=layer, notes=notes),
                    }
                ],
            )
            text = "".join(
                getattr(block, "text", "") for block in getattr(reply, "content", []) or []
            )
            return self._parse(text, children)
        except Exception as exc:  # noqa: BLE001 - any failure must fall back, by contract
            logger.warning("anthropic summarizer failed (%s); using the heuristic", exc)
            return self._fallback.summarize(children, domain=domain, layer=layer)

    def _parse(self, text: str, children: Sequence[ChildText]) -> NodeSummary:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("the reply holds no JSON object")
        data = json.loads(text[start : end + 1])
        title = str(data["title"]).strip().splitlines()[0][:120]
        summary = " ".join(str(data["summary"]).split())[: SUMMARY_CHARS + 80]
        keywords = tuple(str(k).strip() for k in data.get("keywords", []) if str(k).strip())[:10]
        if not title or not summary:
            raise ValueError("the reply has an empty title or summary")
        span = _span_label(children)
        return NodeSummary(
            title=f"{title} · {span}" if span else title,
            summary=summary,
            keywords=keywords,
            backend=self.name,
        )


def summarizer_for(
    backend: str,
    *,
    model: str = "",
    frequencies: Frequencies | None = None,
) -> Summarizer:
    """The summarizer a store's config names (``heuristic`` or ``anthropic``).

    Args:
        frequencies: what the heuristic weighs keywords against (the store, usually).

    Raises:
        SummarizerError: an unknown backend name.
    """
    heuristic = HeuristicSummarizer(frequencies)
    if backend == "heuristic":
        return heuristic
    if backend == "anthropic":
        return AnthropicSummarizer(model or "claude-sonnet-4-5", fallback=heuristic)
    raise SummarizerError(f"unknown summarizer backend {backend!r}: use heuristic or anthropic")
