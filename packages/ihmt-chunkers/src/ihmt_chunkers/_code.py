"""The code splitter: a tree-sitter syntax tree laid out as whole lines.

Every top-level node claims the lines it touches; nodes that share a line merge, so a
block boundary always falls between lines and never inside a node. Comments and
attributes directly above a definition join it; blank lines join the block above;
consecutive imports coalesce. A container (class, impl, module…) above the split
threshold is laid out again member by member, its header lines travelling in the
members' ``context``; namespaces and ``#ifdef`` regions are always descended. Because
the rows of every level are assigned contiguously, the blocks cover the file exactly.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

from ihmt_chunkers._languages import LANGUAGES, LanguageSpec, load_grammar
from ihmt_chunkers._lines import Lines
from ihmt_chunkers._records import Block, BlockKind
from ihmt_chunkers._regex import LazyRegex

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["split_code"]

logger = logging.getLogger(__name__)

_LOOSE = frozenset({"code", "comment", "field", "imports"})
_CLASS_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "impl", "module"})
_FUNCTION_KINDS = frozenset({"function", "method"})
_BODY_TYPES = frozenset(
    {
        "class_body",
        "enum_class_body",
        "declaration_list",
        "field_declaration_list",
        "statement_block",
        "body_statement",
        "block",
        "interface_body",
        "enum_body",
        "protocol_body",
    }
)
_NAME_LEAVES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "type_identifier",
        "template_function",
        "operator_cast",
        "primitive_type",
    }
)
_TEMPLATE_ARGS = LazyRegex(r"(?<=\w)<[^<>=()]*>")
_RUBY_IMPORTS = frozenset({"require", "require_relative", "load", "autoload"})
_JS_VALUES: dict[str, BlockKind] = {
    "arrow_function": "function",
    "function_expression": "function",
    "function": "function",
    "generator_function": "function",
    "class": "class",
}


_UnitKind = BlockKind | Literal["comment", "attribute", "field", "namespace"]
"""A unit's kind: a block's, or one of the pieces that never stand as a block alone
(comments and attributes attach to the definition below them, fields to their class,
namespaces are descended into)."""


@dataclass(slots=True)
class _Unit:
    """Rows ``start``..``end`` (0-based, inclusive) that must stay together."""

    start: int
    end: int
    kind: _UnitKind
    name: str = ""
    qualname: str = ""
    node: Node | None = None
    outer: Node | None = None
    namespace: bool = False
    symbols: list[tuple[str, str]] = field(default_factory=list)
    header: bool = False

    @property
    def is_symbol(self) -> bool:
        return self.kind not in _LOOSE


@dataclass(slots=True)
class _Group:
    """Units that become one block."""

    units: list[_Unit]
    context: str
    parent: str


@dataclass(frozen=True, slots=True)
class _Job:
    lines: Lines
    source: bytes
    spec: LanguageSpec
    symbol_mode: bool
    threshold: int
    target: int


def split_code(
    text: str,
    language: str,
    *,
    symbol_mode: bool,
    target_tokens: int,
    max_tokens: int,
    member_tokens: int | None = None,
) -> tuple[Block, ...] | None:
    """Split source code; None when the language's grammar cannot be loaded.

    In symbol mode a class above ``member_tokens`` (``target_tokens`` when None) is laid
    out member by member, and loose code packs up to ``target_tokens``.
    """
    grammar = load_grammar(language)
    if grammar is None:
        return None
    lines = Lines(text)
    spec = LANGUAGES[language]
    tags = ("type:code", f"lang:{language}")
    if lines.count == 1:
        return (_to_block(lines, _Group([_Unit(0, 0, "code")], "", ""), tags, max_tokens),)

    from tree_sitter import Parser

    # The BOM is not code; dropping it keeps every row where it was.
    body = text[1:] if text.startswith("\ufeff") else text
    source = body.encode("utf-8", errors="surrogatepass")
    tree = Parser(grammar).parse(source)
    job = _Job(
        lines=lines,
        source=source,
        spec=spec,
        symbol_mode=symbol_mode,
        threshold=(target_tokens if member_tokens is None else member_tokens)
        if symbol_mode
        else max_tokens,
        target=target_tokens,
    )
    groups = _layout(job, tree.root_node.children, 0, lines.count - 1, "", "")
    return tuple(_to_block(lines, group, tags, max_tokens) for group in groups)


def _layout(
    job: _Job,
    nodes: Iterable[Node],
    lo: int,
    hi: int,
    prefix: str,
    context: str,
    head: _Unit | None = None,
    outer: tuple[str, str] = ("", ""),
    *,
    in_class: bool = False,
) -> list[_Group]:
    """Lay out rows ``lo``..``hi`` as groups; ``nodes`` are the syntax nodes in them.

    ``head`` is the header of the container being split (its lines come first and its
    block keeps the outer ``context`` and parent, given as ``outer``). ``in_class``
    says the nodes are members of a class, so functions are methods.
    """
    units = _units(job, nodes, lo, hi, prefix, in_class)
    parent = prefix if in_class else ""
    if head is not None:
        units.insert(0, head)
    out: list[_Group] = []
    pending: list[_Unit] = []

    def flush() -> None:
        if pending:
            out.extend(_pack(job, pending, context, parent, head, outer))
            pending.clear()

    for unit in units:
        parts = _descend(job, unit, prefix, context, parent)
        if parts is None:
            pending.append(unit)
        else:
            flush()
            out.extend(parts)
    flush()
    return out


def _units(
    job: _Job, nodes: Iterable[Node], lo: int, hi: int, prefix: str, in_class: bool
) -> list[_Unit]:
    """Classify the nodes and give every row in ``lo``..``hi`` to exactly one unit."""
    spec = job.spec
    raw: list[_Unit] = []
    for node in _expand(nodes, spec.flatten):
        rows = _rows(node, lo, hi)
        if rows is None:
            continue
        unit = _classify(job, node, prefix, in_class)
        unit.start, unit.end = rows
        if raw and unit.start <= raw[-1].end:
            _merge_into(raw[-1], unit)
        else:
            raw.append(unit)
    if not raw:
        return [_Unit(lo, hi, "field" if in_class else "code")] if lo <= hi else []

    # Comments and attributes touching the unit below belong to it.
    attached: list[_Unit] = []
    for unit in reversed(raw):
        if unit.kind in ("comment", "attribute"):
            if attached and attached[-1].start == unit.end + 1:
                attached[-1].start = unit.start
                continue
            unit.kind = "field" if in_class else "code"
        attached.append(unit)
    attached.reverse()

    # Imports separated only by comments or blank lines coalesce, with the preamble.
    merged: list[_Unit] = []
    for unit in attached:
        if unit.kind == "imports" and merged:
            run = len(merged)
            while run > 0 and not merged[run - 1].is_symbol and _all_comment(job, merged[run - 1]):
                run -= 1
            if run > 0 and merged[run - 1].kind == "imports":
                merged[run - 1].end = unit.end
                del merged[run:]
                continue
            if not any(m.is_symbol for m in merged):
                merged[0].kind = "imports"
                merged[0].end = unit.end
                del merged[1:]
                continue
        merged.append(unit)

    # Rows nobody claimed (blank lines, closing tokens) join the unit above.
    merged[0].start = lo
    for current, following in itertools.pairwise(merged):
        current.end = following.start - 1
    merged[-1].end = hi
    return merged


def _descend(job: _Job, unit: _Unit, prefix: str, context: str, parent: str) -> list[_Group] | None:
    """Split a container into its members, or None when it stays whole."""
    node = unit.node
    if node is None or (unit.kind not in _CLASS_KINDS and not unit.namespace):
        return None
    if not unit.namespace and job.lines.tokens(unit.start, unit.end) <= job.threshold:
        return None
    body, members = _members(node)
    if body is None or not members:
        return None
    first = _rows(members[0], unit.start, unit.end)
    last = _rows(members[-1], unit.start, unit.end)
    if first is None or last is None or first[0] <= node.start_point.row:
        # A member shares a line with the declaration: no line can separate them.
        return None
    header_text = _header_text(job, unit.outer or node, body)
    inner_context = f"{context}\n{header_text}" if context else header_text
    inner_prefix = _join(prefix, unit.name)
    if unit.namespace:
        groups = _layout(job, members, first[0], last[1], inner_prefix, inner_context)
        groups[0].units[0].start = unit.start
        if groups[0].units[0].kind in _LOOSE:
            groups[0].context = context
            groups[0].parent = parent
    else:
        head = _Unit(
            unit.start,
            first[0] - 1,
            unit.kind,
            unit.name,
            unit.qualname,
            symbols=list(unit.symbols),
            header=True,
        )
        groups = _layout(
            job,
            members,
            first[0],
            last[1],
            inner_prefix,
            inner_context,
            head=head,
            outer=(context, parent),
            in_class=True,
        )
    groups[-1].units[-1].end = unit.end
    return groups


def _pack(
    job: _Job,
    units: list[_Unit],
    context: str,
    parent: str,
    head: _Unit | None,
    outer: tuple[str, str],
) -> list[_Group]:
    """Pack neighbouring units into groups up to the target size.

    In ``pack`` mode any neighbours pack; in ``symbol`` mode only loose code (constants,
    fields, comments) packs, alone or under a class header, so every symbol keeps a
    block of its own. Imports always stay alone.
    """
    lines = job.lines
    groups: list[_Group] = []
    current: list[_Unit] = []

    def close() -> None:
        if current[0] is head:
            groups.append(_Group(list(current), outer[0], outer[1]))
        else:
            groups.append(_Group(list(current), context, parent))

    for unit in units:
        if current:
            fits = lines.tokens(current[0].start, unit.end) <= job.target
            joinable = unit.kind != "imports" and current[-1].kind != "imports"
            if job.symbol_mode:
                joinable = (
                    joinable
                    and not unit.is_symbol
                    and not any(u.is_symbol and not u.header for u in current)
                )
            if fits and joinable:
                current.append(unit)
                continue
            close()
        current = [unit]
    if current:
        close()
    return groups


def _to_block(lines: Lines, group: _Group, base_tags: tuple[str, ...], max_tokens: int) -> Block:
    units = group.units
    first, last = units[0].start, units[-1].end
    text = lines.span(first, last)
    symbols = [s for u in units for s in u.symbols]
    named = [u for u in units if u.is_symbol]
    kind: BlockKind
    if len(named) == 1 and len({q for _, q in symbols}) <= 1:
        # a symbol standing alone is a definition: the other unit kinds attach to one
        kind, name, qualname = cast(BlockKind, named[0].kind), named[0].name, named[0].qualname
    elif not named:
        kind = "imports" if all(u.kind == "imports" for u in units) else "code"
        name = qualname = ""
    else:
        kind, name, qualname = "group", "", ""
    tags = list(base_tags)
    if group.parent:
        tags.append(f"class:{group.parent}")
    for symbol_kind, symbol_name in symbols:
        if symbol_kind in _CLASS_KINDS:
            tags.append(f"class:{symbol_name}")
        elif symbol_kind == "method":
            tags.append(f"method:{symbol_name}")
        elif symbol_kind == "function":
            tags.append(f"function:{symbol_name}")
    tokens = lines.tokens(first, last)
    oversized = tokens > max_tokens
    reason = ""
    if oversized:
        reason = _oversize_reason(kind, first == last)
    return Block(
        text=text,
        start_line=first + 1,
        end_line=last + 1,
        kind=kind,
        name=name,
        qualified_name=qualname,
        tags=tuple(dict.fromkeys(tags)),
        context=group.context,
        oversized=oversized,
        oversize_reason=reason,
    )


def _oversize_reason(kind: str, one_line: bool) -> str:
    if one_line:
        return "a single line longer than max_tokens"
    if kind in _FUNCTION_KINDS:
        return f"a {kind} longer than max_tokens is never cut"
    if kind in _CLASS_KINDS:
        return f"a {kind} with no member boundary to split at"
    if kind == "imports":
        return "the import block is longer than max_tokens"
    return f"a {kind} statement longer than max_tokens"


# --------------------------------------------------------------------------- nodes


def _expand(nodes: Iterable[Node], flatten: frozenset[str]) -> Iterable[Node]:
    for node in nodes:
        if not node.is_named or node.start_byte == node.end_byte:
            continue
        if node.type in flatten:
            yield from _expand(node.children, flatten)
        else:
            yield node


def _rows(node: Node, lo: int, hi: int) -> tuple[int, int] | None:
    """The rows a node touches, clamped to ``lo``..``hi``; a node ending at a line
    start (a C preprocessor line, a Rust line comment) does not touch that line."""
    start = node.start_point.row
    end_point = node.end_point
    end = end_point.row
    if end_point.column == 0 and end > start:
        end -= 1
    start, end = max(start, lo), min(end, hi)
    if start > end:
        return None
    return start, end


def _merge_into(target: _Unit, unit: _Unit) -> None:
    target.end = max(target.end, unit.end)
    target.symbols.extend(unit.symbols)
    if not target.is_symbol and unit.is_symbol:
        target.kind, target.name, target.qualname = unit.kind, unit.name, unit.qualname
        target.node, target.outer, target.namespace = unit.node, unit.outer, unit.namespace
    elif target.is_symbol and unit.is_symbol:
        target.node = None
        target.namespace = False
    elif target.kind in ("comment", "attribute") and unit.kind not in ("comment", "attribute"):
        target.kind = unit.kind


def _all_comment(job: _Job, unit: _Unit) -> bool:
    return all(
        job.lines.is_blank(row) or _looks_like_comment(job.lines.line(row))
        for row in range(unit.start, unit.end + 1)
    )


def _looks_like_comment(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith(("#", "//", "/*", "*", "--", ";"))


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _header_text(job: _Job, node: Node, body: Node) -> str:
    """The declaration lines of a container, from its first line to its opening token."""
    source = job.source
    line_start = node.start_byte - node.start_point.column
    end = body.start_byte
    if source[end : end + 1] == b"{":
        end += 1
    return source[line_start:end].decode("utf-8", errors="replace").rstrip()


def _members(node: Node) -> tuple[Node | None, list[Node]]:
    """The node holding a container's members, and the members."""
    if node.type.startswith("preproc_"):
        skip = {"name", "condition"}
        members = [
            child
            for index, child in enumerate(node.children)
            if child.is_named and node.field_name_for_child(index) not in skip
        ]
        return (members[0] if members else None), members
    body = node.child_by_field_name("body")
    if body is None:
        for child in node.named_children:
            if child.type in _BODY_TYPES:
                body = child
                break
    if body is None:
        return None, []
    members = [child for child in body.named_children if child.start_byte != child.end_byte]
    return body, members


def _classify(job: _Job, node: Node, prefix: str, in_class: bool) -> _Unit:
    """What one node is: a symbol with a name, an import, a comment or loose code."""
    spec = job.spec
    outer = node
    kind = spec.definitions.get(node.type)
    if node.type in spec.wrappers:
        inner = _unwrap(spec, node)
        if inner is not None:
            node = inner
            kind = spec.definitions.get(node.type)
    if node.type in spec.namespaces and _has_body(node):
        name = "" if node.type.startswith(("preproc_", "linkage_")) else _name(job, node)
        return _Unit(0, 0, "namespace", name, _join(prefix, name), node, outer, namespace=True)
    if node.type in spec.imports:
        return _Unit(0, 0, "imports")
    if spec.name == "ruby" and node.type == "call" and _ruby_import(job, node):
        return _Unit(0, 0, "imports")
    if node.type in spec.attach:
        return _Unit(0, 0, "comment" if node.type in _COMMENT_TYPES else "attribute")
    if kind is None and node.type in ("lexical_declaration", "variable_declaration"):
        kind, node = _js_binding(node)
    if kind is None:
        return _Unit(0, 0, "field" if in_class else "code")
    kind = _refine_kind(job, node, kind)
    name = _name(job, node)
    if kind == "function" and in_class:
        kind = "method"
    qualname = _join(prefix, name)
    if kind == "method" and node.type == "method_declaration" and spec.name == "go":
        receiver = _go_receiver(job, node)
        qualname = _join(receiver, name)
    unit = _Unit(0, 0, kind, name, qualname, node, outer)
    unit.symbols.append((kind, qualname))
    return unit


_COMMENT_TYPES = frozenset(
    {"comment", "line_comment", "block_comment", "multiline_comment", "doc_comment"}
)


def _unwrap(spec: LanguageSpec, node: Node) -> Node | None:
    inner = node.child_by_field_name("definition") or node.child_by_field_name("declaration")
    if inner is not None:
        return inner
    for child in node.named_children:
        if child.type in spec.definitions or child.type in spec.namespaces:
            return child
        if child.type in ("lexical_declaration", "variable_declaration"):
            return child
    return None


def _has_body(node: Node) -> bool:
    return _members(node)[0] is not None


def _js_binding(node: Node) -> tuple[BlockKind | None, Node]:
    """``const f = () => …`` and ``const C = class …`` are a function and a class."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(declarators) != 1:
        return None, node
    value = declarators[0].child_by_field_name("value")
    if value is None or value.type not in _JS_VALUES:
        return None, node
    return _JS_VALUES[value.type], declarators[0]


def _refine_kind(job: _Job, node: Node, kind: BlockKind) -> BlockKind:
    spec = job.spec
    if spec.name == "kotlin" and node.type == "class_declaration":
        name = node.child_by_field_name("name")
        head = job.source[node.start_byte : name.start_byte if name else node.end_byte]
        words = set(head.decode("utf-8", errors="replace").split())
        if "interface" in words:
            return "interface"
        if "enum" in words:
            return "enum"
    elif spec.name == "swift" and node.type == "class_declaration":
        keyword = node.child_by_field_name("declaration_kind")
        word = _text(job.source, keyword) if keyword is not None else "class"
        swift: dict[str, BlockKind] = {"struct": "struct", "enum": "enum", "extension": "impl"}
        return swift.get(word, "class")
    elif spec.name == "go" and node.type == "type_declaration":
        spec_node = _first_named(node, ("type_spec", "type_alias"))
        type_node = spec_node.child_by_field_name("type") if spec_node else None
        if type_node is not None and type_node.type == "struct_type":
            return "struct"
        if type_node is not None and type_node.type == "interface_type":
            return "interface"
    elif node.type == "type_definition":
        inner = node.child_by_field_name("type")
        if inner is not None and inner.child_by_field_name("body") is not None:
            return "struct" if inner.type != "enum_specifier" else "enum"
    return kind


def _first_named(node: Node, types: tuple[str, ...]) -> Node | None:
    for child in node.named_children:
        if child.type in types:
            return child
    return None


def _name(job: _Job, node: Node) -> str:
    source = job.source
    spec = job.spec
    if node.type == "impl_item":
        type_node = node.child_by_field_name("type")
        return _clean(_text(source, type_node)) if type_node is not None else ""
    if node.type == "type_declaration":
        spec_node = _first_named(node, ("type_spec", "type_alias"))
        name_node = spec_node.child_by_field_name("name") if spec_node else None
        return _text(source, name_node) if name_node is not None else ""
    if node.type in ("function_definition", "type_definition") and spec.name in ("c", "cpp"):
        return _clean(_declarator_name(source, node))
    if node.type == "singleton_class":
        return ""
    if node.type == "init_declaration":
        return "init"
    if node.type == "deinit_declaration":
        return "deinit"
    if node.type == "companion_object":
        name_node = node.child_by_field_name("name")
        return _text(source, name_node) if name_node is not None else "Companion"
    name_node = node.child_by_field_name("name")
    if name_node is not None:
        return _clean(_text(source, name_node))
    if node.type in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
        return ""
    for child in node.named_children:
        if child.type in ("identifier", "type_identifier", "simple_identifier", "constant"):
            return _text(source, child)
    return ""


def _declarator_name(source: bytes, node: Node) -> str:
    current = node.child_by_field_name("declarator")
    for _ in range(16):
        if current is None:
            return ""
        if current.type in _NAME_LEAVES:
            return _text(source, current)
        nested = current.child_by_field_name("declarator")
        if nested is None:
            named = [c for c in current.named_children if c.type != "parameter_list"]
            nested = named[0] if named else None
        current = nested
    return ""


def _clean(name: str) -> str:
    """``Matrix<T>::str`` → ``Matrix.str``; ``A::B`` → ``A.B``."""
    previous = None
    while previous != name:
        previous = name
        name = _TEMPLATE_ARGS.sub("", name)
    return name.replace("::", ".").replace("\\", ".").strip()


def _go_receiver(job: _Job, node: Node) -> str:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    for param in receiver.named_children:
        type_node = param.child_by_field_name("type")
        if type_node is not None:
            text = _text(job.source, type_node).lstrip("*")
            return text.split("[", 1)[0].strip()
    return ""


def _ruby_import(job: _Job, node: Node) -> bool:
    method = node.child_by_field_name("method")
    return (
        method is not None
        and node.child_by_field_name("receiver") is None
        and _text(job.source, method) in _RUBY_IMPORTS
    )


def _join(prefix: str, name: str) -> str:
    if not name:
        return prefix
    return f"{prefix}.{name}" if prefix else name
