"""Random Variant Chess, Simplified: every dice outcome against the rules text, and the schedule."""

import random

import pytest

from engine.random_variant import (
    PIECE_NAMES,
    RandomVariant,
    ScheduleEntry,
    all_outcomes,
    roll,
    schedule,
    select,
)

R, N, B, Q, K = "rook", "knight", "bishop", "queen", "king"
CA, GI, PR, EM = "camel", "giraffe", "princess", "empress"
CN, TI, MA, GR = "cannon", "tiger", "man", "griffin"
AA, AM, CE, GE, GP = "aanca", "amazon", "camel-empress", "giraffe-empress", "giraffe-princess"
FE, AL, WZ = "fers", "alfil", "wazir"

# Written from the text, outcome by outcome: sorted dice -> white's back rank, files a..l.
EXPECTED = {
    # All three equal: variant 1, the Queen (file f) replaced.
    (1, 1, 1): (R, GI, CA, N, B, Q, K, B, N, CA, GI, R),
    (2, 2, 2): (R, GI, CA, N, B, GR, K, B, N, CA, GI, R),
    (3, 3, 3): (R, GI, CA, N, B, AM, K, B, N, CA, GI, R),
    (4, 4, 4): (R, GI, CA, N, B, EM, K, B, N, CA, GI, R),
    (5, 5, 5): (R, GI, CA, N, B, CE, K, B, N, CA, GI, R),
    (6, 6, 6): (R, GI, CA, N, B, GE, K, B, N, CA, GI, R),
    # A pair: variant 4; the pair sets files c, e, j, h; the odd die sets the Queen on f.
    (1, 1, 2): (R, GI, PR, N, B, GR, GR, MA, K, B, N, R),
    (1, 1, 3): (R, GI, PR, N, B, EM, GR, MA, K, B, N, R),
    (1, 1, 4): (R, GI, PR, N, B, AA, GR, MA, K, B, N, R),
    (1, 1, 5): (R, GI, PR, N, B, FE, GR, MA, K, B, N, R),
    (1, 1, 6): (R, GI, PR, N, B, Q, GR, MA, K, B, N, R),
    (1, 2, 2): (R, GI, GP, N, B, Q, GR, MA, K, B, N, R),
    (2, 2, 3): (R, GI, GP, N, B, EM, GR, MA, K, B, N, R),
    (2, 2, 4): (R, GI, GP, N, B, AA, GR, MA, K, B, N, R),
    (2, 2, 5): (R, GI, GP, N, B, FE, GR, MA, K, B, N, R),
    (2, 2, 6): (R, GI, GP, N, B, GR, GR, MA, K, B, N, R),
    (1, 3, 3): (R, GI, CN, N, B, Q, GR, MA, K, B, N, R),
    (2, 3, 3): (R, GI, CN, N, B, GR, GR, MA, K, B, N, R),
    (3, 3, 4): (R, GI, CN, N, B, AA, GR, MA, K, B, N, R),
    (3, 3, 5): (R, GI, CN, N, B, FE, GR, MA, K, B, N, R),
    (3, 3, 6): (R, GI, CN, N, B, EM, GR, MA, K, B, N, R),
    (1, 4, 4): (R, GI, PR, N, AL, Q, GR, WZ, K, AL, N, R),
    (2, 4, 4): (R, GI, PR, N, AL, GR, GR, WZ, K, AL, N, R),
    (3, 4, 4): (R, GI, PR, N, AL, EM, GR, WZ, K, AL, N, R),
    (4, 4, 5): (R, GI, PR, N, AL, FE, GR, WZ, K, AL, N, R),
    (4, 4, 6): (R, GI, PR, N, AL, AA, GR, WZ, K, AL, N, R),
    (1, 5, 5): (R, GI, GP, N, AL, Q, GR, WZ, K, AL, N, R),
    (2, 5, 5): (R, GI, GP, N, AL, GR, GR, WZ, K, AL, N, R),
    (3, 5, 5): (R, GI, GP, N, AL, EM, GR, WZ, K, AL, N, R),
    (4, 5, 5): (R, GI, GP, N, AL, AA, GR, WZ, K, AL, N, R),
    (5, 5, 6): (R, GI, GP, N, AL, FE, GR, WZ, K, AL, N, R),
    (1, 6, 6): (R, GI, CN, N, AL, Q, GR, WZ, K, AL, N, R),
    (2, 6, 6): (R, GI, CN, N, AL, GR, GR, WZ, K, AL, N, R),
    (3, 6, 6): (R, GI, CN, N, AL, EM, GR, WZ, K, AL, N, R),
    (4, 6, 6): (R, GI, CN, N, AL, AA, GR, WZ, K, AL, N, R),
    (5, 6, 6): (R, GI, CN, N, AL, FE, GR, WZ, K, AL, N, R),
    # Three consecutive numbers: variant 2.
    (1, 2, 3): (R, PR, CA, N, B, Q, K, B, N, CA, EM, R),
    (2, 3, 4): (R, GP, CA, N, B, Q, K, B, N, CA, GE, R),
    (3, 4, 5): (R, PR, CA, N, B, GR, K, B, N, CA, EM, R),
    (4, 5, 6): (R, PR, CA, N, AL, FE, K, AL, N, CA, EM, R),
    # Variant 3, lowest 1 and highest 6: the Queen (file h) replaced.
    (1, 2, 6): (R, TI, CN, MA, TI, N, B, GR, K, B, N, R),
    (1, 3, 6): (R, TI, CN, MA, TI, N, B, EM, K, B, N, R),
    (1, 4, 6): (R, TI, CN, MA, TI, N, B, AA, K, B, N, R),
    (1, 5, 6): (R, TI, CN, MA, TI, N, B, FE, K, B, N, R),
    # Variant 3, differ by four: Tigers (b, e) and Cannon (c).
    (1, 2, 5): (R, TI, CN, MA, TI, N, B, Q, K, B, N, R),
    (1, 3, 5): (R, TI, PR, MA, TI, N, B, Q, K, B, N, R),
    (1, 4, 5): (R, TI, AA, MA, TI, N, B, Q, K, B, N, R),
    (2, 3, 6): (R, CA, PR, MA, CA, N, B, Q, K, B, N, R),
    (2, 4, 6): (R, CA, AA, MA, CA, N, B, Q, K, B, N, R),
    (2, 5, 6): (R, CA, CN, MA, CA, N, B, Q, K, B, N, R),
    # Variant 3, differ by three: Cannon (c) and Man (d).
    (1, 2, 4): (R, TI, CN, WZ, TI, N, B, Q, K, B, N, R),
    (1, 3, 4): (R, TI, CN, GI, TI, N, B, Q, K, B, N, R),
    (2, 3, 5): (R, TI, PR, GI, TI, N, B, Q, K, B, N, R),
    (2, 4, 5): (R, TI, PR, WZ, TI, N, B, Q, K, B, N, R),
    (3, 4, 6): (R, TI, AA, WZ, TI, N, B, Q, K, B, N, R),
    (3, 5, 6): (R, TI, AA, GI, TI, N, B, Q, K, B, N, R),
}

EXPECTED_BASE = {1: {(d, d, d) for d in range(1, 7)},
                 2: {(1, 2, 3), (2, 3, 4), (3, 4, 5), (4, 5, 6)}}
EXPECTED_BASE[3] = {d for d in EXPECTED if len(set(d)) == 3} - EXPECTED_BASE[2]
EXPECTED_BASE[4] = {d for d in EXPECTED if len(set(d)) == 2}

# The pieces a Tomorrow's Chess set actually contains.
SET_PIECES = {K, Q, R, B, N, CA, GI, PR, EM, CN, TI, MA, GR}


def test_expected_table_is_complete():
    assert len(EXPECTED) == 56
    assert all(len(rank) == 12 for rank in EXPECTED.values())


@pytest.mark.parametrize("dice", sorted(EXPECTED))
def test_back_rank_matches_the_text(dice):
    assert select(dice).back_rank == EXPECTED[dice]


def test_all_outcomes_are_the_56_sorted_throws():
    outcomes = all_outcomes()
    assert [v.dice for v in outcomes] == sorted(EXPECTED)
    assert {v.dice: v.back_rank for v in outcomes} == EXPECTED
    assert all(isinstance(v, RandomVariant) for v in outcomes)


def test_base_variant_of_each_group():
    for base, group in EXPECTED_BASE.items():
        assert {v.dice for v in all_outcomes() if v.base == base} == group
    assert sum(len(g) for g in EXPECTED_BASE.values()) == 56


def test_descriptions_are_single_distinct_lines():
    descriptions = [v.description for v in all_outcomes()]
    assert all(d and "\n" not in d for d in descriptions)
    assert len(set(descriptions)) == 56
    assert select((2, 2, 5)).description == "pair 2-2: Giraffe Princess, Bishop, Man; 5: Queen -> Fers"


def test_order_and_form_do_not_matter():
    for v in all_outcomes():
        a, b, c = v.dice
        for throw in ((a, b, c), (c, b, a), (b, c, a), [c, a, b], f"{c}-{a}-{b}"):
            assert select(throw) == v
    assert select("3-1-6").dice == (1, 3, 6)


def test_six_with_a_pair_repeats_the_pair_number():
    # "When the remaining die shows a 6, then the number on the pair ... is used instead."
    queen_by_number = {1: Q, 2: GR, 3: EM, 4: AA, 5: FE}
    for pair, queen in queen_by_number.items():
        assert select((6, pair, pair)).back_rank[5] == queen
    assert select((6, 6, 6)).base == 1


@pytest.mark.parametrize("bad, shown", [
    ((0, 1, 2), "0"),
    ((1, 7, 3), "7"),
    ((1, 2), "got 2"),
    ((1, 2, 3, 4), "got 4"),
    ("a-b-c", "'a'"),
    ("1-2", "got 2"),
    ("1-9-2", "9"),
    ((1.5, 2, 3), "1.5"),
    ((True, 2, 3), "True"),
    (None, "None"),
])
def test_bad_dice_are_refused_naming_the_value(bad, shown):
    with pytest.raises(ValueError, match=shown):
        select(bad)


def test_every_name_is_in_the_catalog():
    assert len(set(PIECE_NAMES)) == len(PIECE_NAMES)
    for v in all_outcomes():
        assert set(v.back_rank) <= set(PIECE_NAMES)
        assert set(v.physical) <= set(PIECE_NAMES)
    for rank in EXPECTED.values():
        assert set(rank) <= set(PIECE_NAMES)


def test_physical_pieces_belong_to_the_set():
    for v in all_outcomes():
        assert len(v.physical) == 12
        assert set(v.physical) <= SET_PIECES, v.dice
        for piece, stand_in in zip(v.back_rank, v.physical):
            if piece in SET_PIECES:
                assert stand_in == piece


@pytest.mark.parametrize("dice, file, piece, stand_in", [
    ((3, 3, 3), 5, AM, Q),
    ((5, 5, 5), 5, CE, EM),
    ((6, 6, 6), 5, GE, EM),
    ((1, 1, 4), 5, AA, GR),
    ((1, 1, 5), 5, FE, Q),
    ((2, 2, 1), 2, GP, PR),
    ((4, 4, 1), 4, AL, B),
    ((4, 4, 1), 7, WZ, MA),
    ((1, 5, 6), 7, FE, Q),
    ((1, 4, 6), 7, AA, GR),
    ((1, 2, 4), 3, WZ, EM),
    ((2, 3, 6), 1, CA, CA),
    ((3, 4, 6), 2, AA, GR),
    ((2, 3, 4), 10, GE, EM),
    ((4, 5, 6), 7, AL, B),
])
def test_stand_ins_follow_the_text(dice, file, piece, stand_in):
    v = select(dice)
    assert (v.back_rank[file], v.physical[file]) == (piece, stand_in)


def test_fifth_variant_pieces_stand_on_the_fourth_variant_set():
    # "the Queen, the Bishop, and the Man can still be used in the fifth variant"
    assert select((4, 4, 5)).physical == (R, GI, PR, N, B, Q, GR, MA, K, B, N, R)


def test_schedule_for_eight_games_is_the_texts_table():
    table = [("A", True, 1), ("B", False, 1), ("B", True, 2), ("A", False, 2),
             ("A", True, 3), ("B", False, 3), ("B", True, 4), ("A", False, 4)]
    expected = [ScheduleEntry(game=i, white=w, draw=d, variant=v)
                for i, (w, d, v) in enumerate(table, start=1)]
    assert schedule(8) == expected


def test_schedule_balance_stated_by_the_text():
    games = schedule(8)
    for n in range(1, 9):
        a = sum(e.white == "A" for e in games[:n])
        b = n - a
        if n in (2, 4, 6, 8):
            assert a == b
        elif n in (1, 5):
            assert a == b + 1
        else:
            assert b == a + 1


def test_schedule_any_length():
    assert schedule(0) == []
    long = schedule(101)
    assert [e.game for e in long] == list(range(1, 102))
    assert long[:8] == schedule(8)
    for e in long:
        assert e.draw == (e.game % 2 == 1)
        assert e.variant == (e.game + 1) // 2
    for first, second in zip(long[::2], long[1::2]):
        assert first.variant == second.variant
        assert first.white != second.white
    with pytest.raises(ValueError, match="-1"):
        schedule(-1)


def test_roll_gives_valid_dice_reproducibly():
    throws = [roll(random.Random(seed)) for seed in range(200)]
    assert all(len(t) == 3 and all(1 <= d <= 6 for d in t) for t in throws)
    assert {d for t in throws for d in t} == set(range(1, 7))
    assert roll(random.Random(7)) == roll(random.Random(7))
    for t in throws:
        select(t)
