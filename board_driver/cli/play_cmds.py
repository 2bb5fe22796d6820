"""``fairyboard play``: a game on the simulated board (or a scripted one, with --events)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from board_driver.config import load_variant
from board_driver.errors import BoardDriverError
from board_driver.host.lifecycle import open_game, replace_game
from board_driver.journal import GameStore, data_dir, load_any
from board_driver.opponents.computer import attach, carry_out, check_players
from board_driver.referee.commands import lookup
from board_driver.referee.runner import Display, pump, settle
from board_driver.referee.session import CommandError, NewGameRequest, Session
from board_driver.settings import load_profile, load_settings
from board_driver.sim.board import SimulatedBoard, SimulatorError, VirtualClock
from board_driver.sim.console import parse_physical, render_board, status_lines
from board_driver.sim.events import iter_events, play_events
from engine.errors import EngineError, SquareError
from engine.game import new_game
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
    p.add_argument("--new", action="store_true", help="start a new game even if one is in progress")
    p.add_argument("--resume", nargs="?", const="current", metavar="ID",
                   help="continue the game ID (an unfinished or abandoned one; fairyboard games list shows "
                        "them); without ID, the game in progress")
    p.add_argument("--events", metavar="FILE", help="play this JSON-lines event file ('-' for stdin), not the "
                                                    "terminal, as a game of its own (or the --resume ID one)")
    p.add_argument("--json", action="store_true", help="at exit print one JSON object: moves, fen, result, pending, journal")
    p.add_argument("--white", help="white player's name (kept in the game record and the PGN); an engine spec "
                                   "(computer, builtin[:LEVEL], random, fsf[:SKILL], uci:COMMAND) lets the "
                                   "computer play White")
    p.add_argument("--black", help="black player's name, or an engine spec (--black computer)")
    p.add_argument("--move-time", type=float, default=1.0, metavar="S",
                   help="seconds the computer thinks a move (default 1)")
    p.add_argument("--yes", "-y", action="store_true", help="leave an unfinished game without asking")
    p.add_argument("--board", help="board profile (configs/boards/NAME.yaml; default from configs/defaults.yaml)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the board with ANSI codes (default: when the output is a terminal)")
    p.add_argument("--web", nargs="?", const="", metavar="HOST:PORT",
                   help="serve the board's page (docs/web.md) instead of the terminal: at HOST:PORT, else at the "
                        "board profile's web.listen, else 127.0.0.1:8080")
    p.set_defaults(handler=cmd_play)


def _players(args, new: bool) -> dict[str, str] | None:
    if new:
        return {"white": args.white or "White", "black": args.black or "Black"}
    named = {k: v for k, v in (("white", args.white), ("black", args.black)) if v}
    return named or None


def _ask(question: str) -> bool:
    sys.stderr.write(question + " [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def _state_file(store: GameStore, gid: str) -> Path:
    """The simulated board's pieces, per game (a resumed game finds them where they were)."""
    return store.root / "simboard" / f"{gid}.json"


def _open_session(args, store: GameStore, settings, profile, clock: VirtualClock, *, own: bool):
    """The session to play (resumed or new) and its simulated board; notes go to stderr."""
    new_wanted = bool(args.new or args.fen or args.variant)
    start_occ = None
    if args.resume is None and (new_wanted or own):
        start_occ = new_game(load_variant(args.variant or "orthodox"), args.fen).occupancy()
    confirm = None
    if not own and not args.yes and sys.stdin.isatty() and args.resume is None:
        confirm = _ask
    if new_wanted or args.white or args.black:
        # an engine that cannot play the variant is refused before a game is created for it
        check_players({"white": args.white, "black": args.black}, load_variant(args.variant or "orthodox"))
    opening = open_game(store, profile=profile, settings=settings, variant=args.variant, new=bool(args.new),
                        resume=args.resume, fen=args.fen, players=_players(args, args.resume is None),
                        occupancy=start_occ, now=clock(), own=own and args.resume is None, confirm=confirm)
    for note in store.problems + opening.notes:
        print(f"fairyboard play: {note}", file=sys.stderr)
    session = opening.session
    try:
        attach(session, seconds=args.move_time)
    except BoardDriverError:
        session.close()
        raise
    state = None if own and args.resume is None else _state_file(store, session.game_id)
    if opening.resumed:
        start = frozenset(session.layout.closed_sensors(session.occupancy))
        board = SimulatedBoard.restore(session.layout, clock=clock, state_file=state, default=start)
    else:
        # a new game on the simulated board: the players have set up the pieces
        board = SimulatedBoard(session.layout, clock=clock,
                               closed=session.layout.closed_sensors(session.occupancy), state_file=state)
        board._save()
    return session, board, opening.resumed


def cmd_play(args) -> int:
    settings = load_settings()
    profile = load_profile(args.board or settings.board)
    store = GameStore(data_dir())
    clock = VirtualClock(0)
    if args.resume is not None and args.resume != "current":
        store.path(args.resume)                   # a clear error for anything that is not a game id
    with store.lock("fairyboard play"):          # one process per data folder
        if args.web is not None and args.events is None:
            from board_driver.web.service import play_web
            return play_web(args, store, settings, profile, args.board or settings.board)
        if args.events is not None:
            return _play_events(args, store, settings, profile, clock)
        return _play_interactive(args, store, settings, profile, clock)


def _play_events(args, store, settings, profile, clock) -> int:
    # the file is read twice, line by line, never whole: checked before any game is created,
    # then played (standard input is spooled to a temporary file first)
    spool = None
    if args.events == "-":
        spool = tempfile.TemporaryFile("w+", encoding="utf-8")
        shutil.copyfileobj(sys.stdin, spool)
        source = "<stdin>"
    else:
        try:
            Path(args.events).open(encoding="utf-8").close()
        except OSError as exc:
            raise BoardDriverError(f"--events {args.events}: cannot read: {exc.strerror or exc}") from None
        source = args.events

    def lines():
        if spool is not None:
            spool.seek(0)
            yield from spool
        else:
            with open(args.events, encoding="utf-8") as f:
                yield from f
    name = args.variant
    if name is None:
        gid = store.current() if args.resume == "current" else args.resume
        name = load_any(store.path(gid)).variant if gid and store.path(gid).exists() else "orthodox"
    geometry = load_variant(name).geometry
    for _ in iter_events(lines(), geometry, source):    # every line checked before any game is created
        pass
    events = iter_events(lines(), geometry, source)
    session, board, resumed = _open_session(args, store, settings, profile, clock, own=True)
    display = Display(board)
    session.san_notices = not args.json
    try:
        warnings = play_events(session, board, clock, events, display)
    except NewGameRequest as req:
        session.close()
        raise BoardDriverError(f"'new {req.variant}' is not available in an event file: run play again") from None
    report = session.report()
    report["warnings"] = warnings
    report["resumed"] = resumed
    session.close()
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
        print(f"Moves: {' '.join(report['moves']) or '(none)'}")
        print(f"Saved: {report['journal']}")
    return 0


def dice_lines(variant_name: str) -> list[str]:
    """For a Random Variant Chess game (``random-A-B-C``): which array the dice chose and why."""
    if not variant_name.startswith("random-"):
        return []
    from engine import random_variant
    try:
        rv = random_variant.select(variant_name[len("random-"):])
    except (ValueError, EngineError):
        return []

    def title(name: str) -> str:
        return " ".join(w.capitalize() for w in name.split("-"))
    dice = "-".join(map(str, rv.dice))
    out = [f"The dice: {dice}. They select Tomorrow's Chess {rv.base}'s array, by the rule: {rv.description}.",
           "Back rank (file a to l): " + ", ".join(title(n) for n in rv.back_rank) + "."]
    stand = [f"{title(q)} as {title(p)}" for p, q in zip(rv.physical, rv.back_rank) if p != q]
    if stand:
        out.append("Stand-ins on the board: " + ", ".join(stand) + ".")
    return out


def _use_color(args) -> bool:
    if args.color == "always":
        return True
    if args.color == "never":
        return False
    return sys.stdout.isatty()


def _play_interactive(args, store, settings, profile, clock) -> int:
    color = _use_color(args)
    session, board, resumed = _open_session(args, store, settings, profile, clock, own=False)
    display = Display(board)
    out = sys.stdout
    print(INTRO)
    if resumed:
        print(f"Resumed game {session.game_id} ({session.variant_name}), {len(session.game.history)} actions so far.")
        for line in dice_lines(session.variant_name):
            print(line)
    else:
        print(f"New game {session.game_id}: {session.variant_name}. The simulated board is set up.")
        for line in dice_lines(session.variant_name):
            print(line)
    pump(session, board, display, clock())
    session.read_board(board.current())           # what changed while the program was not running
    display.update(session)
    settle(session, display)
    _show(session, board, color)
    _demo(session, board, display, clock, color)
    while True:
        out.write(PROMPT)
        out.flush()
        line = sys.stdin.readline()
        if not line:
            print()
            break
        text = line.strip()
        if not text:
            continue
        own = lookup(text.split()[0])
        own = own.name if own is not None and own.handler is None else None    # the console's own commands
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
                    print(" ".join(a.text for a in session.game.history) or "(no moves yet)")
                    continue
                for reply in session.command(text, clock()):
                    print(reply)
            else:
                for op in ops:
                    _do(op, board, session, display, clock)
        except NewGameRequest as req:
            try:
                session, board = _new_game(req.variant, session, store, settings, profile, clock, args)
                display = Display(board)
            except (ValueError, BoardDriverError) as exc:
                print(f"error: {exc}")
        except (CommandError, SimulatorError, ValueError, BoardDriverError) as exc:
            print(f"error: {exc}")
        pump(session, board, display, clock())
        settle(session, display)
        session.prepare()
        _show(session, board, color)
        _demo(session, board, display, clock, color)
    out = session.outcome()
    if out is None:
        print(f"Game {session.game_id} saved in {store.path(session.game_id)}; fairyboard play resumes it.")
    else:
        print(f"Game {session.game_id} ({out.result}, {out.reason}) saved in {store.path(session.game_id)}; "
              f"fairyboard games show {session.game_id} shows it.")
    session.close()
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


def _new_game(variant, session, store, settings, profile, clock, args):
    opening = replace_game(session, store, variant, profile=profile, settings=settings, now=clock())
    new = opening.session
    attach(new, seconds=args.move_time)
    board = SimulatedBoard(new.layout, clock=clock, closed=new.layout.closed_sensors(new.occupancy),
                           state_file=_state_file(store, new.game_id))
    board._save()
    for note in opening.notes:
        print(note[0].upper() + note[1:] + ".")
    print(f"New game {new.game_id}: {new.variant_name}. The simulated board is set up.")
    for line in dice_lines(new.variant_name):
        print(line)
    return new, board


def _show(session: Session, board: SimulatedBoard, color: bool) -> None:
    for n in session.drain_notices():
        print(n)
    print(render_board(session, board, color=color))
    for line in status_lines(session):
        print(line)
