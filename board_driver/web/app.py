"""The aiohttp application of the page: its middlewares (the connection's clock for the
connection guard, the Host check, then the cross-site and error checks) and every feature's
routes, registered by :func:`init_app`.

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

from aiohttp import web

from board_driver.errors import BoardDriverError
from board_driver.referee.session import CommandError
from board_driver.sim.board import SimulatorError
from board_driver.web.api import ApiError, cross_site
from board_driver.web.context import CTX, AppContext
from board_driver.web.limits import ConnectionGuard
from board_driver.web.routes import board_tools, files, game, games, login, remote_lobby, tokens, variants
from engine.errors import EngineError

FEATURES = (files, game, variants, board_tools, games, remote_lobby, login, tokens)
MAX_BODY = 256 * 1024

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CONNECTIONS = web.AppKey("connections", ConnectionGuard)


@web.middleware
async def timed(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Tells the connection guard (limits.py) that a request is being handled: no header or
    idle timeout runs meanwhile (a WebSocket is one request for its whole life)."""
    guard = request.app.get(CONNECTIONS)
    conn = guard.of(request.protocol) if guard is not None else None
    if conn is None:
        return await handler(request)
    conn.begin(request)
    try:
        return await handler(request)
    finally:
        conn.end()


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
        if cross_site(request):
            raise ApiError(403, "cross-site request refused: use the board's own page")
        if request.path.startswith("/api/") and request.content_type != "application/json":
            raise ApiError(415, "send the body as JSON (Content-Type: application/json)")
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except (CommandError, SimulatorError, EngineError, BoardDriverError, ValueError) as exc:
        raise ApiError(400, str(exc)) from None


def init_app(ctx: AppContext, connections: ConnectionGuard | None = None) -> web.Application:
    """The application: the middlewares, the context (``app[CTX]``), the connection guard
    the server admits connections through (``app[CONNECTIONS]``, when served by
    :class:`~board_driver.web.server.WebServer`) and every feature's routes."""
    app = web.Application(middlewares=[timed, host_guard, guard], client_max_size=MAX_BODY)
    app[CTX] = ctx
    if connections is not None:
        app[CONNECTIONS] = connections
    for feature in FEATURES:
        feature.setup(app)
    return app
