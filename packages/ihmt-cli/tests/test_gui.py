"""The web interface's app in-process (Starlette's test client): the guard and the API.

The real server process and the browser are exercised in tests-integration.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from ihmt_cli._gui import MAX_BODY, Gui, build_app

BASE = "http://127.0.0.1:8123"


@pytest.fixture
def gui(store: Path, tmp_path: Path) -> Iterator[Gui]:
    opened = Gui(store_path=store, home=tmp_path / "home")
    yield opened
    opened.close()


@pytest.fixture
def client(gui: Gui) -> Iterator[TestClient]:
    with TestClient(build_app(gui), base_url=BASE) as test_client:
        test_client.headers["X-IHMT-Token"] = gui.token
        yield test_client


def test_the_screens_ship_inside_the_package() -> None:
    folder = files("ihmt_cli") / "gui_static"
    for name in ("index.html", "app.js", "i18n.js", "app.css"):
        assert (folder / name).is_file(), name


def test_api_needs_the_token(client: TestClient) -> None:
    assert client.get("/api/info", headers={"X-IHMT-Token": ""}).status_code == 401
    assert client.get("/api/info", headers={"X-IHMT-Token": "nope"}).status_code == 403
    assert client.get("/api/info").status_code == 200


def test_host_and_origin_must_be_loopback(client: TestClient) -> None:
    assert client.get("/api/info", headers={"Host": "attacker.example"}).status_code == 400
    assert client.get("/api/info", headers={"Origin": "http://attacker.example"}).status_code == 403
    assert client.get("/api/info", headers={"Origin": BASE}).status_code == 200


def test_tree_and_node_show_the_stored_text(client: TestClient, store: Path) -> None:
    tree = client.get("/api/tree").json()
    assert {d["domain"] for d in tree["domains"]} >= {"personal"}
    leaves = [i for d in tree["domains"] for i in d["items"] if i["kind"] == "leaf"]
    node = client.get(f"/api/node/{leaves[0]['id']}").json()
    assert node["text"] and node["item"]["id"] == leaves[0]["id"]
    assert client.get("/api/node/..%2fetc").status_code == 400


def test_search_on_three_luis_is_ambiguous(client: TestClient) -> None:
    data = client.get("/api/search", params={"q": "Luis"}).json()
    assert data["status"] == "ambiguous"
    assert len(data["results"]) >= 3
    assert data["store"]["files"] >= data["files_read"]


def test_timeline_has_the_madrid_valencia_contradiction(client: TestClient) -> None:
    data = client.get("/api/timeline", params={"subject": "user"}).json()
    location = next(t for t in data["timelines"] if t["attribute"] == "location")
    assert location["active"]["value"] == "Valencia"
    assert [h["value"] for h in location["history"]] == ["Madrid"]
    assert data["contradictions"][0]["old_value"] == "Madrid"


def test_forget_needs_confirmation_then_deletes_the_leaf(client: TestClient) -> None:
    tree = client.get("/api/tree").json()
    leaf = next(i for d in tree["domains"] for i in d["items"] if i["kind"] == "leaf")["id"]
    assert client.post("/api/forget", json={"id": leaf}).status_code == 400
    assert client.get(f"/api/node/{leaf}").status_code == 200
    done = client.post("/api/forget", json={"id": leaf, "confirm": True, "reason": "test"})
    assert done.status_code == 200 and done.json()["id"] == leaf
    assert client.get(f"/api/node/{leaf}").status_code == 404


def test_oversize_and_non_json_posts_are_refused(client: TestClient) -> None:
    big = client.post(
        "/api/forget",
        content=b"{" + b" " * MAX_BODY + b"}",
        headers={"Content-Type": "application/json"},
    )
    assert big.status_code == 413
    form = client.post(
        "/api/forget",
        content=b"id=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 415


def test_a_missing_store_is_reported_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    gui = Gui(store_path=missing, home=tmp_path)
    try:
        with TestClient(build_app(gui), base_url=BASE) as client:
            client.headers["X-IHMT-Token"] = gui.token
            assert client.get("/api/info").json()["exists"] is False
            reply = client.get("/api/tree")
            assert reply.status_code == 404 and reply.json()["code"] == "no_store"
            assert not missing.exists()
            created = client.post("/api/setup/create", json={"home": str(tmp_path / "h")})
            assert created.json() == {"store": str(tmp_path / "h" / "ihmt_memory"), "created": True}
            assert client.get("/api/tree").status_code == 200
    finally:
        gui.close()
