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
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, TypeVar, Union

from .contract import ActionKind, BoardState, PieceMap, Termination
from .errors import IllegalMoveError, VariantError
from .geometry import bits
from .moves import CASTLE, DROP, EN_PASSANT, Move, decode, to_uci
from . import refusals
from .position import BLACK, WHITE, Position

COLOUR_NAMES = ("White", "Black")

MOVE, CAPTURE, PROMOTION = ActionKind.MOVE, ActionKind.CAPTURE, ActionKind.PROMOTION


# -- what an action carries beyond its squares (Action.detail), per family -------------------------
class MoveCost(NamedTuple):
    """Cost Progressive: the movement points a move costs."""
    cost: int


class DoubleMove(NamedTuple):
    """csipgs: the two int moves of a doublemove piece's action."""
    first: int
    second: int


class Transfer(NamedTuple):
    """csipgs: the design of the reserve piece set on the board."""
    design: str


class Purchase(NamedTuple):
    """csipgs: the design bought and its price."""
    design: str
    price: Fraction


class DesignChange(NamedTuple):
    """csipgs: design slot ``slot`` (1-based) gets ``design``, priced ``price``."""
    slot: int
    design: str
    price: Fraction


class Invention(NamedTuple):
    """csipgs: a new atom or modifier, with both players' estimates."""
    what: str          # atom | modifier
    name: str
    mine: Fraction
    theirs: Fraction
    family: str


class ArmySetup(NamedTuple):
    """Army csipgs: the (design, square) pairs of a recorded army."""
    placed: tuple[tuple[str, int], ...]


# Chego's detail is the (square, letter) of each piece a drop kills
ActionDetail = Union[MoveCost, DoubleMove, Transfer, Purchase, DesignChange, Invention, ArmySetup,
                     tuple[tuple[int, str], ...]]
_D = TypeVar("_D", MoveCost, DoubleMove, Transfer, Purchase, DesignChange, Invention, ArmySetup)


@dataclass(frozen=True, slots=True)
class Action:
    """One legal thing a player can do, with its notation and what the board sees of it."""

    text: str                          # coordinate notation: e2e4, a7a8q, N@e4, pass, buy N ...
    kind: ActionKind                   # see ActionKind
    lifts: frozenset[int] = frozenset()    # squares whose piece leaves (mover, victims, castling rook)
    places: frozenset[int] = frozenset()   # squares that end up holding a moved/new piece
    code: int = -1                     # the engine's int move, or -1
    piece: str = ""                    # letter of the piece that moves / is dropped / bought
    detail: ActionDetail = ()          # family data: one of the NamedTuples above; Chego: ((square, letter), ...) killed
    promotion: str = ""                # letter of the piece a pawn promotes to ("" if none)
    drop: str = ""                     # letter of the piece dropped ("" if none)

    @property
    def silent(self) -> bool:
        """True when the board cannot see this action (no piece moves)."""
        return not self.lifts and not self.places

    def detail_as(self, kind: type[_D]) -> _D:
        """The detail, which the action's family and kind say is a ``kind``
        (``a.detail_as(Purchase).price``); TypeError when it is not."""
        d = self.detail
        if not isinstance(d, kind):
            raise TypeError(f"{self.text!r}: its detail is {d!r}, not a {kind.__name__}")
        return d

    def __str__(self) -> str:
        return self.text


# -- what an outcome carries beyond its termination and score (Outcome.detail) ---------------------
class Territory(NamedTuple):
    """Chego: the points counted when both players passed (empty squares held plus captures)."""
    white: int
    black: int

    def text(self) -> str:
        return f"both players passed: {self.white}-{self.black} points"


class ArmyWithoutRoyal(NamedTuple):
    """Army csipgs: which armies were set up without a royal piece (that player loses; Black
    wins when both did)."""
    white: bool
    black: bool

    def text(self) -> str:
        if self.white and self.black:
            return "no royal piece in either army (Black wins)"
        return f"{'White' if self.white else 'Black'}'s army has no royal piece"


class Adjudication(NamedTuple):
    """A match ended a game still going after ``actions`` actions."""
    actions: int

    def text(self) -> str:
        return f"adjudicated: still going after {self.actions} actions"


class Forfeit(NamedTuple):
    """A match's forfeit: ``side`` played ``what`` (no action, an illegal one, an unfinished
    turn)."""
    side: int
    what: str

    def text(self) -> str:
        return f"{('white', 'black')[self.side]} played {self.what}"


OutcomeDetail = Union[Territory, ArmyWithoutRoyal, Adjudication, Forfeit, None]

# the detail each termination may carry (the others carry none)
_DETAIL_TYPES: dict[Termination, type] = {
    Termination.TERRITORY: Territory, Termination.NO_ROYAL_IN_ARMY: ArmyWithoutRoyal,
    Termination.ADJUDICATED: Adjudication, Termination.OTHER: Forfeit,
}

_WIN: tuple[tuple[Fraction, Fraction], tuple[Fraction, Fraction]] = \
    ((Fraction(1), Fraction(0)), (Fraction(0), Fraction(1)))     # by the winner's colour
_DRAW: tuple[Fraction, Fraction] = (Fraction(1, 2), Fraction(1, 2))


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the :class:`~engine.contract.Termination`, the score (White's and
    Black's share of the game point: 1-0, a draw's halves, a Tomorrow's Chess stalemate's 3/5
    and 2/5) and, for the endings that have one, a typed detail (:class:`Territory`,
    :class:`ArmyWithoutRoyal`, :class:`Adjudication`, :class:`Forfeit`). The winner, the
    result text and the reason text are derived from them::

        Outcome.win(BLACK, Termination.CHECKMATE).result == "0-1"
        Outcome.draw(Termination.FIFTY_MOVES).reason == "fifty-move rule"
        Outcome(Termination.STALEMATE, (Fraction(3, 5), Fraction(2, 5))).result == "3/5-2/5"
        Outcome.win(WHITE, Termination.TERRITORY, Territory(5, 4)).reason
            == "both players passed: 5-4 points"
    """

    termination: Termination
    score: tuple[Fraction, Fraction]
    detail: OutcomeDetail = None

    def __post_init__(self) -> None:
        w, b = (Fraction(x) for x in self.score)
        if w < 0 or b < 0 or w + b != 1:
            raise ValueError(f"an outcome's score gives out one game point: not {w}-{b}")
        object.__setattr__(self, "score", (w, b))
        if self.detail is not None and type(self.detail) is not _DETAIL_TYPES.get(self.termination):
            raise ValueError(f"a {self.termination} outcome cannot carry {self.detail!r}")

    @classmethod
    def win(cls, winner: int, termination: Termination, detail: OutcomeDetail = None) -> Outcome:
        """``winner`` (0 White, 1 Black) takes the whole point."""
        return cls(termination, _WIN[winner], detail)

    @classmethod
    def draw(cls, termination: Termination, detail: OutcomeDetail = None) -> Outcome:
        """Half a point each."""
        return cls(termination, _DRAW, detail)

    @property
    def winner(self) -> int | None:
        """0 White, 1 Black: the side with the larger share; None for a draw or an equal split."""
        w, b = self.score
        return None if w == b else WHITE if w > b else BLACK

    @property
    def result(self) -> str:
        """The score as a PGN-style text: "1-0", "0-1", "1/2-1/2", "3/5-2/5", "3/10-7/10"."""
        w, b = self.score
        return f"{w}-{b}"

    @property
    def reason(self) -> str:
        """How the game ended, in words: the termination's text ("checkmate", "time
        forfeit" ...) or its detail's ("both players passed: 5-4 points"). It is also the
        last comment of the PGN's movetext (its ``Termination`` tag holds the standard's values)."""
        return str(self.termination) if self.detail is None else self.detail.text()

    def points(self) -> tuple[Fraction, Fraction]:
        """(White's, Black's) share of the game point."""
        return self.score


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


def start_problem(game) -> str | None:
    """Why no game of its variant can reach ``game``'s position (None: it can): a family's own
    ``start_problem()``, else its board position's (:meth:`engine.position.Position.start_problem`:
    royal pieces counted by the variant's royal rule, the side that just moved not in check,
    pawns off the ranks they cannot stand on)."""
    own = getattr(game, "start_problem", None)
    if not callable(own):
        own = getattr(getattr(game, "position", None), "start_problem", None)
    why = own() if callable(own) else None
    return why if isinstance(why, str) else None


class Resignable:
    """Resignation, the same in every family: ``resign(color)`` ends the game for the other
    side; ``unresign()`` takes it back (so does ``pop()``). A flag fall ends a game the same
    way: ``resign(color, Termination.TIME_FORFEIT, draw=...)`` (drawn when the other side
    cannot win: :func:`engine.timeout.can_win`)."""

    resigned: int | None = None
    ended_by: Termination = Termination.RESIGNATION
    ended_drawn: bool = False

    def resign(self, color: int, reason: Termination = Termination.RESIGNATION, *, draw: bool = False) -> None:
        self.resigned = color
        self.ended_by = Termination(reason)
        self.ended_drawn = bool(draw)
        self._forget_outcome()

    def unresign(self) -> None:
        self.resigned = None
        self._forget_outcome()

    def resignation(self) -> Outcome:
        """The outcome of the resignation or flag fall (only while ``resigned`` is set)."""
        assert self.resigned is not None
        if self.ended_drawn:
            return Outcome.draw(self.ended_by)
        return Outcome.win(self.resigned ^ 1, self.ended_by)

    def _forget_outcome(self) -> None:
        """Drop cached legal actions/outcome (families with caches override)."""


class BoardView:
    """What the board shows, read off ``self.position`` (a Position of ``self.variant``)."""

    # What every family provides (declared here so the helpers below are type-checked).
    position: Position
    variant: Any
    history: list[Action]

    if TYPE_CHECKING:       # pragma: no cover
        def outcome(self) -> Outcome | None: ...
        def legal_actions(self) -> list[Action]: ...
        def parse(self, text: str) -> Action: ...
        def fen(self) -> str: ...
        def checked_royals(self) -> list[int]: ...
        def copy(self) -> Any: ...

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

    def can_drop(self) -> bool:
        """False when no drop can be legal now or after the turn's end: no piece in any hand or
        reserve (families whose pieces come from elsewhere say True). Lets a view skip listing
        the actions when all it wants from them is the drop squares."""
        hands = self.position.hands
        return any(hands[0]) or any(hands[1])

    def next_drops(self) -> list[Action]:
        """The drops the next physical action may be (what the LEDs light as drop and purchase
        squares): the legal drops, or when only silent actions are legal now (a phase that can
        only end), the drops legal after ``end``; empty when the game is over."""
        if not self.can_drop() or self.outcome() is not None:
            return []
        legal = self.legal_actions()
        if legal and all(a.silent for a in legal):
            end = next((a for a in legal if a.kind == ActionKind.END), None)
            if end is None:
                return []
            ahead = self.copy()
            ahead.push(end)
            legal = ahead.legal_actions()
        return [a for a in legal if a.kind == ActionKind.DROP]

    def piece_map(self) -> dict[int, tuple[str, int]]:
        """{square: (letter, colour)} of every piece on the board."""
        pos = self.position
        pieces, board = pos.variant.pieces, pos.board
        return {sq: (pieces[(board[sq] >> 1) - 1].letter, board[sq] & 1) for sq in bits(pos.occ[0] | pos.occ[1])}


_NAMES: dict[int, tuple] = {}      # id(variant) -> (variant, {letter: name}, letters) for the typed view


def _names(variant) -> tuple:
    hit = _NAMES.get(id(variant))
    if hit is None or hit[0] is not variant:
        if len(_NAMES) >= 256:
            _NAMES.clear()
        hit = _NAMES[id(variant)] = (variant, MappingProxyType({p.letter: p.name for p in variant.pieces}),
                                     tuple(p.letter for p in variant.pieces))
    return hit


def _piece_names(variant) -> MappingProxyType:
    """{letter: name} of a variant's pieces (read-only; made once per variant object)."""
    return _names(variant)[1]


def _letters(variant) -> tuple[str, ...]:
    """The variant's piece letters by type index."""
    return _names(variant)[2]


class FamilyGame(Resignable, BoardView):
    """The shared part of every family (:class:`engine.contract.Game`): checked ``push``,
    ``copy``, the ``outcome`` template, SAN disambiguation, the typed :meth:`board_state`,
    the silent verbs, and a ``repr`` that evaluates back.

    A family implements ``_push(action)`` (apply a legal action), ``_decide()`` (the outcome
    when nobody resigned; :meth:`_chess_rules_outcome` is the usual chess ending), its
    ``legal_actions``/``parse``/``pop``/``fen``, and may add to the view through
    :meth:`_view_fields`.
    """

    family = ""
    hand_word = "hand"
    #: silent verb -> what it does in this family (the console's help and refusals)
    SILENT_VERBS: dict[str, str] = {}

    # -- actions -------------------------------------------------------------------------------
    def push(self, action: Action | str) -> Action:
        """Play ``action`` (or the action written so). An action that is not legal now -- stale,
        from another game, made up -- raises IllegalMoveError and changes nothing."""
        action = self._checked(action)
        self._push(action)
        return action

    def _checked(self, action: Action | str) -> Action:
        if isinstance(action, str):
            return self.parse(action)
        if not isinstance(action, Action):
            raise IllegalMoveError(f"{action!r} is not an action")
        legal = self.legal_actions()
        for a in legal:
            if a is action:
                return action
        if action in legal:
            return action
        # actions a family parses but does not list (csipgs designs, inventions, army set-ups)
        if self.outcome() is None:
            try:
                if self.parse(action.text) == action:
                    return action
            except IllegalMoveError:
                pass
        raise IllegalMoveError(f"{action.text!r} is not a legal action now in {self.fen()}")

    def _push(self, action: Action) -> None:
        raise NotImplementedError

    def copy(self):
        """An independent game in the same state (history included: pop works on the copy).
        Caches of legal actions are shared: they are replaced when a game changes, never
        changed in place."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.position = self.position.copy()
        other.history = list(self.history)
        self._copy_into(other)
        return other

    def _copy_into(self, other) -> None:
        """Copy the family's own mutable state into ``other`` (a shallow copy so far)."""

    # -- results ---------------------------------------------------------------------------------
    def outcome(self) -> Outcome | None:
        """The game's outcome: a resignation, else the family's rules (:meth:`_decide`)."""
        if self.resigned is not None:
            return self.resignation()
        return self._decide()

    def _decide(self) -> Outcome | None:
        raise NotImplementedError

    def _chess_rules_outcome(self, us: int, *, royals_lost, has_actions, checked, quiet: int,
                             repeated, decisive_only: bool = False) -> Outcome | None:
        """The chess ending, in order: royal pieces captured, checkmate or stalemate (no legal
        action), the fifty-move rule (``quiet`` half-moves), repetition. ``royals_lost``,
        ``has_actions``, ``checked`` and ``repeated`` are called only when needed;
        ``royals_lost`` returns the colour that lost its royal pieces, or None.
        ``decisive_only``: only a win, loss or stalemate."""
        lost = royals_lost()
        if lost is not None:
            return Outcome.win(lost ^ 1, Termination.ROYALS_CAPTURED)
        v = self.variant
        if not has_actions():
            if checked():
                return Outcome.win(us ^ 1, Termination.CHECKMATE)
            # the side that cannot move is stalemated by the other (a draw, or scored by the variant)
            return Outcome(Termination.STALEMATE, v.stalemate_score(us ^ 1))
        if decisive_only:
            return None
        if v.fifty_moves and quiet >= 2 * v.fifty_moves:
            return Outcome.draw(Termination.FIFTY_MOVES)
        if v.repetitions and repeated():
            return Outcome.draw(Termination.THREEFOLD if v.repetitions == 3 else Termination.REPETITION)
        return None

    # -- notation --------------------------------------------------------------------------------
    def _rivals(self, frm: int, to: int) -> list[int]:
        """The squares of the other pieces of the same kind as the one on ``frm`` that have a
        legal move to ``to`` (SAN's disambiguation). Only a piece that reaches ``to`` at all
        (its pseudo-legal targets) is looked for among the legal actions."""
        pos = self.position
        others = pos.pbb[pos.board[frm]] & ~(1 << frm)
        out = []
        for sq in bits(others):
            quiet, caps = pos.targets_of(sq)
            if not (quiet | caps) >> to & 1:
                continue
            want = sq | to << 8
            if any(a.code >= 0 and a.code & 0xFFFF == want and (a.code >> 24) not in (DROP, CASTLE)
                   for a in self.legal_actions()):
                out.append(sq)
        return out

    def _disambiguation(self, frm: int, others: list[int]) -> str:
        """What SAN adds after the piece letter when pieces of the same kind on ``others``
        could go to the same square: the file, else the rank, else the whole square."""
        if not others:
            return ""
        g = self.geometry
        if g.file_of(frm) not in {g.file_of(o) for o in others}:
            return g.name(frm)[0]
        if g.rank_of(frm) not in {g.rank_of(o) for o in others}:
            return g.name(frm)[1:]
        return g.name(frm)

    # -- the commands a player types that the board cannot see --------------------------------------
    def silent_verbs(self) -> dict[str, str]:
        """The silent verbs this family knows (``pass``, ``end``, ``buy`` ...), each with what
        it does here."""
        return dict(self.SILENT_VERBS)

    def why_not(self, verb: str) -> str:
        """Why ``verb`` cannot be played now: '' when it can, or when the family's parser says
        it better (it names the rule); else a reason a player can act on."""
        verb = verb.lower()
        kind = next((k for k in ActionKind if k.value == verb), None)
        if kind is not None and any(a.kind is kind for a in self.legal_actions()):
            return ""
        out = self.outcome()
        if out is not None:
            return f"the game is over ({out.result}, {out.reason})"
        known = self.silent_verbs()
        if verb not in known:
            if verb in ("buy", "design", "invent", "setup"):
                return "purchases, designs and armies are csipgs rules"
            if verb == "pass":
                return "passing is not allowed in this game"
            if verb == "end":
                return "only a multi-move turn ends with end"
            return f"{verb} is not a command of this game"
        return self._why_not_now(verb)

    def _why_not_now(self, verb: str) -> str:
        """A known silent verb that is not legal now: why (families override)."""
        return ""

    def why_refused(self, lifted: frozenset[int], placed: frozenset[int]) -> str:
        """Why no legal action leaves the board as it is, when the family can name the rule a
        player has just met (a piece emptied from ``lifted``, set down on ``placed``): '' when
        it cannot. One piece moved (or only lifted) is :meth:`why_move_refused`, one set down
        from off the board :meth:`why_drop_refused`, a king moved two files with a rook beside
        it a castling; the board says it next to how to fix the board."""
        if len(lifted) == 1 and len(placed) <= 1:
            return self.why_move_refused(next(iter(lifted)), next(iter(placed), None))
        if not lifted and len(placed) == 1:
            return self.why_drop_refused(next(iter(placed)))
        if len(lifted) == 2 and len(placed) == 2:
            # castling: the king's move names it
            pos = self.position
            g = self.geometry
            for k in lifted:
                code = pos.board[k]
                if code and pos.variant.pieces[(code >> 1) - 1].castles:
                    for to in placed:
                        if g.rank_of(to) == g.rank_of(k) and abs(g.file_of(to) - g.file_of(k)) == 2:
                            return self.why_move_refused(k, to)
        return ""

    def why_move_refused(self, frm: int, to: int | None) -> str:
        """Why the piece on ``frm`` may not go to ``to`` now (``to`` None: why it may not be
        lifted, having no legal move), naming the piece, the squares and the rule: the game is
        over, no piece there, the other side's turn, the family's own rules
        (:meth:`_family_move_refusal`), a piece of its own side there, castling not allowed now,
        a move the piece does not have (its moves in words and Betza) or a way blocked, a royal
        piece left in check. '' when the move is legal (or the piece has legal moves)."""
        g = self.geometry
        out = self.outcome()
        if out is not None:
            return f"the game is over ({out.result}, {out.reason})"
        pos = self.position
        if not pos.board[frm]:
            return f"there is no piece on {g.name(frm)}"
        if to == frm:
            return ""
        mine = [a for a in self.legal_actions() if frm in a.lifts and frm not in a.places
                and a.kind != ActionKind.DROP]
        if to is not None and any(to in a.places for a in mine):
            return ""
        who = refusals.piece_words(pos, frm)[0]
        color = pos.board[frm] & 1
        if color != self.turn:
            return f"the {who} on {g.name(frm)} cannot move now: it is {COLOUR_NAMES[self.turn]}'s turn"
        if to is None:
            return "" if mine else (self._family_move_refusal(frm, None) or self._no_move_refusal(frm))
        if pos.board[to] and pos.board[to] & 1 == color:
            return (f"the {who} on {g.name(frm)} cannot go to {g.name(to)}: "
                    f"the {refusals.piece_words(pos, to)[0]} stands there")
        why = (refusals.castling_refusal(pos, color, frm, to) or refusals.geometry_refusal(pos, frm, to)
               or self._family_move_refusal(frm, to))
        if why:
            return why
        why = refusals.check_refusal(pos, color, frm, to, self._guarded_royals(color))
        return why or f"the {who} on {g.name(frm)} cannot go to {g.name(to)} now"

    def _no_move_refusal(self, frm: int) -> str:
        """Why the piece on ``frm`` (of the side to move) has no legal move: none of its own
        (its moves in words), or each would leave a royal piece in check."""
        pos = self.position
        g = self.geometry
        who, name, betza = refusals.piece_words(pos, frm)
        quiet, caps = pos.targets_of(frm)
        here = f"the {who} on {g.name(frm)} has no legal move"
        if not quiet | caps:
            return f"{here}: {refusals.moves_in_words(name, betza)}"
        for to in bits(quiet | caps):
            why = refusals.check_refusal(pos, pos.board[frm] & 1, frm, to, self._guarded_royals(pos.board[frm] & 1))
            if why:
                rest = why.split(": ", 1)[1]
                if rest.startswith("it would "):
                    rest = f"any move (to {g.name(to)}, for one) would " + rest[len("it would "):]
                return f"{here}: {rest}"
        return here

    def _family_move_refusal(self, frm: int, to: int | None) -> str:
        """A family's own reason why the piece on ``frm`` (of the side to move) may not go to
        ``to`` (None: may not move at all) now: movement points, a phase... ('' for none)."""
        return ""

    def _guarded_royals(self, color: int) -> list[int]:
        """The royal squares of ``color`` that a move must not leave attacked."""
        return self.position._protected(color)

    def why_drop_refused(self, to: int) -> str:
        """Why a piece set down on the empty square ``to`` from off the board is no legal drop
        of the side to move ('' when one is)."""
        g = self.geometry
        out = self.outcome()
        if out is not None:
            return f"the game is over ({out.result}, {out.reason})"
        if any(to in a.places for a in self.legal_actions() if a.kind == ActionKind.DROP):
            return ""
        pos = self.position
        us = self.turn
        if not any(pos.hands[us]):
            if not any(pos.hands[0]) and not any(pos.hands[1]):
                return f"a piece was set down on {g.name(to)} from off the board: this game has no drops"
            return f"a piece was set down on {g.name(to)}: {COLOUR_NAMES[us]} has no piece in hand to drop"
        if self.position.in_check():
            return f"a drop on {g.name(to)} does not stop the check"
        return f"no piece in {COLOUR_NAMES[us]}'s hand may be dropped on {g.name(to)}"

    # -- the typed view ------------------------------------------------------------------------------
    def board_state(self) -> BoardState:
        """What the board shows, typed (see :class:`engine.contract.BoardState`)."""
        out = self.outcome()
        drops, purchase, bought = self._drop_fields(out)
        pos = self.position
        v = pos.variant
        occupancy = pos.occ[0] | pos.occ[1]
        royals = tuple(sorted((sq, c) for c in (WHITE, BLACK) for sq in pos.royal_squares(c)))
        last = next((a for a in reversed(self.history) if not a.silent), None)
        fields = dict(
            family=self.family, turn=self.turn, occupancy=occupancy,
            pieces=PieceMap(pos.board[:], occupancy, _letters(v)), move_number=pos.fullmove, hand_word=self.hand_word,
            drop_squares=drops, purchase_squares=purchase, bought=bought,
            checked=tuple(self.checked_royals()), royals=royals,
            last=frozenset(last.lifts | last.places) if last else frozenset(), outcome=out,
            piece_names=_piece_names(v))
        fields.update(self._view_fields())
        return BoardState.of(fields)

    def _view_fields(self) -> dict:
        """The family's own fields of the view (hands, treasuries, points ...)."""
        return {}

    def _drop_fields(self, out: Outcome | None) -> tuple[frozenset[int], frozenset[int], str | None]:
        """The view's ``drop_squares``, ``purchase_squares`` and ``bought`` (``out``: the
        outcome, None while the game goes on)."""
        legal = self._drops_now() if out is None and self.can_drop() else ()
        drops = frozenset(sq for a in legal for sq in a.places)
        bought = self._bought(legal)
        purchase = frozenset(sq for a in legal if a.piece.lower() == bought
                             for sq in a.places) if bought else frozenset()
        return drops, purchase, bought

    def next_drop_squares(self) -> frozenset[int]:
        """The squares of :meth:`next_drops` (families that know them without listing the
        actions say so: the LEDs light them before the actions are listed)."""
        return frozenset(sq for a in self.next_drops() for sq in a.places)

    def _drops_now(self) -> list[Action]:
        """The legal drops (families that know there are none now without listing every
        action say so)."""
        return [a for a in self.legal_actions() if a.kind == ActionKind.DROP]

    def _bought(self, legal) -> str | None:
        """The letter of the piece bought last this turn, when one of the drops ``legal`` sets
        it down."""
        return None

    def describe(self) -> dict:
        """The JSON form of :meth:`board_state` plus the family's own details."""
        return {}

    # -- repr ----------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        """``ChessGame(Variant(...), 'FEN')``: evaluates back (with the engine's names in scope)
        to a game in the same position (the history is not part of it)."""
        return f"{type(self).__name__}({self.variant!r}, {self.fen()!r}{self._repr_extra()})"

    def _repr_extra(self) -> str:
        return ""


class ChessGame(FamilyGame):
    """A chess-family game: orthodox chess, Tomorrow's Chess and any Betza army."""

    family = "chess"

    def __init__(self, variant, fen: str | None = None):
        self.variant = variant
        self.position = Position.from_fen(variant, fen)
        self.start_fen = self.position.fen(ep="always")
        self.history: list[Action] = []
        self._keys: list = [self._key()]
        self._legal_cache: list[Action] | None = None
        self._outcome_cache: tuple | None = None
        self._actions: dict[int, Action] = {}   # see action_of
        self._check_probe: tuple | None = None  # (state's key, move, replies?) of SAN's last check test
        self.resigned: int | None = None

    def _copy_into(self, other) -> None:
        other._keys = list(self._keys)

    # -- state -----------------------------------------------------------------------------
    def fen(self) -> str:
        return self.position.fen()

    def checked_royals(self) -> list[int]:
        pos = self.position
        out: list[int] = []
        for color in (WHITE, BLACK):
            protected = pos._protected(color)
            out.extend(sq for sq in protected if pos.attacked(sq, color ^ 1))
        return sorted(out)

    def in_check(self) -> bool:
        return self.position.in_check()

    def describe(self) -> dict:
        return {}

    def _view_fields(self) -> dict:
        hands = self.position.hands
        if not any(hands[0]) and not any(hands[1]):
            return {}
        pieces = self.variant.pieces
        return {"hands": tuple(MappingProxyType({pieces[t].letter: n for t, n in enumerate(hands[c]) if n})
                               for c in (WHITE, BLACK))}

    def _key(self) -> tuple:
        """What repetition compares: placement, hands, side to move, castling, e.p. (when a
        pawn could take) -- the first four fields of the FEN, as a tuple."""
        return self.position.key()

    # -- actions ---------------------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        if self._legal_cache is None:
            if self.outcome() is not None:
                self._legal_cache = []
            else:
                action_of = self.action_of
                self._legal_cache = [action_of(m) for m in self.position.legal_moves()]
        return self._legal_cache

    def action_of(self, m: int) -> Action:
        """The Action of an int move in the current position. An Action depends only on the
        move, the piece that moves and whether a piece stands on the target, so each is made
        once and kept (Actions are immutable): listing a position's actions is then mostly
        dictionary lookups."""
        key = self._action_key(m)
        a = self._actions.get(key)
        if a is None:
            if len(self._actions) >= 20000:
                self._actions.clear()
            a = self._actions[key] = self._make_action(m)
        return a

    def _action_key(self, m: int) -> int:
        """The move, the code of the piece that moves, whether the target holds a piece."""
        board = self.position.board
        return m | board[m & 0xFF] << 32 | (1 << 40 if board[(m >> 8) & 0xFF] else 0)

    def _make_action(self, m: int) -> Action:
        pos = self.position
        v = self.variant
        frm, to, extra, flag = decode(m)
        text = to_uci(m, v)
        if flag == DROP:
            letter = v.pieces[frm].letter
            return Action(text, ActionKind.DROP, frozenset(), frozenset({to}), m, letter, drop=letter)
        letter = v.pieces[(pos.board[frm] >> 1) - 1].letter
        if flag == CASTLE:
            rook = extra - 1
            rto = frm + (1 if to > frm else -1)
            return Action(text, ActionKind.CASTLE, frozenset({frm, rook}), frozenset({to, rto}), m, letter)
        if flag == EN_PASSANT:
            victim = to - pos._forward[pos.turn]
            return Action(text, ActionKind.EN_PASSANT, frozenset({frm, victim}), frozenset({to}), m, letter)
        captured = bool(pos.board[to])
        lifts = frozenset({frm, to}) if captured else frozenset({frm})
        if extra:
            return Action(text, PROMOTION, lifts, frozenset({to}), m, letter, promotion=v.pieces[extra - 1].letter)
        return Action(text, CAPTURE if captured else MOVE, lifts, frozenset({to}), m, letter)

    def parse(self, text: str) -> Action:
        """The legal action written ``text`` (coordinate notation or SAN)."""
        found = find_action(self.legal_actions(), text, self.san)
        if found is not None:
            return found
        out = self.outcome()
        if out is not None:
            raise IllegalMoveError(f"{text!r}: the game is over ({out.reason})")
        raise IllegalMoveError(f"{text!r} is not a legal move in {self.fen()}")

    def _push(self, action: Action) -> None:
        self.position.push(action.code)
        self.history.append(action)
        self._keys.append(self._key())
        self._legal_cache = None
        self._outcome_cache = None

    def pop(self) -> Action:
        if not self.history:
            raise IllegalMoveError("no move to take back")
        self.position.pop()
        self._keys.pop()
        self._legal_cache = None
        self._outcome_cache = None
        self.resigned = None
        return self.history.pop()

    def _forget_outcome(self) -> None:
        self._legal_cache = None
        self._outcome_cache = None

    # -- results ---------------------------------------------------------------------------
    def _decide(self) -> Outcome | None:
        """The chess ending (cached until the game changes: the board, the LEDs and the
        reconciler all ask after each commit)."""
        c = self._outcome_cache
        if c is None:
            c = self._outcome_cache = (self._decide_now(),)
        return c[0]

    def _decide_now(self) -> Outcome | None:
        pos = self.position
        v = self.variant
        us = pos.turn
        has_actions: Callable[[], bool] = pos.has_legal_move
        probe = self._check_probe
        if probe is not None and len(self._keys) > 1 and self._keys[-2] is probe[0] \
                and self.history and self.history[-1].code == probe[1]:
            replies = probe[2]          # SAN named this move from the state before: it found the replies
            has_actions = lambda: replies   # noqa: E731
        return self._chess_rules_outcome(
            us, royals_lost=lambda: us if not pos.royal_squares(us) and any(p.royal for p in v.pieces) else None,
            has_actions=has_actions, checked=pos.in_check, quiet=pos.halfmove,
            repeated=lambda: self._keys.count(self._keys[-1]) >= v.repetitions)

    # -- notation --------------------------------------------------------------------------
    def san(self, action: Action) -> str:
        """Readable notation with the variant's letters: Nf3, exd5, Lxc4, e8=Q, O-O, N@e4."""
        m = action.code
        if m < 0:
            return action.text
        text = self._san_plain(action)
        pos = self.position
        pos.push(m)
        try:
            if pos.in_check():
                replies = pos.has_legal_move()
                text += "+" if replies else "#"
                # the commit that follows a move's name asks the same of the same position
                self._check_probe = (self._keys[-1], m, replies)
        finally:
            pos.pop()
        return text

    def _san_plain(self, action: Action) -> str:
        """SAN without the check suffix (the action is a move or a drop, ``code >= 0``)."""
        v, g, pos = self.variant, self.geometry, self.position
        m = action.code
        frm, to, extra, flag = decode(m)
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
                text = (piece.letter.upper() + self._disambiguation(frm, self._rivals(frm, to))
                        + ("x" if capture else "") + g.name(to))
        return text

    def move_value(self, action: Action) -> Move:
        return Move.from_int(action.code)
