"""What every route of the page's API shares: JSON answers and errors, the request's body and
token, the token cookie, and how a device is named (docs/web.md, *The API*)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

COOKIE = "fairyboard_token"


class ApiError(web.HTTPException):
    """A JSON error answer: ``{"error": message}`` with the given status."""

    def __init__(self, status: int, message: str, headers: dict | None = None):
        self.status_code = status
        super().__init__(text=json.dumps({"error": message}), content_type="application/json", headers=headers)


def cross_site(request: web.Request) -> bool:
    """Whether a browser says the request comes from another site: ``Sec-Fetch-Site:
    cross-site``, or an ``Origin`` whose host:port is not the request's ``Host`` (``Origin:
    null`` included). A request without either (a script, curl) is not."""
    if request.headers.get("Sec-Fetch-Site") == "cross-site":
        return True
    origin = request.headers.get("Origin")
    return origin is not None and urlsplit(origin).netloc != request.host


def json_response(data: Any, status: int = 200, **kw: Any) -> web.Response:
    """A compact JSON answer (no spaces after separators)."""
    return web.json_response(data, status=status, dumps=partial(json.dumps, separators=(",", ":")), **kw)


async def read_body(request: web.Request) -> Any:
    """The request's JSON body (400 when it is not JSON)."""
    try:
        return await request.json()
    except RecursionError:
        raise ApiError(400, "the body is JSON nested too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "the body is not valid JSON") from None


def token_of(request: web.Request) -> str | None:
    """The token a request carries: ``Authorization: Bearer TOKEN``, else the cookie."""
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return request.cookies.get(COOKIE)


def set_cookie(resp: web.Response, token: str) -> None:
    resp.set_cookie(COOKIE, token, httponly=True, samesite="Strict", max_age=365 * 24 * 3600, path="/")


def device_label(request: web.Request) -> str:
    """How the token list names a device: its browser and system from the User-Agent, and its
    address ("Chrome on Android (192.168.1.23)")."""
    ua = request.headers.get("User-Agent", "")
    system = next((name for key, name in (("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"),
                                          ("Windows", "Windows"), ("Macintosh", "macOS"), ("CrOS", "ChromeOS"),
                                          ("Linux", "Linux")) if key in ua), None)
    browser = next((name for key, name in (("Firefox/", "Firefox"), ("Edg/", "Edge"), ("OPR/", "Opera"),
                                           ("SamsungBrowser/", "Samsung Internet"), ("Chrome/", "Chrome"),
                                           ("Chromium/", "Chromium"), ("Safari/", "Safari")) if key in ua), None)
    if browser and system:
        what = f"{browser} on {system}"
    elif browser or system:
        what = str(browser or system)
    else:
        what = "".join(c for c in ua.split(" ")[0] if c.isprintable())[:40] or "a client"
    return f"{what} ({request.remote or '?'})"
