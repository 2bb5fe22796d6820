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

from functools import reduce
from operator import or_
from types import MappingProxyType
from typing import NamedTuple

from .errors import FenError, IllegalMoveError, VariantError
from .contract import ActionKind, Termination
from .game import Action, FamilyGame, Outcome, Territory, find_action
from .geometry import bits
from .moves import DROP, decode, encode
from .position import BLACK, WHITE, Position

_RULE_KEYS = {"unlimited"}
PASS = Action("pass", ActionKind.PASS)


class _Analysis(NamedTuple):
    """What one position's drops and views depend on, computed once per ply."""

    attacks: dict            # occupied square -> bitboard the piece there attacks
    planes: tuple            # (white's, black's) attacker counts of every square, bit-sliced:
                             # bit sq of planes[c][i] is bit i of the count of colour c
    neutral: int             # empty squares attacked by as many white as black pieces
    white: int               # empty squares White controls (more white attackers)
    black: int               # empty squares Black controls
    legal: dict              # type index in hand -> bitboard of the squares it may be dropped on
    kills: dict              # legal drop square -> the squares of the pieces it kills (ascending);
                             # only squares that kill
    killing: int             # the squares of ``kills``
    doomed: dict             # square of a simple piece (see _Kinds) -> the empty squares whose
                             # filling kills it (a tuple, ascending); pieces with none left out
    blocked: dict            # code of a simple piece type -> the squares from which its reach
                             # holds a piece (kept for both colours, for the next position)

    def attackers(self, color: int, sq: int) -> int:
        """How many pieces of ``color`` attack ``sq``."""
        return sum((p >> sq & 1) << i for i, p in enumerate(self.planes[color]))


class _Kinds:
    """What the drop rules need to know of each piece code of a variant, once per move tables
    (shared by every game of the variant):

    * ``simple[code]``: the piece attacks by plain leaps and rides only (no capturing hop,
      bent or lame move), so that its attacks are its *reach* (``reach[code][sq]``: the
      leaps and the whole rays, as on an empty board) cut at the first piece of each ray:
      occupying a square only ever takes squares away, and only squares it attacked or
      that lay behind them. For such a piece, "attacks no piece" is "no piece in its
      reach", and then it attacks its whole reach;
    * ``behind[code]``: per square, the squares from which the reach covers it
      (``reach[code][x] >> sq & 1`` for x in ``behind[code][sq]``);
    * ``reaching[code]``: the squares where the reach is not empty;
    * ``simple_codes``: the simple codes of each colour; ``all_simple``: every piece is;
    * ``const[code]``: the attack table of a piece that only leaps (Position.constant_attacks);
    * ``cut(code, p)``: per square s, the squares whose occupation can take s from the piece
      standing on p (s itself and the squares before it on its rays).
    """

    def __init__(self, pos: Position):
        T, g = pos.tables, pos.geometry
        n = 2 * len(pos.variant.pieces) + 2
        size = g.size
        self.simple = [False] * n
        self.reach: list = [None] * n
        self.behind: list = [None] * n
        self.reaching = [0] * n
        self.const = [pos.constant_attacks(code) if code > 1 else None for code in range(n)]
        self.rays: list = [()] * n
        self.simple_codes: tuple[list, list] = ([], [])
        self._cut: dict = {}
        self._T = T
        for code in range(2, n):
            pt = T.pieces[code & 1][(code >> 1) - 1]
            if any(cp for _, _, cp in pt.hops) or any(e[3] for legs in pt.lame for e in legs) \
                    or any(e[4] for legs in pt.bent for e in legs):
                continue
            rays = tuple((d, T.ray[d] if lim == 0 else T.limited_ray(d, lim))
                         for d, mv, cp, lim in pt.rides if cp)
            reach = []
            for sq in range(size):
                r = pt.lc[sq]
                for _, ray in rays:
                    r |= ray[sq]
                reach.append(r)
            if any(r >> sq & 1 for sq, r in enumerate(reach)):
                continue            # a piece reaching its own square: left to the general steps
            behind = [0] * size
            reaching = 0
            for sq, r in enumerate(reach):
                if r:
                    reaching |= 1 << sq
                while r:
                    low = r & -r
                    behind[low.bit_length() - 1] |= 1 << sq
                    r ^= low
            self.simple[code] = True
            self.simple_codes[code & 1].append(code)
            self.reach[code] = reach
            self.behind[code] = behind
            self.reaching[code] = reaching & g.mask
            self.rays[code] = rays
        self.all_simple = all(self.simple[2:])

    def cut(self, code: int, p: int) -> list:
        key = code, p
        out = self._cut.get(key)
        if out is None:
            ray = self._T.ray
            out = [1 << s for s in range(len(self.reach[code]))]
            for d, rays in self.rays[code]:
                r = b = rays[p]
                while b:
                    low = b & -b
                    s = low.bit_length() - 1
                    out[s] |= r & ~ray[d][s]
                    b ^= low
            self._cut[key] = out
        return out


_KINDS: dict[int, tuple] = {}


def _add(planes: list, x: int) -> None:
    """Add 1 to the bit-sliced counter ``planes`` on every square of ``x``."""
    i = 0
    while x:
        if i == len(planes):
            planes.append(x)
            return
        v = planes[i]
        planes[i] = v ^ x
        x &= v
        i += 1


def _sub(planes: list, x: int) -> None:
    """Take 1 from the bit-sliced counter ``planes`` on every square of ``x`` (each at least 1)."""
    i = 0
    while x:
        v = planes[i]
        planes[i] = v ^ x
        x &= ~v
        i += 1


def _kinds(pos: Position) -> _Kinds:
    """The :class:`_Kinds` of the position's move tables (built once per tables)."""
    T = pos.tables
    hit = _KINDS.get(id(T))
    if hit is not None and hit[0] is T:
        return hit[1]
    if len(_KINDS) >= 64:
        _KINDS.clear()
    k = _Kinds(pos)
    _KINDS[id(T)] = (T, k)
    return k


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
        self._after: tuple | None = None        # what _analyse_after starts from, or None
        self._legal: list[Action] | None = None
        self._drop_set: tuple | None = None     # (analysis, its drop squares)
        self.resigned: int | None = None
        self._kinds = _kinds(pos)
        # drop actions made so far, shared by copies: the same drop is one object in every
        # position. _drop_rows[type][square]: the drop that kills nothing (or None);
        # _drop_kills[(type, square, killed squares, their piece codes)]: the others.
        self._drop_rows: list[list[Action | None]] = [[None] * self.geometry.size for _ in variant.pieces]
        self._drop_kills: dict = {}
        self._hand_views: dict = {}             # both hands' counts -> the view's hands (shared too)

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
        name = self.geometry.name
        return {"neutral": [name(s) for s in bits(a.neutral)], "white": [name(s) for s in bits(a.white)],
                "black": [name(s) for s in bits(a.black)]}

    def drop_squares(self, letter: str) -> list[int]:
        """The squares where the side to move may drop the piece ``letter`` (either case),
        lowest first; empty when it has none in hand or the game is over."""
        t = self.variant.piece_index(letter)
        if self.outcome() is not None or not self.in_hand(self.turn, t):
            return []
        return bits(self._analyse().legal[t])

    def points(self) -> tuple[int, int]:
        """(white, black): controlled empty squares plus captured pieces, as if the game
        ended now."""
        a = self._analyse()
        return (a.white.bit_count() + len(self.captured[WHITE]),
                a.black.bit_count() + len(self.captured[BLACK]))

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
                rows = self._drop_rows
                killing = a.killing
                out: list[Action] = []
                append = out.append
                for t, bb in a.legal.items():
                    row = rows[t]
                    while bb:
                        low = bb & -bb
                        bb ^= low
                        act = row[low.bit_length() - 1]
                        if act is None or low & killing:
                            sq = low.bit_length() - 1
                            act = self._drop_action(t, sq, a.kills.get(sq, ()))
                        append(act)
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
        """The drop of type ``t`` on ``sq`` killing the pieces on ``kills``: made once, then
        found again (actions are immutable)."""
        board = self.position.board
        key = (t, sq, kills, tuple(board[k] for k in kills)) if kills else None
        act = self._drop_rows[t][sq] if key is None else self._drop_kills.get(key)
        if act is None:
            letter = self.variant.pieces[t].letter
            act = Action(f"{letter.upper()}@{self.geometry.name(sq)}", ActionKind.DROP, frozenset(kills),
                         frozenset({sq}), encode(t, sq, 0, DROP), letter,
                         tuple((k, self._letter(board[k])) for k in kills), drop=letter)   # the victims: (square, letter)
            if key is None:
                self._drop_rows[t][sq] = act
            else:
                self._drop_kills[key] = act
        return act

    def parse(self, text: str) -> Action:
        """The legal action written ``text``: ``N@e4`` (any case) or ``pass``."""
        t = text.strip()
        found = find_action(self.legal_actions(), t)
        if found is not None:
            return found
        out = self.outcome()
        if out is not None:
            raise IllegalMoveError(f"{text!r}: the game is over ({out.reason})")
        raise IllegalMoveError(f"{text!r} is not a legal action in {self.fen()}: {self.why_illegal(t)}")

    def why_illegal(self, text: str) -> str:
        """Which rule forbids the drop written ``text`` (for messages and prompts); "" when
        it is legal."""
        v, g, pos = self.variant, self.geometry, self.position
        out = self.outcome()
        if out is not None:
            return f"the game is over ({out.reason})"
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
        w, b = a.attackers(WHITE, sq), a.attackers(BLACK, sq)
        if w != b:
            return f"{g.name(sq)} is not neutral (attacked by {w} white and {b} black pieces)"
        occ = self.occupancy()
        att = pos.attacks_from((t + 1) * 2 + self.turn, sq, occ | 1 << sq)
        if att & occ:
            hit = ", ".join(g.name(s) for s in g.squares_of(att & occ))
            return f"a {v.pieces[t].name} on {g.name(sq)} would attack the piece(s) on {hit}"
        if not att & ~occ & ~(1 << sq) & g.mask:
            return f"a {v.pieces[t].name} on {g.name(sq)} would attack no empty square"
        if self._victims(sq, a) is None:
            return (f"a drop on {g.name(sq)} would leave one of {who}'s pieces without an attacked "
                    "empty square (suicide)")
        return ""

    def why_move_refused(self, frm: int, to: int | None) -> str:
        """Pieces are dropped, never moved; one leaves the board only when a drop smothers it."""
        out = self.outcome()
        if out is not None:
            return f"the game is over ({out.result}, {out.reason})"
        g = self.geometry
        if not self.position.board[frm]:
            return f"there is no piece on {g.name(frm)}"
        if to == frm or any(frm in a.lifts for a in self.legal_actions()):
            return ""               # a victim of a drop that is under way
        p, c = self.piece_map()[frm]
        who = f"{('white', 'black')[c]} {self.variant.pieces[self.variant.piece_index(p)].name}"
        if to is None:
            return (f"the {who} on {g.name(frm)} stays where it is: in Chego a piece leaves the board "
                    "only when a drop smothers it")
        return (f"the {who} on {g.name(frm)} cannot go to {g.name(to)}: in Chego pieces are dropped "
                "from the hand, never moved")

    def why_drop_refused(self, sq: int) -> str:
        """A piece set down on the empty square ``sq`` (a drop the rules forbid): which rule
        forbids it, for the pieces in hand that could go there."""
        out = self.outcome()
        if out is not None:
            return f"the game is over ({out.result}, {out.reason})"
        name = self.geometry.name(sq)
        if not any(self.in_hand(self.turn, t) for t in range(len(self.variant.pieces))):
            return f"{('White', 'Black')[self.turn]} has no piece in hand to drop on {name}"
        reasons = []
        for t, p in enumerate(self.variant.pieces):
            if self.in_hand(self.turn, t):
                why = self.why_illegal(f"{p.letter.upper()}@{name}")
                if not why:
                    return ""
                reasons.append(why)
        return reasons[0] if len(set(reasons)) == 1 else "; ".join(dict.fromkeys(reasons))

    def _push(self, action: Action) -> None:
        pos = self.position
        us = pos.turn
        killed: tuple = ()
        sq = -1                                      # the square dropped on (-1: a pass)
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
        a = self._analysis
        self._after = None if a is None else (a, sq, killed)
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
        self._analysis = self._legal = self._after = None
        self.resigned = None
        return action

    def _forget_outcome(self) -> None:
        self._analysis = self._legal = self._after = None

    def _copy_into(self, other) -> None:
        other.captured = [list(self.captured[0]), list(self.captured[1])]
        other._undo = list(self._undo)

    def _view_fields(self) -> dict:
        a = self._analyse()
        hands = self.position.hands
        key = (*hands[WHITE], *hands[BLACK])
        views = self._hand_views.get(key)
        if views is None:
            views = self._hand_views[key] = (MappingProxyType(self.hand(WHITE)), MappingProxyType(self.hand(BLACK)))
        return {
            "hands": views,
            "points": self.points(), "passes": self.passes,
            "territory": (frozenset(bits(a.white)), frozenset(bits(a.black))),
        }

    def _drop_squares(self) -> frozenset[int]:
        """The squares some piece in hand may be dropped on (the analysis knows them without
        listing the drops; the view and the LED scene both ask, once per position)."""
        a = self._analyse()
        known = self._drop_set
        if known is None or known[0] is not a:
            known = self._drop_set = (a, frozenset(bits(reduce(or_, a.legal.values(), 0))))
        return known[1]

    def _drop_fields(self, out: Outcome | None) -> tuple[frozenset[int], frozenset[int], str | None]:
        return (frozenset() if out is not None else self._drop_squares()), frozenset(), None

    def next_drop_squares(self) -> frozenset[int]:
        return frozenset() if self.outcome() is not None else self._drop_squares()

    def _drops_now(self) -> list[Action]:
        legal = self.legal_actions()
        return legal[:-1] if legal and legal[-1] is PASS else legal    # every other action is a drop

    def next_drops(self) -> list[Action]:
        return [] if self.outcome() is not None else self._drops_now()

    def san(self, action: Action) -> str:
        return action.text

    # -- results ---------------------------------------------------------------------------
    def _decide(self) -> Outcome | None:
        if self.passes < 2:
            return None
        w, b = self.points()
        if w == b:
            return Outcome.draw(Termination.TERRITORY, Territory(w, b))
        return Outcome.win(WHITE if w > b else BLACK, Termination.TERRITORY, Territory(w, b))

    # -- the rules -------------------------------------------------------------------------
    def _analyse(self) -> _Analysis:
        """The analysis of the position: worked out from the previous position's when the last
        push left it (:meth:`_analyse_after`), else from nothing (:meth:`_analyse_full`)."""
        if self._analysis is None:
            after, self._after = self._after, None
            self._analysis = self._analyse_full() if after is None else self._analyse_after(*after)
        return self._analysis

    def _analyse_full(self) -> _Analysis:
        """The analysis computed from the position alone."""
        pos = self.position
        board = pos.board
        occ = pos.occ[0] | pos.occ[1]
        empty = ~occ & self.geometry.mask
        K = self._kinds
        simple, const = K.simple, K.const
        attacks_from = pos.attacks_from
        attacks = {}
        planes: tuple[list, list] = ([], [])
        doomed = {}
        bb = occ
        while bb:
            low = bb & -bb
            bb ^= low
            p = low.bit_length() - 1
            code = board[p]
            tab = const[code]
            att = tab[p] if tab is not None else attacks_from(code, p, occ)
            attacks[p] = att
            _add(planes[code & 1], att)
            lib = att & empty
            if not lib or not simple[code]:
                continue                         # no empty square to lose (condition 4), or not simple
            if not lib & (lib - 1):
                doomed[p] = (lib.bit_length() - 1,)     # its only one: filling it kills
            elif tab is None:
                found = self._doomed(code, p, att, lib, occ)
                if found:
                    doomed[p] = found
        return self._finish(attacks, planes, doomed, {}, occ, empty)

    def _doomed(self, code: int, p: int, att: int, lib: int, occ: int) -> tuple:
        """The empty squares whose filling leaves the simple piece ``code`` on ``p``, which
        attacks ``att`` and the empty squares ``lib``, without an empty attacked square."""
        if not lib:
            return ()
        if not lib & (lib - 1):
            return (lib.bit_length() - 1,)
        if self._kinds.const[code] is not None:
            return ()                            # a leaper keeps the others
        # A rider with several loses them all to one square only if that square cuts both its
        # lowest and its highest one (see _Kinds.cut); those are checked exactly.
        cuts = self._kinds.cut(code, p)
        cand = lib & cuts[(lib & -lib).bit_length() - 1] & cuts[lib.bit_length() - 1]
        out = []
        attacks_from = self.position.attacks_from
        while cand:
            c = cand & -cand
            cand ^= c
            if not attacks_from(code, p, occ | c) & lib & ~c:
                out.append(c.bit_length() - 1)
        return tuple(out)

    def _analyse_after(self, a: _Analysis, sq: int, killed: tuple) -> _Analysis:
        """The analysis after a drop on ``sq`` that killed ``killed`` ((square, code) pairs),
        or after a pass (``sq`` -1), worked out from ``a``, the analysis before it: only the
        pieces whose attacks or empty attacked squares the drop changed are looked at again
        (those attacking ``sq`` or a killed piece's square, and any that is not simple)."""
        pos = self.position
        occ = pos.occ[0] | pos.occ[1]
        empty = ~occ & self.geometry.mask
        if sq < 0:
            return self._finish(a.attacks, a.planes, a.doomed, dict(a.blocked), occ, empty)
        board = pos.board
        K = self._kinds
        simple, const = K.simple, K.const
        attacks_from = pos.attacks_from
        attacks = dict(a.attacks)
        planes = (list(a.planes[0]), list(a.planes[1]))
        doomed = dict(a.doomed)
        touched = 1 << sq
        for k, code in killed:
            touched |= 1 << k
            _sub(planes[code & 1], attacks.pop(k))
            doomed.pop(k, None)
        code = board[sq]
        tab = const[code]
        att = tab[sq] if tab is not None else attacks_from(code, sq, occ)
        attacks[sq] = att
        _add(planes[code & 1], att)
        if simple[code]:
            found = self._doomed(code, sq, att, att & empty, occ)
            if found:
                doomed[sq] = found
        for p, before in a.attacks.items():
            code = board[p]
            if not (before & touched or not simple[code]) or p not in attacks:
                continue
            tab = const[code]
            att = tab[p] if tab is not None else attacks_from(code, p, occ)
            if att != before:
                planes_c = planes[code & 1]
                _sub(planes_c, before)
                _add(planes_c, att)
                attacks[p] = att
            if simple[code]:
                found = self._doomed(code, p, att, att & empty, occ)
                if found:
                    doomed[p] = found
                else:
                    doomed.pop(p, None)
        if killed:
            blocked = {}                         # pieces left: worked out again
        else:
            behind = K.behind
            blocked = {c: bb | behind[c][sq] for c, bb in a.blocked.items()}
        return self._finish(attacks, planes, doomed, blocked, occ, empty)

    def _finish(self, attacks: dict, planes: tuple, doomed: dict, blocked: dict, occ: int,
                empty: int) -> _Analysis:
        """The analysis from each piece's attacks, the attack counts and the squares that kill
        simple pieces: territory, and the drops of the side to move (``blocked`` holds
        what is known of each piece type's blocked squares, and gets the rest)."""
        pos = self.position
        board = pos.board
        K = self._kinds
        simple = K.simple
        attacks_from = pos.attacks_from
        white, black = planes
        n = max(len(white), len(black))
        if len(white) < n:
            white = white + [0] * (n - len(white))
        if len(black) < n:
            black = black + [0] * (n - len(black))
        more_w = more_b = 0
        same = -1
        for i in range(n - 1, -1, -1):           # compare the counts, highest bit first
            w, b = white[i], black[i]
            more_w |= same & w & ~b
            more_b |= same & b & ~w
            same &= ~(w ^ b)
        neutral = same & empty                    # condition 1
        # conditions 2 and 3, per type in hand
        us = pos.turn
        hand, unlimited = pos.hands[us], self.unlimited
        fits = {}
        every = 0
        squares = None
        for t in range(len(hand)):
            if not hand[t] and t not in unlimited:
                continue
            code = (t + 1) * 2 + us
            if simple[code]:
                # its reach must hold no piece (then it attacks the whole reach, all empty)
                bl = blocked.get(code)
                if bl is None:
                    if squares is None:
                        squares = bits(occ)
                    bl = blocked[code] = reduce(or_, map(K.behind[code].__getitem__, squares), 0)
                f = neutral & K.reaching[code] & ~bl
            else:
                f = 0
                for sq in bits(neutral):
                    b = 1 << sq
                    att = attacks_from(code, sq, occ | b)
                    if att & empty & ~b and not att & occ:
                        f |= b
            fits[t] = f
            every |= f
        if len(blocked) < len(K.simple_codes[0]) + len(K.simple_codes[1]):
            # every simple type's, for the next position's analysis to start from
            if squares is None:
                squares = bits(occ)
            for code in K.simple_codes[0] + K.simple_codes[1]:
                if code not in blocked:
                    blocked[code] = reduce(or_, map(K.behind[code].__getitem__, squares), 0)
        # condition 4 and the kills
        kill: dict = {}                           # square -> the simple pieces its filling kills
        killing = 0
        for p in sorted(doomed):
            for sq in doomed[p]:
                kill.setdefault(sq, []).append(p)
                killing |= 1 << sq
        others = [] if K.all_simple else [(p, code, att & empty) for p, att in attacks.items()
                                          if not simple[code := board[p]] and att & empty]
        kills = {}
        bad = 0
        for sq in bits(every & killing if not others else every):
            b = 1 << sq
            dead = kill.get(sq, [])
            if others:
                free = empty & ~b
                extra = [p for p, code, lib in others if not attacks_from(code, p, occ | b) & free]
                if extra:
                    dead = sorted(dead + extra)
            if not dead:
                continue
            if any(board[k] & 1 == us for k in dead):
                bad |= b                         # suicide
            else:
                kills[sq] = tuple(dead)
        if bad:
            fits = {t: f & ~bad for t, f in fits.items()}
        killing = 0
        for sq in kills:
            killing |= 1 << sq
        return _Analysis(attacks, planes, neutral, more_w & empty, more_b & empty, fits, kills, killing,
                         doomed, blocked)

    def _victims(self, sq: int, a: _Analysis):
        """The pieces a drop on the empty ``sq`` leaves without liberties (sorted squares), or
        None when one of them is the dropper's own (suicide), worked out piece by piece (the
        reading of the rules that _analyse computes in bulk). Which piece is dropped does not
        matter: only the occupancy of ``sq`` changes."""
        pos = self.position
        us = pos.turn
        b = 1 << sq
        occ = self.occupancy() | b
        empty = ~self.occupancy() & self.geometry.mask
        free = empty & ~b
        victims = []
        for p, att in sorted(a.attacks.items()):
            code = pos.board[p]
            if not att & empty or pos.attacks_from(code, p, occ) & free:
                continue                    # never had a liberty, or keeps one
            if code & 1 == us:
                return None
            victims.append(p)
        return tuple(victims)

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
