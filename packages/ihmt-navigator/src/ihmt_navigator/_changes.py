"""Corrections at the level of facts: which correction of a memory a question is about.

A correction changes part of a memory ("the server moved to rack B7": its IP and its owner
did not move). The older memory stays true on its own date; what changes is that the part
corrected can no longer be read as current. Each correction a memory received is kept in
its header's ``extra`` under :data:`CORRECTIONS_KEY` (the facts timeline writes it): the
memory that corrected it, when, the facts it changed and the words of the ``replaces``
hint that chose it.

What a correction speaks of is the words of its hint and of the facts it changed, the
clauses of the older memory that hold them (the part it points at), and the correcting
memory's own words, but for its clauses that say a part did not change ("the demo day
doesn't change"). The subject both are about (the project's name, a host or another
named thing both name) is not a part of it and counts for nothing. A question that
finds in the older memory only words no correction speaks of, and there most of its
words that the store holds (by rarity), is answered by what did not change: the memory answers it as
current, without an OUTDATED flag. Otherwise the
correction that speaks of most of it (by the rarity of the words; in its own words
before the clauses it points at; the latest on a tie) is the one it is about; when in
doubt, the memory stays flagged. A correction that recorded nothing of what it changed
(a flag set by hand) holds for the whole memory. :func:`judge` decides that once per
call, for the corrected memories among the candidates.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ihmt_navigator._hits import leaf_text, read_once
from ihmt_navigator._query import Change, Query
from ihmt_navigator._question import asked_for, compound_names
from ihmt_store import CorruptFileError, Entry, Leaf, LeafNotFoundError, Store, terms

logger = logging.getLogger(__name__)

__all__ = [
    "CORRECTIONS_KEY",
    "JUDGED",
    "asked_of",
    "changed_words",
    "changes_of",
    "judge",
    "pointed_at",
    "value_left",
]

_CLAUSES = re.compile(r"[;:!?()\[\]]|[.,](?=\s|$)|\s(?:and|but|y|pero)\s")
"""Where a clause of a memory ends (not inside "1.84.0" or "a.b.com"; "and" too: "its
IP is 10.0.4.17 and the platform team owns it" says two things)."""
_UNCHANGED = re.compile(
    r"\b(still|unchanged|stays?|remains?|as before|(?:does|do|did)(?:\s+no|n['’]?)t\s+change|"
    r"sigue|siguen|todav[ií]a|no cambi\w*|sin cambios|igual que antes)\b",
    re.IGNORECASE,
)
"""Words of a clause that says a part of a memory did not change (EN/ES)."""

_VERSIONED = re.compile(r"\b[^\W\d_][\w.+#-]*\s+v?\d+(?:\.\d+)*\b")
"""A name followed by a number: a version of something ("Elixir 1.15", "OTP 26")."""

JUDGED = 10
"""Candidates judged per call, best first: the answer and the memories listed with it
come from them, and each corrected one costs a file read, and one per memory that
corrected it when the question holds any of its words or asks for a value."""

CORRECTIONS_KEY = "corrections"
"""Key of a leaf header's ``extra`` listing the corrections the leaf received, oldest
first: ``{"by": id, "date": timestamp, "changed": [{"attribute", "from", "to"}...],
"hint": words}`` (the facts timeline writes it under the same name)."""


def changes_of(leaf: Leaf) -> list[Change]:
    """The corrections a leaf received, oldest first; for a leaf flagged OUTDATED before
    corrections were recorded one by one, its flag alone (what changed unknown)."""
    out: list[Change] = []
    items = leaf.extra.get(CORRECTIONS_KEY) if isinstance(leaf.extra, Mapping) else None
    for item in items if isinstance(items, list) else []:
        change = _change(item)
        if change is not None and all(c.by != change.by for c in out):
            out.append(change)
    flag = leaf.outdated_by
    if flag is not None and all(c.by != flag.by for c in out):
        out.append(Change(by=flag.by, date=flag.date, what="", words=frozenset()))
    return out


def judge(store: Store, q: Query, entries: Sequence[Entry]) -> None:
    """Decide, for each corrected memory among the first :data:`JUDGED` of ``entries``
    (best first) not judged yet in this call, which of its corrections (if any) the
    question is about (:attr:`Query.corrections`). One not judged keeps its flag whole."""
    todo = [e for e in entries[:JUDGED] if e.outdated_by and e.id not in q.corrections]
    if not todo:
        return
    leaves: dict[str, Leaf] = {}
    for entry in todo:
        try:
            leaf = read_once(store, q, entry)
        except (LeafNotFoundError, CorruptFileError):
            continue  # the store says why; the memory keeps its flag as it is
        leaves[entry.id] = leaf
        q.texts.setdefault(entry.id, leaf.text)
    histories = {leaf_id: changes_of(leaf) for leaf_id, leaf in leaves.items()}
    newer: dict[str, Entry] | None = None
    as_of = q.as_of
    asked = asked_for(q.text)
    for entry in todo:
        if entry.id not in leaves:
            continue
        old_text = leaves[entry.id].text
        old_terms = frozenset(terms(old_text))
        if not asked and not any(old_terms.intersection(group) for group in q.groups):
            # The question finds none of its words here and asks for no value: every
            # correction weighs the same (nothing of the question is what it changed, or
            # what it left alone), so the latest holds, as it would below; the
            # correcting memories need not be read.
            q.corrections[entry.id] = _latest(histories[entry.id], as_of)
            continue
        if newer is None:
            newer = store.entries(list({c.by for h in histories.values() for c in h}))
        best: tuple[float, float, str] | None = None
        chosen: Change | None = None
        for change in histories[entry.id]:
            if as_of is not None and change.date > as_of:
                continue  # after the cutoff
            by = newer.get(change.by)
            if by is None or not change.words:
                # What it changed is not known (a flag set by hand, or before corrections
                # were recorded), or cannot be read (the correcting memory is not in this
                # store: a pull brought the flag first): it holds for the whole memory,
                # as it was made.
                rank = (0.0, 0.0, change.date)
                if best is None or rank > best:
                    best, chosen = rank, change
                continue
            new_text = leaf_text(store, q, by)
            subject = _subject(entry, old_text, new_text)
            said = change.words | changed_words(new_text)
            words = said | pointed_at(old_text, change.words - subject)
            about, other = asked_of(q, old_terms, words, subject)
            if about == 0 and other > 0 and other >= _asked(q, subject) / 2:
                continue  # answered by what this correction left alone
            if asked and value_left(old_text, new_text, (change.words | said) - subject, asked):
                continue  # the value asked for is one this correction left alone
            # What the correction says in its own words first, then what it points at.
            rank = (asked_of(q, old_terms, said, subject)[0], about, change.date)
            if best is None or rank > best:
                best, chosen = rank, change
        q.corrections[entry.id] = chosen


def _latest(history: Sequence[Change], as_of: str | None) -> Change | None:
    """The latest correction of ``history`` by the cutoff (the first of those of one
    date), or None: what :func:`judge` chooses when every correction weighs the same."""
    chosen: Change | None = None
    for change in history:
        if (as_of is None or change.date <= as_of) and (
            chosen is None or change.date > chosen.date
        ):
            chosen = change
    return chosen


def changed_words(text: str) -> frozenset[str]:
    """The terms of a correcting memory, but for its clauses that say a part did not
    change ("the weekly review stays as it is", "Marta still approves it",
    "las otras dos no cambian"): a correction that restates what holds does not speak
    of it as changed."""
    kept = [c for c in _CLAUSES.split(text) if c and not _UNCHANGED.search(c)]
    return frozenset(terms(" ".join(kept)))


def value_left(
    old_text: str,
    new_text: str,
    words: frozenset[str],
    asked: Sequence[tuple[str, re.Pattern[str]]],
) -> bool:
    """True when a correction left alone every value the question asks for (``asked``:
    its shapes): the older memory holds one of each shape, each in clauses that hold
    none of the correction's words (``words``: its hint, its recorded changes and its own
    words, but for the subject's), and the correcting memory gives no value of that shape
    (but in a clause saying it did not change) nor, for a version, a version of
    anything (a restated stack may have moved each of its parts). "The NAS moved to
    rack B7" leaves the IP of "the NAS sits in rack B3; its IP is 10.0.9.5" as it was;
    "the NAS is now on 10.0.9.8" does not. In doubt (a value in a clause the
    correction speaks of), no."""
    clauses = [c for c in _CLAUSES.split(old_text) if c]
    given = " ".join(c for c in _CLAUSES.split(new_text) if c and not _UNCHANGED.search(c))
    for name, shape in asked:
        held = [c for c in clauses if shape.search(c)]
        if not held or shape.search(given):
            return False
        if name.endswith(" version") and _VERSIONED.search(given):
            return False  # it gives versions: which ones it restated is in doubt
        if any(words.intersection(terms(c)) for c in held):
            return False
    return True


def pointed_at(text: str, words: frozenset[str]) -> frozenset[str]:
    """The terms of the clauses of an older memory that hold one of ``words`` (what a
    correction recorded as changed): "runs PostgreSQL 15" is the part of "the build box
    runs PostgreSQL 15; its backups go to the NAS" that a hint about the build box's
    PostgreSQL points at, and "its backups go to the NAS" is not."""
    if not words:
        return frozenset()
    out: set[str] = set()
    for clause in _CLAUSES.split(text):
        held = set(terms(clause or ""))
        if held & words:
            out |= held
    return frozenset(out)


def asked_of(
    q: Query, old_terms: frozenset[str], changed: frozenset[str], subject: frozenset[str]
) -> tuple[float, float]:
    """How much (by rarity) of what the question finds in an older memory (its terms
    ``old_terms``) is what a correction changed (its terms ``changed``), and how much
    is not; the words of the subject (``subject``) count for neither."""
    about = other = 0.0
    changed = changed - subject
    for group in q.groups:
        if not old_terms.intersection(group) or subject.issuperset(group):
            continue
        weight = max(q.weights.get(t, 0.0) for t in group)
        if changed.intersection(group):
            about += weight
        else:
            other += weight
    return about, other


def _asked(q: Query, subject: frozenset[str]) -> float:
    """The weight (by rarity) of the question's words that some memory holds, but for
    the subject's (a word no memory holds tells no part of one from another)."""
    return sum(
        max(q.weights.get(t, 0.0) for t in group)
        for group in q.groups
        if not subject.issuperset(group) and any(q.df.get(t, 0) for t in group)
    )


def _subject(entry: Entry, old_text: str, new_text: str) -> frozenset[str]:
    """The terms of what an older memory and its correction are both about: the
    project's name, and the named things (a host "atlas-7", a "db01.prod") both name."""
    out = set(terms(entry.project)) if entry.project else set()
    said = set(terms(new_text))
    for _, parts in compound_names(old_text):
        if said.issuperset(parts):
            out.update(parts)
    return frozenset(out)


def _change(item: Any) -> Change | None:
    """One recorded correction, or None for a malformed one (a hand edit)."""
    if not isinstance(item, Mapping):
        return None
    by, date = item.get("by"), item.get("date")
    if not isinstance(by, str) or not by or not isinstance(date, str):
        return None
    named: list[str] = []
    words: set[str] = set()
    changed = item.get("changed")
    for fact in changed if isinstance(changed, list) else []:
        if not isinstance(fact, Mapping):
            continue
        attribute, old, new = (str(fact.get(k) or "") for k in ("attribute", "from", "to"))
        if attribute:
            named.append(f"{attribute} changed to {new}" if new else f"{attribute} changed")
            words.update(terms(f"{attribute} {old}"))
    hint = item.get("hint")
    if isinstance(hint, str) and hint.strip():
        named.append(f'"{" ".join(hint.split())}" changed')
        words.update(terms(hint))
    return Change(by=by, date=date, what="; ".join(named), words=frozenset(words))
