"""The real agent CLIs (pinned in tools/agents/install.sh) run the recall hooks that
``ihmt install`` registers, and put what ``ihmt hook`` printed into the model's context.

No model is reachable here, and none is needed: each agent runs these hooks before its
first call to a model.

- **Claude Code** runs ``SessionStart`` and ``UserPromptSubmit`` in ``claude -p`` before
  it finds it is not logged in; ``--output-format stream-json --verbose`` reports each
  hook's run, and the session transcript holds the context exactly as the model would
  have read it ("SessionStart hook additional context: …").
- **Codex** runs them in ``codex exec`` before its request fails (the model provider is a
  closed loopback port); the rollout file records each added context as a developer
  message of kind ``hooks.additional_context``. Codex runs an unmanaged hook only once it
  is trusted: ``--dangerously-bypass-hook-trust`` stands in for that in one test, and
  another trusts the hooks the way ``/hooks`` in the Codex TUI records it (the hook's
  ``currentHash`` under ``[hooks.state."<key>"]`` in config.toml) and runs without it.
- **opencode** loads the plugin in ``opencode serve``; a message posted with
  ``noReply`` (saved, never sent to a model) goes through ``chat.message``, and the
  saved message comes back with the plugin's synthetic part.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

PROJECT = "lynx"
QUESTION = "which staging host do we deploy lynx to?"
OLD_FACT = "We deploy lynx to the staging host vega-3 with make ship, never on Fridays."
NEWER = [
    "The lynx API answers on port 8443 behind the ingress.",
    "Lynx release notes are written by the mobile team.",
    "The lynx nightly job rebuilds the search index at 02:00.",
    "Lynx logs go to the central collector, kept for thirty days.",
    "Our stack is Go and PostgreSQL.",
]
OFFLINE = (
    "-c",
    'model_providers.offline={ name = "offline", base_url = "http://127.0.0.1:9/v1", '
    'wire_api = "responses" }',
    "-c",
    'model_provider="offline"',
    "-c",
    "check_for_update_on_startup=false",
)


@pytest.fixture
def project(agent_env: dict[str, str], tmp_path: Path) -> Path:
    """A git project whose memory holds one old answer and five newer memories.

    The agents run here without IHMT_PROJECT, so the hook names the project after the
    git root of the session's folder, as it does for a user."""
    agent_env.pop("IHMT_PROJECT", None)
    # Every hook answers by itself, so that no recall server outlives the test (the
    # server is tested in packages/ihmt-cli/tests/test_hook_server.py).
    agent_env["IHMT_HOOK_SERVER"] = "off"
    folder = tmp_path / "work" / PROJECT
    (folder / ".git").mkdir(parents=True)
    memory = Path(agent_env["HOME"]) / "memory"
    ihmt = str(Path(sys.executable).parent / "ihmt")
    env = {**agent_env, "IHMT_HOME": str(memory)}
    run = {"env": env, "cwd": folder, "capture_output": True, "text": True, "check": True}
    subprocess.run([ihmt, "init"], **run)  # type: ignore[call-overload]
    dates = ["2026-01-05", "2026-02-01", "2026-02-02", "2026-02-03", "2026-02-04", "2026-02-05"]
    for text, day in zip([OLD_FACT, *NEWER], dates, strict=True):
        subprocess.run([ihmt, "save", text, "--date", day], **run)  # type: ignore[call-overload]
    return folder


def _hook_log(agent_env: dict[str, str]) -> list[dict[str, Any]]:
    log = Path(agent_env["HOME"]) / "memory" / "hooks" / "hooks.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# ---------------------------------------------------------------------- Claude Code
def test_claude_code_runs_both_hooks_and_puts_their_context_in_the_transcript(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> None:
    claude = agent_cli("claude")
    home = Path(agent_env["HOME"])
    ihmt_install("install", "claude-code", "--home", str(home / "memory"))

    done = subprocess.run(
        [claude, "-p", QUESTION, "--output-format", "stream-json", "--verbose"],
        capture_output=True,
        text=True,
        env=agent_env,
        cwd=project,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )

    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    # stream-json reports SessionStart hooks; the prompt's hook shows in the transcript
    started = [e for e in events if e.get("subtype") == "hook_response"]
    assert [(e["hook_event"], e["exit_code"]) for e in started] == [("SessionStart", 0)]
    assert "Long-term memory (IHMT)" in started[0]["stdout"]
    transcripts = list((home / ".claude" / "projects").rglob("*.jsonl"))
    assert len(transcripts) == 1
    text = transcripts[0].read_text()
    start = "SessionStart hook additional context: Long-term memory (IHMT) knows this about "
    assert start + f"project {PROJECT}" in text
    prompt = "UserPromptSubmit hook additional context: Recalled from long-term memory (IHMT)"
    assert prompt in text and "vega-3" in text
    runs = [(r["agent"], r["event"], r["outcome"]) for r in _hook_log(agent_env)]
    assert runs == [
        ("claude-code", "session-start", "digest"),
        ("claude-code", "prompt", "found"),
    ]


# ---------------------------------------------------------------------- Codex
def _codex_until(
    codex: str, env: dict[str, str], *args: str, cwd: Path, until: Callable[[], bool]
) -> bool:
    """Run ``codex ARGS`` until ``until()`` holds (120 s at most), then stop it.

    With no model to reach, ``codex exec`` goes on retrying after its hooks ran, so the
    test watches for what it waits for instead of for the process to end."""
    process = subprocess.Popen(
        [codex, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if until():
                return True
            if process.poll() is not None:
                return until()
            time.sleep(0.5)
        return False
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _hooks_list(codex: str, env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    """``hooks/list`` from ``codex app-server``: Codex's own view of the hooks."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "ihmt-tests", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]  # fmt: skip
    process = subprocess.Popen(
        [codex, "app-server", *OFFLINE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        process.stdin.flush()
        deadline = time.monotonic() + 120
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                return [h for group in message["result"]["data"] for h in group["hooks"]]
            assert time.monotonic() < deadline
        raise AssertionError("codex app-server closed without answering hooks/list")
    finally:
        process.kill()
        process.wait(timeout=20)
        process.stdin.close()
        process.stdout.close()


def _rollout_contexts(home: Path) -> list[str]:
    """The hook contexts Codex recorded as developer messages in its rollout files."""
    out = []
    for rollout in (home / ".codex" / "sessions").rglob("rollout-*.jsonl"):
        for line in rollout.read_text().splitlines():
            item = json.loads(line)
            payload = item.get("payload") or {}
            meta = payload.get("internal_chat_message_metadata_passthrough") or {}
            if "hooks.additional_context" in (meta.get("content_item_kinds") or []):
                out += [c["text"] for c in payload["content"] if c.get("type") == "input_text"]
    return out


@pytest.fixture
def codex_installed(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> str:
    codex = agent_cli("codex")
    done = ihmt_install("install", "codex", "--home", f"{agent_env['HOME']}/memory")
    assert "type /hooks" in done.stdout
    return codex


def test_codex_lists_the_hooks_untrusted_and_runs_them_when_bypassed(
    codex_installed: str, agent_env: dict[str, str], project: Path
) -> None:
    home = Path(agent_env["HOME"])
    hooks = _hooks_list(codex_installed, agent_env, project)
    ours = [h for h in hooks if "ihmt" in h["command"] and " hook " in h["command"]]
    assert sorted(h["eventName"] for h in ours) == ["sessionStart", "stop", "userPromptSubmit"]
    assert {h["trustStatus"] for h in ours} == {"untrusted"}
    assert {h["sourcePath"] for h in ours} == {str(home / ".codex" / "hooks.json")}

    def both_added() -> bool:
        return len(_rollout_contexts(home)) >= 2

    _codex_until(
        codex_installed,
        agent_env,
        "exec",
        "--dangerously-bypass-hook-trust",
        "--skip-git-repo-check",
        *OFFLINE,
        QUESTION,
        cwd=project,
        until=both_added,
    )

    contexts = _rollout_contexts(home)
    assert any(
        c.startswith("Long-term memory (IHMT) knows this about project lynx") for c in contexts
    )
    assert any("Recalled from long-term memory" in c and "vega-3" in c for c in contexts)
    assert [r["agent"] for r in _hook_log(agent_env)] == ["codex", "codex"]


def test_codex_runs_trusted_hooks_and_doctor_sees_the_trust(
    codex_installed: str, agent_env: dict[str, str], project: Path
) -> None:
    import tomlkit

    home = Path(agent_env["HOME"])
    ihmt = str(Path(sys.executable).parent / "ihmt")

    def doctor_hooks() -> dict[str, Any]:
        done = subprocess.run(
            [ihmt, "doctor", "--home", str(home / "memory"), "--json"],
            capture_output=True,
            text=True,
            env=agent_env,
            cwd=project,
            timeout=240,
            check=False,
        )
        rows = json.loads(done.stdout)["agents"]
        return next(r for r in rows if r["agent"] == "codex" and r["registered"])["hooks"]

    assert doctor_hooks()["trusted"] is False
    # What /hooks in the Codex TUI records when the user trusts a hook.
    config = home / ".codex" / "config.toml"
    doc = tomlkit.parse(config.read_text())
    state = doc.setdefault("hooks", tomlkit.table(is_super_table=True))
    state = state.setdefault("state", tomlkit.table(is_super_table=True))
    for hook in _hooks_list(codex_installed, agent_env, project):
        if "ihmt" in hook["command"]:
            entry = tomlkit.table()
            entry.add("trusted_hash", hook["currentHash"])
            state.add(hook["key"], entry)
    config.write_text(tomlkit.dumps(doc))
    assert doctor_hooks()["trusted"] is True

    def recalled() -> bool:
        return any("vega-3" in c for c in _rollout_contexts(home))

    exec_args = ("exec", "--skip-git-repo-check", *OFFLINE, QUESTION)
    assert _codex_until(codex_installed, agent_env, *exec_args, cwd=project, until=recalled)
    hooks = doctor_hooks()
    assert hooks["last_run"] is not None and hooks["last_error"] is None


# ---------------------------------------------------------------------- opencode
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())


@pytest.fixture
def opencode_server(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    project: Path,
) -> Iterator[str]:
    opencode = agent_cli("opencode")
    ihmt_install("install", "opencode", "--home", f"{agent_env['HOME']}/memory")
    port = _free_port()
    log = Path(agent_env["HOME"]) / "opencode-serve.log"
    with log.open("w", encoding="utf-8") as out:
        server = subprocess.Popen(
            [opencode, "serve", "--port", str(port), "--hostname", "127.0.0.1"],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=agent_env,
            cwd=project,
        )
    try:
        deadline = time.monotonic() + 120
        while "listening on" not in log.read_text(encoding="utf-8", errors="replace"):
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "opencode serve did not start"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=20)


def test_opencode_plugin_adds_the_digest_and_the_recall_to_the_message(
    opencode_server: str, agent_env: dict[str, str]
) -> None:
    session = _post(f"{opencode_server}/session", {})
    body = {"parts": [{"type": "text", "text": QUESTION}], "noReply": True}

    saved = _post(f"{opencode_server}/session/{session['id']}/message", body)

    synthetic = [p for p in saved["parts"] if p["type"] == "text" and p.get("synthetic")]
    assert len(synthetic) == 1, saved["parts"]
    text = synthetic[0]["text"]
    assert text.startswith("Long-term memory (IHMT) knows this about project lynx")
    assert "Recalled from long-term memory (IHMT)" in text and "vega-3" in text
    assert saved["parts"][0]["text"] == QUESTION
    runs = [(r["agent"], r["event"]) for r in _hook_log(agent_env)]
    assert runs == [("opencode", "session-start"), ("opencode", "prompt")]
