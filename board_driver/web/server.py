"""The page's server: the aiohttp application (:func:`board_driver.web.app.init_app`) served on
a thread and an asyncio loop of its own.

Every route that needs the game asks the board loop through the bridge (a job on the loop's
queue); reads of the game's state answer the latest snapshot, which the bridge also pushes to
every open WebSocket. docs/web.md is the API's reference.
"""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web

from board_driver.errors import BoardDriverError
from board_driver.web.app import init_app
from board_driver.web.context import AppContext
from board_driver.web.limits import ConnectionGuard, WebLimits


class WebServer:
    """The page's application for one board loop, run on a thread of its own; its connections
    admitted, timed and closed by a :class:`~board_driver.web.limits.ConnectionGuard`."""

    def __init__(self, ctx: AppContext, *, host: str = "127.0.0.1", port: int = 8080,
                 limits: WebLimits = WebLimits()):
        self.ctx = ctx
        self.host = host
        self.port = port
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.connections = ConnectionGuard(limits)
        self.app = init_app(ctx, self.connections)

    def start(self, timeout: float = 10.0) -> WebServer:
        """Serve on a thread; returns once listening (``port`` is then the real port)."""
        self.thread = threading.Thread(target=self._run, name="fairyboard-web", daemon=True)
        self.thread.start()
        self._ready.wait(timeout)
        if self._error is not None:
            raise BoardDriverError(f"--web {self.host}:{self.port}: cannot listen: {self._error}") from None
        self.ctx.bridge.add_listener(self.ctx.sockets.push_state)
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        self.ctx.sockets.serve_on(loop)
        asyncio.set_event_loop(loop)
        runner = web.AppRunner(self.app, access_log=None,
                               keepalive_timeout=self.connections.limits.keepalive_timeout)
        try:
            loop.run_until_complete(runner.setup())
            # the guard listens, and hands aiohttp's handler the connections it admits
            handler = runner.server
            assert handler is not None      # made by setup()
            self.port = loop.run_until_complete(self.connections.listen(handler, self.host, self.port))
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self.connections.close()
            loop.run_until_complete(runner.cleanup())
            loop.close()

    def stop(self) -> None:
        ctx = self.ctx
        ctx.bridge.remove_listener(ctx.sockets.push_state)
        ctx.analyses.stop()
        ctx.bridge.live.close()
        if self.loop is not None and self.loop.is_running():
            fut = asyncio.run_coroutine_threadsafe(ctx.sockets.close_all(), self.loop)
            try:
                fut.result(2)
            except Exception:
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
        if self.thread is not None:
            self.thread.join(5)

    @property
    def url(self) -> str:
        host = "localhost" if self.host in ("127.0.0.1", "::1", "localhost") else self.host
        return f"http://{host}:{self.port}/"
