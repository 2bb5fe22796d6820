"""The page itself: ``/`` (index.html) and its built files (``/static/NAME``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from aiohttp import web

from board_driver.web.api import ApiError
from board_driver.web.context import CTX

_HASHES: dict[tuple[str, int, int], str] = {}


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/", index)
    r.add_get("/static/{name}", static_file)


def content_hash(path: Path) -> str:
    """The first 12 hex digits of the file's SHA-256, as build.mjs writes them into index.html."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _HASHES:
        _HASHES[key] = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return _HASHES[key]


async def index(request: web.Request) -> web.StreamResponse:
    page = request.app[CTX].static / "index.html"
    if not page.exists():
        raise ApiError(500, f"the page is not built: {page} is missing")
    return web.FileResponse(page, headers={"Cache-Control": "no-cache", "Vary": "Accept-Encoding"})


async def static_file(request: web.Request) -> web.StreamResponse:
    """The page's built files. Each is served gzip-compressed to a browser that accepts it
    (the build writes NAME.gz beside NAME; aiohttp's FileResponse picks it). index.html names
    them with ``?v=HASH`` of their content, so a request carrying the current hash may be kept
    for a year unasked (``immutable``); any other is checked again on every load."""
    name = request.match_info["name"]
    path = request.app[CTX].static / name
    if "/" in name or name.startswith(".") or name.endswith(".gz") or not path.is_file():
        raise web.HTTPNotFound()
    fresh = request.query.get("v") == content_hash(path)
    cache = "public, max-age=31536000, immutable" if fresh else "no-cache"
    return web.FileResponse(path, headers={"Cache-Control": cache, "Vary": "Accept-Encoding"})
