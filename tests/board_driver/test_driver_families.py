"""The driver on the families beyond chess: Chego, csipgs, Cost Progressive Chess."""

import random

import pytest
from drivertools import Table

from board_driver.config import load_variant
from board_driver.referee.session import CommandError
from engine.game import new_game


def _chego_position_with(predicate, seeds=range(40)):
    """Moves of a random Chego game up to a position where some legal drop satisfies ``predicate``."""
    v = load_variant("chego")
    for seed in seeds:
        rng = random.Random(seed)
        g = new_game(v)
        moves = []
        for _ in range(40):
            legal = [a for a in g.legal_actions() if a.kind == "drop"]
            hit = [a for a in legal if predicate(g, a)]
            if hit:
                return moves, hit[0], g
            if not legal:
                break
            a = rng.choice(legal)
            moves.append(a)
            g.push(a)
    raise AssertionError("no such position found")


def _play_drops(t: Table, moves):
    for a in moves:
        sq = t.session.game.geometry.name(next(iter(a.places)))
        t.place(sq)
        for k in a.lifts:
            t.lift(t.session.game.geometry.name(k))
        t.settle()
        if t.pending and t.pending["type"] == "prompt":
            t.say("choose " + a.text.split("@")[0])
    assert t.moves == [a.text for a in moves]


def test_chego_drop_waits_until_the_pieces_it_kills_are_lifted_off():
    def kills_alone(g, a):
        same = [b for b in g.legal_actions() if b.places == a.places and b.lifts == a.lifts]
        others = [b for b in g.legal_actions() if b.places == a.places and b.lifts != a.lifts]
        return a.lifts and len(same) == 1 and not others
    moves, drop, g = _chego_position_with(kills_alone)
    t = Table("chego")
    _play_drops(t, moves)
    name = g.geometry.name
    t.place(name(next(iter(drop.places)))).settle()
    assert t.moves == [a.text for a in moves]            # not before the victims are off
    for k in drop.lifts:
        assert t.led(name(k)) == "remove" and t.blinking(name(k))
    for k in sorted(drop.lifts):
        t.lift(name(k))
    t.settle()
    assert t.moves[-1] == drop.text and t.pending is None


def test_chego_piece_type_is_a_prompt_without_a_default():
    def ambiguous(g, a):
        return not a.lifts and sum(1 for b in g.legal_actions() if b.places == a.places and not b.lifts) >= 2
    moves, drop, g = _chego_position_with(ambiguous)
    t = Table("chego")
    _play_drops(t, moves)
    sq = g.geometry.name(next(iter(drop.places)))
    t.place(sq).settle()
    p = t.pending
    assert p["type"] == "prompt" and p["default"] is None and drop.text in p["options"]
    assert t.led(sq) == "prompt"
    with pytest.raises(CommandError, match="no default"):
        t.say("choose")
    t.say("choose " + drop.text.split("@")[0])
    assert t.moves[-1] == drop.text and t.pending is None


def test_chego_passes_end_the_game_and_the_territory_lights_up():
    t = Table("chego")
    t.place("d4").settle()
    if t.pending:
        t.say("choose n")
    t.say("pass")
    t.say("pass")
    assert t.session.outcome() is not None
    lit = t.lit()
    assert set(lit.values()) & {"white area", "black area"}


def test_csipgs_purchase_then_transfer_with_the_bought_piece_as_default():
    t = Table("csipgs-power-super")
    g = t.session.game
    t.move("e1", "d1").settle()
    t.say("buy N")
    t.move("e8", "d8").settle()
    t.move("d1", "e1").settle()
    t.say("buy B")
    t.move("d8", "e8").settle()
    # White's next turn: the bought pieces may go next to the king; the bishop (bought last)
    # lights the purchase layer
    assert t.led("d2") == "purchase"
    t.place("d2").settle()
    p = t.pending
    assert p["type"] == "prompt" and p["options"] == ["B@d2", "N@d2"] and p["default"] == "B@d2"
    t.move("e8", "d8").settle()          # Black moves on: the default is taken, the design phase ends
    assert t.moves[-4:] == ["end", "B@d2", "end", "e8d8"]
    assert g.describe()["reserve"]["white"] == {"N": 1}


def test_csipgs_design_change_and_buy_refusals_are_reported():
    t = Table("csipgs")
    t.move("e1", "d1").settle()
    t.say("design 3=fcFfmWfW")
    assert t.moves == ["e1d1", "design:3=fcFfmWfW"]
    with pytest.raises(CommandError, match="zorkmids|action phase|design phase"):
        t.say("buy R")


def test_csipgs_army_is_typed_then_set_up_as_the_leds_show():
    t = Table("csipgs-army")
    white = "royal-WF@e1," + ",".join(f"fcFfmW@{f}2" for f in "abcdefgh") + "," + \
        ",".join(f"fcFfmW@{f}1" for f in "abcdfgh")
    t.say("setup " + white)
    assert t.pending["type"] == "mismatch" and len(t.pending["fill"]) == 16
    assert t.led("e1") == "fill"
    for f in "abcdefgh":
        t.place(f"{f}2", gap=50)
    for f in "abcdefgh":
        t.place(f"{f}1", gap=50)
    t.settle()
    assert t.pending is None and len(t.moves) == 1


def test_cost_progressive_turns_several_moves_and_the_points_bar():
    t = Table("cost-progressive")
    t.move("e2", "e4").settle()                   # turn 1: one point each, the turns end by themselves
    t.move("d7", "d6").settle()
    t.move("d2", "d4").settle()                   # White's turn 2: two points, one left
    assert t.moves == ["e2e4", "d7d6", "d2d4"]
    assert t.session.game.describe()["points_left"] == 1
    bar = [p for p, name in enumerate(t.session.led_layers) if name == "points"]
    assert len(bar) == 1 and t.session.layout.game_square(bar[0]) is None     # beside the game
    t.move("e7", "e6").settle()                   # Black moves: White's turn ended implicitly
    assert t.moves[-2:] == ["end", "e7e6"]
    t.say("end")                                  # Black ends with a point unspent
    assert t.moves[-1] == "end" and t.session.game.turn == 0


def test_cost_progressive_a_piece_moves_once_so_a_long_step_replaces_the_short_one():
    t = Table("cost-progressive")
    t.move("e2", "e4").move("d7", "d6").settle()
    t.move("d2", "d3").wait(1000)                 # a long stop on d3 ...
    assert t.moves == ["e2e4", "d7d6", "d2d3"]
    t.move("d3", "d4").settle()                   # ... then on: one move d2d4, not two
    assert t.moves == ["e2e4", "d7d6", "d2d4"]
