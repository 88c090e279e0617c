"""The decision: FOUND, AMBIGUOUS or NOT FOUND, and in which order the memories answer.

:func:`decide` reads top to bottom: rank the candidates (a period the question names,
the current project first, corrections above what they correct), then NOT FOUND when the
question names what no memory holds, when the best memory is a stray match, or when
only another project answers; AMBIGUOUS when the candidates are about different
referents the question does not tell apart (namesakes, projects); otherwise the order
of a FOUND answer (a broad question's set of memories, the newer of two statements, the
memory holding the value asked for). The rules it applies are the functions below it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ihmt_navigator._broad import broad_order
from ihmt_navigator._corrections import corrections_first, newer_among_ties, newest_value
from ihmt_navigator._hits import build_hits, leaf_text
from ihmt_navigator._match import (
    SAME_SUBJECT,
    indistinct,
    is_stray,
    linked,
    name_pieces,
    names_project,
    same_subject,
    timestamp_of,
    unseen,
)
from ihmt_navigator._query import IN_PERIOD, Query, rarity
from ihmt_navigator._question import (
    asked_for,
    asked_words,
    bare_names,
    compound_names,
    head_names,
    identifiers,
    is_broad,
    language_of,
    name_terms,
    name_words,
    version_asked,
    version_number,
)
from ihmt_navigator._records import Hit
from ihmt_navigator._referents import (
    another_referent,
    namesakes,
    people_called,
    project_split,
)
from ihmt_navigator._render import Answer
from ihmt_navigator._semantic import Similarities
from ihmt_navigator._shapes import ANSWER_TYPES
from ihmt_navigator._signals import Signals, projects_near
from ihmt_store import Candidate, Store, terms

__all__ = ["CROSS_LINGUAL_COVERAGE", "DISAGREE", "Found", "decide", "read_signals"]

DISAGREE = 0.8
"""Confidence factor when BM25 and the embeddings put different memories first: agreement
is right far more often than either alone."""
CROSS_LINGUAL_COVERAGE = 0.3
"""The word coverage credited to a memory that meaning found for a question in another
language (the least that is not a stray match: the answer shows as LOW CONFIDENCE)."""


LEAD_RANK = 10
"""A memory's lead in meaning is measured over the memory at this rank."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    """A FOUND decision, before its hits are built: the memories in the order they answer."""

    ranked: list[Candidate]
    """Every candidate, the answer first."""
    scores: dict[str, float]
    """Each candidate's score."""
    coverage: float
    """How much of the question the answer holds (lowered when words and meaning
    disagree)."""
    margin: float
    """The answer's lead over the best rival about another subject."""
    tie_floor: float
    """The score above which a memory answers as well as the first."""
    broad: bool
    """A broad question: the memories about its subject answer together."""
    signals: Signals
    """What the decision weighed, shown with the answer."""
    earlier: frozenset[str] = frozenset()
    """Earlier values of the one thing asked about: outdated for this answer only."""


def decide(
    store: Store,
    q: Query,
    span: tuple[str, str] | None,
    leaves: list[Candidate],
    scores: dict[str, float],
    *,
    lexical_best: Candidate | None,
    nearest: Candidate | None,
    agree: bool,
    meaning: Similarities | None = None,
) -> Answer | Found:
    """Whether the candidates answer the question (``leaves``, not empty, with their
    ``scores``; ``span``: the period it names), and in which order.

    Args:
        lexical_best: BM25's best candidate: whether to answer at all is the words'
            decision.
        nearest: the candidate nearest in meaning (None without the semantic layer).
        agree: words and meaning put the same memory first.
        meaning: the question's cosines with the memories (None without the layer).

    Returns:
        A NOT FOUND or AMBIGUOUS :class:`Answer`, or the :class:`Found` order.
    """
    query, options = q.text, q.options
    limit = options.limit
    names = known_names(q)
    ranked, elsewhere = rank(store, q, span, leaves, scores, names)
    best = ranked[0]
    if lexical_best is not None and names_all(names, best) and not names_all(names, lexical_best):
        lexical_best = None  # it outscored on a word, not on what the question names
    judged = max(dict.fromkeys(c for c in (best, lexical_best) if c is not None), key=q.coverage)
    asked = asked_for(query)
    cues = asked_words(query) if asked else frozenset()
    if asked and not holds_values(store, q, judged, asked):
        # The value asked for may be held by another memory about the subject than the
        # one that holds most of the question's words: it is the one to judge by.
        window = [c for c in ranked[:limit] if c.entry.id not in elsewhere]
        holder = holder_of(store, q, window, asked, cues) if window else None
        if (
            holder is not None
            and q.coverage(holder, cues) >= q.coverage(judged)
            and about_subject(q, judged, holder, cues)
        ):
            judged = holder
    credited = cues if holds_values(store, q, judged, asked) else frozenset()
    # A word of the question the memory holds only inside a name ("script" of
    # "JavaScript") is not one it uses: it does not count towards answering.
    pieces = name_pieces(leaf_text(store, q, judged.entry)).intersection(judged.matched)
    if pieces:
        judged = replace(judged, matched=tuple(t for t in judged.matched if t not in pieces))
    coverage = q.coverage(judged, credited)
    shared = tuple(t for t in judged.matched if t in q.q_terms)

    unknown = unknown_names(q) or unheld_identifiers(q, leaves)
    if unknown:
        return Answer(status="not_found", coverage=coverage, unknown=unknown)
    s1 = scores[best.entry.id]
    tie_floor = s1 * (1 - store.config.ambiguity_margin)
    rivals = rivals_of(q, best, ranked, scores, tie_floor)
    s2 = scores[rivals[0].entry.id] if rivals else 0.0
    margin = max(0.0, min(1.0, (s1 - s2) / s1)) if s1 > 0 else 0.0
    stray = is_stray(q, judged, coverage, identifiers(query), credited)
    # Meaning's first memory is the answer (or was, until this one corrected it).
    picked = nearest is not None and (nearest is best or linked(nearest.entry, best.entry))
    cross_lingual = across_languages(store, q, best)
    projects = frozenset(c.entry.project for c in leaves if c.entry.project)
    signals = read_signals(
        store,
        q,
        judged,
        best,
        coverage=coverage,
        credited=credited,
        asked=bool(asked),
        margin=margin,
        meaning=meaning,
        agree=agree and nearest is not None,
        picked=picked,
        cross_lingual=cross_lingual,
        projects=projects,
        ranked=ranked,
        scores=scores,
    )
    if stray and picked and cross_lingual:
        # Asked in one language about a memory in another: sharing no words is no sign
        # that it does not answer. Meaning picked it (names were checked above): say
        # so with a low confidence instead of NOT FOUND.
        stray, agree = False, False
        coverage = max(coverage, CROSS_LINGUAL_COVERAGE)
    elif stray and picked and agree and shared and not unseen(q.groups, q.df):
        # Words and meaning pick the same memory, which holds some of the question's
        # words, and every other word of the question is one the memory knows: a
        # paraphrase, not a stray match. Answer, with the low confidence of the words'
        # coverage. (A word no memory holds says the question is about something
        # never stored.)
        stray = False
    signals = replace(signals, matched=float(not stray))
    if best.entry.id in elsewhere and not stray:
        # Asked in a project, answered only by another project's memory about something
        # the question does not name: that is not this project's answer. Say so, and
        # show what the other projects hold.
        others = [c for c in ranked[:limit] if c.entry.id in elsewhere]
        shown = tuple(build_hits(store, q, others[:3], scores))
        return Answer(
            status="not_found", coverage=coverage, elsewhere=shown, signals=signals.shown()
        )
    if stray:
        return Answer(
            status="not_found",
            coverage=coverage,
            stray=shared,
            nearest=closest(store, q, ranked, scores),
            signals=signals.shown(),
        )
    other = another_referent(q, judged, ranked, projects, nearest)
    if other is not None:
        return Answer(
            status="not_found",
            coverage=coverage,
            stray=shared,
            unnamed=(other,),
            nearest=closest(store, q, ranked, scores),
            signals=signals.shown(),
        )
    if not agree:
        coverage *= DISAGREE
    broad = is_broad(query)

    # Ask only when the candidates are about different referents the question does not
    # tell apart: several people sharing the name it uses, or projects that each answer
    # it while the asker named none. Many memories about one thing are not ambiguity.
    # A clue that no candidate holds does not tell them apart.
    separated = any(t in q.c_terms for c in leaves for t in c.matched)
    if not separated:
        split = namesakes(store, q, ranked, asks_value=bool(asked))
        if len(split) < 2 and not broad:
            split = project_split(q, best, ranked, scores, dated=span is not None)
        if len(split) >= 2:
            among = tuple(build_hits(store, q, split[:8], scores))
            return Answer(
                status="ambiguous",
                hits=among,
                coverage=coverage,
                margin=margin,
                signals=signals.shown(),
            )

    earlier: set[str] = set()
    if broad:
        ranked = broad_order(q, ranked, leaves)
    else:
        ranked = newer_among_ties(q, best, ranked, scores, tie_floor)
        if asked:
            holder = holder_of(store, q, ranked[:limit], asked, cues)
            if holder is None:
                lacking = tuple(name for name, _ in asked)
                return Answer(
                    status="not_found",
                    coverage=coverage,
                    lacking=lacking,
                    stray=shared,
                    nearest=closest(store, q, ranked, scores),
                    signals=signals.shown(),
                )
            ranked = [holder, *(c for c in ranked if c is not holder)]
            thing = version_asked(query)
            if thing:
                number = version_number(thing)

                def version(cand: Candidate) -> str | None:
                    found = number.search(leaf_text(store, q, cand.entry))
                    return found.group(1) if found else None

                ranked, earlier = newest_value(q, ranked, version, cues)
    return Found(
        ranked=ranked,
        scores=scores,
        coverage=coverage,
        margin=margin,
        tie_floor=tie_floor,
        broad=broad,
        signals=signals,
        earlier=frozenset(earlier),
    )


def read_signals(
    store: Store,
    q: Query,
    judged: Candidate,
    best: Candidate,
    *,
    coverage: float,
    credited: frozenset[str],
    asked: bool,
    margin: float,
    meaning: Similarities | None,
    agree: bool,
    picked: bool,
    cross_lingual: bool,
    projects: frozenset[str],
    ranked: Sequence[Candidate] = (),
    scores: dict[str, float] | None = None,
) -> Signals:
    """What the decision weighs about the best memory (``judged``: the one of BM25's best
    and the fused best that holds more of the question, for what the words say;
    ``ranked`` and ``scores``: every candidate, for the namesakes and the spread)."""
    held = {t for t in judged.matched if t in q.q_terms} | {t for t in credited if t in q.q_terms}
    words = len(q.groups) or 1
    held_words = sum(1 for group in q.groups if any(t in held for t in group)) / words
    single = rarity(q.total, 1)
    strongest = max((q.weights.get(t, 0.0) for t in held), default=0.0) / single if single else 0.0
    elsewhere = [
        max(q.weights.get(t, 0.0) for t in group)
        for group in q.groups
        if group and not any(t in held for t in group) and any(q.df.get(t, 0) > 0 for t in group)
    ]
    lacking = max(elsewhere, default=0.0) / single if single else 0.0
    names = set(name_terms(q.text))
    names.update(
        t for project in projects for t in terms(project) if names_project(project, q.q_terms)
    )
    missing_names = [
        q.weights.get(t, 0.0)
        for t in names
        if t in q.weights and t not in held and q.df.get(t, 0) > 0
    ]
    lacking_name = max(missing_names, default=0.0) / single if single else 0.0
    weight = {group: max(q.weights.get(t, 0.0) for t in group) for group in q.groups if group}
    total = sum(weight.values())
    never = sum(
        w
        for group, w in weight.items()
        if all(q.df.get(t, 0) == 0 and t not in held for t in group)
    )
    cosine = meaning.of(best.entry.id) if meaning is not None else None
    nearest = meaning.top(LEAD_RANK) if meaning is not None else []
    lead = (cosine - nearest[-1][1]) * 5 if cosine is not None and nearest else 0.0
    excerpts = [c.entry.excerpt for c in ranked]
    namesake = any(len(people_called(store, q, name, excerpts)) >= 2 for name in bare_names(q.text))
    spread = 0.0
    unplaced = not q.options.prefer_project and not any(
        names_project(project, q.q_terms) for project in projects
    )
    if scores is not None and unplaced:
        near = ((c.entry.project, scores[c.entry.id]) for c in ranked)
        spread = projects_near(near, scores[best.entry.id])
    return Signals(
        matched=1.0,
        coverage=coverage,
        held_words=held_words,
        strongest=strongest,
        lacking=lacking,
        lacking_name=lacking_name,
        unseen=never / total if total > 0 else 0.0,
        value_asked=float(asked),
        value_held=float(bool(credited)),
        identifier=float(
            any(all(t in judged.matched for t in ident) for ident in identifiers(q.text))
        ),
        meaning=float(bool(nearest)),  # no vector yet: words alone decided
        cosine=max(0.0, cosine or 0.0),
        cosine_lead=lead,
        agree=float(agree),
        picked=float(picked),
        cross_lingual=float(cross_lingual),
        margin=margin,
        namesakes=float(namesake),
        spread=spread,
    )


def rank(
    store: Store,
    q: Query,
    span: tuple[str, str] | None,
    leaves: list[Candidate],
    scores: dict[str, float],
    names: list[list[str]],
) -> tuple[list[Candidate], set[str]]:
    """The candidates best first (``scores`` updated in place), and the other projects'
    memories the question does not point at (see :func:`in_scope_first`); ``names``:
    the question's :func:`known_names`."""
    options = q.options
    if span is not None and q.as_of is None:
        for cand in leaves:
            if span[0] <= cand.entry.timestamp[:10] <= span[1]:
                scores[cand.entry.id] *= IN_PERIOD
    elsewhere: set[str] = set()
    if options.prefer_project:
        elsewhere = in_scope_first(q, leaves, scores)
    ranked = sorted(leaves, key=lambda c: (-scores[c.entry.id], -timestamp_of(c.entry), c.entry.id))
    ranked = naming_first(names, ranked, scores)
    ranked = corrections_first(store, q, ranked, scores)
    return ranked, elsewhere


def naming_first(
    names: list[list[str]], ranked: list[Candidate], scores: dict[str, float]
) -> list[Candidate]:
    """The memories that hold every single capitalised name the question is about (a
    project, a person: :func:`known_names`) before those that hold none of them: a word
    rarer in the store than a name of the question ("Which cloud region hosts Orvik?":
    five memories say "cloud", ten "Orvik") does not make a memory about something else
    the answer. Their scores rise by one amount (``scores`` updated in place), so their
    order among themselves stays; nothing moves when no memory holds them all."""
    naming = [c for c in ranked if names_all(names, c)]
    if not naming or naming[0] is ranked[0]:
        return ranked
    nameless = [c for c in ranked if not any(t in c.matched for parts in names for t in parts)]
    top = max((scores[c.entry.id] for c in nameless), default=0.0)
    lift = top - scores[naming[0].entry.id]
    if lift > 0:
        for cand in naming:
            scores[cand.entry.id] += lift
    named = {c.entry.id for c in naming}
    return sorted(ranked, key=lambda c: (-scores[c.entry.id], c.entry.id not in named))


def known_names(q: Query) -> list[list[str]]:
    """The terms of each name the question is about that some memory holds: a single
    capitalised name, not one that describes something else ("the Postgres driver",
    "Podman or Docker"; see :func:`~ihmt_navigator._question.head_names`)."""
    never = rarity(q.total, 0)
    return [
        parts
        for word in head_names(q.text)
        if (parts := [t for t in terms(word) if q.weights.get(t, never) < never])
    ]


def names_all(names: list[list[str]], cand: Candidate) -> bool:
    """``cand`` holds every one of ``names`` (False when there are none)."""
    return bool(names) and all(any(t in cand.matched for t in parts) for parts in names)


def across_languages(store: Store, q: Query, cand: Candidate) -> bool:
    """True when the question and the memory are clearly in different languages."""
    asked = language_of(q.text)
    if not asked:
        return False
    written = language_of(leaf_text(store, q, cand.entry))
    return bool(written) and written != asked


def rivals_of(
    q: Query,
    best: Candidate,
    ranked: Sequence[Candidate],
    scores: dict[str, float],
    tie_floor: float,
) -> list[Candidate]:
    """Current memories about another subject that come close to the best one.

    An OUTDATED memory is history, not a rival; a near-duplicate of the best is the
    same subject. Stops at the first rival below the tie floor (enough for the margin).
    """
    out: list[Candidate] = []
    for cand in ranked[1:]:
        if q.is_outdated(cand.entry) or same_subject(best, cand):
            continue
        out.append(cand)
        if scores[cand.entry.id] < tie_floor:
            break
    return out


def unknown_names(q: Query) -> tuple[str, ...]:
    """Names in the question (an identifier, a capitalised word inside a sentence, a
    number) of which the store holds no trace at all: the memory cannot be about them."""
    never = rarity(q.total, 0)
    weights = q.weights
    found: list[str] = []
    for word in name_words(q.text):
        if any(cue.fullmatch(word) for _, cue, _ in ANSWER_TYPES):
            continue  # "URL" or "IP" says what is asked for, not about what
        parts = [t for t in terms(word) if t in weights]
        if not parts:
            continue
        numbered = [t for t in parts if any(ch.isdigit() for ch in t)]
        # An identifier's number is what names it: PLAT-15826 is unknown even though
        # PLAT is everywhere.
        if all(weights[t] >= never for t in numbered or parts):
            found.append(word)
    return tuple(found)


def unheld_identifiers(q: Query, leaves: Sequence[Candidate]) -> tuple[str, ...]:
    """Identifiers of the question that no candidate holds whole: "cache-koala-19" is
    not named by memories about cache-dove-20 and edge-koala-66, though each of its
    words is somewhere in the store."""
    return tuple(
        word
        for word, parts in compound_names(q.text)
        if not any(all(t in c.matched for t in parts) for c in leaves)
    )


def in_scope_first(q: Query, leaves: Sequence[Candidate], scores: dict[str, float]) -> set[str]:
    """The current project's memories and global ones rank above other projects'.

    A project the question names counts as current (asked in falcon, "what runs
    heron's staging?" is about heron). Another project's memory comes before an
    in-scope one that answers only when the question points at it: it holds a name
    of the question, or a word no other memory holds, that nothing in scope holds
    ("the osprey staging host", asked in falcon, is heron's); even then, not before
    in-scope memories that hold as much of the question.

    Returns:
        The other projects' memories the question does not point at: they may be
        listed, but they do not answer a question asked in this project.
    """
    q_terms, weights = q.q_terms, q.weights
    named = {p for p in {c.entry.project for c in leaves} if names_project(p, q_terms)}

    def in_scope(cand: Candidate) -> bool:
        project = cand.entry.project
        return project in ("", q.options.prefer_project) or project in named

    inside = [c for c in leaves if in_scope(c)]
    held_inside = {t for c in inside for t in c.matched}
    cover = {c.entry.id: q.coverage(c) for c in leaves}
    answering = [scores[c.entry.id] for c in inside if not is_stray(q, c, cover[c.entry.id])]
    unique = rarity(q.total, 1)  # the weight of a word one memory holds
    names = set(name_terms(q.text))
    covered = [(cover[c.entry.id], scores[c.entry.id]) for c in inside]
    unpointed: set[str] = set()
    for cand in leaves:
        if in_scope(cand):
            continue
        score = scores[cand.entry.id]
        pointed = any(
            t in q_terms
            and t not in held_inside
            and (t in names or weights.get(t, 0.0) >= unique - 1e-9)
            for t in cand.matched
        )
        if not pointed:
            unpointed.add(cand.entry.id)
        if pointed or not answering:
            mine = cover[cand.entry.id]
            cap = min((s for cov, s in covered if cov >= mine - 1e-9), default=None)
        else:
            cap = min(answering)
        scores[cand.entry.id] = score if cap is None else min(score, cap * 0.999)
    here_before_everywhere(q, leaves, scores, cover)
    return unpointed


def here_before_everywhere(
    q: Query, leaves: Sequence[Candidate], scores: dict[str, float], cover: dict[str, float]
) -> None:
    """Asked in a project, a memory of no project comes after the project's memories
    that hold as much of the question: "how are the tests run here?" is about this
    project's tests before a general preference about testing, however much shorter
    the general memory is (the words' score favours short memories)."""
    home = q.options.prefer_project
    own = [(cover[c.entry.id], scores[c.entry.id]) for c in leaves if c.entry.project == home]
    if not own:
        return
    for cand in leaves:
        if cand.entry.project:
            continue
        mine = cover[cand.entry.id]
        cap = min((s for cov, s in own if cov >= mine - 1e-9), default=None)
        if cap is not None:
            scores[cand.entry.id] = min(scores[cand.entry.id], cap * 0.999)


def _proper(word: str) -> bool:
    """A proper name ("Ada", "Postgres") or a compound identifier ("cache-dove-20")."""
    word = word.removesuffix("'s").removesuffix("’s")
    return (word[:1].isupper() and word[1:].islower()) or bool(compound_names(word))


NEAREST_SHOWN = 2
"""How many of the closest memories a NOT FOUND answer lists, as not an answer: a wrong
NOT FOUND stays recoverable by the agent or the user at a few tokens' cost. Not when
the question names what nothing stored mentions: that NOT FOUND is certain."""


def closest(
    store: Store, q: Query, ranked: Sequence[Candidate], scores: dict[str, float]
) -> tuple[Hit, ...]:
    """The closest current memories, for a NOT FOUND answer to list as not an answer."""
    current = [c for c in ranked if not q.is_outdated(c.entry)][:NEAREST_SHOWN]
    return tuple(build_hits(store, q, current, scores))


def holds_values(
    store: Store, q: Query, cand: Candidate, asked: Sequence[tuple[str, re.Pattern[str]]]
) -> bool:
    """``cand`` holds a value of every shape the question asks for (none asked: no)."""
    if not asked:
        return False
    text = leaf_text(store, q, cand.entry)
    return all(shape.search(text) for _, shape in asked)


def about_subject(q: Query, first: Candidate, cand: Candidate, cues: frozenset[str]) -> bool:
    """``cand`` holds most (by rarity) of what ``first`` holds of the question, but for
    the words asking for a value (``cues``): both are about the subject the first is
    about ("the build server answers on 10.2.3.4" and "the nightly build server runs
    Ubuntu"). A first memory that holds only such words is about no subject."""
    subject = {t for t in first.matched if t in q.weights and t not in cues}
    total = sum(q.weights[t] for t in subject)
    held = sum(q.weights[t] for t in subject if t in cand.matched)
    return total > 0 and held >= SAME_SUBJECT * total


def holder_of(
    store: Store,
    q: Query,
    window: Sequence[Candidate],
    asked: Sequence[tuple[str, re.Pattern[str]]],
    cues: frozenset[str],
) -> Candidate | None:
    """The best memory that holds every value the question asks for (an email, a
    port…): the first one, or a current one about the same subject: it matched as much
    of the question, or answers as much of it as the first once the value it holds
    counts for the words asking for it, or holds most of what the first holds of the
    question ("the build server answers on 10.2.3.4" for the IP of "the nightly build
    server"); None when none holds them (the memories are about the subject, not about
    what is asked)."""
    first = window[0]
    floor = q.coverage(first)
    # Whose value: a memory that does not name who or what the question names ("Ada's
    # email", "cache-dove-20's port") gives someone else's. Acronyms ("LAN", "GPU") are
    # things, said in other words as often as not ("RTX 3090"): not names.
    never = rarity(q.total, 0)
    names = [
        parts
        for word in name_words(q.text)
        if _proper(word) and (parts := [t for t in terms(word) if q.weights.get(t, never) < never])
    ]
    for cand in window:
        current = cand is first or (
            not q.is_outdated(cand.entry)
            and (
                indistinct(first, cand, q.weights)
                or q.coverage(cand, cues) >= floor
                or about_subject(q, first, cand, cues)
            )
        )
        named = all(any(t in cand.matched for t in parts) for parts in names)
        if current and named and holds_values(store, q, cand, asked):
            return cand
    return None
