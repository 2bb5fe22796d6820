"""The saved games: the list (``GET /api/games``), one game's positions (``GET /api/games/ID``)
and PGN (``/pgn``), the evaluation graph's analysis (``POST /api/games/ID/analyse``,
``GET /api/games/ID/analysis``) and the live evaluation of the game on the board
(``POST /api/eval``). Reads of the journals run off the server's loop."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiohttp import web

from board_driver.errors import BoardDriverError
from board_driver.journal import GameStore, JournalError
from board_driver.web.analyses import SECONDS as ANALYSE_SECONDS
from board_driver.web.analyses import BusyError as AnalysisBusy
from board_driver.web.api import ApiError, json_response, read_body
from board_driver.web.context import CTX, AppContext, ask, require
from engine.errors import EngineError

if TYPE_CHECKING:
    from board_driver.referee.session import Session


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/api/games", games)
    r.add_get("/api/games/{id}", game)
    r.add_get("/api/games/{id}/pgn", pgn)
    r.add_post("/api/games/{id}/analyse", analyse)
    r.add_get("/api/games/{id}/analysis", analysis)
    r.add_post("/api/eval", live_eval)


def _gid(ctx: AppContext, request: web.Request) -> str:
    gid = request.match_info["id"]
    if not all(c.isalnum() or c in "-_" for c in gid) or gid not in ctx.store.ids():
        raise ApiError(404, f"no game {gid!r}")
    return gid


async def games(request: web.Request) -> web.Response:
    loop = asyncio.get_running_loop()
    return json_response({"games": await loop.run_in_executor(None, list_games, request.app[CTX].store)})


async def game(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    gid = _gid(ctx, request)
    loop = asyncio.get_running_loop()
    return json_response(await loop.run_in_executor(None, game_detail, ctx.store, gid))


async def pgn(request: web.Request) -> web.Response:
    from board_driver.pgn import pgn_of
    ctx = request.app[CTX]
    gid = _gid(ctx, request)
    loop = asyncio.get_running_loop()

    def make() -> str:
        try:
            return pgn_of(ctx.store.load(gid))
        except (JournalError, EngineError, KeyError, ValueError) as exc:
            raise ApiError(422, f"game {gid}: cannot be exported: {exc}") from None
    text = await loop.run_in_executor(None, make)
    return web.Response(text=text, content_type="application/x-chess-pgn",
                        headers={"Content-Disposition": f'attachment; filename="{gid}.pgn"'})


async def analyse(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    gid = _gid(ctx, request)
    body = await read_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, 'send {} or {"seconds": S}')
    seconds = body.get("seconds", ANALYSE_SECONDS)
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0.05 <= seconds <= 5:
        raise ApiError(400, "seconds: the engine's time a position, 0.05 to 5")
    loop = asyncio.get_running_loop()
    try:
        status = await loop.run_in_executor(None, ctx.analyses.start, gid, float(seconds))
    except AnalysisBusy as exc:
        raise ApiError(409, str(exc)) from None
    except (JournalError, EngineError, KeyError) as exc:
        raise ApiError(422, f"game {gid}: cannot be analysed: {exc}") from None
    return json_response({"ok": True, "analysis": status}, status=202 if status["state"] == "running" else 200)


async def analysis(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    gid = _gid(ctx, request)
    loop = asyncio.get_running_loop()
    return json_response(await loop.run_in_executor(None, ctx.analyses.status, gid))


async def live_eval(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    body = await read_body(request)
    on = body.get("on") if isinstance(body, dict) else None
    if not isinstance(on, bool):
        raise ApiError(400, 'send {"on": true} or {"on": false} (and "seconds": S, optional)')
    seconds = body.get("seconds")
    if seconds is not None and (not isinstance(seconds, (int, float)) or isinstance(seconds, bool)
                                or not 0.1 <= seconds <= 30):
        raise ApiError(400, "seconds: the engine's time a position, 0.1 to 30")
    bridge = ctx.bridge
    live = bridge.live
    live.switch(on, None if seconds is None else float(seconds))
    bridge.notice("Live evaluation on." if on else "Live evaluation off.")

    def publish(session: Session) -> dict:
        live.follow(session)            # the position now goes to the engine at once
        return bridge.publish(session)
    state = await ask(ctx, publish)
    return json_response({"ok": True, "on": live.on, "seconds": live.seconds, "eval": state.get("eval"),
                          "state": state})


# -- work done off the session (pure reads of journals) ---------------------------------------------

def list_games(store: GameStore) -> list[dict]:
    out = []
    for gid in store.ids():
        try:
            r = store.load(gid)
        except (JournalError, OSError, ValueError) as exc:
            out.append({"id": gid, "damaged": True, "error": str(exc)})
            continue
        out.append({"id": r.id, "date": r.header.get("date"), "variant": r.variant,
                    "players": r.header.get("players"), "result": r.result, "reason": r.reason,
                    "actions": len(r.actions), "damaged": False})
    return out


def game_detail(store: GameStore, gid: str) -> dict:
    from board_driver.config import load_variant
    from engine.game import new_game
    try:
        rec = store.load(gid)
        variant = load_variant(rec.variant)
        game = new_game(variant, rec.header.get("start_fen"))
    except (JournalError, EngineError, BoardDriverError, ValueError) as exc:
        raise ApiError(422, f"game {gid}: cannot be read: {exc}") from None

    def pieces() -> dict:
        name = game.geometry.name
        return {name(sq): (l.upper() if c == 0 else l.lower()) for sq, (l, c) in sorted(game.piece_map().items())}
    geo = game.geometry
    from board_driver.pgn import fullmove, movetext
    from board_driver.referee.texts import catalog
    from board_driver.web.state import family_view, numbered
    positions = [{"move": None, "san": None, "label": None, "fen": game.fen(), "pieces": pieces()}]
    error = None
    sans = []
    for text in rec.actions:
        try:
            a = game.parse(text)
            san = game.san(a) if not a.silent else a.text
            sans.append((game.turn, a, san))
            game.push(a)
        except (EngineError, ValueError) as exc:
            error = f"{text}: {exc}"
            break
        positions.append({"move": text, "san": san, "fen": game.fen(), "pieces": pieces()})
    start = fullmove(rec.header.get("start_fen"))
    for p, label in zip(positions[1:], numbered(sans, start)):
        p["label"] = label
    return {"id": rec.id, "variant": rec.variant, "players": rec.header.get("players"), "date": rec.header.get("date"),
            "result": rec.result, "reason": rec.reason,
            "board": {"files": geo.files, "ranks": geo.ranks, "holes": sorted(geo.name(h) for h in geo.holes)},
            "catalog": catalog(game, family_view(game)), "movetext": movetext(sans, start),
            "positions": positions, "error": error}
