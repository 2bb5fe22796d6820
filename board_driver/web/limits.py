"""The page's connections: how many, from whom, for how long (docs/web.md, *Connections*).

Idle or slow clients must never take the board down: the page runs in the service's process,
beside the board loop and its journal, under one limit of open files. So, as nginx does by
default for slow clients:

* at most ``connections`` open connections in total and ``per_client`` from one client (its
  IPv4 address; an IPv6 address's /64). A new connection over a limit first closes the
  oldest *idle* connection in that limit's scope (one that has sent nothing since it opened
  or since its last answer: nginx's reusable connections); with none idle it is answered
  **503** (``Retry-After``) and closed at once, before anything is read from it;
* ``header_timeout``: a request's header must arrive whole within it (counted from its first
  byte), and its body may pause no longer than it; else **408** and the connection is closed.
  A new connection that sends nothing within it is closed without an answer;
* ``keepalive_timeout``: a connection idle between requests that long is closed;
* ``connections`` is cut down at the start to what the open-file limit leaves after the files
  the process holds and :data:`RESERVE_FDS` more (the journal, the game's files, the engine's
  pipes), so that sockets never take the files the game needs;
* each kind of refusal (and the system refusing ``accept()`` for want of files) is logged as one
  line at once, then counted and said once a minute at most.

The limits (:class:`~board_driver.connections.WebLimits`), who a client is, the open-file
arithmetic and the refusal log are in :mod:`board_driver.connections`, shared with the
recorder's page. :class:`ConnectionGuard` sits between the listening socket and aiohttp's
request handler: its protocol admits (or refuses) a connection before aiohttp sees it,
forwards everything to the handler, and a sweep every few seconds closes what has run out of
time. The middleware in :mod:`.app` tells it when a request is being handled (a WebSocket
counts as one for its whole life).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any, Callable, cast

from board_driver.connections import RESERVE_FDS, RefusalLog, WebLimits, client_key, log, open_files, room_for

_MISSING = object()


def _answer(status: int, reason: str, error: str, retry_after: int | None = None) -> bytes:
    body = json.dumps({"error": error}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n")
    if retry_after is not None:
        head += f"Retry-After: {retry_after}\r\n"
    return head.encode() + b"\r\n" + body


class Connection:
    """One admitted connection: aiohttp's handler behind it, and where it stands."""

    __slots__ = ("guard", "transport", "key", "inner", "since", "got_bytes", "busy", "served", "last_in",
                 "request", "closing")

    def __init__(self, guard: ConnectionGuard, transport: asyncio.Transport, key: str, now: float, inner: Any):
        self.guard = guard
        self.transport = transport
        self.key = key
        self.inner = inner                  # aiohttp's RequestHandler
        self.since = now                    # when the present wait (header, or idle) began
        self.got_bytes = False              # a request's first bytes came, its header is not whole yet
        self.busy = 0                       # requests being handled (the middleware's)
        self.served = 0                     # requests handled: after the first, an idle wait is keep-alive
        self.last_in = now
        self.request: Any = None            # the request being handled (its body's pauses are timed)
        self.closing = False

    # -- what the protocol and the middleware tell it ------------------------------------------------
    def data(self, now: float) -> None:
        self.last_in = now
        if not self.busy and not self.got_bytes:
            self.got_bytes = True
            self.since = now
            self.guard.busy_now(self)

    def begin(self, request: Any) -> None:
        self.busy += 1
        self.got_bytes = False
        self.request = request
        self.guard.busy_now(self)

    def end(self) -> None:
        self.busy = max(0, self.busy - 1)
        self.served += 1
        self.request = None
        if not self.busy:
            self.since = self.guard.now()
            self.guard.idle_now(self)

    def wait_again(self, now: float) -> None:
        self.since = now

    def mark_closing(self) -> None:
        self.closing = True

    # -- what the guard asks ------------------------------------------------------------------------
    def waiting(self) -> bool:
        """Whether aiohttp's handler waits for the next request (its answer is all sent)."""
        waiter: Any = getattr(self.inner, "_waiter", _MISSING)
        if waiter is not _MISSING:
            return waiter is not None and not waiter.done()
        transport = self.transport
        get = getattr(transport, "get_write_buffer_size", None)
        return callable(get) and get() == 0 and not getattr(self.inner, "_messages", None)

    def idle(self) -> bool:
        """Nothing sent since it opened, or since its last answer (which is all sent)."""
        if self.busy or self.got_bytes:
            return False
        return self.served == 0 or self.waiting()

    def body_stalled(self, now: float, limit: float) -> bool:
        content = getattr(self.request, "content", None)
        return (content is not None and not content.is_eof() and now - self.last_in > limit)


class _Guarded(asyncio.Protocol):
    """The protocol of one accepted socket: admitted (or refused) by the guard, then aiohttp's."""

    __slots__ = ("guard", "conn")

    def __init__(self, guard: ConnectionGuard):
        self.guard = guard
        self.conn: Connection | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.conn = self.guard.admit(transport)

    def data_received(self, data: bytes) -> None:
        conn = self.conn
        if conn is not None and not conn.closing:
            conn.data(self.guard.now())
            conn.inner.data_received(data)

    def eof_received(self) -> bool | None:
        conn = self.conn
        return conn.inner.eof_received() if conn is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            self.guard.release(conn)
            conn.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.conn is not None:
            self.conn.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.conn is not None:
            self.conn.inner.resume_writing()


class ConnectionGuard:
    """Admits, times and closes the page's connections (see the module's text)."""

    def __init__(self, limits: WebLimits = WebLimits(), *, refusals: RefusalLog | None = None,
                 files: tuple[int | None, int] | None = None):
        self.limits = limits
        self.refusals = refusals if refusals is not None else RefusalLog()
        self.files = files if files is not None else open_files()     # (the limit, open) when made
        self.total = room_for(limits, self.files)
        self.per_client = min(limits.per_client, self.total)
        self.cut = self.total < limits.connections      # the open-file limit cut it down
        self._open: dict[Connection, None] = {}                 # admitted, oldest first
        self._by_key: dict[str, dict[Connection, None]] = {}
        self._idle: dict[Connection, None] = {}                 # nothing sent since opening or the last answer
        self._idle_by_key: dict[str, dict[Connection, None]] = {}
        self._by_inner: dict[int, Connection] = {}
        self._factory: Callable[[], Any] | None = None
        self._server: asyncio.AbstractServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.tick = min(5.0, max(0.05, min(limits.header_timeout, limits.keepalive_timeout) / 4))

    # -- serving ----------------------------------------------------------------------------------------
    async def listen(self, factory: Callable[[], Any], host: str, port: int) -> int:
        """Listen on ``host:port`` with aiohttp's handler ``factory`` behind the guard; returns
        the port (the real one when 0 was asked for)."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._factory = factory
        loop.set_exception_handler(self._loop_exception)
        if self.cut:
            limit, now = self.files
            log.warning("the page takes at most %d connections at once (web.limits.connections is %d): "
                        "the open-file limit is %s with %d files open (LimitNOFILE in the service's unit)",
                        self.total, self.limits.connections, limit, now)
        self._server = await loop.create_server(lambda: _Guarded(self), host or None, port, backlog=128,
                                                reuse_address=True)
        self._timer = loop.call_later(self.tick, self._sweep)
        for sock in self._server.sockets:
            return int(sock.getsockname()[1])
        return port

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._server is not None:
            self._server.close()
        self.refusals.flush(final=True)

    def now(self) -> float:
        return self._loop.time() if self._loop is not None else time.monotonic()

    def of(self, inner: Any) -> Connection | None:
        """The connection whose aiohttp handler is ``inner`` (a request's ``protocol``)."""
        return self._by_inner.get(id(inner))

    @property
    def open_count(self) -> int:
        return len(self._open)

    # -- admission -----------------------------------------------------------------------------------
    def admit(self, transport: asyncio.BaseTransport) -> Connection | None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else None
        key = client_key(address)
        mine = self._by_key.get(key)
        if mine is not None and len(mine) >= self.per_client:
            if not self._evict(self._idle_by_key.get(key), "per_client",
                               f"the page: {len(mine)} connections open from {key} (web.limits.per_client): "
                               f"its oldest idle one closed to let a new one in"):
                self._refuse(transport, "per_client",
                             f"the page refused a connection from {key}: {len(mine)} open from that client "
                             f"already (web.limits.per_client), none of them idle",
                             f"too many connections from your address ({self.per_client} at most): "
                             f"close some, or try again shortly")
                return None
        if len(self._open) >= self.total:
            if not self._evict(self._idle, "total",
                               f"the page: {len(self._open)} connections open (web.limits.connections): the oldest "
                               f"idle one closed to let one from {key} in"):
                self._refuse(transport, "total",
                             f"the page refused a connection from {key}: {len(self._open)} open already "
                             f"(web.limits.connections), none of them idle",
                             f"the board's page has too many connections ({self.total} at most): "
                             f"try again shortly")
                return None
        assert self._factory is not None
        inner = self._factory()
        conn = Connection(self, cast(asyncio.Transport, transport), key, self.now(), inner)
        self._open[conn] = None
        self._by_key.setdefault(key, {})[conn] = None
        self._by_inner[id(inner)] = conn
        self.idle_now(conn)
        inner.connection_made(transport)
        return conn

    def _refuse(self, transport: asyncio.BaseTransport, kind: str, line: str, error: str) -> None:
        self.refusals.note(kind, line)
        retry = max(1, math.ceil(min(self.limits.header_timeout, self.limits.keepalive_timeout)))
        try:
            cast(asyncio.Transport, transport).write(_answer(503, "Service Unavailable", error, retry))
        finally:
            transport.close()

    def _evict(self, idle: dict[Connection, None] | None, kind: str, line: str) -> bool:
        """Close the oldest idle connection of ``idle`` whose answer is all sent; whether one was."""
        if not idle:
            return False
        for conn in list(idle):
            if conn.idle():
                self.refusals.note(kind + " idle closed", line)
                self._close(conn)
                return True
        return False

    # -- what the connections tell --------------------------------------------------------------------
    def idle_now(self, conn: Connection) -> None:
        if conn.closing:
            return
        self._idle.pop(conn, None)
        self._idle[conn] = None
        group = self._idle_by_key.setdefault(conn.key, {})
        group.pop(conn, None)
        group[conn] = None

    def busy_now(self, conn: Connection) -> None:
        self._idle.pop(conn, None)
        group = self._idle_by_key.get(conn.key)
        if group is not None:
            group.pop(conn, None)

    def release(self, conn: Connection) -> None:
        """The connection is gone (its socket closed): a request still handled on it (a
        WebSocket's) ends later and must not count it again."""
        conn.mark_closing()
        self._forget(conn)
        self._by_inner.pop(id(conn.inner), None)

    def _forget(self, conn: Connection) -> None:
        self.busy_now(conn)
        self._open.pop(conn, None)
        mine = self._by_key.get(conn.key)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self._by_key[conn.key]
                self._idle_by_key.pop(conn.key, None)

    def _close(self, conn: Connection, answer: bytes | None = None) -> None:
        """Close at once; it no longer counts from now on (its socket goes at the loop's next turn)."""
        conn.mark_closing()
        self._forget(conn)
        transport = conn.transport
        if answer is not None and not transport.is_closing():
            transport.write(answer)
        transport.close()

    # -- the clock --------------------------------------------------------------------------------------
    def _sweep(self) -> None:
        loop = self._loop
        if loop is None:
            return
        now = loop.time()
        lim = self.limits
        try:
            for conn in list(self._open):
                if conn.busy:
                    if conn.body_stalled(now, lim.header_timeout):
                        self.refusals.note("body timeout", f"the page closed a connection from {conn.key}: its "
                                           f"request's body paused over {lim.header_timeout:g} s "
                                           f"(web.limits.header_timeout)")
                        self._close(conn, _answer(408, "Request Timeout", "the request's body stopped coming"))
                    continue
                if conn.got_bytes:
                    if now - conn.since > lim.header_timeout:
                        self.refusals.note("header timeout", f"the page closed a connection from {conn.key}: "
                                           f"its request's header did not arrive whole within "
                                           f"{lim.header_timeout:g} s (web.limits.header_timeout)")
                        self._close(conn, _answer(408, "Request Timeout",
                                                  f"the request's header did not arrive within "
                                                  f"{lim.header_timeout:g} s"))
                elif not conn.idle():
                    conn.wait_again(now)        # its answer is still going out: the idle wait starts after
                elif now - conn.since > (lim.keepalive_timeout if conn.served else lim.header_timeout):
                    self._close(conn)           # idle: closed without a word, as nginx does
            self.refusals.flush()
        finally:
            self._timer = loop.call_later(self.tick, self._sweep)

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if message.startswith("socket.accept() out of system resource"):
            exc = context.get("exception")
            self.refusals.note("accept", f"the page cannot accept connections for now: "
                               f"{getattr(exc, 'strerror', None) or exc} (asyncio tries again each second)")
            return
        loop.default_exception_handler(context)


__all__ = ["ConnectionGuard", "RefusalLog", "WebLimits", "RESERVE_FDS", "open_files", "room_for"]
