"""The supported programming languages: extensions, grammar wheels and node vocabularies.

Grammars are imported the first time a language is parsed, never at package import,
so ``import ihmt_chunkers`` stays cheap.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ihmt_chunkers._records import BlockKind

if TYPE_CHECKING:
    from tree_sitter import Language

__all__ = [
    "LANGUAGES",
    "LanguageSpec",
    "language_for_filename",
    "load_grammar",
    "normalize_language",
    "supported_languages",
]

logger = logging.getLogger(__name__)

_COMMENTS = frozenset(
    {"comment", "line_comment", "block_comment", "multiline_comment", "doc_comment"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LanguageSpec:
    """How one language's syntax tree maps onto blocks."""

    name: str
    """Canonical language name: ``python``, ``csharp``, ``tsx``…"""
    module: str
    """The grammar wheel's import name."""
    function: str
    """The function of that module returning the language pointer."""
    extensions: tuple[str, ...]
    """Lower-case file extensions, with the dot."""
    imports: frozenset[str]
    """Node types that are imports or file preamble (package, namespace statement)."""
    definitions: Mapping[str, BlockKind]
    """Node type → block kind for functions, classes and other symbols."""
    namespaces: frozenset[str] = frozenset()
    """Containers that are always descended into (namespaces, ``#ifdef``)."""
    wrappers: frozenset[str] = frozenset()
    """Nodes that wrap a definition (decorators, ``export``, ``template<>``)."""
    attach: frozenset[str] = _COMMENTS
    """Comments and attributes that belong to the definition right below them."""
    flatten: frozenset[str] = frozenset({"ERROR"})
    """Nodes whose children are laid out as if they were siblings."""
    domain: str = ""
    """Detection domain, ``software.<language>``."""
    filenames: tuple[str, ...] = ()
    """Exact file names (``Rakefile``) that are this language."""
    aliases: tuple[str, ...] = ()
    """Other names callers use (``c#``, ``js``)."""


_FUNCTIONS = {"function_definition": "function", "function_declaration": "function"}

_C_DEFS = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "type_definition": "type",
}
_PREPROC = frozenset(
    {"preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef"}
)
_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "function_expression": "function",
    "class_declaration": "class",
    "method_definition": "function",
}
_TS_DEFS = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "type_alias_declaration": "type",
    "function_signature": "function",
    "method_signature": "function",
    "abstract_method_signature": "function",
}


def _spec(**kwargs: Any) -> LanguageSpec:
    kwargs.setdefault("domain", "software." + kwargs["name"].replace("tsx", "typescript"))
    kwargs["definitions"] = MappingProxyType(dict(kwargs["definitions"]))
    return LanguageSpec(**kwargs)


LANGUAGES: Mapping[str, LanguageSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in (
            _spec(
                name="python",
                module="tree_sitter_python",
                function="language",
                extensions=(".py", ".pyi", ".pyw"),
                imports=frozenset(
                    {"import_statement", "import_from_statement", "future_import_statement"}
                ),
                definitions={"function_definition": "function", "class_definition": "class"},
                wrappers=frozenset({"decorated_definition"}),
                aliases=("py", "python3"),
            ),
            _spec(
                name="java",
                module="tree_sitter_java",
                function="language",
                extensions=(".java",),
                imports=frozenset({"package_declaration", "import_declaration"}),
                definitions={
                    "class_declaration": "class",
                    "interface_declaration": "interface",
                    "enum_declaration": "enum",
                    "record_declaration": "class",
                    "annotation_type_declaration": "interface",
                    "method_declaration": "function",
                    "constructor_declaration": "function",
                    "compact_constructor_declaration": "function",
                },
                flatten=frozenset({"ERROR", "enum_body_declarations"}),
            ),
            _spec(
                name="javascript",
                module="tree_sitter_javascript",
                function="language",
                extensions=(".js", ".mjs", ".cjs", ".jsx"),
                imports=frozenset({"import_statement"}),
                definitions=_JS_DEFS,
                wrappers=frozenset({"export_statement"}),
                attach=_COMMENTS | {"decorator"},
                aliases=("js", "node", "jsx"),
            ),
            _spec(
                name="typescript",
                module="tree_sitter_typescript",
                function="language_typescript",
                extensions=(".ts", ".mts", ".cts"),
                imports=frozenset({"import_statement", "import_alias"}),
                definitions=_TS_DEFS,
                namespaces=frozenset({"internal_module", "module", "ambient_declaration"}),
                wrappers=frozenset({"export_statement"}),
                attach=_COMMENTS | {"decorator"},
                aliases=("ts",),
            ),
            _spec(
                name="tsx",
                module="tree_sitter_typescript",
                function="language_tsx",
                extensions=(".tsx",),
                imports=frozenset({"import_statement", "import_alias"}),
                definitions=_TS_DEFS,
                namespaces=frozenset({"internal_module", "module", "ambient_declaration"}),
                wrappers=frozenset({"export_statement"}),
                attach=_COMMENTS | {"decorator"},
            ),
            _spec(
                name="go",
                module="tree_sitter_go",
                function="language",
                extensions=(".go",),
                imports=frozenset({"package_clause", "import_declaration"}),
                definitions={
                    "function_declaration": "function",
                    "method_declaration": "method",
                    "type_declaration": "type",
                },
                aliases=("golang",),
            ),
            _spec(
                name="rust",
                module="tree_sitter_rust",
                function="language",
                extensions=(".rs",),
                imports=frozenset(
                    {"use_declaration", "extern_crate_declaration", "inner_attribute_item"}
                ),
                definitions={
                    "function_item": "function",
                    "function_signature_item": "function",
                    "struct_item": "struct",
                    "union_item": "struct",
                    "enum_item": "enum",
                    "trait_item": "trait",
                    "impl_item": "impl",
                    "mod_item": "module",
                    "macro_definition": "macro",
                    "type_item": "type",
                },
                attach=_COMMENTS | {"attribute_item"},
                aliases=("rs",),
            ),
            _spec(
                name="c",
                module="tree_sitter_c",
                function="language",
                extensions=(".c", ".h"),
                imports=frozenset({"preproc_include"}),
                definitions=_C_DEFS,
                namespaces=_PREPROC | {"linkage_specification"},
            ),
            _spec(
                name="cpp",
                module="tree_sitter_cpp",
                function="language",
                extensions=(
                    ".cc",
                    ".cpp",
                    ".cxx",
                    ".c++",
                    ".hpp",
                    ".hh",
                    ".hxx",
                    ".h++",
                    ".ipp",
                    ".tpp",
                    ".inl",
                ),
                imports=frozenset({"preproc_include", "using_declaration"}),
                definitions={
                    **_C_DEFS,
                    "class_specifier": "class",
                    "alias_declaration": "type",
                    "concept_definition": "type",
                },
                namespaces=_PREPROC | {"namespace_definition", "linkage_specification"},
                wrappers=frozenset({"template_declaration"}),
                attach=_COMMENTS | {"access_specifier"},
                aliases=("c++", "cxx"),
            ),
            _spec(
                name="csharp",
                module="tree_sitter_c_sharp",
                function="language",
                extensions=(".cs",),
                imports=frozenset(
                    {
                        "using_directive",
                        "extern_alias_directive",
                        "file_scoped_namespace_declaration",
                    }
                ),
                definitions={
                    "class_declaration": "class",
                    "struct_declaration": "struct",
                    "interface_declaration": "interface",
                    "enum_declaration": "enum",
                    "record_declaration": "class",
                    "record_struct_declaration": "struct",
                    "delegate_declaration": "type",
                    "method_declaration": "function",
                    "constructor_declaration": "function",
                    "destructor_declaration": "function",
                    "operator_declaration": "function",
                    "conversion_operator_declaration": "function",
                    "local_function_statement": "function",
                },
                namespaces=frozenset({"namespace_declaration"}),
                aliases=("c#", "cs", "c_sharp", "c-sharp"),
            ),
            _spec(
                name="kotlin",
                module="tree_sitter_kotlin",
                function="language",
                extensions=(".kt", ".kts"),
                imports=frozenset({"package_header", "import", "import_list", "import_header"}),
                definitions={
                    "class_declaration": "class",
                    "object_declaration": "class",
                    "companion_object": "class",
                    "function_declaration": "function",
                    "secondary_constructor": "function",
                    "type_alias": "type",
                },
                attach=_COMMENTS | {"annotated_expression", "file_annotation"},
                aliases=("kt",),
            ),
            _spec(
                name="swift",
                module="tree_sitter_swift",
                function="language",
                extensions=(".swift",),
                imports=frozenset({"import_declaration"}),
                definitions={
                    "class_declaration": "class",
                    "protocol_declaration": "interface",
                    "function_declaration": "function",
                    "init_declaration": "function",
                    "deinit_declaration": "function",
                    "subscript_declaration": "function",
                    "protocol_function_declaration": "function",
                    "typealias_declaration": "type",
                },
            ),
            _spec(
                name="php",
                module="tree_sitter_php",
                function="language_php",
                extensions=(".php", ".phtml", ".php3", ".php4", ".php5", ".phps"),
                imports=frozenset(
                    {
                        "php_tag",
                        "namespace_use_declaration",
                        "declare_statement",
                        "namespace_definition",
                    }
                ),
                definitions={
                    "function_definition": "function",
                    "class_declaration": "class",
                    "interface_declaration": "interface",
                    "trait_declaration": "trait",
                    "enum_declaration": "enum",
                    "method_declaration": "function",
                },
                namespaces=frozenset({"namespace_definition"}),
                attach=_COMMENTS | {"attribute_list"},
            ),
            _spec(
                name="ruby",
                module="tree_sitter_ruby",
                function="language",
                extensions=(".rb", ".rake", ".gemspec", ".ru"),
                imports=frozenset(),
                definitions={
                    "class": "class",
                    "module": "module",
                    "singleton_class": "class",
                    "method": "function",
                    "singleton_method": "function",
                },
                filenames=("Rakefile", "Gemfile", "Guardfile", "Vagrantfile"),
                aliases=("rb",),
            ),
        )
    }
)

_BY_EXTENSION: dict[str, str] = {
    ext: spec.name for spec in LANGUAGES.values() for ext in spec.extensions
}
_BY_FILENAME: dict[str, str] = {
    name: spec.name for spec in LANGUAGES.values() for name in spec.filenames
}
_ALIASES: dict[str, str] = {
    alias: spec.name for spec in LANGUAGES.values() for alias in (spec.name, *spec.aliases)
}

_lock = threading.Lock()
_grammars: dict[str, Language | None] = {}


def supported_languages() -> tuple[str, ...]:
    """Names of the languages split with a syntax tree, in alphabetical order.

    Cheap: no grammar is loaded. A language whose grammar wheel is missing or broken
    still splits, by blank lines, and its blocks are tagged ``parser:fallback``.
    """
    return tuple(sorted(LANGUAGES))


def normalize_language(name: str) -> str | None:
    """Map a language name or alias (``"C#"``, ``"js"``) to its canonical name."""
    return _ALIASES.get(name.strip().lower())


def language_for_filename(filename: str) -> str | None:
    """The language a file name implies by its extension or exact name, or None."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if base in _BY_FILENAME:
        return _BY_FILENAME[base]
    dot = base.rfind(".")
    if dot <= 0:
        return None
    return _BY_EXTENSION.get(base[dot:].lower())


def load_grammar(name: str) -> Language | None:
    """Load (once) and return the tree-sitter language, or None when it cannot load."""
    with _lock:
        if name in _grammars:
            return _grammars[name]
        spec = LANGUAGES[name]
        grammar: Language | None
        try:
            from tree_sitter import Language

            module = importlib.import_module(spec.module)
            grammar = Language(getattr(module, spec.function)())
        except (ImportError, AttributeError, ValueError, TypeError, OSError) as exc:
            logger.warning("grammar for %s unavailable (%s); splitting by blank lines", name, exc)
            grammar = None
        _grammars[name] = grammar
        return grammar
