from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession

from ihmt_mcp import Memory, Settings
from ihmt_mcp._server import TOOL_NAMES

Call = Callable[..., Awaitable[tuple[bool, str]]]

EXPECTED_PARAMETERS = {
    "search_memory": (
        ["query"],
        {"clue": None, "detail": "compact", "as_of": None, "alternatives": None},
    ),
    "save_memory": (
        ["content"],
        {"domain": "general", "content_type": "auto", "replaces": ""},
    ),
    "mark_outdated": (["old_id", "new_id"], {"undo": False}),
    "project_map": (["path"], {"detail": "files", "subpath": ""}),
    "find_code": (
        ["query", "path"],
        {"scope": "main", "subpath": "", "clue": None, "max_tokens": 1500},
    ),
    "read_file": (["path"], {"force": False}),
    "note": (["text"], {}),
    "recall": (["query"], {"clue": None}),
    "digest_output": (["text"], {"label": "output"}),
    "forget_memory": (["memory_id", "reason"], {}),
}


def test_tools_list_has_the_ten_tools_with_exact_parameters_and_fits_1500_tokens(
    run_server: Callable[..., None], tools_json: Callable[[Any], str]
) -> None:
    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        listed = await session.list_tools()
        seen["tools"] = listed.tools
        seen["json"] = tools_json(listed)

    run_server(body)
    tools = {t.name: t for t in seen["tools"]}
    assert tuple(tools) == TOOL_NAMES
    for name, (required, optional) in EXPECTED_PARAMETERS.items():
        schema = tools[name].input_schema
        assert schema["required"] == required, name
        props = schema["properties"]
        assert list(props) == [*required, *optional], name
        for param, default in optional.items():
            assert props[param].get("default") == default, (name, param)
        assert tools[name].description and len(tools[name].description) > 40
    tokens = len(seen["json"]) / 4
    print(f"tools/list: {len(seen['json'])} chars ≈ {tokens:.0f} tokens")
    assert tokens <= 1500
    read_only = {"search_memory", "project_map", "find_code", "read_file", "recall"}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None and hints.read_only_hint is (name in read_only), name
        assert hints.destructive_hint is (
            True if name == "forget_memory" else None if name in read_only else False
        ), name
        assert hints.open_world_hint is False


def test_memory_tools_end_to_end(
    run_server: Callable[..., None], call: Call, tmp_path: Path
) -> None:
    project = tmp_path / "falcon"
    (project / ".git").mkdir(parents=True)
    out: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        error, text = await call(session, "save_memory", content="I live in Madrid.", replaces="")
        assert not error and text.startswith("SAVED") and "project falcon" in text
        old_id = text.split()[2]
        error, text = await call(session, "save_memory", content="I moved to Valencia now.")
        assert not error and "CONTRADICTION" in text and "'Valencia'" in text
        error, text = await call(session, "search_memory", query="where do I live?")
        assert not error and text.startswith("FOUND") and "Valencia" in text, text
        assert "OUTDATED" in text and old_id in text
        error, text = await call(session, "search_memory", query="where do I live?", detail="full")
        assert "path: root" in text
        error, text = await call(
            session, "search_memory", query="where do I live?", as_of="2000-01-01"
        )
        assert text.startswith("NOT FOUND")
        for surname in ("Marín", "García", "Pérez"):
            await call(
                session,
                "save_memory",
                content=f"Luis {surname} reviewed the billing module pull request.",
            )
        error, text = await call(session, "search_memory", query="Luis")
        assert not error and text.startswith("AMBIGUOUS")
        error, text = await call(session, "search_memory", query="Luis", clue="García")
        assert text.startswith("FOUND") and "García" in text.split("\n")[2]
        error, text = await call(session, "search_memory", query="quantum chromodynamics lab")
        assert not error and text.startswith("NOT FOUND")
        asked = "What is my home town these days?"
        error, text = await call(session, "search_memory", query=asked)
        assert not error and text.startswith("NOT FOUND"), text
        error, text = await call(
            session, "search_memory", query=asked, alternatives=["where do I live now"]
        )
        assert not error and text.startswith("FOUND") and "Valencia" in text, text
        assert f'answered for the phrasing "where do I live now" of "{asked}"' in text
        error, text = await call(
            session, "save_memory", content="Staging runs PostgreSQL 16 on db01."
        )
        staging_old = text.split()[2]
        error, text = await call(
            session,
            "save_memory",
            content="Staging moved to PostgreSQL 17.",
            replaces="staging PostgreSQL 16",
        )
        assert "REPLACED" in text and staging_old in text
        new_id = text.split()[2]
        error, text = await call(session, "mark_outdated", old_id=staging_old, new_id=new_id)
        assert not error and "OUTDATED" in text
        # A wrong mark is undone through the same tool, never by an eleventh one.
        error, text = await call(
            session, "mark_outdated", old_id=staging_old, new_id=old_id, undo=True
        )
        assert error and f"new_id={new_id}" in text
        error, text = await call(
            session, "mark_outdated", old_id=staging_old, new_id=new_id, undo=True
        )
        assert not error and text.startswith(f"RESTORED: {staging_old} is current again"), text
        error, text = await call(
            session, "search_memory", query="staging PostgreSQL 16 db01", detail="full"
        )
        assert not error and staging_old in text and "OUTDATED" not in text, text
        error, text = await call(
            session, "mark_outdated", old_id=staging_old, new_id=new_id, undo=True
        )
        assert not error and "nothing changed" in text
        error, text = await call(session, "forget_memory", memory_id=new_id, reason="test")
        assert not error and text.startswith(f"FORGOTTEN {new_id}")
        out["done"] = True

    run_server(body, cwd=project)
    assert out["done"]


def test_errors_are_one_plain_sentence_never_a_traceback(
    run_server: Callable[..., None], call: Call, tmp_path: Path
) -> None:
    secret = "ghp_" + "a1B2c3D4e5" * 4
    texts: list[str] = []

    async def body(session: ClientSession) -> None:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("save_memory", {"content": f"token {secret}"}, "GitHub token"),
            ("save_memory", {"content": "   "}, "empty"),
            ("save_memory", {"content": "x", "content_type": "movie"}, "content_type"),
            ("search_memory", {"query": "x", "as_of": "soon"}, "as_of"),
            ("search_memory", {"query": "  "}, "empty"),
            ("search_memory", {"query": "x", "detail": "huge"}, "detail"),
            ("mark_outdated", {"old_id": "L-x-0000-0000000000", "new_id": "L-y-0000-1"}, "id"),
            ("forget_memory", {"memory_id": "L-x-0000-0000000000", "reason": "r"}, "no memory"),
            ("forget_memory", {"memory_id": "L-x-0000-0000000000", "reason": ""}, "reason"),
            ("read_file", {"path": "/etc/hostname"}, "outside"),
            ("read_file", {"path": "missing.txt"}, "no such file"),
            ("project_map", {"path": str(tmp_path / "nope")}, "not a folder"),
            ("find_code", {"query": "x", "path": str(tmp_path), "scope": "weird"}, "scope"),
            ("note", {"text": " "}, "empty"),
            ("digest_output", {"text": ""}, "empty"),
        ]
        for tool, args, expected in cases:
            error, text = await call(session, tool, **args)
            assert error, (tool, args, text)
            assert expected.lower() in text.lower(), (tool, text)
            texts.append(text)

    run_server(body)
    for text in texts:
        assert "Traceback" not in text and "\n" not in text
        assert text[0].isupper() and text.endswith(".")
        assert secret not in text
    log = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert secret not in log
    assert secret.encode() not in b"".join(
        p.read_bytes() for p in (tmp_path / "home").rglob("*") if p.is_file()
    )


def test_session_and_code_tools_end_to_end(
    run_server: Callable[..., None], call: Call, tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    (project / "orders").mkdir(parents=True)
    (project / "orders" / "service.py").write_text(
        "class OrderService:\n    def create(self, sku):\n        return sku\n\n"
        "    def cancel(self, order_id):\n        return None\n"
    )
    (project / "notes.txt").write_text("v1\n")

    async def body(session: ClientSession) -> None:
        error, text = await call(session, "note", text="The flaky test is test_refund_race.")
        assert not error and text.startswith("NOTED #1")
        error, text = await call(session, "recall", query="flaky test")
        assert not error and "test_refund_race" in text
        log = "\n".join([f"line {n}" for n in range(500)] + ["ERROR: disk full", "3 failed"])
        error, text = await call(session, "digest_output", text=log, label="build")
        assert not error and "ERROR: disk full" in text and len(text) < 2600
        error, text = await call(session, "recall", query="build", clue="disk full")
        assert "ERROR: disk full" in text
        error, text = await call(session, "read_file", path="notes.txt")
        assert not error and text.startswith("FILE notes.txt") and "v1" in text
        error, text = await call(session, "read_file", path="notes.txt")
        assert text.startswith("UNCHANGED")
        (project / "notes.txt").write_text("v2\n")
        error, text = await call(session, "read_file", path=str(project / "notes.txt"))
        assert text.startswith("CHANGED") and "+v2" in text
        error, text = await call(session, "project_map", path=str(project), detail="symbols")
        assert not error and "method OrderService.cancel 5-6" in text
        error, text = await call(session, "find_code", query="OrderService.cancel", path=".")
        assert not error and text.startswith("orders/service.py:5-6")
        error, text = await call(
            session, "find_code", query="nothing like this exists", path=str(project)
        )
        assert not error and text.startswith("NOT FOUND")

    run_server(body, cwd=project, roots=[project])


def test_the_server_sees_saves_made_by_another_process(
    run_server: Callable[..., None], call: Call, tmp_path: Path
) -> None:
    home = tmp_path / "home"

    async def body(session: ClientSession) -> None:
        _, text = await call(session, "search_memory", query="quokka mascot")
        assert text.startswith("NOT FOUND")
        script = (
            "from pathlib import Path; from ihmt_mcp import Memory, Settings;"
            f"m = Memory.open(Settings.for_home(Path({str(home)!r})));"
            "m.save('The team mascot is a quokka named Pip.')"
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
        _, text = await call(session, "search_memory", query="quokka mascot")
        assert text.startswith("FOUND") and "Pip" in text

    run_server(body, home=home)
    assert Memory.open(Settings.for_home(home)).stats().leaves == 1


def test_stdout_carries_only_protocol_messages(tmp_path: Path) -> None:
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "save_memory", "arguments": {"content": "We use tabs, not spaces."}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "search_memory", "arguments": {"query": "tabs or spaces?"}},
        },
    ]
    errlog = tmp_path / "stderr.log"
    with (
        errlog.open("w") as err,
        subprocess.Popen(
            [sys.executable, "-m", "ihmt_mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env={"IHMT_HOME": str(tmp_path / "home"), "IHMT_LOG_LEVEL": "DEBUG", "PATH": ""},
            cwd=tmp_path,
        ) as process,
    ):
        watchdog = threading.Timer(120, process.kill)
        watchdog.start()
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
            process.stdin.flush()
            replies = []
            # Tools run concurrently: the search (4) may answer before the save (3).
            while not {1, 2, 3, 4} <= {r.get("id") for r in replies}:
                line = process.stdout.readline()
                assert line, "the server closed stdout early"
                replies.append(json.loads(line))  # every stdout line is a JSON-RPC message
            process.stdin.close()
            process.wait(timeout=60)
        finally:
            watchdog.cancel()
            if process.poll() is None:
                process.kill()
    assert all(r["jsonrpc"] == "2.0" for r in replies)
    assert {r.get("id") for r in replies} >= {1, 2, 3, 4}
    assert "ihmt_mcp" in errlog.read_text()  # the DEBUG log went to stderr


def test_help_goes_to_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ihmt_mcp", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == "" and "IHMT_HOME" in done.stderr
