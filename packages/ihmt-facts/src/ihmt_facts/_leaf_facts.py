"""The facts a leaf holds on its own, and when two facts are the same.

A fact recorded about a leaf is kept in its header's ``extra`` (:data:`FACTS_KEY`); one
recorded without a source gets a small leaf of its own (:func:`fact_leaf`, tagged
:data:`FACT_TAG`, never run through the rules). Facts are compared by subject,
attribute, moment, source and value (:func:`same_fact`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ihmt_facts._journal import LeafRecord
from ihmt_facts._records import (
    Contradiction,
    Fact,
    normalize_attribute,
    normalize_subject,
    normalize_value,
    parse_moment,
    value_key,
)
from ihmt_store import Leaf, leaf_id_for

__all__ = [
    "FACTS_KEY",
    "FACT_DOMAIN",
    "FACT_SOURCE",
    "FACT_TAG",
    "contains",
    "dedupe",
    "explicit_fact",
    "explicit_items",
    "fact_leaf",
    "involves",
    "record_facts_of_fact_leaf",
    "same_fact",
]

FACTS_KEY = "facts"
"""Key of a leaf header's ``extra`` holding the facts recorded explicitly about it."""
FACT_DOMAIN = "facts"
"""Domain of the small leaves that hold facts recorded without a source leaf."""
FACT_SOURCE = "ihmt-facts"
FACT_TAG = "kind:fact"
"""Tag of those leaves; their text is never run through the extraction rules."""


def explicit_items(leaf: Leaf) -> list[Any]:
    items = leaf.extra.get(FACTS_KEY) if isinstance(leaf.extra, Mapping) else None
    return list(items) if isinstance(items, list) else []


def explicit_fact(item: Mapping[str, Any], leaf: Leaf) -> Fact:
    when = item.get("timestamp")
    return Fact(
        subject=normalize_subject(item["subject"]),
        attribute=normalize_attribute(item["attribute"]),
        value=normalize_value(item["value"]),
        timestamp=parse_moment(when) if when else leaf.timestamp,
        source=leaf.leaf_id,
        origin="explicit",
    )


def same_fact(a: Fact, b: Fact) -> bool:
    return (
        a.subject == b.subject
        and a.attribute == b.attribute
        and a.timestamp == b.timestamp
        and a.source == b.source
        and value_key(a.value) == value_key(b.value)
    )


def contains(record: LeafRecord | None, fact: Fact) -> bool:
    return record is not None and any(same_fact(f, fact) for f in record.facts)


def dedupe(facts: list[Fact]) -> tuple[Fact, ...]:
    kept: list[Fact] = []
    for f in facts:
        if not any(same_fact(f, k) for k in kept):
            kept.append(f)
    return tuple(kept)


def involves(change: Contradiction, f: Fact) -> bool:
    if (change.subject, change.attribute) != (f.subject, f.attribute):
        return False
    if change.new_source == f.source and value_key(change.new_value) == value_key(f.value):
        return True
    return f.source in change.old_sources and value_key(change.old_value) == value_key(f.value)


def record_facts_of_fact_leaf(leaf: Leaf) -> tuple[Fact, ...]:
    return tuple(explicit_fact(item, leaf) for item in explicit_items(leaf))


def fact_leaf(subject: str, attribute: str, value: str, moment: str) -> Leaf:
    when = moment[:10] if moment.endswith("T00:00:00Z") else moment
    text = f"Fact: {subject} {attribute} = '{value}' (as of {when})"
    project = ""
    kind, _, name = subject.partition(":")
    if kind == "project":
        project = name
    elif kind == "host" and "/" in name:
        project = name.split("/", 1)[0]
    return Leaf(
        leaf_id=leaf_id_for(domain=FACT_DOMAIN, source=FACT_SOURCE, position=0, text=text),
        text=text,
        timestamp=moment,
        domain=FACT_DOMAIN,
        data_type="PERSONAL",
        source=FACT_SOURCE,
        tags=(FACT_TAG,),
        project=project,
        extra={
            FACTS_KEY: [
                {"subject": subject, "attribute": attribute, "value": value, "timestamp": moment}
            ]
        },
    )
