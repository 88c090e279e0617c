"""``ihmt install`` then ``ihmt uninstall`` on config files of any shape, mode and kind
(a file or a symbolic link to one): one clear refusal or a clean round trip, never a
crash, never a mode wider than before, and the original bytes given back.

In-process (the plans the commands run) so that many shapes fit in a few seconds; the
commands themselves run as subprocesses in test_install.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ihmt_cli._agent_setup import server_spec
from ihmt_cli._install import agent_paths, install_plan, uninstall_plan
from ihmt_cli._types import AGENTS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and links")

JSON_SHAPES = (
    '{"numStartups": 3}',
    '{\n    "oauthAccount": {"accessToken": "t"},\n    "theme": "dark"\n}\n',
    '{"mcpServers": {"other": {"command": "x", "args": []}}}',
    '{"mcpServers": {}}',
    '{"mcpServers": []}',
    '{"mcpServers": "x"}',
    '{"mcpServers": {"ihmt-memory": 3}}',
    '{"mcpServers": {"ihmt-memory": {"command": "old"}}}',
    '{"mcp": {"other": {"type": "remote", "url": "https://x"}}}',
    '{"mcp": []}',
    '{"mcp": {"ihmt-memory": "x"}}',
    '{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "x"}]}]}}',
    '{"hooks": []}',
    '{"hooks": {"SessionStart": "x"}}',
    '{"hooks": {"SessionStart": [3, {"hooks": "x"}]}}',
    "[1, 2]",
    '"text"',
    "",
    "   \n",
    "{ not json",
    '{\n  // a comment\n  "theme": "x",\n}\n',
    '{"a": 1, "a": 2}',
    "\ufeff{}",
)
TOML_PIECES = (
    "# mine",
    'model = "o3"',
    'mcp_servers = { other = { command = "other-mcp", args = ["--x"] } }',
    "mcp_servers = { }",
    'mcp_servers = { ihmt-memory = { command = "old" } }',
    'mcp_servers = { other = "x" }',
    'mcp_servers = "x"',
    "mcp_servers = [1]",
    '[[mcp_servers]]\nname = "a"',
    '[mcp_servers.other]\ncommand = "y"  # theirs',
    '[mcp_servers.ihmt-memory]\ncommand = "old"',
    "[mcp_servers]\nihmt-memory = 3",
    'mcp_servers.other.command = "z"',
    '[profiles.fast]\nmodel = "o4-mini"',
    "[hooks.state]\nx = 1",
    "not = [toml",
)


@st.composite
def configs(draw: st.DrawFn) -> tuple[str, bytes]:
    agent = draw(st.sampled_from(AGENTS))
    if agent == "codex":
        pieces = draw(st.lists(st.sampled_from(TOML_PIECES), max_size=4))
        text = "\n".join(pieces) + ("\n" if pieces else "")
    else:
        text = draw(st.sampled_from(JSON_SHAPES))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return agent, text.encode("utf-8") + draw(st.sampled_from([b"", b"\n", b"\xff"]))


def _snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every entry under ``root``: its kind, mode, and bytes (a link: where it points)."""
    out = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            out[str(path)] = ("link", 0, os.readlink(path).encode())
        elif stat.S_ISREG(info.st_mode):
            out[str(path)] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return out


def _modes(root: Path) -> dict[str, int]:
    return {
        str(p): stat.S_IMODE(p.lstat().st_mode)
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and not p.name.endswith(".bak-ihmt")
    }


@contextlib.contextmanager
def _user_home() -> Iterator[Path]:
    """A temporary HOME with no agent CLI on PATH, for one example."""
    keys = ("HOME", "PATH", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")
    keys += ("GEMINI_CLI_HOME", "COPILOT_HOME")
    saved = {k: os.environ.get(k) for k in keys}
    root = Path(tempfile.mkdtemp(prefix="ihmt-install-fuzz-"))
    home = root / "home"
    (home / "empty-bin").mkdir(parents=True)
    try:
        for key in keys:
            os.environ.pop(key, None)
        os.environ["HOME"] = str(home)
        os.environ["PATH"] = str(home / "empty-bin")
        yield home
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(root, ignore_errors=True)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    config=configs(),
    mode=st.integers(min_value=0o400, max_value=0o777),
    linked=st.booleans(),
)
# Found by a run: an empty inline table, emptied again by the uninstall, came back as ''.
@example(config=("codex", b"mcp_servers = { }\n"), mode=0o600, linked=False)
def test_install_then_uninstall_never_crashes_widens_or_loses_bytes(
    config: tuple[str, bytes], mode: int, linked: bool
) -> None:
    agent, data = config
    with _user_home() as home:
        paths = agent_paths(agent, "user")  # type: ignore[arg-type]
        real = home / "dotfiles" / "config" if linked else paths.config
        real.parent.mkdir(parents=True, exist_ok=True)
        paths.config.parent.mkdir(parents=True, exist_ok=True)
        real.write_bytes(data)
        real.chmod(mode)
        if linked:
            paths.config.symlink_to(real)
        before = _snapshot(home)
        spec = server_spec(home / "mem")
        refused = ""
        try:
            install_plan(agent, "user", spec).run()  # type: ignore[arg-type]
        except click.ClickException as exc:
            refused = exc.format_message()
        if refused:
            assert str(paths.config) in refused, refused  # one message, naming the file
            assert _snapshot(home) == before, "a refused install changed a file"
            return
        for path, was in _modes(home).items():
            old = before.get(path)
            if old is not None and old[0] == "file":
                assert was == old[1], f"install changed the mode of {path}"
        assert paths.config.is_symlink() == linked

        uninstall_plan(agent, "user").run()  # type: ignore[arg-type]

        after = _snapshot(home)
        for path, (kind, was, _) in after.items():
            if kind == "file" and path in before:
                assert was == before[path][1], f"the round trip changed the mode of {path}"
        if b"ihmt-memory" not in data:  # else an earlier install's file: not an original
            assert after == before
