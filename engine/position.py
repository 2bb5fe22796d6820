"""Positions and legal move generation.

A :class:`Position` is a mutable board with ``push``/``pop`` (as python-chess's Board is);
moves inside the engine are ints (see :mod:`engine.moves`) so the generator allocates no
objects per move. Legality is exact for any pieces: a move is checked against the royal
pieces' safety cheaply when it cannot change any attack on them (the usual case: a piece
that is neither pinned, nor standing on a hopper's line, a lame leaper's block square or a
bent rider's path to the royal piece), and by computing the attacks after it otherwise.

Piece codes: ``code = (type_index + 1) * 2 + colour`` with colour 0 = white, 1 = black;
0 is an empty square.
"""

from __future__ import annotations

from .errors import FenError, IllegalMoveError
from .geometry import FILE_LETTERS
from .moves import CASTLE, DROP, EN_PASSANT, NORMAL, NULL_MOVE, encode
from .tables import slide_targets, tables_for

WHITE, BLACK = 0, 1


class Position:
    """A position of a variant: placement, side to move, castling, en passant, counters, hands."""

    __slots__ = ("variant", "tables", "geometry", "board", "pbb", "occ", "turn", "castling", "ep",
                 "halfmove", "fullmove", "hands", "stack", "_castle_clear", "_royal_codes",
                 "_plans", "_attack_plans", "_promo_zone", "_initial", "_forward", "_mask",
                 "_king_code", "_danger_static", "_castle_paths", "_castle_rank", "_fast", "_ep_types",
                 "_pawn_code", "_ep_step", "_single_royal", "_lines_exact", "_const_attacks")

    # -- construction ----------------------------------------------------------------------
    def __init__(self, variant):
        self._init_board(variant)
        (self.tables, self._castle_rank, self._promo_zone, self._initial, self._plans,
         self._attack_plans, self._danger_static, self._lines_exact, self._fast, self._ep_types,
         self._pawn_code, self._ep_step, self._single_royal, self._const_attacks) = _derived(variant)

    def _init_board(self, variant) -> None:
        """An empty board and what reading a FEN needs (no move tables)."""
        self.variant = variant
        self.geometry = g = variant.geometry
        n = len(variant.pieces)
        self.board = [0] * g.size
        self.pbb = [0] * (2 * n + 2)
        self.occ = [0, 0]
        self.turn = WHITE
        self.castling = 0
        self.ep = -1
        self.halfmove = 0
        self.fullmove = 1
        self.hands = [[0] * n, [0] * n]
        self.stack: list[tuple] = []
        self._castle_clear: dict[int, int] = {}
        self._castle_paths: dict[int, tuple] = {}
        self._mask = g.mask
        self._forward = (g.files, -g.files)
        self._royal_codes = ([(t + 1) * 2 for t, p in enumerate(variant.pieces) if p.royal],
                             [(t + 1) * 2 + 1 for t, p in enumerate(variant.pieces) if p.royal])
        self._king_code = ([(t + 1) * 2 for t, p in enumerate(variant.pieces) if p.castles],
                           [(t + 1) * 2 + 1 for t, p in enumerate(variant.pieces) if p.castles])

    @classmethod
    def check_fen(cls, variant, fen: str) -> None:
        """Raise FenError when ``fen`` is not a position of ``variant``; compiles no move
        tables (a variant's start position is checked when the variant loads)."""
        pos = cls.__new__(cls)
        pos._init_board(variant)
        pos._set_fen(fen)

    @classmethod
    def from_fen(cls, variant, fen: str | None = None) -> Position:
        pos = cls(variant)
        pos._set_fen(variant.start_fen if fen is None else fen)
        return pos

    def __repr__(self) -> str:
        """``Position.from_fen(Variant(...), 'FEN')``: evaluates back to the same position
        (with the engine's names in scope; the move stack is not part of it)."""
        return f"Position.from_fen({self.variant!r}, {self.fen()!r})"

    def copy(self) -> Position:
        """An independent copy (the board, bitboards, hands and move stack copied; the variant's
        tables and plans shared)."""
        other = Position.__new__(Position)
        _copy_slots(self, other)
        other.board = self.board[:]
        other.pbb = self.pbb[:]
        other.occ = self.occ[:]
        other.hands = [self.hands[0][:], self.hands[1][:]]
        other.stack = self.stack[:]
        return other

    # -- FEN -------------------------------------------------------------------------------
    def _set_fen(self, fen: str) -> None:
        v, g = self.variant, self.geometry
        if not isinstance(fen, str) or not fen.strip():
            raise FenError("empty FEN")
        parts = fen.split()
        placement = parts[0]
        hand_text = ""
        if "[" in placement:
            if not placement.endswith("]"):
                raise FenError(f"FEN {fen!r}: a hand is written [..] right after the placement")
            placement, hand_text = placement[:-1].split("[", 1)
        rows = placement.split("/")
        if len(rows) != g.ranks:
            raise FenError(f"FEN {fen!r}: {len(rows)} ranks in the placement, the board has {g.ranks}")
        letters = v.letters
        for i, row in enumerate(rows):
            rank = g.ranks - 1 - i
            f = 0
            j = 0
            while j < len(row):
                ch = row[j]
                if ch.isdigit():
                    k = j
                    while k < len(row) and row[k].isdigit():
                        k += 1
                    f += int(row[j:k])
                    j = k
                    continue
                if f >= g.files:
                    raise FenError(f"FEN {fen!r}: rank {rank + 1} has more than {g.files} files")
                sq = g.square(f, rank)
                if ch == "*":
                    if sq not in g.holes:
                        raise FenError(f"FEN {fen!r}: '*' marks a hole but {g.name(sq)} is a square")
                elif ch.lower() in letters:
                    if sq in g.holes:
                        raise FenError(f"FEN {fen!r}: a piece stands on the hole {g.name(sq)}")
                    t = letters.index(ch.lower())
                    self._put(sq, (t + 1) * 2 + (0 if ch.isupper() else 1))
                elif ch == "~":
                    j += 1
                    continue
                else:
                    raise FenError(f"FEN {fen!r}: {ch!r} is not a piece of {v.name} (pieces: {letters})")
                f += 1
                j += 1
            if f != g.files:
                raise FenError(f"FEN {fen!r}: rank {rank + 1} has {f} files, the board has {g.files}")
        for ch in hand_text:
            if ch.lower() not in letters:
                raise FenError(f"FEN {fen!r}: {ch!r} in the hand is not a piece of {v.name}")
            self.hands[0 if ch.isupper() else 1][letters.index(ch.lower())] += 1
        turn = parts[1] if len(parts) > 1 else "w"
        if turn not in ("w", "b"):
            raise FenError(f"FEN {fen!r}: side to move must be w or b, not {turn!r}")
        self.turn = WHITE if turn == "w" else BLACK
        self._set_castling(parts[2] if len(parts) > 2 else "-", fen)
        ep = parts[3] if len(parts) > 3 else "-"
        if ep != "-":
            try:
                self.ep = g.parse(ep)
            except Exception:
                raise FenError(f"FEN {fen!r}: en passant square {ep!r} is not a square") from None
        for idx, attr in ((4, "halfmove"), (5, "fullmove")):
            if len(parts) > idx:
                if not parts[idx].isdigit():
                    raise FenError(f"FEN {fen!r}: {attr} counter {parts[idx]!r} is not a number")
                setattr(self, attr, int(parts[idx]))
        if self.fullmove < 1:
            self.fullmove = 1

    def _set_castling(self, text: str, fen: str) -> None:
        g = self.geometry
        self.castling = 0
        if text == "-":
            self._castle_clear = {}
            self._castle_paths = {}
            return
        rook_codes: list[int | None] = [None, None]
        rook_t = next((t for t, p in enumerate(self.variant.pieces) if p.name == "rook"), None)
        for ch in text:
            color = WHITE if ch.isupper() else BLACK
            rank = 0 if color == WHITE else g.ranks - 1
            kings = [sq for sq in range(g.size) if self.board[sq] in self._king_code[color]
                     and g.rank_of(sq) == rank]
            if not kings or rook_t is None:
                raise FenError(f"FEN {fen!r}: castling right {ch!r} but no castling king on its first rank")
            ksq = kings[0]
            rcode = (rook_t + 1) * 2 + color
            rook_codes[color] = rcode
            low = ch.lower()
            if low in ("k", "q"):
                files = range(g.files - 1, g.file_of(ksq), -1) if low == "k" else range(0, g.file_of(ksq))
                rsq = next((g.square(f, rank) for f in files if self.board[g.square(f, rank)] == rcode), None)
            elif low in FILE_LETTERS[:g.files]:
                rsq = g.square(FILE_LETTERS.index(low), rank)
                if self.board[rsq] != rcode:
                    rsq = None
            else:
                raise FenError(f"FEN {fen!r}: {ch!r} is not a castling right")
            if rsq is None:
                raise FenError(f"FEN {fen!r}: castling right {ch!r} has no rook to castle with")
            self.castling |= 1 << rsq
        clear: dict[int, int] = {}
        bb = self.castling
        while bb:
            bit = bb & -bb
            rsq = bit.bit_length() - 1
            bb ^= bit
            color = WHITE if g.rank_of(rsq) == 0 else BLACK
            clear[rsq] = clear.get(rsq, 0) | bit
            for sq in range(g.size):
                if self.board[sq] in self._king_code[color] and g.rank_of(sq) == g.rank_of(rsq):
                    clear[sq] = clear.get(sq, 0) | bit
        self._castle_clear = clear
        # For each castling rook: (king square, king's destination, rook's destination,
        # squares that must be empty).
        paths = {}
        for rsq in self.geometry.squares_of(self.castling):
            rank = g.rank_of(rsq)
            color = WHITE if rank == 0 else BLACK
            k = next((sq for sq in range(g.size) if self.board[sq] in self._king_code[color]
                      and g.rank_of(sq) == rank), None)
            if k is None:
                continue
            step = 1 if rsq > k else -1
            if not 0 <= g.file_of(k) + 2 * step < g.files:
                continue
            kto, rto = k + 2 * step, k + step
            lo, hi = min(k, rsq, kto, rto), max(k, rsq, kto, rto)
            must = 0
            for sq in range(lo, hi + 1):
                if sq not in (k, rsq):
                    must |= 1 << sq
            paths[rsq] = (k, kto, rto, must)
        self._castle_paths = paths

    def fen(self, *, ep: str = "capturable") -> str:
        """FEN as Fairy-Stockfish writes it: hands as [..], en passant only when capturable."""
        g, v = self.geometry, self.variant
        rows = []
        for rank in range(g.ranks - 1, -1, -1):
            row, run = [], 0
            for f in range(g.files):
                sq = g.square(f, rank)
                code = self.board[sq]
                if sq in g.holes or code:
                    if run:
                        row.append(str(run))
                        run = 0
                    if sq in g.holes:
                        row.append("*")
                    else:
                        letter = v.pieces[(code >> 1) - 1].letter
                        row.append(letter.upper() if code & 1 == 0 else letter)
                else:
                    run += 1
            if run:
                row.append(str(run))
            rows.append("".join(row))
        placement = "/".join(rows)
        if any(self.hands[0]) or any(self.hands[1]):
            hand = "".join(p.letter.upper() * self.hands[0][t] for t, p in enumerate(v.pieces)) + \
                   "".join(p.letter * self.hands[1][t] for t, p in enumerate(v.pieces))
            placement += f"[{hand}]"
        return f"{placement} {'w' if self.turn == WHITE else 'b'} {self.castling_fen()} " \
               f"{self._ep_fen(ep)} {self.halfmove} {self.fullmove}"

    def key(self) -> tuple:
        """A hashable key equal for two positions exactly when the first four fields of their
        FENs are (placement and hands, side to move, castling rights, en passant square when
        a pawn could take): what repetition counts, at a fraction of the cost of ``fen()``."""
        ep = self.ep
        if ep >= 0 and self._ep_fen("capturable") == "-":
            ep = -1
        return (tuple(self.board), tuple(self.hands[0]), tuple(self.hands[1]), self.turn, self.castling, ep)

    def castling_fen(self) -> str:
        g = self.geometry
        out = {WHITE: "", BLACK: ""}
        bb = self.castling
        entries = []
        while bb:
            low = bb & -bb
            rsq = low.bit_length() - 1
            bb ^= low
            entries.append(rsq)
        for color in (WHITE, BLACK):
            rank = 0 if color == WHITE else g.ranks - 1
            if not any(g.rank_of(r) == rank for r in entries):
                continue
            ksq = next((sq for sq in range(rank * g.files, (rank + 1) * g.files)
                        if self.board[sq] in self._king_code[color]), None)
            mine = sorted((r for r in entries if g.rank_of(r) == rank), reverse=True)
            for rsq in mine:
                side = "k" if ksq is not None and rsq > ksq else "q"
                # outermost rook of that side -> K/Q, else the rook's file (Shredder style)
                rcode = self.board[rsq]
                files = range(g.file_of(rsq) + 1, g.files) if side == "k" else range(0, g.file_of(rsq))
                outer = all(self.board[g.square(f, rank)] != rcode for f in files)
                ch = side if outer else FILE_LETTERS[g.file_of(rsq)]
                out[color] += ch.upper() if color == WHITE else ch
        text = out[WHITE] + out[BLACK]
        return text or "-"

    def _ep_fen(self, mode: str) -> str:
        if self.ep < 0:
            return "-"
        if mode == "always":
            return self.geometry.name(self.ep)
        us = self.turn
        bit = 1 << self.ep
        for t, code, pt, royal, pawn in self._plans[us]:
            if pawn:
                bb = self.pbb[code]
                while bb:
                    low = bb & -bb
                    if pt.lc[low.bit_length() - 1] & bit:
                        return self.geometry.name(self.ep)
                    bb ^= low
        return "-"

    # -- low-level edits -------------------------------------------------------------------
    def _put(self, sq: int, code: int) -> None:
        self.board[sq] = code
        bit = 1 << sq
        self.pbb[code] |= bit
        self.occ[code & 1] |= bit

    def _remove(self, sq: int) -> int:
        code = self.board[sq]
        if code:
            bit = 1 << sq
            self.board[sq] = 0
            self.pbb[code] &= ~bit
            self.occ[code & 1] &= ~bit
        return code

    # The edits a family with rules of its own makes (Chego's drops and kills, csipgs' turns):
    # a piece *code* is (type index + 1) * 2 + colour, as on ``board``.
    put_code = _put          # put_code(sq, code): set a piece on an empty square
    take_code = _remove      # take_code(sq) -> code (0 when the square was empty)

    def set_turn(self, color: int, *, halfmove: int | None = None, fullmove: int | None = None) -> None:
        """Set the side to move, and the counters when given (a family whose turns are more than
        one move)."""
        self.turn = color
        if halfmove is not None:
            self.halfmove = halfmove
        if fullmove is not None:
            self.fullmove = fullmove

    def forget_undo(self) -> None:
        """Drop the undo records (a family that keeps its own snapshots)."""
        self.stack.clear()

    def clear_rights(self) -> None:
        """No castling rights and no en passant square (families without them)."""
        self.castling = 0
        self.ep = -1

    def piece_at(self, sq: int):
        """(type index, colour) of the piece on sq, or None."""
        code = self.board[sq]
        return None if not code else ((code >> 1) - 1, code & 1)

    def royal_squares(self, color: int) -> list[int]:
        codes = self._royal_codes[color]
        pbb = self.pbb
        if len(codes) == 1:
            bb = pbb[codes[0]]
            if not bb & (bb - 1):           # one royal piece (or none): the usual case
                return [bb.bit_length() - 1] if bb else []
        out = []
        for code in codes:
            bb = pbb[code]
            while bb:
                low = bb & -bb
                out.append(low.bit_length() - 1)
                bb ^= low
        return out if len(codes) == 1 else sorted(out)

    def start_problem(self) -> str | None:
        """Why no game of the variant can reach this position (None: it can), in one line, for
        a position a player gives (a FEN to start from). Checked, as python-chess's
        ``Board.status()`` does for orthodox chess:

        * under ``royal_rule: all`` (every royal piece must be kept safe: the chess family, Cost
          Progressive), each side has as many royal pieces as the variant's start gives it --
          one king -- and the side that has just moved is not in check;
        * where pawns promote (``promotion`` not ``none``), no pawn stands on its last rank
          (it would have promoted) nor on its first rank when the start has none there.

        A royal rule ``last`` (csipgs: several royal pieces, bought and sold) and a family without
        pawns or royal pieces (Chego) leave those counts to their own rules."""
        v, g = self.variant, self.geometry
        side = ("White", "Black")
        royal = [t for t, p in enumerate(v.pieces) if p.royal]
        if royal and v.royal_rule == "all":
            start = v.start_fen.split()[0]
            for color in (WHITE, BLACK):
                allowed = sum(start.count(v.pieces[t].letter.upper() if color == WHITE else v.pieces[t].letter)
                              for t in royal)
                have = self.royal_squares(color)
                what = " or ".join(sorted({v.pieces[t].name for t in royal}))
                if allowed and not have:
                    return f"{side[color]} has no {what}"
                if allowed and len(have) > allowed:
                    return (f"{side[color]} has {len(have)} {what}s; {v.name} gives each side "
                            f"{allowed if allowed > 1 else 'one'}")
            them = self.turn ^ 1
            checked = [sq for sq in self.royal_squares(them) if self.attacked(sq, self.turn)]
            if checked:
                name = v.pieces[self.board[checked[0]] // 2 - 1].name
                return (f"{side[them]}'s {name} on {g.name(checked[0])} is in check with {side[self.turn]} "
                        f"to move: the side that has just moved cannot be in check")
        if v.promotion:
            start_first = [r for r in v.start_fen.split()[0].split("/")]
            for t, piece in enumerate(v.pieces):
                if not piece.pawn:
                    continue
                for color in (WHITE, BLACK):
                    bb = self.pbb[(t + 1) * 2 + color]
                    last, first = (g.ranks - 1, 0) if color == WHITE else (0, g.ranks - 1)
                    letter = piece.letter.upper() if color == WHITE else piece.letter
                    first_ok = letter in start_first[g.ranks - 1 - first]
                    while bb:
                        low = bb & -bb
                        sq = low.bit_length() - 1
                        bb ^= low
                        rank = g.rank_of(sq)
                        if rank == last:
                            return (f"a {side[color].lower()} {piece.name} on {g.name(sq)}: {piece.name}s promote "
                                    f"on rank {last + 1}, none can stand there")
                        if rank == first and not first_ok:
                            return (f"a {side[color].lower()} {piece.name} on {g.name(sq)}: {piece.name}s never "
                                    f"stand on their first rank ({first + 1})")
        return None

    # -- attacks ---------------------------------------------------------------------------
    def attacked(self, sq: int, by: int, occ: int | None = None, exclude: int = 0) -> bool:
        """True when a piece of colour ``by`` (not on the ``exclude`` bitboard) attacks sq."""
        if occ is None:
            occ = self.occ[0] | self.occ[1]
        pbb = self.pbb
        T = self.tables
        ray = T.ray
        positive = T.positive
        for code, rev_lc, rev_ride, ride_caps, hop_caps, rev_lame, rev_bent in self._attack_plans[by]:
            pb = pbb[code]
            if not pb:
                continue
            if exclude:
                pb &= ~exclude
                if not pb:
                    continue
            if rev_lc[sq] & pb:
                return True
            if rev_ride[sq] & pb:
                for od, lim_rays in ride_caps:
                    r = ray[od][sq] if lim_rays is None else lim_rays[sq]
                    b = r & occ
                    if b:
                        f = (b & -b).bit_length() - 1 if positive[od] else b.bit_length() - 1
                        if pb >> f & 1:
                            return True
                for od in hop_caps:
                    b = ray[od][sq] & occ
                    if b:
                        s = (b & -b).bit_length() - 1 if positive[od] else b.bit_length() - 1
                        b = ray[od][s] & occ
                        if b:
                            f = (b & -b).bit_length() - 1 if positive[od] else b.bit_length() - 1
                            if pb >> f & 1:
                                return True
            if rev_lame:
                for frm, block, init in rev_lame[sq]:
                    if pb >> frm & 1 and not block & occ and (not init or self._initial[by] >> frm & 1):
                        return True
            if rev_bent:
                for frm, path in rev_bent[sq]:
                    if pb >> frm & 1 and not path & occ:
                        return True
        return False

    def targets_of(self, sq: int) -> tuple[int, int]:
        """(quiet, capture) target bitboards of the piece on sq, ignoring royal safety (its
        pseudo-legal moves). The generator inlines the same steps for speed."""
        code = self.board[sq]
        if not code:
            return 0, 0
        color = code & 1
        T = self.tables
        pt = T.pieces[color][(code >> 1) - 1]
        occ = self.occ[0] | self.occ[1]
        empty = ~occ & self._mask
        enemy = self.occ[color ^ 1]
        quiet = pt.lm[sq] & empty
        caps = pt.lc[sq] & enemy
        ray, positive = T.ray, T.positive
        for d, mv, cp, lim in pt.rides:
            r = ray[d][sq] if lim == 0 else T.limited_ray(d, lim)[sq]
            b = r & occ
            if b:
                f = (b & -b).bit_length() - 1 if positive[d] else b.bit_length() - 1
                r &= ~ray[d][f]
            if mv:
                quiet |= r & empty
            if cp:
                caps |= r & enemy
        pawn = self.variant.pieces[(code >> 1) - 1].pawn
        for to, block, mv, cp, init in pt.lame[sq]:
            if block & occ or (init and not self._initial[color] >> sq & 1):
                continue
            if mv and empty >> to & 1 and not (pawn and init and not self.variant.double_step):
                quiet |= 1 << to
            elif cp and enemy >> to & 1:
                caps |= 1 << to
        if pt.has_special:
            q2, c2 = self._hop_bent_targets(pt, sq, occ, empty, enemy)
            quiet |= q2
            caps |= c2
        return quiet, caps

    def put_piece(self, sq: int, type_index: int, color: int) -> None:
        """Set a piece on an empty square (set-ups, drops by families with their own rules)."""
        if self.board[sq]:
            raise ValueError(f"{self.geometry.name(sq)} is not empty")
        self._put(sq, (type_index + 1) * 2 + color)

    def remove_piece(self, sq: int) -> tuple[int, int] | None:
        """Take the piece off sq; returns its (type index, colour), or None if sq was empty."""
        code = self._remove(sq)
        return None if not code else ((code >> 1) - 1, code & 1)

    def attacks_of(self, sq: int) -> int:
        """Bitboard of the squares the piece on sq attacks directly: where it could capture if
        an enemy stood there (own pieces' squares included; sliders stop at the first piece)."""
        code = self.board[sq]
        if not code:
            return 0
        return self.attacks_from(code, sq, self.occ[0] | self.occ[1])

    def attacks_from(self, code: int, sq: int, occ: int) -> int:
        """What a piece ``code`` standing on ``sq`` would attack directly (as :meth:`attacks_of`)
        were ``occ`` the occupied squares (``sq`` among them), whatever stands on the board
        now: nothing is put or taken. ``attacks_of(sq)`` is ``attacks_from(board[sq], sq,
        occupancy)``. A piece that only leaps (no capturing rides, hops, bent or lame moves)
        attacks the same squares whatever the occupancy: :meth:`constant_attacks`."""
        const = self._const_attacks[code]
        if const is not None:
            return const[sq]
        color = code & 1
        T = self.tables
        pt = T.pieces[color][(code >> 1) - 1]
        ray, positive = T.ray, T.positive
        out = pt.lc[sq]
        if pt.slides:
            # the unlimited rides that move and capture alike: looked up by the occupancy
            att = pt.slide_cache[sq].get(occ & pt.slide_mask[sq])
            out |= att if att is not None else slide_targets(pt, sq, occ)
        for d, mv, cp, lim in pt.other_rides:
            if not cp:
                continue
            r = ray[d][sq] if lim == 0 else T.limited_ray(d, lim)[sq]
            b = r & occ
            if b:
                f = (b & -b).bit_length() - 1 if positive[d] else b.bit_length() - 1
                r &= ~ray[d][f]
            out |= r
        if pt.has_special:
            # hopper and bent captures, as if every square held an enemy piece
            out |= self._hop_bent_targets(pt, sq, occ, 0, self._mask)[1]
        for to, block, mv, cp, init in pt.lame[sq]:
            if cp and not block & occ and (not init or self._initial[color] >> sq & 1):
                out |= 1 << to
        return out

    def constant_attacks(self, code: int) -> list[int] | None:
        """Per square, what a piece ``code`` attacks there when that never depends on the
        occupancy (it only leaps: no capturing rides, hops, bent or lame moves); else None.
        Computed once per variant and shared: do not change the list."""
        return self._const_attacks[code]

    def checkers_exist(self, color: int | None = None) -> bool:
        """True when a royal piece of ``color`` (default: side to move) is attacked."""
        c = self.turn if color is None else color
        return any(self.attacked(sq, c ^ 1) for sq in self.royal_squares(c))

    def in_check(self) -> bool:
        """The side to move's royal piece is in check (with several royals: any of them, when the
        variant protects them all; only the last one under ``royal_rule: last``)."""
        squares = self._protected(self.turn)
        return any(self.attacked(sq, self.turn ^ 1) for sq in squares)

    def _protected(self, color: int) -> list[int]:
        if self._single_royal is not None:
            bb = self.pbb[self._single_royal[color]]
            if not bb & (bb - 1):
                return [bb.bit_length() - 1] if bb else []
        squares = self.royal_squares(color)
        if self.variant.royal_rule == "last" and len(squares) > 1:
            return []
        return squares

    # -- move generation -------------------------------------------------------------------
    def legal_moves(self, drops: bool = True, squares: int = -1) -> list[int]:
        """The legal moves as ints; ``drops=False`` leaves out the plain drops from the hands
        (for families that drop by rules of their own: they are then neither generated nor
        tested for royal safety). ``squares`` (a bitboard): only the moves of the pieces
        standing there (a Cost Progressive turn's affordable pieces not yet moved); drops are
        not affected."""
        out: list[int] = []
        self._generate(out, drops, sel=squares)
        return out

    def count_legal(self, drops: bool = True) -> int:
        return self._generate(None, drops)

    def has_legal_move(self, drops: bool = True, squares: int = -1) -> bool:
        """Whether the side to move has a legal move: counting stops at the first piece type
        that has one (the ending test: most positions answer after a type or two).
        ``squares`` (a bitboard): only moves of the pieces standing there count (a Cost
        Progressive turn goes on when a piece not yet moved and affordable can move); drops
        count only when ``drops`` is true."""
        return self._generate(None, drops, first=True, sel=squares) > 0

    def _generate(self, out: list | None, drops: bool = True, first: bool = False, sel: int = -1) -> int:
        us = self.turn
        them = us ^ 1
        own = self.occ[us]
        enemy = self.occ[them]
        occ = own | enemy
        protect = self._protected(us)
        in_check = False
        danger = 0          # moves from these squares get the exact test
        danger_to = 0       # moves to these squares get the exact test (hopper screens)
        king_sq = -1
        evasion = -1        # in check: the squares a move of a non-royal piece must end on
        if len(protect) == 1 and self._lines_exact[us] is not None:
            king_sq = protect[0]
            in_check, danger = self._check_pins(king_sq, us, occ)
            if in_check:
                evasion = self._evasions(king_sq, us, occ)
        elif protect:
            for k in protect:
                if self.attacked(k, them, occ):
                    in_check = True
            if len(protect) == 1:
                king_sq = protect[0]
                danger, danger_to = self._pins(king_sq, us, occ)
            else:
                danger = -1  # several protected royals: test every move exactly
        if in_check or danger_to or danger == -1:
            count = self._gen_general(out, us, protect, in_check, danger, danger_to, sel, evasion, first)
        elif out is None:
            count = self._count_fast(us, king_sq, danger, first, sel)
        else:
            count = self._list_fast(out, us, king_sq, danger, sel)
        if first and count:
            return count
        if self.castling and not in_check:
            count += self._castling_moves(us, occ, out, protect, sel)
        if drops and any(self.hands[us]):
            count += self._drop_moves(us, ~occ & self._mask, out, protect)
        return count if out is None else len(out)

    def _count_fast(self, us: int, king_sq: int, danger: int, first: bool = False, sel: int = -1) -> int:
        """The number of legal moves when the side to move is not in check and at most one
        royal piece is protected: each piece type counted by the generator its moves allow
        (see _fast_plan); pinned pieces (``danger``) and the types no fast generator serves
        are counted by _gen_general. (Lists of moves always come from _gen_general, in its
        order: type, from-square, to-square.) Only the pieces on ``sel`` are counted."""
        them = us ^ 1
        own = self.occ[us]
        enemy = self.occ[them]
        occ = own | enemy
        empty = ~occ & self._mask
        notown = empty | enemy
        pbb = self.pbb if sel == -1 else [bb & sel for bb in self.pbb]
        count = 0
        general = danger & sel
        royal = None        # with ``first``: the royal piece's moves (a test each) come last
        for kind, code, pt, data in self._fast[us]:
            if first and count:
                return count
            bb = pbb[code]
            if not bb:
                continue
            if kind == _SLIDE:
                bb &= ~danger
                lm, lc, masks, caches = pt.lm, pt.lc, pt.slide_mask, pt.slide_cache
                while bb:
                    low = bb & -bb
                    sq = low.bit_length() - 1
                    bb ^= low
                    att = caches[sq].get(occ & masks[sq])
                    if att is None:
                        att = slide_targets(pt, sq, occ)
                    count += ((att & notown) | (lm[sq] & empty) | (lc[sq] & enemy)).bit_count()
            elif kind == _LEAP:
                bb &= ~danger
                lm, lc = pt.lm, pt.lc
                while bb:
                    low = bb & -bb
                    sq = low.bit_length() - 1
                    bb ^= low
                    count += ((lm[sq] & empty) | (lc[sq] & enemy)).bit_count()
            elif kind == _SET:
                # every piece of the type at once, shift by shift (one way to each target)
                bb &= ~danger
                vectors, promo, n_promo = data
                for shift, sources, blocks, mv, cp in vectors:
                    src = bb & sources
                    if not src:
                        continue
                    for b in blocks:
                        src &= ~(occ >> b if b > 0 else occ << -b)
                    t = (src << shift if shift > 0 else src >> -shift) & (mv & empty | cp & enemy)
                    if t:
                        count += t.bit_count()
                        if t & promo:
                            count += (t & promo).bit_count() * (n_promo - 1)
            elif kind == _ROYAL and king_sq >= 0 and bb == 1 << king_sq:
                if first:
                    royal = pt
                else:
                    count += self._royal_count(pt, king_sq, them, occ, empty, enemy)
            else:
                general |= bb
        if first and count:
            return count
        if royal is not None:
            count += self._royal_count(royal, king_sq, them, occ, empty, enemy)
        if general:
            count += self._gen_general(None, us, [king_sq] if king_sq >= 0 else [], False, danger, 0,
                                       general)
        ep = self.ep
        if ep >= 0 and self._ep_types[us]:
            # en passant: always tested exactly (it removes a piece beside the mover)
            protect = [king_sq] if king_sq >= 0 else []
            victim = ep - self._forward[us]
            vcode = self.board[victim] if 0 <= victim < len(self.board) else 0
            if vcode and vcode & 1 == them and self._pawn_code[vcode] and not occ >> ep & 1:
                for code, pt in self._ep_types[us]:
                    cand = pt.rev_lc[ep] & pbb[code] & sel & ~general
                    while cand:
                        low = cand & -cand
                        cand ^= low
                        if self._safe(low.bit_length() - 1, ep, us, protect, False, 1 << victim):
                            count += 1
        return count

    def _royal_count(self, pt, king_sq: int, them: int, occ: int, empty: int, enemy: int) -> int:
        """The legal moves of the protected royal piece: each target tested with the royal
        moved there."""
        targets = (pt.lm[king_sq] & empty) | (pt.lc[king_sq] & enemy)
        base = occ ^ (1 << king_sq)
        attacked = self.attacked
        n = 0
        while targets:
            tl = targets & -targets
            targets ^= tl
            if not attacked(tl.bit_length() - 1, them, base | tl, tl):
                n += 1
        return n

    def _list_fast(self, out: list, us: int, king_sq: int, danger: int, sel: int = -1) -> int:
        """The legal moves into ``out`` in the general steps' order (piece type, from-square,
        to-square), when the side to move is not in check and at most one royal piece is
        protected: plain leapers, sliders and the royal piece by their fast generators, every
        other type (pawns, pinned pieces' types) by _gen_general, type by type. Only the
        pieces on ``sel`` move."""
        them = us ^ 1
        own = self.occ[us]
        enemy = self.occ[them]
        occ = own | enemy
        empty = ~occ & self._mask
        notown = empty | enemy
        pbb = self.pbb if sel == -1 else [bb & sel for bb in self.pbb]
        append = out.append
        protect = [king_sq] if king_sq >= 0 else []
        for kind, code, pt, data in self._fast[us]:
            bb = pbb[code]
            if not bb:
                continue
            if kind == _SLIDE and not bb & danger:
                lm, lc, masks, caches = pt.lm, pt.lc, pt.slide_mask, pt.slide_cache
                while bb:
                    low = bb & -bb
                    sq = low.bit_length() - 1
                    bb ^= low
                    att = caches[sq].get(occ & masks[sq])
                    if att is None:
                        att = slide_targets(pt, sq, occ)
                    targets = (att & notown) | (lm[sq] & empty) | (lc[sq] & enemy)
                    while targets:
                        tl = targets & -targets
                        append(sq | (tl.bit_length() - 1) << 8)
                        targets ^= tl
            elif kind == _LEAP and not bb & danger:
                lm, lc = pt.lm, pt.lc
                while bb:
                    low = bb & -bb
                    sq = low.bit_length() - 1
                    bb ^= low
                    targets = (lm[sq] & empty) | (lc[sq] & enemy)
                    while targets:
                        tl = targets & -targets
                        append(sq | (tl.bit_length() - 1) << 8)
                        targets ^= tl
            elif kind == _ROYAL and king_sq >= 0 and bb == 1 << king_sq:
                targets = (pt.lm[king_sq] & empty) | (pt.lc[king_sq] & enemy)
                base = occ ^ bb
                attacked = self.attacked
                while targets:
                    tl = targets & -targets
                    targets ^= tl
                    to = tl.bit_length() - 1
                    if not attacked(to, them, base | tl, tl):
                        append(king_sq | to << 8)
            else:
                self._gen_general(out, us, protect, False, danger, 0, bb)
        return len(out)

    def _gen_general(self, out: list | None, us: int, protect, in_check: bool, danger: int,
                     danger_to: int, sel: int, evasion: int = -1, first: bool = False) -> int:
        """Moves of the pieces on ``sel`` by the fully general steps (any Betza piece).
        ``evasion``: the only targets a non-royal piece's move may have (see _evasions);
        en passant is tested apart. ``first`` (counting only): stop after the first piece
        with a legal move (whether a reply to a check exists)."""
        them = us ^ 1
        T = self.tables
        ray = T.ray
        positive = T.positive
        board = self.board
        own = self.occ[us]
        enemy = self.occ[them]
        occ = own | enemy
        empty = ~occ & self._mask
        count = 0
        promo_zone = self._promo_zone[us]
        promos = self.variant.promotion
        n_promo = len(promos)
        initial = self._initial[us]
        double_step = self.variant.double_step
        ep = self.ep
        for t, code, pt, royal, pawn in self._plans[us]:
            bb = self.pbb[code] & sel
            while bb:
                low = bb & -bb
                sq = low.bit_length() - 1
                bb ^= low
                quiet = pt.lm[sq] & empty
                caps = pt.lc[sq] & enemy
                if pt.slides:
                    att = pt.slide_cache[sq].get(occ & pt.slide_mask[sq])
                    if att is None:
                        att = slide_targets(pt, sq, occ)
                    quiet |= att & empty
                    caps |= att & enemy
                for d, mv, cp, lim in pt.other_rides:
                    r = ray[d][sq] if lim == 0 else T.limited_ray(d, lim)[sq]
                    b = r & occ
                    if b:
                        f = (b & -b).bit_length() - 1 if positive[d] else b.bit_length() - 1
                        r &= ~ray[d][f]
                    if mv:
                        quiet |= r & empty
                    if cp:
                        caps |= r & enemy
                lame = pt.lame[sq]
                if lame:
                    for to, block, mv, cp, init in lame:
                        if block & occ or (init and not initial >> sq & 1):
                            continue
                        if mv and empty >> to & 1:
                            if not (pawn and init and not double_step):
                                quiet |= 1 << to
                        elif cp and enemy >> to & 1:
                            caps |= 1 << to
                if pt.has_special:
                    q2, c2 = self._hop_bent_targets(pt, sq, occ, empty, enemy)
                    quiet |= q2
                    caps |= c2
                targets = quiet | caps
                if not royal:
                    targets &= evasion
                exact = royal or in_check or (low & danger) or (targets & danger_to)
                if pawn and targets & promo_zone:
                    if exact or out is not None:
                        for to in _bits(targets):
                            if (1 << to) & promo_zone:
                                if exact and not self._safe(sq, to, us, protect, royal, 0):
                                    continue
                                if out is None:
                                    count += n_promo
                                else:
                                    for p in promos:
                                        out.append(encode(sq, to, p + 1, NORMAL))
                            else:
                                if exact and not self._safe(sq, to, us, protect, royal, 0):
                                    continue
                                if out is None:
                                    count += 1
                                else:
                                    out.append(sq | to << 8)
                    else:
                        nz = (targets & promo_zone).bit_count()
                        count += targets.bit_count() + nz * (n_promo - 1)
                elif exact:
                    for to in _bits(targets):
                        if self._safe(sq, to, us, protect, royal, 0):
                            if out is None:
                                count += 1
                                if first:
                                    return count
                            else:
                                out.append(sq | to << 8)
                elif out is None:
                    count += targets.bit_count()
                else:
                    while targets:
                        tl = targets & -targets
                        out.append(sq | (tl.bit_length() - 1) << 8)
                        targets ^= tl
                if pawn and ep >= 0 and pt.lc[sq] >> ep & 1 and not occ >> ep & 1:
                    victim = ep - self._forward[us]
                    vcode = board[victim] if 0 <= victim < len(board) else 0
                    if vcode and vcode & 1 == them and self.variant.pieces[(vcode >> 1) - 1].pawn:
                        if self._safe(sq, ep, us, protect, royal, 1 << victim):
                            if out is None:
                                count += 1
                            else:
                                out.append(encode(sq, ep, 0, EN_PASSANT))
                if first and count:
                    return count
        return count

    def _hop_bent_targets(self, pt, sq, occ, empty, enemy):
        """Quiet and capture targets of a piece's hopper and bent-rider moves."""
        quiet = caps = 0
        ray = self.tables.ray
        positive = self.tables.positive
        for d, mv, cp in pt.hops:
            b = ray[d][sq] & occ
            if not b:
                continue
            s = (b & -b).bit_length() - 1 if positive[d] else b.bit_length() - 1
            r = ray[d][s]
            b = r & occ
            if b:
                f = (b & -b).bit_length() - 1 if positive[d] else b.bit_length() - 1
                if cp and enemy >> f & 1:
                    caps |= 1 << f
                r &= ~ray[d][f] & ~(1 << f)
            if mv:
                quiet |= r & empty
        for first, d, near, mv, cp in pt.bent[sq]:
            if occ >> first & 1:
                continue
            r = ray[d][first]
            b = r & occ
            if b:
                f = (b & -b).bit_length() - 1 if positive[d] else b.bit_length() - 1
                r &= ~ray[d][f]
            r &= ~near
            if mv:
                quiet |= r & empty
            if cp:
                caps |= r & enemy
        return quiet, caps

    def _pins(self, k: int, us: int, occ: int) -> tuple[int, int]:
        """Squares whose pieces' moves need the exact test (danger), and squares a move onto
        needs it (danger_to): pinned pieces; lines between the royal and an enemy hopper
        (a screen may appear or vanish); the block squares of an enemy lame leaper and the
        paths of an enemy bent rider aimed at the royal."""
        T = self.tables
        ray = T.ray
        positive = T.positive
        board = self.board
        pbb = self.pbb
        danger = danger_to = 0
        look, others = self._danger_static[us]
        for od, codes in look:
            b = ray[od][k] & occ
            if not b:
                continue
            f = (b & -b).bit_length() - 1 if positive[od] else b.bit_length() - 1
            c = board[f]
            if c & 1 != us:
                continue
            b = ray[od][f] & occ
            if b:
                f2 = (b & -b).bit_length() - 1 if positive[od] else b.bit_length() - 1
                if board[f2] in codes:
                    danger |= 1 << f
        for code, hop_dirs, rev_lame, rev_bent in others:
            pb = pbb[code]
            if not pb:
                continue
            for od in hop_dirs:
                line = ray[od][k]
                if line & pb:
                    danger |= line
                    danger_to |= line
            if rev_lame:
                for frm, block, init in rev_lame[k]:
                    if pb >> frm & 1:
                        danger |= block
            if rev_bent:
                for frm, path in rev_bent[k]:
                    if pb >> frm & 1:
                        danger |= path
        return danger, danger_to

    def _check_pins(self, k: int, us: int, occ: int) -> tuple[bool, int]:
        """(in check, pinned pieces) of the royal piece on k, in one pass, when every enemy
        capture is a plain leap or an unlimited ride (``_lines_exact``): leapers by the reverse
        leap tables, riders by the first and second piece along each line they could use."""
        leapers, riders, look = self._lines_exact[us]
        pbb = self.pbb
        for code, rev_lc in leapers:
            if rev_lc[k] & pbb[code]:
                return True, 0
        near = 0
        for code, rev_ride in riders:
            near |= rev_ride[k] & pbb[code]
        if not near:
            return False, 0
        ray = self.tables.ray
        board = self.board
        in_check = False
        danger = 0
        for od, codes, pos_dir in look:
            line = ray[od][k]
            if not line & near:
                continue
            b = line & occ
            f = (b & -b).bit_length() - 1 if pos_dir else b.bit_length() - 1
            c = board[f]
            if c & 1 != us:
                if c in codes:
                    in_check = True
                continue
            b = ray[od][f] & occ
            if b:
                f2 = (b & -b).bit_length() - 1 if pos_dir else b.bit_length() - 1
                if board[f2] in codes:
                    danger |= 1 << f
        return in_check, danger

    def _evasions(self, k: int, us: int, occ: int) -> int:
        """The royal piece on k is in check and every enemy capture is a plain leap or an
        unlimited ride (``_lines_exact``): the squares where a move of another piece can meet
        the check -- the checker's square and, for a rider, the squares between it and the
        royal piece; none at all against two checkers (only the royal piece can move then)."""
        leapers, riders, look = self._lines_exact[us]
        pbb = self.pbb
        checkers = 0
        for code, rev_lc in leapers:
            checkers |= rev_lc[k] & pbb[code]
        between = 0
        ray = self.tables.ray
        board = self.board
        for od, codes, pos_dir in look:
            line = ray[od][k]
            b = line & occ
            if not b:
                continue
            f = (b & -b).bit_length() - 1 if pos_dir else b.bit_length() - 1
            if board[f] in codes:
                checkers |= 1 << f
                between |= line & ~ray[od][f] & ~(1 << f)
        if checkers & (checkers - 1):
            return 0
        return checkers | between

    def _safe(self, frm: int, to: int, us: int, protect, royal: bool, extra_remove: int) -> bool:
        """Exact test: after moving frm->to (removing extra_remove too), is every protected
        royal piece of ``us`` unattacked?"""
        if not protect:
            return True
        occ = ((self.occ[0] | self.occ[1]) & ~(1 << frm) & ~extra_remove) | (1 << to)
        exclude = (1 << to) | extra_remove
        them = us ^ 1
        attacked = self.attacked
        for k in protect:
            sq = to if k == frm else k
            if attacked(sq, them, occ, exclude):
                return False
        return True

    def _castling_moves(self, us: int, occ: int, out, protect, sel: int = -1) -> int:
        rights = self.castling & self._castle_rank[us]
        if not rights:
            return 0
        them = us ^ 1
        n = 0
        while rights:
            low = rights & -rights
            rights ^= low
            rsq = low.bit_length() - 1
            data = self._castle_paths.get(rsq)
            if data is None:
                continue
            k, kto, rto, must_empty = data
            if must_empty & occ or self.board[k] not in self._king_code[us] or not sel >> k & 1:
                continue
            step = 1 if kto > k else -1
            if self.attacked(k + step, them, occ) or self.attacked(k, them, occ):
                continue
            after = (occ & ~(1 << k) & ~low) | (1 << kto) | (1 << rto)
            if self.attacked(kto, them, after):
                continue
            if protect and len(protect) > 1:
                if any(self.attacked(s, them, after) for s in protect if s != k):
                    continue
            n += 1
            if out is not None:
                out.append(encode(k, kto, rsq + 1, CASTLE))
        return n

    def _drop_moves(self, us, empty, out, protect) -> int:
        """Plain drops (any empty square; pawns not on the last rank). Families with drop
        conditions of their own generate their drops themselves."""
        n = 0
        zone_bad = self._promo_zone[us]
        for t, cnt in enumerate(self.hands[us]):
            if not cnt:
                continue
            targets = empty
            if self.variant.pieces[t].pawn:
                targets &= ~zone_bad
            for to in _bits(targets):
                if protect and not self._safe_drop(to, us, protect):
                    continue
                n += 1
                if out is not None:
                    out.append(encode(t, to, 0, DROP))
        return n

    def _safe_drop(self, to, us, protect) -> bool:
        occ = self.occ[0] | self.occ[1] | (1 << to)
        return not any(self.attacked(k, us ^ 1, occ) for k in protect)

    # -- making moves ----------------------------------------------------------------------
    def push(self, m: int) -> None:
        """Make a move (an int from legal_moves); undo it with pop()."""
        frm = m & 0xFF
        to = (m >> 8) & 0xFF
        flag = m >> 24
        us = self.turn
        board, pbb, occ = self.board, self.pbb, self.occ
        saved = (self.castling, self.ep, self.halfmove)
        self.ep = -1
        if flag == DROP:
            self.hands[us][frm] -= 1
            self._put(to, (frm + 1) * 2 + us)
            self.halfmove += 1
            self.stack.append((m, 0, 0, 0) + saved)
        elif flag or frm == to:
            extra = (m >> 16) & 0xFF
            code = self._remove(frm)
            captured = self._remove(to)
            side_code = 0
            piece = self.variant.pieces[(code >> 1) - 1]
            if flag == CASTLE:
                side_code = self._remove(extra - 1)
                self._put(to, code)
                self._put(frm + (1 if to > frm else -1), side_code)
            else:
                if flag == EN_PASSANT:
                    side_code = self._remove(to - self._forward[us])
                self._put(to, ((extra << 1) + us) if (extra and flag == NORMAL) else code)
                if piece.pawn and abs(to - frm) == 2 * self.geometry.files and self.variant.en_passant:
                    self.ep = (frm + to) // 2
            if captured or piece.pawn or side_code and flag == EN_PASSANT:
                self.halfmove = 0
            else:
                self.halfmove += 1
            if self.castling:
                clr = self._castle_clear
                if frm in clr:
                    self.castling &= ~clr[frm]
                if to in clr:
                    self.castling &= ~clr[to]
            self.stack.append((m, code, captured, side_code) + saved)
        else:
            # a plain move or a promotion, inlined: the generator's hot path
            code = board[frm]
            fb = 1 << frm
            tb = 1 << to
            board[frm] = 0
            pbb[code] ^= fb
            occ[us] ^= fb | tb
            captured = board[to]
            if captured:
                pbb[captured] ^= tb
                occ[us ^ 1] ^= tb
            extra = (m >> 16) & 0xFF
            new = ((extra << 1) + us) if extra else code
            board[to] = new
            pbb[new] |= tb
            if self._pawn_code[code]:
                self.halfmove = 0
                if self._ep_step == abs(to - frm):
                    self.ep = (frm + to) >> 1
            elif captured:
                self.halfmove = 0
            else:
                self.halfmove += 1
            if self.castling:
                clr = self._castle_clear
                if frm in clr:
                    self.castling &= ~clr[frm]
                if to in clr:
                    self.castling &= ~clr[to]
            self.stack.append((m, code, captured, 0) + saved)
        if us:
            self.fullmove += 1
        self.turn = us ^ 1

    def pop(self) -> int:
        """Undo the last push (or null move); returns the move undone."""
        m, code, captured, side_code, castling, ep, halfmove = self.stack.pop()
        self.turn = us = self.turn ^ 1
        if us:
            self.fullmove -= 1
        self.castling, self.ep, self.halfmove = castling, ep, halfmove
        if m == NULL_MOVE:
            return m
        frm = m & 0xFF
        to = (m >> 8) & 0xFF
        flag = m >> 24
        if not flag and frm != to:
            board, pbb, occ = self.board, self.pbb, self.occ
            fb = 1 << frm
            tb = 1 << to
            pbb[board[to]] ^= tb
            board[frm] = code
            pbb[code] |= fb
            occ[us] ^= fb | tb
            board[to] = captured
            if captured:
                pbb[captured] |= tb
                occ[us ^ 1] |= tb
            return m
        if flag == DROP:
            self._remove(to)
            self.hands[us][frm] += 1
            return m
        extra = (m >> 16) & 0xFF
        self._remove(to)
        if flag == CASTLE:
            self._remove(frm + (1 if to > frm else -1))
            self._put(extra - 1, side_code)
        elif flag == EN_PASSANT:
            self._put(to - self._forward[us], side_code)
        if captured:
            self._put(to, captured)
        self._put(frm, code)
        return m

    def null_move(self) -> None:
        """Pass the turn (used by families with passes); undo with pop()."""
        self.stack.append((NULL_MOVE, 0, 0, 0, self.castling, self.ep, self.halfmove))
        self.ep = -1
        if self.turn == BLACK:
            self.fullmove += 1
        self.turn ^= 1


def slot_copier(cls):
    """A function assigning every slot of ``cls`` from one instance to another, written out
    (a loop of getattr/setattr costs several times more)."""
    lines = ["def copy_slots(src, dst):"] + [f"    dst.{n} = src.{n}" for n in cls.__slots__]
    namespace: dict = {}
    exec("\n".join(lines), namespace)
    return namespace["copy_slots"]


_copy_slots = slot_copier(Position)

_DERIVED: dict[int, tuple] = {}


def _derived(variant) -> tuple:
    """What move generation derives from a variant (its tables and the plans below), computed
    once per variant and shared by all its positions."""
    hit = _DERIVED.get(id(variant))
    if hit is not None and hit[0] is variant:
        return hit[1]
    T = tables_for(variant)
    g = variant.geometry
    promo_zone = (T.rank_mask[g.ranks - 1], T.rank_mask[0])
    royal_types = [t for t, p in enumerate(variant.pieces) if p.royal]
    data = (
        T,
        (T.rank_mask[0], T.rank_mask[g.ranks - 1]),
        promo_zone,
        # Initial ranks for "i" moves: the relative rank(s) where the type starts (pawns: 2nd).
        _initial_ranks(variant, T),
        # Generation plans: (type, code, tables, royal, pawn) per colour.
        tuple(tuple((t, (t + 1) * 2 + c, T.pieces[c][t], p.royal, p.pawn) for t, p in enumerate(variant.pieces))
              for c in (0, 1)),
        tuple(_attack_plan(variant, T, c) for c in (0, 1)),
        tuple(_danger_static(variant, T, c) for c in (0, 1)),
        tuple(_lines_exact(variant, T, c) for c in (0, 1)),
        tuple(_fast_plan(variant, T, c, promo_zone[c]) for c in (0, 1)),
        tuple(tuple(((t + 1) * 2 + c, T.pieces[c][t]) for t, p in enumerate(variant.pieces) if p.pawn)
              for c in (0, 1)),
        [False, False] + [p.pawn for p in variant.pieces for _ in (0, 1)],
        # a pawn's double step sets the en passant square (none when the variant has no e.p.)
        2 * g.files if variant.en_passant else -1,
        ((royal_types[0] + 1) * 2, (royal_types[0] + 1) * 2 + 1) if len(royal_types) == 1 else None,
        # per piece code: the attacks of a piece that only leaps (a list per square), else None
        [None, None] + [_constant_attacks(T.pieces[c][t]) for t in range(len(variant.pieces)) for c in (0, 1)],
    )
    if len(_DERIVED) >= 64:    # variants made during play (csipgs designs) come and go
        _DERIVED.clear()
    _DERIVED[id(variant)] = (variant, data)
    return data


_GENERAL, _LEAP, _SLIDE, _SET, _ROYAL = range(5)


def _lines_exact(variant, T, us: int):
    """What _check_pins needs against the side opposing ``us``, or None when an enemy piece
    captures some other way (limited rides, hops, lame or bent moves): the enemy leapers'
    (code, reverse leap table), the enemy riders' (code, reverse ride table), and per line
    from the royal piece (direction, riders using it, direction is positive)."""
    them = us ^ 1
    leapers, riders = [], []
    look: dict[int, set] = {}
    for t, p in enumerate(variant.pieces):
        pt = T.pieces[them][t]
        code = (t + 1) * 2 + them
        if any(cp for _, _, cp in pt.hops) or any(e[3] for sq in pt.lame for e in sq) or \
                any(e[4] for sq in pt.bent for e in sq):
            return None
        if any(cp and lim for _, _, cp, lim in pt.rides):
            return None
        if any(pt.lc):
            leapers.append((code, pt.rev_lc))
        rides = [d for d, mv, cp, lim in pt.rides if cp]
        if rides:
            riders.append((code, pt.rev_ride))
            for d in rides:
                look.setdefault(T.opposite[d], set()).add(code)
    return (tuple(leapers), tuple(riders),
            tuple((od, frozenset(codes), T.positive[od]) for od, codes in look.items()))


def _fast_plan(variant, T, color: int, promo_zone: int):
    """Per piece type of ``color``: (kind, code, tables, data) -- which generator _count_fast
    uses for it, chosen once when the variant loads:

    * _SET: leapers with lame or initial moves, and pawns: every such piece at once, by shifting
      the type's bitboard (data: the shifts, the promotion zone, the promotion choices);
    * _LEAP: plain leapers, piece by piece from the leap tables;
    * _SLIDE: unlimited riders that move and capture alike (plus plain leaps);
    * _ROYAL: a plain leaping royal piece: each move tested exactly;
    * _GENERAL: anything else (limited or one-mode rides, hoppers, bent riders, lame royals...),
      by the general steps."""
    plan = []
    for t, p in enumerate(variant.pieces):
        pt = T.pieces[color][t]
        code = (t + 1) * 2 + color
        plain = not pt.has_special and not pt.other_rides and not any(pt.lame)
        kind, data = _GENERAL, None
        if p.royal:
            if plain and not pt.slides and not p.pawn:
                kind = _ROYAL
        elif pt.setwise is not None and (p.pawn or any(pt.lame)):
            vectors = []
            full = (1 << variant.geometry.size) - 1
            for shift, sources, blocks, mv, cp, init in pt.setwise:
                if p.pawn and init and not variant.double_step:
                    mv = False
                if mv or cp:   # mv, cp as masks: (mv & empty) | (cp & enemy) are the targets
                    vectors.append((shift, sources, blocks, full if mv else 0, full if cp else 0))
            kind, data = _SET, (tuple(vectors), promo_zone if p.pawn else 0, len(variant.promotion))
        elif plain and not p.pawn:
            kind = _SLIDE if pt.slides else _LEAP
        plan.append((kind, code, pt, data))
    return tuple(plan)


def _constant_attacks(pt) -> list[int] | None:
    """``pt.lc`` when the piece attacks nothing but its plain capturing leaps (what
    :meth:`Position.attacks_from` computes then never depends on the occupancy), else None."""
    if any(cp for _, _, cp, _ in pt.rides) or any(cp for _, _, cp in pt.hops) \
            or any(e[3] for legs in pt.lame for e in legs) or any(e[4] for legs in pt.bent for e in legs):
        return None
    return pt.lc


def _bits(bb: int):
    while bb:
        low = bb & -bb
        yield low.bit_length() - 1
        bb ^= low


def _initial_ranks(variant, T) -> tuple[int, int]:
    """Per colour: the squares that count as a piece's initial position for 'i' moves —
    the relative rank where the variant's pawns (or the piece) start: rank 2 / rank ranks-1."""
    g = variant.geometry
    w = T.rank_mask[1] if g.ranks > 2 else 0
    b = T.rank_mask[g.ranks - 2] if g.ranks > 2 else 0
    return (w, b)


def _attack_plan(variant, T, color: int):
    """Per piece type of ``color``: what attack detection needs, cheapest checks first."""
    plan = []
    g = variant.geometry
    for t, p in enumerate(variant.pieces):
        pt = T.pieces[color][t]
        ride_caps = tuple((T.opposite[d], None if lim == 0 else T.limited_ray(T.opposite[d], lim))
                          for d, mv, cp, lim in pt.rides if cp)
        hop_caps = tuple(T.opposite[d] for d, mv, cp in pt.hops if cp)
        rev_lame: list | None = None
        if any(pt.lame):
            rev_lame = [[] for _ in range(g.size)]
            for frm in range(g.size):
                for to, block, mv, cp, init in pt.lame[frm]:
                    if cp:
                        rev_lame[to].append((frm, block, init))
            rev_lame = [tuple(x) for x in rev_lame]
            if not any(rev_lame):
                rev_lame = None
        rev_bent: list | None = None
        if any(pt.bent):
            rev_bent = [[] for _ in range(g.size)]
            for frm in range(g.size):
                for first, d, near, mv, cp in pt.bent[frm]:
                    if not cp:
                        continue
                    path = 1 << first
                    for s in _ray_squares(T, d, first):
                        if not (near >> s & 1):
                            rev_bent[s].append((frm, path))
                        path |= 1 << s
            rev_bent = [tuple(x) for x in rev_bent]
        plan.append(((t + 1) * 2 + color, pt.rev_lc, pt.rev_ride, ride_caps, hop_caps, rev_lame, rev_bent))
    # Kings and leapers are cheap to test: keep the variant's order (pawns, knights first helps).
    return tuple(plan)


def _ray_squares(T, d, sq):
    """Squares along direction d from sq, nearest first."""
    bb = T.ray[d][sq]
    sqs = list(_bits(bb))
    return sqs if T.positive[d] else sqs[::-1]


def _danger_static(variant, T, us: int):
    """For the side ``us``: the rider lines to watch for pins (look direction from the royal,
    enemy codes that ride along it), and per enemy type with hopper, lame or bent captures
    the reverse data _pins needs (taken from the attack plan)."""
    them = us ^ 1
    look: dict[int, set[int]] = {}
    for t, p in enumerate(variant.pieces):
        pt = T.pieces[them][t]
        for d, mv, cp, lim in pt.rides:
            if cp:
                look.setdefault(T.opposite[d], set()).add((t + 1) * 2 + them)
    look_t = tuple((od, frozenset(codes)) for od, codes in look.items())
    others = []
    for code, rev_lc, rev_ride, ride_caps, hop_caps, rev_lame, rev_bent in _attack_plan(variant, T, them):
        if hop_caps or rev_lame or rev_bent:
            others.append((code, hop_caps, rev_lame, rev_bent))
    return look_t, tuple(others)
