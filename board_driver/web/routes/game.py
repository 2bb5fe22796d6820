"""The game on the board: its state (``GET /api/state``, the WebSocket ``/api/ws``), a console
command (``POST /api/command``), a new game (``POST /api/new``) and the simulated board's
events (``POST /api/sim``). docs/web.md, *The API*."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import time
from functools import partial
from typing import Any

from aiohttp import WSMsgType, web

from board_driver.referee.session import CommandError, NewGame, Session
from board_driver.sim.board import SimulatorError
from board_driver.web.api import ApiError, cross_site, json_response, read_body
from board_driver.web.catalog import computer_refusal
from board_driver.web.context import CTX, AppContext, ask, fresh, hand_over, require, state_of
from board_driver.web.hosts import is_loopback

SIM_KEYS = ("lift", "place", "input", "move")
SETTLE_LIMIT_S = 3.0
MOVE_STEP_MS = 120          # between the lifts and places of a "move" event (well over the debounce)


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/api/state", state)
    r.add_get("/api/ws", ws)
    r.add_post("/api/command", command)
    r.add_post("/api/new", new_game)
    r.add_post("/api/sim", sim)


async def state(request: web.Request) -> web.Response:
    return json_response(state_of(request.app[CTX], request))


async def ws(request: web.Request) -> web.WebSocketResponse:
    ctx = request.app[CTX]
    if cross_site(request):         # a page of another site opening the board's socket (docs/web.md)
        raise ApiError(403, "cross-site WebSocket refused: open the board's own page")
    sock = web.WebSocketResponse(heartbeat=20)
    await sock.prepare(request)
    ctx.sockets.add(sock)
    try:
        snap = ctx.bridge.latest()
        if snap is not None:
            await sock.send_str(json.dumps({"type": "state", "state": snap}, separators=(",", ":")))
        if ctx.desk.calibration is not None:      # a page (re)connecting mid-calibration catches up
            await sock.send_str(json.dumps({"type": "calibrate", "calibrate": ctx.desk.calibration_status()},
                                           separators=(",", ":")))
        async for msg in sock:
            if msg.type == WSMsgType.TEXT and msg.data == "ping":
                await sock.send_str('{"type":"pong"}')
            elif msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                break
    finally:
        ctx.sockets.discard(sock)
    return sock


def _press_side(text: str) -> str | None:
    """``press white`` / ``press black``: the side whose clock the press is to stop, else None."""
    words = text.split()
    if len(words) == 2 and words[0].lower() == "press" and words[1].lower() in ("white", "black"):
        return words[1].lower()
    return None


async def command(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    body = await read_body(request)
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, 'send {"text": "COMMAND"}, a console command such as "choose q"')
    if len(text) > 500:
        raise ApiError(400, "the command is too long")
    bridge = ctx.bridge

    side = _press_side(text)

    def run(session: Session):
        cmd = text
        if side is not None:
            # "press white": the page presses for the side whose clock it shows running;
            # when the clock has switched meanwhile the press is refused, not made for the
            # other side
            running = session.time.view()
            if running is not None and running["running"] not in (None, side):
                raise CommandError(f"press: {side}'s clock is not running ({running['running']}'s is)")
            cmd = "press"
        replies = session.command(cmd, bridge.clock())
        for line in replies:
            bridge.notice(line)
        return replies
    try:
        replies = await ask(ctx, run)
    except (CommandError, ValueError) as exc:
        raise ApiError(400, str(exc)) from None
    if isinstance(replies, dict) and "new_game" in replies:
        return json_response({"ok": True, "replies": [f"New game: {replies['new_game']}."],
                              "new_game": replies["new_game"]})
    return json_response({"ok": True, "replies": replies, "state": await fresh(ctx)})


async def new_game(request: web.Request, body: Any = None) -> web.Response:
    """``POST /api/new``; also the remote lobby's invitation, with the body it makes."""
    ctx = request.app[CTX]
    require(ctx, request)
    if body is None:
        body = await read_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, 'send {"variant": NAME, "white": NAME, "black": NAME}')
    variant = body.get("variant") or "orthodox"
    known = {v["name"] for v in await ctx.catalog.variants()}
    if variant != "random" and variant not in known:
        raise ApiError(400, f"unknown variant {variant!r}")
    players = {}
    for side in ("white", "black"):
        v = body.get(side, side.capitalize())
        if not isinstance(v, str) or not v.strip() or len(v) > 60:
            raise ApiError(400, f"{side}: a player's name of 1-60 characters")
        players[side] = v.strip()
        refusal = computer_refusal(v.strip())
        if refusal:
            raise ApiError(400, f"{side}: {refusal}")
    fen = body.get("fen")
    if fen is not None and not isinstance(fen, str):
        raise ApiError(400, "fen: a FEN string")
    clock = body.get("clock")              # a time control ("300+3"; "300+3,180+3": time odds; "-": none), optional
    mode = body.get("clock_mode")
    if clock is not None:
        from board_driver.referee.clock import ClockError, TimeControl
        if not isinstance(clock, str) or mode not in (None, "auto", "press"):
            raise ApiError(400, "clock: a time control such as 300+3 (clock_mode: auto or press)")
        try:
            TimeControl.parse(clock)
        except ClockError as exc:
            raise ApiError(400, f"clock: {exc}") from None

    started = await hand_over(ctx, NewGame(variant, players=players, fen=fen, clock=clock, clock_mode=mode,
                                           reply=concurrent.futures.Future()))
    if "invited" in started:            # a remote:PEER player: invited; the game opens once PEER accepts
        return json_response({"ok": True, **started}, status=202)
    return json_response({"ok": True, "variant": started["variant"], "game": started["game"], "players": players})


# -- the simulated board -------------------------------------------------------------------------

async def sim(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    if not ctx.bridge.sim:
        raise ApiError(409, "this board is not simulated: move the pieces on the board")
    if not is_loopback(request.remote):
        require(ctx, request)           # the simulated board is driven from its own machine only
    body = await read_body(request)
    events = body.get("events") if isinstance(body, dict) and "events" in body else body
    if isinstance(events, dict):
        events = [events]
    if not isinstance(events, list) or not events or len(events) > 500:
        raise ApiError(400, 'send an event {"lift": "e2"}, a list of them, or {"events": [...]}')
    checked = []
    last_t = None
    for i, ev in enumerate(events, 1):
        if not isinstance(ev, dict):
            raise ApiError(400, f"event {i}: an event is a JSON object such as {{\"t\": 0, \"lift\": \"e2\"}}")
        kinds = [k for k in SIM_KEYS if k in ev]
        extra = set(ev) - {"t", *SIM_KEYS}
        if len(kinds) != 1 or extra:
            raise ApiError(400, f"event {i}: an event has \"t\" and exactly one of \"lift\", \"place\", \"input\", "
                                "\"move\""
                                + (f" (unknown key {sorted(extra)[0]!r})" if extra else ""))
        t = ev.get("t", last_t if last_t is not None else 0)
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            raise ApiError(400, f"event {i}: \"t\" must be a whole number of milliseconds >= 0, not {t!r}")
        if last_t is not None and t < last_t:
            raise ApiError(400, f"event {i}: time {t} goes back (the event before was at {last_t})")
        arg = ev[kinds[0]]
        if not isinstance(arg, str) or not arg.strip():
            raise ApiError(400, f"event {i}: \"{kinds[0]}\" needs a string, not {arg!r}")
        checked.append((t, kinds[0], arg.strip() if kinds[0] == "input" else arg.strip().lower()))
        last_t = t
    bridge = ctx.bridge
    warnings = []
    t0 = checked[0][0]
    started = time.monotonic()
    for i, (t, kind, arg) in enumerate(checked, 1):
        wait = started + (t - t0) / 1000 - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)

        def run(session: Session, kind=kind, arg=arg):
            board = bridge.board
            if kind == "input":
                for line in session.command(arg, bridge.clock()):
                    bridge.notice(line)
                return
            session.game.geometry.parse(arg)          # a clear message for a square off this board
            getattr(board, kind)(arg)
        try:
            if kind == "move":
                # the lifts and places a player makes for this move, spaced so that the
                # debouncer sees each (a victim lifted and its square filled at the same
                # instant never leaves the sensors)
                steps = await ask(ctx, partial(_move_steps_here, arg, bridge), changes=False)
                for j, (k, sq) in enumerate(steps):
                    if j:
                        await asyncio.sleep(MOVE_STEP_MS / 1000)
                    await ask(ctx, partial(run, kind=k, arg=sq))
            else:
                await ask(ctx, run)
        except (SimulatorError, CommandError, ValueError) as exc:
            warnings.append({"event": i, "t": t, "warning": str(exc)})
    await _settle(ctx)
    return json_response({"ok": True, "warnings": warnings, "state": await fresh(ctx)})


async def _settle(ctx: AppContext) -> None:
    """Wait until the board loop has nothing due (debounce, holds), at most a few seconds."""
    end = time.monotonic() + SETTLE_LIMIT_S
    bridge = ctx.bridge
    clock = bridge.clock
    while time.monotonic() < end:
        due = await ask(ctx, lambda s: (s.next_deadline(polls=False), bool(bridge.board and bridge.board.queue)),
                        changes=False)
        deadline, queued = due
        if deadline is None and not queued:
            return
        wait = 0.01 if deadline is None else max(0.005, (deadline - clock()) / 1000 + 0.005)
        await asyncio.sleep(min(wait, 0.5))


def _move_steps_here(text: str, bridge: Any, session: Any) -> list[tuple[str, str]]:
    """:func:`move_steps` on the bridge's simulated board (what stands where now)."""
    return move_steps(text, session, board=bridge.board)


def move_steps(text: str, session: Any, board: Any = None) -> list[tuple[str, str]]:
    """The events (``("lift" | "place", SQUARE)``, in order) of a ``move`` event ``FROM-TO``
    (or ``FROMTO``) on the simulated board: those of the legal action taking the piece on FROM
    to TO, as a player makes them -- a victim lifted first, the mover lifted and set down, a
    castling rook after its king, an en passant victim, the squares filled by a promotion
    (whose choice stays to be made). A piece already off the board (the victim lifted first,
    as the computer's capture is carried out) is not lifted again. With no such legal action,
    the piece is moved as asked (a victim on TO lifted first) and the board shows what is
    wrong. ``board``: the simulated board (what stands where now), else the sensors' view."""
    g = session.game
    geo = g.geometry
    m = re.fullmatch(r"([a-p][0-9]{1,2})-?([a-p][0-9]{1,2})", text.strip().lower())
    if m is None:
        raise ValueError(f"move {text!r}: give FROM-TO, e.g. e2-e4")
    a, b = geo.parse(m.group(1)), geo.parse(m.group(2))
    name = geo.name

    def on(sq: int) -> bool:
        return bool(board.occupied(sq)) if board is not None else bool(session.occupancy >> sq & 1)

    def lift(squares) -> list[tuple[str, str]]:
        return [("lift", name(s)) for s in squares if on(s)]
    fits = [x for x in (g.legal_actions() if session.outcome() is None else [])
            if a in x.lifts and a not in x.places and b in x.places]
    if not fits:
        return lift([b]) + lift([a]) + [("place", name(b))]
    x = fits[0]          # promotions to different pieces look the same on the board
    movers = x.lifts - x.places
    if len(movers) == 2 and len(x.places) == 2:          # castling: the king, then the rook
        rook = next(iter(movers - {a}))
        rto = next(iter(x.places - {b}))
        return lift([a]) + [("place", name(b))] + lift([rook]) + [("place", name(rto))]
    return (lift(sorted(x.lifts - {a})) + lift([a]) + [("place", name(b))]
            + [("place", name(s)) for s in sorted(x.places - {b} - x.lifts) if not on(s)])
