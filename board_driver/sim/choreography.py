"""Choreography: how players physically carry out an action on an occupancy-only board.

Given the game state and a legal action, :class:`Choreographer` writes the lift/place
events (and console inputs) a player would produce, with the variety real play has:
captures with the victim or the mover lifted first, castling king-first or rook-first,
en passant in any order, sliders set down over intermediate squares with short or long
pauses, contact bounce, a piece knocked over and put back between moves, prompts answered
before or after the move (or left to their default). Used by the tests, the benchmark and
anyone who wants a realistic event file (``Ev.line()``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any
from dataclasses import dataclass

from board_driver.sim.events import Ev
from engine.contract import ActionKind
from engine.game import Action

if TYPE_CHECKING:
    from engine.contract import Game
    from engine.geometry import Geometry


@dataclass
class Style:
    """Probabilities and timings (milliseconds) of the physical variety."""

    step: tuple[int, int] = (90, 300)        # between two events of one move
    think: tuple[int, int] = (400, 1500)     # between moves
    slide: float = 0.4                       # set a sliding piece down over intermediate squares
    long_pause: float = 0.3                  # ... and rest there longer than the hold time
    bounce: float = 0.25                     # contact bounce after a lift or place
    knock: float = 0.08                      # knock a piece over between moves and put it back
    choose_before: float = 0.3               # answer a prompt before making the move
    rely_on_default: float = 0.4             # leave a defaulted prompt unanswered (not the game's last action)
    explicit_end: float = 0.5                # type "end" to end a multi-move turn (else the opponent's move ends it)


class Choreographer:
    def __init__(self, rng: random.Random, style: Style | None = None):
        self.rng = rng
        self.style = style or Style()

    def _gap(self, span) -> int:
        return self.rng.randint(*span)

    # -- one action ----------------------------------------------------------------------------
    def action(self, game: Game, action: Action, t: int, *, last: bool = False) -> tuple[list[Ev], int]:
        """The events of ``action`` (legal in ``game``) starting at ``t``; returns them and the end time."""
        g = game.geometry
        name = g.name
        rng, st = self.rng, self.style
        out: list[Ev] = []
        if action.silent:
            out.append(Ev(t, "input", action.text))
            return out, t
        if action.kind == ActionKind.SETUP:
            # an army is typed in, then set up piece by piece
            out.append(Ev(t, "input", "setup " + action.text))
            for sq in sorted(action.places, key=lambda s: self.rng.random()):
                t += self._gap(st.step)
                out.append(Ev(t, "place", name(sq)))
            return out, t
        choose = self.choice_for(game, action, last)
        if choose is not None and rng.random() < st.choose_before:
            out.append(Ev(t, "input", f"choose {choose}"))
            t += self._gap(st.step)
            choose_after = None
        else:
            choose_after = choose
        occ = game.occupancy()
        for kind, sq in self._order(game, action, occ):
            if kind == "slide":
                for mid, pause in sq:
                    out.append(Ev(t, "place", name(mid)))
                    t += pause
                    out.append(Ev(t, "lift", name(mid)))
                    t += self._gap(st.step)
                continue
            out.append(Ev(t, kind, name(sq)))
            if rng.random() < st.bounce:
                # the switch chatters for a few milliseconds after the change
                b = rng.randint(1, 3)
                other = "lift" if kind == "place" else "place"
                for k in range(b):
                    out.append(Ev(t + 2 + 4 * k, other, name(sq)))
                    out.append(Ev(t + 4 + 4 * k, kind, name(sq)))
                t += 4 * b + 2
            t += self._gap(st.step)
        if choose_after is not None:
            out.append(Ev(t, "input", f"choose {choose_after}"))
        return out, t

    def choice_for(self, game: Game, action: Action, last: bool) -> str | None:
        """The ``choose`` key the action needs, or None when the board alone tells it."""
        same = [b for b in game.legal_actions() if b.lifts == action.lifts and b.places == action.places]
        if len(same) <= 1:
            return None
        if action.kind == ActionKind.PROMOTION:
            key = action.promotion
            letters = {b.promotion for b in same}
            default = next((p for p in game.variant.promotion_order if p in letters), None)
            if key == default and not last and self.rng.random() < self.style.rely_on_default:
                return None
            return key
        if action.drop:
            return action.drop.lower()
        return action.text

    def _order(self, game: Game, action: Action, occ: int) -> list[tuple[str, Any]]:
        """A physically possible order of lifts and places (with optional slide stops): each
        ("lift" | "place", square) or ("slide", [(square, pause ms), ...])."""
        rng = self.rng
        lifts, places = set(action.lifts), set(action.places)
        g = game.geometry
        movers = lifts - places
        victims = lifts & places
        if action.kind == ActionKind.CASTLE and len(movers) == 2 and len(places) == 2:
            pm = game.piece_map()
            king = next((s for s in movers if game.variant.pieces[game.variant.piece_index(pm[s][0])].castles), None)
            if king is not None:
                rook = next(iter(movers - {king}))
                kto = self._nearest(g, king, places)
                rto = next(iter(places - {kto}))
                orders = [[("lift", king), ("place", kto), ("lift", rook), ("place", rto)],
                          [("lift", rook), ("place", rto), ("lift", king), ("place", kto)],
                          [("lift", king), ("lift", rook), ("place", rto), ("place", kto)]]
                rng.shuffle(orders)
                for o in orders:
                    if self._valid(o, occ):
                        return o
        if len(movers) == 1 and len(places - victims) <= 1 and action.kind != ActionKind.DROP:
            frm = next(iter(movers))
            to = next(iter(places))
            steps: list[tuple[str, Any]] = []
            others = sorted(lifts - {frm})
            rng.shuffle(others)
            slide = self._slide(g, frm, to, occ)
            first = [("lift", s) for s in others if rng.random() < 0.5]
            later = [("lift", s) for s in others if ("lift", s) not in first]
            steps += first
            steps.append(("lift", frm))
            if slide:
                steps.append(("slide", slide))
            steps += later
            steps.append(("place", to))
            if self._valid(steps, occ):
                return steps
        if action.kind == ActionKind.DROP or not movers:
            kills = sorted(lifts)
            rng.shuffle(kills)
            return [("place", s) for s in sorted(places)] + [("lift", s) for s in kills]
        generic = [("lift", s) for s in sorted(lifts)] + [("place", s) for s in sorted(places)]
        rng.shuffle(generic)
        generic.sort(key=lambda e: e[0] == "place")
        return generic

    @staticmethod
    def _nearest(g: Geometry, frm, squares):
        return min(squares, key=lambda s: abs(g.file_of(s) - g.file_of(frm)) + 10 * abs(g.rank_of(s) - g.rank_of(frm)))

    @staticmethod
    def _valid(steps, occ: int) -> bool:
        o = occ
        for kind, sq in steps:
            if kind == "slide":
                continue
            bit = 1 << sq
            if kind == "lift":
                if not o & bit:
                    return False
                o &= ~bit
            else:
                if o & bit:
                    return False
                o |= bit
        return True

    def _slide(self, g: Geometry, frm: int, to: int, occ: int):
        """Intermediate stops of a piece slid along a line, with pauses; [] for none."""
        st = self.style
        if self.rng.random() >= st.slide:
            return []
        df, dr = g.file_of(to) - g.file_of(frm), g.rank_of(to) - g.rank_of(frm)
        n = max(abs(df), abs(dr))
        if n < 2 or not (df == 0 or dr == 0 or abs(df) == abs(dr)):
            return []
        sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
        mids = []
        for k in range(1, n):
            sq = g.square(g.file_of(frm) + k * sf, g.rank_of(frm) + k * sr)
            if sq in g.holes or occ >> sq & 1:
                continue
            if self.rng.random() < 0.6:
                long = self.rng.random() < st.long_pause
                mids.append((sq, self.rng.randint(450, 900) if long else self.rng.randint(50, 250)))
        return mids

    # -- between actions ------------------------------------------------------------------------
    def knock(self, game: Game, t: int) -> tuple[list[Ev], int]:
        """Maybe knock a piece over and put it back (no piece in hand at the time)."""
        if self.rng.random() >= self.style.knock:
            return [], t
        squares = game.geometry.squares_of(game.occupancy())
        if not squares:
            return [], t
        sq = game.geometry.name(self.rng.choice(squares))
        back = t + self.rng.randint(150, 1200)
        return [Ev(t, "lift", sq), Ev(back, "place", sq)], back + self._gap(self.style.step)

    def think(self) -> int:
        return self._gap(self.style.think)


def script_game(game: Game, actions: list[Action], rng: random.Random, style: Style | None = None,
                t0: int = 1000) -> list[Ev]:
    """The events of playing ``actions`` in order from the state of ``game`` (which is advanced)."""
    ch = Choreographer(rng, style)
    t = t0
    out: list[Ev] = []
    for i, a in enumerate(actions):
        evs, t = ch.action(game, a, t, last=(i == len(actions) - 1))
        out += evs
        game.push(a)
        t += ch.think()
        if i < len(actions) - 1:
            evs, t = ch.knock(game, t)
            out += evs
    return out
