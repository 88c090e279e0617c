"""Editing a JSON (or JSON-with-comments) config in place: :func:`jsonc_update` turns the
text into one holding the data wanted by splicing only what differs — a member or an
array item added at the end, one removed, a value replaced — so that the user's comments,
trailing commas, indentation and order stay as they were, and removing what was added
gives back the same bytes. :func:`jsonc_edit` sets or removes one ``ihmt-memory`` entry
that way (opencode's ``mcp``, the ``mcpServers`` or ``servers`` of the other clients).

An edit is checked by parsing its result: when it would not hold exactly the data wanted
(a key given twice, a shape no splice reaches), it raises :class:`UnsafeEditError` and
the user gets the fragment to paste instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

from ihmt_cli._agent_setup import SERVER_NAME

__all__ = ["UnsafeEditError", "jsonc_edit", "jsonc_update"]

MAX_SPLICES = 200
"""An update needs a few splices; past this many, something is not converging."""


class UnsafeEditError(click.ClickException):
    """The file cannot be edited in place without risk: the user pastes the change."""


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts += [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts


def _span(node: Any, starts: Sequence[int]) -> tuple[int, int]:
    begin = starts[node.lineno - 1] + node.col_offset
    end = starts[node.end_lineno - 1] + node.end_col_offset
    return begin, end


def _key_of(pair: Any) -> str | None:
    key = pair.key
    name = getattr(key, "characters", None)
    if name is None:
        name = getattr(key, "name", None)
    return name if isinstance(name, str) else None


def _indent_at(text: str, offset: int) -> str:
    line = text[text.rfind("\n", 0, offset) + 1 : offset]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _value_text(value: Any, indent: str, unit: str = "  ") -> str:
    """``value`` as JSON, its lines after the first indented by ``indent`` and nested ones
    by ``unit`` more each (the file's own unit, where it shows one)."""
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _parse(text: str) -> Any:
    from json5.loader import ModelLoader, loads

    return loads(text, loader=ModelLoader()).value


def _is_object(node: Any) -> bool:
    return type(node).__name__ == "JSONObject"


def _is_array(node: Any) -> bool:
    return type(node).__name__ == "JSONArray"


def _splice(text: str, begin: int, end: int, piece: str) -> str:
    """``text`` with ``[begin:end]`` replaced by ``piece``, in the text's line endings."""
    if "\r\n" in text:
        piece = piece.replace("\r\n", "\n").replace("\n", "\r\n")
    return text[:begin] + piece + text[end:]


# ---------------------------------------------------------------------- one splice
def _items(node: Any, starts: Sequence[int]) -> list[tuple[int, int]]:
    """Where each member (key to value) or array item of ``node`` begins and ends."""
    if _is_object(node):
        return [(_span(p.key, starts)[0], _span(p.value, starts)[1]) for p in node.key_value_pairs]
    return [_span(v, starts) for v in node.values]


def _insert(text: str, node: Any, starts: Sequence[int], name: str | None, value: Any) -> str:
    """The member ``name: value`` (an array's item: ``name`` None) as ``node``'s last."""
    begin, end = _span(node, starts)
    close = text.rindex("}" if _is_object(node) else "]", begin, end)
    items = _items(node, starts)
    outer = _indent_at(text, begin)
    if items:
        indent = _indent_at(text, items[0][0])
        unit = indent[len(outer) :] if indent.startswith(outer) and indent != outer else "  "
        item = _piece(name, value, indent, unit)
        at = items[-1][1]
        line_end = text.find("\n", at)
        if line_end < 0 or line_end > close:  # the container closes on that line: inline
            return _splice(text, at, at, f",\n{indent}{item}" if indent else f", {item}")
        # A line of its own after the last one (its comma and comment stay where they are),
        # so that removing it gives back the same bytes.
        if text[line_end - 1 : line_end] == "\r":
            line_end -= 1
        after = at
        while after < line_end and text[after] in " \t":
            after += 1
        if text[after : after + 1] == ",":
            return _splice(text, line_end, line_end, f"\n{indent}{item},")
        return _splice(text, at, line_end, "," + text[at:line_end] + f"\n{indent}{item}")
    indent = outer + "  "
    item = _piece(name, value, indent, "  ")
    return _splice(text, begin + 1, close, f"\n{indent}{item}\n{outer}")


def _delete(text: str, begin: int, end: int) -> str:
    """``text`` without the member or item at ``[begin:end]``, its comma, and its line
    when nothing else is on it."""
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        end = after + 1
        if text[text.rfind("\n", 0, begin) + 1 : begin].strip():  # inline: one space stays
            while end < len(text) and text[end] in " \t":
                end += 1
    else:
        before = begin
        while before > 0 and text[before - 1] in " \t\r\n":
            before -= 1
        if before > 0 and text[before - 1] == ",":
            begin = before - 1
    line_start = text.rfind("\n", 0, begin) + 1
    if not text[line_start:begin].strip():
        begin = line_start
        newline = text.find("\n", end)
        if newline >= 0 and not text[end:newline].strip():
            end = newline + 1
    return text[:begin] + text[end:]


def _replace(text: str, node: Any, starts: Sequence[int], value: Any) -> str:
    begin, end = _span(node, starts)
    return _splice(text, begin, end, _value_text(value, _indent_at(text, begin)))


def _piece(name: str | None, value: Any, indent: str, unit: str) -> str:
    text = _value_text(value, indent, unit)
    return text if name is None else f"{json.dumps(name, ensure_ascii=False)}: {text}"


def _next_splice(text: str, node: Any, have: Any, want: Any, starts: Sequence[int]) -> str | None:
    """``text`` after the first splice that brings ``node`` (holding ``have``) nearer to
    ``want``; None when it holds ``want`` already."""
    if have == want and type(have) is type(want):
        return None
    if _is_object(node) and isinstance(want, Mapping) and isinstance(have, Mapping):
        pairs = node.key_value_pairs
        names = [_key_of(p) for p in pairs]
        for pair, name in zip(pairs, names, strict=True):
            if name not in want:
                _twice(names, name)
                begin, end = _span(pair.key, starts)[0], _span(pair.value, starts)[1]
                return _delete(text, begin, end)
        for name, value in want.items():
            if name not in have:
                return _insert(text, node, starts, name, value)
        for name, value in want.items():
            if have[name] != value or type(have[name]) is not type(value):
                _twice(names, name)
                pair = pairs[names.index(name)]
                return _next_splice(text, pair.value, have[name], value, starts) or text
        return None
    if _is_array(node) and isinstance(want, list) and isinstance(have, list):
        if len(have) == len(want):  # an item changed in place
            for child, old, new in zip(node.values, have, want, strict=True):
                if old != new or type(old) is not type(new):
                    return _next_splice(text, child, old, new, starts) or text
            return None
        kept = 0  # items kept in order, the others removed, the rest of want appended
        for child, old in zip(node.values, have, strict=True):
            if kept < len(want) and old == want[kept]:
                kept += 1
                continue
            return _delete(text, *_span(child, starts))
        return _insert(text, node, starts, None, want[kept])
    return _replace(text, node, starts, want)


def _twice(names: Sequence[str | None], name: str | None) -> None:
    if names.count(name) > 1:
        raise UnsafeEditError(f'"{name}" is given twice')


def jsonc_update(text: str, want: Mapping[str, Any]) -> str:
    """``text`` (a JSON object, comments allowed; empty: ``{}``) changed to hold ``want``,
    splicing only what differs.

    Raises:
        UnsafeEditError: the file's shape is not one this edit can change safely.
    """
    import json5

    new = text if text.strip() else "{}\n"
    for _ in range(MAX_SPLICES):
        try:
            have = json5.loads(new)
            root = _parse(new)
        except Exception as exc:  # noqa: BLE001 — json-five raises several unrelated types
            raise UnsafeEditError(f"the edited text does not parse ({exc})") from None
        if not _is_object(root) or not isinstance(have, dict):
            raise UnsafeEditError("it does not hold a JSON object")
        spliced = _next_splice(new, root, have, dict(want), _line_starts(new))
        if spliced is None:
            return new
        if spliced == new:
            raise UnsafeEditError("the edit would change more than what ihmt adds")
        new = spliced
    raise UnsafeEditError("the edit does not converge")


def jsonc_edit(
    text: str, entry: Mapping[str, Any] | None, *, keep_empty: bool = False, key: str = "mcp"
) -> str:
    """``text`` with ``KEY.ihmt-memory`` set to ``entry`` (None: removed), comments kept.

    Removing the last server removes ``KEY`` too, unless ``keep_empty`` (the user's
    original file had it).

    Raises:
        UnsafeEditError: the file's shape is not one this edit can change safely.
    """
    import json5

    try:
        before = json5.loads(text if text.strip() else "{}")
    except Exception as exc:  # noqa: BLE001 — json-five raises several unrelated types
        raise UnsafeEditError(f"it does not parse ({exc})") from None
    if not isinstance(before, dict):
        raise UnsafeEditError("it does not hold a JSON object")
    servers = before.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise UnsafeEditError(f'"{key}" is not an object')
    if entry is None and SERVER_NAME not in (servers or {}):
        return text
    want = json.loads(json.dumps(before))
    mcp = dict(want.get(key) or {})
    if entry is None:
        mcp.pop(SERVER_NAME, None)
    else:
        mcp[SERVER_NAME] = dict(entry)
    if mcp or (keep_empty and key in want):
        want[key] = mcp
    else:
        want.pop(key, None)
    return jsonc_update(text, want)
