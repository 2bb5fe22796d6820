"""The Board tab: the board's devices (``GET /api/hardware``), the selftest
(``POST /api/hardware/selftest``) and the calibration wizard (``/api/calibrate``, ``start``,
``answer``, ``stop``), run by web/tools.py on the board loop's thread."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from aiohttp import web

from board_driver.web.api import ApiError, json_response, read_body
from board_driver.web.context import CTX, ask, require
from board_driver.web.tools import WebPrompter, WizardState

if TYPE_CHECKING:
    from board_driver.referee.session import Session


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/api/hardware", hardware_info)
    r.add_post("/api/hardware/selftest", selftest)
    r.add_get("/api/calibrate", calibrate_status)
    r.add_post("/api/calibrate/start", calibrate_start)
    r.add_post("/api/calibrate/answer", calibrate_answer)
    r.add_post("/api/calibrate/stop", calibrate_stop)


async def hardware_info(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    if ctx.hardware is None:
        return json_response({"board": None})
    loop = asyncio.get_running_loop()
    info = dict(await loop.run_in_executor(None, ctx.hardware))
    info["selftest"] = ctx.desk.last_selftest
    info["calibration"] = ctx.desk.calibration_status()
    return json_response(info)


async def selftest(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    tools = ctx.desk.need()
    body = await read_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, 'send {"seconds": S, "leds": true}')
    seconds = body.get("seconds", 2)
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0.2 <= seconds <= 10:
        raise ApiError(400, "seconds: how long to watch the sensors, 0.2 to 10")
    leds = body.get("leds", True)
    if not isinstance(leds, bool):
        raise ApiError(400, "leds: true (show the LED test patterns) or false")
    findings = await ask(ctx, lambda s: tools.selftest(s, float(seconds), leds), timeout=seconds + 20)
    findings = dict(findings, ok=not findings["problems"])
    ctx.desk.selftested(findings)
    return json_response(findings)


async def calibrate_status(request: web.Request) -> web.Response:
    return json_response(request.app[CTX].desk.calibration_status())


async def calibrate_start(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    desk = ctx.desk
    tools = desk.need()
    refusal = tools.calibration_refusal()
    if refusal:
        raise ApiError(409, refusal)
    if desk.calibrating():
        raise ApiError(409, "a calibration is already running: answer it, or stop it first")
    body = await read_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, 'send {"squares": ["e4"], "leds": true} ({} walks the whole board)')
    squares = body.get("squares") or []
    if not isinstance(squares, list) or not all(isinstance(q, str) and q.strip() for q in squares) \
            or len(squares) > 400:
        raise ApiError(400, 'squares: a list of square names, e.g. ["e4", "d5"] (none: the whole board)')
    leds = body.get("leds", True)
    if not isinstance(leds, bool):
        raise ApiError(400, "leds: true (light the squares) or false (name them only)")
    opts = {}
    for key, default, low, high in (("settle", 0.3, 0.02, 5.0), ("timeout", 30.0, 1.0, 600.0)):
        v = body.get(key, default)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not low <= v <= high:
            raise ApiError(400, f"{key}: seconds, {low} to {high}")
        opts[key] = float(v)
    loop = asyncio.get_running_loop()
    plan = await loop.run_in_executor(None, tools.plan, [q.strip().lower() for q in squares])
    sockets = ctx.sockets
    prompter = WebPrompter(on_change=lambda status: sockets.send({"type": "calibrate", "calibrate": status}),
                           stopping=tools.stopping)      # a SIGTERM ends the wizard, not waits for it
    await ask(ctx, lambda s: None)             # the loop answers: it is running
    desk.begin(prompter)
    bridge = ctx.bridge

    def run(session: Session) -> None:
        bridge.notice("Calibration started from the page: the game waits until it ends.")
        tools.calibrate(session, prompter, plan, leds=leds, settle=opts["settle"], timeout=opts["timeout"])
    bridge.call(run)
    return json_response({"ok": True, "calibrate": desk.calibration_status()})


async def calibrate_answer(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    body = await read_body(request)
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str) or len(text) > 100:
        raise ApiError(400, 'send {"text": ANSWER} ("" for Enter)')
    c = ctx.desk.calibration
    if c is None or not ctx.desk.calibrating():
        raise ApiError(409, "no calibration is running (POST /api/calibrate/start)")
    if not c.answer(text):
        raise ApiError(409, "the calibration asks nothing now: it waits for the board (see GET /api/calibrate)")
    await asyncio.sleep(0.05)                   # the wizard takes the answer
    return json_response({"ok": True, "calibrate": ctx.desk.calibration_status()})


async def calibrate_stop(request: web.Request) -> web.Response:
    ctx = request.app[CTX]
    require(ctx, request)
    c = ctx.desk.calibration
    if c is None or not ctx.desk.calibrating():
        raise ApiError(409, "no calibration is running")
    c.stop()
    end = time.monotonic() + 5
    while c.state is WizardState.RUNNING and time.monotonic() < end:
        await asyncio.sleep(0.05)
    return json_response({"ok": True, "calibrate": ctx.desk.calibration_status()})
