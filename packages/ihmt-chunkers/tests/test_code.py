"""Code splitting: exact blocks per language, byte-exact reconstruction, context, modes."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from ihmt_chunkers import Block, DocType, split, supported_languages

FIXTURES = Path(__file__).parent / "fixtures" / "code"

LANGUAGE_OF = {
    "Invoice.php": "php",
    "Library.cs": "csharp",
    "OrderService.java": "java",
    "Playlist.swift": "swift",
    "TodoList.tsx": "tsx",
    "Weather.kt": "kotlin",
    "bank.rb": "ruby",
    "cart.js": "javascript",
    "graph.rs": "rust",
    "inventory.py": "python",
    "matrix.cpp": "cpp",
    "ratelimit.go": "go",
    "ringbuf.c": "c",
    "scheduler.ts": "typescript",
}

# Symbol mode, target 200 / max 800 tokens: (first line, last line, kind, qualified name).
EXPECTED: dict[str, list[tuple[int, int, str, str]]] = {
    "bank.rb": [
        (1, 10, "imports", ""),
        (11, 14, "module", "Bank"),
        (15, 16, "class", "Bank.Error"),
        (17, 25, "class", "Bank.InsufficientFunds"),
        (26, 36, "module", "Bank.Auditable"),
        (37, 42, "code", ""),
        (43, 48, "class", "Bank.Account"),
        (49, 55, "method", "Bank.Account.initialize"),
        (56, 59, "method", "Bank.Account.balance"),
        (60, 65, "method", "Bank.Account.deposit"),
        (66, 72, "method", "Bank.Account.withdraw"),
        (73, 76, "method", "Bank.Account.<=>"),
        (77, 83, "method", "Bank.Account.statement"),
        (84, 87, "method", "Bank.Account.to_h"),
        (88, 92, "method", "Bank.Account.from_json"),
        (93, 94, "code", ""),
        (95, 102, "method", "Bank.Account.record"),
        (103, 117, "class", "Bank.SavingsAccount"),
        (118, 145, "class", "Bank.Ledger"),
        (146, 154, "method", "Bank.demo"),
        (155, 158, "function", "format_money"),
        (159, 159, "code", ""),
    ],
    "cart.js": [
        (1, 8, "imports", ""),
        (9, 16, "code", ""),
        (17, 27, "function", "formatPrice"),
        (28, 29, "function", "clamp"),
        (30, 46, "class", "CartItem"),
        (47, 50, "class", "Cart"),
        (51, 56, "method", "Cart.constructor"),
        (57, 60, "method", "Cart.instances"),
        (61, 71, "method", "Cart.add"),
        (72, 84, "method", "Cart.remove"),
        (85, 92, "method", "Cart.subtotal"),
        (93, 97, "method", "Cart.tax"),
        (98, 103, "method", "Cart.lines"),
        (104, 110, "method", "Cart.save"),
        (111, 121, "method", "Cart.load"),
        (122, 128, "function", "discount"),
        (129, 135, "function", "summarize"),
        (136, 144, "function", "checkout"),
        (145, 150, "function", "range"),
        (151, 158, "code", ""),
    ],
    "graph.rs": [
        (1, 7, "imports", ""),
        (8, 11, "struct", "NodeId"),
        (12, 18, "struct", "Edge"),
        (19, 25, "enum", "GraphError"),
        (26, 36, "impl", "GraphError"),
        (37, 38, "impl", "GraphError"),
        (39, 44, "trait", "Weight"),
        (45, 54, "impl", "i64"),
        (55, 61, "struct", "Graph"),
        (62, 67, "struct", "State"),
        (68, 73, "impl", "State"),
        (74, 79, "impl", "State"),
        (80, 80, "impl", "Graph"),
        (81, 85, "method", "Graph.new"),
        (86, 93, "method", "Graph.add_node"),
        (94, 97, "method", "Graph.node"),
        (98, 112, "method", "Graph.add_edge"),
        (113, 140, "method", "Graph.shortest_paths"),
        (141, 152, "macro", "graph"),
        (153, 170, "module", "tests"),
    ],
    "inventory.py": [
        (1, 12, "imports", ""),
        (13, 22, "code", ""),
        (23, 27, "function", "_fmt"),
        (28, 44, "class", "Item"),
        (45, 47, "class", "Repository"),
        (48, 54, "class", "Repository.NotFound"),
        (55, 57, "method", "Repository.__init__"),
        (58, 62, "method", "Repository.put"),
        (63, 68, "method", "Repository.get"),
        (69, 71, "method", "Repository.__iter__"),
        (72, 75, "method", "Repository.__len__"),
        (76, 78, "class", "Inventory"),
        (79, 83, "method", "Inventory.__init__"),
        (84, 92, "method", "Inventory.add"),
        (93, 99, "method", "Inventory.remove"),
        (100, 105, "method", "Inventory.report"),
        (106, 111, "method", "Inventory.value_cents"),
        (112, 119, "method", "Inventory.merge"),
        (120, 127, "method", "Inventory.from_pairs"),
        (128, 137, "function", "restock"),
        (138, 143, "function", "parse_line"),
        (144, 154, "function", "load"),
        (155, 158, "code", ""),
    ],
    "Invoice.php": [
        (1, 15, "imports", ""),
        (16, 17, "code", ""),
        (18, 22, "interface", "Payable"),
        (23, 34, "enum", "Status"),
        (35, 44, "trait", "HasTimestamps"),
        (45, 52, "class", "Audited"),
        (53, 79, "class", "LineItem"),
        (80, 88, "class", "Invoice"),
        (89, 97, "method", "Invoice.__construct"),
        (98, 103, "method", "Invoice.add"),
        (104, 108, "method", "Invoice.subtotal"),
        (109, 113, "method", "Invoice.tax"),
        (114, 118, "method", "Invoice.amountDue"),
        (119, 127, "method", "Invoice.send"),
        (128, 132, "method", "Invoice.markPaid"),
        (133, 142, "method", "Invoice.render"),
        (143, 152, "method", "Invoice.jsonSerialize"),
        (153, 157, "function", "format_cents"),
        (158, 165, "function", "invoice_from_array"),
    ],
    "Library.cs": [
        (1, 7, "imports", ""),
        (8, 17, "enum", "Example.Library.ItemKind"),
        (18, 23, "interface", "Example.Library.IEntity"),
        (24, 25, "class", "Example.Library.Member"),
        (26, 40, "struct", "Example.Library.Period"),
        (41, 60, "class", "Example.Library.Item"),
        (61, 68, "class", "Example.Library.Catalog"),
        (69, 85, "class", "Example.Library.Catalog.Loan"),
        (86, 94, "method", "Example.Library.Catalog.Add"),
        (95, 111, "method", "Example.Library.Catalog.Lend"),
        (112, 117, "method", "Example.Library.Catalog.Return"),
        (118, 120, "method", "Example.Library.Catalog.Overdue"),
        (121, 131, "method", "Example.Library.Catalog.RemindAsync"),
        (132, 134, "code", ""),
        (135, 148, "class", "Example.Library.CatalogExtensions"),
        (149, 162, "class", "Example.Library.Program"),
    ],
    "matrix.cpp": [
        (1, 12, "imports", ""),
        (13, 16, "class", "linalg.Matrix"),
        (17, 19, "type", "linalg.Matrix.value_type"),
        (20, 22, "method", "linalg.Matrix.Matrix"),
        (23, 30, "method", "linalg.Matrix.identity"),
        (31, 31, "method", "linalg.Matrix.operator()"),
        (32, 33, "method", "linalg.Matrix.operator()"),
        (34, 34, "method", "linalg.Matrix.rows"),
        (35, 36, "method", "linalg.Matrix.cols"),
        (37, 52, "method", "linalg.Matrix.operator*"),
        (53, 62, "method", "linalg.Matrix.transposed"),
        (63, 75, "code", ""),
        (76, 90, "function", "linalg.Matrix.str"),
        (91, 101, "struct", "linalg.Vec"),
        (102, 104, "struct", "linalg.Vec"),
        (105, 106, "enum", "linalg.Norm"),
        (107, 122, "function", "linalg.norm"),
        (123, 132, "function", "linalg.detail.check"),
        (133, 144, "class", "Timer"),
        (145, 157, "function", "main"),
    ],
    "OrderService.java": [
        (1, 14, "imports", ""),
        (15, 27, "class", "OrderService"),
        (28, 33, "interface", "OrderService.Listener"),
        (34, 50, "enum", "OrderService.Status"),
        (51, 63, "class", "OrderService.Line"),
        (64, 71, "class", "OrderService.Order"),
        (72, 76, "method", "OrderService.Order.Order"),
        (77, 80, "method", "OrderService.Order.id"),
        (81, 84, "method", "OrderService.Order.lines"),
        (85, 89, "method", "OrderService.Order.add"),
        (90, 95, "method", "OrderService.Order.toString"),
        (96, 99, "method", "OrderService.OrderService"),
        (100, 107, "method", "OrderService.create"),
        (108, 111, "method", "OrderService.find"),
        (112, 117, "method", "OrderService.total"),
        (118, 125, "method", "OrderService.mapAll"),
        (126, 134, "method", "OrderService.pay"),
        (135, 138, "method", "OrderService.addListener"),
        (139, 144, "method", "OrderService.fire"),
        (145, 151, "method", "OrderService.ensureOpen"),
        (152, 158, "method", "OrderService.close"),
        (159, 168, "class", "OrderIds"),
    ],
    "Playlist.swift": [
        (1, 5, "imports", ""),
        (6, 20, "enum", "RepeatMode"),
        (21, 27, "interface", "Playable"),
        (28, 45, "struct", "Track"),
        (46, 50, "enum", "PlaylistError"),
        (51, 56, "class", "Playlist"),
        (57, 62, "struct", "Playlist.Snapshot"),
        (63, 66, "method", "Playlist.init"),
        (67, 70, "code", ""),
        (71, 74, "method", "Playlist.append"),
        (75, 84, "method", "Playlist.remove"),
        (85, 100, "method", "Playlist.next"),
        (101, 105, "method", "Playlist.shuffle"),
        (106, 110, "method", "Playlist.snapshot"),
        (111, 120, "impl", "Playlist"),
        (121, 127, "impl", "TimeInterval"),
        (128, 131, "function", "formatDuration"),
        (132, 136, "function", "loadTracks"),
        (137, 148, "class", "PlayCounter"),
        (149, 159, "function", "demo"),
    ],
    "ratelimit.go": [
        (1, 12, "imports", ""),
        (13, 20, "code", ""),
        (21, 25, "interface", "Clock"),
        (26, 27, "struct", "realClock"),
        (28, 29, "method", "realClock.Now"),
        (30, 38, "struct", "Bucket"),
        (39, 47, "struct", "Limiter"),
        (48, 50, "type", "Option"),
        (51, 57, "function", "WithClock"),
        (58, 71, "function", "New"),
        (72, 80, "method", "Bucket.refill"),
        (81, 92, "method", "Bucket.Take"),
        (93, 103, "method", "Limiter.bucket"),
        (104, 108, "method", "Limiter.Allow"),
        (109, 124, "method", "Limiter.Wait"),
        (125, 130, "struct", "Stats"),
        (131, 141, "method", "Limiter.Snapshot"),
        (142, 148, "method", "Limiter.Reset"),
        (149, 154, "type", "Middleware"),
        (155, 165, "function", "Wrap"),
    ],
    "ringbuf.c": [
        (1, 14, "imports", ""),
        (15, 18, "code", ""),
        (19, 27, "struct", "ringbuf"),
        (28, 33, "struct", "rb_stats"),
        (34, 38, "enum", "rb_mode"),
        (39, 40, "type", "rb_callback"),
        (41, 42, "code", ""),
        (43, 51, "function", "round_up_pow2"),
        (52, 68, "function", "rb_create"),
        (69, 77, "function", "rb_destroy"),
        (78, 97, "function", "rb_write"),
        (98, 109, "function", "rb_read"),
        (110, 118, "function", "rb_drain"),
        (119, 120, "function", "rb_is_empty"),
        (121, 122, "function", "rb_is_full"),
        (123, 128, "function", "rb_describe"),
        (129, 140, "function", "rb_dump"),
        (141, 146, "function", "print_chunk"),
        (147, 151, "function", "rb_global_stats"),
        (152, 167, "function", "main"),
    ],
    "scheduler.ts": [
        (1, 5, "imports", ""),
        (6, 7, "type", "JobId"),
        (8, 15, "interface", "JobSpec"),
        (16, 19, "interface", "Handler"),
        (20, 26, "enum", "JobState"),
        (27, 33, "type", "Entry"),
        (34, 36, "code", ""),
        (37, 40, "function", "sleep"),
        (41, 48, "function", "logged"),
        (49, 56, "class", "BaseScheduler"),
        (57, 60, "class", "Scheduler"),
        (61, 67, "method", "Scheduler.constructor"),
        (68, 76, "method", "Scheduler.add"),
        (77, 84, "method", "Scheduler.start"),
        (85, 91, "method", "Scheduler.stop"),
        (92, 103, "method", "Scheduler.tick"),
        (104, 118, "method", "Scheduler.run"),
        (119, 123, "method", "Scheduler.size"),
        (124, 129, "interface", "Cron.Field"),
        (130, 132, "code", ""),
        (133, 137, "function", "Cron.parse"),
        (138, 146, "function", "createJob"),
        (147, 159, "function", "retryLater"),
        (160, 164, "interface", "Window"),
    ],
    "TodoList.tsx": [
        (1, 3, "imports", ""),
        (4, 9, "interface", "Todo"),
        (10, 14, "type", "Props"),
        (15, 16, "code", ""),
        (17, 27, "function", "useTodos"),
        (28, 33, "function", "TodoItem"),
        (34, 50, "function", "TodoList"),
        (51, 62, "class", "Counter"),
        (63, 63, "code", ""),
    ],
    "Weather.kt": [
        (1, 12, "imports", ""),
        (13, 14, "code", ""),
        (15, 16, "type", "Celsius"),
        (17, 29, "class", "Forecast"),
        (30, 37, "enum", "Source"),
        (38, 47, "class", "Result"),
        (48, 53, "interface", "Provider"),
        (54, 56, "class", "City"),
        (57, 65, "class", "CachingProvider"),
        (66, 78, "method", "CachingProvider.fetch"),
        (79, 82, "method", "CachingProvider.clear"),
        (83, 89, "class", "CachingProvider.Companion"),
        (90, 112, "class", "Forecasts"),
        (113, 121, "function", "clampAll"),
        (122, 129, "function", "parseOrNull"),
        (130, 142, "function", "trendOf"),
        (143, 150, "function", "main"),
    ],
}


def _read(name: str) -> str:
    # Bytes, so CRLF and BOM variants are built by the tests, not by newline translation.
    return (FIXTURES / name).read_bytes().decode("utf-8")


def _symbol_blocks(name: str) -> tuple[Block, ...]:
    return split(
        _read(name),
        doc_type=DocType.CODE,
        filename=name,
        mode="symbol",
        target_tokens=200,
        max_tokens=800,
    )


def _assert_contiguous(blocks: tuple[Block, ...], text: str) -> None:
    assert "".join(b.text for b in blocks) == text
    assert blocks[0].start_line == 1
    for before, after in itertools.pairwise(blocks):
        step = 1 if before.text.endswith("\n") else 0
        assert after.start_line == before.end_line + step
    last = blocks[-1]
    assert last.end_line == text.count("\n") + (0 if text.endswith("\n") else 1)
    assert all(b.text for b in blocks)


def test_every_supported_language_has_a_fixture_of_150_lines() -> None:
    covered = set(LANGUAGE_OF.values()) - {"tsx"}
    assert covered == set(supported_languages()) - {"tsx"}
    assert len(covered) == 13
    for name, language in LANGUAGE_OF.items():
        if language != "tsx":
            assert _read(name).count("\n") >= 150, name


@pytest.mark.parametrize("name", sorted(EXPECTED, key=str.lower))
def test_fixture_splits_into_the_expected_symbol_blocks(name: str) -> None:
    blocks = _symbol_blocks(name)
    got = [(b.start_line, b.end_line, b.kind, b.qualified_name) for b in blocks]
    assert got == EXPECTED[name]
    assert all(f"lang:{LANGUAGE_OF[name]}" in b.tags and "type:code" in b.tags for b in blocks)


@pytest.mark.parametrize("name", sorted(EXPECTED, key=str.lower))
@pytest.mark.parametrize(
    ("mode", "target", "limit"),
    [("symbol", 200, 800), ("pack", 400, 1200), ("pack", 60, 120), ("symbol", 1, 1)],
)
def test_fixture_blocks_reproduce_the_file_byte_for_byte(
    name: str, mode: str, target: int, limit: int
) -> None:
    text = _read(name)
    blocks = split(
        text, doc_type="code", filename=name, mode=mode, target_tokens=target, max_tokens=limit
    )  # type: ignore[arg-type]
    _assert_contiguous(blocks, text)


@pytest.mark.parametrize("name", sorted(EXPECTED, key=str.lower))
def test_crlf_bom_and_missing_final_newline_still_reconstruct(name: str) -> None:
    text = _read(name).replace("\n", "\r\n")
    variants = ["\ufeff" + text, text.rstrip("\r\n"), "\ufeff" + text.rstrip("\r\n")]
    for variant in variants:
        blocks = split(variant, doc_type="code", filename=name, mode="symbol", target_tokens=200)
        _assert_contiguous(blocks, variant)
    plain = _symbol_blocks(name)
    crlf = split(
        text, doc_type="code", filename=name, mode="symbol", target_tokens=200, max_tokens=800
    )
    assert [(b.start_line, b.end_line, b.kind) for b in crlf] == [
        (b.start_line, b.end_line, b.kind) for b in plain
    ]


def test_method_blocks_carry_the_class_header_in_context_not_in_text() -> None:
    blocks = _symbol_blocks("OrderService.java")
    create = next(b for b in blocks if b.qualified_name == "OrderService.create")
    assert create.kind == "method"
    assert create.context == (
        '@Service\n@SuppressWarnings("unchecked")\n'
        "public class OrderService<T extends Comparable<T>> implements AutoCloseable {"
    )
    assert "class OrderService" not in create.text
    assert create.text.lstrip().startswith("public Order create(")
    assert "method:OrderService.create" in create.tags and "class:OrderService" in create.tags
    nested = next(b for b in blocks if b.qualified_name == "OrderService.Order.add")
    assert nested.context.splitlines()[-1] == "    public static final class Order {"
    assert nested.context.splitlines()[0] == "@Service"


def test_python_decorators_and_docstrings_stay_with_their_definition() -> None:
    blocks = {b.qualified_name: b for b in _symbol_blocks("inventory.py")}
    item = blocks["Item"]
    assert item.text.startswith("@dataclasses.dataclass(frozen=True)\nclass Item:")
    merge = blocks["Inventory.merge"]
    assert merge.text.lstrip().startswith("@staticmethod")
    assert merge.context == "class Inventory:"


def test_imports_coalesce_into_one_block_with_the_preamble() -> None:
    for name in ("inventory.py", "OrderService.java", "ratelimit.go", "bank.rb", "ringbuf.c"):
        blocks = _symbol_blocks(name)
        imports = [b for b in blocks if b.kind == "imports"]
        assert len(imports) == 1, name
        assert imports[0] is blocks[0]


def test_comments_and_strings_holding_braces_do_not_move_boundaries() -> None:
    blocks = {b.qualified_name: b for b in _symbol_blocks("ringbuf.c")}
    describe = blocks["rb_describe"]
    assert '/* "{used/capacity}" */' in describe.text
    assert describe.text.rstrip().endswith("}")


def test_an_oversized_function_is_kept_whole_and_flagged() -> None:
    body = "".join(f"    total += {i}\n" for i in range(400))
    text = (
        f"import os\n\n\ndef big():\n    total = 0\n{body}    return total\n"
        "\n\ndef small():\n    return 1\n"
    )
    blocks = split(text, doc_type="code", language="python", max_tokens=200, target_tokens=100)
    big = next(b for b in blocks if b.name == "big")
    assert big.oversized and "never cut" in big.oversize_reason
    assert big.text.startswith("def big():") and "return total" in big.text
    assert not next(b for b in blocks if b.name == "small").oversized
    assert "".join(b.text for b in blocks) == text


def test_an_oversized_class_splits_per_member_even_in_pack_mode() -> None:
    text = _read("inventory.py")
    blocks = split(
        text, doc_type="code", filename="inventory.py", target_tokens=100, max_tokens=300
    )
    methods = [b for b in blocks if b.context == "class Inventory:"]
    assert methods and all(not b.oversized for b in methods)
    assert all("class Inventory" not in b.text for b in methods)


MEMBERS = '''"""Colors."""

import re

RED = 1
GREEN = 2
BLUE = 3


class Color:
    """A terminal color."""

    name: str
    """Its name."""
    number: int = 0

    def parse(self, text):
        return re.match(text, self.name)

    def __str__(self):
        return self.name


def blend(a, b):
    return a
'''


def test_member_tokens_splits_every_class_while_loose_code_packs_to_the_target() -> None:
    one = split(MEMBERS, doc_type="code", language="python", mode="symbol", target_tokens=1)
    packed = split(
        MEMBERS,
        doc_type="code",
        language="python",
        mode="symbol",
        target_tokens=400,
        member_tokens=1,
    )
    for blocks in (one, packed):
        assert "".join(b.text for b in blocks) == MEMBERS
    # Every symbol keeps a block of its own either way.
    named = [b.qualified_name for b in packed if b.qualified_name]
    assert named == [b.qualified_name for b in one if b.qualified_name]
    assert named == ["Color", "Color.parse", "Color.__str__", "blend"]
    # What is no symbol packs: the constants together, the docstring and fields under
    # the class header (a target of one token gave each line a block of its own).
    color = next(b for b in packed if b.qualified_name == "Color")
    assert color.text.startswith("class Color:\n") and "number: int = 0" in color.text
    assert "def parse" not in color.text
    loose = [b for b in packed if b.kind == "code"]
    assert [b.text.split("\n", 1)[0] for b in loose] == ["RED = 1"]
    assert len(packed) < len(one)
    # Without member_tokens, a target of 400 keeps this small class whole.
    whole = split(MEMBERS, doc_type="code", language="python", mode="symbol", target_tokens=400)
    assert "Color.parse" not in [b.qualified_name for b in whole]
    with pytest.raises(ValueError, match="member_tokens"):
        split(MEMBERS, doc_type="code", language="python", mode="symbol", member_tokens=0)


def test_pack_mode_packs_small_symbols_up_to_the_target() -> None:
    text = _read("ratelimit.go")
    blocks = split(
        text, doc_type="code", filename="ratelimit.go", target_tokens=400, max_tokens=1200
    )
    assert len(blocks) < len(_symbol_blocks("ratelimit.go"))
    for block in blocks:
        if block.kind == "group":
            assert block.tokens <= 400
    grouped = [b for b in blocks if b.kind == "group"]
    assert grouped and all(
        any(t.startswith(("method:", "function:")) for t in b.tags) for b in grouped
    )


def test_file_with_syntax_errors_still_reconstructs() -> None:
    text = _read("OrderService.java").replace("{", "", 7).replace("}", "", 3)
    blocks = split(text, doc_type="code", filename="OrderService.java", mode="symbol")
    _assert_contiguous(blocks, text)


def test_unknown_language_falls_back_to_blank_line_blocks() -> None:
    text = "(define (square x)\n  (* x x))\n\n(define (cube x)\n  (* x x x))\n"
    blocks = split(text, doc_type="code", filename="lib.scm")
    assert "".join(b.text for b in blocks) == text
    assert all("parser:fallback" in b.tags for b in blocks)


def test_unknown_language_name_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown language"):
        split("x = 1\n", doc_type="code", language="cobol")


def test_language_aliases_are_accepted() -> None:
    text = "class A { void M() {} }\n"
    for alias in ("c#", "cs", "CSharp"):
        blocks = split(text, doc_type="code", language=alias)
        assert blocks[0].tags[:2] == ("type:code", "lang:csharp")


def test_a_single_huge_line_is_one_oversized_block() -> None:
    text = "var x = [" + ",".join(str(i) for i in range(200_000)) + "];"
    blocks = split(text, doc_type="code", language="javascript")
    assert len(blocks) == 1
    assert (
        blocks[0].oversized and blocks[0].oversize_reason == "a single line longer than max_tokens"
    )
