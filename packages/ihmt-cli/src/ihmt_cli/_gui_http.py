"""What every ``/api/`` handler of ``ihmt gui`` shares: the JSON answer (or the error it
becomes), the :class:`Gui` of the app, and the checks of what a request gives."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ihmt_cli._gui_guard import MAX_BODY, SECURITY_HEADERS, BodyTooLargeError
from ihmt_cli._gui_session import ApiError, Gui

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = [
    "Handler",
    "checked_id",
    "choice",
    "endpoint",
    "folder_param",
    "gui_of",
    "json_body",
    "json_response",
    "number_param",
    "text_param",
]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")

S = TypeVar("S", bound=str)
Handler = Callable[["Request"], Awaitable["Response"]]


def json_response(data: dict[str, Any], status: int = 200) -> Response:
    """``data`` as JSON, with the security headers every answer carries."""
    from starlette.responses import JSONResponse

    return JSONResponse(data, status_code=status, headers=SECURITY_HEADERS)


def endpoint(fn: Callable[[Request], Awaitable[dict[str, Any]]]) -> Handler:
    """A route answering ``fn``'s object as JSON; a refusal becomes ``{error, code}``."""

    async def wrapped(request: Request) -> Response:
        from ihmt_mcp import USER_ERRORS

        try:
            return json_response(await fn(request))
        except ApiError as exc:
            return json_response({"error": exc.message, "code": exc.code}, exc.status)
        except LookupError as exc:
            return json_response({"error": _plain(exc), "code": "not_found"}, 404)
        except USER_ERRORS as exc:
            return json_response({"error": _plain(exc), "code": "refused"}, 400)

    return wrapped


def gui_of(request: Request) -> Gui:
    """The :class:`Gui` the app was built for."""
    gui: Gui = request.app.state.gui
    return gui


def checked_id(value: object) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise ApiError(400, "not a memory id", "bad_id")
    return value


def text_param(value: object, name: str, *, limit: int = 2000, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str) or "\x00" in value or len(value) > limit:
        raise ApiError(400, f"{name} must be text of at most {limit} characters")
    if required and not value.strip():
        raise ApiError(400, f"{name} is empty")
    return value.strip()


def folder_param(value: object, name: str) -> Path:
    text = text_param(value, name, limit=4096, required=True)
    path = Path(text).expanduser()
    if not path.is_absolute():
        raise ApiError(400, f"{name} must be an absolute folder path, e.g. ~/.ihmt")
    return path


def number_param(value: object, name: str, *, default: int, low: int, high: int) -> int:
    if value is None or value == "":
        return default
    if not isinstance(value, str) or not value.isdigit() or not low <= int(value) <= high:
        raise ApiError(400, f"{name} must be a whole number from {low} to {high}")
    return int(value)


def choice(value: object, name: str, choices: tuple[S, ...]) -> S:
    """``value`` when it is one of ``choices`` (typed as they are), else a 400."""
    for option in choices:
        if value == option:
            return option
    raise ApiError(400, f"{name} must be one of: {', '.join(choices)}")


async def json_body(request: Request) -> dict[str, Any]:
    import json

    try:
        raw = await request.body()
    except BodyTooLargeError:
        raise ApiError(413, f"request body over {MAX_BODY} bytes", "too_large") from None
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "the body is not JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def _plain(exc: BaseException) -> str:
    """ihmt_mcp's plain message, as the interface words it: an unknown key is "not found:
    KEY", and a message is on one line, except a file's name, shown as it is."""
    from ihmt_mcp import plain_message
    from ihmt_store import one_line

    if isinstance(exc, KeyError) and exc.args:
        return f"not found: {exc.args[0]}"
    message = plain_message(exc)
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return message
    return one_line(message) or type(exc).__name__


def confirmed(body: dict[str, Any], what: str) -> None:
    """Refuse a write the page did not confirm explicitly (``"confirm": true``)."""
    if body.get("confirm") is not True:
        raise ApiError(400, f"{what} needs an explicit confirmation", "confirm")
