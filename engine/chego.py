"""Chego: the drop-only territory game (Alfred Pfeiffer, 1997; rules in ``chego.txt``).

The board starts empty (or as a FEN sets it); each turn the player to move drops one piece
from hand or passes; two passes in a row end the game. Nothing ever moves.

Definitions, per square, counted with :meth:`Position.attacks_of` ("attacked directly": where
the piece could capture if an enemy stood there; sliders stop at the first piece and at holes,
leapers jump over holes):

* a square is *neutral* when as many white as black pieces attack it (none counts too),
  otherwise it is *controlled* by the side with more attackers;
* a piece's *liberties* are the empty squares it attacks.

A drop of piece X on square s is legal when (the four conditions of the rules text):

1. s is empty and neutral (counted before the drop);
2. X on s attacks at least one empty square;
3. X on s attacks no piece (of either colour);
4. no piece of the dropping side loses its last liberty.

Capture: every enemy piece the drop leaves without liberties dies and is lifted off; any
number may die at once. Liberties are counted with X standing on s and before anything is
lifted (one instant), so a drop that would cost one of the dropper's own pieces its last
liberty is suicide and illegal even when it kills enemy pieces whose removal would free
squares again.

Scoring when both players have passed in a row: one point per empty square a side controls,
plus one per piece it captured; more points wins, equal points draw.

FEN: Fairy-Stockfish's, hands in ``[..]`` after the placement; the halfmove field counts the
passes since the last drop (every drop is irreversible, so the clock restarts at each) and a
seventh field, written only once something was captured, lists the captured pieces in FEN
case: ``Nb`` means Black has captured a white knight and White a black bishop. A piece type
the variant makes unlimited (``rules: {unlimited: [pawn]}`` or ``unlimited: true``) never
appears in the hand: both sides always have one more.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from .errors import FenError, IllegalMoveError, VariantError
from .contract import ActionKind
from .game import Action, FamilyGame, Outcome, find_action
from .moves import DROP, decode, encode
from .position import BLACK, WHITE, Position

_RULE_KEYS = {"unlimited"}
PASS = Action("pass", ActionKind.PASS)


@dataclass(frozen=True, slots=True)
class _Analysis:
    """What one position's drops depend on, computed once per ply."""

    attacks: dict            # square -> bitboard the piece there attacks
    white: list              # per square: number of white pieces attacking it
    black: list              # per square: number of black pieces attacking it
    drops: dict              # type index -> {square: killed squares (tuple)}


class ChegoGame(FamilyGame):
    """A game of Chego on any board, with any pieces (see the module docstring)."""

    family = "chego"
    hand_word = "hand"
    SILENT_VERBS = {"pass": "passes the turn; two passes in a row end the game and the points are counted"}

    def __init__(self, variant, fen: str | None = None):
        self.variant = variant
        self.unlimited = _unlimited(variant)
        royal = [p.name for p in variant.pieces if p.royal]
        if royal:
            raise VariantError(f"variant {variant.name!r}: Chego has no royal pieces, but "
                               f"{', '.join(royal)} is royal (set royal: false)")
        text = variant.start_fen if fen is None else fen
        if not isinstance(text, str) or not text.strip():
            raise FenError("empty FEN")
        parts = text.split()
        self.position = Position.from_fen(variant, " ".join(parts[:6]))
        # captured[c]: piece codes (as on the board) that colour c has captured
        self.captured: list[list[int]] = [[], []]
        if len(parts) > 6:
            self._set_captured(parts[6], text)
        if len(parts) > 7:
            raise FenError(f"FEN {text!r}: more than seven fields")
        pos = self.position
        if pos.castling or pos.ep >= 0:
            raise FenError(f"FEN {text!r}: Chego has no castling and no en passant (write - -)")
        for c in (WHITE, BLACK):
            for t in self.unlimited:
                if pos.hands[c][t]:
                    raise FenError(f"FEN {text!r}: {variant.pieces[t].name} is unlimited in "
                                   f"{variant.name}; leave it out of the hand")
        self.start_fen = self.fen()
        self.history: list[Action] = []
        self._undo: list[tuple] = []
        self._analysis: _Analysis | None = None
        self._legal: list[Action] | None = None
        self.resigned: int | None = None
        T = pos.tables
        # Pieces whose attacks a drop can cut without dropping on an attacked square:
        # capturing lame leapers (block squares), bent riders (paths) and hoppers (screens).
        self._indirect = tuple(
            frozenset(t for t, pt in enumerate(T.pieces[c])
                      if any(cp for d, mv, cp in pt.hops)
                      or any(cp for legs in pt.lame for _, _, _, cp, _ in legs)
                      or any(cp for legs in pt.bent for _, _, _, _, cp in legs))
            for c in (WHITE, BLACK))

    # -- state -----------------------------------------------------------------------------
    @property
    def passes(self) -> int:
        """Passes since the last drop (2 ends the game)."""
        return self.position.halfmove

    def fen(self) -> str:
        text = self.position.fen()
        if self.captured[WHITE] or self.captured[BLACK]:
            text += " " + "".join(self._letter(code) for c in (BLACK, WHITE) for code in self.captured[c])
        return text

    def checked_royals(self) -> list[int]:
        return []

    def in_check(self) -> bool:
        return False

    def in_hand(self, color: int, t: int) -> bool:
        """True when ``color`` has a piece of type index ``t`` to drop."""
        return t in self.unlimited or self.position.hands[color][t] > 0

    def can_drop(self) -> bool:
        return bool(self.unlimited) or super().can_drop()

    def hand(self, color: int) -> dict[str, int | None]:
        """Piece letter -> pieces left in hand (None: unlimited)."""
        out: dict[str, int | None] = {}
        for t, p in enumerate(self.variant.pieces):
            if t in self.unlimited:
                out[p.letter] = None
            elif self.position.hands[color][t]:
                out[p.letter] = self.position.hands[color][t]
        return out

    # -- the board driver's views ------------------------------------------------------------
    def territory(self) -> dict[str, list[str]]:
        """Every empty square by who controls it: ``neutral``, ``white``, ``black`` (square
        names, a1 first)."""
        a = self._analyse()
        g = self.geometry
        out: dict[str, list[str]] = {"neutral": [], "white": [], "black": []}
        occ = self.occupancy()
        for sq in g.squares():
            if occ >> sq & 1:
                continue
            w, b = a.white[sq], a.black[sq]
            out["white" if w > b else "black" if b > w else "neutral"].append(g.name(sq))
        return out

    def drop_squares(self, letter: str) -> list[int]:
        """The squares where the side to move may drop the piece ``letter`` (either case),
        lowest first; empty when it has none in hand or the game is over."""
        t = self.variant.piece_index(letter)
        if self.outcome() is not None or not self.in_hand(self.turn, t):
            return []
        return sorted(self._analyse().drops[t])

    def points(self) -> tuple[int, int]:
        """(white, black): controlled empty squares plus captured pieces, as if the game
        ended now."""
        terr = self.territory()
        return (len(terr["white"]) + len(self.captured[WHITE]),
                len(terr["black"]) + len(self.captured[BLACK]))

    def describe(self) -> dict:
        w, b = self.points()
        return {
            "points": {"white": w, "black": b},
            "captured": {"white": [self._letter(c) for c in self.captured[WHITE]],
                         "black": [self._letter(c) for c in self.captured[BLACK]]},
            "territory": self.territory(),
            "passes": self.passes,
            "hands": {"white": self.hand(WHITE), "black": self.hand(BLACK)},
        }

    # -- actions ---------------------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        if self._legal is None:
            if self.outcome() is not None:
                self._legal = []
            else:
                a = self._analyse()
                out = [self._drop_action(t, sq, kills)
                       for t in sorted(a.drops) for sq, kills in sorted(a.drops[t].items())]
                if not (out and self._before_first_drop()):
                    out.append(PASS)
                self._legal = out
        return self._legal

    def _before_first_drop(self) -> bool:
        """White to move on an empty board with nothing captured: the rules text's "the white
        player starts by dropping one of his pieces", so White may not pass (unless no drop
        is possible at all, which would leave the game no way on)."""
        return (self.turn == WHITE and not self.occupancy()
                and not self.captured[WHITE] and not self.captured[BLACK])

    def _drop_action(self, t: int, sq: int, kills: tuple) -> Action:
        letter = self.variant.pieces[t].letter
        board = self.position.board
        return Action(f"{letter.upper()}@{self.geometry.name(sq)}", ActionKind.DROP, frozenset(kills),
                      frozenset({sq}), encode(t, sq, 0, DROP), letter,
                      tuple((k, self._letter(board[k])) for k in kills), drop=letter)   # the victims: (square, letter)

    def parse(self, text: str) -> Action:
        """The legal action written ``text``: ``N@e4`` (any case) or ``pass``."""
        t = text.strip()
        found = find_action(self.legal_actions(), t)
        if found is not None:
            return found
        if self.outcome() is not None:
            raise IllegalMoveError(f"{text!r}: the game is over ({self.outcome().reason})")
        raise IllegalMoveError(f"{text!r} is not a legal action in {self.fen()}: {self.why_illegal(t)}")

    def why_illegal(self, text: str) -> str:
        """Which rule forbids the drop written ``text`` (for messages and prompts); "" when
        it is legal."""
        v, g, pos = self.variant, self.geometry, self.position
        if self.outcome() is not None:
            return f"the game is over ({self.outcome().reason})"
        if text.strip().lower() == "pass" and self._before_first_drop():
            return "White starts the game by dropping a piece; passing is possible from Black's first turn on"
        if "@" not in text:
            return "write a drop as N@e4, or pass"
        letter, _, name = text.partition("@")
        try:
            t = v.piece_index(letter)
            sq = g.parse(name)
        except (VariantError, ValueError) as exc:
            return str(exc)
        who = "White" if self.turn == WHITE else "Black"
        if not self.in_hand(self.turn, t):
            return f"{who} has no {v.pieces[t].name} in hand"
        if pos.board[sq]:
            return f"{g.name(sq)} is occupied"
        a = self._analyse()
        if a.white[sq] != a.black[sq]:
            return (f"{g.name(sq)} is not neutral (attacked by {a.white[sq]} white and "
                    f"{a.black[sq]} black pieces)")
        att = self._stone_attacks(t, sq)
        occ = self.occupancy()
        if att & occ:
            hit = ", ".join(g.name(s) for s in g.squares_of(att & occ))
            return f"a {v.pieces[t].name} on {g.name(sq)} would attack the piece(s) on {hit}"
        if not att & ~occ & ~(1 << sq) & g.mask:
            return f"a {v.pieces[t].name} on {g.name(sq)} would attack no empty square"
        if self._victims(sq, a) is None:
            return (f"a drop on {g.name(sq)} would leave one of {who}'s pieces without an attacked "
                    "empty square (suicide)")
        return ""

    def _push(self, action: Action) -> None:
        pos = self.position
        us = pos.turn
        killed: tuple = ()
        passes = pos.halfmove
        halfmove = passes + 1                        # the halfmove field counts the passes in a row
        if action.kind != ActionKind.PASS:
            t, sq, _, _ = decode(action.code)
            pos.put_code(sq, (t + 1) * 2 + us)
            if t not in self.unlimited:
                pos.hands[us][t] -= 1
            killed = tuple((k, pos.take_code(k)) for k in sorted(action.lifts))
            self.captured[us].extend(code for _, code in killed)
            halfmove = 0
        pos.set_turn(us ^ 1, halfmove=halfmove, fullmove=pos.fullmove + (us == BLACK))
        self._undo.append((killed, passes))
        self.history.append(action)
        self._analysis = self._legal = None

    def pop(self) -> Action:
        if not self.history:
            raise IllegalMoveError("no action to take back")
        action = self.history.pop()
        killed, passes = self._undo.pop()
        pos = self.position
        us = pos.turn ^ 1
        pos.set_turn(us, halfmove=passes, fullmove=pos.fullmove - (us == BLACK))
        if action.kind != ActionKind.PASS:
            t, sq, _, _ = decode(action.code)
            pos.take_code(sq)
            if t not in self.unlimited:
                pos.hands[us][t] += 1
            for k, code in killed:
                pos.put_code(k, code)
            if killed:
                del self.captured[us][-len(killed):]
        self._analysis = self._legal = None
        self.resigned = None
        return action

    def _forget_outcome(self) -> None:
        self._analysis = self._legal = None

    def _copy_into(self, other) -> None:
        other.captured = [list(self.captured[0]), list(self.captured[1])]
        other._undo = list(self._undo)

    def _view_fields(self) -> dict:
        terr = self.territory()
        geo = self.geometry
        return {
            "hands": tuple(MappingProxyType(self.hand(c)) for c in (WHITE, BLACK)),
            "points": self.points(), "passes": self.passes,
            "territory": (frozenset(geo.parse(n) for n in terr["white"]),
                          frozenset(geo.parse(n) for n in terr["black"])),
        }

    def san(self, action: Action) -> str:
        return action.text

    # -- results ---------------------------------------------------------------------------
    def _decide(self) -> Outcome | None:
        if self.passes < 2:
            return None
        w, b = self.points()
        reason = f"both players passed: {w}-{b} points"
        if w == b:
            return Outcome("1/2-1/2", reason)
        return Outcome("1-0", reason, WHITE) if w > b else Outcome("0-1", reason, BLACK)

    # -- the rules -------------------------------------------------------------------------
    def _analyse(self) -> _Analysis:
        if self._analysis is not None:
            return self._analysis
        pos, g = self.position, self.geometry
        occ = self.occupancy()
        attacks = {sq: pos.attacks_of(sq) for sq in g.squares_of(occ)}
        counts = ([0] * g.size, [0] * g.size)
        for sq, att in attacks.items():
            n = counts[pos.board[sq] & 1]
            for s in g.squares_of(att & ~occ):
                n[s] += 1
        a = _Analysis(attacks, counts[WHITE], counts[BLACK], {})
        us = pos.turn
        types = [t for t in range(len(self.variant.pieces)) if self.in_hand(us, t)]
        for t in types:
            a.drops[t] = {}
        empty = ~occ & g.mask
        for sq in g.squares_of(empty):
            if a.white[sq] != a.black[sq]:
                continue                                    # condition 1
            free = empty & ~(1 << sq)
            fits = []
            for t in types:
                att = self._stone_attacks(t, sq)
                if att & free and not att & occ:            # conditions 2 and 3
                    fits.append(t)
            if not fits:
                continue
            victims = self._victims(sq, a)
            if victims is None:
                continue                                    # condition 4
            for t in fits:
                a.drops[t][sq] = victims
        self._analysis = a
        return a

    def _stone_attacks(self, t: int, sq: int) -> int:
        """What a piece of type ``t`` of the side to move would attack from the empty ``sq``."""
        pos = self.position
        pos.put_code(sq, (t + 1) * 2 + pos.turn)
        try:
            return pos.attacks_of(sq)
        finally:
            pos.take_code(sq)

    def _victims(self, sq: int, a: _Analysis):
        """The enemy pieces a drop on the empty ``sq`` leaves without liberties (sorted
        squares), or None when it would leave one of the dropper's own pieces so (suicide).
        Which piece is dropped does not matter: only the occupancy of ``sq`` changes."""
        pos = self.position
        us = pos.turn
        occ = self.occupancy()
        empty = ~occ & self.geometry.mask
        free = empty & ~(1 << sq)
        board = pos.board
        indirect = self._indirect
        pos.put_code(sq, 2 + us)
        try:
            victims = []
            for p, att in a.attacks.items():
                code = board[p]
                if not (att >> sq & 1 or (code >> 1) - 1 in indirect[code & 1]):
                    continue
                if not att & empty or pos.attacks_of(p) & free:
                    continue                    # never had a liberty, or keeps one
                if code & 1 == us:
                    return None
                victims.append(p)
            return tuple(victims)
        finally:
            pos.take_code(sq)

    # -- helpers ---------------------------------------------------------------------------
    def _letter(self, code: int) -> str:
        letter = self.variant.pieces[(code >> 1) - 1].letter
        return letter.upper() if code & 1 == WHITE else letter

    def _set_captured(self, field: str, fen: str) -> None:
        if field == "-":
            return
        letters = self.variant.letters
        for ch in field:
            if ch.lower() not in letters:
                raise FenError(f"FEN {fen!r}: captured piece {ch!r} is not a piece of {self.variant.name}")
            color = WHITE if ch.isupper() else BLACK
            # a white piece (upper case) was captured by Black, and the other way round
            self.captured[color ^ 1].append((letters.index(ch.lower()) + 1) * 2 + color)


def _unlimited(variant) -> frozenset[int]:
    """Type indexes of the pieces both sides have without limit (``rules: unlimited``)."""
    rules = variant.rules
    bad = set(rules) - _RULE_KEYS
    if bad:
        k = sorted(bad)[0]
        raise VariantError(f"variant {variant.name!r}: rules.{k}: unknown Chego rule "
                           f"(known: {', '.join(sorted(_RULE_KEYS))})")
    spec = rules.get("unlimited", False)
    if spec is True:
        return frozenset(range(len(variant.pieces)))
    if spec in (False, None):
        return frozenset()
    if not isinstance(spec, (list, tuple)) or not all(isinstance(n, str) for n in spec):
        raise VariantError(f"variant {variant.name!r}: rules.unlimited: {spec!r}: use true or a "
                           "list of piece names")
    return frozenset(variant.piece_index(n) for n in spec)
