"""Pieces beyond Fairy-Stockfish (Giraffe, Griffin, Aanca and friends), checked two ways:

* hand-counted destinations on small positions, worked out square by square in comments;
* a naive reference generator written here from the rules text's descriptions (mailbox,
  try every move, test the king by brute force), compared move for move with the engine
  along random games of the variants Fairy-Stockfish cannot play.
"""

from __future__ import annotations

import random

import pytest

from engine.game import ChessGame
from engine.moves import to_uci
from engine.position import Position
from engine.variant import Variant

FILES = "abcdefghijkl"


def lone(piece: str, square: str, extra: str = "", files=12, ranks=8) -> tuple[Variant, Position]:
    """A position with the white piece on square and kings tucked away in corners (a1 / l8
    on 12x8), plus extra 'Xsq' pieces (upper = white)."""
    v = Variant.from_dict({"name": "t", "board": {"files": files, "ranks": ranks},
                           "pieces": ["king", "pawn", "rook", "knight", "bishop", "queen", "camel",
                                      "giraffe", "princess", "empress", "cannon", "tiger", "man",
                                      "griffin", "aanca", "alfil", "fers", "wazir"],
                           "start_fen": f"{ranks - 1 and ''}{'/'.join(['k' + str(files - 1)] + [str(files)] * (ranks - 2) + [str(files - 1) + 'K'])} w - - 0 1"})
    pos = Position.from_fen(v)
    g = v.geometry
    for spec in [piece + square] + extra.split():
        letter, sq = spec[0], g.parse(spec[1:])
        t = v.piece_index(letter)
        pos._put(sq, (t + 1) * 2 + (0 if letter.isupper() else 1))
    return v, pos


def destinations(v, pos, square: str) -> set[str]:
    g = v.geometry
    sq = g.parse(square)
    return {to_uci(m, v)[len(square):] for m in pos.legal_moves() if (m & 0xFF) == sq}


def test_griffin_slides_at_least_two_squares_after_its_diagonal_step():
    # F>R{2,} from f4 on an empty 12x8 board. Diagonal steps e5 g5 e3 g3, then outward:
    #   g5: up g6(no: one step) g7 g8; right h5(no) i5 j5 k5 l5   -> 2 + 4
    #   e5: up e6(no) e7 e8; left d5(no) c5 b5 a5                  -> 2 + 3
    #   g3: down g2(no) g1; right h3(no) i3 j3 k3 l3 (l1's king is not in the way) -> 1 + 4
    #   e3: down e2(no) e1; left d3(no) c3 b3 a3                   -> 1 + 3   = 20
    v, pos = lone("F", "f4")
    assert destinations(v, pos, "f4") == {
        "g7", "g8", "i5", "j5", "k5", "l5", "e7", "e8", "c5", "b5", "a5",
        "g1", "i3", "j3", "k3", "l3", "e1", "c3", "b3", "a3"}


def test_griffin_is_blocked_on_its_step_and_on_the_first_slide_square():
    # A pawn on g5 blocks everything beyond it; a pawn on e6 (not a destination) blocks e7 e8;
    # a black pawn on c3 is captured (two slide squares from e3 leftwards: d3 then c3).
    v, pos = lone("F", "f4", "Pg5 Pe6 pc3")
    got = destinations(v, pos, "f4")
    assert got == {"c5", "b5", "a5", "g1", "i3", "j3", "k3", "l3", "e1", "c3"}


def test_aanca_steps_orthogonally_then_slides_two_or_more_diagonally():
    # W>B{2,} from f4: steps f5 f3 e4 g4, then outward diagonals of at least two squares:
    #   f5: g6(no) h7 i8; e6(no) d7 c8            -> 4
    #   f3: g2(no) h1; e2(no) d1                  -> 2
    #   e4: d5(no) c6 b7 a8; d3(no) c2 b1         -> 5
    #   g4: h5(no) i6 j7 k8; h3(no) i2 j1         -> 5   = 16
    v, pos = lone("U", "f4")
    assert destinations(v, pos, "f4") == {
        "h7", "i8", "d7", "c8", "h1", "d1", "c6", "b7", "a8", "c2", "b1", "i6", "j7", "k8", "i2", "j1"}


def test_giraffe_leaps_one_by_four():
    # (1,4) from f4 = file 6, rank 4: g8 e8 (up 4), j5 j3 (right 4), b5 b3 (left 4);
    # down 4 is off the board. Blockers do not matter to a leaper.
    v, pos = lone("G", "f4", "Pf5 Pg4 Pg5")
    assert destinations(v, pos, "f4") == {"g8", "e8", "j5", "j3", "b5", "b3"}


def test_camel_princess_empress_tiger_cannon_man():
    v, pos = lone("L", "f4")
    # camel (3,1): i5 i3 c5 c3 g7 e7 g1 e1
    assert destinations(v, pos, "f4") == {"i5", "i3", "c5", "c3", "g7", "e7", "g1", "e1"}
    v, pos = lone("T", "f4", "pd6 ph5 pg6")
    # tiger moves as a bishop (not capturing: blocked by g5? no, g5 is empty) and captures as
    # a knight: bishop lines from f4: g5 (then h6 i7 j8), e5 (then d6 is black: stop, no
    # capture), g3 h2 i1, e3 d2 c1; knight captures: d5? empty; h5 black -> capture; g6 black
    # -> capture; d3 e2 g2 h3 e6 empty.
    assert destinations(v, pos, "f4") == {"g5", "h6", "i7", "j8", "e5", "g3", "h2", "i1", "e3", "d2", "c1",
                                          "h5", "g6"}
    v, pos = lone("O", "f4", "Pf6 pf8 pf7 Pb4 Pc4 ph4")
    # cannon: moves as a rook without capturing: f5; g4 (h4 blocks, no capture), e4 d4; f3 f2 f1.
    # captures by jumping exactly one piece: up over f6 -> f7 (black) captured; left over c4 -> b4
    # is white, no; right over h4 -> nothing beyond? i4.. l4 empty -> no capture.
    assert destinations(v, pos, "f4") == {"f5", "g4", "e4", "d4", "f3", "f2", "f1", "f7"}
    v, pos = lone("M", "f4")
    assert destinations(v, pos, "f4") == {"e3", "e4", "e5", "f3", "f5", "g3", "g4", "g5"}


# ---------------------------------------------------------------- naive reference generator
def _vectors(x, y):
    return {(a * sa, b * sb) for a, b in ((x, y), (y, x)) for sa in (1, -1) for sb in (1, -1)}


ORTH, DIAG = _vectors(1, 0), _vectors(1, 1)
# letter -> list of (kind, vectors) from the rules text's descriptions (not from Betza)
REF = {
    "r": [("slide", ORTH)], "b": [("slide", DIAG)], "q": [("slide", ORTH | DIAG)],
    "n": [("leap", _vectors(2, 1))], "l": [("leap", _vectors(3, 1))], "g": [("leap", _vectors(4, 1))],
    "a": [("slide", DIAG), ("leap", _vectors(2, 1))], "k": [("leap", ORTH | DIAG)],
    "m": [("leap", ORTH | DIAG)], "e": [("leap", _vectors(2, 2))], "x": [("leap", DIAG)],
    "w": [("leap", ORTH)], "f": [("griffin", DIAG)],
}


class Ref:
    """A naive board: dict square-name -> letter (upper = white)."""

    def __init__(self, fen: str, promo: str):
        parts = fen.split()
        self.board = {}
        for i, row in enumerate(parts[0].split("/")):
            rank = 8 - i
            f = 0
            num = ""
            for ch in row + " ":
                if ch.isdigit():
                    num += ch
                    continue
                if num:
                    f += int(num)
                    num = ""
                if ch != " ":
                    self.board[(f, rank)] = ch
                    f += 1
        self.white = parts[1] == "w"
        self.castling = parts[2]
        self.ep = None if parts[3] == "-" else (FILES.index(parts[3][0]), int(parts[3][1:]))
        self.promo = promo

    @staticmethod
    def on(f, r):
        return 0 <= f < 12 and 1 <= r <= 8

    def targets(self, sq, piece, captures_only=False):
        """(to, is_capture) pseudo moves of the piece on sq, ignoring king safety."""
        white = piece.isupper()
        f0, r0 = sq
        out = []
        if piece.lower() == "p":
            d = 1 if white else -1
            for df in (-1, 1):
                t = (f0 + df, r0 + d)
                if self.on(*t) and t in self.board and self.board[t].isupper() != white:
                    out.append((t, True))
                elif captures_only and self.on(*t):
                    out.append((t, True))
                elif t == self.ep:
                    out.append((t, True))
            if not captures_only:
                t = (f0, r0 + d)
                if self.on(*t) and t not in self.board:
                    out.append((t, False))
                    t2 = (f0, r0 + 2 * d)
                    if r0 == (2 if white else 7) and t2 not in self.board:
                        out.append((t2, False))
            return out
        for kind, vecs in REF[piece.lower()]:
            for dx, dy in vecs:
                if kind == "leap":
                    paths = [[(f0 + dx, r0 + dy)]]
                elif kind == "slide":
                    paths = [[(f0 + dx * k, r0 + dy * k) for k in range(1, 13)]]
                else:  # griffin: diagonal step then outward orthogonal slide of 2+ squares
                    step = (f0 + dx, r0 + dy)
                    if not self.on(*step) or step in self.board:
                        continue
                    paths = []
                    for ox, oy in ((dx, 0), (0, dy)):
                        paths.append([(step[0] + ox * k, step[1] + oy * k) for k in range(1, 13)])
                for path in paths:
                    for i, t in enumerate(path):
                        if not self.on(*t):
                            break
                        occupied = t in self.board
                        allowed = kind != "griffin" or i >= 1
                        if allowed:
                            if not occupied:
                                out.append((t, False))
                            elif self.board[t].isupper() != white:
                                out.append((t, True))
                        if occupied or kind == "leap":
                            break
        return out

    def attacked(self, sq, by_white):
        for s, p in list(self.board.items()):
            if p.isupper() == by_white:
                for t, cap in self.targets(s, p, captures_only=True):
                    if t == sq and (cap or p.lower() != "p"):
                        return True
        return False

    def moves(self):
        white = self.white
        out = []
        for s, p in list(self.board.items()):
            if p.isupper() != white:
                continue
            for t, cap in self.targets(s, p):
                if t in self.board and self.board[t].isupper() == white:
                    continue
                saved = dict(self.board)
                victim_ep = p.lower() == "p" and t == self.ep
                del self.board[s]
                self.board[t] = p
                if victim_ep:
                    self.board.pop((t[0], s[1]), None)
                king = next(k for k, v in self.board.items() if v == ("K" if white else "k"))
                ok = not self.attacked(king, not white)
                self.board = saved
                if not ok:
                    continue
                name = f"{FILES[s[0]]}{s[1]}{FILES[t[0]]}{t[1]}"
                if p.lower() == "p" and t[1] in (1, 8):
                    out.extend(name + c for c in self.promo)
                else:
                    out.append(name)
        # castling: king two squares toward an unmoved rook in the corner; rook leaps over it
        rank = 1 if white else 8
        king_sq = next((k for k, v in self.board.items() if v == ("K" if white else "k")), None)
        for right in self.castling:
            if right == "-" or right.isupper() != white or king_sq[1] != rank:
                continue
            side = 1 if right.lower() == "k" else -1
            rook = (11 if side == 1 else 0, rank)
            between = range(min(rook[0], king_sq[0]) + 1, max(rook[0], king_sq[0]))
            if any((f, rank) in self.board for f in between):
                continue
            crossed, dest = (king_sq[0] + side, rank), (king_sq[0] + 2 * side, rank)
            if self.attacked(king_sq, not white) or self.attacked(crossed, not white):
                continue
            saved = dict(self.board)
            del self.board[king_sq]
            del self.board[rook]
            self.board[dest] = "K" if white else "k"
            self.board[crossed] = "R" if white else "r"
            ok = not self.attacked(dest, not white)
            self.board = saved
            if ok:
                out.append(f"{FILES[king_sq[0]]}{rank}{FILES[dest[0]]}{rank}")
        return sorted(out)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tomorrow-1", "tomorrow-4", "tomorrow-5", "tomorrow-4-great"])
def test_random_games_match_the_naive_reference(variant, name):
    v = variant(name)
    promo = "".join(v.pieces[i].letter for i in v.promotion)
    rng = random.Random(name)
    checked = 0
    for _ in range(3):
        game = ChessGame(v)
        for _ in range(90):
            ours = sorted(a.text for a in game.legal_actions())
            ref = Ref(game.position.fen(ep="always"), promo).moves()
            assert ours == ref, (name, game.fen(), sorted(set(ours) ^ set(ref)))
            checked += 1
            if not ours:
                break
            game.push(rng.choice(ours))
    assert checked > 150
