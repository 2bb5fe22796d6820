"""``fairyboard play``: a game on the simulated board (or a scripted one, with --events)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..config import load_variant
from ..console import parse_physical, render_board, status_lines
from ..errors import BoardDriverError
from ..events import parse_events, play_events
from ..journal import GameStore, data_dir, load_record
from ..runner import Display, pump, settle
from ..session import CommandError, NewGameRequest, Session
from ..settings import load_profile, load_settings
from ..simulator import SimulatedBoard, SimulatorError, VirtualClock

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
                    "--new or another --variant is given. With --events FILE it plays a JSON-lines "
                    "event script in virtual time instead.")
    p.add_argument("--variant", help="variant to play (default: the game in progress, else orthodox)")
    p.add_argument("--fen", help="start a new game from this position")
    p.add_argument("--new", action="store_true", help="start a new game even if one is in progress")
    p.add_argument("--resume", action="store_true", help="with --events: continue the game in progress")
    p.add_argument("--events", metavar="FILE", help="play this JSON-lines event file ('-' for stdin), not the terminal")
    p.add_argument("--json", action="store_true", help="at exit print one JSON object: moves, fen, result, pending, journal")
    p.add_argument("--white", default="White", help="white player's name")
    p.add_argument("--black", default="Black", help="black player's name")
    p.add_argument("--board", help="board profile (configs/boards/NAME.yaml; default from configs/defaults.yaml)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the board with ANSI codes (default: when the output is a terminal)")
    p.set_defaults(handler=cmd_play)


def _open_session(args, store: GameStore, settings, profile, clock: VirtualClock, *, interactive: bool):
    """The session to play (resumed or new) and its simulated board."""
    state_file = store.root / "simboard.json"
    resume = interactive or args.resume
    if args.resume and not args.new:
        gid = store.current()
        rec = load_record(store.path(gid)) if gid else None
        if rec is None or rec.finished or (args.variant and args.variant != rec.variant):
            raise BoardDriverError("--resume: there is no unfinished game of that variant to resume")
    variant = args.variant or (None if resume else "orthodox")
    start_occ = None
    if not resume or args.new or args.fen or variant is not None:
        from engine.game import new_game
        start_occ = new_game(load_variant(variant or "orthodox"), args.fen).occupancy()
    session, resumed = Session.open(store, profile=profile, settings=settings, variant=variant,
                                    new=args.new or not resume, fen=args.fen, occupancy=start_occ,
                                    players={"white": args.white, "black": args.black}, now=clock())
    if resumed:
        start = frozenset(session.layout.closed_sensors(session.occupancy))
        board = SimulatedBoard.restore(session.layout, clock=clock, state_file=state_file, default=start)
    else:
        # a new game on the simulated board: the players have set up the pieces
        board = SimulatedBoard(session.layout, clock=clock,
                               closed=session.layout.closed_sensors(session.occupancy), state_file=state_file)
        board._save()
    return session, board, resumed


def cmd_play(args) -> int:
    settings = load_settings()
    profile = load_profile(args.board, settings)
    store = GameStore(data_dir())
    clock = VirtualClock(0)
    with store.lock("fairyboard play"):          # one process per data folder
        if args.events is not None:
            return _play_events(args, store, settings, profile, clock)
        return _play_interactive(args, store, settings, profile, clock)


def _play_events(args, store, settings, profile, clock) -> int:
    if args.events == "-":
        lines = sys.stdin.read().splitlines()
        source = "<stdin>"
    else:
        try:
            lines = Path(args.events).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise BoardDriverError(f"--events {args.events}: cannot read: {exc.strerror or exc}") from None
        source = args.events
    name = args.variant
    if name is None:
        current = store.current() if args.resume else None
        name = load_record(store.path(current)).variant if current else "orthodox"
    events = parse_events(lines, load_variant(name).geometry, source)   # before any game is created
    session, board, resumed = _open_session(args, store, settings, profile, clock, interactive=False)
    display = Display(board)
    session.san_notices = not args.json
    try:
        warnings = play_events(session, board, clock, events, display)
    except NewGameRequest as req:
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


def _use_color(args) -> bool:
    if args.color == "always":
        return True
    if args.color == "never":
        return False
    return sys.stdout.isatty()


def _play_interactive(args, store, settings, profile, clock) -> int:
    color = _use_color(args)
    session, board, resumed = _open_session(args, store, settings, profile, clock, interactive=True)
    display = Display(board)
    out = sys.stdout
    print(INTRO)
    if resumed:
        print(f"Resumed game {session.game_id} ({session.variant_name}), {len(session.game.history)} actions so far.")
    else:
        print(f"New game {session.game_id}: {session.variant_name}. The simulated board is set up.")
    pump(session, board, display, clock())
    board.queue.append(board.current())
    pump(session, board, display, clock())
    settle(session, display)
    _show(session, board, color)
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
        if text.lower() in ("quit", "exit", "q"):
            break
        clock.advance_to(clock() + 1000)
        try:
            ops = parse_physical(text)
            if ops is None:
                low = text.split()[0].lower()
                if low in ("board", "show"):
                    _show(session, board, color)
                    continue
                if low == "moves":
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
    print(f"Game {session.game_id} saved in {store.path(session.game_id)}; fairyboard play resumes it.")
    session.close()
    return 0


def _do(op, board: SimulatedBoard, session: Session, display: Display, clock: VirtualClock) -> None:
    def step(kind: str, sq: str) -> None:
        clock.advance_to(clock() + 150)
        getattr(board, kind)(sq)
        pump(session, board, display, clock())
    geo = session.game.geometry
    for sq in (op.a, op.b):
        if sq:
            geo.parse(sq)
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
    from engine.game import new_game
    occ = new_game(load_variant(variant)).occupancy()      # an unknown name fails here: the game goes on
    session.close()
    new, _ = Session.open(store, profile=profile, settings=settings, variant=variant, new=True, occupancy=occ,
                          players={"white": args.white, "black": args.black}, now=clock())
    board = SimulatedBoard(new.layout, clock=clock, closed=new.layout.closed_sensors(occ),
                           state_file=store.root / "simboard.json")
    board._save()
    print(f"New game {new.game_id}: {variant}. The simulated board is set up.")
    return new, board


def _show(session: Session, board: SimulatedBoard, color: bool) -> None:
    for n in session.drain_notices():
        print(n)
    print(render_board(session, board, color=color))
    for line in status_lines(session):
        print(line)
