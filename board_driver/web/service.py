"""``--web``: the page served from the board service's own process.

* :func:`play_web` -- ``fairyboard play --web``: the simulated board in real time, the page
  (and ``POST /api/sim``) moving its pieces, until Ctrl-C;
* :func:`start_web` -- what ``fairyboard serve`` calls: the server for the real board.

The board profile may carry a ``web`` section::

    web:
      listen: 0.0.0.0:8080      # serve binds here even without --web
      password: "a secret"      # a browser may log in with it instead of pairing
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from board_driver.errors import ConfigError
from board_driver.web.bridge import (
    OverlaySink,
    TokenStore,
    WebBridge,
    WebNewGame,
    WebSource,
)

PLAY_DEFAULT = "127.0.0.1:8080"
SERVE_DEFAULT = "0.0.0.0:8080"


@dataclass(frozen=True, slots=True)
class WebConfig:
    listen: str | None = None
    password: str | None = None

    @classmethod
    def from_dict(cls, data: Any, source: str) -> WebConfig:
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: web: {data!r}: must be a mapping with listen and password")
        for k in data:
            if k not in ("listen", "password"):
                raise ConfigError(f"{source}: web.{k}: unknown key (known: listen, password)")
        listen = data.get("listen")
        if listen is not None:
            if not isinstance(listen, str):
                raise ConfigError(f"{source}: web.listen: {listen!r}: must be HOST:PORT")
            parse_listen(listen, f"{source}: web.listen")
        password = data.get("password")
        if password is not None and (not isinstance(password, str) or len(password) < 4):
            raise ConfigError(f"{source}: web.password: must be a string of at least 4 characters")
        return cls(listen, password)


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


def start_web(listen: str, *, store, commands, sim: bool, password: str | None, data_root: Path | None,
              say=print, hardware=None, tools=None):
    """Start the server; returns (bridge, server). ``hardware()`` answers ``GET /api/hardware``."""
    from board_driver.web.server import WebServer
    host, port = parse_listen(listen)
    tokens = TokenStore(Path(data_root) / "web-tokens.json" if data_root is not None else None)
    bridge = WebBridge(commands=commands, tokens=tokens, password=password, sim=sim)
    server = WebServer(bridge, store, host=host, port=port, hardware=hardware, tools=tools).start()
    say(f"fairyboard: the page is at {server.url}")
    return bridge, server


def play_web(args, store, settings, profile, board_name: str) -> int:
    """``fairyboard play --web``: the simulated board in real time, with the page."""
    import queue

    from board_driver.cli.play_cmds import _open_session
    from board_driver.referee.runner import run_realtime
    from board_driver.referee.session import NewGameRequest

    web = profile_web(board_name)
    listen = args.web or web.listen or PLAY_DEFAULT
    stop = threading.Event()

    def on_signal(signum, frame) -> None:
        stop.set()
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    def clock() -> int:
        return int(time.monotonic() * 1000)

    def say(line: str) -> None:
        print(line, flush=True)

    session, board, resumed = _open_session(args, store, settings, profile, clock, own=False)
    commands: queue.Queue = queue.Queue()
    info = {"board": profile.name, "size": f"{profile.files}x{profile.ranks}", "sensors": "sim", "leds": "sim",
            "calibrated": True, "problems": [], "link": None}
    bridge, server = start_web(listen, store=store, commands=commands, sim=True, password=web.password,
                               data_root=store.root, say=say, hardware=lambda: info)
    from board_driver.web.tools import SimTools
    server.tools = SimTools(profile, lambda: bridge.board)
    if resumed:
        say(f"Resumed game {session.game_id} ({session.variant_name}), {len(session.game.history)} actions so far.")
    else:
        say(f"New game {session.game_id}: {session.variant_name}. The simulated board is set up.")
    try:
        while True:
            board.queue.append(board.current())
            sink = OverlaySink(board)
            bridge.attach(session, board=board, sink=sink)
            bridge.on_update(session)
            try:
                run_realtime(session, WebSource(board, bridge, wakeable=True), sink, clock, commands=commands,
                             stop=stop.is_set, on_notice=lambda line: (say(line), bridge.notice(line)),
                             on_update=bridge.on_update)
                break
            except NewGameRequest as req:
                players = getattr(req, "players", None)
                try:
                    session, board = _new_sim_game(req.variant, getattr(req, "fen", None), players, session,
                                                   store, settings, profile, clock,
                                                   getattr(args, "move_time", 1.0) or 1.0)
                    say(f"New game {session.game_id}: {session.variant_name}. The simulated board is set up.")
                    bridge.notice(f"New game {session.game_id}: {session.variant_name}.")
                except Exception as exc:        # a bad variant: the game goes on
                    say(f"error: {exc}")
                    bridge.notice(f"error: {exc}")
    finally:
        server.stop()
        session.close()
    say(f"Game {session.game_id} saved in {store.path(session.game_id)}; fairyboard play resumes it.")
    return 0


def attach_computer(session, move_time: float, fsf_path: str | None = None) -> None:
    """The computer plays the sides whose player is an engine spec, thinking in the background
    (the session is the real-time loop's); an engine that cannot start is said as a notice (the
    game goes on with people)."""
    from board_driver.errors import BoardDriverError
    from board_driver.opponents.computer import attach
    try:
        attach(session, seconds=move_time, fsf_path=fsf_path, background=True)
    except BoardDriverError as exc:
        session.notices.append(f"The computer cannot play: {exc}")


def _new_sim_game(variant, fen, players, session, store, settings, profile, clock, move_time: float = 1.0):
    """A new game on the simulated board, set up; the game in progress is left (abandoned if
    unfinished) only once the new one can start."""
    from board_driver.cli.play_cmds import _state_file
    from board_driver.config import load_variant
    from board_driver.host.lifecycle import abandon, replace_game, start
    from board_driver.sim.board import SimulatedBoard
    from engine.game import new_game
    if fen is None:
        new = replace_game(session, store, variant, profile=profile, settings=settings, players=players,
                           now=clock()).session
    else:
        v = load_variant(variant)           # "random" throws the dice here, once
        occ = new_game(v, fen).occupancy()  # a bad name or FEN fails here: the game goes on
        unfinished = session.outcome() is None and session.game_id is not None
        session.close()
        if unfinished:
            abandon(store, session.game_id)
        new = start(type(session), store, v.name, profile=profile, settings=settings, occupancy=occ, fen=fen,
                    players=players or session.players, now=clock())
    attach_computer(new, move_time)
    board = SimulatedBoard(new.layout, clock=clock, closed=new.layout.closed_sensors(new.game.occupancy()),
                           state_file=_state_file(store, new.game_id))
    board._save()
    return new, board


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


__all__ = ["WebConfig", "WebNewGame", "parse_listen", "play_web", "profile_web", "start_web"]
