"""The contract between the rule families and everything that plays them.

Every family (chess, csipgs, chego, cost-progressive) implements :class:`Game`; the board
driver, the CLI, the web page and the computer players use only what is written here:

* :class:`ActionKind`, :class:`Termination` -- the closed sets of action kinds and of ways a
  game ends (string enums: ``ActionKind.DROP == "drop"``, ``str(Termination.CHECKMATE)`` is
  ``"checkmate"``, and both serialise to JSON as their text);
* :class:`BoardState` -- one typed view of what the board shows (:meth:`Game.board_state`);
  ``describe()`` is its JSON form with the family's extra details;
* :class:`Game` -- the methods a family provides (a :class:`typing.Protocol`).

Standard library only, like the rest of the engine.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from enum import Enum
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:       # pragma: no cover
    from .game import Action, Outcome
    from .geometry import Geometry
    from .variant import Variant


class TextEnum(str, Enum):
    """A string enum that prints, formats and compares as its text."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class ActionKind(TextEnum):
    """What an :class:`~engine.game.Action` does."""

    MOVE = "move"                   # a piece moves to an empty square
    CAPTURE = "capture"             # a piece moves onto an enemy piece (csipgs: a double move that captures)
    CASTLE = "castle"
    EN_PASSANT = "en-passant"
    PROMOTION = "promotion"         # a pawn move that promotes (capturing or not)
    DROP = "drop"                   # a piece from hand or reserve is set on the board
    PASS = "pass"
    END = "end"                     # ends a multi-move turn (cost-progressive) or a design phase (csipgs)
    BUY = "buy"                     # csipgs: a purchase into the reserve
    DESIGN = "design"               # csipgs: a design slot gets a new piece
    INVENT = "invent"               # csipgs: a new atom or modifier is priced
    SETUP = "setup"                 # Army csipgs: an army is recorded

    @property
    def silent(self) -> bool:
        """True for the kinds that never move a piece (the board cannot see them)."""
        return self in _SILENT_KINDS


_SILENT_KINDS = frozenset({ActionKind.PASS, ActionKind.END, ActionKind.BUY, ActionKind.DESIGN,
                           ActionKind.INVENT})


class Termination(TextEnum):
    """How a game ended (:attr:`~engine.game.Outcome.termination`; the outcome's reason text
    and the PGN's closing comment are this text, or its detail's)."""

    CHECKMATE = "checkmate"
    STALEMATE = "stalemate"
    ROYALS_CAPTURED = "royal pieces captured"
    FIFTY_MOVES = "fifty-move rule"
    THREEFOLD = "threefold repetition"
    REPETITION = "repetition"                   # a variant's n-fold repetition other than three
    RESIGNATION = "resignation"
    AGREEMENT = "agreement"                     # a draw both players agreed to (a draw offer accepted)
    TIME_FORFEIT = "time forfeit"               # a flag fell (a win, or a draw: see engine.timeout)
    TERRITORY = "territory"                     # Chego: both players passed, points counted
    NO_ROYAL_IN_ARMY = "no royal piece in army"  # Army csipgs: an army was set up without one
    ADJUDICATED = "adjudicated"                 # a match ended a game that went on too long
    OTHER = "other"                             # any other reason (a match's forfeit ...)


def _frozen_map(m: Mapping | None) -> Mapping:
    return MappingProxyType(dict(m or {}))


_NO_HANDS: tuple[Mapping[str, int | None], Mapping[str, int | None]] = (MappingProxyType({}), MappingProxyType({}))


@dataclass(frozen=True)
class BoardState:
    """What the board shows, typed: one value per position, for the console, the LEDs, the web
    page, the computer players and ``--json`` alike. Squares are ints of the variant's
    geometry (``game.geometry.name(sq)`` names them), colours are 0 (White) and 1 (Black),
    pieces are the variant's letters (lower case; ``piece_names`` gives their names).

    Every family fills the fields that apply to it and leaves the others at their empty
    default (``None``, empty mappings and sets)::

        st = game.board_state()
        st.turn, st.pieces[sq], st.hands[WHITE].get("n", 0), st.drop_squares

    Fields:

    * ``family``, ``turn`` (the side to act), ``phase`` (csipgs: ``"setup"``, ``"action"``
      or ``"design"``; None elsewhere), ``move_number`` (the FEN's full-move number);
    * ``occupancy`` (bitboard), ``pieces`` ({square: (letter, colour)});
    * ``hands`` -- per colour, {letter: count} of the pieces off the board the player may
      bring in: the csipgs *reserve*, the Chego *hand* (count None: unlimited), the
      chess-with-drops hand; ``hand_word`` says what the family calls it ("reserve" or
      "hand");
    * ``treasuries`` -- csipgs: (White's, Black's) zorkmids as Fractions; None elsewhere;
    * ``points`` -- Chego: (White's, Black's) points if the game ended now; None elsewhere;
    * ``points_left`` / ``turn_budget`` -- cost-progressive: movement points left in the
      turn under way, and the turn's budget; None elsewhere;
    * ``passes`` -- Chego: passes in a row since the last drop; None elsewhere;
    * ``territory`` -- Chego: (squares White controls, squares Black controls), empty
      squares only; None elsewhere;
    * ``drop_squares`` -- squares the side to act may drop a piece on now;
      ``purchase_squares`` -- those of the piece bought last this turn (csipgs), and
      ``bought`` its letter (or None);
    * ``checked`` -- squares of royal pieces in check; ``royals`` -- (square, colour) of
      every royal piece; ``last`` -- squares of the last action that moved pieces;
    * ``outcome`` -- the :class:`~engine.game.Outcome`, or None while the game goes on;
    * ``piece_names`` -- {letter: the piece's name (csipgs: its design text)}.

    ``describe()`` is the JSON form: the same facts with square names and decimal strings,
    plus details only that family has (the contract test checks they agree).
    """

    family: str
    turn: int
    occupancy: int
    pieces: Mapping[int, tuple[str, int]]
    phase: str | None = None
    move_number: int = 1
    hands: tuple[Mapping[str, int | None], Mapping[str, int | None]] = _NO_HANDS
    hand_word: str = "hand"
    treasuries: tuple[Fraction, Fraction] | None = None
    points: tuple[int, int] | None = None
    points_left: int | None = None
    turn_budget: int | None = None
    passes: int | None = None
    territory: tuple[frozenset[int], frozenset[int]] | None = None
    drop_squares: frozenset[int] = frozenset()
    purchase_squares: frozenset[int] = frozenset()
    bought: str | None = None
    checked: tuple[int, ...] = ()
    royals: tuple[tuple[int, int], ...] = ()
    last: frozenset[int] = frozenset()
    outcome: Outcome | None = None
    piece_names: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(cls, fields: dict) -> BoardState:
        """The view with ``fields`` (names of this class's fields; the rest keep their
        defaults), made without the frozen dataclass's per-field setter calls: a commit's
        LED frame waits for it."""
        st = object.__new__(cls)
        d = st.__dict__
        d.update(_VIEW_DEFAULTS)
        d.update(fields)
        return st


class PieceMap(Mapping):
    """{square: (letter, colour)} of a board, read-only and worked out on first use from a
    snapshot of the board (piece codes as :class:`~engine.position.Position` keeps them)."""

    __slots__ = ("_board", "_occupancy", "_letters", "_map")

    def __init__(self, board: list[int], occupancy: int, letters: Sequence[str]):
        self._board = board             # a copy: the position goes on changing
        self._occupancy = occupancy
        self._letters = letters         # by type index
        self._map: dict | None = None

    def _items(self) -> dict:
        m = self._map
        if m is None:
            board, letters, occ = self._board, self._letters, self._occupancy
            m = {}
            while occ:
                low = occ & -occ
                sq = low.bit_length() - 1
                occ ^= low
                code = board[sq]
                m[sq] = (letters[(code >> 1) - 1], code & 1)
            self._map = m
        return m

    def __getitem__(self, sq: int) -> tuple[str, int]:
        return self._items()[sq]

    def __iter__(self):
        return iter(self._items())

    def __len__(self) -> int:
        return self._occupancy.bit_count()

    def __repr__(self) -> str:
        return f"PieceMap({self._items()!r})"


_VIEW_DEFAULTS = {f.name: (f.default if f.default_factory is MISSING else f.default_factory())
                  for f in fields(BoardState)}


@runtime_checkable
class Game(Protocol):
    """What every rules family provides (see :mod:`engine.game` for the shared base class,
    :class:`~engine.game.FamilyGame`, that gives most of it)."""

    family: str
    variant: Variant
    resigned: int | None        # the side that resigned or lost on time (resign()), else None
    history: list

    @property
    def turn(self) -> int: ...
    @property
    def geometry(self) -> Geometry: ...

    def legal_actions(self) -> Sequence[Action]:
        """Every legal action now (empty when the game is over)."""
        ...

    def parse(self, text: str) -> Action:
        """The legal action written ``text``; IllegalMoveError says why not."""
        ...

    def push(self, action: Action | str) -> Action:
        """Play a legal action. An action that is not legal now (stale, from another game, or
        made up) raises IllegalMoveError and changes nothing."""
        ...

    def pop(self) -> Action:
        """Take back the last action (and a resignation after it)."""
        ...

    def copy(self) -> Game:
        """An independent game in the same state, history included (pop works on it)."""
        ...

    def outcome(self) -> Outcome | None: ...
    def fen(self) -> str: ...
    def san(self, action: Action) -> str: ...
    def occupancy(self) -> int: ...
    def piece_map(self) -> dict[int, tuple[str, int]]: ...
    def can_drop(self) -> bool: ...
    def next_drops(self) -> Sequence[Action]: ...
    def next_drop_squares(self) -> frozenset[int]:
        """The squares of :meth:`next_drops` (lit before the actions are listed)."""
        ...
    def checked_royals(self) -> list[int]: ...
    def in_check(self) -> bool: ...
    def board_state(self) -> BoardState: ...
    def describe(self) -> dict: ...
    def silent_verbs(self) -> Mapping[str, str]:
        """The silent verbs (``pass``, ``end``, ``buy`` ...) this family knows, each with what
        it does here."""
        ...

    def why_not(self, verb: str) -> str:
        """Why ``verb`` cannot be played now ('' when it can, or when the family has no
        better reason than the parser's)."""
        ...

    def why_refused(self, lifted: frozenset[int], placed: frozenset[int]) -> str:
        """Why no legal action leaves the board so ('' when the family cannot say)."""
        ...

    def why_move_refused(self, frm: int, to: int | None) -> str:
        """Why the piece on ``frm`` may not go to ``to`` now (None: may not be lifted, having
        no legal move), naming the piece, the squares and the rule; '' when it may."""
        ...

    def why_drop_refused(self, to: int) -> str:
        """Why a piece set down on the empty square ``to`` from off the board is no legal drop
        now; '' when one is."""
        ...

    def resign(self, color: int, reason: Termination = Termination.RESIGNATION, *, draw: bool = False) -> None: ...
    def unresign(self) -> None: ...


__all__ = ["ActionKind", "BoardState", "Game", "Termination", "TextEnum"]
