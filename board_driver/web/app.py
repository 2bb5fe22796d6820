"""The aiohttp application of the page: its two middlewares (the Host check, then the
cross-site and error checks) and every feature's routes, registered by :func:`init_app`.

Which module serves which routes (docs/web.md, *Where the code lives*):

* :mod:`.routes.files` -- ``/`` and ``/static/NAME``;
* :mod:`.routes.game` -- the game: state, WebSocket, command, new game, the simulated board;
* :mod:`.routes.variants` -- variants, a design's cost, a match's schedule;
* :mod:`.routes.board_tools` -- the board's devices, the selftest and the calibration;
* :mod:`.routes.games` -- saved games, their analyses, the live evaluation;
* :mod:`.routes.remote_lobby` -- the remote games' lobby;
* :mod:`.routes.login` -- pairing and the password;
* :mod:`.routes.tokens` -- the paired devices.
"""

from __future__ import annotations

from typing import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from board_driver.errors import BoardDriverError
from board_driver.referee.session import CommandError
from board_driver.sim.board import SimulatorError
from board_driver.web.api import ApiError
from board_driver.web.context import CTX, AppContext
from board_driver.web.routes import board_tools, files, game, games, login, remote_lobby, tokens, variants
from engine.errors import EngineError

FEATURES = (files, game, variants, board_tools, games, remote_lobby, login, tokens)
MAX_BODY = 256 * 1024

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def host_guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every request names the board itself in ``Host`` (DNS rebinding), else 421."""
    header = request.headers.get("Host")
    sock = request.transport.get_extra_info("sockname") if request.transport is not None else None
    local = sock[0] if isinstance(sock, tuple) and sock else None
    if not request.app[CTX].hosts.allows(header, local):
        raise ApiError(421, f"this board answers only to its own names, not {header!r}: open the page "
                            "by the board's address or name (or add the name to web.hosts in its profile)")
    return await handler(request)


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Cross-site checks on every state-changing request; JSON errors for any failure."""
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        site = request.headers.get("Sec-Fetch-Site")
        origin = request.headers.get("Origin")
        if site == "cross-site" or (origin is not None and urlsplit(origin).netloc != request.host):
            raise ApiError(403, "cross-site request refused: use the board's own page")
        if request.path.startswith("/api/") and request.content_type != "application/json":
            raise ApiError(415, "send the body as JSON (Content-Type: application/json)")
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except (CommandError, SimulatorError, EngineError, BoardDriverError, ValueError) as exc:
        raise ApiError(400, str(exc)) from None


def init_app(ctx: AppContext) -> web.Application:
    """The application: the middlewares, the context (``app[CTX]``) and every feature's routes."""
    app = web.Application(middlewares=[host_guard, guard], client_max_size=MAX_BODY)
    app[CTX] = ctx
    for feature in FEATURES:
        feature.setup(app)
    return app
