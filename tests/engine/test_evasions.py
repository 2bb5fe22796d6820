"""Moves out of check: a piece other than the royal one may only capture the checker or
block a rider's line (Position._evasions prunes every other target before the exact test).
Checked against the generator without the pruning, on positions in check of every
chess-family variant and of every random array: random positions (single and double checks
by every kind of piece) and positions reached by random play."""

import random

import pytest

from board_driver.config import load_variant, variant_names
from engine.position import Position
from engine.random_variant import all_outcomes

NAMES = [n for n in variant_names() if load_variant(n).family == "chess"] + \
    [f"random-{'-'.join(map(str, o.dice))}" for o in all_outcomes()[::2]]


def _unpruned(pos, fn):
    """``fn()`` with every target allowed (what the generator did before _evasions)."""
    saved = Position._evasions
    Position._evasions = lambda self, k, us, occ: -1
    try:
        return fn()
    finally:
        Position._evasions = saved


def _checked_positions(variant, rng, want=40):
    royal = [t for t, p in enumerate(variant.pieces) if p.royal]
    if len(royal) != 1:
        return []
    k = royal[0]
    squares = variant.geometry.squares()
    codes = [c for c in range(2, 2 * len(variant.pieces) + 2) if (c >> 1) - 1 != k]
    out = []
    for _ in range(4000):
        pos = Position(variant)
        ks = rng.sample(squares, 2)
        pos.put_code(ks[0], (k + 1) * 2)          # White's royal piece, White to move
        pos.put_code(ks[1], (k + 1) * 2 + 1)
        for sq in rng.sample([s for s in squares if s not in ks], rng.randint(3, 14)):
            pos.put_code(sq, rng.choice(codes))
        pos.set_turn(0)
        if pos.in_check() and not pos.attacked(ks[1], 0):
            out.append(pos)
            if len(out) >= want:
                break
    return out


@pytest.mark.parametrize("name", NAMES)
def test_moves_out_of_check_are_those_of_the_exact_test(name):
    variant = load_variant(name)
    rng = random.Random(name)
    positions = _checked_positions(variant, rng)
    if not positions:
        pytest.skip("no single royal piece")
    for pos in positions:
        expected = _unpruned(pos, pos.legal_moves)
        assert pos.legal_moves() == expected, pos.fen()
        assert pos.count_legal() == len(expected) == _unpruned(pos, pos.count_legal), pos.fen()
    assert len(positions) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("name", ["orthodox", "tomorrow-1", "tomorrow-4-great", "courier"])
def test_checks_met_in_play_are_the_same_with_and_without_pruning(name):
    from engine.game import new_game
    rng = random.Random(f"play-{name}")
    seen = 0
    for game_no in range(30):
        g = new_game(load_variant(name))
        for _ in range(120):
            pos = g.position
            if pos.in_check():
                seen += 1
                assert pos.legal_moves() == _unpruned(pos, pos.legal_moves), g.fen()
            acts = g.legal_actions()
            if not acts:
                break
            # prefer checks and captures, so that checks come up often
            pool = [a for a in acts if a.kind in ("capture", "promotion")] or acts
            g.push(rng.choice(pool if rng.random() < 0.5 else acts))
    assert seen >= 10


@pytest.mark.parametrize("name", NAMES)
def test_has_legal_move_agrees_with_the_count(name):
    # the ending test stops at the first piece type with a move; positions with few moves
    # for the side to move (a lone royal piece among enemies, checks, stalemates) included
    variant = load_variant(name)
    rng = random.Random(f"any-{name}")
    royal = [t for t, p in enumerate(variant.pieces) if p.royal]
    squares = variant.geometry.squares()
    codes = range(2, 2 * len(variant.pieces) + 2)
    none = some = split = 0
    for _ in range(300):
        pos = Position(variant)
        placed = rng.sample(squares, rng.randint(2, 16))
        for i, sq in enumerate(placed):
            if i < 2 and royal:
                pos.put_code(sq, (royal[0] + 1) * 2 + i)
            else:
                # mostly Black's pieces: White (to move) often has few or no moves
                code = rng.choice(codes)
                pos.put_code(sq, code | (1 if rng.random() < 0.8 else 0))
        pos.set_turn(0)
        if royal and pos.attacked(placed[1], 0):
            continue                    # the side not to move may not stand in check
        n = pos.count_legal()
        assert pos.has_legal_move() == (n > 0), pos.fen()
        none += n == 0
        some += n > 0
        # only the pieces on some squares (a Cost Progressive turn: the unmoved, affordable ones)
        movers = {m & 0xFF for m in pos.legal_moves()}
        chosen = [sq for sq in placed if rng.random() < 0.3]
        bb = sum(1 << sq for sq in chosen)
        assert pos.has_legal_move(squares=bb) == bool(movers & set(chosen)), (pos.fen(), chosen)
        split += bool(movers) and not movers & set(chosen)
    assert some > 50 and none > 0 and split > 0
