"""The reconciler's inputs, built from the game: one :class:`~board_driver.referee.reconcile.Base` per
state a board could be explained from (the current position, the one before the last physical
action, ...), the state after ending a multi-move turn, and the player's preferences.

:class:`Bases` caches them until the game changes (:meth:`Bases.invalidate`). It reads the
game and the event marks (per history entry: the index in the event log where its window
starts) and never changes either: states before the current one are read off a copy of
the game (``game.copy()``), never by popping and re-pushing the live game.

It also keeps *previews*: for an action the board may be on its way to (a piece is in the
player's hand), what a commit of it needs after the push -- its name, the ending, the typed
view and the next drops -- worked out on a copy while the board is idle (:meth:`preview`),
and handed over when that very action is committed from this very state (:meth:`seed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from board_driver.referee.reconcile import Base, Preferences
from engine.contract import ActionKind, BoardState, Termination
from engine.errors import EngineError
from engine.variant import PROMOTION_PREFERENCE as PROMOTION_ORDER  # noqa: F401  (re-exported)

if TYPE_CHECKING:
    from board_driver.referee.opponent import Expect
    from engine.contract import Game


@dataclass(frozen=True, slots=True)
class Preview:
    """What a commit of ``action`` needs once it is pushed, worked out ahead on a copy."""

    action: object
    san: str
    outcome: object
    state: BoardState
    drops: tuple
    squares: frozenset


class Bases:
    """The reconciler's view of one game, cached until :meth:`invalidate`."""

    def __init__(self, game: Game, marks: list[int]):
        self.game = game
        self.marks = marks          # shared with the session, which keeps it in step with the history
        self._cache: dict = {}
        self._spent: list[dict] = []   # caches invalidated but not yet freed (see release)
        self.only: Expect | None = None     # what is accepted of the side played from elsewhere (Session.expect_only)
        self.generation = 0         # counts the invalidations: equal numbers, the same inputs
        self._promotion = game.variant.promotion_order     # the variant never changes

    def invalidate(self) -> None:
        # the old states are let go later (release): freeing their action lists and indexes
        # is work a commit's LED frame need not wait for
        if self._cache:
            if len(self._spent) >= 8:
                self._spent.clear()         # never idle for a while: bounded all the same
            self._spent.append(self._cache)
            self._cache = {}
        self.generation += 1

    def release(self) -> None:
        """Free what earlier invalidations left (the service calls it when the board is idle)."""
        self._spent.clear()

    def outcome(self):
        """The game's outcome (cached until the game changes)."""
        if "outcome" not in self._cache:
            self._cache["outcome"] = self.game.outcome()
        return self._cache["outcome"]

    def state(self):
        """The game's typed view, :meth:`engine.game.FamilyGame.board_state` (cached until the
        game changes: the LED scene, the page and the last mover's pieces all read it)."""
        st = self._cache.get("state")
        if st is None:
            st = self._cache["state"] = self.game.board_state()
        return st

    def base(self, k: int) -> Base | None:
        """The state ``k`` physical actions back (0: now), or None when there is none."""
        if k in self._cache:
            return self._cache[k]
        base = self._build(k)
        self._cache[k] = base
        return base

    def _build(self, k: int) -> Base | None:
        g = self.game
        h = g.history
        if k > 0:
            out = self.outcome()
            if out is not None and out.termination in (Termination.RESIGNATION, Termination.AGREEMENT):
                return None
        i = len(h)
        undone = []
        silent_after = False
        for step in range(k):
            j = i
            while j > 0 and h[j - 1].silent:
                j -= 1
            if j == 0:
                return None
            if step == 0 and j != i:
                silent_after = True
            j -= 1
            undone.append((h[j], self.marks[j]))
            i = j
        if i < len(h):
            past = g.copy()
            for _ in range(len(h) - i):
                past.pop()
        else:
            past = g
        occ, actions, turn = past.occupancy(), tuple(past.legal_actions()), past.turn
        only = self.only
        if k == 0 and only is not None:
            actions = tuple(a for a in actions if only.admits(a))
        start = self.marks[i - 1] if i > 0 else 0
        last_side, last_to_move, last_drop = -1, False, False
        if k == 0:
            last = next((a for a in reversed(h) if not a.silent), None)
            if last is None:
                last_side = 0
            else:
                last_drop = last.kind == ActionKind.DROP
                pm = self.state().pieces
                color = next((pm[sq][1] for sq in last.places if sq in pm), None)
                if color is not None:
                    last_side = 0
                    for sq, (_, c) in pm.items():
                        if c == color:
                            last_side |= 1 << sq
                    last_to_move = color == g.turn
        # the occupancy before the physical action preceding this state (no engine call needed:
        # an action's lifts and places undo it)
        before_last = -1
        j = i
        while j > 0 and h[j - 1].silent:
            j -= 1
        if j > 0:
            prev = h[j - 1]
            before_last = occ
            for sq in prev.places:
                before_last &= ~(1 << sq)
            for sq in prev.lifts:
                before_last |= 1 << sq
        return Base(k, occ, actions, g.geometry.files, start, (), tuple(undone),
                    replaceable=(k == 1 and not silent_after), same_turn=(turn == g.turn),
                    last_side=last_side, last_to_move=last_to_move, last_drop=last_drop,
                    before_last=before_last)

    def end_base(self) -> Base | None:
        """The state after the silent ``end`` of a multi-move turn, when one is legal now."""
        if "end" in self._cache:
            return self._cache["end"]
        b0 = self.base(0)
        assert b0 is not None           # the state now always exists
        end = next((a for a in b0.actions if a.kind == ActionKind.END and a.silent), None)
        base = None
        if end is not None:
            g = self.game.copy()
            g.push(end)
            base = Base(0, g.occupancy(), tuple(g.legal_actions()), g.geometry.files, b0.start, (end,))
        self._cache["end"] = base
        return base

    def droppable(self):
        """The actions the next physical action comes from: the legal actions, or when only
        silent ones are legal (a design phase, a turn that can only end) those after ``end``."""
        b0 = self.base(0)
        assert b0 is not None
        legal = b0.actions
        if legal and all(a.silent for a in legal):
            eb = self.end_base()
            if eb is not None:
                return eb.actions
        return legal

    def bought(self, legal=None) -> tuple[str, ...]:
        """The letter of the piece bought last, when one of the drops ``legal`` (by default
        :meth:`next_drops`) sets it down: the default of a 'which reserve piece?' prompt, and
        the purchase LEDs. The drops are listed only when a piece was bought."""
        h = self.game.history
        for idx in range(len(h) - 1, max(-1, len(h) - 8), -1):
            a = h[idx]
            if a.kind == ActionKind.BUY and a.piece:
                letter = a.piece
                if len(letter) != 1 or not letter.isalpha():
                    pieces = self.game.describe().get("pieces", {}) if hasattr(self.game, "describe") else {}
                    letter = next((k for k, d in pieces.items() if d == a.piece), letter)
                letter = letter.lower()
                if legal is None:
                    legal = self.next_drops()
                if any(x.kind == ActionKind.DROP and x.piece.lower() == letter for x in legal):
                    return (letter,)
                return ()
        return ()

    def next_drops(self) -> tuple:
        """``game.next_drops()`` (cached until the game changes; a preview seeds it)."""
        d = self._cache.get("next_drops")
        if d is None:
            d = self._cache["next_drops"] = tuple(self.game.next_drops())
        return d

    def next_drop_squares(self) -> frozenset:
        """``game.next_drop_squares()``, cached like :meth:`next_drops` (the LED scene reads
        it: a family that knows the squares without listing the drops lets a commit show its
        frame before the actions are listed)."""
        d = self._cache.get("next_drop_squares")
        if d is None:
            d = self._cache["next_drop_squares"] = self.game.next_drop_squares()
        return d

    def purchase_squares(self) -> frozenset:
        """The squares of :meth:`next_drops` that set down the piece just bought."""
        bought = self.bought()
        if not bought:
            return frozenset()
        return frozenset(sq for a in self.next_drops() if a.kind == ActionKind.DROP and a.piece.lower() in bought
                         for sq in a.places)

    # -- previews ------------------------------------------------------------------------------
    def preview(self, action) -> bool:
        """Work out the preview of ``action`` (a legal physical action now) unless it is there;
        True when this did the work."""
        previews = self._cache.setdefault("previews", {})
        if id(action) in previews:
            return False
        g = self.game.copy()
        try:
            san = g.san(action)
            g.push(action)
            out = g.outcome()
            pv = Preview(action, san, out, g.board_state(), tuple(g.next_drops()) if out is None else (),
                         g.next_drop_squares() if out is None else frozenset())
        except EngineError:
            pv = None
        previews[id(action)] = pv
        return True

    def preview_of(self, action) -> Preview | None:
        """The preview of ``action`` made in the current state, or None."""
        pv = self._cache.get("previews", {}).get(id(action))
        return pv if pv is not None and pv.action is action else None

    def seed(self, pv: Preview) -> None:
        """The game has just pushed ``pv.action`` from the state the preview was made in: its
        ending, typed view and next drops are the preview's."""
        self._cache["outcome"] = pv.outcome
        self._cache["state"] = pv.state
        self._cache["next_drops"] = pv.drops
        self._cache["next_drop_squares"] = pv.squares

    def prefs(self, choice: str | None) -> Preferences:
        key = ("prefs", choice)
        p = self._cache.get(key)
        if p is None:
            p = self._cache[key] = Preferences(promotion=self._promotion,
                                               drop=self.bought(self.droppable()), choice=choice)
        return p
