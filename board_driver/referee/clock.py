"""Chess clocks: time controls in the PGN ``TimeControl`` syntax, and a two-sided clock.

Pure: every time is an integer number of milliseconds passed in by the caller (the session
passes the time of the board event that completed a move); nothing here reads a clock.

Time controls (:meth:`TimeControl.parse`), in seconds, decimals allowed (``1+0.1``):

=========================  ==============================================================
``300``                    sudden death: 300 s for the game
``300+3``                  Fischer increment: 3 s added to the mover's clock after each move
``40/5400+30:1800+30``     periods: 5400 s for the first 40 moves (30 s increment from move
                           1), then 1800 s added after move 40 for the rest (30 s increment).
                           A last period with a move count repeats (``40/7200`` gives another
                           7200 s after moves 40, 80, ...); one without is the rest of the game
``d300+5``                 simple delay (US delay, FIDE Art. 6.3.b's "delay"): 300 s, and at
                           each move the clock starts counting down only after 5 s; the
                           ``d`` prefix applies to every period (``d40/5400+30:1800+30``:
                           a 30 s delay in both)
``-``                      no clock
``300+3,180+3``            time odds: White's control, a comma, Black's (each any of the
                           forms above but ``-``; each side's own time, increment, delay
                           and periods). One control without a comma is both sides'
=========================  ==============================================================

:class:`Clock` keeps both sides' remaining time, the moves each side has completed (for the
periods) and which side's clock runs since when. A move ends with :meth:`Clock.switch` at the
time it was made: the mover's time is read at that instant, the increment (and a new
period's time, after its last move) is added, and the other side's clock starts. A side's
flag falls when its time reaches zero (:meth:`Clock.flag_time`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

__all__ = ["Clock", "ClockError", "ClockState", "Period", "TimeControl", "format_clock", "parse_time"]

WHITE, BLACK = 0, 1


class ClockError(ValueError):
    """A time control or a time that cannot be read."""


MAX_TIME_S = 100 * 3600
"""The most time a period (or a clock set by hand) may hold: 100 hours, past any game on a board."""
MAX_STEP_S = 3600
"""The most an increment or a delay may add a move: an hour."""
MAX_MOVES = 500
"""The most moves a period may count."""
MAX_PERIODS = 10


def _ms(text: str, what: str, whole: str, most: int = MAX_TIME_S) -> int:
    if not re.fullmatch(r"\d{1,12}(\.\d{1,3})?", text):
        raise ClockError(f"time control {whole!r}: {what} {text!r} is not a number of seconds")
    secs, _, frac = text.partition(".")
    ms = int(secs) * 1000 + int((frac + "000")[:3])
    if ms > most * 1000:
        raise ClockError(f"time control {whole!r}: {what} {text} s is more than {most} s"
                         + (f" ({most // 3600} hours)" if most >= 7200 else ""))
    return ms


@dataclass(frozen=True)
class Period:
    """One period of a time control: ``seconds`` (ms here) for ``moves`` moves (None: the rest
    of the game), ``increment`` ms added after each move, ``delay`` ms before the clock counts."""

    time: int
    moves: int | None = None
    increment: int = 0
    delay: int = 0


def _fmt_s(ms: int) -> str:
    s = f"{ms // 1000}"
    if ms % 1000:
        s += "." + f"{ms % 1000:03d}".rstrip("0")
    return s


@dataclass(frozen=True)
class TimeControl:
    """A parsed time control; ``text`` is how it was written (the PGN tag's value)."""

    periods: tuple[Period, ...]
    text: str
    black: TimeControl | None = None
    """Time odds: Black's own control (``periods`` are White's then; ``text`` is both, ``W,B``)."""

    @classmethod
    def parse(cls, text: str) -> TimeControl | None:
        """The time control ``text`` names; None for ``-`` (no clock). ClockError says what
        is wrong with anything else. ``W,B`` gives each side its own (time odds)."""
        if "," in str(text):
            return cls._parse_odds(str(text))
        whole = text
        t = str(text).strip().replace(" ", "")
        if t in ("-", "", "none"):
            if t == "":
                raise ClockError("time control '': say 300, 300+3, 40/5400+30:1800+30, d300+5 or - (none)")
            return None
        if t in ("?",) or t.startswith("*"):
            raise ClockError(f"time control {whole!r}: unknown and hourglass controls cannot run a clock; "
                             "say 300, 300+3, 40/5400+30:1800+30 or d300+5")
        delay = t.startswith("d")
        if delay:
            t = t[1:]
        periods = []
        parts = t.split(":")
        if len(parts) > MAX_PERIODS:
            raise ClockError(f"time control {whole[:60]!r}: {len(parts)} periods, at most {MAX_PERIODS}")
        for i, part in enumerate(parts):
            moves = None
            if "/" in part:
                m, _, part = part.partition("/")
                if not m.isdigit() or not 0 < int(m) <= MAX_MOVES:
                    raise ClockError(f"time control {whole!r}: {m!r} is not a number of moves (1 to {MAX_MOVES})")
                moves = int(m)
            base, plus, inc = part.partition("+")
            if plus and not inc:
                raise ClockError(f"time control {whole!r}: '+' needs the increment in seconds")
            ms = _ms(base, "the time", whole)
            inc_ms = _ms(inc, "the increment" if not delay else "the delay", whole, MAX_STEP_S) if plus else 0
            if moves is None and i < len(parts) - 1:
                raise ClockError(f"time control {whole!r}: only the last period may be without a number "
                                 f"of moves (40/5400+30:1800+30)")
            if i == 0 and ms <= 0:
                raise ClockError(f"time control {whole!r}: the first period needs some time")
            periods.append(Period(ms, moves, 0 if delay else inc_ms, inc_ms if delay else 0))
        return cls(tuple(periods), str(text).strip())

    @classmethod
    def _parse_odds(cls, text: str) -> TimeControl:
        sides = text.split(",")
        if len(sides) != 2:
            raise ClockError(f"time control {text!r}: time odds are two controls, White's then Black's "
                             "(300+3,180+3)")
        parsed = []
        for name, part in zip(("White", "Black"), sides):
            try:
                tc = cls.parse(part)
            except ClockError as exc:
                raise ClockError(f"time odds {text!r}: {name}'s {exc}") from None
            if tc is None:
                raise ClockError(f"time odds {text!r}: {name}'s time control {part.strip()!r} is none; "
                                 "both sides play on the clock (say - alone for no clock)")
            parsed.append(tc)
        w, b = parsed
        if w.periods == b.periods:
            return w                        # the same control for both: no odds
        return cls(w.periods, f"{w.text},{b.text}", b)

    @property
    def odds(self) -> bool:
        """Each side has its own control."""
        return self.black is not None

    def side(self, side: int) -> TimeControl:
        """The control ``side`` (0 White, 1 Black) plays under, alone."""
        if self.black is None:
            return self
        if side == BLACK:
            return self.black
        return TimeControl(self.periods, self.text.partition(",")[0])

    # -- the periods -----------------------------------------------------------------------------
    def period(self, moves_done: int) -> int:
        """The index of the period a side is in after completing ``moves_done`` moves."""
        n = 0
        for i, p in enumerate(self.periods):
            if p.moves is None or moves_done < n + p.moves or i == len(self.periods) - 1:
                return i
            n += p.moves
        return len(self.periods) - 1

    def added_after(self, moves_done: int) -> int:
        """Time added to a side when it completes its move number ``moves_done`` (1-based)
        because a period ends there: the next period's time (or the last period's again)."""
        n = 0
        for i, p in enumerate(self.periods):
            if p.moves is None:
                return 0
            n += p.moves
            if moves_done == n:
                nxt = self.periods[i + 1] if i + 1 < len(self.periods) else p
                return nxt.time
            if moves_done < n:
                return 0
        last = self.periods[-1]
        assert last.moves is not None
        past = moves_done - n
        return last.time if past > 0 and past % last.moves == 0 else 0

    @property
    def initial(self) -> int:
        """White's starting time (Black's: ``side(1).initial``)."""
        return self.periods[0].time

    @property
    def initials(self) -> tuple[int, int]:
        """Both sides' starting times."""
        return self.side(WHITE).initial, self.side(BLACK).initial

    def describe(self) -> str:
        """In words: ``5 min + 3 s a move`` (``White 5 min + 3 s a move; Black 3 min ...``)."""
        if self.black is not None:
            return f"White {self.side(WHITE).describe()}; Black {self.black.describe()}"
        out = []
        for p in self.periods:
            w = _words(p.time)
            if p.moves is not None:
                w = f"{w} for {p.moves} moves"
            if p.increment:
                w += f" + {_fmt_s(p.increment)} s a move"
            if p.delay:
                w += f", {_fmt_s(p.delay)} s delay"
            out.append(w)
        return ", then ".join(out)


def _words(ms: int) -> str:
    if ms % 60_000 == 0 and ms >= 60_000:
        return f"{ms // 60_000} min"
    return f"{_fmt_s(ms)} s"


def parse_time(text: str) -> int:
    """``5:00``, ``1:02:03``, ``90``, ``90.5`` (seconds) as milliseconds."""
    parts = str(text).strip().split(":")
    try:
        if len(parts) > 3 or not all(parts):
            raise ValueError
        ms = _ms(parts[-1], "the time", text)
        for i, p in enumerate(reversed(parts[:-1])):
            if not p.isdigit() or len(p) > 6:
                raise ValueError
            ms += int(p) * (60_000 if i == 0 else 3_600_000)
    except (ValueError, ClockError):
        raise ClockError(f"{text!r} is not a time (say 5:00, 1:30:00 or 90 seconds)") from None
    if ms > MAX_TIME_S * 1000:
        raise ClockError(f"{text!r} is more than {MAX_TIME_S // 3600} hours")
    return ms


def format_clock(ms: int, tenths: bool = False) -> str:
    """``h:mm:ss`` (as PGN's ``%clk``), or ``m:ss.t`` under 10 s when ``tenths``."""
    ms = max(0, ms)
    if tenths and ms < 10_000:
        return f"0:{ms // 1000:02d}.{ms % 1000 // 100}"
    s = ms // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


@dataclass(frozen=True)
class ClockState:
    """A clock's state: remaining ms (White, Black) while stopped, moves completed by each side,
    the side whose clock runs (None: stopped) and since when."""

    remaining: tuple[int, int]
    moves: tuple[int, int] = (0, 0)
    running: int | None = None
    since: int = 0


class Clock:
    """Two sides' time under one :class:`TimeControl` (each side under its own with time odds;
    see the module docstring)."""

    def __init__(self, tc: TimeControl, state: ClockState | None = None):
        self.tc = tc
        self.sides = (tc.side(WHITE), tc.side(BLACK))
        self.state = state or ClockState(tc.initials)

    # -- reading --------------------------------------------------------------------------------
    def period(self, side: int) -> Period:
        """The period ``side`` plays in now (its own control's, after the moves it completed)."""
        tc = self.sides[side]
        return tc.periods[tc.period(self.state.moves[side])]

    def delay(self, side: int) -> int:
        return self.period(side).delay

    def remaining(self, now: int) -> tuple[int, int]:
        """Both sides' time left at ``now`` (the running side's read at that instant)."""
        st = self.state
        r = list(st.remaining)
        if st.running is not None:
            used = max(0, now - st.since - self.delay(st.running))
            r[st.running] -= used
        return r[0], r[1]

    def flag_time(self) -> int | None:
        """When the running side's time runs out (None while stopped)."""
        st = self.state
        if st.running is None:
            return None
        return st.since + self.delay(st.running) + st.remaining[st.running]

    def flagged(self, now: int) -> int | None:
        """The side whose flag has fallen by ``now`` (its time is zero), or None."""
        ft = self.flag_time()
        return self.state.running if ft is not None and now >= ft else None

    @property
    def running(self) -> int | None:
        return self.state.running

    # -- changing ---------------------------------------------------------------------------------
    def start(self, side: int, now: int) -> None:
        """Start ``side``'s clock at ``now`` (the other stops; a running clock is read first)."""
        r = self.remaining(now)
        self.state = replace(self.state, remaining=r, running=side, since=now)

    def stop(self, now: int) -> None:
        """Stop both clocks at ``now`` (a pause, the end of the game)."""
        self.state = replace(self.state, remaining=self.remaining(now), running=None, since=now)

    def switch(self, now: int, mover: int | None = None) -> None:
        """``mover`` (default: the running side) completed a move at ``now``: its time is read,
        its increment (and a new period's time after the period's last move) added, and the
        other side's clock starts."""
        st = self.state
        side = st.running if mover is None else mover
        if side is None:
            return
        r = list(self.remaining(now))
        done = st.moves[side] + 1
        r[side] += self.period(side).increment + self.sides[side].added_after(done)
        moves = list(st.moves)
        moves[side] = done
        self.state = ClockState((r[0], r[1]), (moves[0], moves[1]), side ^ 1, now)

    def adjust(self, side: int, ms: int, now: int) -> None:
        """Set ``side``'s time to ``ms`` (an arbiter's adjustment); a running clock goes on from it."""
        r = list(self.remaining(now))
        r[side] = ms
        st = self.state
        since = now
        if st.running is not None:
            since = now - self.delay(st.running) if st.running == side else st.since
            if st.running != side:
                r[st.running] = st.remaining[st.running]     # the running side's reading is unchanged
        self.state = ClockState((r[0], r[1]), st.moves, st.running, since)

    def restore(self, state: ClockState) -> None:
        self.state = state
