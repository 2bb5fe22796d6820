"""The computer's side of a game on the board.

A side whose player is an engine spec (``computer``, ``builtin``, ``builtin:LEVEL``, ``random``,
``fsf``, ``fsf:SKILL``, ``uci:COMMAND``: see :mod:`.players`) is played by a
:class:`Computer`. When that side is to move, the session asks it for a plan (the actions of
its whole turn). Silent actions at the head of the plan (a purchase, a design, a pass, the end
of a turn) are applied and announced at once; the next physical action is shown on the LEDs
and in words, and the reconciler accepts only that action for the computer's side (anything
else on the board is a mismatch with the usual guidance). When the player has carried it
out, the next action of the plan is shown, until the turn is over. The built-in engine
answers within the time given (``seconds``, default 1), a UCI engine is given the same.

Where the thinking happens:

* **In the session's step** (the default): scripted and virtual-clock games (tests,
  ``play --events``, the simulated console game, noisy games, demonstrations) ask the engine
  inside the update that found the computer to move, so that they stay deterministic.
* **In the background** (:meth:`Computer.think_in_background`; the real-time loop,
  :func:`.runner.run_realtime`, switches its session's computer to it, and ``serve`` attaches
  it so): the search runs in a worker thread on a copy of the game (``game.copy()``) and the
  step returns at once, so the LED frame of the player's move (a check, a game end) goes out
  at once and the loop goes on reading frames and commands. Meanwhile the reconciler accepts
  no action of the computer's side (it expects ``Expect.waiting(Wait.THINKING)``: no action)
  -- a takeback of the player's move still is one -- and ``Computer (black) is thinking.`` is
  said once. The session looks for the answer every :data:`POLL_MS` (:meth:`Computer.deadline`)
  and takes it up on the next tick (:meth:`Computer.news`); from there on all is as in the
  step. An answer for a game that changed meanwhile (a takeback, a resignation, a new game,
  the end of the game) is dropped, and the computer thinks again if it is still to move.
  There is never more than one search at a time: a stale search is stopped -- the built-in
  one ends at its next clock check (``turn(..., stop=...)``), a UCI engine is sent ``stop`` --
  and the next starts when it has ended.

A UCI engine (``fsf``, ``uci:COMMAND``) is the board's shared one (:mod:`.engine_pool`): the
computer's move comes first on it, the hint (:class:`Hinter`) next, then the live evaluation
and analyses; an engine that died is started again and the computer says so once. :meth:`Computer.close`
  stops the search under way and waits for it before closing the engines.

A thread, not a process: the built-in search keeps its transposition table between moves in
the player, the game copy is cheap and needs no pickling, and a UCI engine is a process of
its own already. The search is pure Python, so the loop shares the interpreter with it: a
thread that wakes up (a frame arrived) waits for the interpreter's lock for up to the switch
interval (:func:`sys.setswitchinterval`, 5 ms by default). While a search runs the interval is
narrowed to :data:`SWITCH_SECONDS` (1 ms; the worker restores it when the search ends).
Measured on a desktop core shared with other work (tests/bench/bench_computer.py, orthodox
opening commits, from the frame's arrival to the LED frame, medians): 0.3-0.7 ms with no
search; with a search running 5.4-5.7 ms at the default 5 ms, 1.5-1.7 ms at 1 ms (the
commit's own CPU time is the same 0.3-0.5 ms: the rest is the wait for the lock). The slowest
samples with a search running reached tens of ms at every interval: the machine's two cores
were busy with other processes too, and the thread holding the lock must get a core to let it
go (without a search, the slowest was 2-3 ms). The search's speed does not change measurably (17-21k nodes/s at every interval): the loop asks
for the lock only when it wakes. The LED frame of the player's move in the service loop, from
the move being stable to the frame shown, with the built-in engine at 1 s a move: about
905 ms when the computer thinks in the step, 3 ms (at most 14) in the background.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

from board_driver.opponents import engine_pool
from board_driver.opponents.players import Player, PlayerError, parse_spec
from board_driver.records import Hint as HintRecord
from board_driver.referee.opponent import Decision, Expect, HintFound, Silent, Wait
from board_driver.referee.scene import movers, victims
from board_driver.referee.texts import COLOR
from engine.contract import ActionKind
from engine.game import Action
from engine.moves import DROP

if TYPE_CHECKING:
    from engine.contract import Game
    from engine.variant import Variant
    from board_driver.referee.session import Session


POLL_MS = 10            # how often the loop looks for the answer of a search in the background
SWITCH_SECONDS = 0.001  # the thread switch interval while a search runs (see the module docstring)


class _Search:
    """One search in a worker thread, on a copy of the game as it stood when it started."""

    def __init__(self, game: Game, player: Player, seconds: float):
        self.game = game                    # the live game: the answer is for it, as it stood
        self.history = list(game.history)
        self.side = game.turn
        self.plan: list[Action] | None = None
        self.error: BaseException | None = None
        self.stopped = threading.Event()    # the answer is not wanted any more
        self.done = threading.Event()
        self.told = False                   # the session has been told it is done
        snapshot = game.copy()
        self.thread = threading.Thread(target=self._run, args=(player, snapshot, seconds),
                                       name=f"computer-{COLOR[self.side]}", daemon=True)
        self._switch = sys.getswitchinterval()

    def start(self) -> None:
        sys.setswitchinterval(min(self._switch, SWITCH_SECONDS))
        self.thread.start()

    def _run(self, player: Player, game: Game, seconds: float) -> None:
        try:
            self.plan = list(player.turn(game, seconds, stop=self.stopped.is_set))
        except BaseException as exc:        # handed to the loop, which says or raises it
            self.error = exc
        finally:
            sys.setswitchinterval(self._switch)
            self.done.set()

    def current(self, game: Game) -> bool:
        """The answer is for ``game`` as it stands now (and was not stopped)."""
        return not self.stopped.is_set() and game is self.game and game.turn == self.side \
            and game.history == self.history


class _Polled:
    """What the session asks of a search in a worker thread (``self._search``: a :class:`_Search`
    or :class:`_HintSearch`): whether it has news, and when to look again."""

    def _job(self) -> _Search | _HintSearch | None:
        """The search under way, or done with its answer not yet taken."""
        raise NotImplementedError

    def news(self) -> bool:
        """True once when a search in the background has ended (the session then takes its
        answer up, or drops it when the game changed meanwhile)."""
        s = self._job()
        if s is None or s.told or not s.done.is_set():
            return False
        s.told = True
        return True

    def deadline(self, now: int) -> int | None:
        """When the session should look for the answer of the search under way, or None."""
        s = self._job()
        if s is None or s.told:
            return None
        return now if s.done.is_set() else now + POLL_MS


class Computer(_Polled):
    """The engine players of a game's computer sides, and the plan of the turn under way."""

    polls = False                           # its deadline is a search's end, looked for every POLL_MS
    peer: str | None = None                 # the computer is no other board's player

    def __init__(self, players: dict[int, Player], *, seconds: float = 1.0, background: bool = False):
        self.players = dict(players)        # side (0 white, 1 black) -> Player
        self.seconds = seconds
        self.plan: list[Action] = []
        self._at: int | None = None         # history length the plan continues from
        self.errors: list[str] = []
        self.background = background        # think in a worker thread (the real-time loop)
        self._search: _Search | None = None  # the search under way (or done, its answer not yet taken)
        self._failed: list | None = None    # the history the last search failed in (not tried again)

    @classmethod
    def for_players(cls, names: dict[str, str], variant: Variant, *, seconds: float = 1.0,
                    fsf_path: str | None = None, background: bool = False,
                    unavailable: list[tuple[int, str, PlayerError]] | None = None) -> Computer | None:
        """A Computer for the sides whose player name is an engine spec (None when neither is).
        An engine that cannot start is a PlayerError; with ``unavailable`` (a list) its side is
        left out instead -- played by hand -- and ``(side, spec, error)`` is added to it."""
        players = {}
        try:
            for side, key in enumerate(COLOR):
                name = (names or {}).get(key) or ""
                if looks_like_spec(name):
                    try:
                        players[side] = engine_pool.player(parse_spec(name), variant, priority=engine_pool.MOVE,
                                                           fsf_path=fsf_path)
                    except PlayerError as exc:
                        if unavailable is None:
                            raise
                        unavailable.append((side, name, exc))
        except PlayerError:
            for p in players.values():
                p.close()
            raise
        return cls(players, seconds=seconds, background=background) if players else None

    def _job(self) -> _Search | None:
        return self._search

    def budget(self, session: Session) -> float:
        """Seconds to think now: from the side's clock under a time control, else ``seconds``."""
        c = session.clock
        if c is None:
            return self.seconds
        side = session.game.turn
        tc = c.sides[side]
        moves = c.state.moves[side]
        p = tc.periods[tc.period(moves)]
        n, to_go = 0, None
        for q in tc.periods:
            if q.moves is None:
                break
            n += q.moves
            if moves < n:
                to_go = n - moves
                break
        return clock_budget(c.remaining(session.now)[side], p.increment + p.delay, to_go)

    def plays(self, side: int) -> bool:
        return side in self.players

    def think_in_background(self) -> None:
        """From now on, search in a worker thread: :meth:`step` returns at once and the session
        takes the answer up on a later tick (see :meth:`news`). The real-time loop calls this."""
        self.background = True

    @property
    def thinking(self) -> bool:
        """A search is under way in the background."""
        return self._search is not None and not self._search.done.is_set()

    def close(self) -> None:
        """Stop the search under way (the built-in one ends at its next clock check, an engine
        within its move time) and wait for it, then close the engines."""
        s = self._search
        if s is not None:
            s.stopped.set()
            s.thread.join(self.seconds + 10)
            self._search = None
        for p in self.players.values():
            p.close()

    # -- the session's hook --------------------------------------------------------------------
    def decide(self, session: Session) -> Decision:
        """After the board is explained: plan the computer's turn when it is to move, and say
        what the session is to do -- its next silent action to apply (one a step: the session
        asks again after each), or the action the reconciler is to accept. In the background,
        the turn is searched in a worker thread: until its answer is taken up (a later step),
        the reconciler accepts no action of the computer's side. Reads the session only."""
        g = session.game
        said: list[str] = []
        if session.recover or session.outcome() is not None or g.turn not in self.players \
                or session.tentative is not None:
            self._forget()
            return Decision(expect=None)
        n = len(g.history)
        if self.plan and self._at is not None and n == self._at + 1 and g.history[-1] == self.plan[0]:
            self.plan.pop(0)                # the player carried out the shown action
            self._at = n
        if not self.plan or self._at != n:
            if not self.background:
                self._think(session, said)
            elif not self._answer(session, said) and self._failed != g.history:
                return self._wait(session, said)
        if self.plan and self.plan[0].silent:
            a = self.plan.pop(0)
            if a in g.legal_actions() or a.kind in (ActionKind.DESIGN, ActionKind.INVENT, ActionKind.SETUP):
                self._at = n + 1            # once the session has applied it
                return Decision(notices=tuple(said), silent=(Silent(a, f"Computer ({COLOR[g.turn]}): "
                                                                     f"{describe_silent(a)}."),), keep_expect=True)
            self.plan = []
        nxt = self.plan[0] if self.plan else None
        if nxt is not None and nxt.kind is ActionKind.SETUP:
            # an army set-up is recorded at once; the player then sets the pieces up
            self.plan.pop(0)
            self._forget()
            return Decision(notices=tuple(said), expect=None, silent=(
                Silent(nxt, f"Computer ({COLOR[g.turn]}) sets up its army: {nxt.text}.", setup=True),))
        want = Expect.play(nxt) if nxt is not None else None
        if session.expected != want and nxt is not None:
            said.append(describe_move(session, nxt, self._step_label()))
        return Decision(notices=tuple(said), expect=want)

    def on_verdict(self, session: Session, v) -> None:
        pass

    def peer_player(self) -> None:
        return None                         # the computer takes no takeback requests or draw offers

    def _step_label(self) -> str:
        physical = [a for a in self.plan if not a.silent]
        return f" (then {len(physical) - 1} more)" if len(physical) > 1 else ""

    def _forget(self) -> None:
        self.plan = []
        self._at = None
        s = self._search
        if s is not None:
            s.stopped.set()                 # the game moved on: its answer is not wanted
            if s.done.is_set():
                self._search = None

    def _think(self, session: Session, said: list[str]) -> None:
        g = session.game
        player = self.players[g.turn]
        try:
            plan = list(player.turn(g, self.budget(session)))
        except (PlayerError, ValueError) as exc:
            msg = f"Computer ({COLOR[g.turn]}) cannot move: {exc}"
            self.errors.append(msg)
            said.append(msg)
            plan = []
        said[:0] = player.take_notices()    # the engine was started again on the way
        self.plan = plan
        self._at = len(g.history)

    # -- thinking in the background ------------------------------------------------------------
    def _answer(self, session: Session, said: list[str]) -> bool:
        """Take up the answer of a finished search when it is for the game as it stands (True);
        a stale one is dropped."""
        s = self._search
        if s is None or not s.done.is_set():
            return False
        self._search = None
        s.thread.join()
        g = session.game
        said.extend(self.players[s.side].take_notices())     # the engine was started again on the way
        if not s.current(g):
            return False
        if s.error is not None:
            if not isinstance(s.error, (PlayerError, ValueError)):
                raise s.error               # a bug, as it would be when thinking in the step
            msg = f"Computer ({COLOR[g.turn]}) cannot move: {s.error}"
            self.errors.append(msg)
            said.append(msg)
            self._failed = list(g.history)  # not tried again in this position
        self.plan = s.plan or []
        self._at = len(g.history)
        return True

    def _wait(self, session: Session, said: list[str]) -> Decision:
        """The computer is to move and has no answer yet: a search starts unless one is still
        running (a stale one ends first: never two searches at once on an engine), and the
        reconciler accepts nothing of the computer's side meanwhile."""
        g = session.game
        self.plan = []
        self._at = None
        if self._search is not None and not self._search.current(g):
            self._search.stopped.set()      # the game changed meanwhile: end it, then think again
        if self._search is None:
            self._search = _Search(g, self.players[g.turn], self.budget(session))
            self._search.start()
        want = Expect.waiting(Wait.THINKING)
        if session.expected != want:
            said.append(f"Computer ({COLOR[g.turn]}) is thinking.")
        return Decision(notices=tuple(said), expect=want)

    def hint(self) -> Action | None:
        """The action the LEDs should show the player to carry out, or None."""
        return self.plan[0] if self.plan and not self.plan[0].silent else None


def clock_budget(remaining_ms: int, increment_ms: int, moves_to_go: int | None = None) -> float:
    """Seconds to think a move on a clock with ``remaining_ms`` left and ``increment_ms`` a move:
    a share of the time left (1/30, or of the moves to the next period) plus half the increment,
    never more than a fifth of what is left after a 50 ms reserve for the move's overhead."""
    left = max(0, remaining_ms - 50)
    share = left / max(2, moves_to_go or 30) + increment_ms / 2
    return max(0.005, min(share, left / 5) / 1000)


def describe_silent(a: Action) -> str:
    k = a.kind
    if k is ActionKind.BUY:
        return f"buys {a.detail[0] if a.detail else a.text[4:]}"
    if k is ActionKind.DESIGN:
        return f"changes a design: {a.text}"
    if k is ActionKind.PASS:
        return "passes"
    if k is ActionKind.END:
        return "ends its turn"
    if k is ActionKind.INVENT:
        return f"invents: {a.text}"
    return a.text


def describe_move(session: Session, a: Action, more: str = "", head: str | None = None) -> str:
    """What the player is to do on the board for the computer, in words (``head`` instead of
    ``Computer (black) plays``: a hint's)."""
    g = session.game
    name = session.name
    side = COLOR[g.turn]
    try:
        san = g.san(a) if session.san_notices else a.text
    except Exception:
        san = a.text
    parts = []
    mv = sorted(movers(a))
    vic = sorted(victims(a))
    for sq in vic:
        parts.append(f"take the {session.piece_name(sq) or 'piece'} off {name(sq)}")
    if a.kind is ActionKind.CASTLE and len(mv) == 2:
        king = a.code & 0xFF
        rook = next(s for s in mv if s != king)
        kto = (a.code >> 8) & 0xFF
        rto = next(iter(set(a.places) - {kto}))
        parts.append(f"move the king from {name(king)} to {name(kto)} and the rook from {name(rook)} to {name(rto)}")
    elif a.kind is ActionKind.DROP:
        to = next(iter(a.places))
        parts.append(f"put a {side} {_piece_title(g, a.piece)} from the reserve on {name(to)}")
    elif mv:
        frm = mv[0]
        to = sorted(a.places)[-1] if a.places else frm
        if a.code >= 0 and a.code >> 24 != DROP:
            to = (a.code >> 8) & 0xFF
        who = session.piece_name(frm) or "the piece"
        parts.append(f"move the {who.split(' ', 1)[-1]} from {name(frm)} to {name(to)}")
        if a.kind is ActionKind.PROMOTION:
            extra = (a.code >> 16) & 0xFF
            parts[-1] += f" and make it a {g.variant.pieces[extra - 1].name}" if extra else ""
    text = "; ".join(parts) if parts else a.text
    return f"{head or f'Computer ({side}) plays'} {san}{more}: {text}."


def _piece_title(game: Game, letter: str) -> str:
    try:
        pv = game.variant
        return next(p.name for p in pv.pieces if p.letter == letter.lower()).replace("-", " ")
    except Exception:
        return letter.upper()


def looks_like_spec(name: str) -> bool:
    """A player's name written as an engine spec (``builtin:99`` too, which is then refused
    rather than taken for a person)."""
    head = (name or "").split(":", 1)[0].strip().lower()
    return head in ("builtin", "random", "fsf", "uci", "computer") and (head == name.strip().lower() or ":" in name)


def check_players(names: dict, variant: Variant) -> None:
    """PlayerError when a player's engine spec is wrong or cannot play ``variant`` (before a
    game is created for it)."""
    from board_driver.opponents.players import can_play
    for key in COLOR:
        name = (names or {}).get(key) or ""
        if looks_like_spec(name):
            spec = parse_spec(name)
            why = can_play(spec, variant)
            if why is not None:
                raise PlayerError(f"--{key} {name}: {why}")


HINT_SECONDS = 0.5      # how long the engine thinks a hint



# The last finished searches, by engine and position: a hint asked in a position the live
# evaluation has judged is that search (its move and score), so the bar and the hint say one
# number from one search.
_KNOWN: dict[tuple[str, str, str], Any] = {}
_KNOWN_LOCK = threading.Lock()
_KNOWN_KEEP = 64


def _position_key(spec: str, game: Game) -> tuple[str, str, str] | None:
    try:
        return spec, str(getattr(game.variant, "name", "")), game.fen()
    except Exception:                   # a position the engine cannot write: nothing is kept
        return None


def remember(spec: str, game: Game, ev: Any) -> None:
    """Keep ``ev``, the finished search of ``spec`` in ``game``'s position (any thread)."""
    key = _position_key(spec, game)
    if key is None or not getattr(ev, "best", None):
        return
    with _KNOWN_LOCK:
        _KNOWN.pop(key, None)
        _KNOWN[key] = ev
        while len(_KNOWN) > _KNOWN_KEEP:
            del _KNOWN[next(iter(_KNOWN))]


def recall(spec: str, game: Game) -> Any:
    """The kept search of ``spec`` in exactly ``game``'s position, else None."""
    key = _position_key(spec, game)
    with _KNOWN_LOCK:
        return _KNOWN.get(key) if key is not None else None


def white_score(game: Game, ev: Any) -> tuple[int, int | None]:
    """An evaluation's score from White's point of view (+: White is better), as the live
    evaluation and the analysis give it; in Chego the game's own count instead (100 a point:
    White's points less Black's, as if the game ended now)."""
    if getattr(game, "family", "") == "chego" and callable(getattr(game, "points", None)):
        w, b = game.points()        # type: ignore[attr-defined]
        return 100 * (w - b), None
    sign = 1 if game.turn == 0 else -1
    return sign * ev.cp, None if ev.mate is None else sign * ev.mate

class Hinter(_Polled):
    """The ``hint`` command's engine (:attr:`Session.hinter`): the best engine for the variant
    (:func:`.analysis.best_engine`), taken at the first hint and kept for the next (Fairy-Stockfish
    is the board's shared engine, :mod:`.engine_pool`: a hint waits for the computer's move only).

    In the step (scripted and virtual-clock games) the command waits for the answer. In the
    background (:meth:`think_in_background`: the real-time loop, as for the computer) the
    command starts a search on a copy of the game in a worker thread and returns at once; the
    session takes the answer up when it is done (:meth:`news`, :meth:`take`) and says, lights
    and journals it then, unless the game moved on meanwhile (the answer is dropped)."""

    def __init__(self, variant: Variant, *, seconds: float = HINT_SECONDS, fsf_path: str | None = None,
                 spec: str | None = None, background: bool = False):
        self.variant = variant
        self.spec = spec            # None: the best engine for the variant
        self.seconds = seconds
        self.fsf_path = fsf_path
        self.player: Player | None = None
        self.background = background
        self._search: _HintSearch | None = None

    def think_in_background(self) -> None:
        self.background = True

    def _job(self) -> _HintSearch | None:
        return self._search

    def _player(self) -> Player:
        from board_driver.opponents.analysis import best_engine
        if self.player is None:
            self.player = engine_pool.player(self.spec or best_engine(self.variant), self.variant,
                                             priority=engine_pool.HINT, fsf_path=self.fsf_path)
        return self.player

    def __call__(self, session: Session):
        """(the action to light or None, the words, the journal record) for the side to move."""
        g = session.game
        ev = recall(self._player().spec.text, g)
        return self.words(session, g, ev if ev is not None else self._player().evaluate(g.copy(), self.seconds))

    def words(self, session: Session, g: Game, ev):
        from board_driver.opponents.analysis import score_text
        side = COLOR[g.turn]
        if not ev.best:
            raise PlayerError(f"{self._player().spec} found no move")
        silent = []
        for a in ev.best:
            if not a.silent:
                break
            silent.append(describe_silent(a))
        shown = next((a for a in ev.best if not a.silent), None)
        cp, mate = white_score(g, ev)
        head = f"Hint for {side} ({score_text(cp, mate)}):"
        if shown is not None and not silent:
            words = describe_move(session, shown, head=head)
        else:
            words = f"{head} {', then '.join(silent + ([shown.text] if shown is not None else []))}."
        rec = HintRecord(len(g.history), side, tuple(a.text for a in ev.best), self._player().spec.text, cp, mate)
        return HintFound(shown, words, rec)

    # -- in the background ------------------------------------------------------------------------
    @property
    def thinking(self) -> bool:
        return self._search is not None and not self._search.done.is_set()

    def start(self, session: Session) -> bool:
        """Start looking for a hint in the position as it stands; False when one is already
        being looked for in it."""
        g = session.game
        s = self._search
        if s is not None and not s.done.is_set():
            if s.history == g.history:
                return False
            s.thread.join()             # a stale one (the game moved on) ends within its time
        known = recall(self._player().spec.text, g)
        self._search = _HintSearch(g, self._player(), self.seconds, known=known)
        if known is None:
            self._search.thread.start()
        return True

    def take(self, session: Session):
        """The finished search's (action, words, record), or None when the game moved on
        meanwhile. Its error (the engine failed) is raised as it would be in the step."""
        s, self._search = self._search, None
        if s is None:
            return None
        s.join()
        g = session.game
        if g.history != s.history or g.turn != s.side:
            return None
        if s.error is not None:
            raise s.error
        return self.words(session, g, s.result)

    def close(self) -> None:
        s = self._search
        if s is not None:
            s.join(self.seconds + 10)
            self._search = None
        if self.player is not None:
            self.player.close()
            self.player = None


class _HintSearch:
    """One hint search in a worker thread, on a copy of the game as it stood when it started."""

    def __init__(self, game: Game, player: Player, seconds: float, known: Any = None):
        self.history = list(game.history)
        self.side = game.turn
        self.result: Any = known            # the player's Evaluation (known: found already, no search)
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.told = False
        self.thread = threading.Thread(target=self._run, args=(player, game.copy(), seconds),
                                       name="hint", daemon=True)
        if known is not None:
            self.done.set()

    def join(self, timeout: float | None = None) -> None:
        if self.thread.is_alive() or self.thread.ident is not None:
            self.thread.join(timeout)

    def _run(self, player: Player, game: Game, seconds: float) -> None:
        try:
            self.result = player.evaluate(game, seconds)
        except BaseException as exc:        # handed to the loop, which says it
            self.error = exc
        finally:
            self.done.set()


def attach(session: Session, *, seconds: float = 1.0, fsf_path: str | None = None,
           background: bool = False) -> Computer | None:
    """Give the session a Computer for the sides its players name by an engine spec (the
    names are kept in the game record, so a resumed game plays on against the computer),
    and the ``hint`` command its engine (:class:`Hinter`).
    ``background``: it thinks in a worker thread from the start (a session the real-time loop
    is to run: a computer to move first does not hold up the loop).

    A side whose engine cannot start (uninstalled since the game began, a command that fails)
    is played by hand: the session says so (:func:`unavailable_line`) and the game goes on; the
    game record keeps the engine as that side's player, so the engine is tried again each time
    the game is opened (and plays again once it is back) until another opponent is chosen."""
    variant = session.game.variant
    if session.hinter is None:
        session.attach_hinter(Hinter(variant, fsf_path=fsf_path, background=background))
    missing: list[tuple[int, str, PlayerError]] = []
    computer = Computer.for_players(session.players, variant, seconds=seconds, fsf_path=fsf_path,
                                    background=background, unavailable=missing)
    for side, spec, exc in missing:
        session.notify(unavailable_line(side, spec, exc))
    if computer is not None:
        session.attach_computer(computer)
    return computer


def unavailable_line(side: int, spec: str, exc: BaseException) -> str:
    """What the player is told when the engine of ``side`` cannot start: which engine, why,
    and that the side is now played by hand."""
    why = str(exc)
    for head in (f"{spec}: ", f"{spec.strip()}: "):
        if why.startswith(head):
            why = why[len(head):]
            break
    who = COLOR[side].capitalize()
    return (f"The engine {spec} for {who} cannot start ({why}): {who}'s moves are now made on the board "
            f"by hand, until another opponent is chosen.")


def carry_out(session: Session, step) -> bool:
    """Do the computer's shown action as a player would, through ``step(kind, square)`` (kind
    ``lift`` or ``place``): victims off, its pieces lifted, then set down on their squares.
    True when there was one. For demonstrations with the computer on both sides."""
    c = session.computer
    a = c.hint() if c is not None else None
    if a is None:
        return False
    name = session.name
    for sq in sorted(victims(a)):
        step("lift", name(sq))
    for sq in sorted(movers(a)):
        step("lift", name(sq))
    for sq in sorted(a.places):
        step("place", name(sq))
    return True
