"""The csipgs sub-variants, each played through the engine on its distinctive rule."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from fractions import Fraction as F

import pytest

from board_driver.config import configs_dir, load_variant, read_yaml
from engine.csipgs import ArmyError, CsipgsGame, CsipgsRules
from engine.errors import IllegalMoveError
from engine.perft import game_perft
from engine.variant import Variant


def game(name="csipgs", fen=None, **kw):
    return CsipgsGame(load_variant(name), fen, **kw)


def variant_with(name, **rules):
    """The variant NAME with some of its rules: values replaced (the agreed numbers)."""
    data = copy.deepcopy(read_yaml(configs_dir() / "variants" / f"{name}.yaml"))
    for key, value in rules.items():
        if isinstance(value, dict) and isinstance(data["rules"].get(key), dict):
            data["rules"][key].update(value)
        else:
            data["rules"][key] = value
    return Variant.from_dict(data, f"<{name} with {rules}>")


def texts(g):
    return sorted(a.text for a in g.legal_actions())


def play(g, *actions):
    for a in actions:
        g.push(a)
    return g


def sq(g, name):
    return g.geometry.parse(name)


# -- Balanced I and II -------------------------------------------------------------------------------
def test_balanced_1_black_starts_one_zorkmid_up():
    g = play(game("csipgs-balanced-1"), "e1e2", "end")
    assert g.treasury == (1, 2)                      # Black's 1 + his first credit
    # so Black can buy a pawn (fcFfmW, 2) on his first turn, which White could not
    assert "buy:fcFfmW" in texts(g)


def test_balanced_2_half_zorkmids_the_wazir_example():
    g = game("csipgs-balanced-2")
    assert g.treasury == (1, F(1, 2))
    play(g, "e1e2", "design:1=W", "e8e7", "end")
    assert g.treasury == (2, F(3, 2))
    g.push("buy:W")                                  # the wazir costs 1.5: 2 zorkmids leave 0.5
    assert g.treasury == (F(1, 2), F(3, 2))
    assert g.describe()["treasury"] == {"white": "0.5", "black": "1.5"}
    g.push("end")
    g.push("buy:fcFfmW")                             # 1.08 rounds up to 1.5, Black had 2.5
    assert g.treasury[1] == 1


# -- Power ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, credit", [("csipgs-power-weak", 2), ("csipgs-power-standard", 4),
                                          ("csipgs-power-strong", 7), ("csipgs-power-super", 10)])
def test_power_credits(name, credit):
    g = game(name)
    assert g.treasury == (credit, 0)
    play(g, "e1e2", "end")
    assert g.treasury == (credit, credit)


@pytest.mark.parametrize("name", ["csipgs-power-strong", "csipgs-power-super"])
def test_stronger_power_purchases_are_made_in_the_design_phase(name):
    g = game(name)
    assert all(a.kind != "buy" for a in g.legal_actions())
    with pytest.raises(IllegalMoveError, match="design phase"):
        g.parse("buy:N")
    g.push("e1e2")
    assert "buy:N" in texts(g) and "end" in texts(g)
    credit = g.treasury[0]
    g.push("buy:N")                                   # the purchase ends the turn
    assert g.turn == 1 and g.phase == "action"
    assert g.treasury[0] == credit - 3 and g.reserve(0) == {"N": 1}


@pytest.mark.parametrize("name", ["csipgs-power-weak", "csipgs-power-standard"])
def test_weaker_power_purchases_are_the_turns_action(name):
    g = game(name)
    assert "buy:fcFfmW" in texts(g)                   # offered in the action phase, as in csipgs
    g.push("buy:fcFfmW")
    assert g.phase == "design" and texts(g) == ["end"]
    with pytest.raises(IllegalMoveError):
        g.parse("e1e2")                               # the purchase was the turn's action


def test_power_a_transfer_and_a_purchase_in_one_turn():
    g = game("csipgs-power-strong", fen="4k3/8/8/8/8/8/8/4K3[N] w - - 0 1")
    play(g, "N@d2", "buy:N")
    assert g.piece_map()[sq(g, "d2")] == ("n", 0)
    assert g.reserve(0) == {"N": 1}
    assert g.treasury == (4, 7)


def test_power_weak_perft():
    g = game("csipgs-power-weak")
    # 5 king steps or buy fcFfmW (2 zorkmids), then end; then Black's 5 king steps or a purchase
    assert game_perft(g, 2) == 6
    assert game_perft(g, 3) == 36


# -- Progressive ------------------------------------------------------------------------------------
def test_progressive_credits_one_more_each_turn():
    g = game("csipgs-progressive")
    seen = [g.treasury]
    for m in ("e1e2", "e8e7", "e2e3", "e7e6", "e3e2"):
        play(g, m, "end")
        seen.append(g.treasury)
    # White 1, Black 2, White 3, Black 4, White 5, Black 6
    assert seen == [(1, 0), (1, 2), (4, 2), (4, 6), (9, 6), (9, 12)]


def test_progressive_option_buys_in_the_design_phase():
    g = CsipgsGame(variant_with("csipgs-progressive", buy_phase="design"))
    play(g, "e1e2", "end", "e8e7")
    assert "buy:fcFfmW" in texts(g)                  # Black's 2 zorkmids, after his move


# -- Drawless -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fen_tail, credit", [
    ("w - - 0 50", 1),     # ply 99: turn 50 is not over
    ("b - - 0 50", 1),
    ("w - - 0 51", 2),     # after turn 50: 2 a turn
    ("w - - 0 61", 2),     # 10 turns later
    ("b - - 0 61", 3),     # 10.5 turns after turn 50: one more (Black first)
    ("w - - 0 62", 3),
    ("b - - 0 71", 3),
    ("w - - 0 72", 4),     # 21 turns after turn 50: White gets the next raise first
])
def test_drawless_credit_schedule(fen_tail, credit):
    g = game("csipgs-drawless", fen=f"4k3/8/8/8/8/8/8/4K3 {fen_tail}")
    assert g.describe()["credit"] == str(credit)
    assert g.treasury[g.turn] == credit


def test_drawless_schedule_over_a_sequence_of_turns_with_agreed_numbers():
    v = variant_with("csipgs-drawless", drawless={"after_turns": 1, "every_turns": 1.5,
                                                  "no_royal_buys_after": 3, "doublemove_after": 3})
    g = CsipgsGame(v)
    white, black = [g.treasury[0]], []
    for m in ("e1e2", "e8e7", "e2e3", "e7e6", "e3e2", "e6e7", "e2e3", "e7e6"):
        play(g, m, "end")
        (black if g.turn == 1 else white).append(g.treasury[g.turn])
    # credits: ply 1, 2: 1; plies 3-5 (turns 1 to 2): 2; plies 6-8: 3; ply 9 (turn 4): 4
    assert white == [1, 3, 5, 8, 12]
    assert black == [1, 3, 6, 9]


def test_drawless_no_royal_purchases_after_turn_80():
    before = game("csipgs-drawless", fen="4k3/8/8/8/8/8/8/4K3 b - - 0 80", treasury=(0, 12))
    assert "buy:royal-WF" in texts(before)           # Black's 80th turn: still turn 80
    after = game("csipgs-drawless", fen="4k3/8/8/8/8/8/8/4K3 w - - 0 81", treasury=(12, 0))
    assert "buy:royal-WF" not in texts(after)
    with pytest.raises(IllegalMoveError, match="after turn 80"):
        after.parse("buy:royal-WF")
    assert "buy:R" in texts(after)


def test_drawless_doublemove_is_legal_after_turn_110():
    early = game("csipgs-drawless", fen="4k3/8/8/8/8/8/8/4K3 b - - 0 110")
    early.push("e8e7")
    with pytest.raises(IllegalMoveError, match="only after turn 110"):
        early.parse("design:1=doublemove-W")
    late = game("csipgs-drawless", fen="4k3/8/8/8/8/8/8/4K3 w - - 0 111")
    late.push("e1e2")
    a = late.parse("design:1=doublemove-W")
    assert a.detail[2] == 9                          # 1.5 x 6
    plain = play(game("csipgs"), "e1e2")
    with pytest.raises(IllegalMoveError, match="does not enable"):
        plain.parse("design:1=doublemove-W")


def doublemove_game(black_king="d5"):
    """White: royal WF on a1 and a doublemove wazir bought and transferred to b2."""
    designs = (("doublemove-W", "BR", "fcFfmW", "N", "R", "royal-WF"),
               ("B", "BR", "fcFfmW", "N", "R", "royal-WF"))
    fen = f"8/8/8/{'3k4' if black_king == 'd5' else '7k'}/8/8/8/K7 w - - 0 111"
    g = game("csipgs-drawless", fen=fen, treasury=(9, 0), designs=designs)
    return g


def test_drawless_a_doublemove_piece_moves_twice():
    g = doublemove_game(black_king="h5")
    play(g, "buy:doublemove-W", "end", "h5h6", "end", "W@b2", "end", "h6h5", "end")
    acts = g.legal_actions()
    singles = sorted(a.text for a in acts if a.text.startswith("b2") and "," not in a.text)
    doubles = sorted(a.text for a in acts if "," in a.text)
    assert singles == ["b2a2", "b2b1", "b2b3", "b2c2"]
    # second steps: never onto a1 (own king), never straight back to b2
    assert doubles == ["b2a2,a2a3", "b2b1,b1c1", "b2b3,b3a3", "b2b3,b3b4", "b2b3,b3c3",
                       "b2c2,c2c1", "b2c2,c2c3", "b2c2,c2d2"]
    # king a2 b1; 14 zorkmids buy doublemove-W 9, BR 9, fcFfmW 2, N 3, R 5 (no royal after 80)
    assert len(acts) == 2 + 4 + 8 + 5


def test_drawless_a_doublemove_piece_checks_at_two_steps():
    g = doublemove_game()
    play(g, "buy:doublemove-W", "end", "d5d4", "end", "W@b2", "end")
    # Black's king on d4 may not step to c3: the wazir on b2 reaches it in two steps
    kings = sorted(a.text for a in g.legal_actions() if a.text.startswith("d4"))
    assert kings == ["d4c4", "d4c5", "d4d3", "d4d5", "d4e3", "d4e4", "d4e5"]
    play(g, "buy:N", "end")                          # Black stays on d4
    a = g.push("b2c2,c2d2")
    assert a.lifts == frozenset({sq(g, "b2")}) and a.places == frozenset({sq(g, "d2")})
    g.push("end")
    # d2-d3-d4: check. The wazir reaches d1 d3 c2 e2 and then c1 e1 c3 e3 b2 f2 (and d4):
    # the king escapes to c4, c5, d5, e4 or e5; no purchase, no transfer while in check
    assert g.in_check()
    assert g.checked_royals() == [sq(g, "d4")]
    assert texts(g) == ["d4c4", "d4c5", "d4d5", "d4e4", "d4e5"]


def test_a_doublemove_check_is_named_with_its_sign():
    g = doublemove_game()
    play(g, "buy:doublemove-W", "end", "d5d4", "end", "W@b2", "end", "buy:N", "end")
    a = g.parse("b2c2,c2d2")
    assert g.san(a).endswith("+")           # d2 reaches d4 in two steps: check
    quiet = g.parse("b2b1,b1c1")
    assert not g.san(quiet).endswith(("+", "#"))


@pytest.mark.parametrize("name", ["csipgs", "csipgs-power-super", "csipgs-dutch", "csipgs-balanced-1"])
def test_the_check_sign_is_what_playing_the_move_shows(name):
    # SAN tests a check on the position alone; the game's own push must agree
    import random

    from engine.game import new_game
    rng = random.Random(f"sign/{name}")
    g = new_game(load_variant(name))
    checks = 0
    for _ in range(400):
        acts = g.legal_actions()
        if not acts or g.outcome() is not None:
            break
        if g.phase == "action":
            mover = g.state.turn
            for a in acts:
                if a.silent or a.kind.value not in ("move", "capture"):
                    continue
                probe = g.copy()
                probe.push(a)
                gives = any(probe._attacked(k, mover) for k in probe.position.royal_squares(mover ^ 1))
                assert g.san(a).endswith(("+", "#")) == gives, (a.text, g.fen())
                checks += gives
        physical = [a for a in acts if not a.silent]
        g.push(rng.choice(physical if physical and rng.random() < 0.8 else acts))
    assert checks > 0


# -- Configurable: inventions ---------------------------------------------------------------------------
def test_configurable_inventing_the_chinese_knight():
    g = game("csipgs-configurable", fen="4k3/8/8/8/8/8/8/4K3 w - - 0 1", treasury=(5, 5))
    g.push("e1e2")
    a = g.push("invent nN 2 2.4")                   # White proposes 2, Black estimates 2.4
    assert a.text == "invent:nN=2,2.4" and a.silent
    assert g.describe()["inventions"] == [{"kind": "atom", "name": "nN", "estimates": ["2", "2.4"],
                                           "used": "2.4", "by": "white"}]
    # the higher estimate is used, for both players: W + capture-only Chinese Knight = 2.94
    g.push("e8e7")
    d = g.push("design:1=WcnN")
    assert d.detail[2] == 3 and g.cost("WcnN").exact == F("2.94")
    play(g, "e2e3", "end", "buy:WcnN", "end", "e3e4", "end", "W@d7", "end")
    e5 = sq(g, "e5")
    # the Chinese Knight on d7 attacks e5 through the empty d6 (its first, orthogonal step) ...
    assert "e4e5" not in texts(g)
    assert g.position.attacked(e5, 1)
    # ... and does not jump: with d6 filled it would not
    assert not g.position.attacked(e5, 1, occ=g.occupancy() | 1 << sq(g, "d6"))


def test_configurable_inventing_the_runner():
    g = game("csipgs-configurable")
    play(g, "e1e2", "invent:runner=5,4", "e8e7")
    a = g.parse("design:6=DDB")
    assert a.detail[2] == 10                         # (5 x 1.5 + 3.3) x 0.9 = 9.72
    assert g.cost("DDB").exact == F("9.72")
    with pytest.raises(IllegalMoveError, match="invented already"):
        g.parse("invent:runner=3,3")


def test_configurable_invention_errors():
    g = play(game("csipgs-configurable"), "e1e2")
    with pytest.raises(IllegalMoveError, match="has a price already"):
        g.parse("invent:W=1,1")
    with pytest.raises(IllegalMoveError, match="one atom"):
        g.parse("invent:WF=1,1")
    with pytest.raises(IllegalMoveError, match="not a modifier"):
        g.parse("invent:turbo=2,3")
    fresh = game("csipgs-configurable")
    with pytest.raises(IllegalMoveError, match="design phase"):
        fresh.parse("invent:nN=2,2.4")
    plain = play(game("csipgs"), "e1e2")
    with pytest.raises(IllegalMoveError, match="no inventions"):
        plain.parse("invent:nN=2,2.4")


# -- Dutch ------------------------------------------------------------------------------------------------
def test_dutch_pays_tenths():
    g = game("csipgs-dutch", fen="4k3/8/8/8/8/8/8/4K3 w - - 0 1", treasury=(4, 0),
             designs=[("bRbB", "BR", "fcFfmW", "N", "R", "royal-WF")] * 2)
    g.push("buy:bRbB")                               # exactly 2.32: pays 2.4, keeps 1.6
    assert g.treasury == (F("1.6"), 0)
    play(g, "end", "e8e7", "end", "buy:fcFfmW")      # 1.08 -> 1.1 from 2.6
    assert g.describe()["treasury"]["white"] == "1.5"


# -- Army -------------------------------------------------------------------------------------------------
BACK = ["R", "N", "B", "BR", "royal-WF", "B", "N", "R"]
FILES = "abcdefgh"


def army(rank1=1, back=BACK, pawns=("fcFfmW",) * 8):
    rank2 = 2 if rank1 == 1 else 7
    rank1 = 1 if rank1 == 1 else 8
    entries = [f"{d}@{f}{rank1}" for d, f in zip(back, FILES)]
    entries += [f"{d}@{f}{rank2}" for d, f in zip(pawns, FILES)]
    return ",".join(entries)


WHITE_ARMY, BLACK_ARMY = army(1), army(8)


def test_army_a_normal_chess_army_is_affordable_then_standard_play():
    g = game("csipgs-army")
    assert g.phase == "setup" and g.turn == 0
    g.push(WHITE_ARMY)
    assert g.describe()["army"]["spent"]["white"] == "50.88"   # 12 + 8.3 + 10 + 5.94 + 6 + 8.64
    assert g.turn == 1
    g.push(BLACK_ARMY)
    assert g.phase == "action" and g.turn == 0
    assert g.fen().split()[0] == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    assert g.treasury == (1, 0)                      # the 1.12 left over is lost; White's credit
    # pawns step forward one square, knights jump: 8 + 4, no purchase with 1 zorkmid
    assert len(g.legal_actions()) == 12
    play(g, "e2e3", "end", "e7e6", "end")
    assert g.outcome() is None


@pytest.mark.parametrize("leftover, white", [("lose", 1), ("keep", 2), ("half", 1)])
def test_army_leftover_alternatives(leftover, white):
    # 52 - 50.88 = 1.12 left: lost, kept (rounded down: 1), or half kept (0.56 -> 0)
    g = CsipgsGame(variant_with("csipgs-army", army={"leftover": leftover}))
    play(g, WHITE_ARMY, BLACK_ARMY)
    assert g.treasury[0] == white


def rule_of(g, text):
    with pytest.raises(ArmyError) as err:
        g.parse(text)
    return err.value.rule, str(err.value)


def test_army_rule_5_exactly_16_pieces():
    rule, msg = rule_of(game("csipgs-army"), WHITE_ARMY.rsplit(",", 1)[0])
    assert rule == "count" and "15 pieces" in msg


def test_army_rule_1_total_value_less_than_52():
    # a knight (3) swapped for mHfRbmN (0.9 + 2.5 + 0.72 = 4.12) makes exactly 52.00
    back = ["R", "N", "B", "BR", "royal-WF", "B", "mHfRbmN", "R"]
    rule, msg = rule_of(game("csipgs-army"), army(1, back))
    assert rule == "budget" and "52" in msg


def test_army_deployment_on_the_first_two_rows():
    rule, msg = rule_of(game("csipgs-army"), WHITE_ARMY.replace("fcFfmW@a2", "fcFfmW@a3"))
    assert rule == "rows" and "a3" in msg
    rule, _ = rule_of(game("csipgs-army"), WHITE_ARMY.replace("fcFfmW@a2", "fcFfmW@b2"))
    assert rule == "square"
    g = play(game("csipgs-army"), WHITE_ARMY)
    rule, _ = rule_of(g, BLACK_ARMY.replace("fcFfmW@a7", "fcFfmW@a2"))
    assert rule == "rows"                            # Black deploys on ranks 7 and 8


def test_army_rule_3_second_row_pieces_worth_at_most_2():
    pawns = ("fcFfmW", "B") + ("fcFfmW",) * 6        # a bishop, 2.97, on b2
    back = ["R", "N", "fcFfmW", "BR", "royal-WF", "B", "N", "R"]
    rule, msg = rule_of(game("csipgs-army"), army(1, back, pawns))
    assert rule == "second-row" and "2.97" in msg
    pawns = ("fcFfmW", "W") + ("fcFfmW",) * 6        # a wazir, 1.5, is fine there
    g = game("csipgs-army")
    g.push(army(1, BACK, pawns))
    assert g.turn == 1


def test_army_rule_3_alternative_second_row_moves_forward_only():
    v = variant_with("csipgs-army", army={"second_row": "forward"})
    pawns = ("fcFfmW", "W") + ("fcFfmW",) * 6        # the wazir also steps back and sideways
    rule, msg = rule_of(CsipgsGame(v), army(1, BACK, pawns))
    assert rule == "second-row" and "forward" in msg
    pawns = ("fcFfmW", "fN") + ("fcFfmW",) * 6       # 2.1: too dear for rule 3, but forward only
    g = CsipgsGame(v)
    g.push(army(1, BACK, pawns))
    assert g.turn == 1
    g.push(army(8, BACK, pawns))                     # Black's forward is down the board
    assert g.phase == "action"


def test_army_optional_minimum_and_maximum_piece_costs():
    v = variant_with("csipgs-army", army={"max_cost": 8})
    rule, msg = rule_of(CsipgsGame(v), WHITE_ARMY)
    assert rule == "max-cost" and "8.3" in msg       # the BR
    v = variant_with("csipgs-army", army={"min_cost": 1.1})
    rule, msg = rule_of(CsipgsGame(v), WHITE_ARMY)
    assert rule == "min-cost" and "1.08" in msg      # the pawns


def test_army_rule_2_without_a_royal_piece_a_player_loses():
    no_royal = ["R", "N", "B", "BR", "W", "B", "N", "R"]
    g = play(game("csipgs-army"), army(1, no_royal), BLACK_ARMY)
    o = g.outcome()
    assert (o.result, o.winner) == ("0-1", 1) and "royal" in o.reason
    assert g.legal_actions() == []
    g = play(game("csipgs-army"), WHITE_ARMY, army(8, no_royal))
    assert g.outcome().result == "1-0"
    g = play(game("csipgs-army"), army(1, no_royal), army(8, no_royal))
    assert g.outcome().result == "0-1"               # both forgot: Black wins


def test_army_alternating_setup_one_piece_a_turn():
    g = CsipgsGame(variant_with("csipgs-army", army={"setup": "alternating"}))
    with pytest.raises(ArmyError, match="one piece a turn"):
        g.parse("royal-WF@e1,R@a1")
    whites = WHITE_ARMY.split(",")
    blacks = BLACK_ARMY.split(",")
    for w, b in zip(whites, blacks):
        assert g.turn == 0 and g.phase == "setup"
        g.push(w)
        assert g.turn == 1
        g.push(b)
    assert g.phase == "action" and g.turn == 0
    assert g.fen().split()[0] == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"


def test_army_replay_from_the_command_line():
    moves = f"{WHITE_ARMY} {BLACK_ARMY} e2e3 end"
    proc = subprocess.run([sys.executable, "-m", "board_driver.cli", "replay", "--variant", "csipgs-army",
                           "--moves", moves, "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["turn"] == "black" and out["treasury"] == {"white": "1", "black": "1"}
    assert out["fen"].startswith("rnbqkbnr/pppppppp/8/8/8/4P3/PPPP1PPP/RNBQKBNR b")


def test_rules_errors_name_the_key_and_value():
    with pytest.raises(Exception, match="rules.rounding: 'quarter'"):
        CsipgsRules.from_variant(variant_with("csipgs", rounding="quarter"))
    with pytest.raises(Exception, match="rules.designs: 'WZ'"):
        CsipgsRules.from_variant(variant_with("csipgs", designs=["WZ"]))
    with pytest.raises(Exception, match="army.setup"):
        CsipgsGame(variant_with("csipgs-army", army={"setup": "open"}))


# -- fifty-move count ---------------------------------------------------------------------------------
def test_a_pawn_move_starts_the_fifty_move_count_again():
    g = game("csipgs", fen="4k3/8/8/8/8/8/4P3/4K3 w - - 10 6")
    play(g, "e1d1", "end")
    assert g.fen().split()[4] == "11"                 # a king step counts
    play(g, "e8e7", "end", "e2e3", "end")             # fcFfmW, the pawn's design, cannot go back
    assert g.fen().split()[4] == "0"


def test_a_forward_only_design_plays_the_pawns_role_a_backward_step_does_not():
    g = game("csipgs", fen="4k3/8/8/8/8/8/8/4K3 w - - 30 20")
    play(g, "e1e2", "design:1=fW", "e8e7", "end")
    play(g, "buy:fW", "end", "e7e8", "end")            # a purchase starts the count again
    assert g.fen().split()[4] == "1"
    play(g, "W@d1", "end", "e8e7", "end")              # so does a transfer
    assert g.fen().split()[4] == "1"
    play(g, "d1d2", "end")                              # the forward-only piece moves: a reset
    assert g.fen().split()[4] == "0"
    play(g, "e7e8", "end", "e2e1", "end")               # king steps count again
    assert g.fen().split()[4] == "2"
