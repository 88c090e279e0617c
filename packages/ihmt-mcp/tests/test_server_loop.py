"""The server's event loop only waits: every tool's disk work runs on a worker thread.

In process (the SDK's in-memory client), so the test can see on which thread each piece
of work runs; ``test_server.py`` drives the same tools over stdio.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

import ihmt_mcp._server as server_module
import ihmt_mcp._settings as settings_module
from ihmt_mcp import Settings, build_server
from ihmt_mcp._server import TOOL_NAMES

ARGUMENTS: dict[str, dict[str, Any]] = {
    "search_memory": {"query": "where do I live"},
    "save_memory": {"content": "I live in Madrid since 2024-03-01."},
    "mark_outdated": {"old_id": "L-x-0000-0000000000", "new_id": "L-y-0000-0000000001"},
    "project_map": {"path": "."},
    "find_code": {"query": "main", "path": "."},
    "read_file": {"path": "notes.txt"},
    "note": {"text": "the build needs make twice"},
    "recall": {"query": "build"},
    "digest_output": {"text": "line one\nERROR: two\nline three", "label": "log"},
    "forget_memory": {"memory_id": "L-x-0000-0000000000", "reason": "test"},
}


def test_every_tool_runs_its_work_and_path_lookups_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "falcon"
    (project / ".git").mkdir(parents=True)
    (project / "notes.txt").write_text("hello\n", encoding="utf-8")
    (project / "main.py").write_text("def main() -> int:\n    return 0\n", encoding="utf-8")
    settings = dataclasses.replace(
        Settings.for_home(tmp_path / "home", cwd=project), semantic="off"
    )
    threads: dict[str, set[int]] = {}

    def record(what: str) -> None:
        threads.setdefault(what, set()).add(threading.get_ident())

    guard = server_module._guard
    root_of = settings_module.find_project_root

    def recorded_guard(name: str, work: Any) -> Any:
        record(name)
        return guard(name, work)

    def recorded_root(start: Path) -> Path | None:
        record("find_project_root")
        return root_of(start)

    monkeypatch.setattr(server_module, "_guard", recorded_guard)
    monkeypatch.setattr(server_module, "find_project_root", recorded_root)
    monkeypatch.setattr(settings_module, "find_project_root", recorded_root)
    replies: dict[str, bool] = {}
    loop_thread: set[int] = set()

    async def main() -> None:
        loop_thread.add(threading.get_ident())
        async with Client(build_server(settings)) as client:
            for name in TOOL_NAMES:
                result = await client.call_tool(name, ARGUMENTS[name])
                replies[name] = result.is_error

    anyio.run(main)
    assert set(replies) == set(TOOL_NAMES)
    assert replies["save_memory"] is False and replies["note"] is False
    assert set(threads) == {*TOOL_NAMES, "find_project_root"}
    for what, idents in threads.items():
        assert not idents & loop_thread, f"{what} ran on the event loop's thread"
