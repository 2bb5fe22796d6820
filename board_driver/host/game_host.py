"""The game host: one owner of a game's life on a board, for every front end.

``fairyboard play`` (the terminal), ``play --web`` (the page), ``serve`` (the service) and an
events script are thin front ends over :class:`GameHost`. The host

* opens the game to play, or resumes it (:meth:`GameHost.open`): the players, the computer's
  spec and move time and the start position are journaled once, when the game starts, and a
  resume, a restart or a reconnect restores them from the journal; only what the user names
  again is journaled as a change;
* attaches the computer for the sides whose player is an engine spec;
* puts the game on its board (a :class:`Seat`): the simulated board is set up (or restored
  where its pieces were), a real board is read afresh and what changed while nobody watched
  is explained from the game;
* runs the real-time loop (:meth:`GameHost.run`) and replaces the game when a new one is asked
  for, from the console, a button or the page (:meth:`GameHost.replace`): the variant, the
  start position and the players are checked before the game in progress is left, and a
  refusal is an error message while the game goes on;
* reports the board's link (:meth:`GameHost.link`).

What the host says to the players goes to ``say`` (one line each); notes about the data
folder (a damaged record, a game left unfinished) go to ``note``.
"""

from __future__ import annotations

import math
import queue
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from board_driver.devices import LedSink, RawFrame, SensorSource
from board_driver.errors import BoardDriverError
from board_driver.host.lifecycle import LifecycleError, Opening, clock_spec, open_game, replace_game
from board_driver.journal import GameStore, load_any
from board_driver.opponents.computer import Computer, attach, check_players, looks_like_spec
from board_driver.opponents.players import PlayerError
from board_driver.referee.clock import TimeControl
from board_driver.referee.commands import HandOver, NewGame
from board_driver.referee.layout import BoardProfile, Layout
from board_driver.referee.runner import LoopCommand, run_realtime
from board_driver.referee.session import Session
from board_driver.referee.texts import COLOR, dice_lines
from board_driver.settings import DriverSettings
from board_driver.sim.board import SimulatedBoard
from engine.variant import Variant

if TYPE_CHECKING:
    from board_driver.remote.invitations import RemoteStart

MOVE_TIME = 1.0         # seconds the computer thinks a move, unless the game or the user says otherwise
MIN_MOVE_TIME = 0.01    # the range a move time is taken from (--move-time, a game record's)
MAX_MOVE_TIME = 3600.0


def move_time_ok(t: object) -> bool:
    """``t`` is a move time the computer can be given: a number of seconds in range."""
    return isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) \
        and MIN_MOVE_TIME <= t <= MAX_MOVE_TIME


@dataclass(frozen=True)
class GameRequest:
    """What the user asked for when starting a front end. ``None`` means "not named": a resumed
    game keeps its own; a new game takes the defaults (orthodox, White and Black, 1 s)."""

    variant: str | None = None
    new: bool = False
    resume: str | None = None           # a game id, or "current"
    fen: str | None = None
    white: str | None = None
    black: str | None = None
    move_time: float | None = None
    clock: str | None = None            # a time control (300+3 ...; "-": none); None: the default
    clock_mode: str | None = None       # "auto" (the board switches the clock) or "press"
    own: bool = False                   # a game of its own (an events script): never the one play resumes
    actions: tuple[str, ...] = ()       # a new game's first actions (--pgn: the game read, up to --ply)
    confirm: Callable[[str], bool] | None = None

    @classmethod
    def from_args(cls, args, *, own: bool = False, confirm: Callable[[str], bool] | None = None) -> GameRequest:
        """What a command line (``play``, ``serve``) asked for: only what it named. ``--pgn FILE``
        (``--ply N``) is read here, before any game is opened: a new game of its variant, from its
        start, with its actions up to that ply and its players (unless named)."""
        fen, white, black = getattr(args, "fen", None), getattr(args, "white", None), getattr(args, "black", None)
        variant: str | None = getattr(args, "variant", None)
        actions: tuple[str, ...] = ()
        pgn, ply = getattr(args, "pgn", None), getattr(args, "ply", None)
        if ply is not None and pgn is None:
            raise LifecycleError("--ply N: say the game to play on from with --pgn FILE")
        if pgn is not None:
            from board_driver.pgn_import import PgnImportError, read
            for option in ("fen", "resume"):
                if getattr(args, option, None) is not None:
                    raise PgnImportError(f"--pgn and --{option}: say one (--pgn starts a new game from the PGN)")
            imp = read(pgn, ply)
            if variant is not None and variant != imp.variant:
                raise PgnImportError(f"--pgn {pgn}: that game is {imp.variant}, not {variant}")
            variant, fen, actions = imp.variant, imp.fen, tuple(imp.actions)
            white = white or imp.players.get("white")
            black = black or imp.players.get("black")
        return cls(variant=variant, new=bool(getattr(args, "new", False) or pgn is not None),
                   resume=getattr(args, "resume", None), fen=fen, actions=actions,
                   white=white, black=black,
                   move_time=getattr(args, "move_time", None), clock=getattr(args, "clock", None),
                   clock_mode=getattr(args, "clock_mode", None), own=own, confirm=confirm)

    @property
    def players(self) -> dict[str, str] | None:
        named = {k: v for k, v in (("white", self.white), ("black", self.black)) if v}
        return named or None

    @property
    def wants_new(self) -> bool:
        return bool(self.new or self.fen or self.variant)


class Seat(Protocol):
    """The board a host plays on: devices, how a new game meets the pieces, and the link."""

    sim: bool

    def devices(self) -> tuple[SensorSource, LedSink]: ...

    def new_occupancy(self) -> Callable[[Variant], int] | None:
        """What a new game's board shows, per variant (None: the start position, set up)."""

    def mount(self, session: Session, resumed: bool) -> None: ...

    def driver_settings(self, settings: DriverSettings) -> DriverSettings:
        """The settings a game on this board plays with (``settings``, or less debouncing
        when the board debounces its sensors itself)."""
        ...

    def link(self) -> dict: ...

    def close(self) -> None: ...


class SimSeat:
    """The simulated board: a new game is set up by the players at once (the pieces stand on
    the start squares); a resumed one finds its pieces where they were (kept per game in
    ``<data>/simboard/ID.json``; a game of its own keeps no such file)."""

    sim = True

    def __init__(self, store: GameStore, clock: Callable[[], int], *, keep: bool = True):
        self.store = store
        self.clock = clock
        self.keep = keep
        self.board: SimulatedBoard | None = None

    def state_file(self, game_id: str) -> Path:
        return self.store.root / "simboard" / f"{game_id}.json"

    def new_occupancy(self):
        return None                     # the start position: the players set it up

    def mount(self, session: Session, resumed: bool) -> None:
        layout = session.layout
        state = self.state_file(session.game_id) if self.keep and session.game_id else None
        if resumed and state is not None:
            start = frozenset(layout.closed_sensors(session.occupancy))
            self.board = SimulatedBoard.restore(layout, clock=self.clock, state_file=state, default=start)
        else:
            self.board = SimulatedBoard(layout, clock=self.clock,
                                        closed=layout.closed_sensors(session.game.occupancy()), state_file=state)
            self.board.save()
        session.read_board(self.board.current())     # what changed while the program was not running

    def driver_settings(self, settings: DriverSettings) -> DriverSettings:
        return settings                 # the simulated sensors are debounced by the driver

    def devices(self) -> tuple[SimulatedBoard, SimulatedBoard]:
        assert self.board is not None, "mount a game first"
        return self.board, self.board

    def link(self) -> dict:
        return {"state": "simulated", "up": True}

    def close(self) -> None:
        pass


class HardwareSeat:
    """A real board: a new game is played on the pieces the board shows (the players set up
    what the LEDs ask for), and every game is read afresh from the sensors when it opens."""

    sim = False

    def __init__(self, source, sink: LedSink, profile: BoardProfile, *, first: RawFrame | None = None):
        self.source = source            # a WatchedSource (host/link.py)
        self.sink = sink
        self.profile = profile
        self.first = first

    def closed(self) -> frozenset[int]:
        last = getattr(self.source, "last", None) or self.first
        return last.closed if last is not None else frozenset()

    def new_occupancy(self):
        closed = self.closed()
        return lambda variant: Layout.place(self.profile, variant.geometry).occupancy(closed)

    def mount(self, session: Session, resumed: bool) -> None:
        frame = getattr(self.source, "last", None) or self.first
        if frame is not None:
            session.read_board(frame)   # what changed while the service was down

    def driver_settings(self, settings: DriverSettings) -> DriverSettings:
        """A board that debounces its sensors itself -- the Pico, whose OCCUPANCY frames report
        debounced states (:meth:`~board_driver.hardware.serial_board.SerialBoard.host_debounce_ms`)
        -- is not debounced again, so a change is acted on at the frame that reports it; a
        GPIO matrix's raw scans are debounced by the driver (``driver.debounce_ms``)."""
        choose = getattr(self.source, "host_debounce_ms", None)
        if choose is None:
            return settings
        ms = choose(settings.debounce_ms)
        return settings if ms == settings.debounce_ms else replace(settings, debounce_ms=ms)

    def devices(self):
        return self.source, self.sink

    def link(self) -> dict:
        up = getattr(self.source, "up", True)
        return {"state": "ready" if up else "disconnected", "up": bool(up),
                "lost": getattr(self.source, "lost", 0)}

    def close(self) -> None:
        pass


class GameHost:
    """One game's life on one board (see the module docstring)."""

    def __init__(self, store: GameStore, *, settings: DriverSettings, profile: BoardProfile, seat: Seat,
                 clock: Callable[[], int], say: Callable[[str], None] = print,
                 note: Callable[[str], None] | None = None, fsf_path: str | None = None,
                 background: bool = False, san_notices: bool = True, broker=None,
                 stopping: Callable[[], bool] = lambda: False):
        self.store = store
        self.settings = seat.driver_settings(settings)     # the board's own debounce counts
        self.profile = profile
        self.seat = seat
        self.clock = clock
        self.say = say
        self.note = note or say
        self.fsf_path = fsf_path
        self.background = background    # the computer thinks in a worker thread (the real-time loop)
        self.san_notices = san_notices
        self.session: Session | None = None
        self.resumed = False
        self.move_time = MOVE_TIME
        self.clock_spec: dict | None = None     # the time control new games get (the last one asked for)
        self.pending_clock: tuple[dict | None] | None = None  # (--clock asked at a resume,): for the next new game
        self.broker = broker            # the profile's broker: (BrokerConfig): remote games go through it
        self.stopping = stopping        # the front end is stopping (a handshake gives up)
        self._link: Any = None          # the remote game's link (a RemoteLink), made by the handshake
        self._loop: queue.Queue[LoopCommand] | None = None     # the running loop's commands (run)
        from board_driver.remote.invitations import Invitations
        self.invitations = Invitations(self)    # the page's boards online, invitations, accept, decline

    # -- opening ------------------------------------------------------------------------------
    def open(self, req: GameRequest) -> Session:
        """The game to play (resumed or new), its computer attached and its board mounted.
        An engine spec that cannot play the variant is refused before any game is created."""
        if req.move_time is not None and not move_time_ok(req.move_time):
            raise LifecycleError(f"move time {req.move_time!r}: seconds a move must be {MIN_MOVE_TIME:g} to "
                                 f"{MAX_MOVE_TIME:g}")
        remote = self._remote_request(req)
        computer = {"move_time": req.move_time} if req.move_time is not None else None
        self.clock_spec = clock_spec(self._clock_request(req))    # a bad time control fails before any game
        engines = None
        if (req.wants_new or req.players) and remote is None:
            variant = self._request_variant(req)
            check_players(req.players or {}, variant)
            # the engines named now start before any game is created, resumed or left
            engines = self._engines_first(req.players, variant, "--{side} {spec}")
        try:
            if remote is not None:
                opening = self._open_remote(req, *remote)
            else:
                opening = open_game(
                    self.store, profile=self.profile, settings=self.settings, variant=req.variant, new=req.new,
                    resume=req.resume, fen=req.fen, players=req.players,
                    occupancy=self.seat.new_occupancy(), now=self.clock(), own=req.own,
                    confirm=req.confirm, computer=computer, clock=self.clock_spec, actions=req.actions)
            return self._opened(req, opening, remote=remote is not None)
        finally:
            if engines is not None:
                engines.close()     # the game's own computer holds the engines now (the pool keeps them)

    def _opened(self, req: GameRequest, opening: Opening, *, remote: bool) -> Session:
        for line in self.store.problems + opening.notes:
            self.note(line)
        session = opening.session
        try:
            self._start(session, opening.resumed)
        except BaseException:
            session.close()
            raise
        if not opening.resumed and not remote:
            self._hold_clock(session)
        if opening.resumed:
            self.say(f"Resumed game {session.game_id} ({session.variant_name}), "
                     f"{len(session.game.history)} actions so far.")
            self._kept_clock(req, session)
        else:
            self.say(self._new_line(session))
        for line in dice_lines(session.variant_name):
            self.say(line)
        return session

    def _request_variant(self, req: GameRequest) -> Variant:
        """The variant the request plays: the one named, else the game it resumes (the one
        named by --resume, else the game in progress when unfinished), else orthodox. A bad
        name is the ConfigError the game would meet."""
        from board_driver.config import load_variant
        if req.variant is None and not req.new and not req.fen:
            gid = self.store.current() if req.resume in (None, "current") else req.resume
            try:
                rec = load_any(self.store.path(gid)) if gid else None
            except (OSError, ValueError, BoardDriverError):
                rec = None
            if rec is not None and rec.variant and (req.resume is not None or not rec.finished):
                try:
                    return load_variant(rec.variant)
                except (OSError, ValueError, BoardDriverError):
                    pass                # the resume says what is wrong with the record
        return load_variant(req.variant or "orthodox")

    def _engines_first(self, players: dict[str, str] | None, variant: Variant, label: str) -> Computer | None:
        """Start the engines ``players`` name (None when they name none) before a game is made
        for them: an engine that cannot start is a PlayerError naming the side (``label``, with
        ``{side}`` and ``{spec}``) and nothing has changed. The caller closes what this returns
        once the game's own computer holds the engines (the pool keeps the processes)."""
        if not players or not any(looks_like_spec(v or "") for v in players.values()):
            return None
        missing: list[tuple[int, str, PlayerError]] = []
        engines = Computer.for_players(players, variant, seconds=self.move_time, fsf_path=self.fsf_path,
                                       unavailable=missing)
        if missing:
            if engines is not None:
                engines.close()
            side, spec, exc = missing[0]
            why = str(exc)
            why = why[len(spec) + 2:] if why.startswith(f"{spec}: ") else why
            raise PlayerError(f"{label.format(side=COLOR[side], spec=spec)}: {why}; no game was started or "
                              f"left") from None
        return engines

    # -- a remote game (docs/remote.md) -----------------------------------------------------------
    def _remote_request(self, req: GameRequest) -> tuple[str, int] | None:
        """(the peer's board name, the side it plays) when a player is ``remote:BOARD``."""
        return self._remote_of(req.white, req.black)

    def _remote_of(self, white: str | None, black: str | None) -> tuple[str, int] | None:
        from board_driver.remote.hosting import remote_of
        from board_driver.remote.invitations import RemoteError
        try:
            return remote_of(white, black, self.broker)
        except RemoteError as exc:
            raise LifecycleError(str(exc)) from None

    def _open_remote(self, req: GameRequest, peer: str, side: int) -> Opening:
        """The remote game against ``peer``: the unfinished one in progress with it (resumed),
        else the one both boards agree on (an invitation, or the peer's accepted)."""
        from board_driver.config import load_variant
        from board_driver.remote.hosting import agree_game, header, keep_key
        from board_driver.remote.invitations import RemoteError
        current = self.store.current()
        if current is not None and not req.new and not req.fen and req.variant is None:
            rec = load_any(self.store.path(current))
            r = (rec.header.get("remote") or {}) if rec is not None else {}
            if rec is not None and not rec.finished and r.get("peer") == peer and r.get("side") == COLOR[side]:
                return open_game(self.store, profile=self.profile, settings=self.settings, resume=current,
                                 occupancy=self.seat.new_occupancy(), now=self.clock())
        assert self.broker is not None          # _remote_of said so
        variant = load_variant(req.variant or "orthodox")
        try:
            agreed, link = agree_game(self.broker, peer, side, variant=variant.name, fen=req.fen,
                                      clock=self.clock_spec, white=req.white, black=req.black, say=self.say,
                                      stop=self.stopping, known=lambda gid: self.store.path(gid).exists())
        except RemoteError as exc:
            raise LifecycleError(str(exc)) from None
        self.clock_spec = agreed.get("clock")
        self._link = link
        keep_key(self.store.path(agreed["game"]), agreed)
        return open_game(self.store, profile=self.profile, settings=self.settings, variant=agreed["variant"],
                         new=True, fen=agreed.get("fen"), players=agreed["players"],
                         occupancy=self.seat.new_occupancy(), now=self.clock(), confirm=req.confirm,
                         clock=self.clock_spec, game_id=agreed["game"],
                         header=header(peer, side, self.broker.name))

    def _attach_remote(self, session: Session) -> None:
        """A remote game's header names the peer: its side is played from the peer's board."""
        if session.game_id is None:
            return
        try:
            head = load_any(self.store.path(session.game_id)).header
        except (OSError, ValueError, BoardDriverError):
            return
        from board_driver.remote.hosting import attach_remote
        link, self._link = self._link, None
        attach_remote(session, head, self.broker, link, self.say, journal=self.store.path(session.game_id))

    def _kept_clock(self, req: GameRequest, session: Session) -> None:
        """A resumed game keeps the time control it was started with: a different ``--clock``
        is said to apply to the next new game, not silently dropped."""
        if req.clock is None:
            return
        asked = (self.clock_spec or {}).get("tc")
        has = session.clock.tc.text if session.clock is not None else None
        if asked != has:
            self.pending_clock = (self.clock_spec,)
            self.note(f"--clock {req.clock}: game {session.game_id} keeps its own time control "
                      f"({has or 'none'}); the next new game (`new`) gets {asked or 'none'}.")

    def _clock_request(self, req: GameRequest) -> dict | None:
        """The clock a new game gets: the one asked for, else the board profile's default."""
        default = getattr(self.profile, "clock", None) or {}
        if req.clock is not None and not req.clock.strip():
            TimeControl.parse(req.clock)        # a ClockError with the forms a time control takes
        tc = req.clock if req.clock is not None else default.get("tc")
        mode = req.clock_mode or default.get("mode") or "auto"
        return {"tc": tc, "mode": mode} if tc else None

    def _start(self, session: Session, resumed: bool) -> None:
        session.name_moves_in_san(self.san_notices)
        self.move_time = self._move_time(session)
        attach(session, seconds=self.move_time, fsf_path=self.fsf_path, background=self.background)
        self._attach_remote(session)
        self.seat.mount(session, resumed)
        self.session = session
        self.resumed = resumed

    def _hold_clock(self, session: Session) -> None:
        """On the board's service (the real-time loop: the page, ``serve``) a new game's clock
        waits for its first move or ``clock start``, as a DGT clock does; an events script's runs
        from its start, as its times say."""
        if self.background:
            session.time.hold_for_first_move()

    def _move_time(self, session: Session) -> float:
        if session.game_id is None:
            return MOVE_TIME
        try:
            header = load_any(self.store.path(session.game_id)).header
        except (OSError, ValueError, BoardDriverError):
            return MOVE_TIME
        t = (header.get("computer") or {}).get("move_time")
        if isinstance(t, (int, float)) and move_time_ok(t):
            return float(t)
        return MOVE_TIME                # none, or a record's out-of-range time: the default

    def _new_line(self, session: Session) -> str:
        tail = " The simulated board is set up." if self.seat.sim else ""
        return f"New game {session.game_id}: {session.variant_name}.{tail}"

    # -- a new game in place of this one ------------------------------------------------------
    def replace(self, req: HandOver) -> Session | None:
        """The new game ``req`` asks for, in place of the one in progress. A bad variant, FEN or
        player is said as an error and the game goes on (None). ``req.reply``, when set, is
        told the new game (``{"new_game": variant, "game": id}``) or the error."""
        old = self.session
        assert old is not None, "open a game first"
        from board_driver.remote.invitations import RemoteStart
        if isinstance(req, RemoteStart):
            return self._open_agreed(req, old)
        assert isinstance(req, NewGame), req
        try:
            remote = self._remote_of(*((req.players or {}).get(c) for c in COLOR))
            if remote is not None:       # a remote game: invited now, opened once the peer agrees
                from board_driver.config import load_variant
                answer = self.invitations.invite(remote[0], remote[1], variant=load_variant(req.variant).name,
                                                 fen=req.fen,
                                                 clock=self._replace_clock(req, old), players=req.players or {})
                if req.reply is not None and not req.reply.done():
                    req.reply.set_result(answer)
                return None
            engines = None
            if req.players:
                from board_driver.config import load_variant
                variant = load_variant(req.variant)
                check_players(req.players, variant)
                # an engine that cannot start is an error before the game in progress is left
                engines = self._engines_first(req.players, variant, "{side}: the engine {spec}")
            try:
                opening = replace_game(old, self.store, req.variant, profile=self.profile, settings=self.settings,
                                       occupancy=self.seat.new_occupancy(), players=req.players,
                                       now=self.clock(), fen=req.fen,
                                       computer={"move_time": self.move_time} if self.move_time != MOVE_TIME
                                       else None,
                                       clock=self._replace_clock(req, old))
            except BaseException:
                if engines is not None:
                    engines.close()
                raise
        except (LifecycleError, BoardDriverError, ValueError) as exc:
            self.say(f"error: {exc}")
            if req.reply is not None and not req.reply.done():
                req.reply.set_exception(exc if isinstance(exc, BoardDriverError) else LifecycleError(str(exc)))
            return None
        for line in opening.notes:
            self.note(line)
        self.invitations.new_game_started()     # an invitation's answer is old news under a new game
        session = opening.session
        self._hold_clock(session)
        try:
            self._start(session, False)         # a side whose engine cannot start is played by hand (attach)
        except BoardDriverError as exc:
            # the new game is on disk; the board cannot take it up as asked: the game goes on with people
            session.notify(f"The computer cannot play: {exc}")
            self.seat.mount(session, False)
            self.session = session
        finally:
            if engines is not None:
                engines.close()                 # the game's own computer holds the engines now
        self.say(self._new_line(session))
        for line in dice_lines(session.variant_name):
            self.say(line)
        if req.reply is not None and not req.reply.done():
            req.reply.set_result({"new_game": session.variant_name, "variant": session.variant_name,
                                  "game": session.game_id})
        return session

    def _open_agreed(self, req: RemoteStart, old: Session) -> Session | None:
        """The remote game both boards agreed on (:class:`.invitations.RemoteStart`), in place of
        the game in progress (left unfinished when it is)."""
        agreed = req.agreed
        assert self.broker is not None, "a remote game is agreed over the board's broker"
        from board_driver.remote.hosting import keep_key
        try:
            keep_key(self.store.path(agreed["game"]), agreed)
            opening = replace_game(old, self.store, agreed["variant"], profile=self.profile, settings=self.settings,
                                   occupancy=self.seat.new_occupancy(), players=dict(agreed["players"]),
                                   now=self.clock(), fen=agreed.get("fen"), clock=agreed.get("clock"),
                                   game_id=agreed["game"],
                                   header={"remote": {"peer": req.peer, "side": COLOR[req.side],
                                                      "me": self.broker.name}})
        except (LifecycleError, BoardDriverError, ValueError, OSError) as exc:
            req.link.close()
            self.say(f"error: {exc}")
            return None
        for line in opening.notes:
            self.note(line)
        self.clock_spec = agreed.get("clock")
        self._link = req.link
        session = opening.session
        self.invitations.new_game_started(agreed=True)
        self._start(session, False)
        self.say(self._new_line(session))
        self.invitations.changed()
        return session

    def _replace_clock(self, req: NewGame, old: Session) -> dict | None:
        """A new game keeps the time control of the game it replaces (or the one asked for)."""
        tc = getattr(req, "clock", None)
        pending, self.pending_clock = self.pending_clock, None
        if tc is not None:
            return clock_spec({"tc": tc, "mode": getattr(req, "clock_mode", None) or old.time.mode})
        if pending is not None:
            return pending[0]           # asked for when a game was resumed (_kept_clock)
        if old.clock is not None:
            return {"tc": old.clock.tc.text, "mode": old.time.mode}
        return self.clock_spec

    # -- the real-time loop ---------------------------------------------------------------------
    def run(self, *, commands: queue.Queue[LoopCommand] | None = None, stop: Callable[[], bool] = lambda: False,
            on_update: Callable[[Session], None] | None = None,
            wrap: Callable[[Session, SensorSource, LedSink], tuple[SensorSource, LedSink]] | None = None,
            on_session: Callable[[Session], None] | None = None) -> Session:
        """Frames, commands and the page's jobs in, LED frames out, until ``stop()``; a new game
        asked for on the way replaces the session. ``wrap(session, source, sink)`` lets a front
        end put its own layer on the devices (the page's pairing overlay); ``on_session`` is told
        of each session before its loop starts."""
        assert self.session is not None, "open a game first"
        self._loop = commands               # the handshake's words and its game go through the loop
        while True:
            session = self.session
            source, sink = self.seat.devices()
            if wrap is not None:
                source, sink = wrap(session, source, sink)
            if on_session is not None:
                on_session(session)
            req = run_realtime(session, source, sink, self.clock, commands=commands, stop=stop,
                               on_notice=self.say, on_update=on_update)
            if req is None:
                return session
            self.replace(req)

    def loop_queue(self) -> queue.Queue[LoopCommand] | None:
        """The running loop's command queue (None before :meth:`run`): what another thread says
        or asks for goes through it."""
        return self._loop

    def link(self) -> dict:
        """The board's link, as the page and the logs report it."""
        return self.seat.link()

    def close(self) -> None:
        self.invitations.close()
        if self.session is not None:
            self.session.close()
        self.seat.close()

    def goodbye(self) -> str:
        """The last line a front end says: where the game is and how to go on with it."""
        s = self.session
        if s is None:
            return "No game was opened."
        out = s.outcome()
        path = self.store.path(s.game_id) if s.game_id else None
        if out is None:
            return f"Game {s.game_id} saved in {path}; fairyboard play resumes it."
        return (f"Game {s.game_id} ({out.result}, {out.reason}) saved in {path}; "
                f"fairyboard games show {s.game_id} shows it.")
