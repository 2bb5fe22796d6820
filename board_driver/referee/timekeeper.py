"""The chess clock of one session's game: when a move counts, when the clock switches, what a
takeback restores, when a flag falls, and what the journal and the players are told.

:class:`board_driver.referee.clock.Clock` is the two-sided clock itself (time controls,
switching, remaining time); a :class:`Timekeeper` runs one for a :class:`.session.Session`,
which owns the game, the board events and the journal it reads (see docs/board-driver.md,
*Chess clocks*):

* a move counts at the board event that completed it (its raw time: debouncing costs the
  player nothing), an action the board cannot see at the command's time, a move the board
  asked about at the answer's time (the prompt ran the mover's clock);
* the clock switches when the turn passes (a multi-move turn at its end), in ``auto`` mode;
  in ``press`` mode only the players switch it (``press``);
* every journaled push carries the times after it (``clk``) and before it (``clk0``); a pop
  carries the times it restored, so a resume and a takeback read both clocks back exactly;
* a resumed game's clock waits for the first board event (the time the board was off is
  never charged), a new game's for the board to be set up; on the board's service (the page,
  ``serve``: :meth:`Timekeeper.hold_for_first_move`) a new game's waits for its first move, as
  a DGT clock does (the first move is not timed; the other side's clock starts when it is
  made), or ``clock start``;
* the flag falls at the exact millisecond, unless a move completed before it is still being
  debounced or held (it is committed first); a flag is a draw when the other side cannot win.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from board_driver.journal import JournalError
from board_driver.records import ClockChange, Flag, Result, pair
from board_driver.referee.clock import Clock, ClockState, format_clock
from board_driver.referee.reconcile import Explanation
from board_driver.referee.reconcile import VerdictStatus as VS
from board_driver.referee.texts import COLOR
from engine.contract import Termination
from engine.timeout import can_win

if TYPE_CHECKING:
    from board_driver.referee.session import Session


class Timekeeper:
    """The clock of ``session``'s game (``clock`` None: the game has no time control)."""

    def __init__(self, session: Session):
        self.s = session
        self.clock: Clock | None = None
        self.mode = "auto"                  # "auto": the board switches it; "press": the players do
        self.stack: list[ClockState] = []   # per history entry: the clock just before it
        self.wait = False                   # stopped until the next board event or `clock start` (a resume)
        self.paused = False                 # stopped by `clock pause` until `clock start`
        self.setup = False                  # a new game's clock starts once the board is set up
        self.first = False                  # the clock waits for the game's first move (or `clock start`)
        self.hold_first = False             # ... once the board is set up (hold_for_first_move)
        self.push_turns: list[tuple[int, int]] = []   # (turn before, turn after) of the actions just pushed
        self.flag_until: int | None = None  # no flag falls after this time (during an events script's settling)
        self.horizon: int | None = None     # an events script's last event: its report reads the clocks there

    def attach(self, clock: Clock, mode: str = "auto", *, stack: list[ClockState] | None = None,
               resumed: bool = False) -> None:
        """Play under ``clock``. A new game's clock starts now for the side to move (once the
        board is set up); a resumed one stays stopped until the next board event or
        ``clock start``: the time the board was off is never charged."""
        s = self.s
        self.clock = clock
        self.mode = mode
        st = list(stack or [])
        first = ClockState(clock.state.remaining, clock.state.moves)
        n = len(s.game.history)
        self.stack = [first] * (n - len(st)) + st[-n:] if n else []
        if s.outcome() is not None:
            return
        if resumed:
            self.wait = True
        elif s.recover:
            self.setup = True
        else:
            clock.start(s.game.turn, s.now)

    def hold_for_first_move(self) -> None:
        """A new game's clock waits for the game's first move (then the other side's clock
        starts, as a DGT clock's does when the first move is made) or ``clock start``, instead
        of running from the moment the game was opened. Nothing once a move was made."""
        s = self.s
        c = self.clock
        if c is None or s.game.history or s.outcome() is not None or self.wait or self.paused:
            return
        if self.setup:
            self.hold_first = True          # the board is set up first: then it waits
        elif c.running is not None:
            c.stop(c.state.since)           # nothing charged: it started a moment ago
            self.first = True

    # -- the session's moments -----------------------------------------------------------------------
    def board_event(self, t: int) -> None:
        """A board event at raw time ``t``: a resumed game's clock runs again (the side to move's)."""
        s = self.s
        if self.wait and self.clock is not None and s.outcome() is None:
            self.wait = False
            self.clock.start(s.game.turn, max(self.clock.state.since, t - s.settings.debounce_ms))
            s.notices.append(f"The clock runs again: {COLOR[s.game.turn]} to move.")

    def board_ready(self, now: int) -> None:
        """The board is set up for a new game: its clock starts (it waited for the pieces)."""
        s = self.s
        if self.setup and not s.recover and self.clock is not None:
            self.setup = False
            if s.outcome() is None and self.hold_first:
                self.first = True           # started by the first move, or `clock start`
            elif s.outcome() is None:
                self.clock.start(s.game.turn, now)

    def game_over(self) -> None:
        """The game ended (not by the clock): both clocks stop."""
        if self.clock is not None:
            self.clock.stop(self.s.now)

    def _move_time(self, expl: Explanation, start: int) -> int:
        """When the actions of ``expl`` were made (see the module docstring)."""
        s = self.s
        if all(a.silent for a in expl.actions):
            return s.now
        t = s.tentative
        if t is not None and t.verdict.status == VS.PROMPT and any(o is expl or o == expl for o in t.verdict.options):
            return s.now
        et = s.events.time_of(start - 1)
        if et is None:
            return s.now
        return min(s.now, et - s.settings.debounce_ms)

    def _restart(self, before: ClockState, now: int) -> ClockState:
        running = None if (self.wait or self.paused) else before.running
        return ClockState(before.remaining, before.moves, running, now)

    def plan(self, expl: Explanation, popped, start: int):
        """The clock after ``expl`` (pure: applied with :meth:`apply` once the journal holds it):
        (state, stack, each pop's clk, each push's fields)."""
        c = self.clock
        assert c is not None
        cl = Clock(c.tc, c.state)
        stack = list(self.stack)
        now = self.s.now
        pops = []
        for _ in popped:
            if stack:
                cl.restore(self._restart(stack.pop(), now))     # a takeback: both clocks as before the move
            pops.append(list(cl.remaining(now)))
        pushes = []
        t = self._move_time(expl, start) if expl.actions else now
        if cl.running is not None:
            t = max(t, cl.state.since)
        for before_turn, after_turn in self.push_turns[-len(expl.actions):] if expl.actions else []:
            before = ClockState(cl.remaining(t), cl.state.moves, cl.state.running, t)
            stack.append(before)
            if after_turn != before_turn and self.first and cl.running is None:
                if self.mode == "auto":         # the game's first move: the other side's clock starts
                    cl.switch(t, before_turn)   # (in press mode the press starts it)
            elif after_turn != before_turn and self.mode == "auto":
                if cl.running is None:          # stopped (a pause): the move counts, the clock stays stopped
                    cl.switch(t, before_turn)
                    cl.stop(t)
                elif cl.running == before_turn and cl.remaining(t)[before_turn] > 0:
                    cl.switch(t, before_turn)
                # else the flag fell before the move: check_flag says so
            pushes.append({"clk": list(cl.remaining(t)), "clk0": list(before.remaining), "n": list(cl.state.moves)})
        if self.s.outcome() is not None and cl.running is not None:
            cl.stop(t)
        return cl.state, stack, pops, pushes

    def apply(self, plan) -> None:
        """The clock as :meth:`plan` worked it out (the journal holds it now)."""
        if plan is not None and self.clock is not None:
            self.clock.restore(plan[0])
            self.stack = plan[1]
            if self.first and self.clock.running is not None:
                self.first = False

    def takeback(self, n: int) -> list[list[int]]:
        """``n`` actions were taken back (the takeback command): both clocks go back to what they
        were before them; returns each pop's clk for the journal."""
        out: list[list[int]] = []
        c = self.clock
        if c is None:
            return out
        now = self.s.now
        for _ in range(n):
            if self.stack:
                c.restore(self._restart(self.stack.pop(), now))
            out.append(list(c.remaining(now)))
        return out

    # -- what is shown --------------------------------------------------------------------------------
    def view(self, now: int | None = None) -> dict | None:
        """Both clocks as JSON-ready data (the page, the report, the club), or None."""
        c = self.clock
        if c is None:
            return None
        s = self.s
        now = s.now if now is None else now
        w, b = c.remaining(now)
        running = c.running
        return {"tc": c.tc.text, "mode": self.mode, "white": max(0, w), "black": max(0, b),
                "running": COLOR[running] if running is not None else None,
                "paused": self.paused, "waiting": self.wait or self.first, "first_move": self.first,
                "flag": COLOR[s.game.resigned] if self.flagged() and s.game.resigned is not None else None,
                "at": now}

    def line(self, now: int | None = None) -> str | None:
        """``Clock: White 0:04:58 (running)  Black 0:05:00`` for the terminal, or None."""
        d = self.view(now)
        if d is None:
            return None
        parts = []
        for side in ("white", "black"):
            txt = f"{side.capitalize()} {format_clock(d[side], tenths=True)}"
            if d["running"] == side:
                txt += " (running)"
            if d["flag"] == side:
                txt += " (flag)"
            parts.append(txt)
        state = " -- starts with the first move (or `clock start`)" if d["first_move"] else \
            " -- stopped: a move or `clock start` restarts it" if d["waiting"] else \
            " -- paused (`clock start`)" if d["paused"] else ""
        return f"Clock {d['tc']}: " + "  ".join(parts) + state

    # -- the session's clock intents (Session.pause_clock, ...): each journaled -----------------------
    def pause(self) -> None:
        c = self.clock
        assert c is not None
        c.stop(self.s.now)
        self.paused = True
        self.record("pause")

    def start(self) -> None:
        c = self.clock
        assert c is not None
        self.paused = self.wait = self.setup = self.first = False
        c.start(self.s.game.turn, self.s.now)
        self.record("start")

    def adjust(self, side: int, ms: int, *, by: str | None = None, ply: int | None = None) -> None:
        c = self.clock
        assert c is not None
        c.adjust(side, ms, self.s.now)
        self.record("adjust", color=COLOR[side], by=by, ply=ply)

    def press(self) -> None:
        c = self.clock
        assert c is not None
        if self.first and c.running is None:     # the first move made and the clock pressed: it starts
            self.first = False
            c.start(self.s.game.turn, self.s.now)
        else:
            c.switch(self.s.now)
        self.record("press")

    def reopened(self) -> None:
        """A resignation or an agreed draw was taken back: the side to move's clock runs again
        (unless it waits for the board or was paused)."""
        c = self.clock
        if c is not None and not (self.wait or self.paused):
            c.start(self.s.game.turn, self.s.now)

    def script_time(self, *, horizon: int | None, flag_until: int | None) -> None:
        self.horizon = horizon
        self.flag_until = flag_until

    def record(self, op: str, *, color: str | None = None, by: str | None = None, ply: int | None = None) -> None:
        """Journal a change of the clock (pause, start, adjust, press) with both times (an
        adjustment names its ``color``; the other board's, ``by`` and the ``ply``)."""
        c = self.clock
        s = self.s
        if c is None or s.journal is None:
            return
        s.journal.write(ClockChange(op, pair(c.remaining(s.now)), pair(c.state.moves), color=color, by=by, ply=ply),
                        sync=True)

    # -- the flag -------------------------------------------------------------------------------------
    def flagged(self) -> bool:
        """The game ended on time."""
        out = self.s.outcome()
        return out is not None and out.termination is Termination.TIME_FORFEIT

    def flag_due(self) -> int | None:
        """When the running side's flag falls, unless a move completed before then decides
        first (a piece set down that is being debounced or held still): None then, and while
        no clock runs."""
        c = self.clock
        if c is None:
            return None
        s = self.s
        ft = c.flag_time()
        if ft is None or s.outcome() is not None or (self.flag_until is not None and ft > self.flag_until):
            return None
        d = s.debouncer.deadline()
        if d is not None and d - s.settings.debounce_ms < ft:
            return None                     # a change seen before the flag: it is debounced first
        if s.verdict.status == VS.HOLD:
            et = s.events.time_of(len(s.events) - 1)
            if et is not None and et - s.settings.debounce_ms < ft:
                return None                 # a move made before the flag, held still: committed first
        return ft

    def check_flag(self, now: int) -> None:
        """End the game on time when the running side's flag has fallen by ``now``: a loss, or
        a draw when the other side cannot win by any legal series of actions (engine.timeout)."""
        ft = self.flag_due()
        if ft is None or now < ft:
            return
        s = self.s
        c = self.clock
        assert c is not None
        side = c.running
        assert side is not None
        saved = c.state
        c.stop(ft)
        draw = not can_win(s.game, side ^ 1)
        s.game.resign(side, Termination.TIME_FORFEIT, draw=draw)
        s.invalidate()
        out = s.outcome()
        assert out is not None, "a flag fall ends the game"
        if s.journal is not None:
            clk = pair(c.state.remaining)
            try:
                s.journal.write_all([Flag(COLOR[side], draw, t=ft, clk=clk),
                                     Result(out.result, out.reason, clk=clk)], sync=True)
            except JournalError:
                s.game.unresign()
                c.restore(saved)
                s.invalidate()
                s.retry_at = now + 1000
                raise
        who = COLOR[side].capitalize()
        if draw:
            s.notices.append(f"{who}'s flag fell, but {COLOR[side ^ 1]} cannot win: a draw on time, {out.result}.")
        else:
            s.notices.append(f"{who}'s flag fell: {COLOR[side ^ 1]} wins on time, {out.result}.")
        s.tentative = None
        s.update(now)
