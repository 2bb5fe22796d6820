"""The remote games' lobby (docs/remote.md): the boards online (``GET /api/remote/boards``),
an invitation (``POST /api/remote/invite``: the New game of ``POST /api/new`` with
``remote:PEER`` for the other side), and the answers to one (``accept``, ``decline``,
``cancel``)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from board_driver.errors import BoardDriverError
from board_driver.web.api import ApiError, json_response, read_body
from board_driver.web.context import CTX, AppContext, RemoteLobby, fresh, require
from board_driver.web.routes.game import new_game


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/api/remote/boards", remote_boards)
    r.add_post("/api/remote/invite", remote_invite)
    r.add_post("/api/remote/accept", remote_answer)
    r.add_post("/api/remote/decline", remote_answer)
    r.add_post("/api/remote/cancel", remote_answer)


def _remote(ctx: AppContext) -> RemoteLobby:
    if ctx.remote is None or ctx.remote.broker is None:
        from board_driver.remote.invitations import NO_BROKER
        raise ApiError(409, NO_BROKER)
    return ctx.remote


async def remote_boards(request: web.Request) -> web.Response:
    return json_response(_remote(request.app[CTX]).boards())


async def remote_invite(request: web.Request) -> web.Response:
    """``{"board": PEER, "side": "white" | "black", ...}``: the New game of ``POST /api/new`` with
    ``remote:PEER`` for the other side."""
    ctx = request.app[CTX]
    require(ctx, request)
    _remote(ctx)
    body = await read_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("board"), str) or not body["board"].strip():
        raise ApiError(400, 'send {"board": NAME} (and "side": "white" or "black", the side this board plays)')
    side = body.get("side", "white")
    if side not in ("white", "black"):
        raise ApiError(400, 'side: "white" or "black" (the side this board\'s player plays)')
    other = "black" if side == "white" else "white"
    name = body.get("name", side.capitalize())
    extra = {k: body[k] for k in ("variant", "fen", "clock", "clock_mode") if k in body}
    request_body = {**extra, side: name, other: f"remote:{body['board'].strip()}"}
    return await new_game(request, body=request_body)


async def remote_answer(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    remote = _remote(ctx)
    what = request.path.rsplit("/", 1)[1]
    body = await read_body(request)
    peer = body.get("board") if isinstance(body, dict) else None
    if what != "cancel" and (not isinstance(peer, str) or not peer.strip()):
        raise ApiError(400, 'send {"board": NAME}: the board whose invitation this answers')
    peer = str(peer or "")
    loop = asyncio.get_running_loop()
    try:
        if what == "cancel":
            out = await loop.run_in_executor(None, remote.cancel)
        else:
            out = await loop.run_in_executor(None, remote.accept if what == "accept" else remote.decline,
                                             peer.strip())
    except LookupError as exc:
        raise ApiError(404, str(exc).strip("'\"")) from None
    except BoardDriverError as exc:
        raise ApiError(409, str(exc)) from None
    await fresh(ctx)
    return json_response({"ok": True, **out}, status=202 if what == "accept" else 200)
