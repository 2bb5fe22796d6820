"""Chego drop generation: perft counts worked out by hand, and a naive referee to compare with.

game_perft counts every action, passes included; after two passes in a row the game is over
and has no actions.
"""

import random

import pytest

from board_driver.config import load_variant
from engine.game import new_game
from engine.perft import game_perft
from engine.variant import Variant


def tiny(files, ranks, pieces, hand):
    return Variant.from_dict({"name": "tiny", "family": "chego", "board": {"files": files, "ranks": ranks},
                              "pieces": pieces, "castling": False, "promotion": "none",
                              "start_fen": "/".join([str(files)] * ranks) + f"[{hand}] w - - 0 1"}, "<test>")


# -- hand-verified counts ---------------------------------------------------------------------

@pytest.mark.parametrize("variant, fen, depth, expected", [
    # Empty 8x8: K Q R B N fit on all 64 squares, a pawn on the 56 below (White) or above
    # (Black) its last rank. White starts by dropping: no pass. 5 * 64 + 56.
    ("chego", None, 1, 376),
    # Black to move on the empty board may pass: 5 * 64 + 56 + 1.
    ("chego", "8/8/8/8/8/8/8/8[KQRRBBNNPPPPPPPPkqrrbbnnpppppppp] b - - 0 1", 1, 377),
    # 12x8: seven piece types (the camel and giraffe always find a square) on 96, pawns on 84.
    ("chego-12x8", None, 1, 7 * 96 + 84),
    # No d4 e4 d5 e5: 60 squares. Every piece but the pawn reaches a square from each of them
    # (c3's bishop goes to b2, d3's rook to d2...); a pawn needs a forward diagonal, which it
    # has everywhere below rank 8 (c3 -> b4, e4 is a hole but f4 is not...): 5 * 60 + 52.
    ("chego-holes", None, 1, 5 * 60 + 52),
    # White Ne4, Black to drop a rook: 55 empty squares outside the knight's 8; a rook on the
    # e-file or the 4th rank (7 + 7 of them) would attack e4. 55 - 14 + pass.
    ("chego", "8/8/8/8/4N3/8/8/8[r] b - - 0 1", 1, 42),
    # ...and a black Nb7 as well: c5 and d6 turn neutral (1-1), a5 and d8 are Black's; 54
    # neutral empty squares. A rook may not stand on the e-file, the 4th rank, the b-file or
    # the 7th rank (e7 and b4 counted twice): 54 - 26 = 28, plus the pass.
    ("chego", "8/1n6/8/8/4N3/8/8/8[r] b - - 0 1", 1, 29),
    # White Ra1, Black to drop a bishop: 49 neutral squares; the 7 on the long diagonal would
    # attack a1: 42, plus the pass. With the rook Black's own, the count is the same.
    ("chego", "8/8/8/8/8/8/8/R7[b] b - - 0 1", 1, 43),
    ("chego", "8/8/8/8/8/8/8/r7[b] b - - 0 1", 1, 43),
    # White Ph7 (g8 only), Black Ne7 (c8 c6 d5 f5 g6 g8): 57 neutral empty squares; a rook on
    # the e-file (7), the 7th rank (6) or the h-file (7) would attack a piece: 37 + pass. One
    # of them, R@g8, kills the pawn (tested in test_chego.py).
    ("chego", "8/4n2P/8/8/8/8/8/8[r] b - - 0 1", 1, 38),
])
def test_hand_counted_perft(variant, fen, depth, expected):
    game = new_game(load_variant(variant), fen)
    assert game_perft(game, depth) == expected


def test_3x3_knights_depth_3():
    # 3x3, one knight each. The centre knight attacks nothing, so 8 squares (White starts by
    # dropping: no pass). After a knight on a corner (or an edge square) the other side has
    # exactly 5 neutral squares it may use (its knight there attacks two empty squares and no
    # piece) + pass = 6. depth 2: 8 * 6 = 48.
    # depth 3: drop-drop -> only pass (8 * 5); drop-pass -> only pass (8). 40 + 8 = 48.
    v = tiny(3, 3, {"knight": {}}, "Nn")
    assert [game_perft(new_game(v), d) for d in (1, 2, 3)] == [8, 48, 48]


def test_3x3_rooks_depth_3():
    # A rook anywhere on 3x3 attacks its file and rank, leaving 4 neutral squares for the
    # other rook, each legal. White may not pass before its first drop. depth 1: 9;
    # depth 2: 9 * 5 = 45; depth 3: drop-drop -> only pass (9 * 4), drop-pass -> only pass (9): 45.
    v = tiny(3, 3, {"rook": {}}, "Rr")
    assert [game_perft(new_game(v), d) for d in (1, 2, 3)] == [9, 45, 45]


# -- a naive referee ---------------------------------------------------------------------------
# Written from the rules text without the engine's attack tables: attacks by stepping, every
# condition recomputed from scratch for every candidate drop.

LEAPS = {"k": [(1, 0), (1, 1)], "n": [(2, 1)], "l": [(3, 1)], "g": [(4, 1)]}
SLIDES = {"r": [(1, 0)], "b": [(1, 1)], "q": [(1, 0), (1, 1)]}


def _sym(vecs):
    out = set()
    for x, y in vecs:
        for a, b in ((x, y), (y, x)):
            out |= {(a, b), (-a, b), (a, -b), (-a, -b)}
    return out


def naive_attacks(board, geo, sq):
    """Squares the piece on sq attacks: board maps square -> FEN letter."""
    letter = board[sq]
    kind, white = letter.lower(), letter.isupper()
    f, r = geo.file_of(sq), geo.rank_of(sq)
    out = set()
    if kind == "p":
        dy = 1 if white else -1
        targets = [(f - 1, r + dy), (f + 1, r + dy)]
    else:
        targets = [(f + dx, r + dy) for dx, dy in _sym(LEAPS.get(kind, []))]
    out |= {geo.square(x, y) for x, y in targets if geo.on_board(x, y)}
    for dx, dy in _sym(SLIDES.get(kind, [])):
        x, y = f + dx, r + dy
        while geo.on_board(x, y):
            out.add(geo.square(x, y))
            if geo.square(x, y) in board:
                break
            x, y = x + dx, y + dy
    return out


def naive_actions(game):
    """{(text, killed squares)} by the rules text, recomputed from nothing for each drop."""
    geo = game.geometry
    board = {sq: (l.upper() if c == 0 else l) for sq, (l, c) in game.piece_map().items()}
    us = game.turn
    empty = [s for s in geo.squares() if s not in board]

    def libs(b, sq):
        return {s for s in naive_attacks(b, geo, sq) if s not in b and s in geo.squares()}

    count = {s: [0, 0] for s in empty}
    for sq, letter in board.items():
        for s in libs(board, sq):
            count[s][0 if letter.isupper() else 1] += 1
    before = {sq: len(libs(board, sq)) for sq in board}
    out = {("pass", ())}
    for t, p in enumerate(game.variant.pieces):
        if not game.in_hand(us, t):
            continue
        letter = p.letter.upper() if us == 0 else p.letter
        for s in empty:
            if count[s][0] != count[s][1]:
                continue
            after = dict(board)
            after[s] = letter
            att = naive_attacks(after, geo, s)
            if any(x in board for x in att) or not any(x not in after for x in att):
                continue
            dead = [q for q in board if before[q] and not libs(after, q)]
            if any(board[q].isupper() == (us == 0) for q in dead):
                continue
            out.add((f"{p.letter.upper()}@{geo.name(s)}", tuple(sorted(dead))))
    # "The white player starts by dropping one of his pieces": no pass before White's first drop
    if us == 0 and not board and not any(game.captured) and len(out) > 1:
        out.discard(("pass", ()))
    return out


def engine_actions(game):
    return {(a.text, tuple(sorted(a.lifts))) for a in game.legal_actions()}


@pytest.mark.parametrize("variant, seed", [
    ("chego", 1), ("chego", 2), ("chego-holes", 3), ("chego-12x8", 4)])
@pytest.mark.slow
def test_engine_agrees_with_the_naive_referee_along_random_games(variant, seed):
    game = new_game(load_variant(variant))
    rng = random.Random(seed)
    while game.outcome() is None:
        assert engine_actions(game) == naive_actions(game), game.fen()
        actions = game.legal_actions()
        game.push(rng.choice(actions[:-1]) if len(actions) > 1 and rng.random() < 0.9 else actions[-1])


def random_position(rng, variant, n):
    """A FEN with n random pieces and full hands, where every piece attacks an empty square
    and two pieces attack the same single one (a drop there may kill or be suicide)."""
    geo = variant.geometry
    letters = variant.letters
    while True:
        board = {sq: rng.choice(letters + letters.upper()) for sq in rng.sample(geo.squares(), n)}
        libs = [[s for s in naive_attacks(board, geo, sq) if s not in board] for sq in board]
        single = [lib[0] for lib in libs if len(lib) == 1]
        if all(libs) and len(single) > len(set(single)):
            break
    rows = []
    for rank in range(geo.ranks - 1, -1, -1):
        row = ""
        for f in range(geo.files):
            sq = geo.square(f, rank)
            row += "*" if sq in geo.holes else board.get(sq, "1")
        rows.append(row)
    placement = "/".join(rows)
    for k in range(16, 1, -1):
        placement = placement.replace("1" * k, str(k))
    hand = letters.upper() + letters
    return f"{placement}[{hand}] {rng.choice('wb')} - - 0 1"


@pytest.mark.slow
def test_engine_agrees_with_the_naive_referee_on_crowded_positions():
    # Small boards crowded with random pieces: kills, multiple kills and suicides come often.
    king = {"royal": False, "castles": False}
    variants = [tiny(5, 5, {"king": king, "rook": {}, "bishop": {}, "knight": {}, "pawn": {}}, ""),
                load_variant("chego-holes")]
    rng = random.Random(11)
    kills = multiple = suicides = 0
    for i in range(200):
        v = variants[i % 2]
        game = new_game(v, random_position(rng, v, rng.randint(6, 14)))
        ours = engine_actions(game)
        assert ours == naive_actions(game), game.fen()
        kills += sum(1 for _, dead in ours if dead)
        multiple += sum(1 for _, dead in ours if len(dead) > 1)
        suicides += sum(1 for sq in game.geometry.squares()
                        if "suicide" in game.why_illegal("N@" + game.geometry.name(sq)))
    assert kills >= 10 and multiple >= 1 and suicides >= 10
