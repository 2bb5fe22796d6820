"""A browser earns its token: by pairing at the board (``POST /api/pair``, ``GET /api/pair/ID``)
or with the board's password (``POST /api/login``). docs/web.md, *Security*."""

from __future__ import annotations

import hmac
import time
from functools import partial

from aiohttp import web

from board_driver.connections import client_key
from board_driver.web.api import ApiError, device_label, json_response, read_body, set_cookie
from board_driver.web.context import CTX, ask
from board_driver.web.pairing import PairingBusy, PairingState


def setup(app: web.Application) -> None:
    r = app.router
    r.add_post("/api/pair", pair)
    r.add_get("/api/pair/{id}", pair_status)
    r.add_post("/api/login", login)


async def pair(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    start = partial(ctx.bridge.start_pairing, client=client_key(request.remote), label=device_label(request))
    try:
        p = await ask(ctx, start)
    except PairingBusy as exc:
        raise ApiError(exc.status, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
    left = max(0, round(p.deadline - time.monotonic()))
    return json_response({"id": p.id, "square": p.square, "expires_in": left, "kind": "lift" if p.filled else "place",
                          "text": f"{p.text} within {left} seconds."})


async def pair_status(request: web.Request) -> web.Response:
    p = request.app[CTX].bridge.pairing(request.match_info["id"])
    if p is None:
        raise ApiError(404, "no such pairing (it expired long ago, or never was)")
    out = {"id": p.id, "state": p.state.value, "square": p.square, "kind": "lift" if p.filled else "place",
           "text": p.text, "expires_in": max(0, round(p.deadline - time.monotonic()))}
    resp = json_response(out)
    if p.state is PairingState.GRANTED and p.token:
        out["token"] = p.token
        resp = json_response(out)
        set_cookie(resp, p.token)
    return resp


async def login(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    password = ctx.bridge.password
    if password is None:
        raise ApiError(403, "no password is set in the board profile: pair by lifting a piece")
    client = client_key(request.remote)
    wait = ctx.logins.retry_after(client)
    if wait > 0:                              # refused unchecked: a guess while waiting tells nothing
        raise ApiError(429, f"too many wrong passwords: try again in {wait} s (or pair at the board)",
                       headers={"Retry-After": str(wait)})
    body = await read_body(request)
    given = body.get("password") if isinstance(body, dict) else None
    if not isinstance(given, str) or not hmac.compare_digest(given.encode(), password.encode()):
        ctx.logins.failed(client)
        raise ApiError(401, "wrong password", headers={"WWW-Authenticate": "Bearer"})
    ctx.logins.succeeded(client)
    token = ctx.bridge.tokens.grant(device_label(request), "password")
    resp = json_response({"token": token})
    set_cookie(resp, token)
    return resp
