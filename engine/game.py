"""Games: the interface every rules family implements, and the chess family.

A *game* is the engine's mutable view of one game in progress. Everything outside the
engine (the CLI, the board driver) talks to games through this small interface, whatever
the family (chess, csipgs, chego, cost-progressive):

* ``legal_actions()`` -> list of :class:`Action`; ``parse(text)`` -> the legal Action so
  written; ``push(action)`` / ``pop()``;
* ``outcome()`` -> :class:`Outcome` or None; ``fen()``; ``turn`` (0 white, 1 black);
* ``occupancy()`` -> bitboard of occupied squares; ``piece_map()`` -> {square: (letter, colour)};
* ``checked_royals()`` -> squares of royal pieces in check (for the LEDs);
* ``describe()`` -> a JSON-ready dict of the family's extra state (treasuries, points...);
* ``resign(color)`` / ``unresign()`` (:class:`Resignable`);
* ``history`` -> the actions pushed so far.

An :class:`Action` carries its notation and its *physical effect*: the squares whose
pieces leave (``lifts``) and the squares that end up holding a moved or new piece
(``places``), which is what an occupancy-only board can see. An action with no effect
(a purchase, a pass, the end of a turn) is one the board driver must be told about.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from fractions import Fraction

from .errors import IllegalMoveError, VariantError
from .moves import CASTLE, DROP, EN_PASSANT, Move, to_uci
from .position import BLACK, WHITE, Position


@dataclass(frozen=True, slots=True)
class Action:
    """One legal thing a player can do, with its notation and what the board sees of it."""

    text: str                          # coordinate notation: e2e4, a7a8q, N@e4, pass, buy N ...
    kind: str                          # move | capture | castle | en-passant | promotion | drop | pass | end | buy | design | invent | ...
    lifts: frozenset[int] = frozenset()    # squares whose piece leaves (mover, victims, castling rook)
    places: frozenset[int] = frozenset()   # squares that end up holding a moved/new piece
    code: int = -1                     # the engine's int move, or -1
    piece: str = ""                    # letter of the piece that moves / is dropped / bought
    detail: tuple = ()                 # family-specific data (e.g. killed pieces, price)

    @property
    def silent(self) -> bool:
        """True when the board cannot see this action (no piece moves)."""
        return not self.lifts and not self.places

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Outcome:
    result: str          # "1-0", "0-1", "1/2-1/2", "3/5-2/5", "3/10-7/10", "19-17" ...
    reason: str          # checkmate, stalemate, fifty-move rule, threefold repetition, ...
    winner: int | None = None   # 0 white, 1 black, None for a draw or an equal split

    def points(self) -> tuple[Fraction, Fraction]:
        w, b = self.result.split("-")
        return Fraction(w), Fraction(b)


def find_action(actions, text: str, san=None) -> Action | None:
    """The action of ``actions`` written ``text``: exactly, then ignoring case, then (given a
    ``san`` function) by its SAN without check marks; None when none matches."""
    t = text.strip()
    for a in actions:
        if a.text == t:
            return a
    low = t.lower()
    for a in actions:
        if a.text.lower() == low:
            return a
    if san is not None:
        plain = t.rstrip("+#!?")
        for a in actions:
            if san(a).rstrip("+#") == plain:
                return a
    return None


FAMILIES = {
    "chess": "engine.game:ChessGame",
    "csipgs": "engine.csipgs:CsipgsGame",
    "chego": "engine.chego:ChegoGame",
    "cost-progressive": "engine.costprog:CostProgressiveGame",
}


def new_game(variant, fen: str | None = None):
    """A new game of the variant's family, from its start (or from ``fen``)."""
    target = FAMILIES.get(variant.family)
    if target is None:
        raise VariantError(f"variant {variant.name!r}: unknown family {variant.family!r} "
                           f"(known: {', '.join(FAMILIES)})")
    module, cls = target.split(":")
    try:
        game_cls = getattr(importlib.import_module(module), cls)
    except ImportError as exc:
        raise VariantError(f"the {variant.family!r} family is not available: {exc}") from None
    return game_cls(variant, fen)


class Resignable:
    """Resignation, the same in every family: ``resign(color)`` ends the game for the other
    side; ``unresign()`` takes it back (so does ``pop()``)."""

    resigned: int | None = None

    def resign(self, color: int) -> None:
        self.resigned = color
        self._forget_outcome()

    def unresign(self) -> None:
        self.resigned = None
        self._forget_outcome()

    def resignation(self) -> Outcome:
        return Outcome("0-1" if self.resigned == WHITE else "1-0", "resignation", self.resigned ^ 1)

    def _forget_outcome(self) -> None:
        """Drop cached legal actions/outcome (families with caches override)."""


class BoardView:
    """What the board shows, read off ``self.position`` (a Position of ``self.variant``)."""

    @property
    def turn(self) -> int:
        """The side to move: 0 white, 1 black."""
        return self.position.turn

    @property
    def geometry(self):
        return self.variant.geometry

    def occupancy(self) -> int:
        """Bitboard of the occupied squares."""
        return self.position.occ[0] | self.position.occ[1]

    def piece_map(self) -> dict[int, tuple[str, int]]:
        """{square: (letter, colour)} of every piece on the board."""
        pieces = self.position.variant.pieces
        return {sq: (pieces[(c >> 1) - 1].letter, c & 1)
                for sq, c in enumerate(self.position.board) if c}


class ChessGame(Resignable, BoardView):
    """A chess-family game: orthodox chess, Tomorrow's Chess and any Betza army."""

    family = "chess"

    def __init__(self, variant, fen: str | None = None):
        self.variant = variant
        self.position = Position.from_fen(variant, fen)
        self.start_fen = self.position.fen(ep="always")
        self.history: list[Action] = []
        self._keys: list[str] = [self._key()]
        self._legal_cache: list[Action] | None = None
        self.resigned: int | None = None

    # -- state -----------------------------------------------------------------------------
    def fen(self) -> str:
        return self.position.fen()

    def checked_royals(self) -> list[int]:
        pos = self.position
        out = []
        for color in (WHITE, BLACK):
            protected = pos._protected(color)
            out.extend(sq for sq in protected if pos.attacked(sq, color ^ 1))
        return sorted(out)

    def in_check(self) -> bool:
        return self.position.in_check()

    def describe(self) -> dict:
        return {}

    def _key(self) -> str:
        return " ".join(self.position.fen().split()[:4])

    # -- actions ---------------------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        if self._legal_cache is None:
            if self.outcome() is not None:
                self._legal_cache = []
            else:
                self._legal_cache = [self.action_of(m) for m in self.position.legal_moves()]
        return self._legal_cache

    def action_of(self, m: int) -> Action:
        """The Action of an int move in the current position."""
        pos = self.position
        v = self.variant
        frm, to, extra, flag = m & 0xFF, (m >> 8) & 0xFF, (m >> 16) & 0xFF, m >> 24
        text = to_uci(m, v)
        if flag == DROP:
            return Action(text, "drop", frozenset(), frozenset({to}), m, v.pieces[frm].letter)
        letter = v.pieces[(pos.board[frm] >> 1) - 1].letter
        if flag == CASTLE:
            rook = extra - 1
            rto = frm + (1 if to > frm else -1)
            return Action(text, "castle", frozenset({frm, rook}), frozenset({to, rto}), m, letter)
        if flag == EN_PASSANT:
            victim = to - pos._forward[pos.turn]
            return Action(text, "en-passant", frozenset({frm, victim}), frozenset({to}), m, letter)
        captured = bool(pos.board[to])
        kind = "promotion" if extra else ("capture" if captured else "move")
        lifts = frozenset({frm, to}) if captured else frozenset({frm})
        return Action(text, kind, lifts, frozenset({to}), m, letter)

    def parse(self, text: str) -> Action:
        """The legal action written ``text`` (coordinate notation or SAN)."""
        found = find_action(self.legal_actions(), text, self.san)
        if found is not None:
            return found
        if self.outcome() is not None:
            raise IllegalMoveError(f"{text!r}: the game is over ({self.outcome().reason})")
        raise IllegalMoveError(f"{text!r} is not a legal move in {self.fen()}")

    def push(self, action: Action | str) -> Action:
        if isinstance(action, str):
            action = self.parse(action)
        self.position.push(action.code)
        self.history.append(action)
        self._keys.append(self._key())
        self._legal_cache = None
        return action

    def pop(self) -> Action:
        if not self.history:
            raise IllegalMoveError("no move to take back")
        self.position.pop()
        self._keys.pop()
        self._legal_cache = None
        self.resigned = None
        return self.history.pop()

    def _forget_outcome(self) -> None:
        self._legal_cache = None

    # -- results ---------------------------------------------------------------------------
    def outcome(self) -> Outcome | None:
        if self.resigned is not None:
            return self.resignation()
        pos = self.position
        v = self.variant
        us = pos.turn
        if not pos.royal_squares(us) and any(p.royal for p in v.pieces):
            return Outcome("0-1" if us == WHITE else "1-0", "royal pieces captured", us ^ 1)
        if pos.count_legal() == 0:
            if pos.in_check():
                return Outcome("0-1" if us == WHITE else "1-0", "checkmate", us ^ 1)
            # the side that cannot move is stalemated by the other
            result = v.stalemate_white_wins if us == BLACK else v.stalemate_black_wins
            w, b = Outcome(result, "").points()
            winner = None if w == b else (WHITE if w > b else BLACK)
            return Outcome(result, "stalemate", winner)
        if v.fifty_moves and pos.halfmove >= 2 * v.fifty_moves:
            return Outcome("1/2-1/2", "fifty-move rule")
        if v.repetitions and self._keys.count(self._keys[-1]) >= v.repetitions:
            return Outcome("1/2-1/2", "threefold repetition" if v.repetitions == 3 else "repetition")
        return None

    # -- notation --------------------------------------------------------------------------
    def san(self, action: Action) -> str:
        """Readable notation with the variant's letters: Nf3, exd5, Lxc4, e8=Q, O-O, N@e4."""
        v, g, pos = self.variant, self.geometry, self.position
        m = action.code
        if m < 0:
            return action.text
        frm, to, extra, flag = m & 0xFF, (m >> 8) & 0xFF, (m >> 16) & 0xFF, m >> 24
        if flag == DROP:
            text = f"{v.pieces[frm].letter.upper()}@{g.name(to)}"
        elif flag == CASTLE:
            text = "O-O" if to > frm else "O-O-O"
        else:
            piece = v.pieces[(pos.board[frm] >> 1) - 1]
            capture = bool(pos.board[to]) or flag == EN_PASSANT
            if piece.pawn:
                text = (g.name(frm)[0] + "x" if capture else "") + g.name(to)
                if extra:
                    text += "=" + v.pieces[extra - 1].letter.upper()
            else:
                others = [a for a in self.legal_actions() if a.code != m and a.code >= 0
                          and (a.code >> 24) not in (DROP, CASTLE)
                          and ((a.code >> 8) & 0xFF) == to
                          and pos.board[a.code & 0xFF] == pos.board[frm]]
                dis = ""
                if others:
                    ofiles = {g.file_of(a.code & 0xFF) for a in others}
                    oranks = {g.rank_of(a.code & 0xFF) for a in others}
                    if g.file_of(frm) not in ofiles:
                        dis = g.name(frm)[0]
                    elif g.rank_of(frm) not in oranks:
                        dis = g.name(frm)[1:]
                    else:
                        dis = g.name(frm)
                text = piece.letter.upper() + dis + ("x" if capture else "") + g.name(to)
        pos.push(m)
        try:
            if pos.in_check():
                text += "#" if pos.count_legal() == 0 else "+"
        finally:
            pos.pop()
        return text

    def move_value(self, action: Action) -> Move:
        return Move.from_int(action.code)
