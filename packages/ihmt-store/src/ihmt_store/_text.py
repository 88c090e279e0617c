"""Text normalisation shared by indexing and querying, and the token estimate.

Both sides of the full-text index go through :func:`terms`, so a word is always
reduced the same way: accents folded, CamelCase and snake_case split (the whole
identifier is kept too), English and Spanish stop words dropped, a light EN/ES
suffix stemmer applied so "decide", "decided" and "deciding" meet.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache

__all__ = ["STOP_WORDS", "estimate_tokens", "fold", "one_line", "stem", "terms"]

CHARS_PER_TOKEN = 4

_EN_STOP = """
a about above after again against all also am an and any are aren as at be because been before
being below between both but by can cannot could did do does doing don down during each few for
from further had has have having he her here hers herself him himself his how i if in into is
isn it its itself just let me more most my myself no nor not now of off on once only or other
ought our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
s t d ll m re ve y us get got did does done
"""
_ES_STOP = """
a al algo algunas algunos ante antes como con contra cual cuando de del desde donde dos el ella
ellas ellos en entre era eran es esa esas ese eso esos esta estaba estado estamos estan estar
estas este esto estos fue fueron ha habia han has hasta hay la las le les lo los mas me mi mis
mucho muy nada ni no nos nosotros o otra otras otro otros para pero poco por porque que quien se
sea ser si sin sobre son su sus tambien te tiene tienen todo todos tu tus un una uno unos y ya yo
"""
STOP_WORDS: frozenset[str] = frozenset((_EN_STOP + _ES_STOP).split())
"""Words too common to tell memories apart, English and Spanish, accent-folded."""

# Longest first; a suffix is removed only if the remaining stem keeps its minimum length.
_SUFFIXES: tuple[tuple[str, str, int], ...] = (
    # Spanish (accent-folded)
    ("amientos", "", 4),
    ("imientos", "", 4),
    ("amiento", "", 4),
    ("imiento", "", 4),
    ("aciones", "", 4),
    ("iciones", "", 4),
    ("mente", "", 4),
    ("acion", "", 4),
    ("icion", "", 4),
    ("ieron", "", 4),
    ("iendo", "", 4),
    ("ando", "", 4),
    ("aron", "", 4),
    ("ados", "", 4),
    ("adas", "", 4),
    ("idos", "", 4),
    ("idas", "", 4),
    # English
    ("ations", "", 4),
    ("ation", "", 4),
    ("ements", "", 4),
    ("ement", "", 4),
    ("ments", "", 4),
    ("ment", "", 4),
    ("ings", "", 3),
    ("ing", "", 3),
    ("ions", "", 3),
    ("ion", "", 3),
    ("ies", "y", 3),
    ("ied", "y", 3),
    ("edly", "", 3),
    ("ers", "", 4),
    ("er", "", 4),
    ("ed", "", 3),
    ("es", "", 3),
    ("ly", "", 4),
    ("s", "", 3),
    ("e", "", 3),
)

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SPACE = re.compile(r"\s+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)


def estimate_tokens(text: str) -> int:
    """Estimate the model tokens in ``text`` at about four characters a token.

    The same estimate is used everywhere (chunk budgets, compact answers), so budgets
    are consistent even though no real tokenizer is involved.
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@lru_cache(maxsize=65536)
def _strip_accents(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def fold(word: str) -> str:
    """Lower-case ``word`` and strip its accents: "Migración" -> "migracion"."""
    return _strip_accents(word).casefold()


_DOUBLING = frozenset({"ing", "ings", "ed", "er", "ers"})
_DOUBLED = frozenset("bdgmnprt")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Reduce an already folded word with a light English/Spanish suffix stemmer."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, replacement, min_stem in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= min_stem:
            root = word[: len(word) - len(suffix)] + replacement
            # "cutting", "planned", "shipped": the doubled consonant belongs to the
            # suffix, so they meet "cut", "plan", "ship" (not "ll", "ss", "zz": "rolling").
            doubled = len(root) >= 3 and root[-1] == root[-2] and root[-1] in _DOUBLED
            if doubled and suffix in _DOUBLING:
                root = root[:-1]
            return root
    return word


_ACRONYMS = re.compile(r"[A-Z]{2,}s")


def _pieces(raw: str) -> list[str]:
    """Split one raw word (letters and digits) into its CamelCase parts ("IDs", "URLs"
    are the plural of one acronym, not "I" and "Ds")."""
    if _ACRONYMS.fullmatch(raw):
        return [raw[:-1]]
    parts = _CAMEL.findall(raw)
    return parts if parts else [raw]


def terms(text: str, *, keep_stop_words: bool = False) -> list[str]:
    """Return the index terms of ``text`` in order, repeats kept.

    "reserveStock" gives ``reservestock``, ``reserv``, ``stock``; "stock_hold" gives
    ``stock``, ``hold`` and ``stockhold``; stop words go unless ``keep_stop_words``.
    Recent texts are remembered: indexing, keywords and summaries read the same text.
    """
    return list(_terms(text, keep_stop_words))


@lru_cache(maxsize=8192)
def _terms(text: str, keep_stop_words: bool) -> tuple[str, ...]:
    out: list[str] = []
    chunk_terms = _chunk_terms
    for chunk in _SPACE.split(text):
        if chunk:
            out.extend(chunk_terms(chunk, keep_stop_words))
    return tuple(out)


@lru_cache(maxsize=32768)
def _chunk_terms(chunk: str, keep_stop_words: bool) -> tuple[str, ...]:
    """The terms of one whitespace-free chunk (cached: most chunks are common words; a
    few megabytes at most in a long-running server)."""
    out: list[str] = []
    words = _WORD.findall(chunk)
    if not words:
        return ()
    if len(words) > 1 and "_" in chunk and all(w.isalnum() for w in words):
        joined = fold("".join(words))
        if joined not in STOP_WORDS:
            out.append(stem(joined))
    for raw in words:
        raw = _strip_accents(raw)
        parts = _pieces(raw)
        folded_whole = fold(raw)
        if len(parts) > 1:
            out.append(stem(folded_whole))
        for part in parts:
            folded = fold(part)
            if not folded:
                continue
            if not keep_stop_words and folded in STOP_WORDS:
                continue
            out.append(stem(folded))
    return tuple(out)


def one_line(text: str, width: int | None = None) -> str:
    """``text`` on one line (every run of white space becomes one space), cut to ``width``
    characters with a closing "…" when it is longer."""
    flat = " ".join(text.split())
    if width is None or len(flat) <= width:
        return flat
    return flat[: max(width - 1, 0)] + "…"
