"""Two ihmt-mcp server processes on one IHMT_HOME, saving at once: nothing is lost."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SAVES_PER_SERVER = 25


async def _with_server(home: Path, log: Path, work) -> None:  # type: ignore[no-untyped-def]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ihmt_mcp"], env={"IHMT_HOME": str(home)}
    )
    with log.open("a", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await work(session)


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_two_servers_saving_at_once_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    words = {
        name: [f"zq{name}{n:03}x" for n in range(SAVES_PER_SERVER)] for name in ("alpha", "beta")
    }
    saved: dict[str, list[str]] = {"alpha": [], "beta": []}
    found: dict[str, int] = {"alpha": 0, "beta": 0}
    both_started = anyio.Event()
    both_saved = anyio.Event()
    started: list[str] = []
    finished: list[str] = []

    async def run(name: str) -> None:
        async def work(session: ClientSession) -> None:
            started.append(name)
            if len(started) == 2:
                both_started.set()
            with anyio.fail_after(300):
                await both_started.wait()
                for word in words[name]:
                    result = await session.call_tool(
                        "save_memory",
                        {"content": f"Server {name} remembers the token word {word} for later."},
                    )
                    assert not result.is_error, _text(result)
                    saved[name].append(_text(result).split()[2])
                finished.append(name)
                if len(finished) == 2:
                    both_saved.set()
                await both_saved.wait()
                # Then each server must find every memory, its own and the other's.
                for other in words.values():
                    for word in other:
                        result = await session.call_tool("search_memory", {"query": word})
                        if word in _text(result):
                            found[name] += 1

        await _with_server(home, tmp_path / f"{name}.log", work)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(run, "alpha")
            group.start_soon(run, "beta")

    anyio.run(main)
    total = 2 * SAVES_PER_SERVER
    assert len(set(saved["alpha"]) | set(saved["beta"])) == total
    assert found == {"alpha": total, "beta": total}
    from ihmt_mcp import Memory, Settings

    with Memory.open(Settings.for_home(home)) as memory:
        stats = memory.stats()
    assert stats.leaves == total and stats.unreachable == 0
