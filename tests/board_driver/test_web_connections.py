"""The page's connections (docs/web.md, *Connections*): idle or slow clients never take the
board down. In-process, over real sockets: a small aiohttp application behind the
ConnectionGuard with small limits and short timeouts -- idle connections closed to let new
ones in, a client over its limit and the page over its total answered 503, a half-sent header
and a stalled body answered 408, idle connections closed, a WebSocket kept, each kind of
refusal logged once a minute at most. Then `fairyboard serve --board sim --web` under the
service unit's own open-file limit: 1,100 idle and half-sent sockets while moves are made,
every move journaled, the page answering, the service running, a handful of log lines."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import resource
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from aiohttp import WSMsgType, web
from webtools import CLI, Server, until

from board_driver.web.app import CONNECTIONS, timed
from board_driver.web.limits import RESERVE_FDS, ConnectionGuard, RefusalLog, WebLimits, room_for

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "board_driver" / "service_files" / "systemd" / "fairyboard.service"


# -- the guard in process ------------------------------------------------------------------------------

class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class Page:
    """A small application behind a ConnectionGuard, on a loop of its own thread."""

    def __init__(self, limits: WebLimits, files=(None, 0)):
        self.said = Lines()
        logger = logging.getLogger(f"test.page.{id(self)}")
        logger.propagate = False
        logger.addHandler(self.said)
        self.guard = ConnectionGuard(limits, refusals=RefusalLog(logger), files=files)
        app = web.Application(middlewares=[timed])
        app[CONNECTIONS] = self.guard
        app.router.add_get("/hello", self.hello)
        app.router.add_post("/echo", self.echo)
        app.router.add_get("/ws", self.ws)
        self.runner = web.AppRunner(app, access_log=None, keepalive_timeout=limits.keepalive_timeout)
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(10)

    async def hello(self, request):
        return web.Response(text="hi")

    async def echo(self, request):
        return web.Response(body=await request.read())

    async def ws(self, request):
        sock = web.WebSocketResponse()
        await sock.prepare(request)
        async for msg in sock:
            if msg.type == WSMsgType.TEXT:
                await sock.send_str("echo " + msg.data)
        return sock

    def _run(self, ready) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.runner.setup())
        self.port = self.loop.run_until_complete(self.guard.listen(self.runner.server, "127.0.0.1", 0))
        ready.set()
        self.loop.run_forever()
        self.guard.close()
        self.loop.run_until_complete(self.runner.cleanup())
        self.loop.close()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def open_count(self) -> int:
        return asyncio.run_coroutine_threadsafe(self._count(), self.loop).result(10)

    async def _count(self) -> int:
        return self.guard.open_count

    def connect(self, source: str = "127.0.0.1", send: bytes = b"") -> socket.socket:
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10, source_address=(source, 0))
        if send:
            s.sendall(send)
        return s

    def get(self, source: str = "127.0.0.1") -> bytes:
        with self.connect(source, b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n") as s:
            return read_answer(s)


def read_answer(s: socket.socket, timeout: float = 10) -> bytes:
    """What the server sends until it closes or one whole answer came (b"" when it just closes)."""
    s.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        m = re.search(rb"Content-Length: (\d+)", head, re.I)
        if sep and m and len(body) >= int(m.group(1)):
            return data


def closed(s: socket.socket, timeout: float = 10) -> bytes | None:
    """What the server sent before closing ``s`` within ``timeout``; None if it stays open."""
    s.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk
    except ConnectionResetError:
        return data
    except socket.timeout:
        return None


def body_of(answer: bytes) -> dict:
    return json.loads(answer.partition(b"\r\n\r\n")[2])


HALF = b"GET /hello HTTP/1.1\r\nHost: localhost\r\nX-Slow: "     # a header never finished


@pytest.fixture
def page():
    pages = []

    def make(**kw) -> Page:
        p = Page(WebLimits(**kw))
        pages.append(p)
        return p
    yield make
    for p in pages:
        p.stop()


def test_an_idle_connection_makes_room_and_a_busy_client_over_its_limit_gets_503(page):
    p = page(connections=50, per_client=3, header_timeout=30, keepalive_timeout=30)
    idle = [p.connect() for _ in range(3)]
    until(lambda: p.open_count() == 3, what="three idle connections held")
    assert p.get().endswith(b"hi")                 # the oldest idle one closed to let it in
    assert closed(idle[0]) == b""                  # closed without a word, as nginx closes its idle ones
    assert p.open_count() <= 3
    # a client whose connections are all busy (half-sent headers): the next one is refused
    slow = [p.connect("127.0.0.2", HALF) for _ in range(3)]
    until(lambda: p.open_count() >= 5, what="the half-sent ones held")
    answer = p.get("127.0.0.2")
    assert answer.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 30" in answer
    assert "too many connections from your address (3 at most)" in body_of(answer)["error"]
    assert p.get("127.0.0.3").endswith(b"hi")      # another client is not held up
    assert sum("127.0.0.2" in line for line in p.said.lines) == 1
    for s in idle + slow:
        s.close()


def test_the_page_full_of_busy_connections_answers_503_to_the_next(page):
    p = page(connections=4, per_client=2, header_timeout=30, keepalive_timeout=30)
    slow = [p.connect(f"127.0.0.{2 + i // 2}", HALF) for i in range(4)]
    until(lambda: p.open_count() == 4, what="four half-sent connections held")
    answer = p.get("127.0.0.9")
    assert answer.startswith(b"HTTP/1.1 503 ")
    assert "the board's page has too many connections (4 at most)" in body_of(answer)["error"]
    slow[0].close()
    until(lambda: p.get("127.0.0.9").endswith(b"hi"), what="a place freed by a client that left")
    for s in slow:
        s.close()


def test_slow_headers_and_bodies_get_408_and_idle_connections_are_closed(page):
    p = page(connections=50, per_client=10, header_timeout=0.4, keepalive_timeout=0.8)
    half = p.connect(send=HALF)
    silent = p.connect()
    body = p.connect(send=b"POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n0123456789")
    kept = p.connect(send=b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert read_answer(kept).endswith(b"hi")
    t0 = time.monotonic()
    for s in (half, body):
        answer = closed(s)
        assert answer is not None and answer.startswith(b"HTTP/1.1 408 "), answer
    assert closed(silent) == b""                   # sent nothing: closed without an answer
    assert closed(kept) == b""                     # keep-alive: closed once idle that long
    assert p.open_count() == 0
    assert time.monotonic() - t0 < 10
    kinds = [line for line in p.said.lines if "header" in line or "body" in line]
    assert len(kinds) == 2, p.said.lines


def test_a_websocket_is_one_request_for_its_whole_life(page):
    p = page(connections=50, per_client=10, header_timeout=0.2, keepalive_timeout=0.2)

    async def talk():
        import aiohttp
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(f"http://127.0.0.1:{p.port}/ws", autoping=True) as ws:
                idle_conn = socket.create_connection(("127.0.0.1", p.port))
                # the idle one next to it is closed after its timeout; the socket stays
                await asyncio.get_running_loop().run_in_executor(None, closed, idle_conn)
                await ws.send_str("still here")
                return (await ws.receive(timeout=5)).data
    assert asyncio.run(talk()) == "echo still here"


def test_each_kind_of_refusal_is_one_line_a_minute_at_most():
    now = [0.0]
    said = Lines()
    logger = logging.getLogger("test.refusals")
    logger.propagate = False
    logger.addHandler(said)
    log = RefusalLog(logger, clock=lambda: now[0])
    for i in range(1000):
        now[0] = i * 0.05
        log.note("per_client", f"refused {i}")
        log.note("total", f"full {i}")
        log.flush()
    assert said.lines[:2] == ["refused 0 (more like this are counted and said at most once a minute)",
                              "full 0 (more like this are counted and said at most once a minute)"]
    assert len(said.lines) == 2                    # 50 s of refusals: the counts wait for the minute
    now[0] = 61.0
    log.flush()
    assert said.lines[2:] == ["999 more like this in the last 61 s; the last: refused 999",
                              "999 more like this in the last 61 s; the last: full 999"]
    log.flush()
    assert len(said.lines) == 4


def test_the_connections_are_cut_down_to_what_the_open_file_limit_leaves():
    assert room_for(WebLimits(), (1024, 40)) == 256
    assert room_for(WebLimits(), (300, 40)) == 300 - 40 - RESERVE_FDS
    assert room_for(WebLimits(), (60, 40)) == 8    # still usable, however low the limit
    assert room_for(WebLimits(connections=5000), (None, 40)) == 5000
    guard = ConnectionGuard(WebLimits(per_client=32), files=(100, 30))
    assert guard.total == 8 and guard.per_client == 8


def test_the_limits_are_the_profiles_web_limits_each_checked():
    from board_driver.errors import ConfigError
    from board_driver.web.service import WebConfig
    assert WebConfig.from_dict({}, "b.yaml").limits == WebLimits(256, 32, 20.0, 75.0)
    cfg = WebConfig.from_dict({"limits": {"per_client": 8, "header_timeout": 1.5}}, "b.yaml")
    assert cfg.limits == WebLimits(connections=256, per_client=8, header_timeout=1.5, keepalive_timeout=75.0)
    for bad, words in (({"conections": 5}, "web.limits.conections: unknown key"),
                       ({"per_client": 0}, "web.limits.per_client: 0: must be a whole number"),
                       ({"connections": "many"}, "web.limits.connections: 'many'"),
                       ({"keepalive_timeout": -1}, "web.limits.keepalive_timeout: -1: must be seconds"),
                       ([1, 2], "web.limits: [1, 2]: must be a mapping")):
        with pytest.raises(ConfigError, match=re.escape(words)):
            WebConfig.from_dict({"limits": bad}, "b.yaml")


# -- the service under its unit's limit -----------------------------------------------------------------

def unit_nofile() -> int:
    m = re.search(r"^LimitNOFILE=(\d+)$", UNIT.read_text(encoding="utf-8"), re.M)
    assert m, f"{UNIT} sets no LimitNOFILE"
    return int(m.group(1))


def test_the_unit_limits_the_open_files_well_over_the_pages_connections():
    assert unit_nofile() >= WebLimits().connections + RESERVE_FDS + 64


@pytest.mark.slow
def test_1100_idle_sockets_under_the_units_limits_leave_the_game_journaling_every_move(tmp_path):
    nofile = unit_nofile()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1300:
        if hard != resource.RLIM_INFINITY and hard < 1300:
            pytest.skip(f"this test needs 1,300 open files (the hard limit is {hard})")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1300, hard))
    board = tmp_path / "board.yaml"
    sim = (ROOT / "board_driver" / "configs" / "boards" / "sim.yaml").read_text(encoding="utf-8")
    # the shipped limits, with short timeouts so that the test need not wait 20 s
    board.write_text(sim + "web:\n  limits: {header_timeout: 1.5, keepalive_timeout: 3}\n", encoding="utf-8")
    data = tmp_path / "data"
    env = dict(os.environ, FAIRYBOARD_DATA=str(data), PYTHONUNBUFFERED="1")
    env.pop("XDG_DATA_HOME", None)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(CLI + ["serve", "--board", str(board), "--web", "127.0.0.1:0", "--new",
                                       "--variant", "orthodox"], stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                env=env, preexec_fn=limit)
    socks: list[socket.socket] = []
    try:
        m = until(lambda: re.search(r"the page is at (http://\S+)", out.read_text()) or proc.poll() is not None,
                  timeout=60, what="the page up")
        assert proc.poll() is None, out.read_text() + err.read_text()
        s = Server.__new__(Server)
        s.url = m.group(1).rstrip("/")
        s.wait_state(timeout=30)
        port = int(s.url.rsplit(":", 1)[1])

        def flood(n: int, source: str, send: bytes = b"") -> None:
            for _ in range(n):
                c = socket.socket()
                c.settimeout(5)
                c.bind((source, 0))
                try:
                    c.connect(("127.0.0.1", port))
                    if send:
                        c.sendall(send)
                except OSError:
                    pass            # a full backlog: the server is not keeping up
                socks.append(c)

        moves = [("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6")]
        flood(30, "127.0.0.2", HALF)
        flood(30, "127.0.0.3", HALF)
        for i, (a, b) in enumerate(moves):
            flood(260, "127.0.0.1")                   # idle: sent nothing
            assert s.move(a, b)["ok"], (a, b)         # from the same address, meanwhile
            assert proc.poll() is None, err.read_text()
        assert len(socks) == 1100
        games = until(lambda: list((data / "games").glob("*.jsonl")), what="the game's journal")
        pushes = [json.loads(line)["action"] for line in games[0].read_text().splitlines()
                  if json.loads(line)["type"] == "push"]
        assert pushes == ["e2e4", "e7e5", "g1f3", "b8c6"]
        # the half-sent ones answered 408 once their header is late, the idle ones closed
        for c in socks[:60]:
            answer = closed(c, 20)
            assert answer is not None and answer.startswith(b"HTTP/1.1 408 "), answer
        for c in socks[60:]:
            assert closed(c, 20) is not None
        assert s.wait_state()["moves"] == ["e2e4", "e7e5", "g1f3", "b8c6"]     # a fresh client
        assert proc.poll() is None
    finally:
        for c in socks:
            c.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    log = err.read_text()
    assert proc.returncode == 0, out.read_text() + log
    assert "Traceback" not in log and "Too many open files" not in log
    page_lines = [line for line in log.splitlines() if "the page" in line]
    assert 1 <= len(page_lines) <= 5, log

