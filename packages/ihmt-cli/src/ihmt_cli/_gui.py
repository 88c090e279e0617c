"""``ihmt gui``: the local web interface over ``ihmt_mcp.Memory``.

Four screens (Set up, Explore, Diagnose, Timeline) in plain HTML/CSS/JS from
``gui_static/``, served by Starlette + uvicorn on 127.0.0.1 only. The rules that keep a
browser page on another site from reaching it:

- every ``/api/`` call carries the random token of the URL the command prints (header
  ``X-IHMT-Token`` or ``?token=``), compared in constant time: missing 401, wrong 403;
- ``Host`` must name a loopback address (DNS rebinding) and ``Origin``, when present,
  a loopback ``http://`` origin: else 400 / 403;
- static files are served from a fixed list of the folder's own files, nothing else;
- writes (create a store, forget or restore a memory, run ``ihmt install``) are POSTs of
  a JSON body of at most ``MAX_BODY`` bytes, and each needs an explicit confirmation;
- ids are checked against their shape, then against the catalog.

One concern per module: ``_gui_guard`` (the middleware), ``_gui_session`` (the store
shown and its thread), ``_gui_http`` (what every route shares), ``_gui_api`` (the
memory's routes), ``_gui_setup`` (the Set up screen's); this module lists the routes and
starts the server.

The memory is read-only here except ``forget`` and ``restore`` (which undoes an OUTDATED
mark); no leaf's text is ever edited. Every call into ``Memory`` runs on one worker
thread (SQLite connections stay on the thread that made them) and opens an existing
store only: the GUI never creates one implicitly.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ihmt_cli._base import State, command, pass_state
from ihmt_cli._gui_guard import MAX_BODY, SECURITY_HEADERS, Guard
from ihmt_cli._gui_session import Gui
from ihmt_cli._types import AGENTS, SCOPES

if TYPE_CHECKING:
    import socket

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["AGENTS", "MAX_BODY", "SCOPES", "Gui", "build_app", "gui_command", "home_of"]

STATIC_DIR = Path(__file__).with_name("gui_static")
_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}


# ---------------------------------------------------------------------- the app
def build_app(gui: Gui) -> Starlette:
    """The Starlette application: the static screens and the ``/api/`` routes, guarded."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route

    from ihmt_cli import _gui_api as api
    from ihmt_cli import _gui_setup as setup

    get, post = ["GET"], ["POST"]
    routes = [
        Route(path, handler, methods=methods)
        for path, handler, methods in (
            ("/", _index, get),
            ("/static/{name:path}", _static, get),
            ("/api/info", api.info, get),
            ("/api/tree", api.tree, get),
            ("/api/node/{item_id:path}", api.node, get),
            ("/api/search", api.search, get),
            ("/api/list", api.listing, get),
            ("/api/facets", api.facets, get),
            ("/api/timeline", api.timeline, get),
            ("/api/forget", api.forget, post),
            ("/api/restore", api.restore, post),
            ("/api/setup/preview", setup.setup_preview, get),
            ("/api/setup/create", setup.setup_create, post),
            ("/api/setup/apply", setup.setup_apply, post),
        )
    ]
    app = Starlette(routes=routes, middleware=[Middleware(Guard, token=gui.token)])
    app.state.gui = gui
    # A fixed list of the folder's own files: nothing else is ever served.
    app.state.static_files = {p.name: p for p in STATIC_DIR.iterdir() if p.is_file()}
    return app


async def _index(request: Request) -> Response:
    from starlette.responses import FileResponse

    found: Path = request.app.state.static_files["index.html"]
    return FileResponse(found, headers=SECURITY_HEADERS)


async def _static(request: Request) -> Response:
    from starlette.responses import FileResponse

    from ihmt_cli._gui_http import json_response

    found: Path | None = request.app.state.static_files.get(request.path_params["name"])
    if found is None:
        return json_response({"error": "not found"}, 404)
    media = _CONTENT_TYPES.get(found.suffix, "application/octet-stream")
    return FileResponse(found, media_type=media, headers=SECURITY_HEADERS)


def home_of(store_path: Path) -> Path:
    """The ``IHMT_HOME`` that holds ``store_path`` (its parent when it is that home's
    store folder)."""
    from ihmt_cli._base import store_under
    from ihmt_mcp import Settings

    if store_under(store_path.parent) == store_path:
        return store_path.parent
    return Settings.from_env().home


# ---------------------------------------------------------------------- the command
def _listen(port: int) -> socket.socket:
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise click.ClickException(
            f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); choose another --port "
            "or --port 0 for any free one"
        ) from None
    sock.listen(64)
    return sock


# uvicorn sets up its own logging (warnings only, no access log).
@command("gui", configures_logging=False)
@click.option(
    "--port",
    type=click.IntRange(min=0, max=65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free port).",
)
@click.option("--no-browser", is_flag=True, help="Print the URL but do not open a browser.")
@pass_state
def gui_command(state: State, port: int, no_browser: bool) -> None:
    """Open the local web interface: Set up, Explore, Diagnose, Timeline (127.0.0.1 only)."""
    import uvicorn

    gui = Gui(store_path=state.path, home=home_of(state.path))
    app = build_app(gui)
    sock = _listen(port)
    bound = sock.getsockname()[1]
    url = f"http://127.0.0.1:{bound}/?token={gui.token}"
    if state.is_json:
        state.emit({"url": url, "port": bound, "store": str(state.path)}, url)
    else:
        click.echo(f"IHMT web interface for {state.path}")
        click.echo(url)
        click.echo("Press Ctrl+C to stop. The link holds a secret token: do not share it.")
    sys.stdout.flush()
    if not no_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        lifespan="off",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        gui.close()
