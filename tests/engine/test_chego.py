"""Chego: each rule on positions worked out by hand (chego.txt; readings in docs/chego.md).

Boards are drawn from White's side; a FEN's hand ``[r]`` is what the side to move may drop.
"Attacks" are direct attacks: where the piece could capture if an enemy stood there.
"""

import json
import subprocess
import sys

import pytest

from board_driver.config import load_variant
from engine.errors import FenError, IllegalMoveError, VariantError
from engine.game import new_game
from engine.variant import Variant


@pytest.fixture(scope="module")
def chego():
    return load_variant("chego")


def game(variant, fen):
    return new_game(variant, fen)


def texts(g):
    return {a.text for a in g.legal_actions()}


def names(g, squares):
    return sorted(g.geometry.name(s) for s in squares)


def tiny(files, ranks, pieces, hand, holes=(), rules=None):
    """A Chego variant on an empty files x ranks board with ``hand`` (FEN letters) in hand."""
    data = {"name": "tiny", "family": "chego", "board": {"files": files, "ranks": ranks, "holes": list(holes)},
            "pieces": pieces, "castling": False, "promotion": "none",
            "start_fen": "/".join([str(files)] * ranks) + f"[{hand}] w - - 0 1"}
    if rules is not None:
        data["rules"] = rules
    return Variant.from_dict(data, "<test>")


# -- the variants ----------------------------------------------------------------------------

def test_chego_variant_is_the_orthodox_set_in_hand_on_an_empty_8x8(chego):
    g = new_game(chego)
    assert g.family == "chego"
    assert (g.geometry.files, g.geometry.ranks) == (8, 8)
    assert g.occupancy() == 0
    assert g.hand(0) == {"k": 1, "q": 1, "r": 2, "b": 2, "n": 2, "p": 8}
    assert g.hand(1) == g.hand(0)
    assert g.fen() == chego.start_fen
    assert not any(p.royal for p in chego.pieces)


def test_chego_12x8_hands_hold_the_tomorrows_chess_1_army():
    v = load_variant("chego-12x8")
    g = new_game(v)
    assert (g.geometry.files, g.geometry.ranks) == (12, 8)
    # rook, giraffe, camel, knight, bishop, queen, king, bishop, knight, camel, giraffe, rook
    army = {"r": 2, "g": 2, "l": 2, "n": 2, "b": 2, "q": 1, "k": 1, "p": 12}
    assert g.hand(0) == army and g.hand(1) == army
    assert sum(army.values()) == 24


def test_a_royal_piece_is_refused():
    with pytest.raises(VariantError, match="royal"):
        new_game(tiny(3, 3, {"king": {}}, "Kk"))


def test_unknown_rule_is_refused():
    with pytest.raises(VariantError, match="rules.komi"):
        new_game(tiny(3, 3, {"rook": {}}, "Rr", rules={"komi": 6}))


# -- condition 1: only on a neutral square ---------------------------------------------------

def test_condition_1_the_square_must_be_neutral(chego):
    # White Ne4 attacks c3 c5 d2 d6 f2 f6 g3 g5: d6 is White's (1-0), d5 nobody's.
    g = game(chego, "8/8/8/8/4N3/8/8/8[r] b - - 0 1")
    assert "R@d6" not in texts(g)
    assert "not neutral" in g.why_illegal("R@d6")
    assert "R@d5" in texts(g) and g.why_illegal("R@d5") == ""
    with pytest.raises(IllegalMoveError, match="not neutral"):
        g.parse("R@d6")
    # A black knight on b7 also attacks d6: 1-1 is neutral again.
    g = game(chego, "8/1n6/8/8/4N3/8/8/8[r] b - - 0 1")
    assert "R@d6" in texts(g)
    # ...and a5, d8 (attacked by the knight only) are Black's, so not neutral either.
    assert "R@a5" not in texts(g) and "R@d8" not in texts(g)


# -- condition 2: the new piece attacks an empty square --------------------------------------

def test_condition_2_the_piece_must_attack_an_empty_square(chego):
    g = new_game(chego)
    # A white pawn on the 8th rank attacks nothing; on its own first rank it attacks rank 2.
    assert "P@e8" not in texts(g)
    assert "no empty square" in g.why_illegal("P@e8")
    assert "P@e1" in texts(g)
    g = game(chego, "8/8/8/8/8/8/8/8[KQRRBBNNPPPPPPPPkqrrbbnnpppppppp] b - - 0 1")
    # Black's pawns attack downwards: rank 1 is dead for them, rank 8 (their first) is fine.
    assert "P@e1" not in texts(g) and "P@e8" in texts(g)


def test_condition_2_with_holes_a_leaper_whose_targets_are_all_holes():
    # 3x3 board with holes b3 and c2: a knight on b2 has no target on a 3x3 board at all, and
    # on a1 both its targets (b3, c2) are holes.
    v = tiny(3, 3, {"knight": {}, "rook": {}}, "NR", holes=("b3", "c2"))
    g = new_game(v)
    assert "N@a1" not in texts(g)
    assert "N@b2" not in texts(g)
    assert "N@a2" in texts(g)          # a2 -> c1 (and c3)


# -- condition 3: the new piece attacks no piece ---------------------------------------------

def test_condition_3_no_enemy_piece_may_be_attacked(chego):
    g = game(chego, "8/8/8/8/8/8/8/R7[bn] b - - 0 1")
    assert "B@h8" not in texts(g)      # the long diagonal reaches a1
    assert "would attack the piece(s) on a1" in g.why_illegal("B@h8")
    assert "N@h8" in texts(g)
    assert "B@g8" in texts(g)


def test_condition_3_no_own_piece_may_be_attacked_either(chego):
    g = game(chego, "8/8/8/8/8/8/8/r7[b] b - - 0 1")
    assert "B@h8" not in texts(g)
    assert "B@g8" in texts(g)


def test_condition_3_a_slider_attacks_only_the_first_piece(chego):
    # White Ra1 and Pb2. A black bishop on d4 (a neutral square) would attack b2, the first
    # piece on its diagonal, and not a1 behind it.
    g = game(chego, "8/8/8/8/8/8/1P6/R7[b] b - - 0 1")
    assert "B@d4" not in texts(g)
    assert "a1" not in g.why_illegal("B@d4") and "b2" in g.why_illegal("B@d4")


# -- condition 4 and the capture rule ---------------------------------------------------------

def test_condition_4_suicide_is_illegal(chego):
    # Black pawn a2 attacks b1 only; White Nd2 attacks b1 too (1-1: neutral). A black rook on
    # b1 attacks a1, c1-h1 and b2-b8 (no piece), but leaves the pawn without an empty square.
    g = game(chego, "8/8/8/8/8/8/p2N4/8[r] b - - 0 1")
    assert "R@b1" not in texts(g)
    assert "suicide" in g.why_illegal("R@b1")
    # With the pawn on c2 instead (b1 and d1), the same drop leaves it d1: legal.
    g = game(chego, "8/8/8/8/8/8/2pN4/8[r] b - - 0 1")
    assert "R@b1" in texts(g)
    assert not g.parse("R@b1").lifts


def test_a_drop_that_captures_is_still_illegal_when_it_is_also_suicide(chego):
    # White pawn a6 and black pawn a8 both attack only b7. R@b7 would kill a6 and a8 alike.
    g = game(chego, "p7/8/P7/8/8/8/8/8[r] b - - 0 1")
    assert "R@b7" not in texts(g)
    assert "suicide" in g.why_illegal("R@b7")


def test_suicide_is_judged_before_the_victims_are_lifted(chego):
    # Black Rh8 attacks g8..a8 and the pawn h7; White Ph7 attacks only g8. N@g8 (attacks e7,
    # f6, h6) kills h7, but at the instant of the drop the rook has no empty square left, and
    # the rules count that instant (docs/chego.md): illegal, although lifting h7 would free it.
    g = game(chego, "7r/7P/8/8/8/8/8/8[n] b - - 0 1")
    assert "N@g8" not in texts(g)
    assert "suicide" in g.why_illegal("N@g8")


def test_single_capture_by_taking_the_last_empty_square(chego):
    # White Ph7 attacks only g8; Black Ne7 attacks g8 too (1-1). R@g8 takes the pawn's square.
    g = game(chego, "8/4n2P/8/8/8/8/8/8[r] b - - 0 1")
    a = g.parse("R@g8")
    assert a.kind == "drop" and names(g, a.places) == ["g8"] and names(g, a.lifts) == ["h7"]
    assert a.detail == ((g.geometry.parse("h7"), "P"),)
    g.push(a)
    assert g.piece_map().get(g.geometry.parse("h7")) is None
    assert g.describe()["captured"] == {"white": [], "black": ["P"]}
    assert g.fen() == "6r1/4n3/8/8/8/8/8/8 w - - 0 2 P"
    # Black controls the rook's h8, f8-a8 and g7-g1 (14 squares) and the knight's c6 d5 f5
    # (its c8 and g6 are the rook's already): 17, plus the captured pawn: 18.
    assert g.points() == (0, 18)
    g.pop()
    assert g.fen() == "8/4n2P/8/8/8/8/8/8[r] b - - 0 1"
    assert g.describe()["captured"] == {"white": [], "black": []}


def test_a_drop_that_cuts_a_sliders_only_line_kills_it(chego):
    # White Ra1 attacks b1..h1 (a2 holds a black king). N@b1 (attacks a3 c3 d2) is neutral
    # (rook 1, king 1) and cuts all seven empty squares off at once.
    g = game(chego, "8/8/8/8/8/8/k7/R7[n] b - - 0 1")
    a = g.parse("N@b1")
    assert names(g, a.lifts) == ["a1"]


def test_multiple_capture_in_one_drop(chego):
    # White Ba8 (b7 only: c6 holds the black king) and Pa6 (b7 only). b7 is attacked by two
    # white and two black pieces (Kc6, Nd8): neutral. R@b7 attacks a7, c7-h7, b8, b6-b1 and
    # no piece; the king and knight keep other squares; both white pieces die.
    g = game(chego, "B2n4/8/P1k5/8/8/8/8/8[r] b - - 0 1")
    a = g.parse("R@b7")
    assert names(g, a.lifts) == ["a6", "a8"]
    assert sorted(a.detail) == sorted(((g.geometry.parse("a6"), "P"), (g.geometry.parse("a8"), "B")))
    g.push(a)
    assert g.fen() == "3n4/1r6/2k5/8/8/8/8/8 w - - 0 2 PB"
    assert sorted(g.describe()["captured"]["black"]) == ["B", "P"]
    g.pop()
    assert g.fen() == "B2n4/8/P1k5/8/8/8/8/8[r] b - - 0 1"


def test_white_captures_too(chego):
    # The single-capture position with colours and ranks swapped: Black pawn h2 attacks only g1.
    g = game(chego, "8/8/8/8/8/8/4N2p/8[R] w - - 0 1")
    a = g.parse("R@g1")
    assert names(g, a.lifts) == ["h2"]
    g.push(a)
    assert g.describe()["captured"] == {"white": ["p"], "black": []}
    assert g.fen().endswith(" p")


def test_a_lame_leaper_dies_when_its_block_square_is_filled():
    # The Xiangqi horse (nN) on a1 reaches b3 over a2 and c2 over b1; c2 holds a black knight,
    # so b3 is its only empty square. A drop on a2 - a square the horse does not attack -
    # blocks it and kills it.
    v = tiny(8, 8, {"knight": {}, "horse": {"letter": "x", "betza": "nN"}}, "n")
    g = new_game(v, "8/8/8/8/8/8/2n5/X7[n] b - - 0 1")
    a = g.parse("N@a2")
    assert names(g, a.lifts) == ["a1"]


def test_a_cannon_never_attacks_an_empty_square_so_it_is_never_dropped_nor_killed():
    # The cannon (mRcpR) attacks only a piece behind a screen: never an empty square. It can
    # never be dropped (condition 2), and one set up on the board is never "reduced" to zero
    # by a drop (it had no empty square to lose), even when a drop gives it a screen.
    v = tiny(8, 8, {"cannon": {}, "rook": {}}, "Oo")
    assert new_game(v).drop_squares("o") == []
    g = new_game(v, "8/8/8/8/8/8/8/O7[r] b - - 0 1")
    assert "R@b2" in texts(g) and "R@h8" in texts(g)
    assert all(not a.lifts for a in g.legal_actions())


# -- holes -------------------------------------------------------------------------------------

def test_holes_sliders_stop_leapers_jump():
    # One hole on d4. A rook on c4 attacks a4 b4 and the c-file, not e4-h4; a threeleaper
    # (H, 3 squares straight) on c4 attacks f4 across the hole, and c1, c7.
    v = tiny(8, 8, {"rook": {}, "threeleaper": {"letter": "h", "betza": "H"}}, "", holes=("d4",))
    g = new_game(v, "8/8/8/8/2R5/8/8/8 b - - 0 1")
    assert g.territory()["white"] == ["c1", "c2", "c3", "a4", "b4", "c5", "c6", "c7", "c8"]
    g = new_game(v, "8/8/8/8/2H5/8/8/8 b - - 0 1")
    assert g.territory()["white"] == ["c1", "f4", "c7"]
    # The hole is nobody's: not in the territory map at all.
    terr = g.territory()
    assert "d4" not in terr["neutral"] + terr["white"] + terr["black"]
    assert len(terr["neutral"]) == 63 - 1 - 3     # 63 squares, one occupied, three White's


def test_holes_decide_what_is_neutral_and_what_is_attacked():
    v = tiny(8, 8, {"rook": {}}, "", holes=("d4",))
    # White Rc4 does not see past d4, so f4 is neutral and a black rook there (attacking e4,
    # g4, h4 and the f-file) does not attack c4: legal. On the full board it would be neither.
    g = new_game(v, "8/8/8/8/2R5/8/8/8[r] b - - 0 1")
    assert "R@f4" in texts(g)
    full = tiny(8, 8, {"rook": {}}, "")
    g = new_game(full, "8/8/8/8/2R5/8/8/8[r] b - - 0 1")
    assert "R@f4" not in texts(g)


def test_chego_holes_variant():
    v = load_variant("chego-holes")
    g = new_game(v)
    g.push("B@c3")
    # The bishop's a1-h8 diagonal stops at the hole d4: b2 a1, d2 e1, b4 a5 only.
    assert sorted(g.territory()["white"]) == ["a1", "a5", "b2", "b4", "d2", "e1"]
    g.pop()
    g.push("N@d3")
    # The knight jumps: b2 b4 c1 c5 e1 f2 f4 (e5 is a hole). c5 lies past the hole d4.
    assert sorted(g.territory()["white"]) == ["b2", "b4", "c1", "c5", "e1", "f2", "f4"]


# -- passing, the end and scoring -------------------------------------------------------------

def test_pass_is_always_legal_and_two_passes_in_a_row_end_the_game(chego):
    g = new_game(chego)
    g.push("N@e4")
    g.push("pass")
    assert g.outcome() is None and g.passes == 1
    assert g.fen().split()[4] == "1"
    g.push("P@e1")                      # a drop resets the count
    assert g.passes == 0
    g.push("pass")
    assert g.outcome() is None
    assert "pass" in texts(g)
    g.push("pass")
    out = g.outcome()
    assert out is not None and out.reason.startswith("both players passed")
    assert g.legal_actions() == []
    with pytest.raises(IllegalMoveError, match="over"):
        g.parse("pass")
    g.pop()
    assert g.outcome() is None and "pass" in texts(g)


def test_white_starts_by_dropping_a_piece_pass_comes_after(chego):
    # Rules, 3: "The white player starts by dropping one of his pieces on the board."
    g = new_game(chego)
    assert "pass" not in texts(g)
    with pytest.raises(IllegalMoveError, match="starts the game by dropping"):
        g.parse("pass")
    g.push("N@e4")
    assert "pass" in texts(g)                     # Black may pass at once
    g.push("pass")
    assert "pass" in texts(g) and g.outcome() is None


def test_an_empty_hand_can_only_pass(chego):
    g = game(chego, "8/8/8/8/4N3/8/8/8 b - - 0 1")
    assert texts(g) == {"pass"}
    assert g.drop_squares("n") == []


def test_a_fen_remembers_one_pass(chego):
    g = game(chego, "8/8/8/8/4N3/8/8/8[n] b - - 1 5")
    g.push("pass")
    assert g.outcome() is not None


def test_scoring_by_majority_with_ties_neutral(chego):
    # White Na1 (b3 c2) and Ne1 (c2 d3 f3 g2); Black Nb4 (a2 a6 c2 c6 d3 d5).
    # c2: 2 white - 1 black -> White. d3: 1-1 -> neutral.
    g = game(chego, "8/8/8/8/1n6/8/8/N3N3 w - - 2 30")
    terr = g.territory()
    assert sorted(terr["white"]) == ["b3", "c2", "f3", "g2"]
    assert sorted(terr["black"]) == ["a2", "a6", "c6", "d5"]
    assert "d3" in terr["neutral"]
    assert len(terr["neutral"]) == 61 - 8
    out = g.outcome()
    assert out.result == "1/2-1/2" and out.winner is None
    assert g.describe()["points"] == {"white": 4, "black": 4}


def test_captured_pieces_score(chego):
    # As above, but White has captured a black knight (7th FEN field, lower case: a black
    # piece): 5-4.
    g = game(chego, "8/8/8/8/1n6/8/8/N3N3 w - - 2 30 n")
    assert g.points() == (5, 4)
    assert g.outcome().result == "1-0" and g.outcome().winner == 0
    # Two white pieces captured by Black: 4-6.
    g = game(chego, "8/8/8/8/1n6/8/8/N3N3 w - - 2 30 PP")
    assert g.outcome().result == "0-1"
    assert g.describe()["captured"] == {"white": [], "black": ["P", "P"]}


# -- what the board driver asks -----------------------------------------------------------------

def test_drop_squares_and_territory_for_the_driver(chego):
    g = new_game(chego)
    sq = g.geometry.parse
    assert len(g.drop_squares("N")) == 64 and len(g.drop_squares("p")) == 56
    g.push("N@e4")
    # Black may not drop on the knight's eight squares, nor on e4.
    assert sorted(g.drop_squares("n")) == g.drop_squares("n")
    assert sq("d6") not in g.drop_squares("n") and sq("e4") not in g.drop_squares("n")
    assert sq("d5") in g.drop_squares("n")
    assert sorted(g.territory()["white"]) == ["c3", "c5", "d2", "d6", "f2", "f6", "g3", "g5"]
    with pytest.raises(VariantError):
        g.drop_squares("z")


def test_unlimited_pieces_never_run_out():
    v = tiny(4, 4, {"rook": {}, "knight": {}}, "Nn", rules={"unlimited": ["rook"]})
    g = new_game(v)
    assert g.hand(0) == {"r": None, "n": 1}
    g.push("R@a1")
    g.push("R@c3")
    assert g.hand(0) == {"r": None, "n": 1}
    assert g.fen() == "4/2r1/4/R3[Nn] w - - 0 2"
    assert g.describe()["hands"]["black"] == {"r": None, "n": 1}
    v_all = tiny(4, 4, {"rook": {}, "knight": {}}, "", rules={"unlimited": True})
    assert new_game(v_all).hand(1) == {"r": None, "n": None}
    with pytest.raises(FenError, match="unlimited"):
        new_game(v, "4/4/4/4[R] w - - 0 1")


def test_fen_round_trip_keeps_captures_and_passes(chego):
    g = game(chego, "B2n4/8/P1k5/8/8/8/8/8[rQ] b - - 0 1")
    g.push("R@b7")
    g.push("pass")
    copy = new_game(chego, g.fen())
    assert copy.fen() == g.fen()
    assert copy.points() == g.points() and copy.passes == 1
    assert [a.text for a in copy.legal_actions()] == [a.text for a in g.legal_actions()]
    with pytest.raises(FenError):
        new_game(chego, "8/8/8/8/8/8/8/8 w - - 0 1 X")
    with pytest.raises(FenError):
        new_game(chego, "8/8/8/8/8/8/8/8 w KQ - 0 1")


def test_push_refuses_an_action_of_another_position(chego):
    g = new_game(chego)
    a = g.parse("N@e4")
    g.push(a)
    with pytest.raises(IllegalMoveError):
        g.push(a)


def test_replay_json_reports_result_points_captures_and_territory():
    moves = "N@e4 pass pass"
    out = subprocess.run([sys.executable, "-m", "board_driver.cli", "replay", "--variant", "chego",
                          "--moves", moves, "--json"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["result"] == "1-0"
    assert report["points"] == {"white": 8, "black": 0}
    assert report["captured"] == {"white": [], "black": []}
    assert sorted(report["territory"]["white"]) == ["c3", "c5", "d2", "d6", "f2", "f6", "g3", "g5"]
    assert report["territory"]["black"] == [] and len(report["territory"]["neutral"]) == 55
    assert report["legal_moves"] == []
    out = subprocess.run([sys.executable, "-m", "board_driver.cli", "replay", "--variant", "chego",
                          "--fen", "8/4n2P/8/8/8/8/8/8[r] b - - 0 1", "--moves", "R@g8", "--json"],
                         capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["captured"] == {"white": [], "black": ["P"]}
    assert report["points"] == {"white": 0, "black": 18}
    assert report["result"] is None


def test_a_forbidden_drop_on_the_board_is_refused_with_its_rule():
    from engine.chego import ChegoGame  # noqa: F401  (the family under test)
    from board_driver.config import load_variant
    from engine.game import new_game
    g = new_game(load_variant("chego"), "8/8/8/8/3K4/8/8/8[Qk] b - - 0 1")
    d5, e2 = g.geometry.parse("d5"), g.geometry.parse("e2")
    assert g.why_refused(frozenset(), frozenset({d5})) == "d5 is not neutral (attacked by 1 white and 0 black pieces)"
    assert g.why_refused(frozenset(), frozenset({e2})) == ""          # a legal drop: nothing refused
    d4 = g.geometry.parse("d4")
    assert g.why_refused(frozenset({d4}), frozenset({e2})) == \
        "the white king on d4 cannot go to e2: in Chego pieces are dropped from the hand, never moved"
    assert g.why_refused(frozenset({d4}), frozenset()) == \
        "the white king on d4 stays where it is: in Chego a piece leaves the board only when a drop smothers it"
