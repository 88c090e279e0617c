"""ihmt-mcp driven by an independent MCP client: the MCP Inspector's CLI (through npx)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
"""Pinned: verified with `npm view @modelcontextprotocol/inspector version` (2.12.0)."""
NPX = shutil.which("npx")

pytestmark = pytest.mark.skipif(
    NPX is None, reason="npx (Node.js) is not installed, so the MCP Inspector cannot run"
)


def _inspector(tmp_path: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert NPX is not None
    command = [
        NPX,
        "-y",
        INSPECTOR,
        "--cli",
        "-e",
        f"IHMT_HOME={home}",
        sys.executable,
        "-m",
        "ihmt_mcp",
        *args,
    ]
    env = {
        "PATH": str(Path(NPX).parent) + ":/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),  # the inspector keeps its catalog and npm cache under HOME
        "MCP_CATALOG_PATH": str(tmp_path / "inspector-catalog.json"),
        "npm_config_cache": str(Path.home() / ".npm"),  # reuse the machine's download cache
        "npm_config_update_notifier": "false",
    }
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path, check=False
    )


def _json(done: subprocess.CompletedProcess[str]) -> Any:
    start = done.stdout.find("{")
    assert start >= 0, f"no JSON from the inspector: {done.stdout!r} {done.stderr[-2000:]!r}"
    return json.loads(done.stdout[start:])


def test_inspector_lists_the_ten_tools(tmp_path: Path) -> None:
    done = _inspector(tmp_path, tmp_path / "home", "--method", "tools/list")
    assert done.returncode == 0, done.stderr[-2000:]
    names = [tool["name"] for tool in _json(done)["tools"]]
    assert names == [
        "search_memory",
        "save_memory",
        "mark_outdated",
        "project_map",
        "find_code",
        "read_file",
        "note",
        "recall",
        "digest_output",
        "forget_memory",
    ]


def test_inspector_saves_then_finds_and_sees_tool_errors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    saved = _inspector(
        tmp_path,
        home,
        "--method",
        "tools/call",
        "--tool-name",
        "save_memory",
        "--tool-arg",
        "content=We deploy falcon with Argo CD since March 2026.",
    )
    assert saved.returncode == 0, saved.stderr[-2000:]
    reply = _json(saved)
    assert reply["isError"] is False
    assert reply["content"][0]["text"].startswith("SAVED memory L-")
    found = _inspector(
        tmp_path,
        home,
        "--method",
        "tools/call",
        "--tool-name",
        "search_memory",
        "--tool-arg",
        "query=how do we deploy falcon?",
    )
    assert found.returncode == 0, found.stderr[-2000:]
    text = _json(found)["content"][0]["text"]
    assert text.startswith("FOUND") and "Argo CD" in text
    refused = _inspector(
        tmp_path,
        home,
        "--method",
        "tools/call",
        "--tool-name",
        "forget_memory",
        "--tool-arg",
        "memory_id=L-none-0000-0000000000",
        "reason=test",
    )
    # The inspector exits non-zero when a tool reports isError; the reply is still printed.
    assert "No memory with id" in refused.stdout + refused.stderr
    assert "Traceback" not in refused.stdout
