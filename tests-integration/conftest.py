from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` first, in their order, then the rest in theirs.

    pytest-xdist's worksteal gives each worker a contiguous block of the list and lets an
    idle worker steal from the end of another's: a long test started last keeps one core
    busy while the other waits. Started first, the long ones run while the other worker
    works through the short ones."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def python() -> str:
    """The interpreter of this test run; child processes use the same environment."""
    return sys.executable


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- real agent CLIs
AGENTS_BIN = (
    Path(__file__).resolve().parents[1] / "tools" / "agents" / "node" / "node_modules" / ".bin"
)
"""Where tools/agents/install.sh puts claude, opencode, codex, gemini and copilot (pinned)."""


@pytest.fixture
def agent_cli() -> Callable[[str], str]:
    """The path of an agent's CLI from tools/agents, or skip saying how to get it."""

    def find(name: str) -> str:
        path = AGENTS_BIN / name
        if not path.exists():
            pytest.skip(f"{name} is not installed: run tools/agents/install.sh (needs npm)")
        return str(path)

    return find


@pytest.fixture
def agent_env(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A child environment with a fresh HOME, the agents on PATH, and no optional traffic."""
    home = tmp_path / "home"
    home.mkdir()
    scratch = tmp_path / "tmp"  # the clients' own error reports land here, not in /tmp
    scratch.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("IHMT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")
        and k not in ("GH_TOKEN", "GITHUB_TOKEN", "GH_HOST")
        and not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE", "CODEX_", "OPENCODE"))
        and not k.startswith(("GEMINI_", "GOOGLE_", "COPILOT_", "GITHUB_COPILOT_"))
    }
    env.update(
        {
            "HOME": str(home),
            "TMPDIR": str(scratch),
            "PATH": f"{AGENTS_BIN}:{Path(sys.executable).parent}:/usr/bin:/bin",
            "IHMT_PROJECT": "",
            # One sentence-encoder cache for the run (85 MB), not one per fresh HOME.
            "IHMT_CACHE_DIR": str(tmp_path_factory.getbasetemp() / "ihmt-model-cache"),
            # no telemetry, update checks or model catalogue downloads from the clients
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "GEMINI_TELEMETRY_ENABLED": "false",
            "COPILOT_AUTO_UPDATE": "false",
            "NO_COLOR": "1",
        }
    )
    return env


@pytest.fixture
def ihmt_install(agent_env: dict[str, str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``ihmt ARGS`` (e.g. ``install codex``) in the agents' temporary HOME."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(Path(sys.executable).parent / "ihmt"), *args],
            capture_output=True,
            text=True,
            env=agent_env,
            cwd=agent_env["HOME"],
            timeout=180,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done

    return run
