"""Pairing, the proof of presence: a browser asks (``POST /api/pair``), one occupied square is
lit on the board, and a lift and put-back of its piece within 30 s, with nothing else changed
on the board meanwhile, grants the browser a token (docs/web.md, *Security*). A board with no
piece to lift (Chego's empty board) lights an empty square instead: a piece put on it and taken
off again pairs the same way.

:class:`Pairings` keeps the pairings under way; the bridge runs it on the board loop (it sees
the raw frames) and lights its squares through the overlay sink (``on_lit``).
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from board_driver.devices import SLOW, RawFrame
from board_driver.errors import BoardDriverError
from board_driver.web.auth import TokenStore
from engine.contract import TextEnum

if TYPE_CHECKING:
    from board_driver.referee.session import Session

PAIR_SECONDS = 30
PAIR_COLOR = (255, 255, 255)
MAX_WAITING = 3                     # pairings lit at once (a watcher cannot light the whole board)
PAIR_PER_CLIENT = 5                 # pairings of one client that may run out unanswered ...
PAIR_WINDOW = 300.0                 # ... within 5 minutes (a client cannot keep a square lit for good;
                                    # a new player fumbling a few tries waits a few minutes at most)
PAIR_LAYER = "pairing"              # the snapshot's LED layer of a pairing square


class PairingState(TextEnum):
    """Where a pairing stands (``GET /api/pair/ID`` answers it as ``state``)."""

    WAITING = "waiting"     # for the piece on its square to be lifted and put back
    GRANTED = "granted"     # it was: the token is the browser's
    EXPIRED = "expired"     # the deadline passed first


@dataclass
class Pairing:
    id: str
    square: str
    physical: int
    sensor: int
    deadline: float                 # time.monotonic() seconds
    state: PairingState = PairingState.WAITING
    token: str | None = None
    client: str = "?"               # who asked (client_key): one waiting pairing each
    label: str = ""                 # the device, as the token list names it
    filled: bool = True             # a piece to lift and put back; False: an empty square to fill and clear
    lifted: frozenset[int] | None = None    # the other closed sensors when the piece was lifted (set down)
    spoiled: bool = False           # something else changed on the board while it was off (on)

    @property
    def seen_open(self) -> bool:
        return self.lifted is not None

    @property
    def text(self) -> str:
        """What the player does, in words."""
        if self.filled:
            return f"Lift the piece on {self.square} (its square blinks white) and put it back"
        return f"Put a piece on {self.square} (its square blinks white) and take it off again"

    def see(self, closed: frozenset[int], before: frozenset[int] | None, gap: bool) -> bool:
        """A raw frame (``before``: the one before it): True when it completes the pairing, its
        piece put back (an empty square's piece taken off again) with nothing else changed on
        the board since the lift (the piece set down)."""
        if gap:                             # unwatched meanwhile: what happened is not known
            self.lifted, self.spoiled = None, False
            return False
        rest = closed - {self.sensor}
        away = (self.sensor in closed) != self.filled       # lifted; or, on an empty square, set down
        if self.lifted is None:
            if away:                        # the rest of the board must stay as it was
                was = before is not None and (self.sensor in before) == self.filled
                self.lifted = (before - {self.sensor}) if was and before is not None else rest
                self.spoiled = rest != self.lifted
        elif away:
            if rest != self.lifted:
                self.spoiled = True
        elif not self.spoiled and rest == self.lifted:
            return True
        else:                               # back, but after another change: a lift is needed again
            self.lifted, self.spoiled = None, False
        return False

    def grant(self, token: str) -> None:
        self.token = token
        self.state = PairingState.GRANTED

    def expire(self) -> None:
        self.state = PairingState.EXPIRED


class PairingError(BoardDriverError, ValueError):
    """A pairing cannot start now."""


class PairingBusy(PairingError):
    """A pairing cannot start yet: the client asked too often (429) or every slot is taken
    (400); ``retry_after`` seconds until it may."""

    def __init__(self, message: str, retry_after: float, status: int = 429):
        super().__init__(message)
        self.retry_after = max(1, math.ceil(retry_after))
        self.status = status


class Pairings:
    """The pairings under way and those that ran out lately. ``tokens`` grants the token of a
    completed one; ``notice`` says it on the page; ``on_lit`` is handed the squares to light
    (``{physical LED: (colour, blink)}``) whenever they change."""

    def __init__(self, tokens: TokenStore, *, notice: Callable[[str], None],
                 on_lit: Callable[[dict[int, tuple]], None]):
        self.tokens = tokens
        self.notice = notice
        self.on_lit = on_lit
        self._lock = threading.Lock()
        self._pairings: dict[str, Pairing] = {}
        self._misses: dict[str, list[float]] = {}          # client -> when its pairings ran out unanswered
        self._last_closed: frozenset[int] | None = None    # the raw frame before (pairing's lift)

    def new_board(self) -> None:
        """A new game on a (new) board: the raw frame seen last is not the board before the
        next one (the simulated board of a new game is set up without a frame), so a pairing's
        lift is compared with what the board shows from then on."""
        self._last_closed = None

    def get(self, pid: str) -> Pairing | None:
        with self._lock:
            return self._pairings.get(pid)

    def lit(self) -> dict[int, tuple]:
        """The squares lit now: the waiting pairings'."""
        with self._lock:
            return {p.physical: (PAIR_COLOR, SLOW) for p in self._pairings.values()
                    if p.state is PairingState.WAITING}

    def leds(self) -> dict[str, dict]:
        """The squares lit now as the snapshot's ``leds`` name them (by square, layer ``pairing``)."""
        with self._lock:
            return {p.square: {"color": "#%02x%02x%02x" % PAIR_COLOR, "blink": "slow", "layer": PAIR_LAYER,
                               "meaning": "pairing: lift this piece and put it back" if p.filled
                               else "pairing: put a piece here and take it off again"}
                    for p in self._pairings.values() if p.state is PairingState.WAITING}

    def start(self, session: Any, client: str = "?", label: str = "") -> Pairing:
        """Light one occupied square that the game's move under way does not touch; a lift and
        put-back of its piece within 30 s, with nothing else changed on the board meanwhile,
        pairs. A client with a pairing waiting gets that one again; a client whose last
        :data:`PAIR_PER_CLIENT` pairings ran out unanswered within :data:`PAIR_WINDOW` seconds
        waits until the first of them is that old."""
        self.expire()
        now = time.monotonic()
        with self._lock:
            for p in self._pairings.values():
                if p.client == client and p.state is PairingState.WAITING:
                    return p                    # one waiting pairing per client: the same one again
            misses = [t for t in self._misses.get(client, []) if now - t < PAIR_WINDOW]
            if misses:
                self._misses[client] = misses
            else:
                self._misses.pop(client, None)
            if len(misses) >= PAIR_PER_CLIENT:
                raise PairingBusy(f"{len(misses)} pairings of this device ran out in {round(PAIR_WINDOW / 60)} "
                                  "minutes without the piece lifted: try again later", misses[0] + PAIR_WINDOW - now)
            waiting = [p for p in self._pairings.values() if p.state is PairingState.WAITING]
        if len(waiting) >= MAX_WAITING:
            raise PairingBusy(f"{len(waiting)} pairings are already waiting: lift and put back a lit piece, "
                              f"or ask again when they ran out ({PAIR_SECONDS} s)",
                              min(p.deadline for p in waiting) - now, status=400)
        g = session.game
        layout = session.layout
        lit = {p.square for p in waiting}
        squares = [sq for sq in pairing_squares(session)
                   if layout.physical(sq) >= 0 and g.geometry.name(sq) not in lit]
        filled = bool(squares)
        if not squares and not any(session.occupancy >> sq & 1 for sq in g.piece_map()):
            # no piece of the game on the board (Chego's start): an empty square to fill and clear
            squares = [sq for sq in empty_pairing_squares(session)
                       if layout.physical(sq) >= 0 and g.geometry.name(sq) not in lit]
        if not squares:
            raise PairingError("every piece on the board takes part in the move under way (or is lit for "
                               "another pairing): ask again once the move is made")
        sq = secrets.choice(squares)
        p = Pairing(secrets.token_urlsafe(12), g.geometry.name(sq), layout.physical(sq), layout.sensor_of(sq),
                    now + PAIR_SECONDS, client=client, label=label, filled=filled)
        with self._lock:
            self._pairings[p.id] = p
        self.on_lit(self.lit())
        return p

    def observe(self, frame: RawFrame) -> None:
        """A raw frame: does it complete a pairing? Its piece lifted and put back, and nothing
        else on the board changed from the frame before the lift until the put-back (a capture
        on the lit square lifts the capturing piece elsewhere: it never pairs)."""
        granted = False
        closed = frozenset(frame.closed)
        before = self._last_closed
        self._last_closed = closed
        with self._lock:
            waiting = [p for p in self._pairings.values() if p.state is PairingState.WAITING]
        for p in waiting:
            if p.see(closed, before, frame.gap):
                p.grant(self.tokens.grant(p.label or "a paired device", "pairing"))
                granted = True
        if granted:
            self.notice("A browser is paired with the board.")
            self.on_lit(self.lit())

    def expire(self) -> None:
        """Pairings past their deadline run out (and are forgotten 5 minutes later)."""
        now = time.monotonic()
        changed = False
        with self._lock:
            for pid, p in list(self._pairings.items()):
                if p.state is PairingState.WAITING and now > p.deadline:
                    p.expire()
                    changed = True
                    self._misses.setdefault(p.client, []).append(now)
                    if len(self._misses) > 4096:      # bounded: the oldest client forgotten
                        del self._misses[next(iter(self._misses))]
                if now > p.deadline + 300:
                    del self._pairings[pid]
        if changed:
            self.on_lit(self.lit())


def pairing_squares(session: Session) -> list[int]:
    """The squares a pairing may light: occupied (game and sensors), not touched by the move
    under way (lifted or placed since the position was settled, or a square of a move the board
    may be on its way to) and not one the side to move may capture. Squares that no legal action
    touches at all come first: those, when there are any, else the rest."""
    g = session.game
    pm = g.piece_map()
    occupied = [sq for sq in sorted(pm) if session.occupancy >> sq & 1]
    busy = _busy(session)
    touched: set[int] = set()
    try:
        legal = list(g.legal_actions()) if session.outcome() is None else []
    except Exception:                        # a position the engine cannot list: no square is safe to guess
        legal = []
        busy |= set(occupied)
    for a in legal:
        touched |= a.lifts | a.places
        busy |= {sq for sq in a.lifts if sq in pm and pm[sq][1] != g.turn}      # the victims
    free = [sq for sq in occupied if sq not in busy]
    apart = [sq for sq in free if sq not in touched]
    return apart or free



def _busy(session: Session) -> set[int]:
    """The squares the move under way touches: lifted or placed since the position was settled,
    a square of a move the board may be on its way to, a square a mismatch's fix names."""
    busy: set[int] = set()
    verdicts = [session.verdict]
    if session.tentative is not None:
        verdicts.append(session.tentative.verdict)
    for v in verdicts:
        busy |= v.lifted | v.placed
        for e in v.options + v.partial:
            for a in e.actions:
                busy |= a.lifts | a.places
        if v.fix is not None:
            busy |= v.fix.squares
    return busy


def empty_pairing_squares(session: Session) -> list[int]:
    """The squares a pairing may light when no piece stands on the board to lift: empty (game
    and sensors), not a hole, not touched by the move under way; those near the middle of the
    board first (easy to reach from either side)."""
    g = session.game
    geo = g.geometry
    pm = g.piece_map()
    busy = _busy(session)
    empty = [sq for sq in geo.squares() if sq not in geo.holes and sq not in pm
             and not session.occupancy >> sq & 1 and sq not in busy]

    def apart(sq: int) -> float:
        return abs(geo.file_of(sq) - (geo.files - 1) / 2) + abs(geo.rank_of(sq) - (geo.ranks - 1) / 2)
    near = [sq for sq in empty if apart(sq) <= 2]
    return near or empty
