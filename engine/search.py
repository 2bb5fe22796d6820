"""The built-in opponent: a search over the engine's own move generator, for every family.

Pure, like the rest of the engine: no clocks of its own (the caller passes a ``clock``
callable returning seconds, e.g. ``time.monotonic``), no threads, no I/O. The game passed in
is searched in place and left exactly as it was found.

* **Search**: iterative deepening negamax with alpha-beta, a transposition table keyed by
  Zobrist hashes, move ordering (the table's move, captures by most valuable victim / least
  valuable attacker, killer moves, a history table) and a quiescence search over captures
  and promotions. Families whose turn has several actions (a csipgs action and its design
  phase, the moves of a Cost Progressive turn) are searched as sequences: an action that
  leaves the same side to move continues the turn without costing depth, with fewer
  candidates the deeper into the turn (the turn is a beam through the budget), so the depth
  counts whole turns. In Cost Progressive the turns after the root's are narrow beams (their
  8 best-looking first actions by captures, checks and square gains, then 2, then 1), so
  that the opponent's whole reply is searched mid-game; quiescence looks at checks too (a
  check the other side cannot afford to meet is mate); the rest of the chosen turn is read
  from the transposition table instead of being searched again. A csipgs design phase that
  can only end is not a node of its own: the turn's design change is chosen at the root.
* **Evaluation**: material from values for any Betza piece (the csipgs cost formula of
  :mod:`engine.csipgs_cost`, 100 per zorkmid; a mobility estimate where the formula cannot
  price a piece: hoppers, bent riders, the giraffe's (1,4)), mobility as each piece's
  number of targets from its square on the empty board, pawn advance, royal safety (shelter
  and the back rank while the opponent has pieces; in the endgame the weaker royal is driven
  to the edge and the stronger one brought close). Chego: controlled empty squares plus
  captures, minus pieces short of liberties. csipgs: pieces in reserve and zorkmids in the
  treasury count (a little less than the pieces they can become), so the search weighs
  buying against moving and picks the square of a transfer; at the design phase a design
  whose mobility is cheap for its price replaces the weakest one.

Levels: ``depth`` caps the iterative deepening (in turns); ``seconds`` bounds the time. The
search checks the clock every few hundred nodes and answers with the best action of the last
completed depth, within the time given (the first depth, one ply, always completes: that
is what makes an answer possible even at tiny time limits). Every action it returns was
taken from the game's ``legal_actions()`` at that point.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Hashable, Protocol

from .contract import ActionKind, Game
from .csipgs import END as CSIPGS_END
from .moves import CASTLE, DROP, EN_PASSANT, NORMAL

if TYPE_CHECKING:       # pragma: no cover
    from .game import Action

INF = 10 ** 9
MATE = 10 ** 6
MATE_BOUND = MATE - 10 ** 4
WIN_POINTS = 2000          # a split result (3/5-2/5) is worth its point difference times this
CONTEMPT = 150            # a draw is worse than equal for the side the engine plays (it plays to win)
MASK64 = (1 << 64) - 1
EXACT, LOWER, UPPER = 0, 1, 2
CHECK_EVERY = 64           # nodes between clock readings
TT_SIZE = 1 << 18
PRUNING = True             # null-move pruning and late-move reductions (chess family)
NULL_MIN_DEPTH = 3         # the null move is tried this many turns from the horizon or more
NULL_R = 2                 # its reduction (one more from depth 6)
LMR_AFTER = 3              # quiet moves from this index on are reduced
CHECK_BONUS = 600          # Cost Progressive: a check's share of a move's quick score
COST_ROOT_WIDTH = 10       # Cost Progressive: the root's actions searched from two turns deep
COST_LEVEL2_ROOT_WIDTH = 5  # ... at level 2 (the weakest level that looks at the reply)
COST_REPLY_FIRST = 8       # Cost Progressive: first actions searched in a turn after the root's
Q_PLIES = 4                # quiescence of the generic families: actions deep at most
Q_WIDTH = 6                # ... and actions looked at a node
COST_FIRST_SHARE = 0.95    # Cost Progressive: the time left a turn's first search takes
COST_WIDER = 2             # Cost Progressive, level 4 up: wider searches of two turns before a third


class _Timeout(Exception):
    """The deadline passed in the middle of a depth."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a search found: the actions of the computer's whole turn, in order."""

    actions: tuple            # Actions, each legal after the ones before it
    score: int                # centipawns for the side to move (mate: +-(MATE - plies))
    depth: int                # the last completed depth (turns)
    nodes: int
    seconds: float            # by the clock passed in

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


# -- piece values ----------------------------------------------------------------------------------
def _empty_board_mobility(variant, piece, color: int = 0) -> list[int]:
    """Per square: how many squares the piece attacks or moves to from it on the empty board."""
    from .position import Position
    pos = Position(variant)
    t = variant.pieces.index(piece)
    out = []
    for sq in range(variant.geometry.size):
        if sq in variant.geometry.holes:
            out.append(0)
            continue
        pos._put(sq, (t + 1) * 2 + color)
        q, _ = pos.targets_of(sq)
        out.append((q | pos.attacks_of(sq)).bit_count())
        pos._remove(sq)
    return out


def betza_value(variant, piece) -> int:
    """A piece's value in centipawns (pawn 100): the csipgs price formula (100 per zorkmid)
    where it prices the piece, else an estimate from its mobility on the empty board."""
    if piece.pawn:
        return 100
    from .costprog import csipgs_value
    from .errors import EngineError
    try:
        return int(round(float(csipgs_value(piece.betza)) * 100))
    except (EngineError, ValueError):
        mob = _empty_board_mobility(variant, piece)
        squares = [m for sq, m in enumerate(mob) if sq not in variant.geometry.holes]
        avg = sum(squares) / max(1, len(squares))
        return int(40 * avg + 40)


class _PieceTables:
    """Per piece code (as on a Position's board): value and square bonuses, for one variant."""

    def __init__(self, variant):
        g = variant.geometry
        self.variant = variant
        n = len(variant.pieces)
        self.value = [0] * (2 * n + 2)
        self.sq_bonus: list[list[int]] = [[0] * g.size for _ in range(2 * n + 2)]
        self.royal_codes = []
        self.pawn_codes = []
        cf, cr = (g.files - 1) / 2, (g.ranks - 1) / 2
        self.edge = [0] * g.size             # distance from the centre, 0 in the middle
        for sq in range(g.size):
            self.edge[sq] = int(max(abs(g.file_of(sq) - cf), abs(g.rank_of(sq) - cr)))
        for t, p in enumerate(variant.pieces):
            for color in (0, 1):
                code = (t + 1) * 2 + color
                if p.royal:
                    self.royal_codes.append(code)
                    self.value[code] = 0
                    for sq in range(g.size):
                        rank = g.rank_of(sq) if color == 0 else g.ranks - 1 - g.rank_of(sq)
                        self.sq_bonus[code][sq] = -12 * rank      # the middlegame shelter
                    continue
                self.value[code] = betza_value(variant, p)
                if p.pawn:
                    self.pawn_codes.append(code)
                    for sq in range(g.size):
                        rank = g.rank_of(sq) if color == 0 else g.ranks - 1 - g.rank_of(sq)
                        adv = max(0, rank - 1)
                        centre = 4 - min(4, int(abs(g.file_of(sq) - cf)))
                        self.sq_bonus[code][sq] = adv * adv * 3 + centre * adv
                    continue
                mob = _empty_board_mobility(variant, p, color)
                real = [m for sq, m in enumerate(mob) if sq not in g.holes]
                avg = sum(real) / max(1, len(real))
                for sq in range(g.size):
                    self.sq_bonus[code][sq] = int(4 * (mob[sq] - avg))


# -- Zobrist keys ------------------------------------------------------------------------------------
class Zobrist:
    """Random 64-bit keys per (piece name, colour, square), side to move, castling and en passant;
    deterministic (seeded by the names), so the same position has the same key in any run."""

    def __init__(self, size: int):
        self.size = size
        self._pieces: dict[tuple[str, int], list[int]] = {}
        r = random.Random("fairyboard-zobrist")
        self.side = r.getrandbits(64)
        self.ep = [r.getrandbits(64) for _ in range(size)]
        self.castle_mult = r.getrandbits(64) | 1

    def piece(self, name: str, color: int) -> list[int]:
        keys = self._pieces.get((name, color))
        if keys is None:
            r = random.Random(f"{name}/{color}")
            keys = self._pieces[(name, color)] = [r.getrandbits(64) for _ in range(self.size)]
        return keys

    def castling(self, rights: int) -> int:
        return (rights * self.castle_mult) & MASK64 if rights else 0

    def of_position(self, pos) -> int:
        """The key of a Position's board, side, castling and en passant (from scratch)."""
        pieces = pos.variant.pieces
        k = 0
        for sq, c in enumerate(pos.board):
            if c:
                k ^= self.piece(pieces[(c >> 1) - 1].name, c & 1)[sq]
        if pos.turn:
            k ^= self.side
        k ^= self.castling(pos.castling)
        if pos.ep >= 0:
            k ^= self.ep[pos.ep]
        for color in (0, 1):
            for t, n in enumerate(pos.hands[color]):
                if n:
                    k ^= (self.piece(pieces[t].name, color)[0] * (n + 7)) & MASK64
        return k


# -- backends: how the search sees one family ----------------------------------------------------------
class _Backend(Protocol):
    """What the searcher asks of a family: :class:`_ChessBackend` (int moves on the Position)
    or :class:`_GameBackend` (Actions through the Game interface)."""

    family: str
    outcome_without_moves: bool     # terminal() finds every end without the move list
    no_captures: bool               # the quiescence search looks at no capture
    prunes: bool                    # null-move pruning and late-move reductions apply

    @property
    def key(self) -> int:
        """The position's hash (the transposition table's key)."""
        ...

    def side(self) -> int: ...
    def moves(self) -> list: ...
    def move_id(self, m: Any, /) -> Hashable: ...
    def push(self, m: Any, /) -> None: ...
    def pop(self) -> None: ...
    def is_noisy(self, m: Any, /) -> bool: ...
    def capture_score(self, m: Any, /) -> int: ...
    def terminal(self, moves: list | None, ply: int, root_side: int) -> int | None:
        """The score of a finished game for the side to move (``moves``: the legal moves, when
        listed), or None."""
        ...
    def evaluate(self) -> int: ...
    def in_check(self) -> bool: ...

    def null_ok(self) -> bool:
        """Whether passing the turn is a fair test (the null move: only where ``prunes``)."""
        ...

    def push_null(self) -> None:
        """Pass the turn; undone by pop() (only where ``null_ok()``)."""
        ...


class _ChessBackend:
    """Chess and its variants, on the Position's int moves (the fast path)."""

    family = "chess"
    outcome_without_moves = False     # mate and stalemate are found from the move list
    no_captures = False
    prunes = True                     # null-move pruning and late-move reductions apply

    def __init__(self, game, zobrist: Zobrist, tables: _PieceTables):
        self.game = game
        self.pos = pos = game.position
        self.variant = v = game.variant
        self.z = zobrist
        self.t = tables
        self.zk = [[0] * pos.geometry.size for _ in range(2 * len(v.pieces) + 2)]
        for ti, p in enumerate(v.pieces):
            for color in (0, 1):
                self.zk[(ti + 1) * 2 + color] = zobrist.piece(p.name, color)
        self.forward = (v.geometry.files, -v.geometry.files)
        self.key = zobrist.of_position(pos)
        self.keys: list[int] = []
        # keys of the positions played before (for repetitions)
        self.history_keys = _history_keys(game, zobrist)
        self.royal_rule = any(p.royal for p in v.pieces)
        self.codes = [c for c in range(2, 2 * len(v.pieces) + 2)]
        self.fifty = 2 * v.fifty_moves if v.fifty_moves else 0
        self.stalemate = (_points(v.stalemate_black_wins), _points(v.stalemate_white_wins))

    def side(self) -> int:
        return self.pos.turn

    def moves(self) -> list:
        return self.pos.legal_moves()

    def move_id(self, m):
        return m

    def push(self, m: int) -> None:
        pos = self.pos
        self.keys.append(self.key)
        old_castling, old_ep = pos.castling, pos.ep
        pos.push(m)
        _, code, captured, side_code = pos.stack[-1][:4]
        frm, to, extra, flag = m & 0xFF, (m >> 8) & 0xFF, (m >> 16) & 0xFF, m >> 24
        z = self.z
        k = self.key ^ z.side
        if flag == DROP:
            k = z.of_position(pos)
        else:
            zk = self.zk
            k ^= zk[code][frm] ^ zk[pos.board[to]][to]
            if captured:
                k ^= zk[captured][to]
            if flag == CASTLE:
                rto = frm + (1 if to > frm else -1)
                k ^= zk[side_code][extra - 1] ^ zk[side_code][rto]
            elif flag == EN_PASSANT:
                k ^= zk[side_code][to - self.forward[pos.turn ^ 1]]
            if pos.castling != old_castling:
                k ^= z.castling(old_castling) ^ z.castling(pos.castling)
            if old_ep >= 0:
                k ^= z.ep[old_ep]
            if pos.ep >= 0:
                k ^= z.ep[pos.ep]
        self.key = k

    def pop(self) -> None:
        self.pos.pop()
        self.key = self.keys.pop()

    def push_null(self) -> None:
        """Pass the turn (the null-move search's trial); undone by pop(). The fifty-move count
        starts again, so no repetition is looked for across the pass."""
        pos = self.pos
        self.keys.append(self.key)
        k = self.key ^ self.z.side
        if pos.ep >= 0:
            k ^= self.z.ep[pos.ep]
        pos.null_move()
        pos.halfmove = 0
        self.key = k

    def in_check(self) -> bool:
        return self.pos.in_check()

    def null_ok(self) -> bool:
        """Whether passing is a fair test: the side to move has a piece besides pawns and
        royals (with pawns alone, zugzwang makes a pass better than any move)."""
        pos, t = self.pos, self.t
        us = pos.turn
        return any(pos.pbb[c] for c in self.codes
                   if c & 1 == us and c not in t.royal_codes and c not in t.pawn_codes)

    def is_noisy(self, m: int) -> bool:
        flag = m >> 24
        return bool(self.pos.board[(m >> 8) & 0xFF]) and flag != CASTLE or flag == EN_PASSANT or \
            (flag == NORMAL and (m >> 16) & 0xFF != 0)

    def capture_score(self, m: int) -> int:
        """MVV-LVA, for ordering captures and promotions first."""
        pos = self.pos
        flag = m >> 24
        if flag == DROP or flag == CASTLE:
            return 0
        victim = pos.board[(m >> 8) & 0xFF]
        extra = (m >> 16) & 0xFF
        s = 0
        if victim:
            s = 10 * self.t.value[victim] - self.t.value[pos.board[m & 0xFF]] // 10 + 100000
        elif flag == EN_PASSANT:
            s = 100000 + 900
        if flag == NORMAL and extra:
            s += 50000 + self.t.value[(extra << 1)]
        return s

    def terminal(self, moves, ply: int, root_side: int) -> int | None:
        """The score of a finished game for the side to move, or None."""
        pos = self.pos
        us = pos.turn
        if self.royal_rule and not any(pos.pbb[c] for c in self.t.royal_codes if c & 1 == us):
            return -(MATE - ply)
        if not moves:
            if pos.in_check():
                return -(MATE - ply)
            w, b = self.stalemate[us]
            return _split_score(w, b, us, root_side)
        if self.fifty and pos.halfmove >= self.fifty:
            return _draw(us, root_side)
        if ply and self._repeats():
            return _draw(us, root_side)
        return None

    def _repeats(self) -> bool:
        """The position occurred before with the same side to move, back to the last
        irreversible move (in the search's path, then in the game)."""
        key = self.key
        path, hk = self.keys, self.history_keys
        n = self.pos.halfmove
        i = len(path) - 2
        while n >= 2:
            if i >= 0:
                k = path[i]
            elif len(hk) + i >= 0:
                k = hk[len(hk) + i]
            else:
                return False
            if k == key:
                return True
            i -= 2
            n -= 2
        return False

    def evaluate(self) -> int:
        pos = self.pos
        t = self.t
        value, bonus = t.value, t.sq_bonus
        pbb = pos.pbb
        mat = [0, 0]
        pos_score = [0, 0]
        for code in self.codes:
            bb = pbb[code]
            if not bb:
                continue
            c = code & 1
            mat[c] += value[code] * bb.bit_count()
            b = bonus[code]
            s = 0
            while bb:
                low = bb & -bb
                s += b[low.bit_length() - 1]
                bb ^= low
            pos_score[c] += s
        score = mat[0] - mat[1] + pos_score[0] - pos_score[1]
        score += _endgame(pos, t, mat)
        for c in (0, 1):
            for ti, n in enumerate(pos.hands[c]):
                if n:
                    v = value[(ti + 1) * 2 + c] * n
                    score += v if c == 0 else -v
        return score if pos.turn == 0 else -score


def _endgame(pos, t: _PieceTables, mat) -> int:
    """Royal safety by phase: with few enemy pieces left, the shelter bonus goes (the royal
    may come out), the weaker side's royal is driven to the edge and the stronger royal
    brought close (mop-up), so a won ending is won rather than drawn."""
    royals = [0, 0]
    rsq = [-1, -1]
    for c in t.royal_codes:
        bb = pos.pbb[c]
        if bb:
            royals[c & 1] += 1
            rsq[c & 1] = (bb & -bb).bit_length() - 1
    out = 0
    g = pos.geometry
    for strong in (0, 1):
        weak = strong ^ 1
        if rsq[weak] < 0:
            continue
        if mat[strong] - mat[weak] >= 250 and mat[weak] <= 800:
            e = t.edge[rsq[weak]]
            bonus = 20 * e
            if rsq[strong] >= 0:
                d = max(abs(g.file_of(rsq[strong]) - g.file_of(rsq[weak])),
                        abs(g.rank_of(rsq[strong]) - g.rank_of(rsq[weak])))
                bonus += 8 * (g.files - d)
                # undo the shelter penalty of the strong royal: it should come out now
                bonus -= t.sq_bonus[pos.board[rsq[strong]]][rsq[strong]]
            out += bonus if strong == 0 else -bonus
    return out


class _GameBackend:
    """Any family through the Game interface (csipgs, Chego, Cost Progressive)."""

    outcome_without_moves = True      # game.outcome() finds every end by itself
    prunes = False                    # turns of several actions: no passes, no reductions

    def __init__(self, game, zobrist: Zobrist, values: _ValueCache):
        self.game = game
        self.z = zobrist
        self.values = values
        self.family = game.family
        # Chego's captures (a drop that smothers) are rare and costly to list: its leaves are
        # judged as they stand
        self.no_captures = game.family == "chego"
        self._saved: list = []
        self._key_cache: tuple | None = None
        self.auto_end = game.family == "csipgs" and game.rules.buy_phase == "action"
        self.trusted = game.family in ("csipgs", "cost-progressive")
        self._ended: list[bool] = []

    def side(self) -> int:
        return self.game.turn

    def moves(self) -> list:
        return list(self.game.legal_actions())

    def move_id(self, a):
        return a.text

    def push(self, a) -> None:
        g = self.game
        if self.no_captures:
            # Chego: push() checks the action against the legal list; the parent's analysis is
            # kept across the child and put back after pop (the position is then the same), so
            # each sibling is not analysed again
            self._saved.append((g._analysis, g._legal))
        if self.trusted:
            # every action pushed here was taken from this state's legal list (moves()):
            # checking it against the list again cost a third of the search's time
            g._push(a)
        else:
            g.push(a)
        if self.auto_end:
            # csipgs: a design phase whose only action is 'end' is not a node of its own (the
            # turn's design change is chosen at the root, by _design_change)
            st = g.state
            ended = st.phase == "design" and a.kind is not ActionKind.END and g.outcome() is None
            if ended:
                g._push(CSIPGS_END)              # always legal in a design phase
            self._ended.append(ended)

    def pop(self) -> None:
        g = self.game
        if self.auto_end and self._ended.pop():
            g.pop()
        g.pop()
        if self.no_captures:
            g._analysis, g._legal = self._saved.pop()

    @property
    def key(self) -> int:
        g = self.game
        pos = g.position
        k = self.z.of_position(pos)
        extra: tuple
        if self.family == "cost-progressive":
            st = g._state
            extra = (st.half & 1, st.spent, st.frozen, st.quiet >= 100)
        elif self.family == "csipgs":
            st = g.state
            extra = (st.turn, st.phase, tuple(st.treasury), tuple(st.designs), st.inventions)
        else:   # chego
            extra = (pos.turn, pos.halfmove, len(g.captured[0]), len(g.captured[1]))
        return (k ^ hash(extra)) & MASK64

    def in_check(self) -> bool:
        return self.game.in_check()

    def null_ok(self) -> bool:
        """Never: a turn of several actions has no null move (``prunes`` is False)."""
        return False

    def push_null(self) -> None:
        raise NotImplementedError(f"{self.family}: no null move in a turn of several actions")

    def is_noisy(self, a) -> bool:
        return a.kind in (ActionKind.CAPTURE, ActionKind.EN_PASSANT, ActionKind.PROMOTION) or (a.kind is ActionKind.DROP and bool(a.lifts))

    def quick_all(self, moves) -> list[tuple[int, bool]]:
        """Each move's gain without making it (for the beam through a Cost Progressive turn):
        the victim, the mover's square bonus, a promotion, and a check (which ends the turn);
        and whether it checks. 'end' and drops: (0, False)."""
        pos = self.game.position
        v = pos.variant
        board = pos.board
        by_code = self.values.by_code(v)
        occ = pos.occ[0] | pos.occ[1]
        royal = [0, 0]
        for c in (0, 1):
            for k in pos.royal_squares(c):
                royal[c] |= 1 << k
        attacks_from = pos.attacks_from
        out = []
        for a in moves:
            m = a.code
            if m < 0:
                out.append((0, False))
                continue
            frm, to, extra, flag = m & 0xFF, (m >> 8) & 0xFF, (m >> 16) & 0xFF, m >> 24
            code = board[frm]
            if not code or flag == DROP:
                out.append((0, False))
                continue
            val, bonus = by_code[code]
            score = bonus[to] - bonus[frm]
            victim = board[to]
            if victim:
                score += by_code[victim][0] + 1000
            if flag == NORMAL and extra:
                score += self.values.of(v.pieces[extra - 1], v) - val + 1000
            # does the piece attack an enemy royal from its new square? (asked of the
            # occupancy after the move: nothing is moved on the board)
            if flag != CASTLE and attacks_from(code, to, occ & ~(1 << frm) | 1 << to) & royal[(code & 1) ^ 1]:
                out.append((score + CHECK_BONUS, True))
            else:
                out.append((score, False))
        return out

    def capture_score(self, a) -> int:
        if a.kind in (ActionKind.CAPTURE, ActionKind.EN_PASSANT, ActionKind.PROMOTION):
            pm = self.game.position
            s = 100000
            to = next(iter(a.places), None)
            if to is not None and a.kind is ActionKind.CAPTURE:
                c = pm.board[to]
                if c:
                    s += 10 * self.values.of(pm.variant.pieces[(c >> 1) - 1], pm.variant)
            if a.kind is ActionKind.PROMOTION:
                s += 50000
            return s
        if a.kind is ActionKind.DROP and a.lifts:
            return 100000 + 100 * len(a.lifts)
        if a.kind is ActionKind.BUY:
            return 40000
        if a.kind is ActionKind.END:
            return 30000 if self.family == "csipgs" else -1
        return 0

    def terminal(self, moves, ply: int, root_side: int) -> int | None:
        o = self.game.outcome()
        if o is None:
            return None
        us = self.game.turn
        w, b = o.points()
        if w == b:
            return _draw(us, root_side)
        if o.winner is not None and abs(w - b) == 1:
            return (MATE - ply) if o.winner == us else -(MATE - ply)
        return _split_score(w, b, us, root_side)

    def evaluate(self) -> int:
        g = self.game
        if self.family == "chego":
            return _chego_eval(g)
        pos = g.position
        v = pos.variant
        vals = self.values
        by_code = vals.by_code(v)
        score = 0
        mat = [0, 0]
        for sq, c in enumerate(pos.board):
            if not c:
                continue
            val, bonus = by_code[c]
            x = val + bonus[sq]
            mat[c & 1] += val
            score += x if c & 1 == 0 else -x
        hand = 0.7 if self.family == "csipgs" else 0.9   # a reserve piece helps once transferred
        for color in (0, 1):
            for t, n in enumerate(pos.hands[color]):
                if n:
                    x = int(vals.of(v.pieces[t], v) * hand) * n
                    mat[color] += x
                    score += x if color == 0 else -x
        score += self._royal_room(pos, 0) - self._royal_room(pos, 1)
        if self.family == "csipgs":
            st = g.state
            tre = (float(st.treasury[0]) - float(st.treasury[1])) * 60
            score += int(tre)
            # several royals: each one beyond the last is a life in reserve
            r = [len(pos.royal_squares(0)), len(pos.royal_squares(1))]
            score += 150 * (r[0] - r[1])
        return score if g.turn == 0 else -score


    @staticmethod
    def _royal_room(pos, color: int) -> int:
        """Royal safety: a lone royal walled in by its own pieces is one check from a smothered
        mate (csipgs transfers land next to it), so squares to step to count."""
        royals = pos.royal_squares(color)
        if len(royals) != 1:
            return 0
        free = (_neighbours(pos.geometry)[royals[0]] & ~pos.occ[color]).bit_count()
        return (-90, -40, -10)[free] if free < 3 else 0


_NEIGHBOURS: dict = {}


def _neighbours(g) -> list[int]:
    """Per square of geometry ``g``: the bitboard of the squares a step away (holes left out)."""
    out = _NEIGHBOURS.get(g)
    if out is None:
        out = _NEIGHBOURS[g] = [g.neighbours(k) for k in range(g.size)]
    return out


class _ValueCache:
    """Values and square bonuses of piece types met during a game (csipgs designs appear as
    they are bought), keyed by the piece's moves."""

    def __init__(self):
        self._v: dict = {}
        self._t: dict = {}
        self._codes: tuple | None = None

    def by_code(self, variant) -> dict:
        """{piece code: (value, square bonuses)} for ``variant``'s pieces (the last variant
        asked for is kept: a csipgs purchase makes a new one)."""
        c = self._codes
        if c is not None and c[0] is variant:
            return c[1]
        d = {}
        for t, p in enumerate(variant.pieces):
            for color in (0, 1):
                d[(t + 1) << 1 | color] = self.tables(p, variant, color)
        self._codes = (variant, d)
        return d

    def of(self, piece, variant) -> int:
        key = (piece.betza, piece.royal, piece.pawn)
        v = self._v.get(key)
        if v is None:
            if piece.royal:
                v = 300
            else:
                v = betza_value(variant, piece)
            self._v[key] = v
        return v

    def tables(self, piece, variant, color: int):
        key = (piece.betza, piece.royal, piece.pawn, color)
        t = self._t.get(key)
        if t is None:
            val = self.of(piece, variant)
            g = variant.geometry
            if piece.royal:
                bonus = [-8 * (g.rank_of(sq) if color == 0 else g.ranks - 1 - g.rank_of(sq))
                         for sq in range(g.size)]
            else:
                mob = _empty_board_mobility(variant, piece, color)
                real = [m for sq, m in enumerate(mob) if sq not in g.holes]
                avg = sum(real) / max(1, len(real))
                bonus = [int(4 * (m - avg)) for m in mob]
                if piece.pawn:
                    bonus = [b + 3 * max(0, (g.rank_of(sq) if color == 0 else g.ranks - 1 - g.rank_of(sq)) - 1) ** 2
                             for sq, b in enumerate(bonus)]
            t = self._t[key] = (val, bonus)
        return t


def _chego_eval(game) -> int:
    """Chego: points (controlled empty squares plus captures) and liberties, for the side to move."""
    pos = game.position
    g = pos.geometry
    occ = pos.occ[0] | pos.occ[1]
    empty = ~occ & g.mask
    white = [0] * g.size
    black = [0] * g.size
    short = [0, 0]
    for sq in g.squares_of(occ):
        att = pos.attacks_of(sq)
        libs = att & empty
        counts = white if pos.board[sq] & 1 == 0 else black
        n = libs.bit_count()
        if n <= 1:
            short[pos.board[sq] & 1] += 1 if n == 1 else 0
        while libs:
            low = libs & -libs
            counts[low.bit_length() - 1] += 1
            libs ^= low
    w = b = 0
    for sq in g.squares_of(empty):
        if white[sq] > black[sq]:
            w += 1
        elif black[sq] > white[sq]:
            b += 1
    w += len(game.captured[0])
    b += len(game.captured[1])
    score = 100 * (w - b) - 30 * (short[0] - short[1])
    return score if pos.turn == 0 else -score


def _points(result: str) -> tuple[Fraction, Fraction]:
    a, b = result.split("-")
    return Fraction(a), Fraction(b)


def _draw(us: int, root_side: int) -> int:
    return -CONTEMPT if us == root_side else CONTEMPT


def _split_score(w, b, us: int, root_side: int) -> int:
    if w == b:
        return _draw(us, root_side)
    diff = (w - b) if us == 0 else (b - w)
    if abs(diff) == 1:
        return MATE // 2 if diff > 0 else -(MATE // 2)
    return int(diff * WIN_POINTS)


def _history_keys(game, z: Zobrist) -> list[int]:
    """Zobrist keys of the chess game's earlier positions (the current one excluded)."""
    from .position import Position
    try:
        pos = Position.from_fen(game.variant, game.start_fen)
    except Exception:
        return []
    out = []
    for a in game.history:
        out.append(z.of_position(pos))
        if a.code < 0:
            return []
        pos.push(a.code)
    return out


# -- the search ------------------------------------------------------------------------------------------
class Searcher:
    """A search with its transposition table, kept between moves of one game (or match)."""

    def __init__(self, *, tt_size: int = TT_SIZE):
        self.tt_size = tt_size
        self.tt: dict = {}
        self._zobrist: dict = {}
        self._tables: dict = {}
        self.values = _ValueCache()
        self.nodes = 0
        self.total_nodes = 0
        self.widen = 0          # Cost Progressive: how much wider than usual the beams are now
        self.root_width = COST_ROOT_WIDTH   # Cost Progressive: the root's actions searched two turns deep

    # -- public ------------------------------------------------------------------------------------
    def choose(self, game, *, clock: Callable[[], float], seconds: float = 1.0,
               depth: int | None = None) -> SearchResult:
        """The computer's whole turn in ``game`` (which must not be over): searched for at
        most ``seconds`` by ``clock`` (to at most ``depth`` turns when given)."""
        start = clock()
        # a margin for the last clock check, the conversion to actions and a loaded machine
        deadline = start + max(0.0, seconds) * 0.9
        if game.outcome() is not None:
            raise ValueError("the game is over: there is nothing to search")
        if _setup_phase(game):
            a = army_setup(game)
            if a is None:
                raise ValueError(f"{game.variant.name}: no army set-up for this board")
            return SearchResult((a,), 0, 0, 0, clock() - start)
        us = game.turn
        actions: list[Action] = []
        pushed = 0
        score, reached = 0, 0
        nodes = 0
        searched = False
        try:
            while True:
                now = clock()
                left = max(0.0, deadline - now)
                # the first search of a turn takes most of the time; the rest are follow-ups
                if searched:
                    share = left * 0.5
                elif game.family == "cost-progressive":
                    share = left * COST_FIRST_SHARE     # the rest of the turn is read from the table
                elif game.family == "csipgs":
                    share = left * 0.8          # the design phase follows
                else:
                    share = left
                forced = self._forced(game)
                follow = self._pv_action(game, reached) if searched and game.family == "cost-progressive" else None
                if forced is not None:
                    # the only move out of check: the turn goes on after it, and is searched from there
                    first, n = forced, 0
                elif follow is not None:
                    # the rest of the turn the search chose: no second search for it
                    first, n = follow, 0
                else:
                    first, s, d, n = self._search_one(game, clock, now + share, depth)
                    if not searched:
                        score, reached, searched = s, d, True
                nodes += n
                if first.kind is ActionKind.END and game.family == "csipgs" and game.state.phase == "design":
                    # nothing to buy here: the turn may still change a design
                    design = self._design_change(game)
                    if design is not None:
                        try:
                            first = game.parse(design)
                        except ValueError:
                            pass
                actions.append(first)
                game.push(first)
                pushed += 1
                if game.turn != us or game.outcome() is not None or first.kind is ActionKind.END:
                    break
        finally:
            for _ in range(pushed):
                game.pop()
        self.total_nodes += nodes
        return SearchResult(tuple(actions), score, reached, nodes, clock() - start)

    @staticmethod
    def _forced(game):
        """A Cost Progressive turn's only possible action when the turn goes on after it."""
        if game.family != "cost-progressive":
            return None
        legal = game.legal_actions()
        if len(legal) == 1 and legal[0].kind is not ActionKind.END:
            return legal[0]
        return None

    def _pv_action(self, game, depth: int):
        """The action the last search chose to follow on with in this turn (the table's best
        action here, stored by a search at least ``depth`` deep), or None."""
        if depth < 1:
            return None
        b = self._backend(game)
        entry = self.tt.get(b.key)
        if entry is None or entry[0] < depth or entry[4] is None:
            return None
        return next((a for a in game.legal_actions() if b.move_id(a) == entry[4]), None)

    # -- one action --------------------------------------------------------------------------------
    def _backend(self, game: Game) -> _Backend:
        size = game.geometry.size
        z = self._zobrist.get(size)
        if z is None:
            z = self._zobrist[size] = Zobrist(size)
        if game.family == "chess":
            v = game.variant
            t = self._tables.get(id(v))
            if t is None or t.variant is not v:
                t = self._tables[id(v)] = _PieceTables(v)
            return _ChessBackend(game, z, t)
        return _GameBackend(game, z, self.values)

    def _search_one(self, game, clock, deadline: float, max_depth: int | None):
        """(best action, score, depth reached, nodes) for the side to move now."""
        b = self._backend(game)
        legal = b.moves()
        actions_by_id = None
        if not legal:
            raise ValueError("no legal action to search")
        if len(self.tt) > self.tt_size:
            self.tt.clear()
        self.b = b
        # generic families' nodes are slow: read the clock at each one
        self.check_every = CHECK_EVERY if game.family == "chess" else 1
        self.clock = clock
        self.deadline = deadline
        self.nodes = 0
        self.root_side = b.side()
        self.killers: dict = {}
        self.history: dict = {}
        best = legal[0]
        best_score = 0
        reached = 0
        root_moves = list(legal)
        scores: dict = {}
        if game.family in ("cost-progressive", "csipgs") and len(root_moves) > 1:
            # a turn of several actions may not finish even one depth in the time: start
            # from the moves ordered by the position after them, the best of them the answer
            # if nothing more is found
            try:
                for s, m in self._rate(root_moves, b.side(), timed=len(root_moves) > 16):
                    scores[b.move_id(m)] = s
            except _Timeout:
                pass
            if scores:
                best = max(root_moves, key=lambda m: scores.get(b.move_id(m), -INF))
                best_score = scores[b.move_id(best)]
        # level 2 weighs the reply to fewer of its first actions than the levels above it
        self.root_width = COST_LEVEL2_ROOT_WIDTH if max_depth == 2 else COST_ROOT_WIDTH
        for d, w in self._plan(game.family, max_depth):
            self.widen = w
            try:
                s, m, scores = self._root(root_moves, d, scores)
            except _Timeout:
                if w and self._partial is not None:
                    # the wider search's best so far, the last answer's action searched first
                    # at the same width: a better one is better at the same depth
                    best, best_score = self._partial
                elif self._partial is not None:
                    pm, ps = self._partial
                    if (reached == 0 and not scores) or ps > best_score - 30:
                        best, best_score = pm, ps
                break
            finally:
                self.widen = 0
            best, best_score, reached = m, s, d
            if abs(s) >= MATE_BOUND or len(root_moves) == 1:
                break
            if clock() >= deadline:
                break
        if game.family == "chess":
            best_action = game.action_of(best)
            actions_by_id = {a.code: a for a in game.legal_actions()}
            best_action = actions_by_id.get(best, best_action)
        else:
            best_action = best
        return best_action, best_score, reached, self.nodes

    @staticmethod
    def _plan(family: str, max_depth: int | None) -> list[tuple[int, int]]:
        """The searches of one action, in order: (depth in turns, how much wider the beams)."""
        limit = max_depth if max_depth is not None else 64
        plan = [(d, 0) for d in range(1, limit + 1)]
        if family == "cost-progressive" and limit >= 4:
            # a third turn gains nothing measurable over two at 1 s a move (the side's own
            # last turn answered by nobody), so above level 3 the time after two turns goes
            # first to the same two turns searched wider, COST_WIDER times; level 3 goes on
            # to its third turn after two
            plan[2:2] = [(2, w) for w in range(1, COST_WIDER + 1)]
        return plan

    def _root(self, moves, depth: int, prev_scores: dict):
        b = self.b
        alpha, beta = -INF, INF
        key = b.key
        entry = self.tt.get(key)
        tt_id = entry[4] if entry else None
        moves.sort(key=lambda m: (b.move_id(m) != tt_id, -prev_scores.get(b.move_id(m), -INF),
                                  -b.capture_score(m)))
        best, best_score = moves[0], -INF
        scores = {}
        self._partial = None
        side = b.side()
        searched = moves
        root_width = self.root_width + 5 * self.widen
        if b.family == "cost-progressive" and depth >= 2 and len(moves) > root_width:
            # the opponent's whole turn is searched after each of ours: the root's actions
            # the last depth ranked best are searched again, the rest rank below every
            # searched one, in the order they had (a score from a shallower depth is not
            # comparable, and the next depth must start from this one's best)
            searched = moves[:root_width]
            scores = {b.move_id(m): -INF + len(moves) - i for i, m in enumerate(moves) if i >= root_width}
        for i, m in enumerate(searched):
            b.push(m)
            try:
                if b.side() == side:
                    s = self._negamax(depth, alpha, beta, 1, 1)
                elif i == 0:
                    s = -self._negamax(depth - 1, -beta, -alpha, 1, 0)
                else:
                    s = -self._negamax(depth - 1, -alpha - 1, -alpha, 1, 0)
                    if alpha < s < beta:
                        s = -self._negamax(depth - 1, -beta, -alpha, 1, 0)
            finally:
                b.pop()
            scores[b.move_id(m)] = s
            if s > best_score:
                best, best_score = m, s
                self._partial = (best, best_score)
            if s > alpha:
                alpha = s
        self.tt[key] = (depth, best_score, EXACT, self.widen, b.move_id(best))
        return best_score, best, scores

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes % self.check_every == 0 and self.clock() >= self.deadline:
            raise _Timeout

    def _negamax(self, depth: int, alpha: int, beta: int, ply: int, in_turn: int) -> int:
        self._tick()
        b = self.b
        if depth <= 0 and not in_turn and b.outcome_without_moves:
            # the game's own outcome needs no move list: a leaf costs no generation
            term = b.terminal(None, ply, self.root_side)
            if term is not None:
                return term
            return self._quiesce(alpha, beta, ply, 0)
        moves = b.moves()
        term = b.terminal(moves, ply, self.root_side)
        if term is not None:
            return term
        if depth <= 0 and not in_turn:
            return self._quiesce(alpha, beta, ply, 0, moves)   # the list made for the ending test
        key = b.key
        entry = self.tt.get(key)
        tt_id = None
        if entry is not None:
            e_depth, e_score, e_flag, e_widen, tt_id = entry
            # a narrower search's result does not stand for a wider one (its move still
            # comes first)
            if e_depth >= depth and ply > 0 and e_widen >= self.widen:
                if e_flag == EXACT:
                    return e_score
                if e_flag == LOWER and e_score >= beta:
                    return e_score
                if e_flag == UPPER and e_score <= alpha:
                    return e_score
        side = b.side()
        killers = self.killers.get(ply, ())
        hist = self.history
        mid = b.move_id

        def order(m):
            i = mid(m)
            if i == tt_id:
                return -10 ** 9
            c = b.capture_score(m)
            if c:
                return -c
            if i in killers:
                return -20000
            return -hist.get(i, 0)

        prune = b.prunes and PRUNING and not in_turn and ply > 0
        in_check = prune and b.in_check()
        if prune and not in_check and depth >= NULL_MIN_DEPTH and abs(beta) < MATE_BOUND and b.null_ok():
            # null move: if passing still holds beta at a reduced depth, a real move will too
            r = NULL_R if depth < 6 else NULL_R + 1
            b.push_null()
            try:
                s = -self._negamax(depth - 1 - r, -beta, -beta + 1, ply + 1, 0)
            finally:
                b.pop()
            if s >= beta:
                return beta
        moves.sort(key=order)
        if not b.prunes:                    # the chess family searches every move
            width = self._width(depth, ply, in_turn, len(moves))
            if width is not None:
                moves = self._beam(moves, width, side, tt_id)
        orig_alpha = alpha
        best_score, best_id = -INF, None
        for i, m in enumerate(moves):
            # late quiet moves (after the table's move, the captures and the killers) are
            # searched a ply shallower first, and again at full depth only if they beat alpha
            reduce = (prune and not in_check and i >= LMR_AFTER and depth >= 3
                      and not b.capture_score(m) and mid(m) not in killers)
            b.push(m)
            try:
                if b.side() == side:
                    s = self._negamax(depth, alpha, beta, ply + 1, in_turn + 1)
                elif i == 0:
                    s = -self._negamax(depth - 1, -beta, -alpha, ply + 1, 0)
                else:
                    if reduce and not b.in_check():
                        s = -self._negamax(depth - 2 - (i >= 12 and depth >= 5), -alpha - 1, -alpha, ply + 1, 0)
                    else:
                        s = alpha + 1
                    if s > alpha:
                        s = -self._negamax(depth - 1, -alpha - 1, -alpha, ply + 1, 0)
                    if alpha < s < beta:
                        s = -self._negamax(depth - 1, -beta, -alpha, ply + 1, 0)
            finally:
                b.pop()
            if s > best_score:
                best_score, best_id = s, mid(m)
            if s > alpha:
                alpha = s
            if alpha >= beta:
                if not b.capture_score(m):
                    k = self.killers.setdefault(ply, [])
                    if best_id not in k:
                        k.insert(0, best_id)
                        del k[2:]
                    hist[best_id] = hist.get(best_id, 0) + depth * depth
                break
        flag = EXACT if orig_alpha < best_score < beta else (LOWER if best_score >= beta else UPPER)
        if abs(best_score) < MATE_BOUND:
            self.tt[key] = (depth, best_score, flag, self.widen, best_id)
        return best_score

    def _rate(self, moves, side: int, timed: bool = True):
        """(score, move) for each move by the position right after it, best first ('end' and
        moves that pass the turn judged from the opponent's side)."""
        b = self.b
        rated = []
        for i, m in enumerate(moves):
            if timed:
                self._tick()
            b.push(m)
            try:
                if b.side() == side:
                    # csipgs judges the coming action phase already in the design phase: a
                    # stalemate or mate the action gives is seen here
                    term = b.terminal(None, 1, self.root_side) if b.outcome_without_moves else None
                    s = term if term is not None else b.evaluate()
                else:
                    term = b.terminal(b.moves(), 1, self.root_side)
                    s = -(term if term is not None else b.evaluate())
            finally:
                b.pop()
            rated.append((s, i, m))
        rated.sort(key=lambda x: (-x[0], x[1]))
        return [(s, m) for s, _, m in rated]

    def _width(self, depth: int, ply: int, in_turn: int, n: int) -> int | None:
        """How many of a node's ``n`` actions are searched (None: all of them).

        A multi-action turn is a beam through the budget. Within the turn being chosen (the
        root's) it is wide while the search looks one turn ahead, and narrower once the
        opponent's whole reply is searched, so that the second turn is reached mid-game.
        A turn later in the tree (a reply, or the turn after it) is a narrow beam from its
        first action: its captures and checks and its best-looking moves."""
        if not in_turn and ply == 0:
            return None
        if self.b.family == "cost-progressive" and ply > in_turn:
            width = max(1, 3 - in_turn) + self.widen if in_turn else COST_REPLY_FIRST + 4 * self.widen
        elif not in_turn:
            return None
        elif self.b.family == "cost-progressive" and depth >= 2:
            width = max(1, 4 - in_turn) + self.widen
        else:
            width = max(2, 6 - in_turn)
        return width if n > width else None

    def _beam(self, moves, width: int, side: int, keep=None):
        """The ``width`` most promising of ``moves`` ('end' and the table's move ``keep``
        always among them)."""
        b = self.b
        ends, first, rest = [], [], []
        for m in moves:
            if getattr(m, "kind", None) is ActionKind.END:
                ends.append(m)
            elif keep is not None and b.move_id(m) == keep:
                first.append(m)
            else:
                rest.append(m)
        quick = getattr(b, "quick_all", None)
        if quick is not None and b.family == "cost-progressive":
            # the best-looking moves, and every check besides: a check ends the turn, and the
            # one the other side cannot afford to meet is mate
            rated = sorted(zip(quick(rest), range(len(rest)), rest), key=lambda x: (-x[0][0], x[1]))
            n = width - len(first)
            return (first + [m for _, _, m in rated[:n]]
                    + [m for (_, check), _, m in rated[n:] if check] + ends)
        rated = self._rate(rest, side)
        return first + [m for _, m in rated[:width - len(first)]] + ends

    def _quiesce(self, alpha: int, beta: int, ply: int, qply: int, legal: list | None = None) -> int:
        """Captures (and promotions) only, until the position is quiet. ``legal``: the side to
        move's legal moves when the caller has them already (a leaf of the main search made
        them to look for mate and stalemate): they are not generated a second time."""
        self._tick()
        b = self.b
        stand = b.evaluate()
        if stand >= beta or qply >= (6 if self.check_every > 1 else Q_PLIES):
            return stand
        if stand > alpha:
            alpha = stand
        if b.no_captures:
            return stand
        side = b.side()
        noisy = b.is_noisy
        pool = b.moves() if legal is None else legal
        if qply <= 1 and isinstance(b, _GameBackend) and b.family == "cost-progressive":
            # a check ends a Cost Progressive turn, and one the other side cannot afford to
            # meet is mate: the checks are looked at with the captures (after a capture too)
            moves = [m for m, (_, check) in zip(pool, b.quick_all(pool)) if check or noisy(m)]
        else:
            moves = [m for m in pool if noisy(m)]
        if not moves:
            return stand
        moves.sort(key=lambda m: -b.capture_score(m))
        for m in moves[:12 if self.check_every > 1 else Q_WIDTH]:
            b.push(m)
            try:
                if b.side() == side:
                    s = self._quiesce(alpha, beta, ply + 1, qply + 1)
                else:
                    term = b.terminal(b.moves(), ply + 1, self.root_side) if b.__class__ is _GameBackend else None
                    s = -term if term is not None else -self._quiesce(-beta, -alpha, ply + 1, qply + 1)
            finally:
                b.pop()
            if s >= beta:
                return s
            if s > alpha:
                alpha = s
        return alpha

    # -- csipgs design phase -------------------------------------------------------------------------------
    def _design_change(self, game) -> str | None:
        """``design:N=X`` replacing the player's design with the least mobility per zorkmid by a
        candidate with clearly more, or None."""
        from .csipgs_cost import cost_of
        from .errors import EngineError
        st = game.state
        us = st.turn
        designs = list(st.designs[us])
        v = game.position.variant

        def worth(design: str):
            try:
                c = game.cost(design)
            except EngineError:
                return None
            if "royal" in design or c.price <= 0:
                return None
            mob = self._mobility_value(game, design)
            return mob / float(c.price)

        current = [(worth(d), i, d) for i, d in enumerate(designs)]
        current = [(w, i, d) for w, i, d in current if w is not None]
        if not current:
            return None
        worst = min(current)
        best = None
        for cand in _DESIGN_CANDIDATES:
            if cand in designs:
                continue
            w = worth(cand)
            if w is not None and (best is None or w > best[0]):
                best = (w, cand)
        if best is not None and best[0] > worst[0] * 1.25:
            return f"design:{worst[1] + 1}={best[1]}"
        return None

    def _mobility_value(self, game, design: str) -> float:
        key = ("mob", design, game.geometry.size)
        v = self._tables.get(key)
        if v is None:
            from .csipgs_cost import parse_design
            from .variant import PieceType
            import dataclasses
            d = parse_design(design)
            piece = PieceType(name=d.text, letter="a", betza=d.betza)
            var = dataclasses.replace(game.position.variant, pieces=(piece,), promotion=())
            mob = _empty_board_mobility(var, piece)
            real = [m for sq, m in enumerate(mob) if sq not in game.geometry.holes]
            v = self._tables[key] = sum(real) / max(1, len(real))
        return v


# Designs the engine considers at the design phase: cheap, mobile pieces a player would draw.
_DESIGN_CANDIDATES = ("N", "WF", "NW", "NF", "FD", "WA", "R", "B", "BR", "NR", "NB")


_ARMY_BACK = ("R", "N", "B", "BR", "royal-WF", "B", "N", "R")
_ARMY_PAWN = "fcFfmW"


def army_setup(game, rng: random.Random | None = None):
    """An Army csipgs chess set-up for the side to set up: the orthodox army in csipgs designs
    (worth 50.88 of the 52 zorkmids), the back rank shuffled by ``rng`` when given. In the
    alternating set-up, the next piece of that army. None when the board is not 8 files wide
    or the army rules want another count."""
    army = game.rules.army
    g = game.geometry
    if army is None or g.files != 8 or army.pieces != 16:
        return None
    us = game.turn
    first, second = (0, 1) if us == 0 else (g.ranks - 1, g.ranks - 2)
    back = list(_ARMY_BACK)
    if rng is not None:
        rest = [d for d in back if d != "royal-WF"]
        rng.shuffle(rest)
        back = rest[:4] + ["royal-WF"] + rest[4:]
    wanted = [(d, g.square(f, first)) for f, d in enumerate(back)] + \
             [(_ARMY_PAWN, g.square(f, second)) for f in range(8)]
    occ = game.occupancy()
    wanted = [(d, sq) for d, sq in wanted if not occ >> sq & 1]
    if not wanted:
        return None
    if army.setup == "alternating":
        wanted = wanted[:1]
    text = ",".join(f"{d}@{g.name(sq)}" for d, sq in wanted)
    try:
        return game.parse(text)
    except ValueError:
        return None


def _setup_phase(game) -> bool:
    return game.family == "csipgs" and game.state.phase == "setup"


def random_turn(game, rng: random.Random) -> list:
    """A random mover's whole turn: uniformly random legal actions until the turn passes (a
    csipgs design phase ends the turn; a Cost Progressive turn ends by chance or by itself).
    The game is left as it was found."""
    if _setup_phase(game):
        a = army_setup(game, rng)
        return [a] if a is not None else []
    us = game.turn
    out = []
    try:
        while True:
            legal = game.legal_actions()
            if not legal:
                break
            if game.family == "csipgs" and game.state.phase == "design":
                a = next((x for x in legal if x.kind is ActionKind.END), legal[0]) if rng.random() < 0.8 else rng.choice(legal)
            else:
                a = rng.choice(legal)
            out.append(a)
            game.push(a)
            if game.turn != us or game.outcome() is not None:
                break
    finally:
        for _ in out:
            game.pop()
    return out


def level_depth(level: int | None) -> int | None:
    """The depth cap (in turns) of a level 1-20; None (no cap) for None."""
    if level is None:
        return None
    if not 1 <= level <= 20:
        raise ValueError(f"level {level!r}: use 1 to 20")
    return level
