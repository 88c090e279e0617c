"""When a change of value is evidence enough to flag the earlier memory OUTDATED, and what
the flag says changed.

A change is always recorded and relayed; these rules say when it also hides the memory
it superseded (``Timeline`` applies them when it flags leaves through the store): not
when the attribute only repeats the subject's name, nor when one version of a memory
that lists several moved.

A correction is about facts, not a whole memory: every correction a leaf receives is
listed in its header's ``extra`` (:data:`CORRECTIONS_KEY`, :func:`with_correction`) with
the facts it changed and the words of a ``replaces`` hint, so a search can tell a
question about what changed from one about what did not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ihmt_facts._fold import State
from ihmt_facts._journal import LeafRecord, Outdated
from ihmt_facts._records import Contradiction, Fact, value_key
from ihmt_store import Correction, Leaf, LeafNotFoundError, Store

__all__ = [
    "CORRECTIONS_KEY",
    "MAX_CORRECTIONS",
    "VERSION_SUFFIX",
    "all_restated",
    "changed_facts",
    "flag_superseded",
    "names_only_its_subject",
    "with_correction",
    "without_correction",
]

CORRECTIONS_KEY = "corrections"
"""Key of a leaf header's ``extra`` listing the corrections the leaf received, oldest
first: ``{"by": id, "date": timestamp, "changed": [{"attribute", "from", "to"}...],
"hint": words}``. The navigator reads it under the same name to flag a memory OUTDATED
only for questions about what changed."""
MAX_CORRECTIONS = 16
"""Corrections kept per leaf (the oldest go first)."""

_WORDS = re.compile(r"[^\W_]+")


VERSION_SUFFIX = " version"
"""Attributes of the ``tech-version`` rule ("django version")."""


def all_restated(
    record: LeafRecord | None, new_source: str, restated: set[tuple[str, str, str]]
) -> bool:
    """True when the new leaf gives a new value for every fact of the old one, and there
    are several: a memory that says "Django 4.2 and Python 3.11" is outdated by one that
    says "Django 5.2 and Python 3.13", not by one that only moves Python. A single
    version is no evidence that two memories are about the same machine or component
    ("the canary box runs Python 3.11" does not outdate "db-primary runs Python 3.13")."""
    if record is None or len(record.facts) < 2:
        return False
    return all((new_source, f.subject, f.attribute) in restated for f in record.facts)


def names_only_its_subject(subject: str, attribute: str) -> bool:
    """True when the attribute is made only of words of the subject's own name.

    "falcon-api moved to Nomad 1.7" gives (project:falcon-api, api): that says
    what the project moved to, not which part of it, so a later move of any part would
    read as a change of the same value. Such a change is recorded and relayed, but it
    does not flag the earlier memory OUTDATED: when in doubt, nothing is hidden.
    """
    name = set(_WORDS.findall(subject.partition(":")[2].casefold()))
    words = set(_WORDS.findall(attribute.casefold()))
    return bool(words) and words <= name


def changed_facts(old: Iterable[Fact], new: Iterable[Fact]) -> list[dict[str, str]]:
    """The facts of ``old`` to which ``new`` gives another value (same subject and
    attribute), as the correction records them."""
    newer = list(new)
    out: list[dict[str, str]] = []
    for f in old:
        for g in newer:
            if (g.subject, g.attribute) != (f.subject, f.attribute):
                continue
            if value_key(g.value) == value_key(f.value):
                continue
            item = {"attribute": f.attribute, "from": f.value, "to": g.value}
            if item not in out:
                out.append(item)
    return out


def with_correction(
    leaf: Leaf, by: str, date: str, changed: list[dict[str, str]], hint: str = ""
) -> list[dict[str, Any]]:
    """``leaf``'s list of corrections with this one; one by ``by`` already listed is
    updated in place (what it knew stays unless this call says more)."""
    items = _corrections(leaf)
    item: dict[str, Any] = next((i for i in items if i.get("by") == by), {})
    if not item:
        items.append(item)
    item.update(by=by, date=date)
    if changed:
        item["changed"] = changed
    if hint.strip():
        item["hint"] = " ".join(hint.split())
    return items[-MAX_CORRECTIONS:]


def without_correction(leaf: Leaf, by: str) -> list[dict[str, Any]] | None:
    """``leaf``'s list of corrections without the one by ``by`` (undone), or None when it
    holds none by ``by``."""
    items = _corrections(leaf)
    kept = [item for item in items if item.get("by") != by]
    return kept if len(kept) != len(items) else None


def _corrections(leaf: Leaf) -> list[dict[str, Any]]:
    items = leaf.extra.get(CORRECTIONS_KEY) if isinstance(leaf.extra, Mapping) else None
    if not isinstance(items, list):
        return []
    return [dict(item) for item in items if isinstance(item, Mapping)]


Annotate = Callable[..., Leaf]
"""``annotate(leaf_id, outdated_by=..., extra=...)``: the timeline's write of a leaf's
annotations (in its batch)."""


def flag_superseded(
    state: State,
    store: Store,
    annotate: Annotate,
    record_of: Callable[[Leaf], LeafRecord],
    changes: list[Contradiction],
    pending: list[LeafRecord],
) -> None:
    """Annotate the leaves a change superseded, through the store (one flag per leaf),
    each with the facts the superseding leaf changed in it."""
    done: set[str] = set()
    restated = {(c.new_source, c.subject, c.attribute) for c in changes}
    for change in sorted(changes, key=lambda c: c.new_date):
        if names_only_its_subject(change.subject, change.attribute.removesuffix(VERSION_SUFFIX)):
            continue  # recorded, but too vague to hide a memory
        for old in change.old_sources:
            if old == change.new_source or old in done:
                continue
            if change.attribute.endswith(VERSION_SUFFIX) and not all_restated(
                state.leaves.get(old), change.new_source, restated
            ):
                continue  # one tool's version moved; the rest of that memory holds
            done.add(old)
            entry = store.entry(old)
            if entry is None:
                continue
            current = entry.outdated_by
            if current == change.new_source:
                continue
            if current is not None and not state.explained(old, current):
                continue  # an explicit supersession wins over a change of one value
            newer = store.entry(change.new_source)
            if newer is not None and newer.outdated_by == old:
                # ``old`` corrected the leaf said to change it: two statements of one
                # moment, ordered by id; the explicit correction says which is newer.
                continue
            _flag(state, store, annotate, record_of, change, old, pending)


def _flag(
    state: State,
    store: Store,
    annotate: Annotate,
    record_of: Callable[[Leaf], LeafRecord],
    change: Contradiction,
    old: str,
    pending: list[LeafRecord],
) -> None:
    known = state.leaves.get(old)
    newer = state.leaves.get(change.new_source)
    changed = changed_facts(known.facts, newer.facts) if known and newer else []
    extra: dict[str, Any] = {}
    try:
        leaf = store.read_leaf(old)
    except LeafNotFoundError:
        leaf = None
    if leaf is not None:
        extra = {
            CORRECTIONS_KEY: with_correction(leaf, change.new_source, change.new_date, changed)
        }
    correction = Correction(by=change.new_source, date=change.new_date, reason=change.notice)
    annotated = annotate(old, outdated_by=correction, extra=extra)
    record = (
        LeafRecord(old, known.facts, Outdated(change.new_source, change.new_date))
        if known is not None
        else record_of(annotated)
    )
    state.put(record)
    pending.append(record)
