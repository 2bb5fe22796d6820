"""Position.attacks_from (a piece's attacks from a square for a given occupancy, nothing put
on the board) against the piece actually set there and its attacks worked out step by step,
for every piece type of every variant on every square of random positions."""

import random

import pytest

from board_driver.config import load_variant, variant_names
from engine.position import Position
from engine.random_variant import all_outcomes
from engine.variant import Variant


def reference_attacks(pos, sq):
    """The attacks of the piece on ``sq`` computed from the move tables one move at a time
    (what Position.attacks_of computed before attacks_from existed)."""
    code = pos.board[sq]
    color = code & 1
    T = pos.tables
    pt = T.pieces[color][(code >> 1) - 1]
    occ = pos.occ[0] | pos.occ[1]
    out = pt.lc[sq]
    for d, mv, cp, lim in pt.rides:
        if not cp:
            continue
        r = T.ray[d][sq] if lim == 0 else T.limited_ray(d, lim)[sq]
        b = r & occ
        if b:
            f = T.first_blocker(d, b)
            r &= ~T.ray[d][f]
        out |= r
    for d, mv, cp in pt.hops:       # the first piece past exactly one screen
        if not cp:
            continue
        b = T.ray[d][sq] & occ
        if b:
            b = T.ray[d][T.first_blocker(d, b)] & occ
            if b:
                out |= 1 << T.first_blocker(d, b)
    for first, d, near, mv, cp in pt.bent[sq]:
        if cp and not occ >> first & 1:
            r = T.ray[d][first]
            b = r & occ
            if b:
                r &= ~T.ray[d][T.first_blocker(d, b)]
            out |= r & ~near
    for to, block, mv, cp, init in pt.lame[sq]:
        if cp and not block & occ and (not init or pos._initial[color] >> sq & 1):
            out |= 1 << to
    return out


def fairy():
    """Every kind of capture on a board with holes: lame (the Xiangqi horse, an initial-rank
    capture), hoppers, bent riders, limited and oblique riders."""
    return Variant.from_dict({
        "name": "fairy", "family": "chess", "board": {"files": 9, "ranks": 7, "holes": ["e4", "b6"]},
        "pieces": {"king": {"royal": False, "castles": False}, "horse": {"letter": "x", "betza": "nN"},
                   "cannon": {}, "griffin": {}, "aanca": {}, "shortrook": {"letter": "s", "betza": "R2"},
                   "jumper": {"letter": "j", "betza": "icnDfcF"}, "pawn": {},
                   "nightrider": {"letter": "v", "betza": "NN"}, "hopper": {"letter": "h", "betza": "pB"},
                   "tiger": {}},
        "castling": False, "promotion": "none", "start_fen": "9/9/9/9/9/9/9 w - - 0 1"}, "<test>")


def variants():
    out = [load_variant(n) for n in variant_names()]
    out += [load_variant(f"random-{'-'.join(map(str, o.dice))}") for o in all_outcomes()[::3]]
    return out + [fairy()]


def random_position(variant, rng, n):
    pos = Position(variant)
    squares = variant.geometry.squares()
    codes = range(2, 2 * len(variant.pieces) + 2)
    for sq in rng.sample(squares, min(n, len(squares))):
        pos.put_code(sq, rng.choice(codes))
    return pos


@pytest.mark.parametrize("variant", variants(), ids=lambda v: v.name)
def test_attacks_from_is_the_attack_of_the_piece_set_there(variant):
    rng = random.Random(variant.name)
    codes = range(2, 2 * len(variant.pieces) + 2)
    for n in (3, 12, 30):
        pos = random_position(variant, rng, n)
        occ = pos.occ[0] | pos.occ[1]
        for sq in variant.geometry.squares():
            here = pos.board[sq]
            if here:
                assert pos.attacks_from(here, sq, occ) == pos.attacks_of(sq) == reference_attacks(pos, sq)
                continue
            for code in codes:
                pos.put_code(sq, code)
                expected = reference_attacks(pos, sq)
                assert pos.attacks_of(sq) == expected
                pos.take_code(sq)
                assert pos.attacks_from(code, sq, occ | 1 << sq) == expected, (code, sq, pos.fen())
        assert pos.occ[0] | pos.occ[1] == occ


def test_constant_attacks_only_for_pieces_that_only_leap():
    pos = Position(fairy())
    names = {p.name: t for t, p in enumerate(pos.variant.pieces)}
    for name, t in names.items():
        for color in (0, 1):
            const = pos.constant_attacks((t + 1) * 2 + color)
            assert (const is not None) == (name in ("king", "pawn", "tiger")), name   # tiger: mBcN
            if const is not None:
                assert const is pos.tables.pieces[color][t].lc
