"""Engine-versus-engine matches: games between two players, journaled, scored with an Elo
difference and its error margin."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Callable

from board_driver.records import Flag, Push, Result, pair
from engine.errors import IllegalMoveError
from engine.game import Adjudication, Forfeit, Outcome, new_game

if TYPE_CHECKING:
    from engine.variant import Variant

MAX_PLIES = 1000       # a game still going after this many actions is adjudicated a draw


@dataclass
class GameResult:
    index: int                   # 1-based
    white: str                   # engine spec texts
    black: str
    result: str                  # "1-0", "1/2-1/2", "3/5-2/5" ...
    reason: str
    actions: int
    game_id: str | None
    points_a: Fraction           # A's points in this game (A = the first game's white)
    fen: str | None = None       # the start, when not the variant's (--openings, chess family)
    opening: list[str] | None = None    # the first actions, played for both (--openings, other families)

    def as_dict(self) -> dict:
        d = {"game": self.index, "white": self.white, "black": self.black, "result": self.result,
             "reason": self.reason, "actions": self.actions, "id": self.game_id,
             "points_a": str(self.points_a)}
        if self.fen is not None:
            d["fen"] = self.fen
        if self.opening is not None:
            d["opening"] = self.opening
        return d


@dataclass
class MatchScore:
    """A's results over both colours."""

    points: list = field(default_factory=list)     # A's points per game (Fractions, 0..1)

    def add(self, p: Fraction) -> None:
        self.points.append(p)

    @property
    def wins(self) -> int:
        return sum(1 for p in self.points if p > Fraction(1, 2))

    @property
    def draws(self) -> int:
        return sum(1 for p in self.points if p == Fraction(1, 2))

    @property
    def losses(self) -> int:
        return sum(1 for p in self.points if p < Fraction(1, 2))

    @property
    def fraction(self) -> float:
        return float(sum(self.points)) / len(self.points) if self.points else 0.5

    def elo(self) -> tuple[float, float]:
        """(Elo difference of A over B, 95% error margin). A score of 0% or 100% has no finite
        estimate: it is then taken as if each side had drawn one more game (half a point in
        one more game), which keeps the figure finite and says it is a bound."""
        n = len(self.points)
        if n == 0:
            return 0.0, 0.0
        xs = [float(p) for p in self.points]
        s = sum(xs) / n
        if s <= 0.0 or s >= 1.0:
            xs = xs + [0.5]
            n += 1
            s = sum(xs) / n
        var = sum((x - s) ** 2 for x in xs) / n
        se = math.sqrt(var / n)
        lo, hi = _clamp(s - 1.96 * se), _clamp(s + 1.96 * se)
        return _elo(s), (_elo(hi) - _elo(lo)) / 2

    def line(self) -> str:
        e, m = self.elo()
        e = 0.0 if abs(e) < 0.05 else e          # no "-0.0"
        return f"score {self.wins}-{self.draws}-{self.losses} elo {e:.1f} +- {m:.1f}"


def _clamp(s: float) -> float:
    return min(max(s, 1e-6), 1 - 1e-6)


def _elo(s: float) -> float:
    s = _clamp(s)
    return -400.0 * math.log10(1.0 / s - 1.0)


def play_game(variant: Variant, white, black, *, seconds: float | tuple[float, float], journal=None, fen: str | None = None,
              on_action: Callable | None = None, max_plies: int = MAX_PLIES, tc=None,
              clock: Callable[[], int] | None = None, opening: list[str] | None = None):
    """Play one game between two players (from the variant's start or ``fen``); returns
    (outcome, number of actions). ``seconds``: a move's thinking time, or (white's, black's).
    Every action a player gives is checked against the rules
    (an illegal one loses the game). Under a time control ``tc`` (a TimeControl) each side's
    thinking is charged to its clock (``clock``: ms, default the monotonic wall clock), each
    player thinks what its clock allows, and a flag fall ends the game on time. ``opening``:
    action texts played (and journaled) first, for neither player."""
    from board_driver.opponents.computer import clock_budget
    from board_driver.referee.clock import Clock
    from engine.contract import Termination
    from engine.timeout import can_win
    game = new_game(variant, fen)
    players = (white, black)
    n = 0
    for text in opening or ():
        game.push(game.parse(text))
        n += 1
        if journal is not None:
            journal.write(Push(len(game.history), text), sync=False)
    if clock is None:
        import time
        clock = lambda: int(time.monotonic() * 1000)     # noqa: E731
    clk = Clock(tc) if tc is not None else None
    if clk is not None:
        clk.start(game.turn, clock())
    while True:
        out = game.outcome()
        if out is not None:
            break
        if n >= max_plies:
            out = Outcome.draw(Termination.ADJUDICATED, Adjudication(max_plies))
            break
        side = game.turn
        player = players[side]
        think = seconds[side] if isinstance(seconds, tuple) else seconds
        if clk is not None:
            p = clk.period(side)
            think = clock_budget(clk.remaining(clock())[side], p.increment + p.delay)
        actions = player.turn(game, think)
        if clk is not None and clk.flagged(clock()) is not None:
            clk.stop(clock())
            draw = not can_win(game, side ^ 1)
            game.resign(side, Termination.TIME_FORFEIT, draw=draw)
            out = game.outcome()
            if journal is not None:
                journal.write(Flag(("white", "black")[side], draw, clk=pair(clk.state.remaining)), sync=False)
            break
        bad = None
        if not actions:
            bad = "no action"
        for a in actions:
            if game.turn != side or game.outcome() is not None:
                break
            try:
                legal = game.parse(a.text)
            except IllegalMoveError as exc:
                bad = f"illegal action {a.text!r}: {exc}"
                break
            game.push(legal)
            n += 1
            rec = Push(len(game.history), legal.text)
            if clk is not None:
                now = clock()
                before = pair(clk.remaining(now))
                if game.turn != side:
                    clk.switch(now, side)
                if game.outcome() is not None:
                    clk.stop(now)
                rec = replace(rec, clk=pair(clk.remaining(now)), clk0=before, n=pair(clk.state.moves))
            if journal is not None:
                journal.write(rec, sync=False)
            if on_action is not None:
                on_action(game, legal)
        if bad is None and game.turn == side and game.outcome() is None:
            bad = "an unfinished turn"
        if bad is not None:
            winner = side ^ 1
            out = Outcome.win(winner, Termination.OTHER, Forfeit(side, bad))
            break
    if journal is not None:
        journal.write(Result(out.result, out.reason, clk=pair(clk.state.remaining) if clk is not None else None),
                      sync=True)
    return out, n


def points_for(result: str, side: int) -> Fraction:
    w, b = result.split("-")
    return Fraction(w) if side == 0 else Fraction(b)
