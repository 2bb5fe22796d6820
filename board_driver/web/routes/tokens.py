"""The devices paired with the board, as the owner sees them (``GET /api/tokens``) and forgets
them (``POST /api/tokens/revoke``). docs/web.md, *Tokens*."""

from __future__ import annotations

from aiohttp import web

from board_driver.web.api import COOKIE, ApiError, json_response, read_body, token_of
from board_driver.web.context import CTX, require


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/api/tokens", list_tokens)
    r.add_post("/api/tokens/revoke", revoke_tokens)


async def list_tokens(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    tokens = ctx.bridge.tokens
    mine = tokens.device_of(token_of(request))
    return json_response({"tokens": [dict(d, current=d["id"] == mine) for d in tokens.devices()],
                          "expire_days": round(tokens.ttl / 86400)})


async def revoke_tokens(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    tokens = ctx.bridge.tokens
    mine = tokens.device_of(token_of(request))
    body = await read_body(request)
    if not isinstance(body, dict):
        body = {}
    ids = body.get("ids", [body["id"]] if "id" in body else None)
    if body.get("all") is True and ids is None:
        n = tokens.revoke(None)
        ids = []
    elif isinstance(ids, list) and ids and all(isinstance(i, str) for i in ids) and "all" not in body:
        known = {d["id"] for d in tokens.devices()}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise ApiError(404, f"no paired device {unknown[0]!r} (GET /api/tokens lists them)")
        n = tokens.revoke(set(ids))
    else:
        raise ApiError(400, 'send {"id": ID}, {"ids": [ID, ...]} or {"all": true}')
    if n:
        ctx.bridge.notice(f"{n} paired device{'s' if n != 1 else ''} forgotten from the page.")
    resp = json_response({"ok": True, "revoked": n, "tokens": [dict(d, current=False) for d in tokens.devices()]})
    if mine is not None and (not ids or mine in ids):
        resp.del_cookie(COOKIE, path="/")          # this browser's own token went too
    return resp
