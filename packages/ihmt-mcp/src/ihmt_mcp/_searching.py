"""The options of a search and the checks before one: what ``Memory.search`` and
``Memory.ask`` share."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, TypedDict, cast

from ihmt_mcp._arguments import parse_domain

if TYPE_CHECKING:
    from ihmt_navigator import Detail, Navigator, SearchOptions
    from ihmt_store import Store

__all__ = [
    "HAND_EDIT_CHECK_S",
    "HAND_EDIT_MARK",
    "SearchKeywords",
    "check_query",
    "search_options",
    "shared_look_due",
]

HAND_EDIT_CHECK_S = 60.0
"""How often (at most) a search looks for leaves edited by hand whose size changed: on
the first search of a process, then once a minute (a ``stat`` per leaf)."""
HAND_EDIT_MARK = "hand-edits.checked"
"""A file under ``state/`` whose time says when a one-shot process last looked (see
:attr:`Memory.hand_edit_shared`)."""


class SearchKeywords(TypedDict, total=False):
    """The keywords of :meth:`Memory.search` (after the query and the clue), which
    :meth:`Memory.ask` takes too."""

    detail: str
    as_of: str | date | datetime | None
    project: str | None
    limit: int
    domain: str | None
    alternatives: Sequence[str]


def search_options(
    current: str,
    detail: str,
    as_of: str | date | datetime | None,
    limit: int,
    domain: str | None,
    alternatives: Sequence[str] = (),
) -> SearchOptions:
    """A search's options: the current project preferred (not required), a FOUND answer
    from another project noted as such, and the asker's other phrasings of the question
    (tried when it is NOT FOUND as asked)."""
    from ihmt_navigator import SearchOptions

    return SearchOptions(
        detail=cast("Detail", detail),  # the record checks it
        as_of=as_of or None,
        prefer_project=current or None,
        note_other_project=True,
        domain=parse_domain(domain) if domain else None,
        limit=limit,
        alternatives=(alternatives,) if isinstance(alternatives, str) else tuple(alternatives),
    )


def check_query(navigator: Navigator, query: str) -> None:
    """An empty query is refused before the options are checked, as the navigator does:
    it raises its own ValueError, so the message is said in one place."""
    if not isinstance(query, str) or not query.strip():
        navigator.search(query)


def shared_look_due(store: Store, every: float) -> bool:
    """Whether it is time for a shared look for hand edits (none in the last ``every``
    seconds, by the mark's time); if so, the mark says now. A mark from the future (a
    clock set back) or that cannot be read or written counts as due."""
    mark = store.state_file(HAND_EDIT_MARK)
    try:
        age = time.time() - mark.stat().st_mtime
    except OSError:
        age = -1.0
    if 0 <= age < every:
        return False
    try:
        mark.touch()  # an existing mark's time set to now
    except OSError:
        pass
    return True
