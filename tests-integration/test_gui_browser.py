"""``ihmt gui`` end to end: a real server process, direct HTTP for its security rules, and
Debian's Chromium driven by Playwright for the four screens (screenshots land in
docs/screenshots/).

The browser tests fail, saying what to run, when ``/usr/bin/chromium`` or the ``playwright``
package is missing: a skipped check would read as a passed one. ``make test`` runs
``tools/browser/install.sh``, which installs Debian's Chromium; Playwright's own browser
download is never used.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from ihmt_mcp import Memory

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
TIMEOUT_MS = 15_000

JOURNAL = (
    ("I live in Madrid, in a flat near Retiro park.", "2024-03-11"),
    ("Vacaciones en Benidorm con Luis, mi primo; comimos paella en la playa.", "2024-07-22"),
    ("Luis Marín, from work, reviewed the pull request of the invoices module.", "2024-11-30"),
    ("Fin de semana en El Saler con Luis Ortega y su perro Toby.", "2025-08-30"),
    ("The staging host runs PostgreSQL 15 on port 5432.", "2025-01-10"),
    ("I moved to Valencia; the new flat is in Ruzafa.", "2026-02-03"),
    ("The coffee machine on the third floor is broken again.", "2026-01-15"),
    ("I work at Acme Corp as a backend developer.", "2023-05-02"),
    ("I prefer tabs over spaces.", "2024-02-01"),
    ("Now I work at Globex, on the payments team.", "2025-06-16"),
    ("Marta moved to Lisbon in the spring.", "2025-04-20"),
)
CORRECTION = ("Staging moved to PostgreSQL 17 on port 5433.", "2026-03-01", "staging PostgreSQL 15")
THROWAWAY = "The coffee machine on the third floor is broken again."
# Memories of one project, with tags, and a second correction the restore test undoes.
HARBOR = (
    ("Harbor deploys need Node 20 on the build host.", "2026-04-02", ("deploy",)),
    ("Harbor's release train leaves on Thursdays.", "2026-04-09", ("release", "deploy")),
)
STANDUP = ("The harbor standup is at 9:30 in room Ostra.", "2026-04-10")
STANDUP_FIX = (
    "The harbor standup moved to 10:00 in room Ostra.",
    "2026-04-15",
    "harbor standup at 9:30",
)
# Saved as written in a Markdown journal: its title must not be the date heading.
HEADED = ("## 2026-04-20\nLunch with Bruno: he recommends the ferry to Sorrento.", "2026-04-20")
MEMORIES = len(JOURNAL) + 1 + len(HARBOR) + 2 + 1


@dataclass(frozen=True)
class Fixture:
    """The fixture store and the ids the tests look for."""

    path: Path
    ids: dict[str, str]
    """A memory's text → its id."""

    def id_of(self, start: str) -> str:
        """The id of the memory whose text starts with ``start``."""
        return next(i for text, i in self.ids.items() if text.startswith(start))


@dataclass
class Server:
    """A running ``ihmt gui`` subprocess."""

    process: subprocess.Popen[bytes]
    url: str
    port: int
    token: str
    store: Fixture
    home: Path
    reader: threading.Thread

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


# ---------------------------------------------------------------------- fixtures
def build_store(path: Path) -> Fixture:
    """Three people called Luis, an OUTDATED correction, a Madrid → Valencia contradiction."""
    memory = Memory.init(path, branch_factor=3)
    ids: dict[str, str] = {}
    try:
        for text, when in JOURNAL:
            ids[text] = memory.save(text, date=when, project="").ids[0]
        text, when, replaces = CORRECTION
        saved = memory.save(text, date=when, replaces=replaces, project="")
        ids[text] = saved.ids[0]
        assert saved.replaced.replaced, saved.render()
        for text, when, tags in HARBOR:
            ids[text] = memory.save(text, date=when, project="harbor", tags=tags).ids[0]
        text, when = STANDUP
        ids[text] = memory.save(text, date=when, project="harbor").ids[0]
        text, when, replaces = STANDUP_FIX
        saved = memory.save(text, date=when, replaces=replaces, project="harbor")
        ids[text] = saved.ids[0]
        assert saved.replaced.replaced == (ids[STANDUP[0]],), saved.render()
        text, when = HEADED
        saved = memory.save(text, date=when, project="")
        assert len(saved.ids) == 1, saved.render()
        ids[text] = saved.ids[0]
        memory.consolidate(force=True)
        assert memory.conflicts("user"), "the fixture needs a contradiction"
    finally:
        memory.close()
    return Fixture(path=path, ids=ids)


def _read_url(process: subprocess.Popen[bytes], timeout: float) -> tuple[str, threading.Thread]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            lines.put(raw.decode("utf-8", "replace"))
        lines.put("")

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"ihmt gui printed no URL in {timeout} s: {seen}") from None
        if not line:
            raise AssertionError(f"ihmt gui exited before printing its URL: {seen}")
        seen.append(line)
        if line.startswith("http://"):
            return line.strip(), reader


def start_server(store: Fixture, home: Path, *extra: str) -> Server:
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["HOME"] = str(home)  # agent configs a Set up "apply" might touch stay in tmp
    env["IHMT_HOME"] = str(home / ".ihmt")
    env["IHMT_PROJECT"] = ""
    env.pop("IHMT_PROJECTS_DIR", None)
    ihmt = Path(sys.executable).parent / "ihmt"
    process = subprocess.Popen(
        [str(ihmt), "gui", "--no-browser", "--port", "0", "--path", str(store.path), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=home,
    )
    try:
        url, reader = _read_url(process, timeout=30)
    except AssertionError:
        process.kill()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
        raise
    port = int(url.split(":")[2].split("/")[0])
    token = url.split("token=")[1]
    return Server(process, url, port, token, store, home, reader)


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=10)
    server.reader.join(timeout=10)
    if server.process.stdout is not None:
        server.process.stdout.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("gui")
    running = start_server(build_store(root / "store"), root / "home")
    yield running
    stop_server(running)


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request(
    server: Server,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    host: str | None = None,
    token: bool = True,
    chunks: list[bytes] | None = None,
) -> Reply:
    """One raw HTTP request: the path is sent exactly as given, Host as chosen."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{server.port}")
        if token:
            conn.putheader("X-IHMT-Token", server.token)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if chunks is not None:
            conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            try:
                for chunk in chunks:
                    conn.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                conn.send(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server may answer 413 and close before the last chunk
        else:
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
        response = conn.getresponse()
        return Reply(
            response.status,
            {k.lower(): v for k, v in response.getheaders()},
            response.read(),
        )
    finally:
        conn.close()


def post_json(
    server: Server, path: str, data: object, *, headers: dict[str, str] | None = None, **kw: Any
) -> Reply:
    return request(
        server,
        "POST",
        path,
        headers={"Content-Type": "application/json", **(headers or {})},
        body=json.dumps(data).encode(),
        **kw,
    )


# ---------------------------------------------------------------------- the command
def test_gui_prints_a_loopback_url_with_a_long_random_token(server: Server) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    assert len(server.token) >= 32
    assert server.process.poll() is None


def test_gui_refuses_a_port_in_use_in_one_line(server: Server, tmp_path: Path) -> None:
    ihmt = Path(sys.executable).parent / "ihmt"
    done = subprocess.run(
        [str(ihmt), "gui", "--no-browser", "--port", str(server.port), "--path", str(tmp_path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    err = done.stderr.decode().strip().splitlines()
    assert done.returncode == 1
    assert len(err) == 1 and "choose another --port" in err[0], err


# ---------------------------------------------------------------------- security over HTTP
def test_api_without_token_is_401_and_with_a_wrong_one_403(server: Server) -> None:
    assert request(server, "GET", "/api/info", token=False).status == 401
    wrong = request(server, "GET", "/api/info", token=False, headers={"X-IHMT-Token": "x" * 43})
    assert wrong.status == 403
    assert request(server, "GET", "/api/tree?token=nope", token=False).status == 403
    assert request(server, "GET", f"/api/info?token={server.token}", token=False).status == 200
    good = request(server, "GET", "/api/info")
    assert good.status == 200
    assert good.json()["stats"]["unreachable"] == 0


def test_every_api_route_needs_the_token(server: Server) -> None:
    leaf = server.store.id_of("I live in Madrid, in a fl")
    for path in (
        "/api/info",
        "/api/tree",
        f"/api/node/{leaf}",
        "/api/search?q=Luis",
        "/api/timeline",
        "/api/setup/preview?agent=codex&scope=user&home=/tmp/x",
    ):
        assert request(server, "GET", path, token=False).status == 401, path
    for path in ("/api/list?q=Luis", "/api/facets"):
        assert request(server, "GET", path, token=False).status == 401, path
    for path in ("/api/forget", "/api/restore", "/api/setup/create", "/api/setup/apply"):
        reply = post_json(server, path, {"id": leaf, "confirm": True}, token=False)
        assert reply.status == 401, path


def test_a_host_that_is_not_loopback_is_refused(server: Server) -> None:
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1.evil.example", ""):
        assert request(server, "GET", "/api/info", host=host).status == 400, host
        assert request(server, "GET", "/", host=host).status == 400, host
    assert request(server, "GET", "/api/info", host=f"localhost:{server.port}").status == 200


def test_a_foreign_origin_is_refused(server: Server) -> None:
    for origin in ("http://evil.example", "null", "https://127.0.0.1.evil.example"):
        reply = request(server, "GET", "/api/info", headers={"Origin": origin})
        assert reply.status == 403, origin
    leaf = server.store.id_of("I live in Madrid, in a fl")
    reply = post_json(
        server,
        "/api/forget",
        {"id": leaf, "confirm": True},
        headers={"Origin": "http://evil.example"},
    )
    assert reply.status == 403
    same = request(server, "GET", "/api/info", headers={"Origin": server.base})
    assert same.status == 200


def test_static_files_never_leave_their_folder(server: Server) -> None:
    for path in (
        "/static/../_gui.py",
        "/static/%2e%2e/_gui.py",
        "/static/..%2f_gui.py",
        "/static/%2e%2e%2f%2e%2e%2fpyproject.toml",
        "/static/..%5c_gui.py",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/../../../../etc/passwd",
        "/static/",
    ):
        reply = request(server, "GET", path, token=False)
        assert reply.status in (400, 404), (path, reply.status)
        assert b"import" not in reply.body and b"root:" not in reply.body, path
    app = request(server, "GET", "/static/app.js", token=False)
    assert app.status == 200 and app.headers["content-type"].startswith("text/javascript")


def test_pages_carry_a_strict_content_security_policy(server: Server) -> None:
    page = request(server, "GET", "/", token=False)
    assert page.status == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"


def test_an_oversize_post_is_refused_before_it_is_read(server: Server) -> None:
    leaf = server.store.id_of("I live in Madrid, in a fl")
    big = json.dumps({"id": leaf, "confirm": True, "reason": "x" * 100_000}).encode()
    reply = request(
        server, "POST", "/api/forget", headers={"Content-Type": "application/json"}, body=big
    )
    assert reply.status == 413
    chunked = request(
        server,
        "POST",
        "/api/forget",
        headers={"Content-Type": "application/json"},
        chunks=[big[i : i + 16_384] for i in range(0, len(big), 16_384)],
    )
    assert chunked.status == 413
    assert request(server, "GET", f"/api/node/{leaf}").status == 200


def test_writes_need_post_json_and_reads_refuse_other_methods(server: Server) -> None:
    leaf = server.store.id_of("I live in Madrid, in a fl")
    assert request(server, "GET", "/api/forget").status == 405
    assert request(server, "PUT", "/api/forget", body=b"{}").status == 405
    assert request(server, "DELETE", f"/api/node/{leaf}").status == 405
    form = request(
        server,
        "POST",
        "/api/forget",
        headers={"Content-Type": "text/plain"},
        body=json.dumps({"id": leaf, "confirm": True}).encode(),
    )
    assert form.status == 415
    assert request(server, "GET", f"/api/node/{leaf}").status == 200


def test_forget_needs_a_confirmation_and_a_catalogued_leaf_id(server: Server) -> None:
    leaf = server.store.id_of("I live in Madrid, in a fl")
    refused = post_json(server, "/api/forget", {"id": leaf})
    assert refused.status == 400 and refused.json()["code"] == "confirm"
    assert post_json(server, "/api/forget", {"id": leaf, "confirm": "yes"}).status == 400
    for bad in ("../../etc/passwd", "L-x/../y", "", 12, None, "a" * 300):
        reply = post_json(server, "/api/forget", {"id": bad, "confirm": True})
        assert reply.status == 400, bad
    assert post_json(server, "/api/forget", {"id": "L-nope-0000-0", "confirm": True}).status == 404
    branch = next(
        d["items"][0]["id"]
        for d in request(server, "GET", "/api/tree").json()["domains"]
        if d["items"][0]["kind"] == "branch"
    )
    assert post_json(server, "/api/forget", {"id": branch, "confirm": True}).status == 404
    assert request(server, "GET", f"/api/node/{leaf}").status == 200
    assert request(server, "GET", "/api/node/..%2f..%2fetc%2fpasswd").status == 400
    assert request(server, "GET", f"/api/node/{quote('L-nope')}").status == 404


def test_restore_needs_a_confirmation_and_an_outdated_leaf(server: Server) -> None:
    old = server.store.id_of("The staging host runs Po")
    refused = post_json(server, "/api/restore", {"id": old})
    assert refused.status == 400 and refused.json()["code"] == "confirm"
    for bad in ("../../etc/passwd", "", 12, None, "a" * 300):
        assert post_json(server, "/api/restore", {"id": bad, "confirm": True}).status == 400
    current = server.store.id_of("I prefer tabs over")
    reply = post_json(server, "/api/restore", {"id": current, "confirm": True})
    assert reply.status == 409 and reply.json()["code"] == "not_outdated"
    assert post_json(server, "/api/restore", {"id": "L-nope-1", "confirm": True}).status == 404
    assert request(server, "GET", f"/api/node/{old}").json()["item"]["outdated"] is True
    assert request(server, "GET", "/api/list?limit=0").status == 400


def test_set_up_refuses_unknown_agents_and_relative_folders(server: Server) -> None:
    bad = request(server, "GET", "/api/setup/preview?agent=vim&scope=user&home=/tmp/x")
    assert bad.status == 400
    rel = request(server, "GET", "/api/setup/preview?agent=codex&scope=user&home=relative/x")
    assert rel.status == 400
    apply = post_json(
        server, "/api/setup/apply", {"agent": "codex", "scope": "user", "home": "/tmp/x"}
    )
    assert apply.status == 400 and apply.json()["code"] == "confirm"


def test_set_up_preview_shows_the_exact_command_and_writes_nothing(server: Server) -> None:
    home = server.home / "chosen"
    reply = request(
        server, "GET", f"/api/setup/preview?agent=opencode&scope=user&home={quote(str(home))}"
    )
    assert reply.status == 200
    data = reply.json()
    assert data["command"] == f"ihmt install opencode --scope user --home {home}"
    assert data["preview"]["exit_code"] == 0, data["preview"]
    assert "ihmt-memory" in data["preview"]["stdout"]
    assert not home.exists()
    assert not (server.home / ".config" / "opencode").exists()


def test_set_up_project_scope_runs_in_the_chosen_project_folder(server: Server) -> None:
    project = server.home / "some-project"
    project.mkdir(exist_ok=True)
    query = f"agent=opencode&scope=project&home=/tmp/x&project_dir={quote(str(project))}"
    data = request(server, "GET", f"/api/setup/preview?{query}").json()
    assert data["cwd"] == str(project)
    assert str(project / "opencode.json") in data["preview"]["stdout"]
    assert list(project.iterdir()) == []
    missing = query.replace(quote(str(project)), quote(str(server.home / "nope")))
    assert request(server, "GET", f"/api/setup/preview?{missing}").status == 400


def test_search_reports_reads_against_the_store_total(server: Server) -> None:
    data = request(server, "GET", "/api/search?q=" + quote("staging PostgreSQL port")).json()
    assert data["status"] == "found"
    assert data["results"][0]["content"].startswith("Staging moved to PostgreSQL 17")
    assert 0 < data["files_read"] < data["store"]["files"]
    assert 0 < data["bytes_read"] < data["store"]["bytes"]
    assert any("OUTDATED" in n for n in data["notices"]), data["notices"]
    assert request(server, "GET", "/api/search?q=").status == 400


# ---------------------------------------------------------------------- the browser
def _playwright() -> Any:
    if not CHROMIUM.exists():
        pytest.fail("no /usr/bin/chromium: run tools/browser/install.sh", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "the playwright package is not installed: run make sync (the dev group has it)",
            pytrace=False,
        )
    return sync_playwright


@pytest.fixture(scope="module")
def browser(server: Server) -> Iterator[Any]:
    sync_playwright = _playwright()
    with sync_playwright() as play:
        launched = play.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1366, "height": 900}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        yield opened
    finally:
        context.close()
    assert not errors, errors


def _open(page: Any, server: Server, screen: str) -> None:
    page.goto(f"{server.url}#{screen}")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector(f"#screen-{screen}:not([hidden])")


def _reveal(page: Any, server: Server, item_id: str) -> Any:
    """Open the branches above ``item_id`` in the Explore tree; return its button."""
    path = request(server, "GET", f"/api/node/{item_id}").json()["path"]
    for step in path[:-1]:
        branch = page.locator(f"#tree details.branch[data-id='{step['id']}']")
        if branch.get_attribute("open") is None:
            branch.locator("> summary").click()
    button = page.locator(f"#tree button.leaf[data-id='{item_id}']")
    button.wait_for()
    return button


def _shot(page: Any, name: str, tmp: Path | None = None) -> None:
    """Take the screenshot (it must render); keep it in docs/ only with IHMT_SCREENSHOTS=1,
    so an ordinary test run leaves the working tree as it was."""
    folder = SCREENSHOTS if os.environ.get("IHMT_SCREENSHOTS") == "1" else None
    if folder is None:
        data = page.screenshot()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
        return
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"))


def test_explore_shows_the_tree_down_to_a_leaf_with_its_outdated_notice(
    page: Any, server: Server
) -> None:
    _open(page, server, "explore")
    assert "token=" not in page.url, "the token must leave the address bar"
    page.wait_for_selector("#tree details.domain")
    domains = page.locator("#tree .domain-name").all_text_contents()
    assert "personal" in domains and "software.infra" in domains
    assert page.locator("#stats dd").first.text_content() == str(MEMORIES)
    old_id = server.store.id_of("The staging host runs Po")
    leaf = _reveal(page, server, old_id)
    assert "OUTDATED" in (leaf.text_content() or "")
    leaf.click()
    page.wait_for_selector("#leaf-text")
    assert page.locator("#leaf-text").text_content() == JOURNAL[4][0]
    notice = page.locator("#detail .notice.outdated").text_content() or ""
    assert "OUTDATED" in notice and server.store.id_of("Staging moved to Postgre") in notice
    _shot(page, "explore")


def test_diagnose_shows_status_reads_path_and_candidates(page: Any, server: Server) -> None:
    _open(page, server, "diagnose")
    page.fill("#q", "Luis")
    page.click("#search-go")
    page.wait_for_selector("#diag-status")
    assert page.locator("#diag-status").text_content() == "AMBIGUOUS"
    assert page.locator("#diag-candidates tbody tr").count() >= 3
    rows = page.locator("#diag-candidates tbody").text_content() or ""
    assert "Ortega" in rows and "Marín" in rows and "primo" in rows

    page.fill("#q", "which port does staging PostgreSQL use")
    page.click("#search-go")
    page.wait_for_selector("#diag .verdict.found")  # the page's CSP forbids eval
    files = page.locator("#diag-files").text_content() or ""
    total = request(server, "GET", "/api/info").json()["stats"]
    assert f"of {total['leaves'] + total['branches']}" in files, files
    assert page.locator("#diag-path li").count() >= 1
    assert "OUTDATED" in (page.locator(".notices").text_content() or "")
    assert "PostgreSQL 17" in (page.locator("#diag-compact").text_content() or "")
    _shot(page, "diagnose")


def test_timeline_shows_active_and_historical_values_and_the_contradiction(
    page: Any, server: Server
) -> None:
    _open(page, server, "timeline")
    card = page.locator("article.fact[data-key='user::location']")
    card.wait_for()
    assert "Valencia" in (card.locator(".value.active").text_content() or "")
    assert "Madrid" in (card.locator(".value.historical").text_content() or "")
    conflicts = page.locator("#conflicts").text_content() or ""
    assert "'Madrid'" in conflicts and "'Valencia'" in conflicts
    assert "'Acme Corp'" in conflicts and "'Globex'" in conflicts
    page.select_option("#subject", "user")
    page.wait_for_selector("#timelines[data-subject='user']")
    keys = [card.get_attribute("data-key") for card in page.locator("article.fact").all()]
    assert "user::employer" in keys and all(k.startswith("user::") for k in keys), keys
    page.select_option("#subject", "")
    page.wait_for_selector("#timelines[data-subject='']")
    assert page.locator("article.fact").count() > len(keys)
    _shot(page, "timeline")


def test_set_up_previews_the_install_before_anything_is_written(page: Any, server: Server) -> None:
    _open(page, server, "setup")
    home = server.home / "setup-preview"
    page.fill("#setup-home", str(home))
    page.check("input[name=agent][value=codex]")
    page.click("#setup-preview")
    page.wait_for_selector("#setup-preview-out:not([hidden])")
    command = page.locator("#setup-command").text_content() or ""
    assert command == f"ihmt install codex --scope user --home {home}"
    dry = page.locator("#setup-dry").text_content() or ""
    assert "--dry-run" in dry and "mcp_servers" in dry, dry
    assert page.locator("#setup-apply").is_visible()
    assert not home.exists()
    assert not (server.home / ".codex").exists()
    page.check("input[name=scope][value=project]")
    assert page.locator("#setup-project").is_visible()
    page.check("input[name=scope][value=user]")
    _shot(page, "setup")


def test_language_switch_translates_and_is_remembered(page: Any, server: Server) -> None:
    _open(page, server, "timeline")
    page.wait_for_selector("article.fact")
    assert page.locator("#tab-explore").text_content() == "Explore"
    page.click("#lang-es")
    assert page.locator("html").get_attribute("lang") == "es"
    assert page.locator("#tab-explore").text_content() == "Explorar"
    assert page.locator("#lang-es").get_attribute("aria-pressed") == "true"
    assert "VIGENTE" in (page.locator("#timelines").text_content() or "")
    assert "dijiste" in (page.locator("#conflicts").text_content() or "")
    _shot(page, "timeline-es")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector("article.fact")
    assert page.locator("#tab-timeline").text_content() == "Cronología"
    assert "VIGENTE" in (page.locator("#timelines").text_content() or "")
    page.click("#lang-en")
    assert page.locator("#tab-explore").text_content() == "Explore"


def test_the_page_without_the_token_shows_no_memory(browser: Any, server: Server) -> None:
    context = browser.new_context()
    try:
        opened = context.new_page()
        opened.goto(f"{server.base}/#explore")
        banner = opened.locator("#banner")
        banner.wait_for(state="visible", timeout=TIMEOUT_MS)
        assert "ihmt gui" in (banner.text_content() or "")
        assert opened.locator("#tree details").count() == 0
    finally:
        context.close()


def test_forget_asks_for_confirmation_and_cancel_keeps_the_memory(
    page: Any, server: Server
) -> None:
    leaf_id = server.store.id_of(THROWAWAY)
    _open(page, server, "explore")
    leaf = _reveal(page, server, leaf_id)
    leaf.focus()
    page.keyboard.press("Enter")  # keyboard only: focus the memory, open it
    page.wait_for_selector("#forget-button")
    page.focus("#forget-button")
    page.keyboard.press("Enter")
    dialog = page.locator("dialog#confirm")
    dialog.wait_for(state="visible")
    assert leaf_id in (dialog.locator("#confirm-title").text_content() or "")
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert request(server, "GET", f"/api/node/{leaf_id}").status == 200

    page.click("#forget-button")
    dialog.wait_for(state="visible")
    page.click("#confirm-cancel")
    dialog.wait_for(state="hidden")
    assert request(server, "GET", f"/api/node/{leaf_id}").status == 200

    page.click("#forget-button")
    dialog.wait_for(state="visible")
    page.fill("#confirm-reason", "not worth remembering")
    page.click("#confirm-ok")
    page.wait_for_selector("#detail .notice.done")
    assert "FORGOTTEN" in (page.locator("#detail .notice.done").text_content() or "")
    page.locator(f"#tree button.leaf[data-id='{leaf_id}']").wait_for(state="detached")
    assert request(server, "GET", f"/api/node/{leaf_id}").status == 404


def test_set_up_apply_runs_ihmt_install_after_confirmation(page: Any, server: Server) -> None:
    _open(page, server, "setup")
    home = server.home / "applied"
    page.fill("#setup-home", str(home))
    page.check("input[name=agent][value=opencode]")
    page.click("#setup-preview")
    page.wait_for_selector("#setup-apply:not([hidden])")
    folder = server.home / ".config" / "opencode"
    configs = (folder / "opencode.jsonc", folder / "opencode.json")  # the one install picks
    page.click("#setup-apply")
    dialog = page.locator("dialog#confirm")
    dialog.wait_for(state="visible")
    page.click("#confirm-cancel")
    dialog.wait_for(state="hidden")
    assert not any(c.exists() for c in configs), "cancel must write nothing"
    page.click("#setup-apply")
    dialog.wait_for(state="visible")
    page.click("#confirm-ok")
    page.wait_for_selector("#setup-apply-out:not([hidden])", timeout=120_000)
    assert "exit code 0" in (page.locator("#setup-exit").text_content() or "")
    written = json.loads(next(c for c in configs if c.exists()).read_text(encoding="utf-8"))
    assert written["mcp"]["ihmt-memory"]["environment"]["IHMT_HOME"] == str(home)


# ---------------------------------------------------------------------- Explore for daily use
def _list_item(page: Any, item_id: str) -> Any:
    button = page.locator(f"#list button.leaf[data-id='{item_id}']")
    button.wait_for()
    return button


def test_explore_search_opens_a_result_with_its_history(page: Any, server: Server) -> None:
    _open(page, server, "explore")
    page.fill("#explore-q", "staging PostgreSQL")
    page.press("#explore-q", "Enter")
    page.wait_for_selector("#list[data-mode=search]")
    assert page.locator("#view-results").get_attribute("aria-pressed") == "true"
    assert page.locator("#tree").is_hidden()
    old_id = server.store.id_of("The staging host runs Po")
    new_id = server.store.id_of("Staging moved to Postgre")
    ids = [b.get_attribute("data-id") for b in page.locator("#list button.leaf").all()]
    assert ids[0] == new_id and old_id in ids, ids
    old = _list_item(page, old_id)
    assert "OUTDATED" in (old.text_content() or "")
    old.click()
    page.wait_for_selector("#history")
    assert page.locator("#leaf-text").text_content() == JOURNAL[4][0]
    rows = page.locator("#history li")
    assert [r.get_attribute("data-relation") for r in rows.all()] == ["self", "corrected_by"]
    assert "Corrected by " + new_id in (rows.nth(0).text_content() or "")
    assert page.locator("#restore-button").is_visible()
    assert page.locator("#forget-button").is_visible()
    _shot(page, "explore")
    rows.nth(1).locator("button").click()  # what corrected it opens like any item
    page.wait_for_selector("#history li[data-relation=corrects]")
    assert page.locator("#leaf-text").text_content() == CORRECTION[0]
    assert page.locator("#restore-button").count() == 0


def test_recent_lists_newest_first_and_filters_by_project_and_tag(
    page: Any, server: Server
) -> None:
    _open(page, server, "explore")
    page.click("#view-recent")
    page.wait_for_selector("#list[data-mode=recent] button.leaf")
    total = request(server, "GET", "/api/info").json()["stats"]["leaves"]  # forget may run first
    head = page.locator("#list-head").text_content() or ""
    assert f"{total} memories, newest first" in head, head
    first = page.locator("#list button.leaf").first
    # A title that says something: the line under the date heading, not "## 2026-04-20".
    assert first.get_attribute("data-id") == server.store.id_of("## 2026-04-20")
    title = first.locator(".title").text_content() or ""
    assert title.startswith("Lunch with Bruno") and "##" not in title, title
    dates = page.locator("#list button.leaf .date").all_text_contents()
    assert dates == sorted(dates, reverse=True), dates

    page.select_option("#explore-project", "p:harbor")
    page.wait_for_selector("#list-head:has-text('4 memories')")
    ids = [b.get_attribute("data-id") for b in page.locator("#list button.leaf").all()]
    harbor = {server.store.id_of(t) for t in (*(h[0] for h in HARBOR), STANDUP[0], STANDUP_FIX[0])}
    assert set(ids) == harbor
    page.select_option("#explore-tag", "t:deploy")
    page.wait_for_selector("#list-head:has-text('2 memories')")
    page.select_option("#explore-project", "g")
    page.wait_for_selector("#list-head:has-text('0 memories')")
    assert "No memory matches" in (page.locator("#list").text_content() or "")
    page.select_option("#explore-tag", "")
    page.wait_for_selector(f"#list-head:has-text('{total - 4} memories')")

    # The filters hold for a search too, and the tree says they do not apply to it.
    page.select_option("#explore-project", "p:harbor")
    page.fill("#explore-q", "standup")
    page.click("#explore-go")
    page.wait_for_selector("#list[data-mode=search] button.leaf")
    found = [b.get_attribute("data-id") for b in page.locator("#list button.leaf").all()]
    assert found and set(found) <= harbor, found
    page.click("#view-tree")
    assert "filters apply to Recent" in (page.locator("#list-head").text_content() or "")
    assert page.locator("#tree").is_visible() and page.locator("#list").is_hidden()


def test_restore_asks_for_confirmation_then_makes_the_memory_current(
    page: Any, server: Server
) -> None:
    old_id = server.store.id_of(STANDUP[0])
    new_id = server.store.id_of(STANDUP_FIX[0])
    _open(page, server, "explore")
    page.fill("#explore-q", "harbor standup Ostra")
    page.press("#explore-q", "Enter")
    _list_item(page, old_id).click()
    page.wait_for_selector("#restore-button")
    page.click("#restore-button")
    dialog = page.locator("dialog#confirm")
    dialog.wait_for(state="visible")
    assert old_id in (dialog.locator("#confirm-title").text_content() or "")
    assert new_id in (dialog.locator("#confirm-text").text_content() or "")
    page.click("#confirm-cancel")
    dialog.wait_for(state="hidden")
    assert request(server, "GET", f"/api/node/{old_id}").json()["item"]["outdated"] is True

    page.click("#restore-button")
    dialog.wait_for(state="visible")
    page.click("#confirm-ok")
    page.wait_for_selector("#detail .notice.done")
    assert "RESTORED" in (page.locator("#detail .notice.done").text_content() or "")
    assert page.locator("#restore-button").count() == 0
    assert request(server, "GET", f"/api/node/{old_id}").json()["item"]["outdated"] is False
    again = _list_item(page, old_id)
    assert "OUTDATED" not in (again.text_content() or "")


def test_explore_tiles_speak_plainly_and_diagnose_shows_the_store(
    page: Any, server: Server
) -> None:
    _open(page, server, "explore")
    page.wait_for_selector("#stats [data-stat=stat_projects]")
    tiles = " ".join(page.locator("#stats dt").all_text_contents()).lower()
    for jargon in ("unreachable", "branches", "depth", "bytes"):
        assert jargon not in tiles, tiles
    assert page.locator("#stats [data-stat=stat_projects] dd").text_content() == "1"
    page.click("#tab-diagnose")
    page.wait_for_selector("#screen-diagnose:not([hidden])")
    assert page.locator("#diag-store [data-row=diag_store_unreachable]").text_content() == "0"
    info = request(server, "GET", "/api/info").json()
    branches = page.locator("#diag-store [data-row=diag_store_branches]").text_content()
    assert branches == str(info["stats"]["branches"])
    shown = page.locator("#diag-store [data-row=diag_store_search]").text_content() or ""
    said = "words and meaning" if info["search"]["mode"] == "semantic" else "words only"
    assert said in shown


def test_set_up_suggests_no_temporary_folder_and_no_stale_words(page: Any, server: Server) -> None:
    _open(page, server, "setup")
    home = page.locator("#setup-home")
    assert home.input_value() == "", "IHMT_HOME is a temporary folder here: nothing to suggest"
    assert home.get_attribute("placeholder") == "~/.ihmt"
    page.check("input[name=scope][value=project]")
    assert page.locator("#setup-project").input_value() == ""
    text = page.locator("body").text_content() or ""
    assert "no install command" not in text and "once it is available" not in text


def test_the_tree_is_usable_on_a_390px_wide_phone(browser: Any, server: Server) -> None:
    width, height = 390, 844
    context = browser.new_context(
        viewport={"width": width, "height": height}, locale="en-US", device_scale_factor=2
    )
    context.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        _open(page, server, "explore")
        page.wait_for_selector("#tree details.domain")
        leaf_id = server.store.id_of("I live in Madrid, in a fl")
        leaf = _reveal(page, server, leaf_id)
        leaf.scroll_into_view_if_needed()
        overflow = page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= width, f"the page scrolls sideways: {overflow} px"
        for tab in page.locator(".tabs a").all():
            box = tab.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        box = leaf.bounding_box()
        title = leaf.locator(".title").bounding_box()
        assert box is not None and title is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
        assert title["width"] >= 200, f"a title gets {title['width']} px"
        assert "Madrid" in (leaf.locator(".title").text_content() or "")
        page.locator(".tree-card").scroll_into_view_if_needed()
        page.evaluate("document.querySelector('.tree-card').scrollIntoView()")
        _shot(page, "explore-phone")
        leaf.click()
        text = page.locator("#leaf-text")
        text.wait_for()
        page.wait_for_function(
            "() => { const r = document.getElementById('detail').getBoundingClientRect();"
            " return r.top >= -1 && r.top < innerHeight; }"
        )
        assert text.text_content() == JOURNAL[0][0]
    finally:
        context.close()
    assert not errors, errors
