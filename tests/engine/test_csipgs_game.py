"""csipgs chess, the game: turns with a credit, an action and a design phase; purchases,
transfers, designs, several royal pieces; hand-counted legal-action trees."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from board_driver.config import load_variant
from engine.csipgs import CsipgsGame
from engine.errors import IllegalMoveError
from engine.game import new_game
from engine.perft import game_perft


def game(name="csipgs", fen=None, **kw):
    return CsipgsGame(load_variant(name), fen, **kw)


def texts(g):
    return sorted(a.text for a in g.legal_actions())


def sq(g, name):
    return g.geometry.parse(name)


def play(g, *actions):
    for a in actions:
        g.push(a)
    return g


# -- the start --------------------------------------------------------------------------------------
def test_start_royal_wf_pieces_on_e1_e8_six_designs_no_reserves():
    g = new_game(load_variant("csipgs"))
    assert isinstance(g, CsipgsGame)
    assert g.piece_map() == {sq(g, "e1"): ("k", 0), sq(g, "e8"): ("k", 1)}
    assert g.designs == (("B", "BR", "fcFfmW", "N", "R", "royal-WF"),) * 2
    assert g.reserve(0) == {} and g.reserve(1) == {}
    # White's first turn has begun: the credit of one zorkmid is in the treasury
    assert g.treasury == (1, 0)
    assert g.phase == "action" and g.turn == 0
    # one zorkmid buys nothing (the cheapest design, fcFfmW, costs 2): the five king steps
    assert texts(g) == ["e1d1", "e1d2", "e1e2", "e1f1", "e1f2"]


def test_a_turn_is_an_action_then_the_design_phase():
    g = game()
    g.push("e1e2")
    assert g.phase == "design" and g.turn == 0
    assert texts(g) == ["end"]                     # design changes are parsed, not listed
    with pytest.raises(IllegalMoveError, match="design phase"):
        g.parse("e2e3")
    g.push("end")
    assert g.phase == "action" and g.turn == 1
    assert g.treasury == (1, 1)
    with pytest.raises(IllegalMoveError, match="action phase"):
        g.parse("end")
    with pytest.raises(IllegalMoveError, match="design phase"):
        g.parse("design:1=W")


def test_treasury_over_a_sequence_of_turns():
    g = game()
    seen = []
    for white, black in (("e1e2", "e8e7"), ("e2e3", "e7e6"), ("buy:fcFfmW", "buy:N"),
                         ("e3d3", "e6e5")):
        g.push(white)
        seen.append(g.treasury)
        g.push("end")
        g.push(black)
        seen.append(g.treasury)
        g.push("end")
    # one zorkmid each turn; fcFfmW costs 2 (paid at White's third turn: 3 - 2), N costs 3
    assert seen == [(1, 0), (1, 1), (2, 1), (2, 2), (1, 2), (1, 0), (2, 0), (2, 1)]
    assert g.reserve(0) == {"fcFfmW": 1} and g.reserve(1) == {"N": 1}
    assert g.treasury == (3, 1)                    # White's fifth turn has been credited


def test_purchases_go_to_the_reserve_and_transfers_drop_next_to_the_royal_piece():
    g = game(fen="4k3/8/8/8/8/8/8/4K3 w - - 0 1", treasury=(3, 0))
    a = g.push("buy:N")
    assert a.kind == "buy" and a.silent
    assert g.treasury == (0, 0)
    assert g.fen().startswith("4k3/8/8/8/8/8/8/4K3[N] w")
    play(g, "end", "e8d8", "end")
    drops = sorted(a.text for a in g.legal_actions() if a.kind == "drop")
    assert drops == ["N@d1", "N@d2", "N@e2", "N@f1", "N@f2"]
    a = g.push("N@d2")
    assert a.places == frozenset({sq(g, "d2")}) and not a.lifts
    assert g.piece_map()[sq(g, "d2")] == ("n", 0)
    assert g.reserve(0) == {}


def test_transfer_errors_say_why():
    g = game(fen="4k3/8/8/8/8/8/8/4K3[N] w - - 0 1")
    with pytest.raises(IllegalMoveError, match="not next to a royal"):
        g.parse("N@e4")
    with pytest.raises(IllegalMoveError, match="no 'B' in reserve"):
        g.parse("B@e2")
    g2 = game(fen="4k3/8/8/8/8/8/4r3/4K3[N] w - - 0 1")     # the rook on e2 checks e1
    with pytest.raises(IllegalMoveError, match="is in check"):
        g2.parse("N@d1")
    with pytest.raises(IllegalMoveError, match="not empty"):
        g2.parse("N@e2")


def test_purchase_refusals_say_why():
    g = game(fen="4k3/8/8/8/8/8/8/4K3 w - - 0 1", treasury=(4, 0))
    with pytest.raises(IllegalMoveError, match="costs 5"):
        g.parse("buy:R")
    with pytest.raises(IllegalMoveError, match="not one of white's designs"):
        g.parse("buy:W")
    assert g.parse("buy 4").text == "buy:N"                  # by design number, spaced form
    checked = game(fen="4k3/8/8/8/8/8/4r3/4K3 w - - 0 1", treasury=(40, 0))
    with pytest.raises(IllegalMoveError, match="in check"):
        checked.parse("buy:N")
    full = game(fen="4k3/8/8/8/8/8/8/4K3[NNNNNNNNNNNNNNN] w - - 0 1", treasury=(40, 0))
    with pytest.raises(IllegalMoveError, match="16 pieces"):
        full.parse("buy:N")
    fifteen = game(fen="4k3/8/8/8/8/8/8/4K3[NNNNNNNNNNNNNN] w - - 0 1", treasury=(40, 0))
    assert fifteen.parse("buy:N").kind == "buy"


def test_a_bought_piece_keeps_its_moves_when_its_design_changes():
    g = game()
    play(g, "e1e2", "design:1=W", "e8e7", "end", "buy:W", "end", "e7e6", "end")
    assert g.fen().startswith("8/8/4k3/8/8/8/4K3/8[W] w")        # the wazir's letter is w
    play(g, "W@d2", "design:1=F", "e6e5", "end")
    wazir = sorted(a.text for a in g.legal_actions() if a.text.startswith("d2"))
    assert wazir == ["d2c2", "d2d1", "d2d3"]                      # still a wazir (e2 is the king)
    assert g.designs[0][0] == "F"
    play(g, "e2f2", "end", "e5e4", "end", "buy:F")
    # the fers is a new piece type with its own letter; the wazir is still a wazir
    assert g.describe()["pieces"]["w"] == "W" and g.describe()["pieces"]["f"] == "F"
    assert "[F]" in g.fen()


def test_design_changes_are_checked_and_priced():
    g = game()
    g.push("e1e2")
    with pytest.raises(IllegalMoveError, match="'Z'"):
        g.parse("design:1=WZ")
    with pytest.raises(IllegalMoveError, match="no design 7"):
        g.parse("design:7=W")
    with pytest.raises(IllegalMoveError, match="already"):
        g.parse("design:3=fcFfmW")
    a = g.parse("design 2 = royal-K")
    assert a.text == "design:2=royal-K" and a.detail[2] == 12
    g.push(a)
    assert g.designs[0][1] == "royal-K" and g.designs[1][1] == "BR"


def test_pop_restores_every_part_of_the_state():
    g = game()
    start = (g.fen(), g.describe())
    moves = ["e1e2", "design:1=W", "e8e7", "end", "buy:W", "end", "e7d6", "end", "W@d2", "end"]
    for m in moves:
        g.push(m)
    assert g.describe() != start[1]
    for _ in moves:
        g.pop()
    assert (g.fen(), g.describe()) == start
    assert [a.text for a in g.history] == []


def test_replaying_the_history_texts_gives_the_same_game():
    g = game()
    for m in ["e1e2", "design:1=W", "e8e7", "end", "buy:W", "end", "e7d6", "end", "W@d2", "end"]:
        g.push(m)
    again = game()
    for a in g.history:
        again.push(a.text)
    assert again.fen() == g.fen() and again.describe() == g.describe()


def test_a_purchase_names_the_letter_its_piece_will_have():
    g = game()
    play(g, "e1e2", "design:1=W", "e8e7", "end")
    buy = g.parse("buy:W")
    assert buy.piece == "w"                          # the wazir's own letter, free
    play(g, buy, "design:1=fW", "e7e6", "end", "e2e3", "end", "e6e7", "end")
    buy = g.parse("buy:fW")
    assert buy.piece == "a"                          # w is taken: the first free letter of the pool
    g.push(buy)
    assert g.fen().startswith("8/4k3/8/8/8/4K3/8/8[WA] w")


def test_fifty_moves_without_capture_transfer_or_purchase_draw():
    g = game(fen="4k3/8/8/8/8/8/8/4K3 w - - 99 60")
    play(g, "e1e2", "end")
    assert g.outcome().reason == "fifty-move rule"
    g = game(fen="4k3/8/8/8/8/8/8/4K3 w - - 99 60", treasury=(3, 0))
    play(g, "buy:N", "end")                          # a purchase starts the count again
    assert g.outcome() is None and g.fen().split()[4] == "0"


# -- check, checkmate, stalemate, several royal pieces ----------------------------------------------
def test_checkmate_even_though_a_drop_would_block():
    # the rook on a1 checks h1 along the first rank, the rook on b2 holds the second;
    # a knight in reserve could block on g1, but transfers next to a checked royal are illegal
    g = game(fen="k7/8/8/8/8/8/1r6/r6K[N] w - - 0 1", treasury=(10, 0))
    assert g.in_check()
    assert g.legal_actions() == []
    o = g.outcome()
    assert (o.result, o.reason, o.winner) == ("0-1", "checkmate", 1)


def test_checkmate_is_known_right_after_the_mating_move():
    g = game(fen="k7/8/8/8/8/r7/1r6/7K b - - 0 1")
    g.push("a3a1")
    assert g.phase == "design"
    assert g.outcome().reason == "checkmate" and g.outcome().result == "0-1"
    assert g.legal_actions() == []


def test_stalemate_unless_a_purchase_is_possible():
    fen = "k7/8/8/8/8/8/5q2/7K w - - 0 1"        # the queen on f2 holds g1, g2, h2
    poor = game(fen=fen, treasury=(1, 0))
    assert not poor.in_check()
    assert poor.outcome().reason == "stalemate" and poor.outcome().result == "1/2-1/2"
    rich = game(fen=fen, treasury=(3, 0))          # 3 zorkmids buy B, fcFfmW or N
    assert rich.outcome() is None
    assert texts(rich) == ["buy:B", "buy:N", "buy:fcFfmW"]


def test_with_two_royal_pieces_check_may_be_ignored_until_one_is_left():
    g = game(fen="7k/8/8/4r3/8/8/8/K3K3 w - - 0 1")
    assert g.in_check()                             # e1 is attacked
    assert g.checked_royals() == [sq(g, "e1")]
    assert "e1e2" in texts(g)                       # stays on the rook's file: allowed
    play(g, "a1a2", "end", "e5e1", "end")           # Black captures a royal piece
    assert sorted(g.position.royal_squares(0)) == [sq(g, "a2")]
    assert g.outcome() is None
    # now the last royal piece may not step next to the rook's file... nor into it
    g2 = game(fen="7k/8/8/4r3/8/8/K7/8 w - - 0 1")
    assert "a2b2" in texts(g2) and all(not t.endswith(("e1", "e2", "e3")) for t in texts(g2))


def test_a_royal_bought_and_transferred_makes_check_ignorable():
    g = game(fen="7k/8/8/8/8/8/8/4K3 w - - 0 1", treasury=(12, 0))
    play(g, "buy:royal-WF", "end", "h8g8", "end", "K@d1", "end")
    assert len(g.position.royal_squares(0)) == 2


# -- perft-style counts, worked out by hand ----------------------------------------------------------
def test_perft_from_the_start():
    g = game()
    assert game_perft(g, 1) == 5       # e1: d1 f1 d2 e2 f2; one zorkmid buys nothing
    assert game_perft(g, 2) == 5       # then only "end"
    assert game_perft(g, 4) == 25      # Black's king has five steps too, 1 zorkmid
    # White's second turn: 2 zorkmids buy fcFfmW; the king steps from d1/f1 (5) or d2/e2/f2 (8)
    assert game_perft(g, 5) == (6 + 6 + 9 + 9 + 9) * 5


def test_perft_with_a_reserve_and_money():
    g = game(fen="4k3/8/8/8/8/8/8/4K3[N] w - - 0 1", treasury=(3, 0))
    # 5 king steps + N@ the 5 squares around e1 + buy B, fcFfmW or N (3 zorkmids; 2 pieces < 16)
    assert len(g.legal_actions()) == 13
    kinds = sorted(a.kind for a in g.legal_actions())
    assert kinds.count("drop") == 5 and kinds.count("buy") == 3


def test_perft_in_check_no_drops_no_purchases():
    g = game(fen="k7/8/8/4r3/8/8/8/4K3[N] w - - 0 1", treasury=(5, 0))
    # e1 in check on the e-file: d1 f1 d2 f2 (e2 is on the file); no transfer, no purchase
    assert texts(g) == ["e1d1", "e1d2", "e1f1", "e1f2"]


def test_perft_with_two_royals_one_attacked():
    g = game(fen="7k/8/8/4r3/8/8/8/K3K3[N] w - - 0 1", treasury=(20, 0))
    acts = g.legal_actions()
    # a1: a2 b1 b2; e1: d1 f1 d2 e2 f2 (check may be ignored); N@ next to a1 only (e1 is
    # attacked); no purchase while e1 is in check
    assert sorted(a.text for a in acts if a.kind == "drop") == ["N@a2", "N@b1", "N@b2"]
    assert len(acts) == 3 + 5 + 3
    assert game_perft(g, 2) == 11


# -- the command line --------------------------------------------------------------------------------
def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "board_driver.cli", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_replay_json_reports_treasuries_reserves_and_designs():
    moves = "e1e2 end e8e7 end e2e3 design:1=W e7e6 end buy:W end"
    out = json.loads(cli("replay", "--variant", "csipgs", "--moves", moves, "--json"))
    assert out["turn"] == "black" and out["phase"] == "action"
    # White: 1 + 1 + 1, minus the wazir's 2; Black: three credits
    assert out["treasury"] == {"white": "1", "black": "3"}
    assert out["reserve"] == {"white": {"W": 1}, "black": {}}
    assert out["designs"]["white"] == ["W", "BR", "fcFfmW", "N", "R", "royal-WF"]
    assert out["designs"]["black"] == ["B", "BR", "fcFfmW", "N", "R", "royal-WF"]
    assert out["fen"].startswith("8/8/4k3/8/8/4K3/8/8[W] b ")
    assert "buy:W" in out["moves"]


def test_perft_command_counts_game_actions():
    assert cli("perft", "--variant", "csipgs", "4").splitlines()[-1] == "25"


@pytest.mark.parametrize("name", ["csipgs", "csipgs-drawless", "csipgs-power-weak", "csipgs-progressive"])
def test_the_listed_purchases_are_exactly_the_ones_parse_accepts(name):
    # the action list tests each design without writing why it is refused: it must agree
    # with parse, which says why
    import random
    g = new_game(load_variant(name))
    rng = random.Random(5)
    seen_buy = seen_refusal = 0
    for _ in range(120):
        if g.outcome() is not None:
            break
        legal = g.legal_actions()
        if g.state.phase == "action" and g.rules.buy_phase == "action":
            listed = {a.text for a in legal if a.kind == "buy"}
            for d in set(g.state.designs[g.turn]):
                try:
                    accepted = g.parse(f"buy:{d}").text == f"buy:{d}"
                except IllegalMoveError as exc:
                    accepted = False
                    assert str(exc)                  # a reason is given
                    seen_refusal += 1
                assert accepted == (f"buy:{d}" in listed), (d, g.fen())
                seen_buy += accepted
        g.push(rng.choice(legal))
    assert seen_buy and seen_refusal


def test_a_royal_design_past_the_drawless_limit_is_not_listed_and_parse_says_why():
    g = new_game(load_variant("csipgs-drawless"))
    limit = g.rules.drawless.no_royal_buys_after
    g.state.ply = int(limit * 2) + 4          # a turn after the limit
    us = g.turn
    g.state.treasury = [60, 60]
    royal = next(d for d in g.state.designs[us] if "royal" in d)
    assert f"buy:{royal}" not in {a.text for a in g.legal_actions()}
    with pytest.raises(IllegalMoveError, match="no royal piece"):
        g.parse(f"buy:{royal}")
