"""``fairyboard play``: a game on the simulated board (or a scripted one, with --events)."""

from __future__ import annotations

import json
import sys

from board_driver.config import load_variant
from board_driver.errors import BoardDriverError
from board_driver.host.game_host import GameHost, GameRequest, SimSeat
from board_driver.journal import GameStore, data_dir, load_any
from board_driver.opponents.computer import carry_out
from board_driver.remote.side import parse_spec
from board_driver.referee.commands import lookup
from board_driver.referee.runner import Display, pump, settle
from board_driver.referee.session import CommandError, Session
from board_driver.settings import load_profile, load_settings
from board_driver.sim.board import SimulatedBoard, SimulatorError, VirtualClock
from board_driver.sim.console import parse_physical, render_board, status_lines
from board_driver.sim.events import EventScript, play_events
from engine.errors import SquareError
from engine.geometry import FILE_LETTERS

PROMPT = "fairyboard> "
INTRO = """\
fairyboard on the simulated board. Move pieces as on the real board:
  lift e2 / place e4 / e2-e4 (both; an occupied target is lifted first: a capture)
Type help for the commands (choose, takeback, resign, new ...), quit to stop.
The game is saved as you play; fairyboard play resumes it."""


def register(sub) -> None:
    p = sub.add_parser(
        "play", help="play a game on the simulated board (the default board)",
        description="Play on the simulated board in the terminal: move pieces with lift/place "
                    "(or e2-e4), answer prompts with choose. Resumes the game in progress unless "
                    "--new, --fen or another --variant is given (the game left is named on stderr, "
                    "and --resume ID continues it). With --events FILE it plays a JSON-lines "
                    "event script in virtual time instead, as a game of its own.")
    p.add_argument("--variant", help="variant to play (default: the game in progress, else orthodox)")
    p.add_argument("--fen", help="start a new game from this position")
    add_pgn_args(p)
    p.add_argument("--new", action="store_true", help="start a new game even if one is in progress")
    p.add_argument("--resume", nargs="?", const="current", metavar="ID",
                   help="continue the game ID (an unfinished or abandoned one; fairyboard games list shows "
                        "them); without ID, the game in progress")
    p.add_argument("--events", metavar="FILE", help="play this JSON-lines event file ('-' for stdin), not the "
                                                    "terminal, as a game of its own (or the --resume ID one); "
                                                    "with --web, on the served game at the script's times")
    p.add_argument("--json", action="store_true", help="at exit print one JSON object: moves, fen, result, pending, journal")
    p.add_argument("--white", help="white player's name (kept in the game record and the PGN); an engine spec "
                                   "lets the computer play White: computer or builtin (full strength), "
                                   "builtin:1 to builtin:3 (looks one to three turns ahead: the weaker levels), "
                                   "random, fsf[:SKILL] (SKILL -20 to 20), uci:COMMAND; with --web, remote:BOARD is the player "
                                   "on another board (docs/remote.md)")
    p.add_argument("--black", help="black player's name, or an engine spec (--black computer)")
    add_move_time_arg(p)
    add_clock_args(p)
    p.add_argument("--yes", "-y", action="store_true", help="leave an unfinished game without asking")
    p.add_argument("--board", help="board profile (configs/boards/NAME.yaml; default from configs/defaults.yaml)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the board with ANSI codes (default: when the output is a terminal)")
    p.add_argument("--web", nargs="?", const="", metavar="HOST:PORT",
                   help="serve the board's page (docs/web.md) instead of the terminal: at HOST:PORT, else at the "
                        "board profile's web.listen, else 127.0.0.1:8080")
    p.set_defaults(handler=cmd_play)


def add_pgn_args(p) -> None:
    """--pgn FILE and --ply N, for play and serve."""
    p.add_argument("--pgn", metavar="FILE",
                   help="start a new game from a PGN file's first game ('-' for stdin), played on from its "
                        "end or from --ply: its variant (the FairyboardVariant tag, else Variant, else orthodox), "
                        "start (FEN) and players (White/Black, unless named); the moves are kept as the game's "
                        "history (takeback works) and the board asks for the position to be set up")
    p.add_argument("--ply", type=_ply, metavar="N",
                   help="with --pgn: play on after the first N turns (half-moves; 0: from its start)")


def _ply(text: str) -> int:
    import argparse
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"a number of turns (0 or more), not {text[:40]!r}")
    return n


def move_time(text: str) -> float:
    """``--move-time``: seconds the computer thinks a move, a number from 0.01 to 3600."""
    import argparse
    import math

    from board_driver.host.game_host import MAX_MOVE_TIME, MIN_MOVE_TIME
    try:
        s = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seconds a move (a number from {MIN_MOVE_TIME:g} to {MAX_MOVE_TIME:g}), "
                                         f"not {text[:40]!r}") from None
    if not math.isfinite(s) or not MIN_MOVE_TIME <= s <= MAX_MOVE_TIME:
        raise argparse.ArgumentTypeError(f"seconds a move must be {MIN_MOVE_TIME:g} to {MAX_MOVE_TIME:g}, "
                                         f"not {text[:40]}")
    return s


def add_move_time_arg(p) -> None:
    """--move-time S, for play and serve."""
    p.add_argument("--move-time", type=move_time, metavar="S",
                   help="seconds the computer thinks a move, 0.01 to 3600 (default: what the game was started "
                        "with, else 1; kept in the game record)")


def time_control(text: str) -> str:
    """``--clock``: a time control TimeControl reads (its message when it cannot), as given."""
    import argparse

    from board_driver.referee.clock import ClockError, TimeControl
    try:
        TimeControl.parse(text)
    except ClockError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_clock_args(p) -> None:
    """--clock TC and --clock-mode, for play, serve and match."""
    p.add_argument("--clock", metavar="TC", type=time_control,
                   help="a chess clock for a new game, in PGN TimeControl syntax: 300 (sudden death), 300+3 "
                        "(increment), 40/5400+30:1800+30 (periods), d300+5 (simple delay), - (none); "
                        "time odds: White's, a comma, Black's (300+3,180+3); "
                        "default: the board profile's clock, else none. A resumed game keeps its own")
    p.add_argument("--clock-mode", choices=("auto", "press"),
                   help="auto: the board switches the clock when a move is made (default); press: the players "
                        "switch it (the end button, the page's clock button, the press command)")


def _ask(question: str) -> bool:
    sys.stderr.write(question + " [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def cmd_play(args) -> int:
    settings = load_settings()
    profile = load_profile(args.board or settings.board)
    store = GameStore(data_dir())
    if args.resume is not None and args.resume != "current":
        store.path(args.resume)                   # a clear error for anything that is not a game id
    if args.web is None and any(parse_spec(v or "") for v in (args.white, args.black)):
        # the terminal and an events file run in virtual time, a line at a time: the peer's
        # moves would wait for the next line typed (docs/remote.md)
        raise BoardDriverError("a remote player (remote:BOARD) plays in real time: use play --web or serve")
    with store.lock("fairyboard play"):          # one process per data folder
        if args.web is not None:
            from board_driver.web.service import play_web
            from board_driver.club.broker import broker_of
            from board_driver.settings import read_profile
            path, data = read_profile(args.board or settings.board)
            return play_web(args, store, settings, profile, args.board or settings.board,
                            broker=broker_of(data, str(path)))
        if args.events is not None:
            return _play_events(args, store, settings, profile)
        return _play_interactive(args, store, settings, profile)


def _note(line: str) -> None:
    print(f"fairyboard play: {line}", file=sys.stderr)


def _play_events(args, store, settings, profile) -> int:
    clock = VirtualClock(0)
    req = GameRequest.from_args(args, own=True)         # a --pgn is read before anything else
    name = req.variant
    if name is None:
        gid = store.current() if args.resume == "current" else args.resume
        name = load_any(store.path(gid)).variant if gid and store.path(gid).exists() else "orthodox"
    script = EventScript(args.events, load_variant(name).geometry)
    script.check()                                      # every line checked before any game is created
    own = args.resume is None
    seat = SimSeat(store, clock, keep=not own)
    host = GameHost(store, settings=settings, profile=profile, seat=seat,
                    clock=clock, say=lambda line: None, note=_note, san_notices=not args.json)
    session = host.open(req)
    board = seat.board
    assert board is not None
    display = Display(board)
    try:
        warnings = play_events(session, board, clock, script.events(), display)
    except BoardDriverError:
        host.close()
        raise
    report = session.report()
    report["warnings"] = warnings
    report["resumed"] = host.resumed
    shown = "" if args.json else numbered_moves(session.game)
    host.close()
    if args.json:
        print(json.dumps(report))
    else:
        for n in session.drain_notices():
            print(n)
        for w in warnings:
            print(f"warning: event {w['event']}: {w['warning']}", file=sys.stderr)
        print(render_board(session, board, color=_use_color(args)))
        for line in status_lines(session):
            print(line)
        print(f"Moves: {shown or '(none)'}")
        print(f"Saved: {report['journal']}")
    return 0


def _use_color(args) -> bool:
    if args.color == "always":
        return True
    if args.color == "never":
        return False
    return sys.stdout.isatty()


def _play_interactive(args, store, settings, profile) -> int:
    color = _use_color(args)
    clock = VirtualClock(0)
    confirm = _ask if not args.yes and sys.stdin.isatty() and args.resume is None else None
    seat = SimSeat(store, clock)
    said: list[str] = []                   # what opening the game says, printed after the welcome
    opened = False

    def say(line: str) -> None:
        if opened:
            print(line)
        else:
            said.append(line)
    host = GameHost(store, settings=settings, profile=profile, seat=seat, clock=clock,
                    say=say, note=_note)
    # the arguments are checked (variant, FEN, players, clock, move time) and the game opened
    # before anything is printed: a bad argument is one line on stderr, no welcome before it
    session = host.open(GameRequest.from_args(args, confirm=confirm))
    print(INTRO)
    for line in said:
        print(line)
    opened = True
    board = seat.board
    assert board is not None
    display = Display(board)
    pump(session, board, display, clock())
    display.update(session)
    settle(session, display)
    _show(session, board, color)
    _demo(session, board, display, clock, color)
    while True:
        sys.stdout.write(PROMPT)
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            print()
            break
        text = line.strip()
        if not text:
            continue
        entry = lookup(text.split()[0])
        own = entry.name if entry is not None and entry.handler is None else None    # the console's own commands
        if own == "quit":
            break
        clock.advance_to(clock() + 1000)
        try:
            ops = parse_physical(text)
            if ops is None:
                if own == "board":
                    _show(session, board, color)
                    continue
                if own == "moves":
                    print(numbered_moves(session.game) or "(no moves yet)")
                    continue
                for reply in session.command(text, clock()):
                    print(reply)
                req = session.take_handover()
                if req is not None:         # new: the game host replaces the game
                    replaced = host.replace(req)
                    if replaced is not None and seat.board is not None:
                        session, board = replaced, seat.board
                        display = Display(board)
            else:
                for op in ops:
                    _do(op, board, session, display, clock)
        except (CommandError, SimulatorError, ValueError, BoardDriverError) as exc:
            print(f"error: {exc}")
        pump(session, board, display, clock())
        settle(session, display)
        session.prepare()
        _show(session, board, color)
        _demo(session, board, display, clock, color)
    print(host.goodbye())
    host.close()
    return 0


def _demo(session: Session, board: SimulatedBoard, display: Display, clock: VirtualClock, color: bool) -> None:
    """The computer on both sides: the simulated board carries out its moves, one after the
    other, until the game is over."""
    c = session.computer
    if c is None or not (c.plays(0) and c.plays(1)):
        return
    for _ in range(2000):
        if session.outcome() is not None:
            break
        clock.advance_to(clock() + 1000)

        def step(kind: str, sq: str) -> None:
            clock.advance_to(clock() + 150)
            getattr(board, kind)(sq)
            pump(session, board, display, clock())

        if not carry_out(session, step):
            break
        clock.advance_to(clock() + 1000)
        pump(session, board, display, clock())
        settle(session, display)
        _show(session, board, color)


def _do(op, board: SimulatedBoard, session: Session, display: Display, clock: VirtualClock) -> None:
    def step(kind: str, sq: str) -> None:
        clock.advance_to(clock() + 150)
        getattr(board, kind)(sq)
        pump(session, board, display, clock())
    geo = session.game.geometry
    for sq in (op.a, op.b):
        if sq:
            try:
                geo.parse(sq)
            except SquareError as exc:
                if "hole" in str(exc):
                    raise SimulatorError(f"{sq} is a hole in this board: no piece can stand there") from None
                raise SimulatorError(f"{sq} is not on the board (files a-{FILE_LETTERS[geo.files - 1]}, "
                                     f"ranks 1-{geo.ranks})") from None
    if op.kind == "move":
        if not board.occupied(op.a):
            raise SimulatorError(f"there is no piece on {op.a} to move")
        if board.occupied(op.b):
            step("lift", op.b)
        step("lift", op.a)
        step("place", op.b)
    else:
        step(op.kind, op.a)


def numbered_moves(game) -> str:
    """The moves so far as a person reads them: SAN with move numbers (``1. c4 e5 2. Nc3``)."""
    from board_driver.pgn import fullmove, movetext, sans_of
    sans = sans_of(game)
    if not sans:
        return ""
    g = game.copy()
    while g.history:
        g.pop()
    return movetext(sans, fullmove(g.fen()))


def _show(session: Session, board: SimulatedBoard, color: bool) -> None:
    for n in session.drain_notices():
        print(n)
    print(render_board(session, board, color=color))
    for line in status_lines(session):
        print(line)
