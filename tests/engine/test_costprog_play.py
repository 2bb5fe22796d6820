"""Cost Progressive Chess played through the engine: budgets, costs, the end of a turn, checks,
en passant, castling, mate and stalemate, and whole-turn sequence counts worked out by hand."""

import pytest

from board_driver.config import load_variant
from engine.costprog import turn_divide, turn_sequences
from engine.errors import IllegalMoveError
from engine.game import new_game
from engine.perft import game_perft


@pytest.fixture(scope="module")
def cp():
    return load_variant("cost-progressive")


def play(variant, moves="", fen=None):
    g = new_game(variant, fen)
    for m in moves.split():
        g.push(m)
    return g


def legal(g):
    return {a.text for a in g.legal_actions()}


# -- budgets and costs ---------------------------------------------------------------------

def test_turn_1_only_pawns_are_affordable(cp):
    g = play(cp)
    # 8 pawns x (one or two steps); the knights' 4 moves cost 3 and are left out.
    assert len(g.legal_actions()) == 16
    assert not {"g1f3", "b1c3"} & legal(g)
    with pytest.raises(IllegalMoveError, match="costs 3 points, 1 left"):
        g.parse("g1f3")


def test_spending_the_last_point_ends_the_turn(cp):
    g = play(cp, "e2e4")
    d = g.describe()
    assert (d["side_to_move"], d["turn_number"], d["turn_budget"], d["points_left"]) == ("black", 1, 1, 1)
    assert d["turn_over"] and d["last_turn_ended_by"] == "points"
    assert g.turn == 1 and g.fen().split()[1] == "b"


def test_turn_n_gives_n_points_to_both_sides(cp):
    g = play(cp, "e2e4 e7e5")
    assert (g.turn_number, g.turn_budget) == (2, 2)
    g.push("d2d4")
    assert (g.turn, g.points_spent, g.points_left) == (0, 1, 1)
    g.push("c2c4")
    assert (g.turn, g.turn_number, g.turn_budget) == (1, 2, 2)


def test_points_do_not_carry_over(cp):
    g = play(cp, "e2e4 e7e5 d2d4 end")          # White uses 1 of 2
    g.push("d7d6")
    g.push("end")                                # Black uses 1 of 2
    assert (g.turn, g.turn_number, g.turn_budget, g.points_left) == (0, 3, 3, 3)


def test_a_player_need_not_spend_all_but_must_make_a_move(cp):
    g = play(cp, "e2e4 e7e5")
    assert "end" not in legal(g)
    with pytest.raises(IllegalMoveError, match="at least one move"):
        g.parse("end")
    g.push("d2d4")
    assert "end" in legal(g)
    a = g.push("end")
    assert a.kind == "end" and a.silent
    assert g.turn == 1 and g.describe()["last_turn_ended_by"] == "end"


def test_a_piece_moves_at_most_once_a_turn(cp):
    g = play(cp, "e2e4 e7e5 d2d3")
    assert "d3d4" not in legal(g)
    with pytest.raises(IllegalMoveError, match="d3 has already moved this turn"):
        g.parse("d3d4")


def test_a_bishop_costs_three(cp):
    g = play(cp, "e2e4 e7e5 d2d4 end d7d5 end")  # white turn 3: 3 points
    a = g.push("f1b5")
    assert a.detail == (3,) and g.turn == 1      # 3 of 3 spent (and it checks): turn over


def test_fibonacci_budgets_as_played():
    g = new_game(load_variant("cost-progressive-fibonacci"))
    seen = []
    for turn in ["e2e4", "e7e5", "d2d4 c2c4", "a7a6 b7b6 c7c6", "a2a3 b2b3 f2f3 g2g3 h2h3"]:
        seen.append(g.turn_budget)
        for m in turn.split():
            g.push(m)
    seen.append(g.turn_budget)
    assert seen == [1, 1, 2, 3, 5, 8]


def test_the_12x8_army_moves_camels_and_giraffes_for_three_points():
    v = load_variant("cost-progressive-tomorrow-1")
    g = new_game(v)
    assert len(g.legal_actions()) == 24          # 12 pawns, one or two steps
    fen = v.start_fen.rsplit(" ", 1)[0] + " 3"   # the start position on turn 3 (3 points)
    g = new_game(v, fen)
    costs = {a.text: a.detail[0] for a in g.legal_actions()}
    # Camel c1: (1,3) to b4 and d4 (f2 is a pawn); giraffe b1: (1,4) to a5 and c5 (f2 again).
    for m in ("c1b4", "c1d4", "b1a5", "b1c5"):
        assert costs[m] == 3
    g.push("c1d4")
    assert g.turn == 1


# -- checks --------------------------------------------------------------------------------

FEN_CHECK = "7k/p7/6P1/8/8/8/2P5/K7 w - - 0 {}"   # White Ka1 Pc2 Pg6, Black Kh8 Pa7


def test_a_check_ends_the_turn_and_forfeits_the_rest(cp):
    g = play(cp, fen=FEN_CHECK.format(5))         # turn 5: 5 points
    g.push("g6g7")                                # 1 point, check
    d = g.describe()
    assert d["side_to_move"] == "black" and d["last_turn_ended_by"] == "check"
    assert d["turn_over"] and g.in_check()
    assert len(g.history) == 1                    # the 4 points left were not used


def test_check_must_be_removed_by_the_first_move(cp):
    g = play(cp, "g6g7", fen=FEN_CHECK.format(3))
    # Black Kh8 is checked by the pawn on g7: only king moves (g8, h7, xg7) remove it.
    assert legal(g) == {"h8g8", "h8h7", "h8g7"}
    with pytest.raises(IllegalMoveError, match="check must be removed by the first move"):
        g.parse("a7a6")
    g.push("h8g7")
    assert legal(g) == {"a7a6", "a7a5", "end"}   # 1 point left: the pawn may follow


def test_a_check_the_player_cannot_afford_to_meet_is_mate(cp):
    # Turn 1: White's g6-g7 checks; Black has 1 point and the king's escapes cost 2.
    g = play(cp, "g6g7", fen="7k/8/6P1/8/8/8/8/K7 w - - 0 1")
    o = g.outcome()
    assert (o.result, o.reason, o.winner) == ("1-0", "checkmate", 0)
    assert g.legal_actions() == []


def test_mate_delivered_by_the_last_move_of_a_turn(cp):
    g = play(cp, fen="6k1/5ppp/8/8/8/2K5/8/1R6 w - - 0 7")   # turn 7: 7 points
    g.push("c3d3")                                           # king 2, 5 left
    rook = g.parse("b1b8")
    assert g.san(rook) == "Rb8#"
    g.push(rook)
    o = g.outcome()
    assert (o.result, o.reason) == ("1-0", "checkmate")


def test_a_player_never_leaves_his_king_in_check_within_a_turn(cp):
    # White Ke1 Be2 Ph2 against Re8: the bishop shields the king on the e-file. Turn 6: 6 points.
    fen = "4r1k1/8/8/8/8/8/4B2P/4K3 w - - 0 6"
    g = play(cp, "h2h3", fen=fen)
    assert not any(a.text.startswith("e2") for a in g.legal_actions())   # still pinned
    g = play(cp, "e1f1", fen=fen)                 # the king steps off the file (2 points)
    assert {"e2d3", "e2b5", "e2a6"} <= legal(g)   # now the bishop (3) may go


# -- mate, stalemate, draws ----------------------------------------------------------------

def test_stalemate_is_judged_when_the_turn_ends_not_in_the_middle(cp):
    g = play(cp, fen="k7/3Q4/8/8/8/8/7P/4K3 w - - 0 10")    # turn 10: 10 points
    g.push("d7c7")          # queen 9: Black's king on a8 has no move left, 1 point left
    assert g.outcome() is None and g.turn == 0
    assert legal(g) == {"h2h3", "h2h4", "end"}   # a king move would cost 2
    g.push("end")
    o = g.outcome()
    assert (o.result, o.reason, o.winner) == ("1/2-1/2", "stalemate", None)


def test_no_affordable_move_at_the_start_of_a_turn_is_stalemate(cp):
    # Black's turn 1 has 1 point and only a king (cost 2).
    g = play(cp, fen="k7/8/8/8/8/8/8/K7 b - - 0 1")
    assert g.outcome().reason == "stalemate"


def test_stalemate_on_12x8_is_scored_as_tomorrow_s_chess():
    v = load_variant("cost-progressive-tomorrow-1")
    g = new_game(v, "k11/12/12/12/12/12/12/K11 b - - 0 1")   # Black cannot pay for a king move
    o = g.outcome()
    assert (o.result, o.reason, o.winner) == ("3/5-2/5", "stalemate", 0)


def test_repetition_counts_positions_at_the_start_of_turns(cp):
    g = play(cp, fen="7k/8/8/8/8/8/8/K7 w - - 0 2")
    # Each turn is one king move: the king is the only piece and may move once.
    for m in "a1b1 h8g8 b1a1 g8h8 a1b1 h8g8 b1a1".split():
        g.push(m)
        assert g.outcome() is None
    g.push("g8h8")                                # the start position for the third time
    assert g.outcome().reason == "threefold repetition"


def test_fifty_move_rule_counts_turns_not_moves(cp):
    g = play(cp, fen="7k/8/8/8/8/8/8/KR6 w - - 98 20")
    g.push("a1a2")
    g.push("b1b2")          # two quiet moves, one turn: 99 half-turns
    assert g.outcome() is None and g.turn == 1
    g.push("h8g8")          # the hundredth quiet half-turn
    assert g.outcome().reason == "fifty-move rule"


# -- en passant and castling ---------------------------------------------------------------

FEN_EP = "7k/p7/8/8/3p4/8/P3P3/7K w - - 0 2"   # White Pa2 Pe2, Black Pa7 Pd4; turn 2


def test_en_passant_after_a_double_step_that_ended_the_turn(cp):
    g = play(cp, "e2e4 end", fen=FEN_EP)
    a = g.parse("d4e3")
    assert a.kind == "en-passant"
    assert {g.geometry.name(s) for s in a.lifts} == {"d4", "e4"}
    g = play(cp, "a2a3 e2e4", fen=FEN_EP)        # the double step is the turn's last move
    assert "d4e3" in legal(g)


def test_no_en_passant_when_the_double_step_was_not_the_last_move(cp):
    g = play(cp, "e2e4 a2a3", fen=FEN_EP)
    assert "d4e3" not in legal(g)


def test_en_passant_only_as_the_first_move_of_the_turn(cp):
    g = play(cp, "e2e4 end a7a6", fen=FEN_EP)
    assert g.turn == 1 and "d4e3" not in legal(g)


def test_castling_is_a_king_move_and_the_rook_then_stays(cp):
    g = play(cp, fen="4k3/8/8/8/8/8/P7/4K2R w K - 0 8")     # turn 8: 8 points
    castle = g.parse("e1g1")
    assert castle.kind == "castle" and castle.detail == (2,)
    g.push(castle)
    assert g.points_left == 6                     # enough for a rook move (5), but
    assert legal(g) == {"a2a3", "a2a4", "end"}    # the rook on f1 moved with the king


def test_promotion_ends_that_pawn_s_moves_for_the_turn(cp):
    g = play(cp, fen="8/P6k/8/8/8/8/8/K7 w - - 0 20")
    g.push("a7a8q")
    assert g.turn == 0 and not any(a.text.startswith("a8") for a in g.legal_actions())


# -- whole-turn counts, by hand ------------------------------------------------------------

def test_turn_sequences_turn_1(cp):
    # 16 pawn moves; each spends the only point and ends the turn.
    assert turn_sequences(play(cp)) == 16


def test_turn_sequences_turn_2_from_the_start(cp):
    # 2 points. First: 16 pawn moves (the king is boxed in, knights cost 3). Then 1 point:
    # the 7 other pawns' 14 moves (the moved pawn may not move again; a king move costs 2),
    # each ending the turn, or end: 15. 16 x 15 = 240.
    g = play(cp, fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2")
    assert turn_sequences(g) == 240


def test_turn_sequences_with_a_check(cp):
    # Turn 3 (3 points): White Ka1 Pc2 Pg6 against Kh8. Moves: g7+ (1, ends the turn),
    # c3 or c4 (1), K to a2/b1/b2 (2).
    #   g7+                                   1
    #   c3 then: K x3 (spends all) | g7+ | end  5; the same after c4: 5
    #   K x3 then: c3 | c4 | g7+ | end         3 x 4 = 12
    # 1 + 5 + 5 + 12 = 23
    g = play(cp, fen="7k/8/6P1/8/8/8/2P5/K7 w - - 0 3")
    assert turn_sequences(g) == 23
    div = dict(turn_divide(g))
    assert div == {"g6g7": 1, "c2c3": 5, "c2c4": 5, "a1a2": 4, "a1b1": 4, "a1b2": 4}


def test_turn_sequences_out_of_check(cp):
    # Black's turn 3 after g7+: the king must move first (g8, h7, xg7: 2 points), then
    # a6 | a5 | end: 3 x 3 = 9.
    g = play(cp, "g6g7", fen=FEN_CHECK.format(3))
    assert turn_sequences(g) == 9


def test_game_perft_counts_turns_of_single_moves(cp):
    # Depth 2 from the start: 16 white pawn moves, then Black's 16 (no pawn meets another).
    assert game_perft(play(cp), 2) == 256


def test_pop_restores_the_turn(cp):
    g = play(cp, "e2e4 e7e5 d2d4")
    before = (g.fen(), g.describe(), legal(g))
    g.push("c2c4")
    assert g.turn == 1
    g.pop()
    assert (g.fen(), g.describe(), legal(g)) == before
    g.pop()
    assert g.describe()["turn_moves"] == [] and g.turn == 0 and g.points_left == 2


@pytest.mark.parametrize("name", ["cost-progressive", "cost-progressive-simple", "cost-progressive-tomorrow-1"])
def test_san_suffix_is_the_turn_ending_check_and_asking_changes_nothing(name):
    # SAN pushes the move only when it checks; the suffix must still be what playing it says:
    # '+' when the check ends the turn, '#' when the opponent then has no affordable answer
    import random
    rng = random.Random(name)
    g = new_game(load_variant(name))
    for _ in range(40):
        acts = [a for a in g.legal_actions()]
        if not acts:
            break
        before = [a.text for a in acts]
        for a in rng.sample(acts, min(12, len(acts))):
            text = g.san(a)
            if a.text == "end":
                assert text == "end"
                continue
            probe = g.copy()
            probe.push(a)
            checked = probe._state.ended_by == "check" and not probe._state.moves
            mate = checked and probe.outcome() is not None and probe.outcome().reason == "checkmate"
            assert text.endswith("#") == mate and text.endswith("+") == (checked and not mate), (text, g.fen())
        assert [a.text for a in g.legal_actions()] == before      # naming moves left the game as it was
        g.push(rng.choice(acts))



@pytest.mark.parametrize("name", ["cost-progressive", "cost-progressive-fibonacci", "cost-progressive-simple",
                                  "cost-progressive-tomorrow-1"])
def test_a_turn_goes_on_exactly_when_an_affordable_move_is_listed(name):
    # after a move the turn ends by itself unless a piece not yet moved, of a type the points
    # left pay for, can move; asked square by square of the position, the answer must be the
    # listed moves' -- tried with the points spent and the pieces moved made up at random
    import random
    from dataclasses import replace
    rng = random.Random(f"go-on/{name}")
    yes = no = 0
    g = new_game(load_variant(name))
    for _ in range(60):
        acts = [a for a in g.legal_actions() if a.text != "end"]
        if not acts:
            break
        g.push(rng.choice(acts))
        if not g._state.moves:
            continue
        real = g._state
        own = g.position.occ[g.turn]
        for _ in range(8):
            spent = max(0, g.turn_budget - rng.randint(0, 2 * max(g.rules.costs)))   # a few points left
            share = rng.choice((0.3, 0.6, 0.9))                                    # pieces already moved
            frozen = sum(1 << sq for sq in range(g.geometry.files * g.geometry.ranks)
                         if own >> sq & 1 and rng.random() < share)
            g._state = replace(real, spent=spent, frozen=frozen)
            g._moves_cache = None
            listed = bool(g._generate(affordable=True))
            assert g._can_go_on() == listed, (g.fen(), spent, frozen)
            yes += listed
            no += not listed
        g._state = real
        g._moves_cache = None
        if rng.random() < 0.3:
            g.push(g.parse("end"))
    assert yes > 20 and no > 20
