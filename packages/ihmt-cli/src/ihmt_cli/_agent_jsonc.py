"""Editing opencode's JSON-with-comments config in place: set or remove the
``mcp.ihmt-memory`` entry by splicing the text, so that the user's comments, trailing
commas and order stay as they were, and removing the entry gives back the same bytes.

An edit is checked by parsing its result: when it would change more than the entry, it
raises :class:`UnsafeEditError` and the user gets the fragment to paste instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

from ihmt_cli._agent_setup import SERVER_NAME

__all__ = ["UnsafeEditError", "jsonc_edit"]


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


def _value_text(value: Any, indent: str) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _jsonc_pairs(text: str) -> tuple[Any, list[int]]:
    from json5.loader import ModelLoader, loads

    model = loads(text, loader=ModelLoader())
    return model.value, _line_starts(text)


def _pair(obj: Any, name: str) -> Any:
    return next((p for p in obj.key_value_pairs if _key_of(p) == name), None)


def _insert_pair(text: str, obj: Any, starts: Sequence[int], name: str, value: Any) -> str:
    begin, end = _span(obj, starts)
    pairs = obj.key_value_pairs
    if pairs:
        indent = _indent_at(text, _span(pairs[0].key, starts)[0])
        at = _span(pairs[-1].value, starts)[1]
        pair = f"{json.dumps(name)}: {_value_text(value, indent)}"
        line_end = text.find("\n", at)
        close = text.rindex("}", begin, end)
        if line_end < 0 or line_end > close:  # the object closes on that line: stay inline
            return text[:at] + f",\n{indent}{pair}" + text[at:]
        # A line of its own after the last one (its comma and comment stay where they are),
        # so that removing it gives back the same bytes.
        after = at
        while after < line_end and text[after] in " \t":
            after += 1
        if text[after : after + 1] == ",":
            return text[:line_end] + f"\n{indent}{pair}," + text[line_end:]
        return text[:at] + "," + text[at:line_end] + f"\n{indent}{pair}" + text[line_end:]
    outer = _indent_at(text, begin)
    indent = outer + "  "
    close = text.rindex("}", begin, end)
    piece = f"\n{indent}{json.dumps(name)}: {_value_text(value, indent)}\n{outer}"
    return text[: begin + 1] + piece + text[close:]


def _delete_pair(text: str, pair: Any, starts: Sequence[int]) -> str:
    begin = _span(pair.key, starts)[0]
    end = _span(pair.value, starts)[1]
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        end = after + 1
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


def jsonc_edit(text: str, entry: Mapping[str, Any] | None, *, keep_empty: bool = False) -> str:
    """``text`` with ``mcp.ihmt-memory`` set to ``entry`` (None: removed), comments kept.

    Removing the last server removes ``"mcp"`` too, unless ``keep_empty`` (the user's
    original file had it).

    Raises:
        UnsafeEditError: the file's shape is not one this edit can change safely.
    """
    import json5

    source = text if text.strip() else "{}\n"
    before = json5.loads(source)
    root, starts = _jsonc_pairs(source)
    servers = _pair(root, "mcp")
    if servers is not None and type(servers.value).__name__ != "JSONObject":
        raise UnsafeEditError('"mcp" is not an object')
    if entry is None:
        if servers is None or _pair(servers.value, SERVER_NAME) is None:
            return text
        new = _delete_pair(source, _pair(servers.value, SERVER_NAME), starts)
        root, starts = _jsonc_pairs(new)
        servers = _pair(root, "mcp")
        if servers is not None and not servers.value.key_value_pairs and not keep_empty:
            new = _delete_pair(new, servers, starts)
    elif servers is None:
        new = _insert_pair(source, root, starts, "mcp", {SERVER_NAME: dict(entry)})
    elif (old := _pair(servers.value, SERVER_NAME)) is not None:
        begin, end = _span(old.value, starts)
        indent = _indent_at(source, _span(old.key, starts)[0])
        new = source[:begin] + _value_text(dict(entry), indent) + source[end:]
    else:
        new = _insert_pair(source, servers.value, starts, SERVER_NAME, dict(entry))
    expected = json.loads(json.dumps(before))
    mcp = dict(expected.get("mcp") or {})
    if entry is None:
        mcp.pop(SERVER_NAME, None)
    else:
        mcp[SERVER_NAME] = dict(entry)
    if mcp or (keep_empty and "mcp" in expected):
        expected["mcp"] = mcp
    else:
        expected.pop("mcp", None)
    try:
        after = json5.loads(new)
    except Exception as exc:  # noqa: BLE001 — json-five raises several unrelated types
        raise UnsafeEditError(f"the edited text does not parse ({exc})") from None
    if after != expected:
        raise UnsafeEditError("the edit would change more than the ihmt-memory entry")
    return new
