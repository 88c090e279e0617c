"""The real opencode CLI (pinned in tools/agents/install.sh) connects to ihmt-mcp."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable


def test_opencode_mcp_list_shows_ihmt_memory_connected(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    opencode = agent_cli("opencode")
    home = agent_env["HOME"]
    ihmt_install("install", "opencode", "--home", f"{home}/memory")

    done = subprocess.run(
        [opencode, "mcp", "list"],
        capture_output=True,
        text=True,
        env=agent_env,
        cwd=home,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )

    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert done.returncode == 0, text
    line = next((x for x in text.splitlines() if "ihmt-memory" in x), None)
    assert line is not None, text
    assert "connected" in line and "✓" in line, text
