"""The real Codex CLI (pinned in tools/agents/install.sh) runs the ``Stop`` hook that
``ihmt install codex`` registers, and what the user said that lasts ends up in the memory.

Codex runs ``Stop`` when a turn ends, so it needs a model that answers. Its model
provider here is a stub of the OpenAI Responses API on a loopback port
(``model_providers.<id>`` with ``base_url`` and ``wire_api = "responses"``, given with
``-c``): every ``POST /v1/responses`` gets one short answer streamed as server-sent events
(``response.created``, ``response.output_item.done`` holding the assistant's message,
``response.completed``). No model, no account, no API key; nothing leaves the machine.

The hooks run because they are trusted the way ``/hooks`` in the Codex TUI records it
(each hook's ``currentHash`` as ``trusted_hash`` under ``[hooks.state."<key>"]`` in
config.toml), not with ``--dangerously-bypass-hook-trust``. Codex's home is a temporary
``CODEX_HOME``, apart from the temporary ``HOME``.

``codex exec`` runs the turn, then ``Stop`` with the rollout file as ``transcript_path``;
``codex exec resume --last`` appends a second turn to the same rollout file, and the hook
reads only that turn.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_agents_hooks import _hooks_list

PROMPT = "Thanks, that works. Remember that the staging database runs on port 6543."
SAVED = "The staging database runs on port 6543."
ANSWER = "Noted, port 6543."


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()


@pytest.fixture
def responses_stub() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """An OpenAI Responses API that streams :data:`ANSWER` to every request: its base URL
    and the ``(path, body)`` of each request it received."""
    received: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            received.append((self.path, body.decode("utf-8", "replace")))
            n = len(received)
            message = {
                "type": "message",
                "id": f"msg_stub_{n}",
                "role": "assistant",
                "content": [{"type": "output_text", "text": ANSWER}],
            }
            usage = {
                "input_tokens": 1,
                "input_tokens_details": None,
                "output_tokens": 1,
                "output_tokens_details": None,
                "total_tokens": 2,
            }
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for name, data in (
                ("response.created", {"response": {"id": f"resp_stub_{n}"}}),
                ("response.output_item.done", {"item": message}),
                ("response.completed", {"response": {"id": f"resp_stub_{n}", "usage": usage}}),
            ):
                self.wfile.write(_event(name, data))
            self.wfile.flush()

        def do_GET(self) -> None:  # a model list, if Codex asks: there is none
            received.append((self.path, ""))
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/v1", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _ihmt(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "ihmt"), *args],
        env={**env, "IHMT_HOME": str(Path(env["HOME"]) / "memory")},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    return done.stdout


def _trust_the_ihmt_hooks(codex: str, env: dict[str, str], cwd: Path) -> int:
    """Record trust in the ihmt hooks as ``/hooks`` in the Codex TUI does; how many."""
    import tomlkit

    config = Path(env["CODEX_HOME"]) / "config.toml"
    doc = tomlkit.parse(config.read_text())
    hooks = doc.setdefault("hooks", tomlkit.table(is_super_table=True))
    state = hooks.setdefault("state", tomlkit.table(is_super_table=True))
    ours = [h for h in _hooks_list(codex, env, cwd) if " hook " in h["command"]]
    for hook in ours:
        entry = tomlkit.table()
        entry.add("trusted_hash", hook["currentHash"])
        state.add(hook["key"], entry)
    config.write_text(tomlkit.dumps(doc))
    return len(ours)


def _stops(env: dict[str, str]) -> list[dict[str, Any]]:
    log = Path(env["HOME"]) / "memory" / "hooks" / "hooks.log"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return [r for r in records if r["event"] == "stop"]


def test_codex_stop_saves_what_the_user_said_once(
    agent_cli: Callable[[str], str],
    agent_env: dict[str, str],
    ihmt_install: Callable[..., subprocess.CompletedProcess[str]],
    responses_stub: tuple[str, list[tuple[str, str]]],
    tmp_path: Path,
) -> None:
    codex = agent_cli("codex")
    url, received = responses_stub
    agent_env.pop("IHMT_PROJECT", None)  # the project is named after the git root
    agent_env["IHMT_HOOK_SERVER"] = "off"  # each hook answers alone: no server outlives us
    agent_env["IHMT_SEMANTIC"] = "off"
    agent_env["CODEX_HOME"] = str(tmp_path / "codex-home")
    Path(agent_env["CODEX_HOME"]).mkdir()
    lynx = tmp_path / "work" / "lynx"
    (lynx / ".git").mkdir(parents=True)
    _ihmt(agent_env, lynx, "init")
    ihmt_install("install", "codex", "--home", f"{agent_env['HOME']}/memory")
    assert not (Path(agent_env["HOME"]) / ".codex").exists()  # CODEX_HOME was used
    assert _trust_the_ihmt_hooks(codex, agent_env, lynx) == 3
    provider = f'model_providers.stub={{ name = "stub", base_url = "{url}", '
    provider += 'wire_api = "responses" }'
    options: tuple[str, ...] = ("-c", provider, "-c", 'model_provider="stub"')
    options += ("-c", "check_for_update_on_startup=false")

    def codex_exec(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [codex, "exec", "--skip-git-repo-check", *options, *args],
            capture_output=True,
            text=True,
            env=agent_env,
            cwd=lynx,
            timeout=180,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    first = codex_exec(PROMPT)

    assert first.returncode == 0, first.stderr
    assert ANSWER in first.stdout
    posts = [body for path, body in received if path == "/v1/responses"]
    assert len(posts) == 1 and PROMPT in posts[0]
    [rollout] = Path(agent_env["CODEX_HOME"]).glob("sessions/**/rollout-*.jsonl")
    session = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]
    [saved] = [json.loads(line) for line in _ihmt(agent_env, lynx, "export").splitlines()]
    assert saved["content"] == SAVED
    assert saved["source"] == "session" and saved["project"] == "lynx"
    assert f"session:{session}" in saved["tags"]
    found = _ihmt(agent_env, lynx, "search", "which port does the staging database run on?")
    assert found.startswith("FOUND") and saved["id"] in found and "6543" in found
    [stop] = _stops(agent_env)
    assert (stop["agent"], stop["turns"], stop["saved"], stop["error"]) == ("codex", 1, 1, "")

    # The same session again, the user saying it again: one new turn read, nothing saved.
    second = codex_exec("resume", "--last", "remember that the staging database runs on port 6543")

    assert second.returncode == 0, second.stderr
    assert len([p for p, _ in received if p == "/v1/responses"]) == 2
    assert list(Path(agent_env["CODEX_HOME"]).glob("sessions/**/rollout-*.jsonl")) == [rollout]
    exported = _ihmt(agent_env, lynx, "export").splitlines()
    assert [json.loads(line)["id"] for line in exported] == [saved["id"]]
    last = _stops(agent_env)[-1]
    assert (last["turns"], last["saved"], last["held"], last["error"]) == (1, 0, 1, "")
