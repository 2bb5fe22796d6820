"""Cost Progressive Chess: several moves a turn, paid from movement points.

The rules (``cost-progressive-chess.txt``): each turn a player receives movement points
(turn n: n points to each side; or the Fibonacci schedule White 1, Black 1, White 2, Black 3,
White 5, Black 8, ...; or any schedule a variant gives) and spends them on moves, each move
costing the moving piece's price (standard table P1 N3 B3 R5 Q9 K2, simple table P1 N2 B3 R4
Q5 K1, or any table). Points do not carry over and need not all be spent; a check ends the
turn and forfeits the rest; a player in check must remove it with the first move of his turn.

A variant of the family says in its YAML ``rules:``::

    rules:
      budget: turn-number    # or fibonacci, or N (every turn), or [1, 2, 4, ...] (turn by
                             # turn, both sides; the last entry repeats), or
                             # {white: [...], black: [...]}
      costs: standard        # or simple, or fairy (standard + every catalog piece), or a
                             # mapping piece -> cost with an optional base `table:`; a cost
                             # may be `csipgs` to price the piece by the csipgs formula

Readings of the details the text leaves open (also in the variants' ``notes:`` and in
``docs/cost-progressive.md``):

* **A piece moves at most once a turn.** The text's tables count piece kinds as a player's
  army holds them: turn 4 lists (2p+K) but not (2K) and turn 5 not (p+2K), though both
  cost exactly the budget. A piece that moved this turn (a castling rook too, a promoted
  pawn's new piece too) stays where it is until the turn ends. This also keeps a turn
  finite when the Fibonacci budgets grow large.
* **A turn has at least one move.** ``end`` is legal only after a move. A move a player cannot
  pay for is not a move he can make ("which pieces can make those moves depend on ... the
  cost"), so at the start of a turn a player with no affordable legal move is checkmated
  when in check (a check he cannot afford to meet is mate too) and stalemated otherwise
  (scored as the variant's ``stalemate:`` says).
* **The turn ends by itself** after a move that checks (the rest of the points are lost), or
  when no affordable legal move is left (points spent, or every piece that could still be
  paid for has moved or is stuck); otherwise the player ends it with ``end``.
* **Checkmate and stalemate** are judged when a turn begins, never in the middle of one: a
  player may pass through a position that would stalemate his opponent and go on moving.
* **En passant** as in progressive chess: a pawn's double step can be taken en passant only
  when it was the last move of its side's turn, and only by the first move of the next turn.
* **Castling** is a king move and costs the king's price; the rook moved with it and stays
  put for the rest of the turn. It needs the usual conditions at the moment it is played.
* **Counting**: the fifty-move rule counts turns (50 turns of each side without a capture or
  a pawn move, so FEN's halfmove field counts half-turns); repetition compares the
  positions at the start of turns (board, side, castling, en passant); FEN's fullmove field is
  the turn number, which sets the budget. A FEN in the middle of a turn shows the board and
  the side still moving; the points spent are in :meth:`describe`.

The csipgs cost formula (``csipgs-chess.txt``: atoms times modifiers, colourbound 0.9,
payments rounded up) is offered to price a fairy piece: :func:`csipgs_cost`. It gives the
orthodox N3 B3 R5 Q9 of the standard table (and the overview's own figures: fcFfmW 2,
royal-WF 12), but P2 and K3 where the tables use 1 and 2, so it is a way to price a fairy
piece, not the tables' source. The royal modifier is left out: a movement cost prices how a
piece moves.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from math import ceil
from types import MappingProxyType
from typing import Mapping

from .betza import parse_betza
from .csipgs_cost import DesignError, cost_of, split_terms
from .errors import BetzaError, IllegalMoveError, VariantError
from .contract import ActionKind, Termination
from .game import COLOUR_NAMES, Action, ChessGame, MoveCost, Outcome, find_action
from .moves import DROP
from .position import BLACK, WHITE

# -- cost tables --------------------------------------------------------------------------

STANDARD_COSTS: Mapping[str, int] = MappingProxyType(
    {"pawn": 1, "knight": 3, "bishop": 3, "rook": 5, "queen": 9, "king": 2})
SIMPLE_COSTS: Mapping[str, int] = MappingProxyType(
    {"pawn": 1, "knight": 2, "bishop": 3, "rook": 4, "queen": 5, "king": 1})
# Every other piece of the catalog, for "Perfect" Cost Progressive Chess with Tomorrow's Chess
# armies. By the csipgs formula (rounded up) where it prices the piece; otherwise by analogy.
FAIRY_COSTS: Mapping[str, int] = MappingProxyType({
    "camel": 3,             # csipgs: L 3.3 x colourbound 0.9 = 2.97
    "giraffe": 3,           # csipgs extended: an eight-target oblique leaper, colour-changing, as N = 3
    "princess": 7,          # B 3.3 + N 3 = 6.3
    "empress": 8,           # R 5 + N 3
    "amazon": 12,           # R 5 + B 3.3 + N 3 = 11.3
    "camel-empress": 9,     # R 5 + L 3.3 = 8.3
    "giraffe-empress": 8,   # R 5 + (1,4) 3
    "giraffe-princess": 7,  # B 3.3 + (1,4) 3 = 6.3
    "tiger": 4,             # mB 0.6 x 3.3 + cN 0.6 x 3 = 3.78
    "man": 2,               # moves as the king, costs as the king (csipgs: WF = 3)
    "fers": 2,              # F 1.5 x colourbound 0.9 = 1.35
    "alfil": 2,             # A 1.5 x colourbound 0.9 = 1.35
    "wazir": 2,             # W 1.5
    "sneak": 2,             # W 1.5
    "courier": 3,           # a bishop: B 3.3 x 0.9 = 2.97
    "cannon": 5,            # no csipgs price for hoppers: moves along the rook's lines, costs as one
    "griffin": 7,           # no csipgs price for bent riders: between rook and queen
    "aanca": 7,             # the griffin's twin (W then B)
})
COST_TABLES: Mapping[str, Mapping[str, int]] = MappingProxyType({
    "standard": STANDARD_COSTS,
    "simple": SIMPLE_COSTS,
    "fairy": MappingProxyType({**STANDARD_COSTS, **FAIRY_COSTS}),
})

# -- the csipgs formula -------------------------------------------------------------------

def csipgs_value(betza: str, *, royal: bool = False) -> Fraction:
    """The unrounded csipgs price of a piece written in Betza notation, by the csipgs module's
    formula (engine/csipgs_cost.py: atoms times modifiers, colourbound 0.9, royal 4). Moves
    only from the initial rank (a pawn's double step) are left out, as csipgs pawns have none.
    Raises VariantError naming the piece for what the formula cannot price (hoppers, bent or
    limited riders, lame leapers, atoms it does not know such as the giraffe's (1,4))."""
    try:
        terms = [t for t, _ in split_terms(betza) if not parse_betza(t).components[0].initial]
        if not terms:
            raise VariantError(f"csipgs price of {betza!r}: the piece has no move to price")
        return cost_of(("royal-" if royal else "") + "".join(terms)).exact
    except (BetzaError, DesignError) as exc:
        raise VariantError(f"csipgs price of {betza!r}: {exc}; give the piece's cost explicitly") from None


def csipgs_cost(betza: str, *, royal: bool = False) -> int:
    """The csipgs price rounded up to whole points, as csipgs payments are."""
    return ceil(csipgs_value(betza, royal=royal))


# -- budget schedules ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Schedule:
    """Movement points per turn. ``half_turn`` counts the turns of either side from 1
    (White's first turn 1, Black's first 2, White's second 3, ...)."""

    kind: str                       # "turn-number" | "fibonacci" | "list"
    white: tuple[int, ...] = ()     # "list": points of White's turns 1, 2, ... (the last repeats)
    black: tuple[int, ...] = ()

    def budget(self, half_turn: int) -> int:
        if half_turn < 1:
            raise ValueError(f"half-turn {half_turn!r}: turns are counted from 1")
        if self.kind == "turn-number":
            return (half_turn + 1) // 2
        if self.kind == "fibonacci":
            a, b = 1, 1
            for _ in range(half_turn - 1):
                a, b = b, a + b
            return a
        seq = self.white if half_turn % 2 else self.black
        return seq[min((half_turn + 1) // 2, len(seq)) - 1]

    @property
    def text(self) -> str:
        if self.kind != "list":
            return self.kind
        if self.white == self.black:
            return "list " + ",".join(map(str, self.white))
        return f"white {','.join(map(str, self.white))}; black {','.join(map(str, self.black))}"

    @classmethod
    def parse(cls, spec, where: str) -> Schedule:
        if spec is None or spec == "turn-number":
            return cls("turn-number")
        if spec == "fibonacci":
            return cls("fibonacci")
        if isinstance(spec, Mapping):
            bad = set(spec) - {"white", "black"}
            if bad or not spec:
                k = sorted(bad)[0] if bad else "white"
                raise VariantError(f"{where}.{k}: {spec.get(k)!r}: a per-side schedule has the keys "
                                   "white and black")
            w = _points_list(spec.get("white"), f"{where}.white")
            b = _points_list(spec.get("black"), f"{where}.black")
            return cls("list", w, b)
        if isinstance(spec, (int, list)) and not isinstance(spec, bool):
            seq = _points_list(spec, where)
            return cls("list", seq, seq)
        raise VariantError(f"{where}: {spec!r}: use turn-number, fibonacci, a number of points, "
                           "a list of points per turn, or {white: [...], black: [...]}")


def _points_list(spec, where: str) -> tuple[int, ...]:
    seq = [spec] if isinstance(spec, int) and not isinstance(spec, bool) else spec
    if not isinstance(seq, list) or not seq:
        raise VariantError(f"{where}: {spec!r}: give a number of points or a list of them")
    for v in seq:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise VariantError(f"{where}: {v!r}: points per turn must be whole numbers >= 1")
    return tuple(seq)


# -- the family's rules as a value --------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CostRules:
    """A cost-progressive variant's ``rules:``: the move cost of each piece type (by the
    variant's type index) and the budget schedule."""

    costs: tuple[int, ...]
    schedule: Schedule
    table: str = "custom"

    @classmethod
    def from_variant(cls, variant) -> CostRules:
        where = f"variant {variant.name!r}: rules"
        rules = variant.rules
        bad = set(rules) - {"budget", "costs"}
        if bad:
            k = sorted(bad)[0]
            raise VariantError(f"{where}.{k}: {rules[k]!r}: unknown key (known: budget, costs)")
        schedule = Schedule.parse(rules.get("budget"), f"{where}.budget")
        spec = rules.get("costs", "standard")
        table_name = "custom"
        if isinstance(spec, str):
            table_name, spec = spec, {"table": spec}
        if not isinstance(spec, Mapping):
            raise VariantError(f"{where}.costs: {spec!r}: use standard, simple, fairy or a mapping "
                               "piece -> cost")
        by_index: dict[int, int] = {}
        base = spec.get("table")
        if base is not None:
            if base not in COST_TABLES:
                raise VariantError(f"{where}.costs.table: {base!r}: unknown table "
                                   f"(known: {', '.join(COST_TABLES)})")
            for t, p in enumerate(variant.pieces):
                if p.name in COST_TABLES[base]:
                    by_index[t] = COST_TABLES[base][p.name]
            if table_name == "custom" and len(spec) == 1:
                table_name = base
        for key, value in spec.items():
            if key == "table":
                continue
            try:
                t = variant.piece_index(str(key))
            except VariantError:
                raise VariantError(f"{where}.costs.{key}: {value!r}: {variant.name!r} has no such piece "
                                   f"(pieces: {', '.join(p.name for p in variant.pieces)})") from None
            if value == "csipgs":
                value = csipgs_cost(variant.pieces[t].betza)
            elif not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise VariantError(f"{where}.costs.{key}: {value!r}: a move cost is a whole number >= 1 "
                                   "or csipgs")
            by_index[t] = value
        missing = [p.name for t, p in enumerate(variant.pieces) if t not in by_index]
        if missing:
            raise VariantError(f"{where}.costs: no move cost for {', '.join(missing)} "
                               f"(add e.g. '{missing[0]}: 3' or '{missing[0]}: csipgs')")
        return cls(tuple(by_index[t] for t in range(len(variant.pieces))), schedule, table_name)


# -- combinations of piece kinds ----------------------------------------------------------

def combinations(budget: int, costs: Mapping[str, int], counts: Mapping[str, int] | None = None,
                 *, full: bool = True) -> list[dict[str, int]]:
    """The combinations of piece kinds whose moves a turn of ``budget`` points pays for, as
    the rules text tabulates them: a kind appears at most ``counts[kind]`` times (each piece
    moves at most once a turn; no limit when counts is None), the empty combination is left
    out, and with ``full`` only the combinations no further piece can be added to (for an
    orthodox army these are the ones that spend the budget exactly). Kinds keep the order of
    ``costs``; each combination is a dict kind -> number of moves."""
    kinds = list(costs)
    out: list[dict[str, int]] = []

    def limit(k: str) -> int:
        return budget if counts is None else counts.get(k, 0)

    def walk(i: int, left: int, chosen: dict[str, int]) -> None:
        if i == len(kinds):
            if not chosen:
                return
            if full and any(costs[k] <= left and chosen.get(k, 0) < limit(k) for k in kinds):
                return
            out.append(dict(chosen))
            return
        k = kinds[i]
        most = min(limit(k), left // costs[k])
        for n in range(most, -1, -1):
            if n:
                chosen[k] = n
            walk(i + 1, left - n * costs[k], chosen)
            chosen.pop(k, None)

    walk(0, budget, {})
    return out


def format_combination(combo: Mapping[str, int]) -> str:
    """``{"p": 2, "K": 1}`` -> ``(2p+K)``, as the rules text writes them."""
    return "(" + "+".join(k if n == 1 else f"{n}{k}" for k, n in combo.items()) + ")"


def kind_label(piece) -> str:
    """The text's name for a kind of piece: ``p`` for pawns, else the upper-case letter."""
    return "p" if piece.pawn else piece.letter.upper()


# -- the game -----------------------------------------------------------------------------

END = Action("end", ActionKind.END)


@dataclass(frozen=True, slots=True)
class _TurnState:
    half: int                       # half-turn number: White's first turn 1, Black's first 2, ...
    spent: int = 0                  # points spent in this turn
    frozen: int = 0                 # squares of the pieces that moved in this turn
    moves: tuple[Action, ...] = ()  # the moves of this turn
    ended_by: str | None = None     # how the previous turn ended
    quiet: int = 0                  # completed half-turns since a capture or a pawn move
    reset: bool = False             # this turn had a capture or a pawn move


class CostProgressiveGame(ChessGame):
    """A game of Cost Progressive Chess on any chess-family army (see the module docstring)."""

    family = "cost-progressive"
    SILENT_VERBS = {"end": "ends your turn before its movement points run out"}

    def __init__(self, variant, fen: str | None = None):
        self.rules = CostRules.from_variant(variant)
        super().__init__(variant, fen)
        pos = self.position
        self._state = _TurnState(half=2 * (pos.fullmove - 1) + 1 + pos.turn, quiet=pos.halfmove)
        self._undo: list[tuple[_TurnState, int, int]] = []
        self._moves_cache: list[Action] | None = None
        self._costed: dict[int, Action] = {}
        self._probe: tuple | None = None    # (state, action, outcome cache) of SAN's last check probe

    def _copy_into(self, other) -> None:
        super()._copy_into(other)
        other._undo = list(self._undo)

    def _changed(self) -> None:
        """Forget what was worked out for the state before (the lists and the outcome)."""
        self._moves_cache = None
        self._legal_cache = None
        self._outcome_cache = None

    def _why_not_now(self, verb: str) -> str:
        if verb == "end" and not self._state.moves:
            return "no multi-move turn is under way: a turn needs at least one move before it can end"
        return ""

    def _view_fields(self) -> dict:
        return {"points_left": self.points_left, "turn_budget": self.turn_budget}

    # -- turn state ------------------------------------------------------------------------
    @property
    def turn(self) -> int:
        return WHITE if self._state.half % 2 else BLACK

    @property
    def turn_number(self) -> int:
        return (self._state.half + 1) // 2

    @property
    def turn_budget(self) -> int:
        return self.rules.schedule.budget(self._state.half)

    @property
    def points_spent(self) -> int:
        return self._state.spent

    @property
    def points_left(self) -> int:
        return self.turn_budget - self._state.spent

    @property
    def turn_moves(self) -> tuple[Action, ...]:
        return self._state.moves

    def budget_of(self, half_turn: int) -> int:
        return self.rules.schedule.budget(half_turn)

    def cost_of(self, piece: str) -> int:
        """Move cost of a piece type by name or FEN letter."""
        return self.rules.costs[self.variant.piece_index(piece)]

    def _cost(self, m: int) -> int:
        frm = m & 0xFF
        if m >> 24 == DROP:
            return self.rules.costs[frm]
        return self.rules.costs[(self.position.board[frm] >> 1) - 1]

    def army(self, color: int = WHITE) -> dict[str, int]:
        """How many pieces of each kind ``color`` starts with, by :func:`kind_label`, cheapest first."""
        counts: dict[str, int] = {}
        board = self.variant.start_fen.split()[0]
        for t, p in self._kinds_by_cost():
            ch = p.letter.upper() if color == WHITE else p.letter
            n = board.count(ch)
            if n:
                counts[kind_label(p)] = n
        return counts

    def _kinds_by_cost(self):
        pieces = self.variant.pieces
        return sorted(enumerate(pieces), key=lambda tp: (self.rules.costs[tp[0]], tp[0]))

    def combinations(self, budget: int, *, full: bool = True, color: int = WHITE) -> list[dict[str, int]]:
        """The text's table row for a turn of ``budget`` points with this variant's costs and
        army (see :func:`combinations`)."""
        costs = {kind_label(p): self.rules.costs[t] for t, p in self._kinds_by_cost()}
        return combinations(budget, costs, self.army(color), full=full)

    # -- state for the board ---------------------------------------------------------------
    def fen(self) -> str:
        pos = self.position
        mid = bool(self._state.moves)
        if mid:
            pos.null_move()
        try:
            parts = pos.fen().split()
        finally:
            if mid:
                pos.pop()
        parts[4] = str(self._state.quiet)
        parts[5] = str(self.turn_number)
        return " ".join(parts)

    def in_check(self) -> bool:
        pos = self.position
        us = self.turn
        return any(pos.attacked(sq, us ^ 1) for sq in pos._protected(us))

    def describe(self) -> dict:
        st = self._state
        return {
            "side_to_move": "white" if self.turn == WHITE else "black",
            "turn_number": self.turn_number,
            "turn_budget": self.turn_budget,
            "points_spent": st.spent,
            "points_left": self.points_left,
            "turn_moves": [a.text for a in st.moves],
            "turn_over": bool(self.history) and not st.moves,
            "last_turn_ended_by": st.ended_by,
            "budget_schedule": self.rules.schedule.text,
            "move_costs": {p.name: c for p, c in zip(self.variant.pieces, self.rules.costs)},
        }

    # -- actions ---------------------------------------------------------------------------
    def _move_actions(self) -> list[Action]:
        """The affordable legal moves of the side to move, pieces that moved this turn excluded."""
        if self._moves_cache is None:
            self._moves_cache = self._generate(affordable=True)
        return self._moves_cache

    def _generate(self, affordable: bool) -> list[Action]:
        pos = self.position
        st = self._state
        mid = bool(st.moves)
        if mid:
            pos.null_move()
        try:
            left = self.points_left
            out = []
            squares = -1
            if affordable:
                # only the pieces the turn can still move: not yet moved, of a type the
                # points left pay for (drops are priced below)
                us = self.turn
                squares = 0
                for t, cost in enumerate(self.rules.costs):
                    if cost <= left:
                        squares |= pos.pbb[(t + 1) << 1 | us]
                squares &= ~st.frozen
            costed = self._costed
            for m in pos.legal_moves(squares=squares):
                if affordable and m >> 24 == DROP and self._cost(m) > left:
                    continue            # (the moves on the board were chosen by ``squares``)
                # an action's cost follows from its piece, which the action's key holds
                key = self._action_key(m)
                a = costed.get(key)
                if a is None:      # made once and kept, as ChessGame.action_of does
                    if len(costed) >= 20000:
                        costed.clear()
                    a = costed[key] = replace(self.action_of(m), detail=MoveCost(self._cost(m)))
                out.append(a)
            return out
        finally:
            if mid:
                pos.pop()

    def _family_move_refusal(self, frm: int, to: int | None) -> str:
        """The turn's rules: the piece on ``frm`` has moved this turn already, or its move
        costs more movement points than are left (``to`` None: any move of it)."""
        g = self.geometry
        piece = self.variant.pieces[(self.position.board[frm] >> 1) - 1].name.replace("-", " ")
        who = f"the {COLOUR_NAMES[self.turn].lower()} {piece} on {g.name(frm)}"
        here = f"{who} cannot move" if to is None else f"{who} cannot go to {g.name(to)}"
        if self._state.frozen >> frm & 1:
            return f"{here}: it has moved this turn already (a piece moves at most once a turn)"
        cost = self.rules.costs[(self.position.board[frm] >> 1) - 1]
        if cost > self.points_left:
            left = self.points_left
            return (f"{here}: a {piece} move costs {cost} movement point{'s' if cost != 1 else ''}; "
                    f"{left} {'is' if left == 1 else 'are'} left this turn")
        return ""

    def legal_actions(self) -> list[Action]:
        if self.outcome() is not None:
            return []
        actions = list(self._move_actions())
        if self._state.moves:
            actions.append(END)
        return actions

    def parse(self, text: str) -> Action:
        """The legal action written ``text``: ``end``, coordinate notation or SAN."""
        t = text.strip()
        outcome = self.outcome()
        if outcome is not None:
            raise IllegalMoveError(f"{text!r}: the game is over ({outcome.reason})")
        if t.lower() == "end":
            if not self._state.moves:
                raise IllegalMoveError(f"{text!r}: a turn needs at least one move before it can end")
            return END
        found = find_action(self._move_actions(), t, self._san_base)
        if found is not None:
            return found
        low, plain = t.lower(), t.rstrip("+#!?")
        for a in self._generate(affordable=False):
            if a.text.lower() == low or self._san_base(a) == plain:
                frm = a.code & 0xFF
                if self._state.frozen >> frm & 1:
                    raise IllegalMoveError(f"{text!r}: the piece on {self.geometry.name(frm)} has "
                                           "already moved this turn")
                raise IllegalMoveError(f"{text!r} costs {a.detail_as(MoveCost).cost} points, "
                                       f"{self.points_left} left in this turn")
        if self.in_check() and not self._state.moves:
            raise IllegalMoveError(f"{text!r} is not legal in {self.fen()}: the check must be "
                                   "removed by the first move of the turn")
        raise IllegalMoveError(f"{text!r} is not a legal move in {self.fen()}")

    def _push(self, action: Action) -> None:
        st = self._state
        if action.kind == ActionKind.END:
            self._undo.append((st, 0, len(self._keys)))
            self.history.append(action)
            self._close("end")
            return
        pos = self.position
        pushes = 0
        if st.moves:
            pos.null_move()
            pushes += 1
        pos.push(action.code)
        pushes += 1
        self._undo.append((st, pushes, len(self._keys)))
        frozen = st.frozen
        for sq in action.lifts:
            frozen &= ~(1 << sq)
        for sq in action.places:
            frozen |= 1 << sq
        pawn = self.variant.pieces[self.variant.piece_index(action.piece)].pawn
        reset = st.reset or pawn or len(action.lifts) > 1 and action.kind != ActionKind.CASTLE
        self._state = _TurnState(half=st.half, spent=st.spent + action.detail_as(MoveCost).cost, frozen=frozen,
                                 moves=st.moves + (action,), ended_by=st.ended_by, quiet=st.quiet, reset=reset)
        self._changed()
        self.history.append(action)
        if pos.in_check():                       # the opponent (to move in pos) is in check
            self._close("check")
            probe = self._probe
            if probe is not None and probe[0] is st and probe[1] is action:
                self._outcome_cache = probe[2]   # SAN played this very move from this very state
        elif self.points_left < min(self.rules.costs) or not self._can_go_on():
            # (no move costs less than the cheapest piece: nothing to look for when that is out of reach)
            self._close("points" if self.points_left == 0 else "no affordable move")

    def _can_go_on(self) -> bool:
        """Whether the turn has an affordable move left: a piece not yet moved this turn, of a
        type the points left pay for, with a legal move. Asked of the position with the
        pieces' squares, it stops at the first one (the list waits until it is asked for)."""
        if self._moves_cache is not None:
            return bool(self._moves_cache)
        pos = self.position
        us = self.turn
        if any(pos.hands[us]):
            return bool(self._move_actions())        # drops cost by type: the list says
        left = self.points_left
        squares = 0
        for t, cost in enumerate(self.rules.costs):
            if cost <= left:
                squares |= pos.pbb[(t + 1) << 1 | us]
        squares &= ~self._state.frozen
        if not squares:
            return False
        pos.null_move()                 # mid-turn: the mover is to move again in the position
        try:
            return pos.has_legal_move(squares=squares)
        finally:
            pos.pop()

    def _close(self, reason: str) -> None:
        st = self._state
        self._state = _TurnState(half=st.half + 1, ended_by=reason,
                                 quiet=0 if st.reset else st.quiet + 1)
        self._changed()
        self._keys.append(self._key())

    def pop(self) -> Action:
        if not self.history:
            raise IllegalMoveError("no move to take back")
        st, pushes, nkeys = self._undo.pop()
        for _ in range(pushes):
            self.position.pop()
        self._state = st
        del self._keys[nkeys:]
        self._changed()
        self.resigned = None
        return self.history.pop()

    # -- results ---------------------------------------------------------------------------
    def _decide_now(self) -> Outcome | None:
        """(ChessGame._decide caches it until the state changes.)"""
        st = self._state
        if st.moves:
            return None                          # judged when a turn begins, never within one
        v = self.variant
        us = self.turn
        return self._chess_rules_outcome(
            us, royals_lost=lambda: us if not self.position.royal_squares(us) and any(p.royal for p in v.pieces)
            else None, has_actions=self._turn_can_start, checked=self.in_check, quiet=st.quiet,
            repeated=lambda: self._keys.count(self._keys[-1]) >= v.repetitions)

    def _turn_can_start(self) -> bool:
        """Whether the side to move has an affordable first move. When the turn's budget pays
        for any piece, every legal move is affordable and counting them is enough (the list
        waits until it is asked for: a board asks when it is idle)."""
        if self._moves_cache is None and self.turn_budget >= max(self.rules.costs):
            return self.position.has_legal_move()
        return bool(self._move_actions())

    # -- notation --------------------------------------------------------------------------
    def _san_base(self, action: Action) -> str:
        """SAN without the check suffix, for the current mover."""
        if action.kind == ActionKind.END:
            return "end"
        self._move_actions()                      # fill the cache before bracketing
        pos = self.position
        mid = bool(self._state.moves)
        if mid:
            pos.null_move()
        try:
            return self._san_plain(action)
        finally:
            if mid:
                pos.pop()

    def _checks(self, action: Action) -> bool:
        """Whether ``action`` (a move of the current mover) gives check."""
        pos = self.position
        mid = bool(self._state.moves)
        if mid:
            pos.null_move()
        pos.push(action.code)
        try:
            return pos.in_check()
        finally:
            pos.pop()
            if mid:
                pos.pop()

    def san(self, action: Action) -> str:
        """SAN with the variant's letters; ``+`` when the move checks (and so ends the turn),
        ``#`` when the opponent cannot then meet the check."""
        base = self._san_base(action)
        if action.kind == ActionKind.END or not self._checks(action):
            return base                 # no check: the suffix is empty, whatever the turn does next
        # a check ends the turn: mate when the opponent cannot meet it with an affordable move
        st = self._state
        kept = (self._moves_cache, self._legal_cache, self._outcome_cache)
        self.push(action)
        try:
            o = self.outcome()
            mate = o is not None and o.termination is Termination.CHECKMATE
            after = self._outcome_cache
        finally:
            self.pop()
            self._moves_cache, self._legal_cache, self._outcome_cache = kept     # the same position again
        if self.resigned is None and after is not None:
            self._probe = (st, action, after)      # the same push again (a commit after its name) knows it
        return base + ("#" if mate else "+")


def turn_sequences(game: CostProgressiveGame) -> int:
    """How many different sequences of actions can make up the rest of the current turn: a
    sequence ends with ``end``, or with the move that ends the turn by itself."""
    n = 0
    half = game._state.half
    for a in list(game.legal_actions()):
        if a.kind == ActionKind.END:
            n += 1
            continue
        game.push(a)
        try:
            n += 1 if game._state.half != half else turn_sequences(game)
        finally:
            game.pop()
    return n


def turn_divide(game: CostProgressiveGame) -> list[tuple[str, int]]:
    """(first action, number of whole-turn sequences that begin with it)."""
    out = []
    half = game._state.half
    for a in list(game.legal_actions()):
        if a.kind == ActionKind.END:
            out.append((a.text, 1))
            continue
        game.push(a)
        try:
            out.append((a.text, 1 if game._state.half != half else turn_sequences(game)))
        finally:
            game.pop()
    return out
