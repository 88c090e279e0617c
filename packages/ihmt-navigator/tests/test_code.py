"""``CodeSearch``: the symbols of a code store ranked for a question."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ihmt_navigator import CodeSearch, CodeSymbol
from ihmt_store import Store
from ihmt_store.testing import make_leaf

# (source, symbol, kind, text): one leaf per symbol, as ihmt-mcp's project index makes them.
CODE = [
    ("src/app/retry.py", "deliver", "function", "def deliver(event):\n    # retry with backoff\n"),
    ("src/app/retry.py", "", "imports", "import time\nimport random  # retry backoff\n"),
    ("src/app/render.py", "render", "function", "def render(page):\n    return html(page)\n"),
    ("src/app/queue.py", "Queue.deliver", "method", "def deliver(self, event):\n    push(event)\n"),
    ("tests/test_retry.py", "deliver", "function", "def deliver(event):\n    # retry fake\n"),
    ("src/lib/cache.py", "evict", "function", "def evict(key):\n    # retry the eviction\n"),
]


@pytest.fixture
def code(make_store: Callable[..., Store]) -> tuple[Store, list[CodeSymbol]]:
    store = make_store()
    symbols = []
    for position, (source, name, kind, text) in enumerate(CODE):
        leaf = make_leaf(
            text, domain="code", source=source, position=position, tags=(f"kind:{kind}",)
        )
        store.put_leaf(leaf)
        symbols.append(CodeSymbol(source, name, kind, leaf.leaf_id))
    return store, symbols


def _sources(store: Store, ids: list[str]) -> list[str]:
    entries = store.entries(ids)
    return [entries[i].source for i in ids]


def test_an_identifier_is_answered_by_name_main_code_first(
    code: tuple[Store, list[CodeSymbol]],
) -> None:
    store, symbols = code
    search = CodeSearch(store)
    picks = search.rank("deliver", symbols, scope="all")
    # The exact name first, then a method of that name; the test file's copy last.
    assert _sources(store, picks) == ["src/app/retry.py", "src/app/queue.py", "tests/test_retry.py"]
    assert _sources(store, search.rank("Queue::deliver", symbols)) == ["src/app/queue.py"]
    assert _sources(store, search.rank("deliver", symbols, scope="test")) == ["tests/test_retry.py"]


def test_an_unknown_identifier_falls_back_to_words(code: tuple[Store, list[CodeSymbol]]) -> None:
    store, symbols = code
    picks = CodeSearch(store).rank("backoff", symbols)
    assert picks and _sources(store, picks)[0] == "src/app/retry.py"


def test_imports_rank_below_the_code_and_scope_drops_tests(
    code: tuple[Store, list[CodeSymbol]],
) -> None:
    store, symbols = code
    picks = CodeSearch(store).rank("which code does a retry with backoff?", symbols)
    entries = store.entries(picks)
    assert "tests/test_retry.py" not in {entries[i].source for i in picks}
    assert "kind:function" in entries[picks[0]].tags  # the function before its imports


def test_a_subpath_keeps_the_search_inside_it(code: tuple[Store, list[CodeSymbol]]) -> None:
    store, symbols = code
    search = CodeSearch(store)
    assert set(_sources(store, search.rank("retry", symbols, prefix="src/lib"))) == {
        "src/lib/cache.py"
    }
    assert search.rank("deliver", symbols, prefix="src/lib") == []


def test_a_clue_puts_first_the_code_that_holds_it_too(code: tuple[Store, list[CodeSymbol]]) -> None:
    store, symbols = code
    search = CodeSearch(store)
    plain = search.rank("retry", symbols)
    assert _sources(store, plain)[0] == "src/app/retry.py"
    clued = search.rank("retry", symbols, clue="eviction")
    assert _sources(store, clued)[0] == "src/lib/cache.py"


def test_a_long_symbol_is_cut_to_the_lines_that_answer(make_store: Callable[..., Store]) -> None:
    search = CodeSearch(make_store())
    body = "\n".join(f"    step_{n} = {n}" for n in range(400)) + "\n    checksum = crc(data)\n"
    passage = search.passage(f"def big():\n{body}", "where is the checksum", None, 100)
    assert "checksum = crc(data)" in passage.text
    assert passage.end_line == passage.total_lines
    assert passage.start_line > 1


@pytest.mark.parametrize(
    "question",
    [
        "where is Queue.deliver defined?",
        "what does `Queue.deliver` do with the event",
        "app.queue.Queue.deliver",
        "src.app.queue.Queue.deliver",
        "why does Queue::deliver retry with backoff?",
    ],
)
def test_a_name_written_in_a_question_comes_first_always(
    code: tuple[Store, list[CodeSymbol]], question: str
) -> None:
    store, symbols = code
    picks = CodeSearch(store).rank(question, symbols)
    # "retry", "backoff" and "deliver" would rank retry.py first by words alone.
    assert _sources(store, picks)[0] == "src/app/queue.py"
    if " " in question:
        assert len(picks) > 1  # in a sentence, what the words rank still follows


def test_a_name_no_symbol_holds_leaves_the_words_to_rank(
    code: tuple[Store, list[CodeSymbol]],
) -> None:
    store, symbols = code
    search = CodeSearch(store)
    words = search.rank("which code does a retry with backoff?", symbols)
    assert search.rank("which code does a retry with backoff, e.g. Fake.thing?", symbols) == words
    assert _sources(store, search.rank("how does render() build the page?", symbols))[0] == (
        "src/app/render.py"
    )


def test_a_paragraph_of_docs_ranks_below_the_code_it_describes(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    rows = [
        ("docs/api.rst", "", "paragraph", "How the cache evicts a key when the cache is full.\n"),
        ("src/cache.py", "evict", "function", "def evict(store, key):\n    # when full\n"),
    ]
    symbols = []
    for position, (source, name, kind, text) in enumerate(rows):
        leaf = make_leaf(
            text, domain="code", source=source, position=position, tags=(f"kind:{kind}",)
        )
        store.put_leaf(leaf)
        symbols.append(CodeSymbol(source, name, kind, leaf.leaf_id))
    picks = CodeSearch(store).rank("how does the cache evict a key when full?", symbols)
    assert _sources(store, picks) == ["src/cache.py", "docs/api.rst"]


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        # A module's constant that names the words of the question as well as the function.
        ("code", "DEFAULT = parse('bold red on white')\n"),
        # A passage of the docs (paragraphs packed together).
        ("passage", "Parse a style: bold red on white.\n\nA style is parsed from words.\n"),
    ],
)
def test_loose_code_and_packed_docs_rank_below_the_function_that_does_it(
    make_store: Callable[..., Store], kind: str, text: str
) -> None:
    store = make_store()
    rows = [
        ("src/styles.py", "", kind, text),
        ("src/style.py", "parse", "function", "def parse(definition):\n    # bold red on white\n"),
    ]
    symbols = []
    for position, (source, name, row_kind, body) in enumerate(rows):
        leaf = make_leaf(
            body, domain="code", source=source, position=position, tags=(f"kind:{row_kind}",)
        )
        store.put_leaf(leaf)
        symbols.append(CodeSymbol(source, name, row_kind, leaf.leaf_id))
    picks = CodeSearch(store).rank("how is a style such as bold red on white parsed?", symbols)
    assert _sources(store, picks)[0] == "src/style.py"
