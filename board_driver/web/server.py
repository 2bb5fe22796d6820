"""The page's server: aiohttp (HTTP and WebSocket) on its own thread and asyncio loop.

Every route that needs the game asks the board loop through :class:`WebBridge` (a job on the
loop's queue); reads of the game's state answer the latest snapshot. docs/web.md is the API's
reference.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import ipaddress
import json
import socket
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from board_driver.errors import BoardDriverError
from board_driver.journal import GameStore, JournalError
from board_driver.referee.session import CommandError, NewGame
from board_driver.sim.board import SimulatorError
from board_driver.web.analyses import SECONDS as ANALYSE_SECONDS
from board_driver.web.analyses import BusyError as AnalysisBusy
from board_driver.web.analyses import GameAnalyses
from board_driver.web.bridge import LoginLimiter, PairingBusy, PairingState, WebBridge, client_key
from engine.errors import EngineError

if TYPE_CHECKING:       # pragma: no cover
    from board_driver.web.tools import WebPrompter

STATIC = Path(__file__).resolve().parent / "static"
_HASHES: dict[tuple[str, int, int], str] = {}


def _content_hash(path: Path) -> str:
    """The first 12 hex digits of the file's SHA-256, as build.mjs writes them into index.html."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _HASHES:
        _HASHES[key] = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return _HASHES[key]
COOKIE = "fairyboard_token"
SIM_KEYS = ("lift", "place", "input", "move")
SETTLE_LIMIT_S = 3.0
MOVE_STEP_MS = 120          # between the lifts and places of a "move" event (well over the debounce)


class ApiError(web.HTTPException):
    """A JSON error answer: ``{"error": message}`` with the given status."""

    def __init__(self, status: int, message: str, headers: dict | None = None):
        self.status_code = status
        super().__init__(text=json.dumps({"error": message}), content_type="application/json", headers=headers)


def _press_side(text: str) -> str | None:
    """``press white`` / ``press black``: the side whose clock the press is to stop, else None."""
    words = text.split()
    if len(words) == 2 and words[0].lower() == "press" and words[1].lower() in ("white", "black"):
        return words[1].lower()
    return None


def _json(data, status: int = 200, **kw) -> web.Response:
    return web.json_response(data, status=status, dumps=partial(json.dumps, separators=(",", ":")), **kw)


def token_of(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return request.cookies.get(COOKIE)


@web.middleware
async def guard(request: web.Request, handler):
    """Cross-site checks on every state-changing request; JSON errors for any failure."""
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        site = request.headers.get("Sec-Fetch-Site")
        origin = request.headers.get("Origin")
        if site == "cross-site" or (origin is not None and urlsplit(origin).netloc != request.host):
            raise ApiError(403, "cross-site request refused: use the board's own page")
        if request.path.startswith("/api/") and request.content_type != "application/json":
            raise ApiError(415, "send the body as JSON (Content-Type: application/json)")
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except (CommandError, SimulatorError, EngineError, BoardDriverError, ValueError) as exc:
        raise ApiError(400, str(exc)) from None


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(address: str | None) -> bool:
    """Whether a peer address is this machine's loopback (127.0.0.0/8, ::1, ::ffff:127.x)."""
    try:
        ip = ipaddress.ip_address((address or "").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def host_name(header: str) -> str | None:
    """The name or address in a ``Host`` header (no port, no brackets, lower case, no final
    dot), or None when it is not a host at all."""
    text = header.strip()
    if not text or any(c in text for c in "/\\@?# \t"):
        return None
    try:
        parts = urlsplit("//" + text)
        name = parts.hostname
        parts.port                                  # a bad port is no host either
    except ValueError:
        return None
    if not name:
        return None
    return name.rstrip(".")


def machine_addresses() -> set[str]:
    """This machine's interface addresses now (IPv4 by ioctl, IPv6 from /proc, both Linux; and
    what its hostname resolves to), as normalised texts."""
    out: set[str] = set()
    try:
        import fcntl
        import struct
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _, name in socket.if_nameindex():
                try:
                    req = struct.pack("256s", name.encode()[:15])
                    out.add(socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, req)[20:24]))   # SIOCGIFADDR
                except OSError:
                    continue
    except (ImportError, OSError):
        pass
    try:
        with open("/proc/net/if_inet6", encoding="ascii") as f:
            for line in f:
                h = line.split()[0]
                out.add(str(ipaddress.IPv6Address(bytes.fromhex(h))))
    except (OSError, ValueError, IndexError):
        pass
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None):
            out.add(str(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])))
    except (OSError, ValueError):
        pass
    return out


def _norm_ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.split("%", 1)[0]))
    except ValueError:
        return None


class HostNames:
    """The names a request's ``Host`` may carry: the board's own (docs/web.md, *Host names*).
    A page of another site resolved to the board's address (DNS rebinding) carries its own
    name and is refused."""

    REFRESH_S = 10.0            # interface addresses read again at most this often (DHCP, Wi-Fi joining late)

    def __init__(self, listen_host: str = "127.0.0.1", extra=()):
        names = set(LOOPBACK_NAMES)
        try:
            hn = socket.gethostname().lower().rstrip(".")
            if hn:
                names |= {hn, hn.split(".")[0] + ".local"}
            fq = socket.getfqdn().lower().rstrip(".")
            if fq:
                names.add(fq)
        except OSError:
            pass
        lh = (listen_host or "").strip("[]").lower()
        if lh:                      # the listen address, as printed (0.0.0.0 reaches only this machine)
            names.add(lh)
        names |= {str(x).strip().strip("[]").lower().rstrip(".") for x in extra if str(x).strip()}
        self.names = {(_norm_ip(n) or n) for n in names}
        self._addresses: set[str] = set()
        self._read_at = float("-inf")

    def addresses(self, fresh: bool = False) -> set[str]:
        now = time.monotonic()
        if fresh and now - self._read_at >= self.REFRESH_S or self._read_at == float("-inf"):
            self._addresses = machine_addresses()
            self._read_at = now
        return self._addresses

    def allows(self, header: str | None, local: str | None = None) -> bool:
        """Whether ``header`` (a request's Host) names this board; ``local`` is the address the
        request arrived at (always one of the board's own)."""
        if header is None:
            return True             # no Host (HTTP/1.0): no browser sends such a request
        name = host_name(header)
        if name is None:
            return False
        ip = _norm_ip(name)
        if ip is None:
            return name in self.names
        if ip in self.names or (local is not None and ip == _norm_ip(local)):
            return True
        return ip in self.addresses() or ip in self.addresses(fresh=True)


class WebServer:
    """The aiohttp application for one board loop, run on a thread of its own."""

    def __init__(self, bridge: WebBridge, store: GameStore, *, host: str = "127.0.0.1", port: int = 8080,
                 variants: list[dict] | None = None, static: Path = STATIC, info: dict | None = None,
                 hardware=None, tools=None, hosts=()):
        self.bridge = bridge
        self.hosts = HostNames(host, hosts)     # the Host names this board answers to
        self.store = store
        self.host = host
        self.port = port
        self.static = Path(static)
        self.variants = variants
        self.info = info or computer_offer()
        self.hardware = hardware          # () -> dict: the board's devices and link health
        self.tools = tools                # the selftest and the calibration (web/tools.py)
        self.remote: Any = None           # boards online and invitations (host/invitations.py), when set
        self.calibration: WebPrompter | None = None     # the prompter of the calibration begun last
        self.last_selftest: dict | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._sockets: set[web.WebSocketResponse] = set()
        self.logins = LoginLimiter()      # wrong passwords: growing delays per client and in total
        # saved games judged for the evaluation graph (one at a time, on a thread of its own)
        self.analyses = GameAnalyses(store, on_change=lambda status: self._send({"type": "analysis",
                                                                                   "analysis": status}))
        self.app = self._make_app()

    # -- life cycle -----------------------------------------------------------------------------
    def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.host_guard, guard], client_max_size=256 * 1024)
        r = app.router
        r.add_get("/", self.index)
        r.add_get("/api/state", self.state)
        r.add_get("/api/ws", self.ws)
        r.add_post("/api/command", self.command)
        r.add_post("/api/new", self.new_game)
        r.add_post("/api/sim", self.sim)
        r.add_get("/api/variants", self.list_variants)
        r.add_get("/api/cost", self.cost)
        r.add_get("/api/schedule", self.schedule)
        r.add_get("/api/hardware", self.hardware_info)
        r.add_post("/api/hardware/selftest", self.selftest)
        r.add_get("/api/calibrate", self.calibrate_status)
        r.add_post("/api/calibrate/start", self.calibrate_start)
        r.add_post("/api/calibrate/answer", self.calibrate_answer)
        r.add_post("/api/calibrate/stop", self.calibrate_stop)
        r.add_get("/api/games", self.games)
        r.add_get("/api/games/{id}", self.game)
        r.add_get("/api/games/{id}/pgn", self.pgn)
        r.add_post("/api/games/{id}/analyse", self.analyse)
        r.add_get("/api/games/{id}/analysis", self.analysis)
        r.add_post("/api/eval", self.live_eval)
        r.add_get("/api/remote/boards", self.remote_boards)
        r.add_post("/api/remote/invite", self.remote_invite)
        r.add_post("/api/remote/accept", self.remote_answer)
        r.add_post("/api/remote/decline", self.remote_answer)
        r.add_post("/api/remote/cancel", self.remote_answer)
        r.add_post("/api/pair", self.pair)
        r.add_get("/api/pair/{id}", self.pair_status)
        r.add_post("/api/login", self.login)
        r.add_get("/api/tokens", self.list_tokens)
        r.add_post("/api/tokens/revoke", self.revoke_tokens)
        r.add_get("/static/{name}", self.static_file)
        return app

    def start(self, timeout: float = 10.0) -> WebServer:
        """Serve on a thread; returns once listening (``port`` is then the real port)."""
        self.thread = threading.Thread(target=self._run, name="fairyboard-web", daemon=True)
        self.thread.start()
        self._ready.wait(timeout)
        if self._error is not None:
            raise BoardDriverError(f"--web {self.host}:{self.port}: cannot listen: {self._error}") from None
        self.bridge.add_listener(self._push)
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._runner = web.AppRunner(self.app, access_log=None)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, self.host, self.port)
            loop.run_until_complete(site.start())
            for address in self._runner.addresses:  # the real port when 0 was asked for
                self.port = address[1]
                break
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

    def stop(self) -> None:
        self.bridge.remove_listener(self._push)
        self.analyses.stop()
        self.bridge.live.close()
        if self.loop is not None and self.loop.is_running():
            async def close_all():
                for ws in list(self._sockets):
                    await ws.close()
            fut = asyncio.run_coroutine_threadsafe(close_all(), self.loop)
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

    @web.middleware
    async def host_guard(self, request: web.Request, handler):
        """Every request names the board itself in ``Host`` (DNS rebinding), else 421."""
        header = request.headers.get("Host")
        sock = request.transport.get_extra_info("sockname") if request.transport is not None else None
        local = sock[0] if isinstance(sock, tuple) and sock else None
        if not self.hosts.allows(header, local):
            raise ApiError(421, f"this board answers only to its own names, not {header!r}: open the page "
                                "by the board's address or name (or add the name to web.hosts in its profile)")
        return await handler(request)

    # -- helpers ---------------------------------------------------------------------------------
    def _calibrating(self) -> bool:
        from board_driver.web.tools import WizardState
        c = self.calibration
        return c is not None and c.state is WizardState.RUNNING

    async def _ask(self, fn, timeout: float = 10.0, *, changes: bool = True):
        """``fn(session)`` run in the board loop, its answer awaited."""
        self._refuse_while_calibrating()
        return await self._answer(self.bridge.call(fn, changes=changes), timeout)

    def _refuse_while_calibrating(self) -> None:
        if self._calibrating():
            raise ApiError(409, "the board is being calibrated: the game waits until the calibration ends "
                                "or is stopped (GET /api/calibrate)")

    async def _answer(self, fut: concurrent.futures.Future, timeout: float = 10.0):
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
        except asyncio.TimeoutError:
            raise ApiError(503, "the board loop did not answer in time") from None

    def _authorized(self, request: web.Request) -> bool:
        return self.bridge.tokens.valid(token_of(request))

    def _require(self, request: web.Request) -> None:
        if not self._authorized(request):
            raise ApiError(401, "this browser is not paired with the board: pair it (POST /api/pair) "
                                "or log in with the board's password", headers={"WWW-Authenticate": "Bearer"})

    @staticmethod
    async def _body(request: web.Request):
        try:
            return await request.json()
        except RecursionError:
            raise ApiError(400, "the body is JSON nested too deeply") from None
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "the body is not valid JSON") from None

    def _state(self, request: web.Request) -> dict:
        snap = self.bridge.latest()
        if snap is None:
            raise ApiError(503, "the board is starting")
        return dict(snap, paired=self._authorized(request), password=self.bridge.password is not None)

    # -- pages -------------------------------------------------------------------------------------
    async def index(self, request: web.Request) -> web.StreamResponse:
        page = self.static / "index.html"
        if not page.exists():
            raise ApiError(500, f"the page is not built: {page} is missing")
        return web.FileResponse(page, headers={"Cache-Control": "no-cache", "Vary": "Accept-Encoding"})

    async def static_file(self, request: web.Request) -> web.StreamResponse:
        """The page's built files. Each is served gzip-compressed to a browser that accepts it
        (the build writes NAME.gz beside NAME; aiohttp's FileResponse picks it). index.html names
        them with ``?v=HASH`` of their content, so a request carrying the current hash may be kept
        for a year unasked (``immutable``); any other is checked again on every load."""
        name = request.match_info["name"]
        path = self.static / name
        if "/" in name or name.startswith(".") or name.endswith(".gz") or not path.is_file():
            raise web.HTTPNotFound()
        fresh = request.query.get("v") == _content_hash(path)
        cache = "public, max-age=31536000, immutable" if fresh else "no-cache"
        return web.FileResponse(path, headers={"Cache-Control": cache, "Vary": "Accept-Encoding"})

    async def state(self, request: web.Request) -> web.Response:
        return _json(self._state(request))

    async def ws(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=20)
        await ws.prepare(request)
        self._sockets.add(ws)
        try:
            snap = self.bridge.latest()
            if snap is not None:
                await ws.send_str(json.dumps({"type": "state", "state": snap}, separators=(",", ":")))
            if self.calibration is not None:      # a page (re)connecting mid-calibration catches up
                await ws.send_str(json.dumps({"type": "calibrate", "calibrate": self._calibration_status()},
                                             separators=(",", ":")))
            async for msg in ws:
                if msg.type == WSMsgType.TEXT and msg.data == "ping":
                    await ws.send_str('{"type":"pong"}')
                elif msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                    break
        finally:
            self._sockets.discard(ws)
        return ws

    def _push(self, snap: dict) -> None:
        """Called in the board loop's thread: send the snapshot to every open socket."""
        self._send({"type": "state", "state": snap})

    def _send(self, message: dict) -> None:
        """Send a message to every open socket (from any thread)."""
        loop = self.loop
        if loop is None or not self._sockets:
            return
        text = json.dumps(message, separators=(",", ":"))

        async def send() -> None:
            for ws in list(self._sockets):
                if not ws.closed:
                    try:
                        await ws.send_str(text)
                    except (ConnectionError, RuntimeError):
                        self._sockets.discard(ws)
        try:
            asyncio.run_coroutine_threadsafe(send(), loop)
        except RuntimeError:
            pass

    # -- commands ------------------------------------------------------------------------------------
    async def command(self, request: web.Request) -> web.Response:
        self._require(request)
        body = await self._body(request)
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, 'send {"text": "COMMAND"}, a console command such as "choose q"')
        if len(text) > 500:
            raise ApiError(400, "the command is too long")
        bridge = self.bridge

        side = _press_side(text)

        def run(session):
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
            replies = await self._ask(run)
        except (CommandError, ValueError) as exc:
            raise ApiError(400, str(exc)) from None
        if isinstance(replies, dict) and "new_game" in replies:
            return _json({"ok": True, "replies": [f"New game: {replies['new_game']}."], "new_game": replies["new_game"]})
        return _json({"ok": True, "replies": replies, "state": await self._fresh()})

    async def _fresh(self) -> dict:
        return await self._ask(lambda s: self.bridge.publish(s))

    async def new_game(self, request: web.Request, body: Any = None) -> web.Response:
        self._require(request)
        if body is None:
            body = await self._body(request)
        if not isinstance(body, dict):
            raise ApiError(400, 'send {"variant": NAME, "white": NAME, "black": NAME}')
        variant = body.get("variant") or "orthodox"
        known = {v["name"] for v in await self._variants()}
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
        clock = body.get("clock")              # a time control ("300+3"; "-": none), optional
        mode = body.get("clock_mode")
        if clock is not None:
            from board_driver.referee.clock import ClockError, TimeControl
            if not isinstance(clock, str) or mode not in (None, "auto", "press"):
                raise ApiError(400, "clock: a time control such as 300+3 (clock_mode: auto or press)")
            try:
                TimeControl.parse(clock)
            except ClockError as exc:
                raise ApiError(400, f"clock: {exc}") from None

        self._refuse_while_calibrating()
        started = await self._answer(self.bridge.hand_over(
            NewGame(variant, players=players, fen=fen, clock=clock, clock_mode=mode, reply=concurrent.futures.Future())))
        if "invited" in started:            # a remote:PEER player: invited; the game opens once PEER accepts
            return _json({"ok": True, **started}, status=202)
        return _json({"ok": True, "variant": started["variant"], "game": started["game"], "players": players})

    # -- remote games: the boards online, invitations (docs/remote.md) --------------------------------
    def _remote(self):
        if self.remote is None or self.remote.broker is None:
            from board_driver.remote.invitations import NO_BROKER
            raise ApiError(409, NO_BROKER)
        return self.remote

    async def remote_boards(self, request: web.Request) -> web.Response:
        return _json(self._remote().boards())

    async def remote_invite(self, request: web.Request) -> web.Response:
        """``{"board": PEER, "side": "white" | "black", ...}``: the New game of ``POST /api/new`` with
        ``remote:PEER`` for the other side."""
        self._require(request)
        self._remote()
        body = await self._body(request)
        if not isinstance(body, dict) or not isinstance(body.get("board"), str) or not body["board"].strip():
            raise ApiError(400, 'send {"board": NAME} (and "side": "white" or "black", the side this board plays)')
        side = body.get("side", "white")
        if side not in ("white", "black"):
            raise ApiError(400, 'side: "white" or "black" (the side this board\'s player plays)')
        other = "black" if side == "white" else "white"
        name = body.get("name", side.capitalize())
        extra = {k: body[k] for k in ("variant", "fen", "clock", "clock_mode") if k in body}
        request_body = {**extra, side: name, other: f"remote:{body['board'].strip()}"}
        return await self.new_game(request, body=request_body)

    async def remote_answer(self, request: web.Request) -> web.Response:
        self._require(request)
        remote = self._remote()
        what = request.path.rsplit("/", 1)[1]
        body = await self._body(request)
        peer = body.get("board") if isinstance(body, dict) else None
        if what != "cancel" and (not isinstance(peer, str) or not peer.strip()):
            raise ApiError(400, 'send {"board": NAME}: the board whose invitation this answers')
        peer = str(peer or "")
        loop = asyncio.get_running_loop()
        try:
            if what == "cancel":
                out = await loop.run_in_executor(None, remote.cancel)
            else:
                out = await loop.run_in_executor(None, getattr(remote, what), peer.strip())
        except LookupError as exc:
            raise ApiError(404, str(exc).strip("'\"")) from None
        except BoardDriverError as exc:
            raise ApiError(409, str(exc)) from None
        await self._fresh()
        return _json({"ok": True, **out}, status=202 if what == "accept" else 200)

    async def sim(self, request: web.Request) -> web.Response:
        if not self.bridge.sim:
            raise ApiError(409, "this board is not simulated: move the pieces on the board")
        if not is_loopback(request.remote):
            self._require(request)           # the simulated board is driven from its own machine only
        body = await self._body(request)
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
        bridge = self.bridge
        warnings = []
        t0 = checked[0][0]
        started = time.monotonic()
        for i, (t, kind, arg) in enumerate(checked, 1):
            wait = started + (t - t0) / 1000 - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)

            def run(session, kind=kind, arg=arg):
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
                    steps = await self._ask(partial(move_steps, arg), changes=False)
                    for j, (k, sq) in enumerate(steps):
                        if j:
                            await asyncio.sleep(MOVE_STEP_MS / 1000)
                        await self._ask(partial(run, kind=k, arg=sq))
                else:
                    await self._ask(run)
            except (SimulatorError, CommandError, ValueError) as exc:
                warnings.append({"event": i, "t": t, "warning": str(exc)})
        await self._settle()
        return _json({"ok": True, "warnings": warnings, "state": await self._fresh()})

    async def _settle(self) -> None:
        """Wait until the board loop has nothing due (debounce, holds), at most a few seconds."""
        end = time.monotonic() + SETTLE_LIMIT_S
        clock = self.bridge.clock
        while time.monotonic() < end:
            due = await self._ask(lambda s: (s.next_deadline(polls=False), bool(self.bridge.board and self.bridge.board.queue)),
                                  changes=False)
            deadline, queued = due
            if deadline is None and not queued:
                return
            wait = 0.01 if deadline is None else max(0.005, (deadline - clock()) / 1000 + 0.005)
            await asyncio.sleep(min(wait, 0.5))

    # -- variants, designs -------------------------------------------------------------------------
    async def _variants(self) -> list[dict]:
        if self.variants is None:
            loop = asyncio.get_running_loop()
            self.variants = await loop.run_in_executor(None, list_variants)
        return self.variants

    async def list_variants(self, request: web.Request) -> web.Response:
        return _json({"variants": await self._variants(), **self.info})

    async def cost(self, request: web.Request) -> web.Response:
        design = request.query.get("design", "").strip()
        if not design or len(design) > 200:
            raise ApiError(400, "give ?design=BETZA, e.g. ?design=fcFfmW")
        return _json(await self._ask(partial(price_design, design), changes=False))

    async def schedule(self, request: web.Request) -> web.Response:
        from engine.random_variant import schedule
        try:
            n = int(request.query.get("games", "8"))
        except ValueError:
            raise ApiError(400, "games: a whole number 1-100") from None
        if not 1 <= n <= 100:
            raise ApiError(400, "games: a whole number 1-100")
        return _json({"games": [{"game": e.game, "white": e.white, "black": "B" if e.white == "A" else "A",
                                 "draw": e.draw, "variant": e.variant} for e in schedule(n)]})

    async def hardware_info(self, request: web.Request) -> web.Response:
        if self.hardware is None:
            return _json({"board": None})
        loop = asyncio.get_running_loop()
        info = dict(await loop.run_in_executor(None, self.hardware))
        info["selftest"] = self.last_selftest
        info["calibration"] = self._calibration_status()
        return _json(info)

    # -- the Board tab's tools (web/tools.py) ---------------------------------------------------------
    def _tools(self):
        if self.tools is None:
            raise ApiError(409, "this server has no board to test")
        return self.tools

    async def selftest(self, request: web.Request) -> web.Response:
        self._require(request)
        tools = self._tools()
        body = await self._body(request)
        if not isinstance(body, dict):
            raise ApiError(400, 'send {"seconds": S, "leds": true}')
        seconds = body.get("seconds", 2)
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0.2 <= seconds <= 10:
            raise ApiError(400, "seconds: how long to watch the sensors, 0.2 to 10")
        leds = body.get("leds", True)
        if not isinstance(leds, bool):
            raise ApiError(400, "leds: true (show the LED test patterns) or false")
        findings = await self._ask(lambda s: tools.selftest(s, float(seconds), leds), timeout=seconds + 20)
        findings = dict(findings, ok=not findings["problems"])
        self.last_selftest = findings
        return _json(findings)

    def _calibration_status(self) -> dict:
        refusal = self.tools.calibration_refusal() if self.tools is not None else "this server has no board"
        out: dict[str, Any]
        if self.calibration is None:
            out = {"state": "idle", "question": None, "squares": [], "lines": [], "report": [], "written": None,
                   "ok": None, "error": None, "seq": 0}
        else:
            out = self.calibration.status()
        out["refused"] = refusal
        return out

    async def calibrate_status(self, request: web.Request) -> web.Response:
        return _json(self._calibration_status())

    async def calibrate_start(self, request: web.Request) -> web.Response:
        from board_driver.web.tools import WebPrompter
        self._require(request)
        tools = self._tools()
        refusal = tools.calibration_refusal()
        if refusal:
            raise ApiError(409, refusal)
        if self._calibrating():
            raise ApiError(409, "a calibration is already running: answer it, or stop it first")
        body = await self._body(request)
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
        prompter = WebPrompter(on_change=lambda status: self._send({"type": "calibrate", "calibrate": status}))
        await self._ask(lambda s: None)             # the loop answers: it is running
        self.calibration = prompter

        def run(session) -> None:
            self.bridge.notice("Calibration started from the page: the game waits until it ends.")
            tools.calibrate(session, prompter, plan, leds=leds, **opts)
        self.bridge.call(run)
        return _json({"ok": True, "calibrate": self._calibration_status()})

    async def calibrate_answer(self, request: web.Request) -> web.Response:
        self._require(request)
        body = await self._body(request)
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str) or len(text) > 100:
            raise ApiError(400, 'send {"text": ANSWER} ("" for Enter)')
        c = self.calibration
        if c is None or not self._calibrating():
            raise ApiError(409, "no calibration is running (POST /api/calibrate/start)")
        if not c.answer(text):
            raise ApiError(409, "the calibration asks nothing now: it waits for the board (see GET /api/calibrate)")
        await asyncio.sleep(0.05)                   # the wizard takes the answer
        return _json({"ok": True, "calibrate": self._calibration_status()})

    async def calibrate_stop(self, request: web.Request) -> web.Response:
        self._require(request)
        c = self.calibration
        if c is None or not self._calibrating():
            raise ApiError(409, "no calibration is running")
        from board_driver.web.tools import WizardState
        c.stop()
        end = time.monotonic() + 5
        while c.state is WizardState.RUNNING and time.monotonic() < end:
            await asyncio.sleep(0.05)
        return _json({"ok": True, "calibrate": self._calibration_status()})

    # -- games ---------------------------------------------------------------------------------------
    async def games(self, request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()
        return _json({"games": await loop.run_in_executor(None, list_games, self.store)})

    async def game(self, request: web.Request) -> web.Response:
        gid = self._gid(request)
        loop = asyncio.get_running_loop()
        return _json(await loop.run_in_executor(None, game_detail, self.store, gid))

    async def pgn(self, request: web.Request) -> web.Response:
        from board_driver.pgn import pgn_of
        gid = self._gid(request)
        loop = asyncio.get_running_loop()

        def make() -> str:
            try:
                return pgn_of(self.store.load(gid))
            except (JournalError, EngineError, KeyError, ValueError) as exc:
                raise ApiError(422, f"game {gid}: cannot be exported: {exc}") from None
        text = await loop.run_in_executor(None, make)
        return web.Response(text=text, content_type="application/x-chess-pgn",
                            headers={"Content-Disposition": f'attachment; filename="{gid}.pgn"'})

    async def analyse(self, request: web.Request) -> web.Response:
        self._require(request)
        gid = self._gid(request)
        body = await self._body(request)
        if not isinstance(body, dict):
            raise ApiError(400, 'send {} or {"seconds": S}')
        seconds = body.get("seconds", ANALYSE_SECONDS)
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0.05 <= seconds <= 5:
            raise ApiError(400, "seconds: the engine's time a position, 0.05 to 5")
        loop = asyncio.get_running_loop()
        try:
            status = await loop.run_in_executor(None, self.analyses.start, gid, float(seconds))
        except AnalysisBusy as exc:
            raise ApiError(409, str(exc)) from None
        except (JournalError, EngineError, KeyError) as exc:
            raise ApiError(422, f"game {gid}: cannot be analysed: {exc}") from None
        return _json({"ok": True, "analysis": status}, status=202 if status["state"] == "running" else 200)

    async def analysis(self, request: web.Request) -> web.Response:
        gid = self._gid(request)
        loop = asyncio.get_running_loop()
        return _json(await loop.run_in_executor(None, self.analyses.status, gid))

    async def live_eval(self, request: web.Request) -> web.Response:
        self._require(request)
        body = await self._body(request)
        on = body.get("on") if isinstance(body, dict) else None
        if not isinstance(on, bool):
            raise ApiError(400, 'send {"on": true} or {"on": false} (and "seconds": S, optional)')
        seconds = body.get("seconds")
        if seconds is not None and (not isinstance(seconds, (int, float)) or isinstance(seconds, bool)
                                    or not 0.1 <= seconds <= 30):
            raise ApiError(400, "seconds: the engine's time a position, 0.1 to 30")
        live = self.bridge.live
        live.switch(on, None if seconds is None else float(seconds))
        self.bridge.notice("Live evaluation on." if on else "Live evaluation off.")

        def publish(session) -> dict:
            live.follow(session)            # the position now goes to the engine at once
            return self.bridge.publish(session)
        state = await self._ask(publish)
        return _json({"ok": True, "on": live.on, "seconds": live.seconds, "eval": state.get("eval"), "state": state})

    def _gid(self, request: web.Request) -> str:
        gid = request.match_info["id"]
        if not all(c.isalnum() or c in "-_" for c in gid) or gid not in self.store.ids():
            raise ApiError(404, f"no game {gid!r}")
        return gid

    # -- pairing -----------------------------------------------------------------------------------------
    async def pair(self, request: web.Request) -> web.Response:
        start = partial(self.bridge.start_pairing, client=client_key(request.remote), label=device_label(request))
        try:
            p = await self._ask(start)
        except PairingBusy as exc:
            raise ApiError(exc.status, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
        left = max(0, round(p.deadline - time.monotonic()))
        return _json({"id": p.id, "square": p.square, "expires_in": left,
                      "text": f"Lift the piece on {p.square} (its square blinks white) and put it back "
                              f"within {left} seconds."})

    async def pair_status(self, request: web.Request) -> web.Response:
        p = self.bridge.pairing(request.match_info["id"])
        if p is None:
            raise ApiError(404, "no such pairing (it expired long ago, or never was)")
        out = {"id": p.id, "state": p.state.value, "square": p.square,
               "expires_in": max(0, round(p.deadline - time.monotonic()))}
        resp = _json(out)
        if p.state is PairingState.GRANTED and p.token:
            out["token"] = p.token
            resp = _json(out)
            _set_cookie(resp, p.token)
        return resp

    async def login(self, request: web.Request) -> web.Response:
        if self.bridge.password is None:
            raise ApiError(403, "no password is set in the board profile: pair by lifting a piece")
        client = client_key(request.remote)
        wait = self.logins.retry_after(client)
        if wait > 0:                              # refused unchecked: a guess while waiting tells nothing
            raise ApiError(429, f"too many wrong passwords: try again in {wait} s (or pair at the board)",
                           headers={"Retry-After": str(wait)})
        body = await self._body(request)
        given = body.get("password") if isinstance(body, dict) else None
        import hmac
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), self.bridge.password.encode()):
            self.logins.failed(client)
            raise ApiError(401, "wrong password", headers={"WWW-Authenticate": "Bearer"})
        self.logins.succeeded(client)
        token = self.bridge.tokens.grant(device_label(request), "password")
        resp = _json({"token": token})
        _set_cookie(resp, token)
        return resp


    async def list_tokens(self, request: web.Request) -> web.Response:
        self._require(request)
        mine = self.bridge.tokens.device_of(token_of(request))
        return _json({"tokens": [dict(d, current=d["id"] == mine) for d in self.bridge.tokens.devices()],
                      "expire_days": round(self.bridge.tokens.ttl / 86400)})

    async def revoke_tokens(self, request: web.Request) -> web.Response:
        self._require(request)
        tokens = self.bridge.tokens
        mine = tokens.device_of(token_of(request))
        body = await self._body(request)
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
            self.bridge.notice(f"{n} paired device{'s' if n != 1 else ''} forgotten from the page.")
        resp = _json({"ok": True, "revoked": n, "tokens": [dict(d, current=False) for d in tokens.devices()]})
        if mine is not None and (not ids or mine in ids):
            resp.del_cookie(COOKIE, path="/")          # this browser's own token went too
        return resp


def device_label(request: web.Request) -> str:
    """How the token list names a device: its browser and system from the User-Agent, and its
    address ("Chrome on Android (192.168.1.23)")."""
    ua = request.headers.get("User-Agent", "")
    system = next((name for key, name in (("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"),
                                          ("Windows", "Windows"), ("Macintosh", "macOS"), ("CrOS", "ChromeOS"),
                                          ("Linux", "Linux")) if key in ua), None)
    browser = next((name for key, name in (("Firefox/", "Firefox"), ("Edg/", "Edge"), ("OPR/", "Opera"),
                                           ("SamsungBrowser/", "Samsung Internet"), ("Chrome/", "Chrome"),
                                           ("Chromium/", "Chromium"), ("Safari/", "Safari")) if key in ua), None)
    if browser and system:
        what = f"{browser} on {system}"
    elif browser or system:
        what = str(browser or system)
    else:
        what = "".join(c for c in ua.split(" ")[0] if c.isprintable())[:40] or "a client"
    return f"{what} ({request.remote or '?'})"


def _set_cookie(resp: web.Response, token: str) -> None:
    resp.set_cookie(COOKIE, token, httponly=True, samesite="Strict", max_age=365 * 24 * 3600, path="/")


# -- work done off the session (pure reads of configs and journals) ----------------------------------

def computer_offer() -> dict:
    """What ``GET /api/variants`` says of the computer players: the specs offered (``computer``),
    the built-in levels, weakest first (``computer_levels``), and what each means
    (``computer_names``)."""
    from board_driver.opponents.players import PAGE_LEVELS, describe_spec
    specs = computer_specs()
    levels = [f"builtin:{n}" for n in PAGE_LEVELS]
    return {"computer": specs, "computer_levels": levels,
            "computer_names": {spec: describe_spec(spec) for spec in specs + levels}}


def computer_specs() -> list[str]:
    """The computer players the page offers: the built-in engine, the random mover, and
    Fairy-Stockfish when it is installed."""
    from board_driver.opponents.players import find_fairy_stockfish
    return ["builtin", "random"] + (["fsf"] if find_fairy_stockfish() else [])


def computer_refusal(name: str) -> str | None:
    """Why a player's name may not be used from the page (an engine that runs a command)."""
    from board_driver.opponents.players import PlayerError, parse_spec
    try:
        spec = parse_spec(name)
    except PlayerError:
        return None                 # a person's name
    if spec.kind == "uci":
        return "an engine that runs a command is set on the command line (--white/--black), not from the page"
    return None


def list_variants() -> list[dict]:
    from board_driver.config import configs_dir, load_variant
    out = []
    for path in sorted((configs_dir() / "variants").glob("*.yaml")):
        try:
            v = load_variant(path.stem)
        except (BoardDriverError, EngineError, ValueError, OSError):
            continue
        out.append({"name": v.name, "description": v.description, "family": v.family,
                    "files": v.geometry.files, "ranks": v.geometry.ranks})
    out.append({"name": "random", "family": "chess", "files": 12, "ranks": 8,
                "description": "Random Variant Chess: three dice choose one of the variants of tomorrow's chess"})
    return out


def price_design(design: str, session) -> dict:
    """The ``cost`` command's figures for a design, priced as this game prices it."""
    from engine.csipgs_cost import breakdown, cost_of, decimal
    g = session.game
    cost_fn = getattr(g, "cost", None)
    if g.family == "csipgs" and callable(cost_fn):
        try:
            c = cost_fn(design)
        except (EngineError, ValueError) as exc:
            raise ApiError(400, f"{design}: {exc}") from None
    else:
        from board_driver.config import load_variant
        from engine.csipgs import CsipgsRules
        try:
            c = cost_of(design, CsipgsRules.from_variant(load_variant("csipgs")).price_list(), g.geometry)
        except (EngineError, ValueError) as exc:
            raise ApiError(400, f"{design}: {exc}") from None
    return {"design": c.design, "lines": list(breakdown(c)), "exact": decimal(c.exact), "price": decimal(c.price)}


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


def move_steps(text: str, session) -> list[tuple[str, str]]:
    """The events (``("lift" | "place", SQUARE)``, in order) of a ``move`` event ``FROM-TO``
    (or ``FROMTO``) on the simulated board: those of the legal action taking the piece on FROM
    to TO, as a player makes them -- a victim lifted first, the mover lifted and set down, a
    castling rook after its king, an en passant victim, the squares filled by a promotion
    (whose choice stays to be made). With no such legal action, the piece is moved as asked
    (a victim on TO lifted first) and the board shows what is wrong."""
    import re
    g = session.game
    geo = g.geometry
    m = re.fullmatch(r"([a-p][0-9]{1,2})-?([a-p][0-9]{1,2})", text.strip().lower())
    if m is None:
        raise ValueError(f"move {text!r}: give FROM-TO, e.g. e2-e4")
    a, b = geo.parse(m.group(1)), geo.parse(m.group(2))
    name = geo.name
    fits = [x for x in (g.legal_actions() if session.outcome() is None else [])
            if a in x.lifts and a not in x.places and b in x.places]
    if not fits:
        occ = session.occupancy
        return ([("lift", name(b))] if occ >> b & 1 else []) + [("lift", name(a)), ("place", name(b))]
    x = fits[0]          # promotions to different pieces look the same on the board
    movers = x.lifts - x.places
    if len(movers) == 2 and len(x.places) == 2:          # castling: the king, then the rook
        rook = next(iter(movers - {a}))
        rto = next(iter(x.places - {b}))
        return [("lift", name(a)), ("place", name(b)), ("lift", name(rook)), ("place", name(rto))]
    return ([("lift", name(s)) for s in sorted(x.lifts - {a})] + [("lift", name(a)), ("place", name(b))]
            + [("place", name(s)) for s in sorted(x.places - {b} - x.lifts)])
