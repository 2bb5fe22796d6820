"""What the page's route handlers depend on, as one typed object (:class:`AppContext`, under
the application key :data:`CTX`), and the few steps many of them take: a job asked of the
board loop (:func:`ask`), the token check (:func:`require`), the state answered.

Everything here is given to the context when it is made (web/service.py builds it); nothing
is wired into it afterwards. What changes while the server runs lives in small objects of its
own with methods (:class:`Sockets`, :class:`ToolDesk`, the catalog's cache).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from aiohttp import web

from board_driver.journal import GameStore
from board_driver.referee.commands import HandOver
from board_driver.web.analyses import GameAnalyses
from board_driver.web.api import ApiError, token_of
from board_driver.web.auth import LoginLimiter
from board_driver.web.bridge import WebBridge
from board_driver.web.catalog import Catalog
from board_driver.web.hosts import HostNames
from board_driver.web.tools import WebPrompter, WizardState


class BoardTools(Protocol):
    """The Board tab's tools (web/tools.py: the real board's, or the simulated one's)."""

    def stopping(self) -> bool: ...

    def calibration_refusal(self) -> str | None: ...

    def selftest(self, session: Any, seconds: float, leds: bool) -> dict: ...

    def plan(self, squares: list[str], out: str | None = None) -> Any: ...

    def calibrate(self, session: Any, prompter: WebPrompter, plan: Any, *, leds: bool, settle: float,
                  timeout: float) -> None: ...


class RemoteLobby(Protocol):
    """The remote games' part of the page (remote/invitations.py's ``Invitations``)."""

    @property
    def broker(self) -> Any: ...

    def start(self, *, announce: bool = False, on_change: Callable[[], None] | None = None) -> None: ...

    def status(self) -> dict | None: ...

    def boards(self) -> dict: ...

    def accept(self, peer: str) -> dict: ...

    def decline(self, peer: str) -> dict: ...

    def cancel(self) -> dict: ...


class Sockets:
    """The open WebSockets and the server's asyncio loop: a message to every page, sent from
    any thread."""

    def __init__(self) -> None:
        self._open: set[web.WebSocketResponse] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def serve_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop the server runs (its thread's): messages are sent on it."""
        self._loop = loop

    def add(self, ws: web.WebSocketResponse) -> None:
        self._open.add(ws)

    def discard(self, ws: web.WebSocketResponse) -> None:
        self._open.discard(ws)

    def push_state(self, snap: dict) -> None:
        """A new snapshot (called in the board loop's thread): to every open socket."""
        self.send({"type": "state", "state": snap})

    def send(self, message: dict) -> None:
        """Send a message to every open socket (from any thread)."""
        loop = self._loop
        if loop is None or not self._open:
            return
        text = json.dumps(message, separators=(",", ":"))

        async def send() -> None:
            for ws in list(self._open):
                if not ws.closed:
                    try:
                        await ws.send_str(text)
                    except (ConnectionError, RuntimeError):
                        self._open.discard(ws)
        try:
            asyncio.run_coroutine_threadsafe(send(), loop)
        except RuntimeError:
            pass

    async def close_all(self) -> None:
        for ws in list(self._open):
            await ws.close()


def _idle_calibration() -> dict[str, Any]:
    return {"state": "idle", "question": None, "squares": [], "lines": [], "report": [], "written": None,
            "ok": None, "error": None, "seq": 0}


class ToolDesk:
    """The Board tab's tools (None: a server with no board to test) and what they did last:
    the calibration begun last and the last selftest's findings."""

    def __init__(self, tools: BoardTools | None = None):
        self.tools = tools
        self._calibration: WebPrompter | None = None
        self._selftest: dict | None = None

    def need(self) -> BoardTools:
        if self.tools is None:
            raise ApiError(409, "this server has no board to test")
        return self.tools

    @property
    def calibration(self) -> WebPrompter | None:
        """The prompter of the calibration begun last."""
        return self._calibration

    def calibrating(self) -> bool:
        c = self._calibration
        return c is not None and c.state is WizardState.RUNNING

    def begin(self, prompter: WebPrompter) -> None:
        self._calibration = prompter

    @property
    def last_selftest(self) -> dict | None:
        return self._selftest

    def selftested(self, findings: dict) -> None:
        self._selftest = findings

    def calibration_status(self) -> dict:
        refusal = self.tools.calibration_refusal() if self.tools is not None else "this server has no board"
        out = _idle_calibration() if self._calibration is None else self._calibration.status()
        out["refused"] = refusal
        return out


@dataclass(frozen=True)
class AppContext:
    """What the routes read: the bridge to the board loop, the saved games, the page's sockets,
    and one object per feature that keeps state of its own."""

    bridge: WebBridge
    store: GameStore
    hosts: HostNames                        # the Host names this board answers to
    sockets: Sockets
    analyses: GameAnalyses                  # saved games judged for the evaluation graph
    logins: LoginLimiter                    # wrong passwords: growing delays per client and in total
    desk: ToolDesk                          # the selftest and the calibration (web/tools.py)
    catalog: Catalog                        # the variants and computer players offered
    static: Path                            # the built page
    hardware: Callable[[], dict] | None = None      # () -> dict: the board's devices and link health
    remote: RemoteLobby | None = None       # boards online and invitations (remote/invitations.py)


CTX = web.AppKey("fairyboard", AppContext)


async def ask(ctx: AppContext, fn: Callable[[Any], Any], timeout: float = 10.0, *, changes: bool = True) -> Any:
    """``fn(session)`` run by the board loop (:meth:`WebBridge.call`); 409 while a calibration
    holds the loop, 503 when the loop does not answer in time."""
    _refuse_while_calibrating(ctx)
    return await _answer(ctx.bridge.call(fn, changes=changes), timeout)


async def hand_over(ctx: AppContext, cmd: HandOver, timeout: float = 10.0) -> Any:
    """``cmd`` (a new game, with its ``reply`` future) given to the game host through the board
    loop's queue (:meth:`WebBridge.hand_over`); its answer awaited, as :func:`ask`'s."""
    _refuse_while_calibrating(ctx)
    return await _answer(ctx.bridge.hand_over(cmd), timeout)


def _refuse_while_calibrating(ctx: AppContext) -> None:
    if ctx.desk.calibrating():
        raise ApiError(409, "the board is being calibrated: the game waits until the calibration ends "
                            "or is stopped (GET /api/calibrate)")


async def _answer(fut: concurrent.futures.Future, timeout: float) -> Any:
    try:
        return await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
    except asyncio.TimeoutError:
        raise ApiError(503, "the board loop did not answer in time") from None


async def fresh(ctx: AppContext) -> dict:
    """A snapshot published now (after a change the answer carries)."""
    bridge = ctx.bridge
    return await ask(ctx, lambda s: bridge.publish(s))


def authorized(ctx: AppContext, request: web.Request) -> bool:
    return ctx.bridge.tokens.valid(token_of(request))


def require(ctx: AppContext, request: web.Request) -> None:
    """401 unless the request carries a valid token."""
    if not authorized(ctx, request):
        raise ApiError(401, "this browser is not paired with the board: pair it (POST /api/pair) "
                            "or log in with the board's password", headers={"WWW-Authenticate": "Bearer"})


def state_of(ctx: AppContext, request: web.Request) -> dict:
    """The latest snapshot as this request sees it (paired or not)."""
    snap = ctx.bridge.latest()
    if snap is None:
        raise ApiError(503, "the board is starting")
    return dict(snap, paired=authorized(ctx, request), password=ctx.bridge.password is not None)
