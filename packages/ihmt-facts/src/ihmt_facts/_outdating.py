"""When a change of value is evidence enough to flag the earlier memory OUTDATED.

A change is always recorded and relayed; these rules say when it also hides the memory
it superseded (``Timeline`` applies them when it flags leaves through the store): not
when the attribute only repeats the subject's name, nor when one version of a memory
that lists several moved.
"""

from __future__ import annotations

import re

from ihmt_facts._journal import LeafRecord

__all__ = ["VERSION_SUFFIX", "all_restated", "names_only_its_subject"]

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
