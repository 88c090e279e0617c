"""Corrections in an answer, and the memories a correction replaces.

An OUTDATED memory never outranks the one that corrected it (:func:`corrections_first`);
of two statements about one thing the newer comes first (:func:`newer_among_ties`,
:func:`newest_value`) and the older is inferred outdated for this answer only
(:func:`earlier_statements`, :func:`mark_earlier`); every corrected hit carries a
notice naming its correction (:func:`outdated_notices`). :func:`find_corrected` says
which earlier memories a ``replaces`` hint describes.

A memory an agent or the user saved outranks one ``ihmt hook stop`` captured from a
conversation (source :data:`CAPTURED_SOURCE`) when both answer equally well: on an equal
score, and as the newer of two statements about one thing. Someone chose to save the
first; rules only guessed the second, and a capture that changes a fact records its
correction when it is saved, so its recency proves nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ihmt_navigator._candidates import CANDIDATES
from ihmt_navigator._changes import judge
from ihmt_navigator._hits import build_hits
from ihmt_navigator._match import (
    NAMESAKE_POOL,
    TIE_MISSING,
    indistinct,
    is_stray,
    linked,
    same_statement,
)
from ihmt_navigator._query import Query, new_query, started
from ihmt_navigator._question import QUERY_FLUFF
from ihmt_navigator._records import CorrectionMatch, Hit, SearchOptions
from ihmt_store import (
    Candidate,
    CorruptFileError,
    Entry,
    FieldWeights,
    LeafNotFoundError,
    Store,
    one_line,
    terms,
)

__all__ = [
    "CAPTURED_SOURCE",
    "corrections_first",
    "current_statements",
    "earlier_statements",
    "find_corrected",
    "is_captured",
    "mark_earlier",
    "newer_among_ties",
    "newest_value",
    "outdated_notices",
    "restored_against",
]


def find_corrected(
    store: Store,
    field_weights: FieldWeights,
    words: str,
    *,
    project: str | None,
    limit: int,
) -> CorrectionMatch:
    """The earlier memories that ``words`` (a ``replaces`` hint, not empty) describes:
    :meth:`~ihmt_navigator.Navigator.find_corrected`."""
    start = started(store)
    q_terms = [t for t in dict.fromkeys(terms(words)) if t not in QUERY_FLUFF]
    found = (
        store.candidates(
            q_terms, limit=CANDIDATES, weights=field_weights, kinds=("leaf",), project=project
        )
        if q_terms
        else []
    )
    if not found:
        return CorrectionMatch(status="not_found")
    q = new_query(store, words, SearchOptions(project=project, limit=limit), start, q_terms=q_terms)
    weights = q.weights
    scores = {c.entry.id: c.score for c in found}
    cover = {c.entry.id: q.coverage(c) for c in found}
    # Equal fit, the current statement first: a hint that fits a memory and the one
    # that corrected it equally describes what is true now.
    ranked = sorted(
        found,
        key=lambda c: (
            -round(cover[c.entry.id], 6),
            c.entry.outdated_by is not None,
            -scores[c.entry.id],
            c.entry.id,
        ),
    )
    best = ranked[0]
    top = cover[best.entry.id]
    if is_stray(q, best, top):
        hits = build_hits(store, q, ranked[:limit], scores)
        return CorrectionMatch(status="not_found", candidates=tuple(hits), coverage=top)
    s1 = scores[best.entry.id]
    close = [
        c
        for c in ranked[1:]
        if not linked(best.entry, c.entry)
        and cover[c.entry.id] >= top - TIE_MISSING
        and scores[c.entry.id] >= s1 * (1 - store.config.ambiguity_margin)
    ]
    apart = all(
        not indistinct(a, b, weights) and not indistinct(b, a, weights)
        for i, a in enumerate([best, *close])
        for b in close[i:]
        if a is not b
    )
    if close and not apart:
        # Several memories hold the hint's words alike; the one that says them as the
        # hint does, in a row ("plan prices of the gym", not "the gym's owner signs off
        # the prices of every plan"), is the one it quotes.
        quoted = [c for c in (best, *close) if says_in_a_row(q_terms, c.entry.excerpt)]
        if len(quoted) == 1:
            best, close, apart = quoted[0], [], True
    targets = [best, *close] if apart else [best]
    targets += current_statements(targets, ranked)
    hits = build_hits(
        store, q, [*targets, *(c for c in ranked[:limit] if c not in targets)], scores
    )
    if close and not apart:
        return CorrectionMatch(status="ambiguous", candidates=tuple(hits), coverage=top)
    union = tuple(dict.fromkeys(t for c in targets for t in c.matched))
    together = q.coverage(replace(best, matched=union))
    return CorrectionMatch(
        status="found",
        targets=tuple(hits[: len(targets)]),
        candidates=tuple(hits[len(targets) :]),
        coverage=round(together, 3),
    )


def says_in_a_row(words: Sequence[str], text: str) -> bool:
    """True when ``text`` holds the terms ``words`` (two or more) one after the other, in
    their order."""
    if len(words) < 2:
        return False
    said = terms(text)
    n = len(words)
    return any(said[i : i + n] == list(words) for i in range(len(said) - n + 1))


def current_statements(targets: list[Candidate], ranked: list[Candidate]) -> list[Candidate]:
    """The current statements of what the hint describes that it did not pick: a target
    already corrected was corrected by a newer statement of the same thing, and a new
    correction of that thing corrects the newer one too ("the plan prices" replaces the
    price list of 2023 and the one price that changed in 2024). Only a memory that holds some of the
    hint's words (among ``ranked``), the end of the target's chain of corrections."""
    by_id = {c.entry.id: c for c in ranked}
    picked = {c.entry.id for c in targets}
    out: list[Candidate] = []
    for target in targets:
        head, seen = target, {target.entry.id}
        while head.entry.outdated_by is not None and head.entry.outdated_by not in seen:
            newer = by_id.get(head.entry.outdated_by)
            if newer is None:
                break
            seen.add(newer.entry.id)
            head = newer
        if head is not target and head.entry.outdated_by is None and head.entry.id not in picked:
            picked.add(head.entry.id)
            out.append(head)
    return out


CAPTURED_SOURCE = "session"
"""The ``source`` of a memory that ``ihmt hook stop`` captured from a conversation."""


def is_captured(entry: Entry) -> bool:
    """True for a memory captured from a conversation rather than saved by someone."""
    return entry.source == CAPTURED_SOURCE


def corrections_first(
    store: Store, q: Query, ranked: list[Candidate], scores: dict[str, float]
) -> list[Candidate]:
    """Move each OUTDATED leaf's current version (following the chain) right above it;
    first, among equal scores, a saved memory before a captured one (a stable sort keeps
    the order of ``ranked`` otherwise)."""
    ranked = sorted(ranked, key=lambda c: (-scores[c.entry.id], is_captured(c.entry)))
    by_id = {c.entry.id: c for c in ranked}
    out: list[Candidate] = []
    placed: set[str] = set()
    for cand in ranked:
        if cand.entry.id in placed:
            continue
        chain: list[Candidate] = []
        current = cand
        seen = {cand.entry.id}
        while q.is_outdated(current.entry) and len(chain) < 10:
            change = q.correction_of(current.entry)
            assert change is not None
            nxt_id = change.by
            if nxt_id in seen:
                break
            seen.add(nxt_id)
            nxt = by_id.get(nxt_id)
            if nxt is None:
                entry = store.entry(nxt_id)
                if entry is None or not q.admits(entry):
                    break
                judge(store, q, [entry])
                nxt = Candidate(entry=entry, score=cand.score, matched=())
            # The current version answers what its outdated version matched.
            inherited = tuple(dict.fromkeys((*nxt.matched, *current.matched)))
            nxt = Candidate(entry=nxt.entry, score=nxt.score, matched=inherited)
            by_id[nxt_id] = nxt
            chain.append(nxt)
            current = nxt
        for newer in reversed(chain):
            if newer.entry.id not in placed:
                scores[newer.entry.id] = max(scores.get(newer.entry.id, 0.0), scores[cand.entry.id])
                out.append(newer)
                placed.add(newer.entry.id)
        out.append(cand)
        placed.add(cand.entry.id)
    return out


def newer_among_ties(
    q: Query,
    best: Candidate,
    ranked: list[Candidate],
    scores: dict[str, float],
    tie_floor: float,
) -> list[Candidate]:
    """Among current memories of one scope that answer the question equally well, the
    newest comes first: the later of two statements about one thing is the one that
    still holds (a correction saved without ``replaces``)."""
    if q.is_outdated(best.entry):
        return ranked
    ties = [
        c
        for c in ranked[:NAMESAKE_POOL]
        if same_statement(q, best, c, scores, tie_floor)
        and set(best.matched) <= set(c.matched)
        and (is_captured(best.entry) or not is_captured(c.entry))
    ]
    newest = max(ties, key=lambda c: c.entry.timestamp, default=None)
    if newest is None or newest.entry.timestamp <= best.entry.timestamp:
        return ranked
    return [newest, *(c for c in ranked if c is not newest)]


def newest_value(
    q: Query,
    ranked: Sequence[Candidate],
    value: Callable[[Candidate], str | None],
    asking: frozenset[str],
) -> tuple[list[Candidate], set[str]]:
    """Of the current memories of the first one's project that hold what it holds of the
    question (but the words asking for the value, ``asking``) and a version of the thing
    asked about (``value``: "7.2" of "on Quarry 7.2", None without one), the newest
    answers: "kite moved to Quarry 7.2", later
    "kite is on Quarry 8.4", and "Which Quarry version is kite on?" is answered by the
    later, though nobody said it corrects the earlier. A thing has one version in one
    place at a time. A later, vaguer statement of the same version ("Quarry 8" after
    "Quarry 8.4") gives the answer to the more precise one, and outdates nothing.

    Returns:
        The order, and the earlier holders of another version: outdated for this
        answer only.
    """
    first = ranked[0]
    if q.is_outdated(first.entry) or value(first) is None:
        return list(ranked), set()
    subject = set(first.matched) - asking
    held = {
        c.entry.id: v
        for c in ranked[:NAMESAKE_POOL]
        if c.entry.project == first.entry.project
        and not q.is_outdated(c.entry)
        and subject <= set(c.matched)
        and (v := value(c)) is not None
    }
    same = [c for c in ranked[:NAMESAKE_POOL] if c.entry.id in held]
    latest = held[max(same, key=lambda c: c.entry.timestamp).entry.id]

    def agrees(version: str) -> bool:
        return version == latest or version.startswith(latest + ".")

    precise = [c for c in same if agrees(held[c.entry.id])]
    answer = max(precise, key=lambda c: (len(held[c.entry.id]), c.entry.timestamp))
    earlier = {
        c.entry.id
        for c in same
        if not agrees(held[c.entry.id]) and c.entry.timestamp < answer.entry.timestamp
    }
    if answer is first:
        return list(ranked), earlier
    return [answer, *(c for c in ranked if c is not answer)], earlier


def earlier_statements(
    q: Query,
    ranked: Sequence[Candidate],
    scores: dict[str, float],
    tie_floor: float,
) -> set[str]:
    """Older current memories that state what the first one states (same project,
    same question words, half the shorter one's words shared): it corrects them
    although nobody said so. Inferred for this answer only; nothing is recorded. A
    memory whose recorded corrections were judged to leave alone what the question
    asks is not one: it still holds there."""
    first = ranked[0]
    if q.is_outdated(first.entry):
        return set()
    return {
        c.entry.id
        for c in ranked[1:NAMESAKE_POOL]
        if not (c.entry.id in q.corrections and q.corrections[c.entry.id] is None)
        and same_statement(q, first, c, scores, tie_floor)
        and c.entry.timestamp < first.entry.timestamp
        and set(c.matched) == set(first.matched)
    }


def restored_against(store: Store, first: str, earlier: set[str]) -> set[str]:
    """The ``earlier`` statements whose correction by ``first`` an explicit restore
    undid (:attr:`~ihmt_store.Leaf.restored_from`): the restore wins over the inference."""
    if not earlier:
        return set()
    kept = set()
    for leaf_id in earlier:
        entry = store.entry(leaf_id)
        if entry is None:
            continue
        try:
            leaf = store.read_leaf(entry)
        except (LeafNotFoundError, CorruptFileError):
            continue
        if first in leaf.restored_from:
            kept.add(leaf_id)
    return kept


def mark_earlier(hits: list[Hit], earlier: set[str]) -> tuple[list[Hit], list[str]]:
    """The hits with the ``earlier`` statements marked outdated by the first hit, and a
    PROBABLY OUTDATED notice for each."""
    first = hits[0]
    hits = [replace(h, outdated=True, outdated_by=first.id) if h.id in earlier else h for h in hits]
    notices = [
        f'PROBABLY OUTDATED: "{one_line(h.excerpt, 100)}" ({h.timestamp[:10]}, {h.id}) '
        f'says the same thing as the newer "{one_line(first.excerpt, 100)}" '
        f"({first.timestamp[:10]}, {first.id}), which answers first. No correction was "
        "recorded: if the old one still holds, say both."
        for h in hits
        if h.id in earlier
    ]
    return hits, notices


def outdated_notices(store: Store, q: Query, hits: Sequence[Hit]) -> list[str]:
    """An OUTDATED notice for each corrected hit (by the cutoff), naming what changed when
    the correction recorded it and the memory that corrected it (the correcting entries
    in one catalog query). A memory corrected only in what the question does not ask
    about is no corrected hit: it answers as current."""
    as_of = q.as_of
    corrected = [
        hit
        for hit in hits
        if hit.outdated
        and hit.outdated_by is not None
        and (as_of is None or (hit.corrected_on or "") <= as_of)
    ]
    newer = store.entries([h.outdated_by or "" for h in corrected]) if corrected else {}
    notices: list[str] = []
    for hit in corrected:
        by = newer.get(hit.outdated_by or "")
        old = f'"{one_line(hit.excerpt, 100)}" ({hit.timestamp[:10]}, {hit.id})'
        on = f" on {hit.corrected_on[:10]}" if hit.corrected_on else ""
        if by is None:
            # A note pulled before its memory, or written by hand: no text to quote.
            notices.append(
                f"OUTDATED: {old} was corrected{on}; the memory that corrected it "
                f"({hit.outdated_by}) is not in this store (not synced yet?). Relay that "
                "this one is outdated."
            )
            continue
        now = f'"{one_line(by.excerpt, 120)}" ({hit.outdated_by})'
        if hit.changed:
            notices.append(
                f"OUTDATED: {hit.changed}{on} ({hit.outdated_by}), so {old} no longer holds "
                f"on that point; now {now}. Answer with the current version and relay the "
                "change; the rest of the older memory still holds."
            )
            continue
        notices.append(
            f"OUTDATED: {old} was corrected{on} by {now}. Answer with the current version "
            "and relay the correction."
        )
    return notices
