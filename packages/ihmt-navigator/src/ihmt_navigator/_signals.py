"""The evidence an answer is decided on, recorded with the answer.

A search that reaches a best memory reads a handful of :class:`Signals` about it: how
much of the question it holds, the rarest word it lacks, whether a word of the question
is in no memory at all, whether words and meaning agree, its cosine, the value asked
for, its lead over a rival. Today the rules of :mod:`ihmt_navigator._decide` decide
(``matched`` records their verdict); the signals travel with the answer
(``SearchResult.signals``, ``search --full``), so that anyone can see what decided, and
``tools/bench/fit_decision.py`` fits a model on them, source by source, against those rules.
Each is rounded to three places, so the last bits of a cosine never show.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass

__all__ = ["FEATURES", "NEAR_SCORE", "Signals", "people_named", "projects_near", "surname_after"]

NEAR_SCORE = 0.5
"""A candidate scoring at least this share of the best's is near it (see :func:`projects_near`)."""

FEATURES = (
    "matched",
    "coverage",
    "held_words",
    "strongest",
    "lacking",
    "lacking_name",
    "unseen",
    "value_asked",
    "value_held",
    "identifier",
    "meaning",
    "cosine",
    "cosine_lead",
    "agree",
    "picked",
    "cross_lingual",
    "margin",
    "namesakes",
    "spread",
)
"""The signals, in the order a model fitted on them reads them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Signals:
    """What a search knows about its best memory when it decides (each in [0, 1])."""

    matched: float
    """1 unless the words alone make it a stray match: it shares no word with the
    question or under three tenths of its weight, or only one common word of a longer
    question; and meaning does not vouch for it (it is meaning's nearest, in another
    language, or a paraphrase whose every word some memory holds)."""
    coverage: float
    """The share of the question's weight (by rarity) the memory holds, a value of the
    shape asked for counting for the words that ask for it."""
    held_words: float
    """The share of the question's words the memory holds, each counted once."""
    strongest: float
    """The rarest word it shares with the question, as a share of the weight of a word
    one memory alone holds: 1 for a word as rare as that, near 0 for a common one."""
    lacking: float
    """The rarest word of the question that some memory holds but this one does not, as
    ``strongest`` measures it: a memory about something else that shares the rest."""
    lacking_name: float
    """The same for the names of the question only (a capitalised name, an identifier, a
    project it names): the question is about something the memory does not mention."""
    unseen: float
    """The share of the question's weight in words no memory holds at all."""
    value_asked: float
    """1 when the question asks for a value of a shape (an IP address, an email…)."""
    value_held: float
    """1 when the memory holds a value of every shape asked."""
    identifier: float
    """1 when the memory holds an identifier the question names whole."""
    meaning: float
    """1 when the semantic layer took part (it holds vectors of the memories)."""
    cosine: float
    """The memory's cosine with the question (0 without the semantic layer)."""
    cosine_lead: float
    """How far its cosine stands above the tenth nearest memory's, times five: how much
    nearer it is than what is merely on the same kind of topic (0 without meaning)."""
    agree: float
    """1 when words and meaning put the same memory first (0 without meaning)."""
    picked: float
    """1 when meaning's nearest memory is this one or its correction."""
    cross_lingual: float
    """1 when the question and the memory are in different languages."""
    margin: float
    """The memory's lead over the best rival about another subject."""
    namesakes: float = 0.0
    """1 when a first name the question uses alone belongs to two people or more among
    the candidates (followed by different surnames), whether or not the rules asked
    which one is meant."""
    spread: float = 0.0
    """How many projects the memories near the best answer from, when the question names
    none and is asked outside any: 0 for one, 1 for three or more."""

    def vector(self) -> tuple[float, ...]:
        """The signals in :data:`FEATURES` order, each rounded to three places."""
        values = asdict(self)
        return tuple(round(min(1.0, max(0.0, float(values[name]))), 3) for name in FEATURES)

    def shown(self) -> dict[str, float]:
        """The signals by name, rounded, for ``detail="full"`` and the JSON output."""
        return dict(zip(FEATURES, self.vector(), strict=True))


def surname_after(name: str, text: str) -> str | None:
    """Whom a first name in ``text`` belongs to: the capitalised word that follows it
    ("Luis Carrasco" → "Carrasco"); None for a mention alone ("Luis said")."""
    match = re.search(rf"\b{re.escape(name)}\s+([A-ZÁÉÍÓÚÑ][\w'-]+)", text)
    return match.group(1).removesuffix("'s").removesuffix("’s") if match else None


def people_named(name: str, texts: Iterable[str]) -> set[str]:
    """The people a first name belongs to in ``texts`` ("Luis Carrasco", "Luis Sato":
    {"Carrasco", "Sato"}); a mention alone adds none."""
    return {who for text in texts if (who := surname_after(name, text)) is not None}


def projects_near(near: Iterable[tuple[str, float]], best: float) -> float:
    """:attr:`Signals.spread` of ``near`` (each candidate's project and score; "" for a
    memory of no project) around the ``best`` score."""
    projects = {project for project, score in near if score >= best * NEAR_SCORE}
    return min(1.0, max(0, len(projects) - 1) / 2)
