"""Game rules through the engine: results and scoring, draws, promotion, castling, FEN, notation."""

from __future__ import annotations

import random

import pytest

from engine.betza import parse_betza
from engine.errors import (
    BetzaError,
    FenError,
    IllegalMoveError,
    SquareError,
    VariantError,
)
from engine.game import ChessGame
from engine.geometry import Geometry
from engine.variant import Variant


def play(v, fen=None, moves=""):
    game = ChessGame(v, fen)
    for m in moves.split():
        game.push(m)
    return game


# ---------------------------------------------------------------- results and scoring
def test_white_stalemating_black_scores_three_fifths(variant):
    # Black king a8; the white queen on b6 covers a7, b7, b8; a8 itself is not attacked.
    g = play(variant("tomorrow-1"), "k11/12/1Q10/12/12/12/12/11K b - - 0 1")
    o = g.outcome()
    assert (o.result, o.reason, o.winner) == ("3/5-2/5", "stalemate", 0)
    assert g.legal_actions() == []


def test_black_stalemating_white_scores_seven_tenths_for_black(variant):
    g = play(variant("tomorrow-3"), "K11/12/1q10/12/12/12/12/11k w - - 0 1")
    o = g.outcome()
    assert (o.result, o.reason, o.winner) == ("3/10-7/10", "stalemate", 1)


def test_stalemate_is_a_draw_in_orthodox(variant):
    o = play(variant("orthodox"), "k7/8/1Q6/8/8/8/8/7K b - - 0 1").outcome()
    assert (o.result, o.reason, o.winner) == ("1/2-1/2", "stalemate", None)


def test_checkmate_on_twelve_files(variant):
    # Rook l1-l8: the black king on a8 has a7 and b7 covered by the white king on a6.
    g = play(variant("tomorrow-1"), "k11/12/K11/12/12/12/12/11R w - - 0 1", "l1l8")
    o = g.outcome()
    assert (o.result, o.reason, o.winner) == ("1-0", "checkmate", 0)
    assert g.checked_royals() == [g.geometry.parse("a8")]


def test_fools_mate(variant):
    o = play(variant("orthodox"), None, "f2f3 e7e5 g2g4 d8h4").outcome()
    assert (o.result, o.reason) == ("0-1", "checkmate")


def test_fifty_move_rule(variant):
    g = play(variant("tomorrow-2"), "k11/12/12/12/12/12/12/R10K w - - 99 80")
    assert g.outcome() is None
    g.push("l1k1")
    assert g.outcome().reason == "fifty-move rule"
    g.pop()
    assert g.outcome() is None


def test_threefold_repetition(variant):
    g = play(variant("orthodox"), None, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1")
    assert g.outcome() is None
    g.push("f6g8")  # the start position for the third time
    assert (g.outcome().result, g.outcome().reason) == ("1/2-1/2", "threefold repetition")


def test_resignation(variant):
    g = play(variant("orthodox"), None, "e2e4")
    g.resign(1)
    assert (g.outcome().result, g.outcome().reason) == ("1-0", "resignation")


# ---------------------------------------------------------------- promotion and castling
def test_promotion_is_compulsory_to_any_array_piece_but_king_and_pawn(variant):
    # tomorrow-3's array: rook, tiger, cannon, man, knight, bishop, queen (7 choices).
    g = play(variant("tomorrow-3"), "11k/P11/12/12/12/12/12/11K w - - 0 1")
    promos = sorted(a.text for a in g.legal_actions() if a.text.startswith("a7"))
    assert promos == sorted(f"a7a8{c}" for c in "rtomnbq")
    g.push("a7a8o")
    assert g.piece_map()[g.geometry.parse("a8")] == ("o", 0)
    g.pop()
    assert g.piece_map()[g.geometry.parse("a7")] == ("p", 0)


def test_castling_king_two_squares_rook_leaps_over(variant):
    v = variant("tomorrow-1")
    fen = "r5k4r/12/12/12/12/12/12/R5K4R w KQkq - 0 1"
    g = play(v, fen, "g1i1")
    pm = g.piece_map()
    sq = g.geometry.parse
    assert pm[sq("i1")] == ("k", 0) and pm[sq("h1")] == ("r", 0) and sq("l1") not in pm
    assert g.fen().split()[2] == "kq"
    g = play(v, fen, "g1e1")
    assert g.piece_map()[sq("f1")] == ("r", 0) and g.piece_map()[sq("e1")] == ("k", 0)


def test_no_castling_through_an_attacked_square(variant):
    v = variant("tomorrow-1")
    # a black rook on h8 attacks h1, the square the king crosses to castle king-side
    g = play(v, "r5k1r3/12/12/12/12/12/12/R5K4R w KQ - 0 1")
    texts = {a.text for a in g.legal_actions()}
    assert "g1i1" not in texts and "g1e1" in texts
    # and not out of check
    g = play(v, "r5r5/12/12/12/12/12/12/R5K4R w KQ - 0 1")
    assert not {"g1i1", "g1e1"} & {a.text for a in g.legal_actions()}


def test_castling_rights_are_lost_when_the_rook_is_captured(variant):
    g = play(variant("tomorrow-2"), "r5k4r/12/12/12/12/12/12/R5K4R b KQkq - 0 1", "l8l1")
    assert g.fen().split()[2] == "Qq"


def test_en_passant_on_twelve_files(variant):
    g = play(variant("tomorrow-1"), None, "k2k4 a7a6 k4k5 j7j5")
    assert "k5j6" in {a.text for a in g.legal_actions()}
    a = g.push("k5j6")
    assert a.kind == "en-passant" and a.lifts == {g.geometry.parse("k5"), g.geometry.parse("j5")}
    assert g.geometry.parse("j5") not in g.piece_map()


# ---------------------------------------------------------------- notation
@pytest.mark.slow
def test_san_and_coordinate_notation_round_trip(variant):
    for name in ("orthodox", "tomorrow-1", "tomorrow-3", "tomorrow-4"):
        v = variant(name)
        rng = random.Random(name)
        g = ChessGame(v)
        for _ in range(80):
            actions = g.legal_actions()
            if not actions:
                break
            sans = [g.san(a) for a in actions]
            assert len(set(sans)) == len(sans), "SAN must tell every legal move apart"
            for a, s in zip(actions, sans):
                assert g.parse(s) == a
                assert g.parse(a.text) == a
            g.push(rng.choice(actions))


def test_san_uses_the_variants_letters(variant):
    g = play(variant("tomorrow-1"), None, "e2e4 e7e5")
    assert g.san(g.parse("c1d4")) == "Ld4"  # camel c1 -> d4
    assert g.san(g.parse("b1c5")) == "Gc5"  # giraffe (1,4)
    assert g.parse("Ld4").text == "c1d4"


def test_illegal_moves_are_refused_with_the_move_named(variant):
    g = play(variant("orthodox"))
    with pytest.raises(IllegalMoveError, match="e2e5"):
        g.push("e2e5")
    with pytest.raises(IllegalMoveError, match="take back"):
        g.pop()


# ---------------------------------------------------------------- FEN and geometry
def test_fen_round_trips_along_a_game(variant):
    v = variant("tomorrow-4")
    g = ChessGame(v)
    rng = random.Random(3)
    for _ in range(60):
        fen = g.fen()
        assert ChessGame(v, fen).fen() == fen
        acts = g.legal_actions()
        if not acts:
            break
        g.push(rng.choice(acts))


@pytest.mark.parametrize("fen, words", [
    ("rnbqkbnr/pppppppp/8/8/8/8/RNBQKBNR w KQkq - 0 1", "7 ranks"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", "'X' is not a piece"),
    ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "9 files"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq z9 0 1", "en passant"),
    ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "no rook"),
])
def test_bad_fens_are_refused_with_a_reason(variant, fen, words):
    with pytest.raises(FenError, match=words):
        ChessGame(variant("orthodox"), fen)


def test_geometry_names_and_holes():
    g = Geometry.with_holes(12, 8, ["f5"])
    assert g.parse("a1") == 0 and g.parse("l8") == 95 and g.name(95) == "l8"
    assert g.parse("f4") == 41
    with pytest.raises(SquareError, match="hole"):
        g.parse("f5")
    with pytest.raises(SquareError, match="off the 12x8"):
        g.parse("m1")
    with pytest.raises(SquareError):
        Geometry(17, 8)
    assert Geometry(16, 16).parse("p16") == 255 and Geometry(1, 1).squares() == [0]


def test_geometry_neighbours_are_a_kings_steps_without_holes():
    g = Geometry.with_holes(12, 8, ["f5"])
    names = lambda bb: sorted(g.name(sq) for sq in g.squares_of(bb))      # noqa: E731
    assert names(g.neighbours(g.parse("a1"))) == ["a2", "b1", "b2"]
    assert names(g.neighbours(g.parse("l8"))) == ["k7", "k8", "l7"]
    assert names(g.neighbours(g.parse("e4"))) == ["d3", "d4", "d5", "e3", "e5", "f3", "f4"]


def test_sliders_stop_at_holes_and_leapers_jump_them():
    v = Variant.from_dict({"name": "holes", "board": {"files": 5, "ranks": 5, "holes": ["c3"]},
                           "pieces": ["king", "rook", "knight"], "castling": False,
                           "start_fen": "4k/5/R1*2/5/N3K w - - 0 1"})
    g = ChessGame(v)
    rook = {a.text for a in g.legal_actions() if a.text.startswith("a3")}
    assert rook == {"a3a4", "a3a5", "a3a2", "a3b3"}  # b3, then the hole on c3 stops the rook
    knight = {a.text for a in g.legal_actions() if a.text.startswith("a1")}
    assert knight == {"a1b3", "a1c2"}                # over or beside the hole, all the same


# ---------------------------------------------------------------- Betza errors and variants
@pytest.mark.parametrize("text, pos, words", [
    ("fmWX", 4, "unknown atom 'X'"),
    ("fqN", 2, "unknown modifier 'q'"),
    ("mR0", 3, "range of 0"),
    ("pN", 1, "needs a rider"),
    ("F>B", 3, "must be R"),
    ("(1,x)", 1, "two whole numbers"),
    ("fm", 3, "missing"),
])
def test_bad_betza_points_at_the_offending_character(text, pos, words):
    with pytest.raises(BetzaError, match=words) as info:
        parse_betza(text)
    assert info.value.pos + 1 == pos
    assert str(info.value).splitlines()[-1].index("^") - 2 == info.value.pos


def test_betza_direction_conventions():
    def count(text):
        return sum(len(c.vectors) for c in parse_betza(text).components)
    assert count("N") == 8 and count("fN") == 4 and count("ffN") == 2 and count("fsN") == 2
    assert count("vN") == 4 and count("sN") == 4 and count("flN") == 2 and count("lvN") == 2
    assert count("fF") == 2 and count("flF") == 1 and count("fsW") == 3 and count("K") == 8
    assert count("Q") == 8 and count("(1,4)") == 8


def test_variant_errors_name_the_source_key_and_value():
    with pytest.raises(VariantError, match=r"my\.yaml: pieces.wizard: .*betza"):
        Variant.from_dict({"name": "x", "pieces": {"wizard": {"letter": "z"}}}, "my.yaml")
    with pytest.raises(VariantError, match=r"my\.yaml: back_rank"):
        Variant.from_dict({"name": "x", "back_rank": ["rook"]}, "my.yaml")
    with pytest.raises(VariantError, match=r"my\.yaml: colour: .*unknown key"):
        Variant.from_dict({"name": "x", "colour": 1}, "my.yaml")
    with pytest.raises(VariantError, match=r"pieces\.wizard\.betza: 'Xq'"):
        Variant.from_dict({"name": "x", "pieces": {"king": {}, "wizard": {"letter": "z", "betza": "Xq"}},
                           "start_fen": "k7/8/8/8/8/8/8/7K w - - 0 1"}, "my.yaml")
    with pytest.raises(VariantError, match="stalemate.white_stalemates_black"):
        Variant.from_dict({"name": "x", "back_rank": ["rook", "knight", "bishop", "queen", "king", "bishop",
                                                      "knight", "rook"],
                           "stalemate": {"white_stalemates_black": "3/5-3/5"}}, "my.yaml")


def test_targets_of_covers_lame_leapers_and_hoppers():
    # A Xiangqi horse (nN) on d4 with its own pawn on d3: the legs towards c2 and e2 are
    # blocked, the other six destinations are open. The black cannon on a1 slides up to a7
    # (a8 holds its own king) and right to d1 (e1: the white king, no screen: no capture).
    v = Variant.from_dict({"name": "t", "castling": False,
                           "pieces": {"king": {}, "horse": {"letter": "h", "betza": "nN"}, "cannon": {}, "pawn": {}},
                           "start_fen": "k7/8/8/8/3H4/3P4/8/o3K3 w - - 0 1"})
    g = ChessGame(v)
    pos, geo = g.position, v.geometry
    quiet, caps = pos.targets_of(geo.parse("d4"))
    assert {geo.name(s) for s in geo.squares_of(quiet | caps)} == {"b3", "b5", "c6", "e6", "f3", "f5"}
    quiet, caps = pos.targets_of(geo.parse("a1"))
    assert {geo.name(s) for s in geo.squares_of(quiet)} == {"a2", "a3", "a4", "a5", "a6", "a7", "b1", "c1", "d1"}
    assert caps == 0
    pos.put_piece(geo.parse("c1"), v.piece_index("pawn"), 0)   # a screen on c1: e1 is hit
    quiet, caps = pos.targets_of(geo.parse("a1"))
    assert {geo.name(s) for s in geo.squares_of(caps)} == {"e1"}
    assert {geo.name(s) for s in geo.squares_of(quiet)} >= {"b1"} and geo.parse("d1") not in geo.squares_of(quiet)
    assert pos.remove_piece(geo.parse("c1")) == (v.piece_index("pawn"), 0)
    with pytest.raises(ValueError, match="d4 is not empty"):
        pos.put_piece(geo.parse("d4"), 0, 0)


@pytest.mark.parametrize("name", ["orthodox", "chego", "csipgs", "cost-progressive"])
def test_resignation_and_its_takeback_in_every_family(variant, name):
    from engine.game import new_game
    g = new_game(variant(name))
    before = len(g.legal_actions())
    assert before > 0 and g.outcome() is None
    g.resign(1)                                   # Black resigns
    assert (g.outcome().result, g.outcome().reason, g.outcome().winner) == ("1-0", "resignation", 0)
    assert g.legal_actions() == []               # nothing more to play
    g.unresign()
    assert g.outcome() is None and len(g.legal_actions()) == before


def test_a_mate_named_then_played_is_checkmate(variant):
    g = ChessGame(variant("orthodox"))
    for text in ("f2f3", "e7e5", "g2g4"):
        g.push(text)
    mate = g.parse("d8h4")
    assert g.san(mate) == "Qh4#"
    g.push(mate)
    assert g.outcome() is not None and g.outcome().reason == "checkmate"
    g.pop()
    g.push("d8e7")                      # another move from the same state: no mate
    assert g.outcome() is None
