"""A note's front matter (Obsidian, basic-memory…), read within bounds: its size, its YAML
aliases, the values they expand to and how deep they nest. ``_portable``'s
:class:`~ihmt_mcp._portable.NoteMeta` says what the metadata means for a memory."""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "MAX_FRONT_MATTER",
    "MAX_FRONT_MATTER_ALIASES",
    "MAX_FRONT_MATTER_DEPTH",
    "MAX_FRONT_MATTER_VALUES",
    "FrontMatterTooLargeError",
    "read_front_matter",
]

MAX_FRONT_MATTER = 65_536
"""Characters a note's front matter may hold; a note with more is skipped (front matter
is a few lines of metadata: more is a mistake or an attack, and read as text it would
become thousands of memories of ``key: value``)."""
MAX_FRONT_MATTER_ALIASES = 16
"""YAML aliases (``*name``) a front matter may use; with more it is kept as text. Each
alias may repeat a whole list or mapping, so a few hundred bytes of nested aliases
("billion laughs") stand for billions of values."""
MAX_FRONT_MATTER_VALUES = 10_000
"""Values (aliases expanded) a front matter may stand for; with more it is kept as text."""
MAX_FRONT_MATTER_DEPTH = 32
"""Levels of lists and mappings a front matter may nest; deeper, it is kept as text."""
_FENCE = re.compile(r"^-{3,}\s*$", re.MULTILINE)
"""A ``---`` line: python-frontmatter's own boundary."""
_ALIAS = re.compile(r"(?:^|[\s\[{,])\*[^\s,\[\]{}]")
"""Where a YAML alias may be: counted on the raw text, so a ``*`` that starts a word inside
a quoted string counts too (an upper bound: the note is then only kept as text)."""


class FrontMatterTooLargeError(ValueError):
    """A note's front matter is longer than :data:`MAX_FRONT_MATTER`: skip the note, with
    this message as the reason."""


def read_front_matter(text: str) -> tuple[dict[str, Any], str, str]:
    """Split a Markdown note into its YAML front matter and its body.

    Returns:
        (metadata, body, problem): without front matter, ``({}, text, "")``; with front
        matter that is not valid YAML (or not a mapping), or that expands beyond
        :data:`MAX_FRONT_MATTER_ALIASES`, :data:`MAX_FRONT_MATTER_VALUES` or
        :data:`MAX_FRONT_MATTER_DEPTH`, ``({}, text, why)`` so the note is kept whole
        and the caller can say so.

    Raises:
        FrontMatterTooLargeError: the front matter is longer than :data:`MAX_FRONT_MATTER`
            (its closing ``---`` is further, or never comes in a text that goes on past it
            with ``key: value`` lines).
    """
    start = text.lstrip("\ufeff")
    opening = _FENCE.match(start)
    if opening is None:
        return {}, text, ""
    closing = _FENCE.search(start, opening.end())
    if closing is None or closing.start() - opening.end() > MAX_FRONT_MATTER:
        if len(start) - opening.end() > MAX_FRONT_MATTER and _looks_like_keys(
            start[opening.end() : opening.end() + MAX_FRONT_MATTER]
        ):
            raise FrontMatterTooLargeError(
                f"its front matter is longer than {MAX_FRONT_MATTER:,} characters, "
                "the most a note's metadata may hold"
            )
        return {}, text, ""  # no closing line near: a note that starts with a rule
    meta, problem = _load_front_matter(start[opening.end() : closing.start()])
    if problem:
        return {}, text, problem
    # The closing '---' and the line break (and blank lines) that separate it from the
    # body are dropped; the rest is kept byte for byte.
    return meta, start[closing.end() :].lstrip("\r\n"), ""


def _looks_like_keys(head: str) -> bool:
    """True when ``head`` (the start of a long unclosed front matter, cut at a line end
    when it has one) reads as a YAML mapping: metadata, not a note's text."""
    cut = head.rfind("\n")
    meta, problem = _load_front_matter(head[:cut] if cut > 0 else head)
    return bool(meta) and not problem


def _load_front_matter(raw: str) -> tuple[dict[str, Any], str]:
    """The mapping a front matter holds, or ``({}, why)`` when it is no bounded mapping."""
    if len(_ALIAS.findall(raw)) > MAX_FRONT_MATTER_ALIASES:
        return {}, (
            f"its front matter uses more than {MAX_FRONT_MATTER_ALIASES} YAML aliases "
            "(*name); kept as text"
        )
    from frontmatter.default_handlers import YAMLHandler

    try:
        meta = YAMLHandler().load(raw)
    except Exception as exc:  # noqa: BLE001 - any YAML error: the note is kept whole
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        return {}, f"its front matter is not valid YAML{where}; kept as text"
    if meta is None:
        return {}, ""
    if not isinstance(meta, dict):
        return {}, "its front matter is not a list of keys; kept as text"
    if _expands_too_far(meta):
        return {}, (
            f"its front matter stands for more than {MAX_FRONT_MATTER_VALUES:,} values or "
            f"{MAX_FRONT_MATTER_DEPTH} levels (YAML aliases); kept as text"
        )
    return {str(k): v for k, v in meta.items()}, ""


def _expands_too_far(value: Any) -> bool:
    """True when ``value`` (aliases counted each time they are used) holds more than
    :data:`MAX_FRONT_MATTER_VALUES` values or nests deeper than
    :data:`MAX_FRONT_MATTER_DEPTH`: walked without recursion, stopped at the bound."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > MAX_FRONT_MATTER_VALUES or depth > MAX_FRONT_MATTER_DEPTH:
            return True
        if isinstance(node, dict):
            stack.extend((item, depth + 1) for pair in node.items() for item in pair)
        elif isinstance(node, (list, tuple, set)):
            stack.extend((item, depth + 1) for item in node)
    return False
