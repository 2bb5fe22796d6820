"""The command language: one registry of every command a player can give, which the console,
the buttons and ``help`` all read.

A command is a word and its arguments (``choose q``, ``resign black``, ``buy N``). Most are
carried out by the session (:func:`run`); a few belong to the terminal that reads them
(``board``, ``moves``, ``quit``: the simulator's console handles those itself, and they are
listed here so that ``help`` names them). Silent commands -- ``pass``, ``end``, ``buy``,
``design``, ``invent``, ``setup`` -- are actions the board cannot see: they are parsed by the
game and applied like a move.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from board_driver.errors import BoardDriverError
from board_driver.referee.opponent import PeerRequests
from board_driver.referee.reconcile import VerdictStatus as VS
from board_driver.referee.texts import COLOR, option_list, taken_back_text
from engine.contract import ActionKind, Termination
from engine.errors import EngineError, IllegalMoveError

if TYPE_CHECKING:
    from engine.contract import Game
    from board_driver.referee.session import Session


class CommandError(BoardDriverError, ValueError):
    """A console command cannot be carried out now."""


class HandOver:
    """A command for the game host, not the session: the loop ends and hands it over (the game
    host owns the devices and replaces the session). It comes on the loop's command queue
    (the page's ``POST /api/new``, an agreed remote game) or from a command the session carried
    out (``new``: :meth:`.session.Session.take_handover`)."""

    reply: Future | None = None


@dataclass
class NewGame(HandOver):
    """A new game is asked for (the ``new`` command, a button, the page).

    ``fen`` and ``players`` are what the asker named (None: the start position, and the
    players of the game in progress). ``reply`` is told the outcome when someone waits for it
    (the page's ``POST /api/new``): the new game's id, or the error that kept the old game on.
    """

    variant: str
    fen: str | None = None
    players: dict[str, str] | None = None
    clock: str | None = None            # a time control for the new game (None: the same as before)
    clock_mode: str | None = None
    reply: Future | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Command:
    """One entry of the registry."""

    name: str
    usage: str                      # as help shows it: "choose X"
    help: str                       # one line
    handler: Callable | None = None     # (session, word, args) -> replies; None: the terminal's own
    aliases: tuple[str, ...] = ()
    button: bool = True             # a button may send it
    silent: bool = False            # an action the board cannot see (parsed by the game)

    @property
    def words(self) -> tuple[str, ...]:
        return (self.name,) + self.aliases


BOARD_HELP = "lift e2 | place e4 | e2-e4 (lift e2, place e4; an occupied e4 is lifted first)"


def _cmd_help(session: Session, cmd, args) -> list[str]:
    lines = help_lines()
    verbs = session.game.silent_verbs()
    if verbs:
        lines.append(f"In {session.variant_name}:")
        lines.extend(f"          {verb:<9}{what}" for verb, what in verbs.items())
    return lines


def _cmd_choose(session: Session, cmd, args) -> list[str]:
    t = session.tentative
    v = session.verdict
    prompt = v if v.status == VS.PROMPT else (t.verdict if t is not None and t.verdict.status == VS.PROMPT else None)
    key = " ".join(args).lower()
    if prompt is not None:
        opts = list(prompt.options)
        if not key:
            if prompt.default is None:
                raise CommandError("this prompt has no default: choose one of " + option_list(prompt))
            pick = opts[prompt.default]
        elif key.isdigit() and 1 <= int(key) <= len(opts):
            pick = opts[int(key) - 1]
        else:
            key = _piece_key(session.game, key)
            picks = [o for o in opts if key in o.keys()]
            if len(picks) != 1:
                raise CommandError(f"{' '.join(args)!r} is not one of the options: {option_list(prompt)}")
            pick = picks[0]
        mark = t.mark if t is not None and t.verdict is prompt else len(session.events)
        session.commit(pick, mark)
        return [f"Chosen: {pick.label}."]
    if not key:
        raise CommandError("there is no prompt to answer")
    choice = _piece_key(session.game, key)
    session.note_choice(choice)
    return [f"Noted: {choice} for the next choice (promotion or reserve piece)."]


def _piece_key(game: Game, key: str) -> str:
    """Piece names become letters: ``queen`` -> ``q``."""
    if len(key) > 1 and key.isalpha() and "@" not in key:
        try:
            return game.variant.pieces[game.variant.piece_index(key)].letter
        except (EngineError, ValueError, IndexError):
            return key
    return key


def _ready_for_silent(session: Session, cmd: str) -> None:
    v = session.verdict
    if session.recover or v.status == VS.MISMATCH:
        raise CommandError(f"{cmd}: first make the board match the game (" + session.fix_text(v.fix) + ")")
    if v.status == VS.PENDING:
        raise CommandError(f"{cmd}: a move is under way on the board: finish it or put the pieces back first")
    if v.status in (VS.HOLD, VS.PROMPT):
        chosen = v.chosen
        if chosen is None:
            raise CommandError(f"{cmd}: first answer the prompt: " + option_list(v))
        session.commit(chosen, len(session.events))


def _cmd_silent(session: Session, cmd, args) -> list[str]:
    """pass, end, buy, design, invent, setup: actions the board cannot see."""
    g = session.game
    head = cmd.split(":")[0]
    text = " ".join(args) if head == "setup" else " ".join([cmd] + args)
    out = session.outcome()
    if out is not None:
        raise CommandError(f"{head}: the game is over ({out.result}, {out.reason})")
    try:
        try:
            action = g.parse(text)
        except IllegalMoveError:
            v = session.verdict
            if v.status not in (VS.HOLD, VS.PROMPT) or v.chosen is None or session.recover:
                raise
            # the action follows the held or defaulted move (a purchase after the move that ends
            # the action phase): the player has moved on, so that move is made first
            session.commit(v.chosen, len(session.events))
            session.update(session.now)
            action = g.parse(text)
    except IllegalMoveError as exc:
        here = session.bases.base(0)
        why = g.why_not(head.lower()) if here is None or not any(a.kind == head for a in here.actions) else ""
        if why:
            raise CommandError(f"{head}: not possible now in {session.variant_name} ({why})") from None
        raise CommandError(str(exc)) from None
    if head == "setup":
        if action.kind != ActionKind.SETUP:
            raise CommandError(f"setup: {text!r} is not an army set-up")
        _ready_for_silent(session, head)
        session.record_setup(action)
        return ["Army recorded: put the pieces on the squares the LEDs show."]
    if not action.silent:
        raise CommandError(f"{text!r} moves pieces: make that move on the board")
    _ready_for_silent(session, head)
    mover = g.turn
    session.apply_silent(action)
    c = session.clock
    if (session.time.mode == "press" and c is not None and c.running == mover and g.turn != mover
            and session.outcome() is None):
        return press_clock(session)     # the action that ends the turn (Cost Progressive's end) presses it too
    return []


def _cmd_takeback(session: Session, cmd, args) -> list[str]:
    g = session.game
    out = session.outcome()
    remote = _remote(session)
    if remote is not None:                  # the other board's player is asked first
        if args:
            raise CommandError("takeback: say takeback (the other board is asked), then accept or decline there")
        return [remote.ask_takeback(session)]
    if out is not None and out.termination is Termination.TIME_FORFEIT:
        raise CommandError("takeback: the game ended on time (a flag fell); start a new game")
    if out is not None and out.termination in (Termination.RESIGNATION, Termination.AGREEMENT):
        session.reopen()                    # take back the resignation (the agreed draw), not a move
        what = "resignation" if out.termination is Termination.RESIGNATION else "draw"
        return [f"The {what} is taken back: play on."]
    if not g.history:
        raise CommandError("takeback: no action to take back")
    popped = session.take_back(takeback_plies(session))
    return ["Taken back: " + taken_back_text(session.game, popped) + "."
            + (" Put the pieces back as the LEDs show." if session.recover else "")]


def takeback_plies(session: Session) -> int:
    """How many actions ``takeback`` takes back: the player's last action, with the actions of
    the side played from elsewhere after it, and the ends of turns before it."""
    g = session.game.copy()
    computer = session.computer
    n = 0
    while g.history:
        a = g.pop()
        n += 1
        if computer is not None and computer.plays(g.turn) and not all(computer.plays(s) for s in (0, 1)):
            continue                        # the computer's action goes back with the player's before it
        if a.kind != ActionKind.END:
            break
    return n


def _remote(session: Session) -> PeerRequests | None:
    """The side played on another board (board_driver.remote.side.Remote), or None."""
    c = session.computer
    return c.peer_player() if c is not None else None


def _cmd_draw(session: Session, cmd, args) -> list[str]:
    """draw: in a remote game an offer the other board's player answers; at one board (both
    players there) the draw they agreed to."""
    g = session.game
    out = session.outcome()
    if out is not None:
        raise CommandError(f"draw: the game is over ({out.result}, {out.reason})")
    remote = _remote(session)
    if remote is not None:
        return [remote.offer_draw(session)]
    if session.computer is not None:
        raise CommandError("draw: the computer takes no draw offers (resign, or play on)")
    out = session.agree_draw()
    return [f"Drawn by agreement: {out.result}."]


def _cmd_answer(session: Session, cmd, args) -> list[str]:
    """accept / decline: the other board's takeback request or draw offer (a remote game)."""
    remote = _remote(session)
    if remote is None:
        raise CommandError(f"{cmd}: nothing to answer (the other board of a remote game asks)")
    return [remote.answer(session, cmd == "accept")]


def _cmd_remote(session: Session, cmd, args) -> list[str]:
    remote = _remote(session)
    if remote is None:
        raise CommandError("remote: this game is not played against another board")
    if [a.lower() for a in args] != ["adopt"]:
        raise CommandError("remote: say remote adopt")
    return [remote.adopt(session)]


def _cmd_resign(session: Session, cmd, args) -> list[str]:
    g = session.game
    if g.outcome() is not None:
        raise CommandError("resign: the game is already over")
    if args:
        if args[0].lower() not in COLOR:
            raise CommandError(f"resign: {args[0]!r}: say resign, resign white or resign black")
        color = COLOR.index(args[0].lower())
    else:
        color = g.turn
        computer = session.computer
        if computer is not None and computer.plays(color) and not computer.plays(1 - color):
            color = 1 - color               # the player resigns, not the side played from elsewhere
    out = session.resign(color)
    return [f"{COLOR[color].capitalize()} resigns: {out.result}."]


def _cmd_clock(session: Session, cmd, args) -> list[str]:
    """clock: show both; clock pause | start; clock adjust white|black TIME (an arbiter's)."""
    from board_driver.referee.clock import ClockError, parse_time
    c = session.clock
    if c is None:
        raise CommandError("clock: this game has no time control (start one with --clock 300+3)")
    sub = args[0].lower() if args else ""
    if sub == "":
        return [_clock_line(session)]
    if session.outcome() is not None:
        raise CommandError("clock: the game is over")
    if sub == "pause":
        if c.running is None:
            raise CommandError("clock: the clock is not running")
        session.pause_clock()
        return ["Clock paused. " + _clock_line(session)]
    if sub in ("start", "resume", "go"):
        if c.running is not None:
            raise CommandError("clock: the clock is already running")
        session.start_clock()
        return [_clock_line(session)]
    if sub == "adjust":
        if len(args) != 3 or args[1].lower() not in COLOR:
            raise CommandError("clock adjust: say clock adjust white|black TIME (5:00, 1:30:00, 90)")
        try:
            ms = parse_time(args[2])
        except ClockError as exc:
            raise CommandError(f"clock adjust: {exc}") from None
        side = COLOR.index(args[1].lower())
        session.adjust_clock(side, ms)
        return ["Clock adjusted. " + _clock_line(session)]
    raise CommandError(f"clock {sub}: say clock, clock pause, clock start or clock adjust white|black TIME")


def _clock_line(session: Session) -> str:
    """Both clocks in a line (the game has a clock)."""
    line = session.time.line()
    assert line is not None, "a clock command in a game with a clock"
    return line


def press_clock(session: Session) -> list[str]:
    """The clock button (press mode): the running side's move is over, the other side's clock starts."""
    c = session.clock
    if c is None:
        raise CommandError("press: this game has no time control")
    if session.time.mode != "press":
        raise CommandError("press: the board switches this clock itself (--clock-mode press for a clock button)")
    if session.outcome() is not None:
        raise CommandError("press: the game is over")
    if c.running is None and not session.time.first:     # a new game's first press starts it
        raise CommandError("press: the clock is stopped (clock start)")
    session.press_clock()
    return [_clock_line(session)]


def _cmd_press(session: Session, cmd, args) -> list[str]:
    return press_clock(session)


def _cmd_hint(session: Session, cmd, args) -> list[str]:
    """The best action for the side to move: said, lit on the LEDs like the computer's move
    until the game moves on, and journaled as ``{"type": "hint", ...}``. In the real-time loop
    the engine looks for it in the background: the command answers at once and the hint is
    said when it is found (:meth:`Session.take_hint`)."""
    g = session.game
    if session.outcome() is not None:
        raise CommandError("hint: the game is over")
    computer = session.computer
    if computer is not None and computer.plays(g.turn):
        peer = computer.peer                # a remote opponent: the other board's player
        raise CommandError(f"hint: {peer} ({COLOR[g.turn]}) is to move" if peer else "hint: the computer is to move")
    hinter = session.hinter
    if hinter is None:
        raise CommandError("hint: no engine is at hand in this game")
    try:
        if hinter.background:
            if not hinter.start(session):
                return [f"Still looking for a hint for {COLOR[g.turn]}."]
            return [f"Looking for a hint for {COLOR[g.turn]}."]
        hint = hinter(session)
    except (BoardDriverError, ValueError) as exc:
        raise CommandError(f"hint: {exc}") from None
    session.show_hint(hint.action, hint.record)
    return [hint.words]


def _cmd_new(session: Session, cmd, args) -> list[str]:
    session.hand_over(NewGame(args[0] if args else session.variant_name))
    return []


COMMANDS: tuple[Command, ...] = (
    Command("choose", "choose X", "answer a prompt (promotion piece, reserve piece, an option number)",
            _cmd_choose),
    Command("pass", "pass", "pass (games that allow it)", _cmd_silent, silent=True),
    Command("end", "end", "end a multi-move turn", _cmd_silent, silent=True),
    Command("buy", "buy X", "buy a piece (csipgs)", _cmd_silent, silent=True),
    Command("design", "design N=BETZA", "design a piece (csipgs)", _cmd_silent, silent=True),
    Command("invent", "invent ...", "invent a piece (csipgs)", _cmd_silent, silent=True),
    Command("setup", "setup ARMY", "record an army (Army csipgs: royal-WF@e1,BR@d1,...), then set it up",
            _cmd_silent, button=False, silent=True),
    Command("takeback", "takeback", "take back the last action, then restore the board as the LEDs show "
            "(a remote game: asks the other board's player first)",
            _cmd_takeback, aliases=("undo",)),
    Command("hint", "hint", "the engine's best move for the side to move, said and lit on the LEDs",
            _cmd_hint),
    Command("resign", "resign", "the side to move resigns (resign white|black)", _cmd_resign),
    Command("draw", "draw", "offer a draw (a remote game: the other board's player answers; at one board: "
            "agreed)", _cmd_draw),
    Command("accept", "accept", "a remote game: accept the other board's takeback request or draw offer",
            _cmd_answer),
    Command("decline", "decline", "a remote game: decline the other board's request (or withdraw your own)",
            _cmd_answer),
    Command("remote", "remote adopt", "a remote game whose boards disagree: go on from the other board's "
            "longer record", _cmd_remote, button=False),
    Command("new", "new [VARIANT]", "start a new game", _cmd_new),
    Command("clock", "clock [pause|start|adjust SIDE TIME]", "show both clocks; pause, restart or set one "
            "(an arbiter's adjustment)", _cmd_clock, button=False),
    Command("press", "press", "the clock button: switch the clock (--clock-mode press)", _cmd_press),
    Command("help", "help", "this text", _cmd_help, aliases=("?",)),
    # the simulator console's own
    Command("board", "board", "draw the board again", aliases=("show",), button=False),
    Command("moves", "moves", "list the actions played so far", button=False),
    Command("quit", "quit", "leave (the game is saved; fairyboard play resumes it)", aliases=("exit", "q"),
            button=False),
)

_BY_WORD = {w: c for c in COMMANDS for w in c.words}


def button_words() -> tuple[str, ...]:
    """The command words a button may send."""
    return tuple(w for c in COMMANDS if c.button for w in c.words if w != "?")


def help_lines() -> list[str]:
    """The in-game help: the board actions, then every command."""
    lines = ["Board:    " + BOARD_HELP]
    usages = [c.usage + (" | " + " | ".join(c.aliases) if c.aliases else "") for c in COMMANDS]
    width = max(len(u) for u in usages) + 2
    for i, (c, usage) in enumerate(zip(COMMANDS, usages)):
        lines.append(("Commands: " if i == 0 else "          ") + f"{usage:<{width}}{c.help}")
    return lines


def lookup(word: str) -> Command | None:
    """The command a word names (``buy:N`` style words by their head), or None."""
    c = _BY_WORD.get(word.lower())
    if c is None:
        c = _BY_WORD.get(word.split(":")[0].lower())
        if c is not None and not c.silent:
            c = None
    return c


def run(session: Session, text: str) -> list[str]:
    """Carry out one session command; returns the replies. Raises CommandError when it
    cannot be carried out (the message says why); ``new`` leaves a :class:`NewGame` for the loop
    (:meth:`.session.Session.take_handover`)."""
    words = text.strip().split()
    if not words:
        return []
    cmd, args = words[0], words[1:]
    c = lookup(cmd)
    if c is None:
        raise CommandError(f"unknown command {cmd!r}; type help for the commands")
    if (cmd.lower() == "end" and session.time.mode == "press" and session.clock is not None
            and not any(a.kind == ActionKind.END for a in session.game.legal_actions())):
        return press_clock(session)         # the board's end button presses the clock
    if c.handler is None:
        raise CommandError(f"{cmd}: a command of the simulator's console, not of the board")
    if cmd.lower() in _BY_WORD:
        cmd = cmd.lower()
    return c.handler(session, cmd, args)
