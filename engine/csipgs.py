"""csipgs chess: designed pieces, zorkmids, purchases, reserves and transfers (drops).

The rules are csipgs-chess.txt (the overview and the variants). A turn is::

    credit   the player's treasury receives this turn's zorkmids (automatic)
    action   one of: a move; a transfer of a reserve piece to an empty square next to one of
             the player's royal pieces that is not in check; a purchase of a designed piece
             (none of the player's royal pieces in check, enough zorkmids, fewer than 16
             pieces in reserve plus on the board)
    design   change one of the player's six designs, or nothing (in Configurable csipgs chess
             an invention instead; in the Power variants a purchase instead)

so a turn is two actions of this Game: ``legal_actions()`` lists the current phase's.

Notation (every action is one word, so games replay from a space-separated list):

    e2e4          a move (captures too)              d4d5,d5d6   a doublemove piece's two moves
    N@e4          a transfer (the piece's letter)    buy:N       a purchase (``buy:3`` = design 3)
    design:3=fcFfmW   change design 3                end         end the turn (no design change)
    invent:nN=2,2.4   invent an atom (proposer's estimate, opponent's estimate; the higher counts)
    invent:runner=5,4 invent a modifier (runner, lame or hopper)
    royal-WF@e1,BR@d1,...   Army csipgs chess: a whole army (secret setup); ``N@b1`` one piece
                            at a time (alternating setup)

``parse`` also takes the spaced forms ``buy N``, ``design 3=fcFfmW``, ``invent nN 2 2.4``.
Design changes, inventions and army set-ups are accepted by ``parse`` but not listed by
``legal_actions`` (there are infinitely many).

Pieces. Designs change during a game, but a :class:`~engine.position.Position`'s piece types
are fixed by its Variant. The game keeps one piece type per design that has been bought
(keyed by the design's text; the six initial designs use the YAML's letters p n b r q k), and
when a new design is bought it builds a Variant with one more type and moves the position
over (tables are cached). A bought piece keeps its moves when its design slot is later
changed: the slot now names another type. Letters of new types: the design's first atom
letter when free, else the first free letter of a fixed pool; types with no piece left give
their letter back when the pool runs out.

Several royal pieces: a player with two or more royal pieces on the board may leave them
attacked (they are ordinary capturable pieces, ``royal_rule: last``); check, checkmate and
the ban on moving into check apply to the last one. "In check" in the purchase and transfer
rules means *attacked*, for every royal piece. Royal pieces in reserve do not count: a player
whose last royal piece on the board is checkmated loses.

Doublemove pieces (Drawless csipgs chess, after turn 110) make one or two of their moves in a
turn; both may capture; the second may not simply return to the start square. Their two-step
reach counts as attacking a square (check).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from .betza import parse_betza
from .csipgs_cost import (
    ATOM_MODIFIERS, ATOMS, STEPS, UNOFFICIAL, Cost, DesignError, PriceList, atom_spec, cost_of,
    decimal, parse_amount, parse_design,
)
from .errors import BetzaError, EngineError, IllegalMoveError, VariantError
from .contract import ActionKind, Termination
from .game import (
    Action, ArmySetup, ArmyWithoutRoyal, DesignChange, DoubleMove, FamilyGame, Invention, Outcome, Purchase, Transfer,
)
from . import refusals
from .moves import DROP, decode, encode, to_uci
from .position import BLACK, WHITE, Position, slot_copier
from .variant import PieceType

F = Fraction
COLOURS = ("white", "black")
END = Action("end", ActionKind.END)
INITIAL_DESIGNS = ("B", "BR", "fcFfmW", "N", "R", "royal-WF")
LETTER_POOL = "acdefghijlmostuvwxyz"


class ArmyError(IllegalMoveError):
    """An Army csipgs chess set-up breaks one of the army rules (``rule`` names which)."""

    def __init__(self, rule: str, message: str):
        self.rule = rule
        super().__init__(message)


# -- the variant's rules ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Drawless:
    """Drawless csipgs chess: the agreed numbers (turns are counted per player: turn 50 is over
    when both players have made 50 turns; half a turn is one player's turn)."""

    after_turns: Fraction = F(50)       # from then on each player receives `credit` per turn
    credit: Fraction = F(2)
    every_turns: Fraction = F(21, 2)    # each this many turns, `step` more per turn
    step: Fraction = F(1)
    no_royal_buys_after: Fraction = F(80)
    doublemove_after: Fraction = F(110)


@dataclass(frozen=True, slots=True)
class Army:
    """Army csipgs chess: the set-up rules and their agreed alternatives."""

    budget: Fraction = F(52)            # the total unrounded value must be less than this
    pieces: int = 16
    leftover: str = "lose"              # lose | keep | half (rounded down to the currency unit)
    second_row: str = "value"           # value: worth at most second_row_max; forward: moves forward only
    second_row_max: Fraction = F(2)
    setup: str = "secret"               # secret: each side's whole army at once; alternating: a piece at a time
    min_cost: Fraction | None = None
    max_cost: Fraction | None = None


@dataclass(frozen=True, slots=True)
class CsipgsRules:
    """The ``rules:`` mapping of a csipgs variant, validated."""

    designs: tuple[str, ...] = INITIAL_DESIGNS
    credit: Fraction = F(1)
    schedule: str = "constant"          # constant | progressive | drawless
    drawless: Drawless | None = None
    rounding: str = "whole"             # whole | half | tenth
    treasury: tuple[Fraction, Fraction] = (F(0), F(0))
    buy_phase: str = "action"           # action | design
    max_pieces: int = 16
    unofficial: frozenset[str] = frozenset()
    inventions: bool = False
    army: Army | None = None

    @classmethod
    def from_variant(cls, variant) -> CsipgsRules:
        rules = dict(variant.rules or {})
        where = f"variant {variant.name!r}: rules"

        def fail(key, value, why):
            return VariantError(f"{where}.{key}: {value!r}: {why}")

        known = {"designs", "credit", "schedule", "drawless", "rounding", "treasury", "buy_phase",
                 "max_pieces", "unofficial", "inventions", "army"}
        for k in rules:
            if k not in known:
                raise fail(k, rules[k], f"unknown key (known: {', '.join(sorted(known))})")

        def amount(key, value, positive=False):
            try:
                v = parse_amount(value, key)
            except DesignError as exc:
                raise fail(key, value, str(exc)) from None
            if positive and v <= 0:
                raise fail(key, value, "must be more than 0")
            return v

        def choice(key, value, options):
            if value not in options:
                raise fail(key, value, f"use one of: {', '.join(options)}")
            return value

        def whole(key, value, low=0):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise fail(key, value, f"must be a whole number >= {low}")
            return value

        out: dict[str, Any] = {}
        designs = rules.get("designs", list(INITIAL_DESIGNS))
        if not isinstance(designs, list) or not designs:
            raise fail("designs", designs, "must be a list of designs such as [B, BR, fcFfmW, N, R, royal-WF]")
        out["credit"] = amount("credit", rules.get("credit", 1))
        out["schedule"] = choice("schedule", rules.get("schedule", "constant"), ("constant", "progressive", "drawless"))
        out["rounding"] = choice("rounding", rules.get("rounding", "whole"), tuple(STEPS))
        tre = rules.get("treasury", {}) or {}
        if not isinstance(tre, dict) or set(tre) - {"white", "black"}:
            raise fail("treasury", tre, "must be a mapping with white and black amounts")
        out["treasury"] = (amount("treasury.white", tre.get("white", 0)), amount("treasury.black", tre.get("black", 0)))
        out["buy_phase"] = choice("buy_phase", rules.get("buy_phase", "action"), ("action", "design"))
        out["max_pieces"] = whole("max_pieces", rules.get("max_pieces", 16), 1)
        unoff = rules.get("unofficial", []) or []
        if not isinstance(unoff, list) or any(u not in UNOFFICIAL for u in unoff):
            raise fail("unofficial", unoff, f"must be a list of: {', '.join(sorted(UNOFFICIAL))}")
        out["unofficial"] = frozenset(unoff)
        inv = rules.get("inventions", False)
        if not isinstance(inv, bool):
            raise fail("inventions", inv, "must be true or false")
        out["inventions"] = inv
        if out["schedule"] == "drawless" or "drawless" in rules:
            d = rules.get("drawless", {}) or {}
            if not isinstance(d, dict):
                raise fail("drawless", d, "must be a mapping")
            fields = {f.name: f.default for f in dataclasses.fields(Drawless)}
            for k in d:
                if k not in fields:
                    raise fail(f"drawless.{k}", d[k], f"unknown key (known: {', '.join(fields)})")
            vals = {k: amount(f"drawless.{k}", d.get(k, v)) for k, v in fields.items()}
            if vals["every_turns"] <= 0:
                raise fail("drawless.every_turns", d.get("every_turns"), "must be more than 0")
            out["drawless"] = Drawless(**vals)
        if "army" in rules:
            a = rules.get("army") or {}
            if not isinstance(a, dict):
                raise fail("army", a, "must be a mapping")
            army_keys = [f.name for f in dataclasses.fields(Army)]
            for k in a:
                if k not in army_keys:
                    raise fail(f"army.{k}", a[k], f"unknown key (known: {', '.join(army_keys)})")
            out["army"] = Army(
                budget=amount("army.budget", a.get("budget", 52), positive=True),
                pieces=whole("army.pieces", a.get("pieces", 16), 1),
                leftover=choice("army.leftover", a.get("leftover", "lose"), ("lose", "keep", "half")),
                second_row=choice("army.second_row", a.get("second_row", "value"), ("value", "forward")),
                second_row_max=amount("army.second_row_max", a.get("second_row_max", 2)),
                setup=choice("army.setup", a.get("setup", "secret"), ("secret", "alternating")),
                min_cost=None if a.get("min_cost") is None else amount("army.min_cost", a["min_cost"]),
                max_cost=None if a.get("max_cost") is None else amount("army.max_cost", a["max_cost"]))
        rules_value = cls(designs=(), **out)
        prices = rules_value.price_list()
        canon = []
        for text in designs:
            try:
                canon.append(cost_of(str(text), prices).design)
            except (DesignError, BetzaError) as exc:
                raise fail("designs", text, str(exc)) from None
        return dataclasses.replace(rules_value, designs=tuple(canon))

    @property
    def step(self) -> Fraction:
        return STEPS[self.rounding]

    def price_list(self) -> PriceList:
        return PriceList(unofficial=self.unofficial, step=self.step)

    # -- the schedule ---------------------------------------------------------------------------
    @staticmethod
    def turns_before(ply: int) -> Fraction:
        """Turns played before ply ``ply`` (1 = White's first turn): 0, 1/2, 1, 3/2 ..."""
        return F(ply - 1, 2)

    def credit_for(self, ply: int) -> Fraction:
        """The zorkmids a player receives at the start of ply ``ply``."""
        if self.schedule == "progressive":
            return self.credit * ply
        if self.schedule == "drawless":
            d = self.drawless
            assert d is not None        # the schedule is drawless only with its settings
            t = self.turns_before(ply)
            if t < d.after_turns:
                return self.credit
            return d.credit + ((t - d.after_turns) // d.every_turns) * d.step
        return self.credit

    def royal_buys_allowed(self, ply: int) -> bool:
        return self.drawless is None or self.turns_before(ply) < self.drawless.no_royal_buys_after

    def doublemove_allowed(self, ply: int) -> bool:
        if "doublemove" not in self.unofficial:
            return False
        return self.drawless is None or self.turns_before(ply) >= self.drawless.doublemove_after


# -- the game --------------------------------------------------------------------------------------
@dataclass(slots=True)
class _State:
    phase: str                              # setup | action | design
    turn: int
    ply: int                                # 1 = White's first turn; 0 during an army set-up
    treasury: list                          # [white, black] Fractions
    designs: list                           # [white, black] tuples of design texts
    prices: PriceList
    inventions: tuple = ()                  # (kind, key, proposer's, opponent's, by colour)
    quiet: int = 0                          # turns since a capture, transfer or purchase
    moved: bool = False                     # this turn's action moved the position (its turn flipped)
    credit: Fraction = F(0)                 # this turn's credit
    reset: bool = False                     # this turn's action resets the fifty-move count
    army_spent: list = dataclasses.field(default_factory=lambda: [F(0), F(0)])
    army_count: list = dataclasses.field(default_factory=lambda: [0, 0])
    army_result: Outcome | None = None


class CsipgsGame(FamilyGame):
    """A csipgs chess game (any of its variants); the Game interface of :mod:`engine.game`."""

    family = "csipgs"
    hand_word = "reserve"
    # caches set on first use (read through __dict__, so a copy starts without them)
    _cost_fast: tuple[Any, dict[str, Any]]
    _action_cache: tuple[Any, dict[int, Action]]
    SILENT_VERBS = {
        "end": "ends your design phase (and so your turn) without a change",
        "buy": "buys a piece of one of your designs into your reserve: buy N (a letter) or buy royal-WF (a design)",
        "design": "puts a new piece into a design slot: design N=BETZA (slot 1-6)",
        "invent": "prices a new atom or modifier: invent NAME YOUR-ESTIMATE THEIR-ESTIMATE",
        "setup": "records an army in Army csipgs: setup royal-WF@e1,BR@d1,...",
    }

    def __init__(self, variant, fen: str | None = None, *, treasury=None, designs=None):
        """A new game of a csipgs variant, from its start or from ``fen`` (letters of the YAML's
        pieces; reserves as [..]; the move number and side give the turn, so a Drawless
        schedule can start mid-game). ``treasury`` = (white, black) replaces the treasuries
        after the first credit; ``designs`` = (white's, black's) replaces the initial designs.
        With a FEN, an Army variant skips the set-up."""
        self.variant = variant
        self.rules = CsipgsRules.from_variant(variant)
        if "relay" in self.rules.unofficial:
            raise VariantError(f"variant {variant.name!r}: relay pieces can be priced (fairyboard cost) "
                               "but this engine cannot play them; remove relay from rules.unofficial")
        self.history: list[Action] = []
        self.resigned: int | None = None
        self._stack: list = []
        self._variants: dict = {}
        self._cost_cache: dict = {}
        self._legal_cache: list[Action] | None = None
        self._outcome_cache: Any = None
        self._probe: tuple | None = None    # (state, action, outcome cache) of SAN's last check probe
        g = variant.geometry
        self._forward: dict[str, bool] = {}     # Betza -> every move goes forward (pawn-like)
        self._adjacent = [g.neighbours(sq) for sq in range(g.size)]
        # Initial piece types: the YAML's pieces, named by their designs.
        types = []
        for p in variant.pieces:
            text = ("royal-" if p.royal else "") + p.betza
            types.append((parse_design(text).text, p.letter))
        self._pv = self._variant_for(tuple(types))
        self.position = Position.from_fen(self._pv, fen)
        self.position.clear_rights()
        army = self.rules.army is not None and fen is None
        pos = self.position
        ply = 0 if army else 2 * (pos.fullmove - 1) + (1 if pos.turn == WHITE else 2)
        self.state = _State(
            phase="setup" if army else "action", turn=WHITE if army else pos.turn, ply=ply,
            treasury=list(self.rules.treasury), designs=[self.rules.designs, self.rules.designs],
            prices=self.rules.price_list(), quiet=pos.halfmove if not army else 0)
        if designs is not None:
            self.state.designs = [self._check_designs(d) for d in designs]
        if not army:
            self._credit()
        if treasury is not None:
            self.state.treasury = [parse_amount(treasury[0], "treasury"), parse_amount(treasury[1], "treasury")]
        self._keys: list[tuple] = [self._key()]

    # -- piece types ---------------------------------------------------------------------------
    def _variant_for(self, types: tuple) -> Any:
        v = self._variants.get(types)
        if v is None:
            pieces = []
            for text, letter in types:
                d = parse_design(text)
                pieces.append(PieceType(name=text, letter=letter, betza=d.betza, royal=d.royal, fsf_betza=None))
            v = dataclasses.replace(self.variant, pieces=tuple(pieces), castling=False, double_step=False,
                                    en_passant=False, promotion=(), royal_rule="last")
            self._variants[types] = v
        return v

    def _forward_only(self, t: int) -> bool:
        """Whether every move of piece type ``t`` goes forward. Such a piece plays the pawn's
        role (the initial pawn design fcFfmW is one): its moves can never be undone, so a move
        of it starts the fifty-move count again, as a pawn's move does in chess."""
        betza = self._pv.pieces[t].betza
        known = self._forward.get(betza)
        if known is None:
            comps = parse_betza(betza).components
            known = self._forward[betza] = bool(comps) and all(
                c.kind != "bent" and all(dy > 0 for _, dy in c.vectors) for c in comps)
        return known

    @property
    def types(self) -> tuple:
        """(design, letter) of every piece type the position knows, in type-index order."""
        return tuple((p.name, p.letter) for p in self._pv.pieces)

    def _type_index(self, design: str) -> int | None:
        for i, p in enumerate(self._pv.pieces):
            if p.name == design:
                return i
        return None

    def _ensure_type(self, design: str) -> int:
        """The type index of a design, adding a piece type (and moving the position to a new
        Variant) the first time the design is bought or set up."""
        t = self._type_index(design)
        if t is not None:
            return t
        types = self._types_with(design)
        self._rebase(types)
        return len(types) - 1

    def letter_for(self, design: str) -> str:
        """The letter a design's pieces have, or will have when first bought."""
        t = self._type_index(design)
        return self._pv.pieces[t].letter if t is not None else self._types_with(design)[-1][1]

    def _types_with(self, design: str) -> tuple:
        """The piece types after adding ``design`` (dropping types with no piece left when the
        letters run out)."""
        types = list(self.types)
        used = {letter for _, letter in types}
        if len(used) >= 26:
            pos = self.position
            alive = [i for i in range(len(types))
                     if pos.hands[0][i] or pos.hands[1][i] or pos.pbb[(i + 1) * 2] or pos.pbb[(i + 1) * 2 + 1]]
            types = [types[i] for i in alive]
            used = {letter for _, letter in types}
        first = next((c.lower() for c in parse_design(design).betza if c.isupper()), "")
        letter = first if first and first not in used else next(
            (c for c in LETTER_POOL + "bknpqr" if c not in used), None)
        if letter is None:
            raise IllegalMoveError(f"{design!r}: every letter is in use by a piece type on the board or in reserve")
        types.append((design, letter))
        return tuple(types)

    def _rebase(self, types: tuple) -> None:
        pos = self.position
        fen = pos.fen(ep="always")
        turn, half, full = pos.turn, pos.halfmove, pos.fullmove
        self._pv = self._variant_for(types)
        new = Position.from_fen(self._pv, fen)
        new.turn, new.halfmove, new.fullmove = turn, half, full
        self.position = new

    # -- prices --------------------------------------------------------------------------------
    def cost(self, design: str, prices: PriceList | None = None) -> Cost:
        """A design's cost under this game's price list (the table plus inventions so far)."""
        prices = prices or self.state.prices
        # by the price list's identity first: its key sorts and hashes every price
        fast = self.__dict__.get("_cost_fast")
        if fast is None or fast[0] is not prices:
            fast = self._cost_fast = (prices, {})
        c = fast[1].get(design)
        if c is None:
            key = (prices.key, design)
            c = self._cost_cache.get(key)
            if c is None:
                c = cost_of(design, prices, self.variant.geometry)
                self._cost_cache[key] = c
            fast[1][design] = c
        return c

    def _check_designs(self, designs) -> tuple:
        return tuple(self.cost(str(d)).design for d in designs)

    # -- state ---------------------------------------------------------------------------------
    @property
    def turn(self) -> int:
        return self.state.turn

    @property
    def phase(self) -> str:
        return self.state.phase

    @property
    def treasury(self) -> tuple[Fraction, Fraction]:
        return tuple(self.state.treasury)

    @property
    def designs(self) -> tuple:
        return tuple(self.state.designs)

    def reserve(self, color: int) -> dict[str, int]:
        """{design: count} of a player's reserve."""
        return {p.name: n for p, n in zip(self._pv.pieces, self.position.hands[color]) if n}

    def fen(self) -> str:
        """The position's FEN (reserves as [..]); side to move and move number are the game's
        (during the design phase: the player still to complete the turn)."""
        parts = self.position.fen().split()
        st = self.state
        parts[1] = "w" if st.turn == WHITE else "b"
        parts[4] = str(st.quiet)
        parts[5] = str(max(1, (st.ply + 1) // 2))
        return " ".join(parts)

    def checked_royals(self) -> list[int]:
        pos = self.position
        return sorted(sq for color in (WHITE, BLACK) for sq in pos.royal_squares(color)
                      if self._attacked(sq, color ^ 1))

    def in_check(self) -> bool:
        """True when a royal piece of the player whose turn it is stands attacked."""
        us = self.state.turn
        return any(self._attacked(sq, us ^ 1) for sq in self.position.royal_squares(us))

    def describe(self) -> dict:
        st = self.state
        out: dict[str, Any] = {
            "phase": st.phase,
            "ply": st.ply,
            "credit": decimal(st.credit),
            "treasury": {COLOURS[c]: decimal(st.treasury[c]) for c in (0, 1)},
            "reserve": {COLOURS[c]: self.reserve(c) for c in (0, 1)},
            "designs": {COLOURS[c]: list(st.designs[c]) for c in (0, 1)},
            "prices": {COLOURS[c]: {d: decimal(self.cost(d).price) for d in st.designs[c]} for c in (0, 1)},
            "pieces": {letter: design for design, letter in self.types},
        }
        if st.inventions:
            out["inventions"] = [{"kind": k, "name": n, "estimates": [decimal(a), decimal(b)],
                                  "used": decimal(max(a, b)), "by": COLOURS[c]}
                                 for k, n, a, b, c in st.inventions]
        if self.rules.drawless is not None and st.ply:
            out["royal_buys_allowed"] = self.rules.royal_buys_allowed(st.ply)
            out["doublemove_allowed"] = self.rules.doublemove_allowed(st.ply)
        if self.rules.army is not None:
            out["army"] = {"spent": {COLOURS[c]: decimal(st.army_spent[c]) for c in (0, 1)},
                           "pieces": {COLOURS[c]: st.army_count[c] for c in (0, 1)}}
        return out

    def _key(self) -> tuple:
        st = self.state
        pos = self.position
        # the FEN's placement and reserves are the board, the hands and the letters of the types
        return (tuple(pos.board), tuple(pos.hands[0]), tuple(pos.hands[1]), self._pv.letters, st.turn,
                st.phase, tuple(st.treasury), tuple(st.designs), st.inventions)

    # -- attacks and royal safety -----------------------------------------------------------------
    def _protected(self, color: int, pos: Position | None = None) -> list[int]:
        royals = (pos or self.position).royal_squares(color)
        return royals if len(royals) == 1 else []

    def _doublemovers(self, color: int, pos: Position) -> list[int]:
        v = pos.variant
        types = _DOUBLEMOVE_TYPES.get(id(v))
        if types is None or types[0] is not v:
            if len(_DOUBLEMOVE_TYPES) >= 64:
                _DOUBLEMOVE_TYPES.clear()
            types = _DOUBLEMOVE_TYPES[id(v)] = (v, tuple(
                t for t, p in enumerate(v.pieces) if p.name.startswith(("doublemove-", "royal-doublemove-"))))
        out = []
        for t in types[1]:
            out.extend(_bits(pos.pbb[(t + 1) * 2 + color]))
        return out

    @staticmethod
    def _hop_capturers(color: int, pos: Position) -> bool:
        """Whether ``color`` has a piece on the board that captures by hopping."""
        T = pos.tables
        return any(pos.pbb[(t + 1) * 2 + color] and any(cp for _, _, cp in T.pieces[color][t].hops)
                   for t in range(len(pos.variant.pieces)))

    def _attacked(self, sq: int, by: int, pos: Position | None = None) -> bool:
        pos = pos or self.position
        if pos.attacked(sq, by):
            return True
        for frm in self._doublemovers(by, pos):
            if self._two_step_reach(pos, frm) >> sq & 1:
                return True
        return False

    def _two_step_reach(self, pos: Position, frm: int) -> int:
        """Squares a doublemove piece on ``frm`` attacks with its second move."""
        quiet, caps = _targets(pos, frm)
        reach = 0
        for q in _bits(quiet | caps):
            pos.push(encode(frm, q))
            reach |= pos.attacks_of(q)
            pos.pop()
        return reach

    def _royal_safe(self, us: int, pos: Position) -> bool:
        """After a candidate action: the mover's protected royal piece is not attacked."""
        return not any(self._attacked(k, us ^ 1, pos) for k in self._protected(us, pos))

    def _safe_after(self, us: int, pos: Position, m: int) -> bool:
        """Whether ``us`` keeps its protected royal piece safe after the int move ``m``."""
        pos.push(m)
        try:
            return self._royal_safe(us, pos)
        finally:
            pos.pop()

    # -- actions ------------------------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        if self._legal_cache is None:
            if self.outcome() is not None:
                self._legal_cache = []
            elif self._legal_cache is None:   # outcome() may have generated them already
                self._legal_cache = self._generate()
        return self._legal_cache

    def _generate(self) -> list[Action]:
        st = self.state
        if st.phase == "setup":
            return []
        if st.phase == "design":
            out = [END]
            if self.rules.buy_phase == "design":
                out.extend(self._buys())
            return out
        return self._action_phase()

    def _action_phase(self) -> list[Action]:
        pos = self.position
        us = self.state.turn
        them = us ^ 1
        extra_check = bool(self._protected(us)) and bool(self._doublemovers(them, pos))
        out = []
        for m in pos.legal_moves(drops=False):   # transfers are csipgs's own drops
            if extra_check and not self._safe_after(us, pos, m):
                continue
            out.append(self.action_of(m))
        for frm in self._doublemovers(us, pos):
            out.extend(self._double_moves(frm))
        out.extend(self._transfers())
        if self.rules.buy_phase == "action":
            out.extend(self._buys())
        return out

    def _double_moves(self, frm: int) -> list[Action]:
        pos = self.position
        us = self.state.turn
        g = self.geometry
        letter = self._pv.pieces[(pos.board[frm] >> 1) - 1].letter
        out = []
        quiet1, caps1 = _targets(pos, frm)
        for q in _bits(quiet1 | caps1):
            m1 = encode(frm, q)
            first_capture = bool(caps1 >> q & 1)
            pos.push(m1)
            quiet2, caps2 = _targets(pos, q)
            for r in _bits(quiet2 | caps2):
                if r == frm and not first_capture:
                    continue
                m2 = encode(q, r)
                if self._safe_after(us, pos, m2):
                    lifts = {frm} | ({q} if first_capture else set()) | ({r} if caps2 >> r & 1 else set())
                    text = f"{g.name(frm)}{g.name(q)},{g.name(q)}{g.name(r)}"
                    kind = ActionKind.CAPTURE if first_capture or caps2 >> r & 1 else ActionKind.MOVE
                    out.append(Action(text, kind,
                                      frozenset(lifts), frozenset({r}), -1, letter, DoubleMove(m1, m2)))
            pos.pop()
        return out

    def _transfers(self) -> list[Action]:
        pos = self.position
        us = self.state.turn
        them = us ^ 1
        if not any(pos.hands[us]):
            return []
        targets = 0
        for k in pos.royal_squares(us):
            if not self._attacked(k, them):
                targets |= self._adjacent[k]
        targets &= ~(pos.occ[0] | pos.occ[1])
        if not targets:
            return []
        # A piece dropped beside an unattacked royal piece only blocks lines, unless the enemy
        # has a hopper (the piece could become its screen) or a doublemover (it could capture
        # the piece and go on): only then is each transfer tested.
        protected = bool(self._protected(us)) and (self._hop_capturers(them, pos) or
                                                   bool(self._doublemovers(them, pos)))
        out = []
        for t, n in enumerate(pos.hands[us]):
            if not n:
                continue
            for to in _bits(targets):
                m = encode(t, to, 0, DROP)
                if protected and not self._safe_after(us, pos, m):
                    continue
                out.append(self.action_of(m))
        return out

    def _drops_now(self) -> list[Action]:
        return super()._drops_now() if self.state.phase == "action" else []    # transfers are action-phase actions

    def next_drops(self) -> list[Action]:
        """In a design phase: the opponent's transfers once it ends, found by ending it on a
        copy and listing only the transfers (the LEDs light them; the opponent's other
        actions are listed later, when the board is idle)."""
        if self.state.phase != "design" or not self.can_drop() or self.outcome() is not None:
            return super().next_drops()
        ahead = self.copy()
        ahead._push(END)                    # always legal in a design phase
        # this game's outcome (None) already found that the opponent can act: only the fifty
        # moves and repetition are left to ask after the end of the turn
        ahead._outcome_cache = (ahead._action_outcome(can_act=True),)
        return [] if ahead.outcome() is not None else ahead._transfers()

    def _buy_refusal(self, design: str | None = None) -> str | None:
        """Why the player to act may not buy now (or this design), or None."""
        st = self.state
        us = st.turn
        pos = self.position
        wanted = "action" if self.rules.buy_phase == "action" else "design"
        if st.phase != wanted:
            return (f"pieces are bought in the {wanted} phase in {self.variant.name}, "
                    f"and this is {COLOURS[us]}'s {st.phase} phase")
        attacked = [sq for sq in pos.royal_squares(us) if self._attacked(sq, us ^ 1)]
        if attacked:
            return (f"no purchase while a royal piece is in check "
                    f"({', '.join(self.geometry.name(s) for s in attacked)})")
        count = pos.occ[us].bit_count() + sum(pos.hands[us])
        if count >= self.rules.max_pieces:
            return (f"{COLOURS[us]} has {count} pieces in reserve plus on the board; "
                    f"a purchase needs fewer than {self.rules.max_pieces}")
        if design is None:
            return None
        return self._design_refusal(design)

    def _design_refusal(self, design: str) -> str | None:
        """Why this design may not be bought, when buying is allowed now (see _buy_refusal)."""
        st = self.state
        us = st.turn
        if design not in st.designs[us]:
            return f"{design!r} is not one of {COLOURS[us]}'s designs ({', '.join(st.designs[us])})"
        if self._affordable(design):
            return None
        c = self.cost(design)
        if c.price > st.treasury[us]:
            return (f"{design} costs {decimal(c.price)} (exactly {decimal(c.exact)}) and {COLOURS[us]} "
                    f"has {decimal(st.treasury[us])} zorkmids")
        drawless = self.rules.drawless
        assert drawless is not None
        return (f"after turn {decimal(drawless.no_royal_buys_after)} no royal piece "
                "may be bought")

    def _affordable(self, design: str) -> bool:
        """Whether one of the player's designs may be bought now (its price paid from the
        treasury, a royal design not past a drawless variant's last turn for them): the
        test alone, without the message (the action list asks it of every design, at every
        node of a search)."""
        st = self.state
        if self.cost(design).price > st.treasury[st.turn]:
            return False
        drawless = self.rules.drawless
        return not (drawless is not None and parse_design(design).royal
                    and not self.rules.royal_buys_allowed(st.ply))

    def _buys(self) -> list[Action]:
        if self._buy_refusal() is not None:
            return []
        out = []
        seen = set()
        for d in self.state.designs[self.state.turn]:
            if d in seen:
                continue
            seen.add(d)
            if self._affordable(d):
                try:
                    letter = self.letter_for(d)
                except IllegalMoveError:     # all 26 letters name pieces in play
                    continue
                out.append(Action(f"buy:{d}", ActionKind.BUY, piece=letter, detail=Purchase(d, self.cost(d).price)))
        return out

    def action_of(self, m: int) -> Action:
        """The Action of an int move (a move or a transfer) in the current position. It
        depends only on the move, the piece that moves, whether the target holds a piece and
        the piece types in play, so each is made once and kept while the types stay."""
        pv = self._pv
        cache = self.__dict__.get("_action_cache")
        if cache is None or cache[0] is not pv:
            cache = self._action_cache = (pv, {})
        board = self.position.board
        key = m if m >> 24 == DROP else m | board[m & 0xFF] << 32 | (1 << 40 if board[(m >> 8) & 0xFF] else 0)
        a = cache[1].get(key)
        if a is None:
            a = cache[1][key] = self._make_action(m)
        return a

    def _make_action(self, m: int) -> Action:
        pos = self.position
        pv = self._pv
        frm, to, _, flag = decode(m)
        text = to_uci(m, pv)
        if flag == DROP:
            letter = pv.pieces[frm].letter
            return Action(text, ActionKind.DROP, frozenset(), frozenset({to}), m, letter,
                          Transfer(pv.pieces[frm].name), drop=letter)
        letter = pv.pieces[(pos.board[frm] >> 1) - 1].letter
        captured = bool(pos.board[to])
        return Action(text, ActionKind.CAPTURE if captured else ActionKind.MOVE,
                      frozenset({frm, to}) if captured else frozenset({frm}), frozenset({to}), m, letter)

    # -- parsing ------------------------------------------------------------------------------
    _SPACED = (
        (re.compile(r"^buy\s+(\S+)$"), "buy:{0}"),
        (re.compile(r"^design\s+(\d+)\s*(?:=\s*|\s+)(\S+)$"), "design:{0}={1}"),
        (re.compile(r"^invent\s+(?:atom\s+|modifier\s+)?(\S+)\s+(\S+)\s+(\S+)$"), "invent:{0}={1},{2}"),
    )

    def parse(self, text: str) -> Action:
        """The legal action written ``text``; IllegalMoveError says why not."""
        if not isinstance(text, str):
            raise IllegalMoveError(f"{text!r} is not an action")
        t = " ".join(text.split())
        for rx, fmt in self._SPACED:
            m = rx.match(t)
            if m:
                t = fmt.format(*m.groups())
        outcome = self.outcome()
        if outcome is not None:
            raise IllegalMoveError(f"{text!r}: the game is over ({outcome.result}, {outcome.reason})")
        st = self.state
        if st.phase == "setup":
            return self._parse_setup(text, t)
        for a in self.legal_actions():
            if a.text == t:
                return a
        try:
            if t == "end":
                raise IllegalMoveError(f"{text!r}: the turn ends after the design phase; "
                                       f"{COLOURS[st.turn]} is in the action phase (move, transfer or buy)")
            if t.startswith("buy:"):
                return self._parse_buy(text, t[4:])
            if t.startswith("design:"):
                return self._parse_design(text, t[7:])
            if t.startswith("invent:"):
                return self._parse_invent(text, t[7:])
            if "@" in t:
                return self._parse_transfer(text, t)
        except (DesignError, BetzaError) as exc:
            raise IllegalMoveError(f"{text!r}: {exc}") from None
        if st.phase == "design":
            raise IllegalMoveError(f"{text!r}: {COLOURS[st.turn]} is in the design phase "
                                   "(design:N=DESIGN, invent:..., a purchase where allowed, or end)")
        for a in self.legal_actions():
            if a.text.lower() == t.lower() or self.san(a) == t.rstrip("+#"):
                return a
        raise IllegalMoveError(f"{text!r} is not a legal move for {COLOURS[st.turn]} in {self.fen()}")

    def _parse_buy(self, text: str, arg: str) -> Action:
        st = self.state
        designs = st.designs[st.turn]
        if arg.isdigit():
            i = int(arg)
            if not 1 <= i <= len(designs):
                raise IllegalMoveError(f"{text!r}: there is no design {i} (designs 1-{len(designs)})")
            design = designs[i - 1]
        else:
            try:
                design = parse_design(arg).text
            except (DesignError, BetzaError) as exc:
                raise IllegalMoveError(self._buy_help(text, arg, exc)) from None
        why = self._buy_refusal(design)
        if why is None:
            for a in self.legal_actions():
                if a.kind == ActionKind.BUY and a.detail_as(Purchase).design == design:
                    return a
            why = "not allowed now"
        raise IllegalMoveError(f"{text!r}: {why}")

    def _buy_help(self, text: str, arg: str, exc: Exception) -> str:
        """Why ``buy ARG`` names no design: a purchase names a design slot or Betza text."""
        designs = self.state.designs[self.state.turn]
        slots = ", ".join(f"{i}) {d}" for i, d in enumerate(designs, 1))
        letter = {lt: d for d, lt in self.types}.get(arg.lower())
        hint = f"; {arg!r} is the letter of {letter}: buy {designs.index(letter) + 1} or buy {letter}" \
            if letter in designs else ""
        return (f"{text!r}: a purchase names a design slot (a number) or a design's Betza text, "
                f"not {arg!r}{hint}. {COLOURS[self.state.turn].capitalize()}'s designs: {slots} "
                f"(as Betza, {arg!r}: {getattr(exc, 'reason', exc)})")

    def _parse_transfer(self, text: str, t: str) -> Action:
        st = self.state
        us = st.turn
        g = self.geometry
        if st.phase != "action":
            raise IllegalMoveError(f"{text!r}: transfers are actions; {COLOURS[us]} is in the design phase")
        what, _, where = t.rpartition("@")
        try:
            to = g.parse(where)
        except EngineError as exc:
            raise IllegalMoveError(f"{text!r}: {exc}") from None
        t_index = None
        if len(what) == 1 and what.isalpha():
            t_index = next((i for i, p in enumerate(self._pv.pieces) if p.letter == what.lower()), None)
        if t_index is None:
            try:
                t_index = self._type_index(parse_design(what).text)
            except (DesignError, BetzaError):
                t_index = None
        pos = self.position
        if t_index is None or not pos.hands[us][t_index]:
            have = ", ".join(f"{self._pv.pieces[i].letter.upper()} ({self._pv.pieces[i].name})"
                             for i, n in enumerate(pos.hands[us]) if n) or "nothing"
            raise IllegalMoveError(f"{text!r}: {COLOURS[us]} has no {what!r} in reserve (reserve: {have})")
        if pos.board[to]:
            raise IllegalMoveError(f"{text!r}: {g.name(to)} is not empty")
        royals = pos.royal_squares(us)
        near = [k for k in royals if self._adjacent[k] >> to & 1]
        if not near:
            raise IllegalMoveError(f"{text!r}: {g.name(to)} is not next to a royal piece of {COLOURS[us]}'s")
        if all(self._attacked(k, us ^ 1) for k in near):
            raise IllegalMoveError(f"{text!r}: the royal piece next to {g.name(to)} is in check "
                                   f"({', '.join(g.name(k) for k in near)})")
        raise IllegalMoveError(f"{text!r}: it would leave {COLOURS[us]}'s royal piece in check")

    def _parse_design(self, text: str, arg: str) -> Action:
        st = self.state
        us = st.turn
        if st.phase != "design":
            raise IllegalMoveError(f"{text!r}: designs change in the design phase, after the action; "
                                   f"{COLOURS[us]} is in the action phase")
        slot, eq, design = arg.partition("=")
        designs = st.designs[us]
        if not eq or not slot.isdigit() or not design:
            raise IllegalMoveError(f"{text!r}: write design:N=DESIGN, e.g. design:3=fcFfmW")
        i = int(slot)
        if not 1 <= i <= len(designs):
            raise IllegalMoveError(f"{text!r}: there is no design {i} (designs 1-{len(designs)})")
        d = parse_design(design)
        if d.doublemove and not self.rules.doublemove_allowed(st.ply):
            if "doublemove" in self.rules.unofficial and self.rules.drawless is not None:
                raise IllegalMoveError(f"{text!r}: the doublemove modifier is legal only after turn "
                                       f"{decimal(self.rules.drawless.doublemove_after)}")
        c = self.cost(d.text)
        if designs[i - 1] == c.design:
            raise IllegalMoveError(f"{text!r}: design {i} is {c.design} already (to change nothing: end)")
        return Action(f"design:{i}={c.design}", ActionKind.DESIGN, detail=DesignChange(i, c.design, c.price))

    def _parse_invent(self, text: str, arg: str) -> Action:
        st = self.state
        if not self.rules.inventions:
            raise IllegalMoveError(f"{text!r}: {self.variant.name} has no inventions "
                                   "(they belong to Configurable csipgs chess)")
        if st.phase != "design":
            raise IllegalMoveError(f"{text!r}: an invention replaces the design change, in the design phase")
        name, eq, ests = arg.partition("=")
        parts = ests.split(",")
        if not eq or len(parts) != 2 or not name:
            raise IllegalMoveError(f"{text!r}: write invent:ATOM=MINE,THEIRS or invent:MODIFIER=MINE,THEIRS, "
                                   "e.g. invent:nN=2,2.4 or invent:runner=5,4")
        mine, theirs = (parse_amount(p, "estimate") for p in parts)
        if min(mine, theirs) <= 0:
            raise IllegalMoveError(f"{text!r}: estimates must be more than 0")
        prices = st.prices
        if name in ATOM_MODIFIERS:
            if name in prices.modifiers:
                raise IllegalMoveError(f"{text!r}: the {name} modifier was invented already "
                                       f"(x{decimal(prices.modifiers[name])})")
            return Action(f"invent:{name}={decimal(mine)},{decimal(theirs)}", ActionKind.INVENT,
                          detail=Invention("modifier", name, mine, theirs, ""))
        if name.isalpha() and name.islower():
            raise IllegalMoveError(f"{text!r}: {name!r} is not a modifier this engine can play "
                                   f"(known: {', '.join(ATOM_MODIFIERS)}) nor an atom in Betza")
        spec = atom_spec(name)
        if spec.key in prices.atoms:
            raise IllegalMoveError(f"{text!r}: the atom {spec.key} has a price already "
                                   f"({decimal(prices.atoms[spec.key])})")
        return Action(f"invent:{name}={decimal(mine)},{decimal(theirs)}", ActionKind.INVENT,
                      detail=Invention("atom", spec.key, mine, theirs, spec.family))

    # -- army set-up ----------------------------------------------------------------------------
    def _parse_setup(self, text: str, t: str) -> Action:
        army = self.rules.army
        assert army is not None         # only Army csipgs parses a set-up
        st = self.state
        us = st.turn
        g = self.geometry
        entries = [e for e in t.split(",") if e]
        if not entries or any("@" not in e for e in entries):
            raise ArmyError("notation", f"{text!r}: an army is written DESIGN@square, comma separated "
                            "(royal-WF@e1,BR@d1,...)")
        if army.setup == "alternating" and len(entries) != 1:
            raise ArmyError("notation", f"{text!r}: in the alternating set-up each player places one piece a turn")
        if army.setup == "secret" and len(entries) != army.pieces:
            raise ArmyError("count", f"{text!r}: {len(entries)} pieces; an army has exactly {army.pieces}")
        rows = (0, 1) if us == WHITE else (g.ranks - 1, g.ranks - 2)
        second = rows[1]
        placed: list[tuple[str, int, Cost]] = []
        taken = set(_bits(self.position.occ[us]))
        total = st.army_spent[us]
        for e in entries:
            design, _, where = e.rpartition("@")
            try:
                sq = g.parse(where)
                c = self.cost(parse_design(design).text)
            except (EngineError,) as exc:
                raise ArmyError("design", f"{text!r}: {e}: {exc}") from None
            if g.rank_of(sq) not in rows:
                raise ArmyError("rows", f"{text!r}: {g.name(sq)} is not on {COLOURS[us]}'s first two rows "
                                f"(ranks {rows[0] + 1} and {rows[1] + 1})")
            if sq in taken:
                raise ArmyError("square", f"{text!r}: two pieces on {g.name(sq)}")
            taken.add(sq)
            if army.min_cost is not None and c.exact < army.min_cost:
                raise ArmyError("min-cost", f"{text!r}: {c.design} is worth {decimal(c.exact)}, below the "
                                f"minimum piece cost {decimal(army.min_cost)}")
            if army.max_cost is not None and c.exact > army.max_cost:
                raise ArmyError("max-cost", f"{text!r}: {c.design} is worth {decimal(c.exact)}, above the "
                                f"maximum piece cost {decimal(army.max_cost)}")
            if g.rank_of(sq) == second:
                if army.second_row == "value" and c.exact > army.second_row_max:
                    raise ArmyError("second-row", f"{text!r}: {c.design} on {g.name(sq)} is worth "
                                    f"{decimal(c.exact)}; a piece on the second row may be worth at most "
                                    f"{decimal(army.second_row_max)}")
                if army.second_row == "forward" and not _forward_only(c.design):
                    raise ArmyError("second-row", f"{text!r}: {c.design} on {g.name(sq)} has moves that do "
                                    "not go forward; a piece on the second row may only move and capture forwards")
            total += c.exact
            placed.append((c.design, sq, c))
        count = st.army_count[us] + len(placed)
        if count > army.pieces:
            raise ArmyError("count", f"{text!r}: that makes {count} pieces; an army has exactly {army.pieces}")
        if total >= army.budget:
            raise ArmyError("budget", f"{text!r}: the army's total value {decimal(total)} is not less than "
                            f"{decimal(army.budget)} zorkmids")
        label = ",".join(f"{d}@{g.name(sq)}" for d, sq, _ in placed)
        return Action(label, ActionKind.SETUP, frozenset(), frozenset(sq for _, sq, _ in placed), -1, "",
                      ArmySetup(tuple((d, sq) for d, sq, _ in placed)))

    def _apply_setup(self, action: Action) -> None:
        st = self.state
        us = st.turn
        pos = self.position
        placed = action.detail_as(ArmySetup).placed
        for design, sq in placed:
            t = self._ensure_type(design)
            pos = self.position
            pos.put_piece(sq, t, us)
            st.army_spent[us] += self.cost(design).exact
        st.army_count[us] += len(placed)
        army = self.rules.army
        assert army is not None
        done = [st.army_count[c] == army.pieces for c in (0, 1)]
        if army.setup == "alternating" and not done[us ^ 1]:
            st.turn = us ^ 1
        elif army.setup == "alternating" and not done[us]:
            st.turn = us
        elif not all(done):
            st.turn = us ^ 1
        if all(done):
            self._start_after_setup()

    def _start_after_setup(self) -> None:
        st = self.state
        army = self.rules.army
        assert army is not None
        step = self.rules.step
        for c in (0, 1):
            left = army.budget - st.army_spent[c]
            if army.leftover == "lose":
                keep = F(0)
            elif army.leftover == "keep":
                keep = (left // step) * step
            else:
                keep = ((left / 2) // step) * step
            st.treasury[c] += keep
        pos = self.position
        missing = ArmyWithoutRoyal(not pos.royal_squares(WHITE), not pos.royal_squares(BLACK))
        if any(missing):        # that player loses; Black wins when both forgot
            st.army_result = Outcome.win(BLACK if missing.white else WHITE, Termination.NO_ROYAL_IN_ARMY, missing)
        st.phase = "action"
        st.turn = WHITE
        st.ply = 1
        pos.set_turn(WHITE, halfmove=0, fullmove=1)
        self._credit()

    # -- making actions ---------------------------------------------------------------------------
    def _push(self, action: Action) -> None:
        before = self.state
        self._stack.append((self.state, self.position.copy(), self._pv))
        self.state = st = _copy_state(self.state)
        pos = self.position
        kind = action.kind
        if kind == ActionKind.SETUP:
            self._apply_setup(action)
        elif kind in (ActionKind.MOVE, ActionKind.CAPTURE) and action.code >= 0:
            forward = self._forward_only((pos.board[decode(action.code)[0]] >> 1) - 1)
            pos.push(action.code)
            st.moved, st.reset = True, kind == ActionKind.CAPTURE or forward
            st.phase = "design"
        elif kind in (ActionKind.MOVE, ActionKind.CAPTURE):
            double = action.detail_as(DoubleMove)
            forward = self._forward_only((pos.board[decode(double.first)[0]] >> 1) - 1)
            pos.push(double.first)
            pos.push(double.second)
            pos.set_turn(st.turn ^ 1)
            st.moved, st.reset = True, kind == ActionKind.CAPTURE or forward
            st.phase = "design"
        elif kind == ActionKind.DROP:
            pos.push(action.code)
            st.moved, st.reset = True, True
            st.phase = "design"
        elif kind == ActionKind.BUY:
            purchase = action.detail_as(Purchase)
            st.treasury[st.turn] -= purchase.price
            t = self._ensure_type(purchase.design)
            self.position.hands[st.turn][t] += 1
            st.reset = True
            if st.phase == "action":
                st.phase = "design"
            else:
                self._end_turn()
        elif kind == ActionKind.DESIGN:
            change = action.detail_as(DesignChange)
            designs = list(st.designs[st.turn])
            designs[change.slot - 1] = change.design
            st.designs[st.turn] = tuple(designs)
            self._end_turn()
        elif kind == ActionKind.INVENT:
            inv = action.detail_as(Invention)
            used = max(inv.mine, inv.theirs)
            st.prices = (st.prices.with_modifier(inv.name, used) if inv.what == "modifier"
                         else st.prices.with_atom(inv.name, used, inv.family))
            st.inventions = st.inventions + ((inv.what, inv.name, inv.mine, inv.theirs, st.turn),)
            self._end_turn()
        elif kind == ActionKind.END:
            self._end_turn()
        else:
            raise IllegalMoveError(f"{action.text!r}: not a csipgs action")
        self.position.forget_undo()
        self.history.append(action)
        self._keys.append(self._key())
        self._legal_cache = None
        self._outcome_cache = None
        probe = self._probe
        if probe is not None and probe[0] is before and probe[1] is action:
            self._outcome_cache = probe[2]      # SAN played this very action from this very state

    def _end_turn(self) -> None:
        st = self.state
        st.quiet = 0 if st.reset else st.quiet + 1
        st.turn ^= 1
        st.ply += 1
        st.phase = "action"
        st.moved = st.reset = False
        self.position.set_turn(st.turn, halfmove=st.quiet, fullmove=(st.ply + 1) // 2)
        self._credit()

    def _credit(self) -> None:
        st = self.state
        st.credit = self.rules.credit_for(st.ply)
        st.treasury[st.turn] += st.credit

    def pop(self) -> Action:
        if not self.history:
            raise IllegalMoveError("no action to take back")
        self.state, pos, self._pv = self._stack.pop()
        self.position = pos.copy()          # the stack's snapshots stay unchanged (copies share them)
        self._keys.pop()
        self._legal_cache = None
        self._outcome_cache = None
        self.resigned = None
        return self.history.pop()

    def _forget_outcome(self) -> None:
        self._legal_cache = None
        self._outcome_cache = None

    def _copy_into(self, other) -> None:
        other.state = _copy_state(self.state)
        other._stack = list(self._stack)
        other._keys = list(self._keys)

    def _family_move_refusal(self, frm: int, to: int | None) -> str:
        """Moves are the action of the action phase."""
        st = self.state
        if st.phase == "action":
            return ""
        g = self.geometry
        who = refusals.piece_words(self.position, frm)[0]
        if st.phase == "setup":
            return f"the {who} on {g.name(frm)} cannot move yet: the armies are being set up (setup ...)"
        return (f"the {who} on {g.name(frm)} cannot move now: it is {COLOURS[st.turn]}'s design phase "
                "(change a design, or end the turn with end)")

    def _guarded_royals(self, color: int) -> list[int]:
        return self._protected(color)

    def why_drop_refused(self, to: int) -> str:
        """A reserve piece set down on ``to``: the transfer rules (the action phase, a piece in
        reserve, next to an own royal piece that is not in check, that royal piece safe after)."""
        g = self.geometry
        out = self.outcome()
        if out is not None:
            return f"the game is over ({out.result}, {out.reason})"
        if any(to in a.places for a in self._drops_now()):
            return ""
        st = self.state
        us = st.turn
        who = COLOURS[us].capitalize()
        here = f"a piece set down on {g.name(to)}"
        if st.phase != "action":
            return f"{here}: a transfer is the action of the action phase, and this is {who}'s {st.phase} phase"
        pos = self.position
        if not any(pos.hands[us]):
            z = decimal(st.treasury[us])
            return f"{here}: {who} has no piece in reserve (buy one first: {who} has {z} zorkmid{'' if z == '1' else 's'})"
        royals = pos.royal_squares(us)
        if not royals:
            return f"{here}: {who} has no royal piece on the board to transfer next to"
        near = [k for k in royals if self._adjacent[k] >> to & 1]
        if not near:
            return (f"{here}: a reserve piece goes next to a royal piece of its side "
                    f"({', '.join(g.name(k) for k in royals)}), and {g.name(to)} is not")
        if all(self._attacked(k, us ^ 1) for k in near):
            return f"{here}: no transfer next to a royal piece in check ({', '.join(g.name(k) for k in near)})"
        return f"{here}: the transfer would leave {who}'s royal piece in check"

    def _why_not_now(self, verb: str) -> str:
        # the parser says why for the other verbs, in the words of the rules
        if verb == "setup" and self.rules.army is None:
            return f"armies are set up only in Army csipgs, not in {self.variant.name}"
        return ""

    def _view_fields(self) -> dict:
        st = self.state
        pv = self._pv
        hands = tuple(MappingProxyType({p.letter: n for p, n in zip(pv.pieces, self.position.hands[c]) if n})
                      for c in (WHITE, BLACK))
        return {"phase": st.phase, "treasuries": (st.treasury[WHITE], st.treasury[BLACK]), "hands": hands,
                "move_number": max(1, (st.ply + 1) // 2),
                "piece_names": MappingProxyType({letter: design for design, letter in self.types})}

    def _bought(self, legal) -> str | None:
        h = self.history
        for idx in range(len(h) - 1, max(-1, len(h) - 8), -1):
            a = h[idx]
            if a.kind == ActionKind.BUY and a.piece:
                letter = a.piece.lower()
                if any(x.kind == ActionKind.DROP and x.piece.lower() == letter for x in legal):
                    return letter
                return None
        return None

    def _repr_extra(self) -> str:
        st = self.state
        treasury = tuple(decimal(t) for t in st.treasury)
        return f", treasury={treasury!r}, designs={tuple(st.designs)!r}"

    # -- results ---------------------------------------------------------------------------------
    def _decide(self) -> Outcome | None:
        if self._outcome_cache is None:
            self._outcome_cache = (self._compute_outcome(),)
        return self._outcome_cache[0]

    def _compute_outcome(self) -> Outcome | None:
        st = self.state
        if st.phase == "setup":
            return None
        if st.army_result is not None:
            return st.army_result
        if st.phase == "design":
            # Nothing in the design phase changes the board or the opponent's reserve, treasury
            # or designs: the opponent's coming action phase is already decided.
            saved = (self.position, self._pv, self._legal_cache)
            try:
                self.state = _copy_state(st)
                self.position = self.position.copy()
                self._end_turn()
                self._legal_cache = None
                result = self._action_outcome(decisive_only=True)
            finally:
                self.state = st
                self.position, self._pv, self._legal_cache = saved
            return result
        return self._action_outcome()

    def _action_outcome(self, decisive_only: bool = False, can_act: bool = False) -> Outcome | None:
        """The ending in an action phase (``decisive_only``: a win, loss or stalemate only;
        ``can_act``: the side to act is known to have an action, and its royal pieces)."""
        st = self.state
        pos = self.position
        us = st.turn

        def royals_lost():
            if can_act:
                return None
            return next((c for c in (us, us ^ 1) if not pos.royal_squares(c)), None)

        def has_actions() -> bool:
            if can_act:
                return True
            if not (self._protected(us) and self._doublemovers(us ^ 1, pos)) and pos.has_legal_move(drops=False):
                return True          # a move is an action: no need to list them all
            actions = self._generate()
            if not decisive_only:
                self._legal_cache = actions
            return bool(actions)

        return self._chess_rules_outcome(
            us, royals_lost=royals_lost, has_actions=has_actions,
            checked=lambda: any(self._attacked(k, us ^ 1) for k in self._protected(us)), quiet=st.quiet,
            repeated=lambda: self._keys.count(self._keys[-1]) >= self.variant.repetitions,
            decisive_only=decisive_only)

    # -- notation ------------------------------------------------------------------------------
    def san(self, action: Action) -> str:
        """Readable notation: Ne4, Rxd5, Nc3-e4 when two can go, N@e4, buy:N, design:3=W ..."""
        if action.kind not in (ActionKind.MOVE, ActionKind.CAPTURE):
            return action.text
        g = self.geometry
        pos = self.position
        if action.code < 0:
            double = action.detail_as(DoubleMove)
            frm, mid, _, _ = decode(double.first)
            to = decode(double.second)[1]
            text = f"{action.piece.upper()}{g.name(frm)}-{g.name(mid)}-{g.name(to)}"
        else:
            frm, to, _, _ = decode(action.code)
            dis = self._disambiguation(frm, self._rivals(frm, to))
            text = action.piece.upper() + dis + ("x" if action.kind == ActionKind.CAPTURE else "") + g.name(to)
        if self.state.phase == "action" and _listed(action, self.legal_actions()) and self._checks(action):
            kept = (self._legal_cache, self._outcome_cache)
            before = self.state
            self._push(action)
            try:
                o = self.outcome()
                text += "#" if o is not None and o.termination is Termination.CHECKMATE else "+"
                after = self._outcome_cache
            finally:
                self.pop()
                self._legal_cache, self._outcome_cache = kept      # the same position again
            if self.resigned is None and after is not None:
                self._probe = (before, action, after)   # the commit that follows knows the ending
        return text

    def _checks(self, action: Action) -> bool:
        """Whether the move ``action`` attacks the opponent's royal piece (played on the
        position alone and taken back: the game's own push copies the whole state)."""
        pos = self.position
        mover = self.state.turn
        steps = (action.code,) if action.code >= 0 else tuple(action.detail_as(DoubleMove))
        for m in steps:
            pos.push(m)
        try:
            return any(self._attacked(k, mover, pos) for k in pos.royal_squares(mover ^ 1))
        finally:
            for _ in steps:
                pos.pop()


# -- helpers ---------------------------------------------------------------------------------------
def _listed(action: Action, legal: list[Action]) -> bool:
    """``action in legal``, the same object looked for first (actions are handed out once and
    compared field by field otherwise)."""
    for a in legal:
        if a is action:
            return True
    return action in legal


def _copy_state(st: _State) -> _State:
    """A copy whose lists are its own (made slot by slot: ``dataclasses.replace`` looks the
    fields up again on every call, and a push copies the state once or twice)."""
    out = object.__new__(_State)
    _copy_slots(st, out)
    out.treasury = list(st.treasury)
    out.designs = list(st.designs)
    out.army_spent = list(st.army_spent)
    out.army_count = list(st.army_count)
    return out


_copy_slots = slot_copier(_State)


_DOUBLEMOVE_TYPES: dict[int, tuple] = {}   # id(variant) -> (variant, doublemove type indexes)


def _bits(bb: int):
    while bb:
        low = bb & -bb
        yield low.bit_length() - 1
        bb ^= low


def _targets(pos: Position, sq: int) -> tuple[int, int]:
    """(quiet, capture) target bitboards of the piece on ``sq``, ignoring royal safety."""
    return pos.targets_of(sq)


def _forward_only(design: str) -> bool:
    """True when every move of the design goes forward (Army csipgs chess's second-row rule)."""
    d = parse_design(design)
    return all(dy > 0 for comp in parse_betza(d.betza).components for _, dy in comp.vectors) \
        and all(comp.kind != "bent" for comp in parse_betza(d.betza).components)


__all__ = ["ATOMS", "Army", "ArmyError", "CsipgsGame", "CsipgsRules", "Drawless", "INITIAL_DESIGNS"]
