"""``--web``: the page served from the board service's own process.

* :func:`play_web` -- ``fairyboard play --web``: the simulated board in real time, the page
  (and ``POST /api/sim``) moving its pieces, until Ctrl-C;
* :func:`start_web` -- what ``fairyboard serve`` calls: the server for the real board.

The board profile may carry a ``web`` section::

    web:
      listen: 0.0.0.0:8080      # serve binds here even without --web
      password: "a secret"      # a browser may log in with it instead of pairing
      hosts: [chess.example.org]  # more names the page may be opened by (docs/web.md)
      limits: {connections: 256, per_client: 32, header_timeout: 20, keepalive_timeout: 75}
"""

from __future__ import annotations

import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from board_driver.errors import ConfigError
from board_driver.web.auth import LoginLimiter, TokenStore
from board_driver.web.bridge import Notices, WebBridge
from board_driver.web.board_io import OverlaySink, WebSource
from board_driver.web.hosts import HostNames
from board_driver.web.limits import WebLimits

if TYPE_CHECKING:       # pragma: no cover
    from board_driver.journal import GameStore
    from board_driver.referee.runner import LoopCommand
    from board_driver.referee.session import Session
    from board_driver.web.context import BoardTools, RemoteLobby
    from board_driver.web.server import WebServer

STATIC = Path(__file__).resolve().parent / "static"

PLAY_DEFAULT = "127.0.0.1:8080"
SERVE_DEFAULT = "0.0.0.0:8080"


@dataclass(frozen=True, slots=True)
class WebConfig:
    listen: str | None = None
    password: str | None = None
    hosts: tuple[str, ...] = ()         # names the page may be opened by beyond the board's own
    limits: WebLimits = WebLimits()     # connections and their timeouts (limits.py)

    @classmethod
    def from_dict(cls, data: Any, source: str) -> WebConfig:
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: web: {data!r}: must be a mapping with listen and password")
        for k in data:
            if k not in ("listen", "password", "hosts", "limits"):
                raise ConfigError(f"{source}: web.{k}: unknown key (known: listen, password, hosts, limits)")
        listen = data.get("listen")
        if listen is not None:
            if not isinstance(listen, str):
                raise ConfigError(f"{source}: web.listen: {listen!r}: must be HOST:PORT")
            parse_listen(listen, f"{source}: web.listen")
        password = data.get("password")
        if password is not None and (not isinstance(password, str) or len(password) < 4):
            raise ConfigError(f"{source}: web.password: must be a string of at least 4 characters")
        hosts = data.get("hosts") or []
        if isinstance(hosts, str):
            hosts = [hosts]
        if not isinstance(hosts, list) or not all(
                isinstance(h, str) and h.strip() and (_is_ip(h) or not any(c in h.strip() for c in "/@ :[]"))
                for h in hosts):
            raise ConfigError(f"{source}: web.hosts: {hosts!r}: a list of host names or addresses "
                              "(without port), e.g. [chessboard.example.org, 192.168.1.50]")
        limits = WebLimits.from_dict(data.get("limits"), source)
        return cls(listen, password, tuple(h.strip().lower() for h in hosts), limits)


def _is_ip(text: str) -> bool:
    import ipaddress
    try:
        ipaddress.ip_address(text.strip().strip("[]"))
        return True
    except ValueError:
        return False


def profile_web(name: str) -> WebConfig:
    """The ``web`` section of a board profile given by name (configs/boards) or path."""
    from board_driver.config import configs_dir, read_yaml
    path = Path(name)
    if not (name.endswith((".yaml", ".yml")) and path.exists()):
        path = configs_dir() / "boards" / f"{name}.yaml"
    if not path.exists():
        return WebConfig()
    data = read_yaml(path) or {}
    return WebConfig.from_dict(data.get("web") if isinstance(data, Mapping) else None, str(path))


def parse_listen(text: str, what: str = "--web") -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT``, ``:PORT`` or ``PORT`` -> (host, port); host defaults to localhost."""
    t = text.strip()
    host, port = "127.0.0.1", t
    if t.startswith("["):
        end = t.find("]")
        host, port = t[1:end], t[end + 2:] if end > 0 else ""
    elif ":" in t:
        host, port = t.rsplit(":", 1)
        host = host or "127.0.0.1"
    try:
        n = int(port)
        if not 0 <= n <= 65535:
            raise ValueError
    except ValueError:
        raise ConfigError(f"{what}: {text!r}: give HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free port)") from None
    return host, n


def start_web(listen: str, *, store: GameStore, commands: "queue.Queue[Any]", sim: bool, password: str | None,
              data_root: Path | None, say: Callable[[str], None] = print, hardware: Callable[[], dict] | None = None,
              tools: BoardTools | None = None, hosts: Iterable[str] = (), notices: Notices | None = None,
              link: Callable[[], dict] | None = None, remote: RemoteLobby | None = None,
              limits: WebLimits = WebLimits()) -> tuple[WebBridge, WebServer]:
    """Start the server; returns (bridge, server). ``limits`` are the connections' (the
    profile's ``web.limits``); ``hardware()`` answers ``GET /api/hardware``;
    ``tools`` are the Board tab's; ``notices`` the page's notices (the game host's ``say``
    writes there too); ``link()`` the board's link in every snapshot; ``remote`` the boards
    online and invitations (remote/invitations.py)."""
    from board_driver.web.analyses import GameAnalyses     # the server's modules (aiohttp) only when served
    from board_driver.web.catalog import Catalog
    from board_driver.web.context import AppContext, Sockets, ToolDesk
    from board_driver.web.server import WebServer
    host, port = parse_listen(listen)
    tokens = TokenStore(Path(data_root) / "web-tokens.json" if data_root is not None else None)
    bridge = WebBridge(commands=commands, tokens=tokens, password=password, sim=sim, link=link,
                       lobby=remote.status if remote is not None else None,
                       notices=notices if notices is not None else Notices())
    sockets = Sockets()
    ctx = AppContext(bridge=bridge, store=store, hosts=HostNames(host, hosts), sockets=sockets,
                     analyses=GameAnalyses(store, on_change=lambda status: sockets.send({"type": "analysis",
                                                                                          "analysis": status})),
                     logins=LoginLimiter(), desk=ToolDesk(tools), catalog=Catalog(), static=STATIC,
                     hardware=hardware, remote=remote)
    server = WebServer(ctx, host=host, port=port, limits=limits).start()
    say(f"fairyboard: the page is at {server.url}")
    return bridge, server


class WebFront:
    """The page on a game host's game: the server, the bridge between its thread and the board
    loop, and the pairing overlay on the LEDs. ``notices`` are the page's notices, made before
    the game host so that its ``say`` writes there too (:meth:`Notices.speaker`); ``link`` and
    ``remote`` are the host's (``GameHost.link``, ``GameHost.invitations``)."""

    def __init__(self, listen: str, *, store: GameStore, commands: "queue.Queue[Any]", sim: bool,
                 password: str | None, say: Callable[[str], None] = print, hardware: Callable[[], dict] | None = None,
                 hosts: Iterable[str] = (), notices: Notices | None = None, link: Callable[[], dict] | None = None,
                 remote: RemoteLobby | None = None, tools: BoardTools | None = None,
                 limits: WebLimits = WebLimits()):
        self.bridge, self.server = start_web(listen, store=store, commands=commands, sim=sim, password=password,
                                             data_root=store.root, say=say, hardware=hardware, tools=tools,
                                             hosts=hosts, notices=notices, link=link, remote=remote,
                                             limits=limits)
        self.sim = sim
        self.remote = remote
        self.overlay: OverlaySink | None = None

    def overlay_on(self, sink: Any) -> OverlaySink:
        """The LED sink with the pairing squares on top (one per sink, kept across games; a sink
        that is an overlay already, as the real board's is, is that one)."""
        if isinstance(sink, OverlaySink):
            return sink
        if self.overlay is None or self.overlay.inner is not sink:
            self.overlay = OverlaySink(sink)
        return self.overlay

    def wrap(self, session: Any, source: Any, sink: Any) -> tuple[WebSource, OverlaySink]:
        """The devices as the loop sees them while the page is served (GameHost.run's ``wrap``)."""
        overlay = self.overlay_on(sink)
        self.bridge.attach(session, board=getattr(source, "inner", source) if self.sim else None, sink=overlay)
        # the page sees the game at once, even if a tool (a calibration started the moment the
        # game opened) holds the loop before its first step
        self.bridge.on_update(session)
        return WebSource(source, self.bridge, wakeable=self.sim), overlay

    def start_remote(self, *, announce: bool) -> None:
        """The remote games' part of the page (board_driver/remote/invitations.py): the boards
        online, the invitations to this board, accept and decline; read from the broker only
        when the profile has one."""
        if self.remote is not None:
            self.remote.start(announce=announce, on_change=self.bridge.refresh)

    def stop(self) -> None:
        self.server.stop()


def play_web(args, store, settings, profile, board_name: str, broker=None) -> int:
    """``fairyboard play --web``: the simulated board in real time, with the page (and, with
    ``--events``, a script played on it at its times). The one place its objects are made and
    handed to each other."""
    from board_driver.host.game_host import GameHost, GameRequest, SimSeat
    from board_driver.referee.runner import LoopQueue
    from board_driver.web.tools import SimTools

    web = profile_web(board_name)
    listen = args.web or web.listen or PLAY_DEFAULT
    commands = LoopQueue()                  # a command wakes the idle loop (runner.py)
    stop = install_stop(commands.wake)

    def say(line: str) -> None:
        print(line, flush=True)

    seat = SimSeat(store, monotonic_ms)
    notices = Notices()                     # the page's notices: every line the host says goes there too
    host = GameHost(store, settings=settings, profile=profile, seat=seat, clock=monotonic_ms,
                    say=notices.speaker(say), note=lambda line: print(f"fairyboard play: {line}", file=sys.stderr),
                    background=True, broker=broker,     # the profile's broker: remote:PEER (docs/remote.md)
                    stopping=stop.is_set)
    info = {"board": profile.name, "size": f"{profile.files}x{profile.ranks}", "sensors": "sim", "leds": "sim",
            "calibrated": True, "problems": [], "link": None}
    front = WebFront(listen, store=store, commands=commands, sim=True, password=web.password, say=say,
                     hardware=lambda: info, hosts=web.hosts, notices=notices, link=host.link,
                     remote=host.invitations, tools=SimTools(profile, lambda: seat.board), limits=web.limits)
    front.start_remote(announce=True)     # no club publisher here: the lobby says it is online
    try:
        host.open(GameRequest.from_args(args))
        host.run(commands=commands, stop=stop.is_set, on_update=front.bridge.on_update,
                 wrap=scripted(front.wrap, args.events, commands, host, say))
    finally:
        front.stop()
        host.close()
    say(host.goodbye())
    return 0


def scripted(wrap, events: str | None, commands, host, say):
    """``wrap`` with an events script played on the simulated board at its times (``--events``
    under ``play --web`` or ``serve`` on the simulated board); ``wrap`` itself without one."""
    if events is None:
        return wrap
    from board_driver.errors import BoardDriverError
    from board_driver.sim.events import EventScript, ScriptedSource
    if not host.seat.sim:
        raise BoardDriverError("--events plays on the simulated board only (--board sim)")
    state: dict[str, Any] = {"script": None}

    def both(session: Session, source, sink):
        if state["script"] is None:
            script = EventScript(events, session.game.geometry)
            script.check()
            state["script"] = ScriptedSource(source, script.events(), host.clock, commands, warn=say)
        else:
            state["script"].inner = source      # a new game: the rest of the script on its board
        return wrap(session, state["script"], sink)
    return both


def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


def install_stop(wake: Callable[[], object] = lambda: None) -> threading.Event:
    """An event set by SIGINT or SIGTERM: the loop stops after the frame it is on (``wake``
    wakes it if it sleeps: :meth:`~board_driver.referee.runner.LoopQueue.wake`)."""
    stop = threading.Event()

    def on_signal(signum, frame) -> None:
        stop.set()
        wake()
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    return stop


def hardware_info(board, hw) -> dict:
    """``GET /api/hardware`` for a real board: its profile, devices, calibration and link health."""
    p = board.profile
    cal = (board.data.get("hardware") or {}).get("calibration") or {}
    out = {"board": p.name, "size": f"{p.files}x{p.ranks}", "sensors": board.hardware.sensor_backend,
           "leds": board.hardware.led_backend, "calibrated": bool(p.sensor_map) or bool(cal),
           "problems": [str(x) for x in cal.get("problems") or []], "link": None}
    serial = getattr(hw, "serial", None)
    if serial is not None:
        h = serial.health()
        out["link"] = {name: (v if isinstance(v, (int, float, str, bool, type(None))) else str(v))
                       for name, v in ((f, getattr(h, f)) for f in h.__dataclass_fields__)}
    return out


__all__ = ["WebConfig", "WebFront", "parse_listen", "play_web", "profile_web", "start_web"]
