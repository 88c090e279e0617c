from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ihmt_mcp import Memory, Settings

Session = Callable[[ClientSession], Awaitable[None]]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    work = tmp_path / "work"
    work.mkdir()
    return Settings.for_home(tmp_path / "home", cwd=work)


@pytest.fixture
def memory(settings: Settings) -> Memory:
    mem = Memory.open(settings)
    yield mem
    mem.close()


@pytest.fixture
def run_server(tmp_path: Path) -> Callable[..., None]:
    """Run ``body(session)`` against a real ``python -m ihmt_mcp`` over stdio."""

    def run(
        body: Session,
        *,
        home: Path | None = None,
        cwd: Path | None = None,
        roots: list[Path] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        home = home or tmp_path / "home"
        workdir = cwd or tmp_path
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ihmt_mcp"],
            env={"IHMT_HOME": str(home), **(env or {})},
            cwd=str(workdir),
        )
        callback = None
        if roots is not None:

            async def list_roots(_ctx: Any) -> types.ListRootsResult:
                return types.ListRootsResult(
                    roots=[types.Root(uri=f"file://{root}") for root in roots]
                )

            callback = list_roots

        async def main() -> None:
            with open(tmp_path / "server.log", "a", encoding="utf-8") as errlog:
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write, list_roots_callback=callback) as session,
                ):
                    await session.initialize()
                    with anyio.fail_after(120):
                        await body(session)

        anyio.run(main)

    return run


@pytest.fixture
def call() -> Callable[..., Awaitable[tuple[bool, str]]]:
    """``await call(session, tool, **arguments)`` → (is_error, text)."""

    async def do(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, str]:
        result = await session.call_tool(tool, arguments)
        texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
        return bool(result.is_error), "\n".join(texts)

    return do


@pytest.fixture
def tools_json() -> Callable[[Any], str]:
    def dump(listed: Any) -> str:
        return json.dumps(
            {"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]}
        )

    return dump


@pytest.fixture
def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("IHMT_")}


# ---------------------------------------------------------------------- sync: machines
@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare git repository on local disk, with ``main`` as its branch: the remote
    that synced machines share."""
    bare = tmp_path / "remote.git"
    for args in (
        ["git", "init", "--quiet", "--bare", str(bare)],
        ["git", "-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"],
    ):
        subprocess.run(args, check=True, capture_output=True)
    return bare


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Callable[[str], Memory]]:
    """``machine(name)``: a memory of its own, as on another computer."""
    opened: list[Memory] = []

    def make(name: str) -> Memory:
        memory = Memory.init(tmp_path / name / "ihmt_memory", semantic="off")
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()
