"""Noisy physical games: a game as it was played, and the board events of playing it with the
noise real players make -- then played through a session to see what the driver recorded.

:class:`NoiseMaker` turns a list of legal actions into *segments*: the events of one action
(made by the :class:`~board_driver.sim.choreography.Choreographer`: both capture orders, castling either
way round, slides with short and long stops, contact bounce) or of one piece of noise, each
with the game as it stands once its events are done. The noise kinds (:data:`KINDS`):

``knock``
    a piece knocked over and put back while nothing is in hand;
``knock-lift``
    a knocked piece put back, then the piece that just moved lifted (and put back, or moved on);
``hesitation``
    a piece of the side to move lifted and put back on its own square, then the move;
``late-victim``
    a capture with the capturer lifted first and the victim removed after a long pause;
``capturer-hesitation``
    the victim removed first, the capturing piece picked up and put down again on its own
    square, then the capture completed;
``set-aside``
    the victim set down on an empty square (or on the capturer's square) for a moment before it
    leaves the board;
``set-down``
    the victim lifted and the capturer set down on its square, then the victim (in the hand)
    set down on an empty square of the game for a moment before it leaves the board: meanwhile
    the board may show exactly another move of the capturer, to that square;
``takeback``
    a move made, then taken back on the board (pieces put back as they were), then made again.

:func:`run_noisy` plays the segments on a session in virtual time and checks, after every
segment, that the game recorded is a prefix of the game played: ``equal`` (the same game at
the end), ``stopped`` (the driver stopped for a correction or a prompt: never a wrong move) or
``wrong`` (a move that was not played is in the record).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from board_driver.sim.choreography import Choreographer, Style
from board_driver.sim.events import Ev, apply_event
from engine.contract import ActionKind
from engine.game import Action

if TYPE_CHECKING:
    from engine.contract import Game

KINDS = ("knock", "knock-lift", "hesitation", "late-victim", "capturer-hesitation", "set-aside", "set-down",
         "takeback")
CAPTURE_KINDS = ("late-victim", "capturer-hesitation", "set-aside", "set-down")   # noise made while capturing

DEFAULT_RATES = {
    "knock": 0.06, "knock-lift": 0.05, "hesitation": 0.08, "late-victim": 0.25,
    "capturer-hesitation": 0.25, "set-aside": 0.25, "set-down": 0.25, "takeback": 0.04,
}


@dataclass
class Segment:
    events: list[Ev]
    expected: tuple[str, ...]       # the game once these events are done
    kind: str                       # "action" or a noise kind
    also: tuple[str, ...] | None = None   # a takeback not yet seen leaves this game (not a wrong move)
    transients: frozenset[str] = frozenset()   # what the board showed on the way (a long stop, the rook first)


@dataclass
class NoisyGame:
    variant: str
    source: str                     # where the game comes from (python-chess, Fairy-Stockfish, engine)
    actions: tuple[str, ...]        # the game played
    segments: list[Segment]
    noise: Counter = field(default_factory=Counter)

    @property
    def events(self) -> list[Ev]:
        return [e for s in self.segments for e in s.events]


class NoiseMaker:
    """Writes the events of playing ``actions`` with noise (see the module docstring)."""

    def __init__(self, rng: random.Random, rates: dict[str, float] | None = None, style: Style | None = None):
        self.rng = rng
        self.rates = dict(DEFAULT_RATES if rates is None else rates)
        st = style or Style()
        st.knock = 0.0                 # knocks are made here, as segments of their own
        self.ch = Choreographer(rng, st)

    def _chance(self, kind: str) -> bool:
        return self.rng.random() < self.rates.get(kind, 0.0)

    def _gap(self, lo: int = 90, hi: int = 300) -> int:
        return self.rng.randint(lo, hi)

    # -- the game -----------------------------------------------------------------------------
    def game(self, variant: str, game: Game, actions: list[Action], source: str = "engine") -> NoisyGame:
        """``game`` is the state the actions are played from (it is advanced)."""
        rng = self.rng
        name = game.geometry.name
        segs: list[Segment] = []
        played: list[str] = []
        noise: Counter = Counter()
        t = 1000
        prev: Action | None = None

        def add(events, kind):
            if events:
                segs.append(Segment(events, tuple(played), kind))
                if kind != "action":
                    noise[kind] += 1

        for i, a in enumerate(actions):
            last = i == len(actions) - 1
            occ = game.occupancy()
            squares = game.geometry.squares_of(occ)
            if squares and not a.silent and self._chance("knock"):
                sq = rng.choice(squares)
                back = t + rng.randint(150, 1200)
                add([Ev(t, "lift", name(sq)), Ev(back, "place", name(sq))], "knock")
                t = back + self.ch.think()
            if prev is not None and not prev.silent and prev.places and squares and not a.silent \
                    and self._chance("knock-lift"):
                evs = []
                sq = rng.choice(squares)
                back = t + rng.randint(150, 1200)
                evs += [Ev(t, "lift", name(sq)), Ev(back, "place", name(sq))]
                t = back + rng.randint(200, 1500)
                moved = rng.choice(sorted(s for s in prev.places if occ >> s & 1))
                up = t + rng.randint(150, 1500)
                evs += [Ev(t, "lift", name(moved)), Ev(up, "place", name(moved))]
                t = up + self.ch.think()
                add(evs, "knock-lift")
            if not a.silent and self._chance("hesitation"):
                mine = self._own_pieces(game)
                if mine:
                    sq = rng.choice(mine)
                    back = t + rng.randint(200, 1500)
                    add([Ev(t, "lift", name(sq)), Ev(back, "place", name(sq))], "hesitation")
                    t = back + rng.randint(200, 800)
            evs, t, kind = self._action(game, a, t, last)
            # (the victim set down after the capture rests on no square of the capturer's way)
            shown = self._shown_on_the_way(game, a, evs) if kind != "set-down" else frozenset()
            game.push(a)
            played.append(a.text)
            add(evs, kind)
            if segs and segs[-1].events is evs:
                segs[-1].transients = shown
            t += self.ch.think()
            if self._undoable(a) and self._chance("takeback"):
                evs, t = self._takeback(game, a, t)
                before = tuple(played)
                played.pop()
                game.pop()
                add(evs, "takeback")
                segs[-1].also = before
                t += self.ch.think()
                evs, t, _ = self._action(game, a, t, last, plain=True)
                shown = self._shown_on_the_way(game, a, evs)
                game.push(a)
                played.append(a.text)
                add(evs, "action")
                segs[-1].transients = shown
                t += self.ch.think()
            if not a.silent:
                prev = a
        return NoisyGame(variant, source, tuple(x.text for x in actions), segs, noise)

    @staticmethod
    def _shown_on_the_way(game: Game, a: Action, evs: list[Ev]) -> frozenset[str]:
        """Legal actions the board showed while ``a`` was being made: a piece resting on a square
        of its way longer than a hold (then moved on: a replacement), the rook of a castling moved
        first, a Chego drop before all its victims were off. The driver may record them for a while."""
        if a.silent:
            return frozenset()
        geo = game.geometry
        stops = set()
        for x, y in zip(evs, evs[1:]):
            if x.kind == "place" and y.kind == "lift" and x.arg == y.arg and y.t - x.t >= 300:
                stops.add(geo.parse(x.arg))
        return frozenset(b.text for b in game.legal_actions()
                         if b.text != a.text and not b.silent and b.lifts <= a.lifts and b.places <= (a.places | stops))

    def _own_pieces(self, game: Game) -> list[int]:
        pm = game.piece_map()
        movers = {s for b in game.legal_actions() for s in b.lifts - b.places}
        return sorted(s for s in movers if s in pm and pm[s][1] == game.turn)

    # -- one action, maybe with a noisy capture --------------------------------------------------
    def _action(self, game: Game, a: Action, t: int, last: bool, plain: bool = False):
        victims = a.lifts & a.places
        movers = a.lifts - a.places
        capture = (len(movers) == 1 and len(victims) == 1 and len(a.places) == 1
                   and a.kind in (ActionKind.CAPTURE, ActionKind.PROMOTION))
        if capture and not plain:
            kinds = [k for k in CAPTURE_KINDS if self._chance(k)]
            if kinds:
                kind = self.rng.choice(kinds)
                out = self._noisy_capture(game, a, t, last, kind, next(iter(movers)), next(iter(victims)))
                if out is not None:
                    evs, t = out
                    return evs, t, kind
        evs, t = self.ch.action(game, a, t, last=last)
        return evs, t, "action"

    def _noisy_capture(self, game: Game, a: Action, t: int, last: bool, kind: str, c: int, v: int):
        name = game.geometry.name
        rng = self.rng
        choose = self.ch.choice_for(game, a, last)
        evs: list[Ev] = []
        if choose is not None:
            evs.append(Ev(t, "input", f"choose {choose}"))
            t += self._gap()
        C, V = name(c), name(v)
        if kind == "late-victim":
            evs.append(Ev(t, "lift", C))
            t += rng.randint(450, 2000)
            evs.append(Ev(t, "lift", V))
            t += self._gap()
            evs.append(Ev(t, "place", V))
        elif kind == "capturer-hesitation":
            evs.append(Ev(t, "lift", V))
            t += self._gap()
            evs.append(Ev(t, "lift", C))
            t += rng.randint(100, 1200)
            evs.append(Ev(t, "place", C))
            t += rng.randint(200, 1500)
            evs.append(Ev(t, "lift", C))
            t += self._gap()
            evs.append(Ev(t, "place", V))
        elif kind == "set-down":
            occ = game.occupancy()
            g = game.geometry
            empty = [s for s in g.squares() if not occ >> s & 1 and s not in g.holes]
            if not empty:
                return None
            e = name(rng.choice(empty))
            first, second = (V, C) if rng.random() < 0.5 else (C, V)
            evs.append(Ev(t, "lift", first))
            t += self._gap()
            evs.append(Ev(t, "lift", second))
            t += self._gap()
            evs.append(Ev(t, "place", V))                # the capturer lands
            t += self._gap()
            evs.append(Ev(t, "place", e))                # the victim, still in the hand, set down for a moment ...
            t += rng.randint(80, 700)
            evs.append(Ev(t, "lift", e))                 # ... and taken off the board
        else:   # set-aside
            occ = game.occupancy()
            g = game.geometry
            empty = [s for s in g.squares() if not occ >> s & 1 and s not in g.holes
                     and max(abs(g.file_of(s) - g.file_of(v)), abs(g.rank_of(s) - g.rank_of(v))) <= 2]
            if empty and rng.random() < 0.6:
                e = name(rng.choice(empty))
                evs.append(Ev(t, "lift", V))
                t += self._gap()
                evs.append(Ev(t, "place", e))            # the victim set down beside the board's action
                t += rng.randint(50, 300)
                if rng.random() < 0.5:
                    evs.append(Ev(t, "lift", e))         # ... and taken off before the capture
                    t += self._gap()
                    evs.append(Ev(t, "lift", C))
                    t += self._gap()
                    evs.append(Ev(t, "place", V))
                else:
                    evs.append(Ev(t, "lift", C))         # ... or after it
                    t += self._gap()
                    evs.append(Ev(t, "place", V))
                    t += rng.randint(50, 300)
                    evs.append(Ev(t, "lift", e))
            else:
                evs.append(Ev(t, "lift", C))
                t += self._gap()
                evs.append(Ev(t, "lift", V))
                t += self._gap()
                evs.append(Ev(t, "place", C))            # the victim set down on the capturer's square
                t += rng.randint(50, 300)
                if rng.random() < 0.5:
                    evs.append(Ev(t, "lift", C))         # ... taken off, then the capturer lands
                    t += self._gap()
                    evs.append(Ev(t, "place", V))
                else:
                    evs.append(Ev(t, "place", V))        # ... the capturer lands, then the victim leaves
                    t += rng.randint(50, 300)
                    evs.append(Ev(t, "lift", C))
        t += self._gap()
        return evs, t

    # -- takebacks ----------------------------------------------------------------------------------
    @staticmethod
    def _undoable(a: Action) -> bool:
        return not a.silent and a.kind not in (ActionKind.DROP, ActionKind.SETUP) and bool(a.lifts)

    def _takeback(self, game: Game, a: Action, t: int):
        """The pieces of ``a`` (the last action of ``game``) put back as they were."""
        name = game.geometry.name
        ups = sorted(a.places)
        downs = sorted(a.lifts)
        self.rng.shuffle(ups)
        self.rng.shuffle(downs)
        evs = []
        for s in ups:
            evs.append(Ev(t, "lift", name(s)))
            t += self._gap()
        for s in downs:
            evs.append(Ev(t, "place", name(s)))
            t += self._gap()
        return evs, t


# -- playing them ---------------------------------------------------------------------------------


@dataclass
class NoisyResult:
    verdict: str                    # equal | stopped | wrong
    recorded: tuple[str, ...]
    expected: tuple[str, ...]
    where: int = -1                 # the segment after which a wrong move was first seen
    pushes: int = 0                 # actions pushed (committed), replacements included
    transient: int = 0              # pushes of actions not in the game played at that ply (later replaced)
    cause: str = ""                 # the kind of segment where the record first fell behind or went wrong
    refused: list = field(default_factory=list)   # events the board or the session refused


def _prefix(h: tuple[str, ...], of: tuple[str, ...]) -> bool:
    return len(h) <= len(of) and of[:len(h)] == h


def run_noisy(ng: NoisyGame, *, settings=None, profile=None) -> NoisyResult:
    """Play ``ng`` on a fresh session (no journal) and compare what it recorded with the game."""
    from board_driver.config import load_variant
    from board_driver.referee.layout import Layout
    from board_driver.referee.runner import pump, settle
    from board_driver.referee.session import CommandError, Session
    from board_driver.settings import load_profile, load_settings
    from board_driver.sim.board import SimulatedBoard, SimulatorError, VirtualClock
    from engine.game import new_game

    settings = settings or load_settings()
    profile = profile or load_profile("sim")
    v = load_variant(ng.variant)
    game = new_game(v)
    s = Session(game, variant_name=ng.variant, layout=Layout.place(profile, v.geometry), settings=settings,
                san_notices=False)
    clock = VirtualClock(0)
    board = SimulatedBoard(s.layout, clock=clock, closed=s.layout.closed_sensors(game.occupancy()))
    hist = game.history
    allowed: dict[int, set[str]] = {}
    refused: list[str] = []
    seen = 0
    pushes = transient = 0
    wrong_at = -1

    def watch(expected):
        nonlocal seen, pushes, transient
        n = len(hist)
        if n > seen or (n and n == seen):
            pass
        if n != seen:
            if n > seen:
                pushes += n - seen
                for k in range(seen, n):
                    if k >= len(expected) or hist[k].text != expected[k]:
                        transient += 1
            seen = n

    for k, seg in enumerate(ng.segments):
        for ev in seg.events:
            clock.advance_to(ev.t)
            pump(s, board, None, ev.t)
            try:
                apply_event(s, board, None, ev)
            except (SimulatorError, CommandError, ValueError) as exc:
                refused.append(f"{ev.t} {ev.kind} {ev.arg}: {exc}")
            pump(s, board, None, ev.t)
            watch(seg.expected)
        # the players think before the next segment: time runs on to just before it
        nxt = ng.segments[k + 1].events[0].t if k + 1 < len(ng.segments) else None
        if nxt is not None:
            pump(s, board, None, nxt - 1)
        else:
            settle(s)
        watch(seg.expected)
        if seg.transients:
            allowed.setdefault(len(seg.expected) - 1, set()).update(seg.transients)
        h = tuple(a.text for a in hist)
        ok = _prefix(h, seg.expected) or (seg.also is not None and _prefix(h, seg.also))
        if not ok and h and _prefix(h[:-1], seg.expected) and h[-1] in allowed.get(len(h) - 1, ()):
            ok = True                   # a move the board showed on the way, not yet replaced: a stop
        if wrong_at < 0 and not ok:
            wrong_at = k
    rec = tuple(a.text for a in hist)
    cause = ""
    if wrong_at >= 0:
        verdict = "wrong"
        cause = ng.segments[wrong_at].kind
    elif rec == ng.actions:
        verdict = "equal"
    else:
        verdict = "stopped"
        k = next((k for k, seg in enumerate(ng.segments) if len(seg.expected) > len(rec)), 0)
        cause = ng.segments[k].kind if ng.segments[k].kind != "action" or k == 0 else ng.segments[k - 1].kind + ">action"
    return NoisyResult(verdict, rec, ng.actions, wrong_at, pushes, transient, cause, refused)
