"""The game session: the one owner of the driver's mutable state.

Sensor frames come in (:meth:`Session.on_frame`), time passes (:meth:`Session.tick`),
console or button commands come in (:meth:`Session.command`); the session debounces, asks
the reconciler what the board means, applies actions to the engine, journals them (fsync
before anything is shown), answers prompts, and keeps the LED frame (:attr:`Session.leds`)
and the player-facing notices up to date. Nothing in here sleeps, reads a clock or touches
a device: the runner passes the time in and moves frames between devices and the session.

A move that is exact but could still change (a hold, or a prompt such as a promotion) is
*tentative*: it is applied when the hold runs out, when the player chooses, or as soon as
the board can no longer be explained without it (the opponent has started their move) --
then with its default, if it has one.

The session's helpers, one job each: :mod:`.bases` builds the reconciler's inputs from the
game, :mod:`.commands` is the command language, :mod:`.texts` the text a player reads,
:func:`.leds.scene_of` the LED scene.
"""

from __future__ import annotations

from typing import Callable, Sequence

from board_driver.devices import LedImage, RawFrame
from board_driver.errors import BoardDriverError
from board_driver.journal import GameStore, Journal, JournalError
from board_driver.records import ComputerSettings, Draw, Event, Players, Pop, Push, Record, Reopen, Resign, Result, pair
from board_driver.records import Hint as HintRecord
from board_driver.referee import commands, texts
from board_driver.referee.clock import Clock, ClockState
from board_driver.referee.bases import PROMOTION_ORDER, Bases
from board_driver.referee.commands import CommandError, HandOver, NewGame
from board_driver.referee.debounce import Debouncer, SquareEvent
from board_driver.referee.evidence import EventLog
from board_driver.referee.layout import Layout
from board_driver.referee.opponent import Decision, Expect, HintFound, HintEngine, Opponent
from board_driver.referee.reconcile import (
    Board,
    Explanation,
    Fix,
    Tentative,
    Verdict,
    fix_between,
    reconcile,
)
from board_driver.referee.reconcile import VerdictStatus as VS
from board_driver.referee.scene import SceneState, render_scene, scene_of
from board_driver.referee.timekeeper import Timekeeper
from board_driver.referee.texts import COLOR
from board_driver.referee.unwatched import read_board
from board_driver.settings import DriverSettings
from engine.contract import Game, Termination
from engine.errors import EngineError
from engine.game import Action, Outcome

__all__ = ["COLOR", "CommandError", "HELP", "HandOver", "HintEngine", "NewGame", "PROMOTION_ORDER", "Session"]

HELP = "\n".join(commands.help_lines())



def both_players(players: dict[str, str] | None, base: dict[str, str] | None = None) -> dict[str, str]:
    """Both sides' names: a side not named keeps ``base``'s name, else is called ``White`` or
    ``Black`` (``play --black fsf`` names only the computer's side)."""
    given = players or {}
    kept = base or {}
    return {side: str(given.get(side) or kept.get(side) or side.capitalize()) for side in ("white", "black")}

class Session:
    """One game on one board: debouncer, reconciler, engine, journal and LED scene together."""

    def __init__(self, game: Game, *, variant_name: str, layout: Layout, settings: DriverSettings,
                 journal: Journal | None = None, game_id: str | None = None,
                 store: GameStore | None = None, occupancy: int | None = None, now: int = 0,
                 players: dict[str, str] | None = None, san_notices: bool = True):
        self.game = game
        self.san_notices = san_notices      # name moves in notices as Nf3 (costs an engine push)
        self.variant_name = variant_name
        self.layout = layout
        self.settings = settings
        self.journal = journal
        self.game_id = game_id
        self.store = store
        self.players = both_players(players)
        self.now = now
        occ = game.occupancy() if occupancy is None else occupancy
        self.debouncer = Debouncer(settings.debounce_ms, occ)
        self.occupancy = occ
        self.events = EventLog()            # the debounced board events, indexed (evidence.py)
        self.marks: list[int] = [0] * len(game.history)   # per history entry: event index where its window starts
        self.choice: str | None = None
        self.tentative: Tentative | None = None
        self.recover = False                # after a takeback command or a new game: wait for the board
        self.unread = False                 # a resumed game whose board has not been read yet: nothing is committed
        self.verdict = Verdict(VS.SETTLED)
        self.retry_at: int | None = None     # a journal write failed: try the board again then
        self.notices: list[str] = []
        self._mover = 0                     # the side that made the action being announced
        self.bases = Bases(game, self.marks)
        self.computer: Opponent | None = None   # the side(s) played from elsewhere (computer, remote board)
        # the ``hint`` command's engine (opponents.computer.attach sets it: the referee knows no engines)
        self.hinter: HintEngine | None = None
        self.hint_shown: tuple[int, Action] | None = None   # (history length, action) lit until the game moves on
        self._scene: SceneState | None = None
        self._last_status: tuple | None = None
        self._held: tuple | None = None     # (inputs, verdict) of the last hold: see _verdict
        self.leds: LedImage = LedImage.dark(layout.physical_size)
        self.led_layers: tuple[str | None, ...] = (None,) * layout.physical_size
        self.time = Timekeeper(self)        # the chess clock: docs/board-driver.md, *Chess clocks*
        self._handover: HandOver | None = None  # a new game asked for, for the loop to hand to the game host

    # -- inputs -----------------------------------------------------------------------------------
    def on_frame(self, frame: RawFrame) -> None:
        """A raw sensor frame (closed sensor indexes) seen at ``frame.t``."""
        if frame.gap or self.unread:
            self.read_board(frame)      # the first frame after the link came back (or after a resume)
            return
        self.now = max(self.now, frame.t)
        occ = self.layout.occupancy(frame.closed)
        self._step(self.debouncer.feed(frame.t, occ))

    def tick(self, now: int) -> None:
        """Time has passed: debounced changes and held moves may be due."""
        self.now = max(self.now, now)
        self._step(self.debouncer.advance(self.now))

    def _step(self, events: list[SquareEvent]) -> None:
        try:
            self._step_events(events)
        finally:
            if events and self.journal is not None:
                self.journal.flush()        # the step's board events, if no action took them along

    def _step_events(self, events: list[SquareEvent]) -> None:
        for e in events:
            self.record_event(e)
        d = self.verdict.deadline
        r = self.retry_at
        c = self.computer
        if (d is not None and d <= self.now) or (r is not None and r <= self.now):
            self.retry_at = None
            self.update(self.now)
        elif c is not None and c.news():    # the computer's search in the background ended
            self.update(self.now)
        elif self.take_hint():              # a hint found in the background
            self.render()
        elif events:
            self.render()
        self.check_flag(self.now)

    def next_deadline(self, polls: bool = True) -> int | None:
        """When :meth:`tick` has something to do, or None. ``polls=False`` leaves out an
        opponent that only looks at its link every few ms (a remote player): what is due on the
        board itself (the page waits for that before it answers)."""
        c = self.computer
        if c is not None and not polls and c.polls:
            c = None
        h = self.hinter if self.hinter is not None and self.hinter.background else None
        ds = [d for d in (self.debouncer.deadline(), self.verdict.deadline, self.retry_at,
                          c.deadline(self.now) if c is not None else None, self.time.flag_due(),
                          h.deadline(self.now) if h is not None else None) if d is not None]
        return min(ds) if ds else None

    def read_board(self, frame: RawFrame) -> None:
        """The board read afresh (a start, a resume, a reconnect): what changed while nobody
        watched is explained from the journaled position (unwatched.py)."""
        self.unread = False
        try:
            read_board(self, self.layout.occupancy(frame.closed), frame.t)
        finally:
            if self.journal is not None:
                self.journal.flush()
        self.render()

    def record_event(self, e: SquareEvent, update: bool = True) -> None:
        if e.placed:
            self.occupancy |= 1 << e.square
        else:
            self.occupancy &= ~(1 << e.square)
        self.events.append(e, self.occupancy)
        self.time.board_event(e.t)          # a resumed game's clock runs again
        if self.journal is not None:
            # held until the step ends, or written with the action it completes (one write)
            self.journal.write(Event(e.t, self.game.geometry.name(e.square), e.placed, format(self.occupancy, "x")),
                               sync=False, hold=True)
        if self.events.n % 4096 == 0:
            # bounded memory in a long game: what no window can start before any more
            self.events.forget_before(min(self.marks[-8:], default=0))
        if update:
            self.update(e.t, render_leds=False)

    # -- game state the reconciler reads (see :mod:`.bases`) ------------------------------------------
    def prepare(self) -> bool:
        """Work ahead while nothing happens on the board: the position's legal actions (a
        commit shows its LED frame before listing them) and the states a takeback or a
        replacement would be explained from, so that the next frame is answered at once.

        One call does a bounded step; it returns True when there is more to do (previews
        left), and the service loop then calls it again as soon as it has found no frame
        waiting, instead of after its poll interval (runner.py)."""
        self.bases.release()
        if self.outcome() is None:
            self.bases.base(0)
            self.bases.base(1)
            self.bases.end_base()
            self.bases.prefs(self.choice)
            return self._preview_ahead()
        return False

    PREVIEWS_PER_STEP = 3       # previews made by one idle prepare(): each is a push on a copy, and a frame waits for it

    def _preview_ahead(self) -> bool:
        """While a piece is in the player's hand: the aftermath of the actions the board may be
        on its way to, a few per step, so that the commit only pushes and writes. True when
        the step's budget ran out before every candidate had its preview."""
        v = self.verdict
        if self.recover or v.status == VS.SETTLED or self.computer is not None:
            return False
        budget = self.PREVIEWS_PER_STEP
        for e in v.options + v.partial:
            if e.depth == 0 and len(e.actions) == 1 and not e.actions[0].silent:
                if not budget:
                    if self.bases.preview_of(e.actions[0]) is None:
                        return True
                elif self.bases.preview(e.actions[0]):
                    budget -= 1
        return False

    def outcome(self):
        """The game's outcome (cached until the game changes)."""
        return self.bases.outcome()

    def invalidate(self) -> None:
        self.bases.invalidate()
        self._scene = None

    def _verdict(self, now: int) -> Verdict:
        confirmed = self.game.occupancy()
        if self.recover:
            if self.occupancy == confirmed:
                self.recover = False
                self.notices.append("The board matches the game again: play on.")
                return Verdict(VS.SETTLED)
            return Verdict(VS.MISMATCH, fix=fix_between(confirmed, self.occupancy, self.game.geometry.files))
        if self.occupancy == confirmed:
            # the board shows the position: settled, as reconcile() says first -- without listing
            # the position's actions, which a commit leaves for the idle time after its LED frame
            return Verdict(VS.SETTLED)
        inputs = (self.occupancy, len(self.events), self.bases.generation, self.choice)
        held = self._held
        if held is not None and held[0] == inputs:
            # nothing changed since a move was held: it is held until its deadline, then
            # committed -- what reconcile() would say again, without working it out again
            v = held[1]
            if now < v.deadline:
                return v
            return v.due()
        v = reconcile(self.bases.base, Board(self.occupancy, self.events), now, hold_ms=self.settings.hold_ms,
                      prefs=self.bases.prefs(self.choice), end_base=self.bases.end_base)
        self._held = (inputs, v) if v.status == VS.HOLD else None
        return v

    # -- applying explanations ------------------------------------------------------------------------
    def _push_mem(self, expl: Explanation, start: int) -> list[tuple[Action, int]]:
        g = self.game
        popped: list[tuple[Action, int]] = []
        for _ in range(expl.depth):
            while g.history and g.history[-1].silent:
                popped.append((g.pop(), self.marks.pop()))
            popped.append((g.pop(), self.marks.pop()))
        turns = []
        for a in expl.actions:
            before = g.turn
            g.push(a)
            turns.append((before, g.turn))
            self.marks.append(start)
        self.time.push_turns = turns
        if not expl.actions and self.marks:
            self.marks[-1] = max(self.marks[-1], start)   # a takeback: this position is confirmed anew
        self.invalidate()
        return popped

    def _undo_mem(self, expl: Explanation, popped: list[tuple[Action, int]]) -> None:
        g = self.game
        for _ in expl.actions:
            g.pop()
            self.marks.pop()
        for a, m in reversed(popped):
            g.push(a)
            self.marks.append(m)
        self.invalidate()

    def _journal_apply(self, expl: Explanation, popped: list[tuple[Action, int]], start: int,
                       why: str, sans: list[str] | None = None) -> None:
        g = self.game
        plan = self.time.plan(expl, popped, start) if self.time.clock is not None else None
        if self.journal is not None:
            ply = len(g.history) - len(expl.actions) + len(popped)
            recs: list[Record] = []
            for i, (a, _) in enumerate(popped):
                ply -= 1
                recs.append(Pop(ply, a.text, why, clk=pair(plan[2][i]) if plan is not None else None))
            for i, a in enumerate(expl.actions):
                clk = plan[3][i] if plan is not None else {}
                recs.append(Push(ply + i + 1, a.text, w=start, clk=pair(clk.get("clk")), clk0=pair(clk.get("clk0")),
                                 n=pair(clk.get("n"))))
            out = self.outcome()
            if out is not None:
                recs.append(Result(out.result, out.reason, clk=pair(plan[0].remaining) if plan is not None else None))
            try:
                self.journal.write_all(recs, sync=True)     # all of it on disk, or none of it
            except JournalError:
                self._undo_mem(expl, popped)            # the game stays what the journal holds
                self.retry_at = self.now + 1000         # and the board is read again in a second
                raise
        self.time.apply(plan)
        self.choice = None
        self.tentative = None
        self._announce(expl, popped, sans)

    def journal_result(self) -> None:
        out = self.outcome()
        if out is not None and self.journal is not None:
            clk = None
            if self.clock is not None:
                self.time.game_over()               # both clocks stop
                clk = pair(self.clock.state.remaining)
            self.journal.write(Result(out.result, out.reason, clk=clk), sync=False)

    # -- the clock (timekeeper.py) -----------------------------------------------------------------
    @property
    def clock(self) -> Clock | None:
        """The game's chess clock, None without a time control."""
        return self.time.clock

    def attach_clock(self, clock: Clock, mode: str = "auto", *, stack: list[ClockState] | None = None,
                     resumed: bool = False) -> None:
        """Play under ``clock`` (:meth:`.timekeeper.Timekeeper.attach`)."""
        self.time.attach(clock, mode, stack=stack, resumed=resumed)

    def check_flag(self, now: int) -> None:
        self.time.check_flag(now)

    def commit(self, expl: Explanation, start: int) -> None:
        pv = self.bases.preview_of(expl.actions[0]) if expl.depth == 0 and len(expl.actions) == 1 else None
        sans = [pv.san] if pv is not None and self.san_notices else self._sans(expl)
        self._mover = self.game.turn
        popped = self._push_mem(expl, start)
        if pv is not None:
            self.bases.seed(pv)             # worked out while the piece was in the hand
        self._journal_apply(expl, popped, start, "replaced" if expl.actions else "takeback", sans)

    def _sans(self, expl: Explanation) -> list[str]:
        """Readable names of the actions, computed in the position they are played from."""
        if expl.depth or not self.san_notices:
            return [a.text for a in expl.actions]
        g = self.game                       # the live game is read, never pushed: later actions on a copy
        out = []
        try:
            for i, a in enumerate(expl.actions):
                out.append(g.san(a) if not a.silent else a.text)
                if i + 1 < len(expl.actions):
                    if g is self.game:
                        g = g.copy()
                    g.push(a)
        except EngineError:
            pass
        return out

    def _announce(self, expl: Explanation, popped, sans: list[str] | None) -> None:
        self.notices.extend(texts.announce(expl, [a for a, _ in popped], self._mover, sans, self.outcome(),
                                           game=self.game if not expl.actions else None))

    # -- the update step ----------------------------------------------------------------------------
    def update(self, now: int, render_leds: bool = True) -> None:
        v = self._verdict(now)
        t = self.tentative
        shown = None
        if self.unread:
            # the journal's board evidence, the board not read yet: a move held or under way
            # when the program stopped may have gone on meanwhile (a slide set down further on):
            # nothing is committed before the board is read (read_board)
            self.verdict = v
            if render_leds:
                self.render()
            return
        if v.status == VS.MISMATCH and t is not None and not self.recover:
            # Can the board be explained once the tentative move is applied (the opponent has
            # moved on)? Adopt it only if that explains the board exactly; if it merely makes
            # a move under way possible (or a piece was knocked), keep waiting.
            chosen = t.verdict.chosen
            if chosen is not None:
                sans = self._sans(chosen)
                mover = self.game.turn
                popped = self._push_mem(chosen, t.mark)
                v2 = self._verdict(now)
                if v2.status in (VS.COMMIT, VS.HOLD, VS.PROMPT, VS.SETTLED):
                    self._mover = mover
                    self._journal_apply(chosen, popped, t.mark, "replaced", sans)
                    v = v2
                else:
                    self._undo_mem(chosen, popped)
                    if v2.status == VS.PENDING:
                        shown = v2
        for _ in range(4):
            if v.status != VS.COMMIT or self._withheld(v):
                break
            self.commit(v.options[0], len(self.events))
            v = self._verdict(now)
        for _ in range(64):                 # the computer's silent actions, then its next move shown
            if self.computer is None or (v.status not in (VS.SETTLED, VS.MISMATCH) and not self._withheld(v)) \
                    or not self.apply_decision(self.computer.decide(self)):
                break
            v = self._verdict(now)
            if v.status == VS.COMMIT and not self._withheld(v):
                # the board already shows the action just accepted (the player carried out a
                # remote move from its preview): it is applied now, not at the next board event
                self.commit(v.options[0], len(self.events))
                v = self._verdict(now)
        self.time.board_ready(now)          # a new game's clock starts once the board is set up
        if v.status in (VS.HOLD, VS.PROMPT):
            self.tentative = Tentative(v, len(self.events))
        elif v.status == VS.SETTLED:
            self.tentative = None
        self.verdict = shown if shown is not None else v
        self.notice_verdict(v)
        if self.computer is not None:
            self.computer.on_verdict(self, v)   # a remote player previews the move held tentatively
        if render_leds:
            self.render()

    def _withheld(self, v: Verdict) -> bool:
        """A commit of an action the remote side has only previewed (docs/remote.md, *Previews*):
        the board shows it, its record has not arrived, and nothing is applied until it does."""
        if v.status != VS.COMMIT:
            return False
        only = self.bases.only
        return only is not None and only.withholds(v.options[0])

    def notice_verdict(self, v: Verdict) -> None:
        key = (v.status, tuple(o.label for o in v.options), v.fix, self.recover)
        if key == self._last_status:
            return
        self._last_status = key
        line = texts.verdict_notice(self.game, v, self.recover, self.outcome())
        if line is not None:
            self.notices.append(line)

    # -- commands (see :mod:`.commands`) ------------------------------------------------------------
    def command(self, text: str, now: int | None = None) -> list[str]:
        """Carry out a console command; returns the replies (notices follow via :meth:`drain_notices`)."""
        if now is not None:
            self.now = max(self.now, now)
        if not text.strip():
            return []
        replies = commands.run(self, text)
        self.update(self.now)
        self.check_flag(self.now)
        return replies

    # -- intents: every change a helper makes to the game goes through one of these ------------------
    #
    # The command language (commands.py), the opponents (opponents/), the game host and the page
    # never write the session's parts: each of these does one whole job (game, marks, bases,
    # clocks, tentative move, choice, journal), once. tests/board_driver/test_one_writer.py
    # fails on a write from outside referee/.

    def notify(self, line: str) -> None:
        """Say ``line`` to the player (the console, the page, the log)."""
        self.notices.append(line)

    def name_moves_in_san(self, on: bool) -> None:
        """Name moves in notices as Nf3 (True; costs an engine push) or by their text (e2e4)."""
        self.san_notices = on

    def hand_over(self, cmd: HandOver) -> None:
        """Leave ``cmd`` (a new game) for the loop, which ends and hands it to the game host."""
        self._handover = cmd

    def take_handover(self) -> HandOver | None:
        """What a command left for the game host (the loop asks after each command), once."""
        cmd, self._handover = self._handover, None
        return cmd

    def ask_for_setup(self) -> bool:
        """A new game whose board does not show its start position yet: wait for the player to
        set it up as the LEDs show (True when the board differs)."""
        if self.occupancy == self.game.occupancy():
            return False
        self.recover = True
        self.notify("Set up the start position: the LEDs show the squares to fill (blue) and clear (red).")
        return True

    def restore(self, events: Sequence[tuple[SquareEvent, int]], marks: Sequence[int], occupancy: int) -> None:
        """A resumed game's board as its journal left it (host/lifecycle.py): the board events
        kept as evidence (each with the occupancy after it), the event index each action's
        window starts at, and what the board showed last."""
        for e, occ in events:
            self.events.append(e, occ)
        self.marks[:] = marks
        self.occupancy = occupancy
        self.debouncer.reset(occupancy)
        self.unread = True                  # until the board is read (read_board, or the first frame)
        self.invalidate()

    def name_players(self, players: dict[str, str], *, journal: bool = True) -> None:
        """The players' names from now on (kept in the game record: journaled when ``journal``
        and they changed)."""
        players = both_players(players, self.players)
        if players == self.players:
            return
        self.players = players
        if journal and self.journal is not None:
            self.journal.write(Players(self.players), sync=True)

    def note_computer(self, computer: dict) -> None:
        """How the computer plays its sides from now on (``{"move_time": s}``), journaled."""
        if self.journal is not None:
            self.journal.write(ComputerSettings(dict(computer)), sync=True)

    def note_choice(self, key: str) -> None:
        """Remember ``key`` (a piece letter) for the next choice a move asks for."""
        self.choice = key

    def apply_silent(self, action: Action) -> None:
        """Apply an action the board cannot see (a purchase, a pass, the end of a turn)."""
        self.commit(Explanation(0, (action,)), len(self.events))

    def record_setup(self, action: Action) -> None:
        """Record an army set-up (Army csipgs); the player then sets the pieces up as the LEDs show."""
        self.apply_silent(action)
        self._await_board()

    def _await_board(self) -> None:
        """The board differs from the game: wait for the player to put it right."""
        if self.occupancy != self.game.occupancy():
            self.recover = True

    def expect_only(self, expect: Expect | None) -> bool:
        """What the reconciler accepts of the side played from elsewhere from now on (None: any
        legal action). True when that changed."""
        if self.bases.only == expect:
            return False
        self.bases.only = expect
        self.invalidate()
        return True

    def apply_decision(self, d: Decision) -> bool:
        """Apply what a side played from elsewhere decided (:mod:`.opponent`); True when the game
        or what is accepted changed."""
        for line in d.notices:
            self.notify(line)
        changed = d.changed
        for s in d.silent:
            self.notify(s.notice)
            if s.setup:
                self.record_setup(s.action)
            else:
                self.apply_silent(s.action)
            changed = True
        if not d.keep_expect:
            changed |= self.expect_only(d.expect)
        return changed

    def take_back(self, n: int, why: str = "takeback", by: str | None = None) -> list[Action]:
        """Take the last ``n`` actions back: the journal's pops (``why`` in each, and ``by``, the
        remote board that asked), both clocks as they were before them, the tentative move and
        the pending choice dropped, and the board to put right as the LEDs show. Returns the
        actions taken back, the last first."""
        g = self.game
        popped = []
        for _ in range(min(n, len(g.history))):
            popped.append(g.pop())
            self.marks.pop()
        if self.marks:
            self.marks[-1] = len(self.events)       # events before the takeback are no evidence now
        clks = self.time.takeback(len(popped))      # both clocks as they were before the actions
        if self.journal is not None:
            ply = len(g.history) + len(popped)
            for i, a in enumerate(popped):
                ply -= 1
                self.journal.write(Pop(ply, a.text, why, by=by, clk=pair(clks[i]) if clks else None), sync=False)
            self.journal.sync()
        self.invalidate()
        self.tentative = None
        self.choice = None
        self._await_board()
        return popped

    def adopt(self, common: int, actions: Sequence[Action], *, after_each: Callable[[], None] | None = None,
              why: str = "remote adopt") -> list[Action]:
        """Go on from another record: the actions after its first ``common`` are taken back (as
        :meth:`take_back`: journal, clocks, tentative move, choice) and ``actions`` applied in
        their place (``after_each`` is called after each); the board is then put right as the
        LEDs show. Returns the actions taken back, the last first."""
        popped = self.take_back(len(self.game.history) - common, why=why)
        for a in actions:
            self.apply_silent(a)
            if after_each is not None:
                after_each()
        self._await_board()
        return popped

    def _end(self, record: Resign | Draw) -> None:
        self.invalidate()                   # the cached outcome is stale: the result must reach the journal
        if self.journal is not None:
            self.journal.write(record, sync=False)
            self.journal_result()
            self.journal.sync()
        self.invalidate()

    def resign(self, side: int, by: str | None = None) -> Outcome:
        """``side`` resigns (``by``: the remote board that said so)."""
        self.game.resign(side)
        self._end(Resign(COLOR[side], by=by))
        out = self.outcome()
        assert out is not None
        return out

    def agree_draw(self, by: str | None = None) -> Outcome:
        """Both players agree to a draw (``by``: the remote board that agreed)."""
        self.game.resign(self.game.turn, Termination.AGREEMENT, draw=True)
        self._end(Draw(by=by))
        out = self.outcome()
        assert out is not None
        return out

    def reopen(self) -> None:
        """Take back a resignation or an agreed draw: play goes on, the clock with it."""
        self.game.unresign()
        if self.journal is not None:
            self.journal.write(Reopen(), sync=True)
        self.invalidate()
        self.time.reopened()

    # the clock's intents: the Timekeeper (timekeeper.py) does the work and journals it
    def pause_clock(self) -> None:
        """Stop the running clock (an arbiter's pause), journaled."""
        self.time.pause()

    def start_clock(self) -> None:
        """Start the stopped clock for the side to move, journaled."""
        self.time.start()

    def adjust_clock(self, side: int, ms: int, *, by: str | None = None, ply: int | None = None) -> None:
        """Set ``side``'s time left to ``ms`` (an arbiter's adjustment, or the remote board
        ``by``'s own reading of its player's time after action ``ply``), journaled."""
        self.time.adjust(side, ms, by=by, ply=ply)

    def press_clock(self) -> None:
        """The clock button: the running side's move is over, the other side's clock starts."""
        self.time.press()

    def script_time(self, *, horizon: int | None, flag_until: int | None) -> None:
        """An event script's time (sim/events.py): the clocks' view ends at ``horizon`` and no flag
        falls after ``flag_until`` (None: the real time)."""
        self.time.script_time(horizon=horizon, flag_until=flag_until)

    # -- views ------------------------------------------------------------------------------------------
    def scene_state(self) -> SceneState:
        if self._scene is None:
            out = self.outcome()
            drops = self.bases.next_drop_squares() if out is None else frozenset()
            purchase = self.bases.purchase_squares() if drops else frozenset()
            self._scene = scene_of(self.bases.state(), out, drops, purchase,
                                   self.game.resigned if self.time.flagged() else None)
        return self._scene

    def render(self) -> None:
        v = self.verdict
        recover = v.fix if self.recover else None
        shown = None if self.recover else v
        if self.outcome() is not None and v.status in (VS.MISMATCH, VS.PENDING):
            shown = None
        prompt_sq: frozenset[int] = frozenset()
        t = self.tentative
        if t is not None and v.status != VS.PROMPT and t.verdict.status == VS.PROMPT and t.verdict.default is None:
            prompt_sq = frozenset(sq for o in t.verdict.options for a in o.actions for sq in a.places)
        hint = self.computer.hint() if self.computer is not None and not self.recover else None
        if hint is None and self.hint_shown is not None and not self.recover:
            at, action = self.hint_shown
            hint = action if at == len(self.game.history) and self.outcome() is None else None
        self.leds, self.led_layers = render_scene(self.layout, self.settings.palette, self.scene_state(),
                                                  shown, recover, prompt_sq, computer=hint)

    def show_hint(self, action: Action | None, rec: HintRecord) -> None:
        """Light ``action`` (None: nothing to light) as the hint until the game moves on, and
        journal the hint's record."""
        self.hint_shown = (len(self.game.history), action) if action is not None else None
        if self.journal is not None:
            self.journal.write(rec, sync=True)
        self.invalidate()

    def take_hint(self) -> bool:
        """Take up a hint the hinter found in the background (True when one was said): said as
        a notice, lit and journaled; dropped when the game moved on meanwhile."""
        h = self.hinter
        if h is None or not h.background or not h.news():
            return False
        try:
            got = h.take(self)
        except (BoardDriverError, ValueError) as exc:
            self.notices.append(f"hint: {exc}")
            return True
        if got is None or self.outcome() is not None:
            return False
        self.show_hint(got.action, got.record)
        self.notices.append(got.words)
        return True

    def drain_notices(self) -> list[str]:
        out, self.notices = self.notices, []
        return out

    def name(self, sq: int) -> str:
        return self.game.geometry.name(sq)

    def piece_name(self, sq: int, base_pm: dict | None = None) -> str | None:
        return texts.piece_name(self.game, sq, base_pm)

    def fix_text(self, fix: Fix | None) -> str:
        return texts.fix_text(self.game, fix)

    def prompt_text(self, v: Verdict) -> str:
        return texts.prompt_text(self.game, v)

    def pending(self) -> dict | None:
        """The open prompt, mismatch or move under way, as JSON-ready data; None when settled."""
        t = self.tentative
        return texts.pending_json(self.game, self.verdict, t.verdict if t is not None else None, self.recover)

    def report(self) -> dict:
        g = self.game
        out = g.outcome()
        return {
            "variant": self.variant_name, "game": self.game_id,
            "moves": [a.text for a in g.history], "fen": g.fen(),
            "turn": COLOR[g.turn], "result": out.result if out else None,
            "reason": out.reason if out else None, "pending": self.pending(),
            "journal": str(self.journal.path) if self.journal is not None else None,
            "state": texts.state_json(g),
            "clocks": self.time.view(min(self.now, self.time.horizon) if self.time.horizon is not None else None),
        }

    def attach_hinter(self, hinter: HintEngine) -> None:
        """Let ``hinter`` answer the ``hint`` command from now on (the referee knows no engines)."""
        self.hinter = hinter

    @property
    def expected(self) -> Expect | None:
        """What the reconciler accepts of the side played from elsewhere (None: any action)."""
        return self.bases.only

    def attach_computer(self, computer: Opponent) -> None:
        """Let ``computer`` (a :class:`.computer.Computer`, a remote board) play its sides from now on."""
        self.computer = computer
        self.invalidate()
        self.update(self.now)

    def close(self) -> None:
        if self.computer is not None:
            self.computer.close()
        if self.hinter is not None:
            self.hinter.close()
        if self.journal is not None:
            self.journal.close()
