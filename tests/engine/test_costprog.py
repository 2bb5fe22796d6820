"""Cost Progressive Chess: the text's tables of combinations, cost tables, budgets, csipgs prices
and the validation of a variant's rules."""

import re

import pytest

from board_driver.config import load_variant
from engine.costprog import (
    COST_TABLES,
    CostRules,
    combinations,
    csipgs_cost,
    format_combination,
)
from engine.errors import VariantError
from engine.game import new_game
from engine.variant import Variant


def parse_line(text: str) -> set[frozenset]:
    """'(5p) or (3p+K) or ...' as written in the rules text -> set of multisets."""
    out = set()
    for group in re.findall(r"\(([^)]*)\)", text):
        combo = {}
        for term in group.split("+"):
            m = re.fullmatch(r"(\d*)([A-Za-z])", term.strip())
            combo[m.group(2)] = int(m.group(1) or 1)
        out.add(frozenset(combo.items()))
    return out


def as_set(combos) -> set[frozenset]:
    return {frozenset(c.items()) for c in combos}


# The rules text, copied line by line ("Possible combinations of pieces that could be moved").
TEXT_TURNS = {
    1: "(p)",
    2: "(2p) or (K)",
    3: "(3p) or (K) or (p+K) or (N) or (B)",
    4: "(4p) or (2p+K) or (p+N) or (p+B)",
    5: "(5p) or (3p+K) or (2p+N) or (2p+B) or (K+N) or (K+B)",
}
# The Fibonacci variant's table, turns 1-3.
TEXT_FIBONACCI = [
    ("W", 1, "(p)"),
    ("B", 1, "(p)"),
    ("W", 2, "(2p) or (K)"),
    ("B", 3, "(3p) or (2p+K) or (N) or (B)"),
    ("W", 5, "(5p) or (3p+K) or (2p+N) or (2p+B) or (K+N) or (K+B)"),
    ("B", 8, "(8p) or (6p+K) or (5p+N) or (5p+B) or (K+2N) or (K+2B) or (2p+N+B) or (3p+R)"),  # "... etc."
]


@pytest.fixture(scope="module")
def game():
    return new_game(load_variant("cost-progressive"))


@pytest.fixture(scope="module")
def fib():
    return new_game(load_variant("cost-progressive-fibonacci"))


# -- the text's tables ---------------------------------------------------------------------

@pytest.mark.parametrize("turn", [1, 2, 4])
def test_turns_1_2_4_match_the_text_exactly(game, turn):
    # Turn 4 has no (2K) nor (K+K): each piece moves once a turn and there is one king.
    assert as_set(game.combinations(turn)) == parse_line(TEXT_TURNS[turn])


def test_turn_3_the_lone_king_is_affordable_but_leaves_a_pawn_move_unpaid(game):
    text = parse_line(TEXT_TURNS[3])
    full = as_set(game.combinations(3))
    lone_king = frozenset({("K", 1)})
    # The text also lists (K): two of the three points, where (p+K) spends all three.
    assert text - full == {lone_king}
    assert full <= text
    assert lone_king in as_set(game.combinations(3, full=False))


def test_turn_5_adds_the_rook_the_text_leaves_out(game):
    # A rook costs 5, exactly turn 5's points; the text (both of its turn-5 lines) omits it.
    assert as_set(game.combinations(5)) == parse_line(TEXT_TURNS[5]) | parse_line("(R)")


def test_affordable_combinations_of_turn_2_are_the_full_ones_and_the_single_pawn(game):
    assert as_set(game.combinations(2, full=False)) == parse_line("(p) or (2p) or (K)")


def test_fibonacci_budgets_are_the_text_s_per_side_points(fib):
    assert [fib.budget_of(h) for h in range(1, 9)] == [1, 1, 2, 3, 5, 8, 13, 21]


@pytest.mark.parametrize("side,points,line", TEXT_FIBONACCI[:3])
def test_fibonacci_lines_match_the_text(fib, side, points, line):
    assert as_set(fib.combinations(points)) == parse_line(line)


def test_fibonacci_white_5_is_turn_5_with_the_rook_again(fib):
    side, points, line = TEXT_FIBONACCI[4]
    assert as_set(fib.combinations(points)) == parse_line(line) | parse_line("(R)")


def test_fibonacci_black_3_gives_pawn_and_king_where_the_text_prints_2p_plus_k(fib):
    # (2p+K) costs 1+1+2 = 4 > 3: the engine gives (p+K) in its place, the rest as the text.
    assert as_set(fib.combinations(3)) == parse_line("(3p) or (p+K) or (N) or (B)")
    assert fib.cost_of("pawn") * 2 + fib.cost_of("king") == 4


def test_fibonacci_black_8_contains_the_text_s_list_and_the_rest_of_its_etc(fib):
    engine = as_set(fib.combinations(8))
    assert parse_line(TEXT_FIBONACCI[5][2]) <= engine
    # All of them, by hand: the non-pawn part costs at most 8, pawns fill the rest
    # (K2 N3 B3 R5; Q9 is too dear; two rooks cost 10).
    by_hand = ("(8p) (6p+K) (5p+N) (5p+B) (3p+K+N) (3p+K+B) (2p+2N) (2p+2B) (2p+N+B) (K+2N) "
               "(K+2B) (K+N+B) (3p+R) (p+K+R) (N+R) (B+R)")
    assert engine == parse_line(by_hand)


def test_combinations_print_as_the_text_writes_them(game):
    assert [format_combination(c) for c in game.combinations(4)] == ["(4p)", "(2p+K)", "(p+N)", "(p+B)"]


def test_without_an_army_limit_a_piece_kind_may_repeat():
    costs = {"p": 1, "K": 2}
    assert as_set(combinations(4, costs)) == parse_line("(4p) or (2p+K) or (2K)")
    assert as_set(combinations(4, costs, {"p": 8, "K": 1})) == parse_line("(4p) or (2p+K)")


def test_simple_table_turn_3(game):
    simple = new_game(load_variant("cost-progressive-simple"))
    # P1 N2 B3 R4 Q5 K1, one king, two knights: p+N, K+N and 2p+K spend 3 as well.
    assert as_set(simple.combinations(3)) == parse_line("(3p) or (2p+K) or (p+N) or (K+N) or (B)")


def test_tomorrow_army_turn_3_includes_camel_and_giraffe():
    t1 = new_game(load_variant("cost-progressive-tomorrow-1"))
    assert as_set(t1.combinations(3)) == parse_line("(3p) or (p+K) or (N) or (B) or (L) or (G)")
    assert t1.army() == {"p": 12, "K": 1, "R": 2, "G": 2, "L": 2, "N": 2, "B": 2, "Q": 1}
    assert sum(t1.army().values()) == 24


# -- cost tables ---------------------------------------------------------------------------

def test_standard_and_simple_tables_are_the_text_s():
    assert dict(COST_TABLES["standard"]) == {"pawn": 1, "knight": 3, "bishop": 3, "rook": 5,
                                             "queen": 9, "king": 2}
    assert dict(COST_TABLES["simple"]) == {"pawn": 1, "knight": 2, "bishop": 3, "rook": 4,
                                           "queen": 5, "king": 1}


@pytest.mark.parametrize("name,expected", [
    ("cost-progressive", {"pawn": 1, "knight": 3, "bishop": 3, "rook": 5, "queen": 9, "king": 2}),
    ("cost-progressive-simple", {"pawn": 1, "knight": 2, "bishop": 3, "rook": 4, "queen": 5, "king": 1}),
    ("cost-progressive-fibonacci", {"pawn": 1, "knight": 3, "bishop": 3, "rook": 5, "queen": 9, "king": 2}),
    ("cost-progressive-tomorrow-1", {"pawn": 1, "knight": 3, "bishop": 3, "rook": 5, "queen": 9,
                                     "king": 2, "camel": 3, "giraffe": 3}),
])
def test_each_variant_prices_every_piece(name, expected):
    g = new_game(load_variant(name))
    assert g.describe()["move_costs"] == expected


def test_fairy_table_prices_every_catalog_piece():
    from engine.variant import CATALOG
    assert set(CATALOG) <= set(COST_TABLES["fairy"])


# -- the csipgs formula --------------------------------------------------------------------

@pytest.mark.parametrize("betza,royal,price", [
    # The csipgs overview's own designs: B=3, BR=9, fcFfmW=2, N=3, R=5, royal-WF=12.
    ("B", False, 3), ("BR", False, 9), ("fcFfmW", False, 2), ("N", False, 3), ("R", False, 5),
    ("WF", True, 12),
    # By hand: camel L 3.3 x colourbound 0.9 = 2.97 -> 3; queen 5 + 3.3 = 8.3 -> 9;
    # princess 3.3 + 3 = 6.3 -> 7; tiger 0.6 x 3.3 + 0.6 x 3 = 3.78 -> 4;
    # fers 1.5 x 0.9 = 1.35 -> 2; the pawn's initial double step is not priced.
    ("C", False, 3), ("Q", False, 9), ("BN", False, 7), ("mBcN", False, 4), ("F", False, 2),
    ("fmWfcFifmnD", False, 2),
])
def test_csipgs_prices(betza, royal, price):
    assert csipgs_cost(betza, royal=royal) == price


def test_csipgs_matches_the_standard_table_for_n_b_r_q_but_not_p_k():
    std = COST_TABLES["standard"]
    for name, betza in (("knight", "N"), ("bishop", "B"), ("rook", "R"), ("queen", "Q")):
        assert csipgs_cost(betza) == std[name]
    assert (csipgs_cost("fmWfcF"), csipgs_cost("K")) == (2, 3)   # the table says 1 and 2


@pytest.mark.parametrize("betza", ["mRcpR", "F>R{2,}", "R4", "nN"])
def test_csipgs_refuses_what_it_cannot_price(betza):
    with pytest.raises(VariantError, match=re.escape(repr(betza))):
        csipgs_cost(betza)


# -- rules from YAML -----------------------------------------------------------------------

def _variant(rules, back=None):
    data = {"name": "cp-test", "family": "cost-progressive",
            "back_rank": back or ["rook", "knight", "bishop", "queen", "king", "bishop", "knight", "rook"],
            "rules": rules}
    return Variant.from_dict(data, "cp-test.yaml")


def test_a_piece_may_be_priced_by_the_csipgs_formula_in_yaml():
    v = Variant.from_dict({"name": "cp12", "family": "cost-progressive", "board": {"files": 12, "ranks": 8},
                           "back_rank": ["rook", "giraffe", "camel", "knight", "bishop", "queen", "king",
                                         "bishop", "knight", "camel", "giraffe", "rook"],
                           "rules": {"costs": {"table": "standard", "camel": "csipgs", "giraffe": 4}}})
    g = new_game(v)
    assert g.cost_of("camel") == 3 and g.cost_of("giraffe") == 4 and g.cost_of("queen") == 9


def test_a_custom_table_and_schedule():
    rules = CostRules.from_variant(_variant({
        "costs": {"pawn": 2, "knight": 2, "bishop": 2, "rook": 2, "queen": 2, "king": 2},
        "budget": {"white": [3, 6], "black": [4]}}))
    assert set(rules.costs) == {2}
    assert [rules.schedule.budget(h) for h in range(1, 7)] == [3, 4, 6, 4, 6, 4]


def test_a_list_schedule_repeats_its_last_entry_and_a_number_is_every_turn():
    rules = CostRules.from_variant(_variant({"budget": [1, 2, 4]}))
    assert [rules.schedule.budget(h) for h in range(1, 9)] == [1, 1, 2, 2, 4, 4, 4, 4]
    rules = CostRules.from_variant(_variant({"budget": 7}))
    assert {rules.schedule.budget(h) for h in range(1, 20)} == {7}


@pytest.mark.parametrize("rules,words", [
    ({"costs": {"table": "standard", "knight": 0}}, ["costs.knight", "0"]),
    ({"costs": {"table": "standard", "knight": "cheap"}}, ["costs.knight", "'cheap'"]),
    ({"costs": {"pawn": 1, "king": 2}}, ["no move cost for", "rook"]),
    ({"costs": {"table": "standard", "dragon": 3}}, ["costs.dragon", "no such piece"]),
    ({"costs": "expensive"}, ["costs.table", "'expensive'"]),
    ({"budget": "weekly"}, ["budget", "'weekly'"]),
    ({"budget": [1, 0]}, ["budget", "0"]),
    ({"budget": {"white": [1], "red": [2]}}, ["budget.red"]),
    ({"speed": 2}, ["rules.speed", "unknown key"]),
])
def test_bad_rules_are_refused_naming_the_key_and_value(rules, words):
    with pytest.raises(VariantError) as err:
        new_game(_variant(rules))
    for w in words:
        assert w in str(err.value)


def test_a_fairy_piece_without_a_cost_is_refused_with_a_hint():
    v = Variant.from_dict({"name": "cp12", "family": "cost-progressive", "board": {"files": 12, "ranks": 8},
                           "back_rank": ["rook", "giraffe", "camel", "knight", "bishop", "queen", "king",
                                         "bishop", "knight", "camel", "giraffe", "rook"],
                           "rules": {"costs": "standard"}})
    with pytest.raises(VariantError, match="no move cost for giraffe, camel"):
        new_game(v)


def test_a_move_the_turn_cannot_pay_for_is_refused_with_its_cost():
    from board_driver.config import load_variant
    from engine.game import new_game
    g = new_game(load_variant("cost-progressive"))
    sq = g.geometry.parse
    assert g.why_refused(frozenset({sq("g1")}), frozenset({sq("f3")})) == \
        "the white knight on g1 cannot go to f3: a knight move costs 3 movement points; 1 is left this turn"
    assert g.why_refused(frozenset({sq("e2")}), frozenset({sq("e4")})) == ""      # legal: nothing refused
    # no such move at any cost: the piece's moves, not the price
    assert g.why_refused(frozenset({sq("g1")}), frozenset({sq("g3")})) == (
        "the white knight on g1 cannot go to g3: a knight moves and captures with a leap of two squares "
        "one way and one the other (Betza N)")
