"""csipgs chess: the cost of a design, against the figures of csipgs-chess.txt and by hand.

Every expected figure below is worked out from the overview's table (atoms x modifiers,
colourbound 0.9, royal 4) in the comment next to it, not taken from the code.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction as F

import pytest
import yaml

from board_driver.config import configs_dir, read_yaml
from engine.csipgs import CsipgsGame
from engine.csipgs_cost import (
    DesignError,
    PriceList,
    colourbound,
    cost_of,
    decimal,
    direction_multiplier,
    parse_design,
    round_up,
)
from engine.errors import BetzaError, VariantError
from engine.variant import Variant


def exact(design, prices=None):
    return cost_of(design, prices).exact


def price(design, prices=None):
    return cost_of(design, prices).price


# -- the figures of the text ----------------------------------------------------------------------
@pytest.mark.parametrize("design, value, paid", [
    ("B", "2.97", 3),           # 3.3 x 0.9 (colourbound) = 2.97 -> 3
    ("BR", "8.3", 9),           # 3.3 + 5, not colourbound -> 9
    ("fcFfmW", "1.08", 2),      # 1.5 x 0.7 x 0.6 + 1.5 x 0.5 x 0.6 = 0.63 + 0.45
    ("N", "3", 3),
    ("R", "5", 5),
    ("royal-WF", "12", 12),     # (1.5 + 1.5) x 4
])
def test_the_initial_designs_cost_what_the_overview_says(design, value, paid):
    c = cost_of(design)
    assert c.exact == F(value)
    assert c.price == paid


def test_wazir_plus_capture_only_chinese_knight_at_2_4_costs_2_94():
    prices = PriceList().with_atom("nN", F("2.4"), "oblique")
    c = cost_of("WcnN", prices)
    assert c.exact == F("2.94")          # 1.5 + 0.6 x 2.4
    assert c.price == 3


def test_running_dabbaba_plus_bishop_with_runner_5_costs_9_72_price_10():
    prices = PriceList().with_modifier("runner", F(5))
    c = cost_of("DDB", prices)
    assert c.colourbound                 # D and F steps never change colour
    assert c.exact == F("9.72")          # (5 x 1.5 + 3.3) x 0.9
    assert c.price == 10


def test_dutch_rounding_of_2_32_is_2_4_and_half_rounding_keeps_the_wazir_at_1_5():
    assert round_up(F("2.32"), F(1, 10)) == F("2.4")
    # bRbB: a backward rook (5 x 0.2 = 1) and a backward bishop (3.3 x 0.4 = 1.32)
    dutch = PriceList(step=F(1, 10))
    assert exact("bRbB", dutch) == F("2.32")
    assert price("bRbB", dutch) == F("2.4")
    assert price("W", PriceList(step=F(1, 2))) == F("1.5")
    assert price("W") == 2
    assert price("fcFfmW", PriceList(step=F(1, 2))) == F("1.5")   # 1.08 -> 1.5
    assert price("fcFfmW", dutch) == F("1.1")


# -- hand-checked designs of each atom family -------------------------------------------------------
@pytest.mark.parametrize("design, value", [
    # orthogonal: W = D = H = 1.5, R = 5; f = s = 0.5, b = 0.2, m = c = 0.6
    ("W", "1.5"),
    ("D", "1.35"),         # 1.5 x 0.9: the dabbaba never changes colour
    ("H", "1.5"),          # (3,0) changes colour
    ("fW", "0.75"),        # 1.5 x 0.5
    ("bW", "0.3"),         # 1.5 x 0.2
    ("sW", "0.75"),        # 1.5 x 0.5
    ("lW", "0.375"),       # one of the two sideways steps: 1.5 x 0.25
    ("vW", "1.05"),        # f + b = 0.7
    ("fsW", "1.5"),        # f + s = 1.0, the whole wazir's price
    ("mR", "3"),           # 5 x 0.6
    ("fR", "2.5"),         # 5 x 0.5
    ("bR", "1"),           # 5 x 0.2
    ("fmW", "0.45"),       # 1.5 x 0.5 x 0.6
    ("WD", "3"),           # 1.5 + 1.5, not colourbound (W changes colour)
    # diagonal: F = A = G = 1.5, B = 3.3; f = 0.7, b = 0.4, m = c = 0.6; every F piece is colourbound
    ("F", "1.35"),         # 1.5 x 0.9
    ("A", "1.35"),
    ("G", "1.35"),
    ("fF", "0.945"),       # 1.5 x 0.7 x 0.9
    ("bF", "0.54"),        # 1.5 x 0.4 x 0.9
    ("frF", "0.4725"),     # one forward diagonal: 1.5 x 0.35 x 0.9
    ("cB", "1.782"),       # 3.3 x 0.6 x 0.9
    ("fB", "2.079"),       # 3.3 x 0.7 x 0.9
    ("FA", "2.7"),         # (1.5 + 1.5) x 0.9
    # knightwise: N = 3, L = 3.3, NN = 5.5; f = 0.7, b = 0.4, m = c = 0.6, wide = narrow = 0.5
    ("L", "2.97"),         # the camel (3,1) never changes colour: 3.3 x 0.9
    ("C", "2.97"),         # C is the camel too
    ("NN", "5.5"),
    ("fN", "2.1"),         # 3 x 0.7
    ("bN", "1.2"),         # 3 x 0.4
    ("sN", "1.5"),         # wide: 3 x 0.5
    ("vN", "1.5"),         # narrow: 3 x 0.5
    ("ffN", "1.05"),       # forward and narrow: 3 x 0.7 x 0.5
    ("fsN", "1.05"),       # forward and wide
    ("bbN", "0.6"),        # backward and narrow: 3 x 0.4 x 0.5
    ("fmN", "1.26"),       # 3 x 0.7 x 0.6
    ("cNN", "3.3"),        # 5.5 x 0.6
    # whole-piece modifiers and shorthands
    ("royal-N", "12"),     # 3 x 4
    ("royal-F", "5.4"),    # 1.5 x 0.9 x 4
    ("K", "3"),            # K is WF
    ("Q", "8.3"),          # Q is RB
    ("mHfRbmN", "4.12"),   # 0.9 + 2.5 + 0.72
    ("bNbR", "2.2"),       # 1.2 + 1
])
def test_hand_checked_designs(design, value):
    assert exact(design) == F(value)


def test_a_design_is_priced_by_its_moves_not_its_spelling():
    assert exact("mWcW") == exact("W")           # moves and captures in every direction
    assert exact("WR") == exact("R") == 5        # the rook already makes the wazir's steps
    assert exact("ffbbN") == exact("vN")         # the four narrow leaps, written two ways
    assert exact("fsbW") == exact("W")
    assert exact("RB") == exact("BR") == exact("Q")
    assert exact("royal-K") == 12


def test_direction_multipliers_never_exceed_the_whole_atom():
    m, _ = direction_multiplier("orth", frozenset("fbl"))    # 0.5 + 0.2 + 0.25
    assert m == F("0.95")
    m, _ = direction_multiplier("diag", frozenset({"fl", "fr", "bl"}))   # 0.7 + 0.2
    assert m == F("0.9")
    m, _ = direction_multiplier("orth", frozenset("fblr"))
    assert m == 1


def test_colourbound_is_detected_from_the_moves():
    assert colourbound("B") and colourbound("FA") and colourbound("D") and colourbound("L")
    assert not colourbound("BR") and not colourbound("N") and not colourbound("fcFfmW")
    assert not colourbound("F>R")          # a bent rider: F then W steps change colour
    assert exact("BD") == F("4.32")        # (3.3 + 1.5) x 0.9: both stay on one colour


def test_unofficial_modifiers_need_a_variant_that_enables_them():
    with pytest.raises(DesignError, match="relay"):
        cost_of("relay-N")
    with pytest.raises(DesignError, match="doublemove"):
        cost_of("doublemove-W")
    both = PriceList(unofficial=frozenset({"relay", "doublemove"}))
    assert exact("relay-N", both) == 6                 # 3 x 2
    assert exact("doublemove-W", both) == 9            # 1.5 x 6
    assert exact("royal-doublemove-WF", both) == 72    # 3 x 4 x 6
    assert parse_design("doublemove-royal-WF").text == "royal-doublemove-WF"


def test_invented_modifiers_multiply_the_atom_they_modify():
    lame = PriceList().with_modifier("lame", F("0.8"))
    assert exact("nN", lame) == F("2.4")               # 3 x 0.8
    assert exact("WcnN", lame) == F("2.94")            # the same piece as the invented atom
    hopper = PriceList().with_modifier("hopper", F("0.5"))
    assert exact("mRcpR", hopper) == F("4.5")          # 5 x 0.6 + 5 x 0.5 x 0.6
    invented = PriceList().with_atom("nN", F("2.4"), "oblique").with_modifier("lame", F(9))
    assert exact("nN", invented) == F("2.4")           # an invented atom beats a modifier
    runner = PriceList().with_modifier("runner", F(5))
    assert exact("R", runner) == 5 and exact("NN", runner) == F("5.5")   # the table's riders stay


@pytest.mark.parametrize("design, part", [
    ("WZ", "'Z'"),               # the zebra has no price
    ("N(1,4)", "'(1,4)'"),       # nor the giraffe
    ("R3", "'R3'"),              # nor a rook limited to three steps
    ("pR", "'pR'"),              # nor a hopper
    ("WcnN", "'cnN'"),           # nor the Chinese Knight, until it is invented
    ("DD", "'DD'"),              # nor a running dabbaba, until the runner is invented
])
def test_an_atom_without_a_price_is_named(design, part):
    with pytest.raises(DesignError) as err:
        cost_of(design)
    assert part in str(err.value)


def test_bad_notation_points_at_the_offending_character():
    with pytest.raises(BetzaError) as err:
        cost_of("royal-WxF")
    assert "character 8" in str(err.value)        # the x, counted in the whole design
    with pytest.raises(DesignError, match="'king'"):
        cost_of("king-WF")
    with pytest.raises(DesignError, match="twice"):
        cost_of("royal-royal-WF")


def test_decimal_prints_exact_values():
    assert decimal(F("1.08")) == "1.08"
    assert decimal(F(12)) == "12"
    assert decimal(F(1, 2)) == "0.5"
    assert decimal(F(1, 3)) == "1/3"


# -- the command ------------------------------------------------------------------------------------
def run(*args):
    return subprocess.run([sys.executable, "-m", "board_driver.cli", "cost", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args, last", [
    (["fcFfmW"], "1.08 2"),
    (["B"], "2.97 3"),
    (["BR"], "8.3 9"),
    (["royal-WF"], "12 12"),
    (["fcFfmW", "--rounding", "tenth"], "1.08 1.1"),
    (["bRbB", "--variant", "csipgs-dutch"], "2.32 2.4"),
    (["W", "--variant", "csipgs-balanced-2"], "1.5 1.5"),
    (["WcnN", "--atom", "nN=2.4"], "2.94 3"),
    (["DDB", "--modifier", "runner=5", "--variant", "csipgs-configurable"], "9.72 10"),
    (["doublemove-N", "--variant", "csipgs-drawless"], "18 18"),
])
def test_cost_command_prints_a_breakdown_then_cost_and_price(args, last):
    proc = run(*args)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == last
    assert len(lines) > 2          # the breakdown comes first


def test_cost_command_breakdown_names_each_atom_and_the_modifiers():
    out = run("fcFfmW").stdout
    assert "fcF" in out and "0.63" in out and "fmW" in out and "0.45" in out
    out = run("B").stdout
    assert "colourbound 0.9" in out


@pytest.mark.parametrize("args, named", [
    (["WZ"], "'Z'"),
    (["WxF"], "character 2"),
    (["relay-N"], "relay"),
    (["N", "--variant", "orthodox"], "not a csipgs variant"),
])
def test_cost_command_errors_name_the_bad_part(args, named):
    proc = run(*args)
    assert proc.returncode == 2
    assert named in proc.stderr
    assert proc.stdout == ""


def test_relay_is_priced_where_a_variant_enables_it(tmp_path):
    data = read_yaml(configs_dir() / "variants" / "csipgs.yaml")
    data["name"] = "csipgs-relay"
    data["rules"]["unofficial"] = ["relay"]
    path = tmp_path / "csipgs-relay.yaml"
    path.write_text(yaml.safe_dump(data))
    proc = run("relay-N", "--variant", str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "6 6"        # 3 x 2
    with pytest.raises(VariantError, match="relay"):
        CsipgsGame(Variant.from_dict(data))           # priced, but not played
