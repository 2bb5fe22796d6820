"""What a player reads on the simulated board's console: the version, squares off the board, a
purchase that names no design, the letters of a 12x8 army, and the dice of a random variant."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from engine import random_variant

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fb(fb, data):
    """The shared in-process CLI (conftest.py), on a data folder of the test's own."""
    return fb


def test_version():
    want = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    r = subprocess.run([sys.executable, "-m", "board_driver.cli", "--version"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"fairyboard {want}"


def test_a_square_off_the_board_is_named_not_an_unknown_command(fb):
    code, out, _ = fb("play", "--color", "never", stdin="lift z1\nplace z1\ne2-z9\ne2-e9\nlift k1\nlift e\nquit\n")
    assert code == 0 and "unknown command" not in out
    assert out.count("error: z1 is not on the board (files a-h, ranks 1-8)") == 2
    assert "error: z9 is not on the board" in out and "error: e9 is not on the board" in out
    assert "error: k1 is not on the board" in out
    assert "error: 'e' is not a square: write lift e2" in out
    code, out, _ = fb("play", "--color", "never", "--variant", "tomorrow-1", "--yes", stdin="lift k1\nlift m1\nquit\n")
    assert "error: m1 is not on the board (files a-l, ranks 1-8)" in out and "k1 is not" not in out


def test_buy_names_a_design_slot_or_betza_text(fb):
    code, out, _ = fb("play", "--color", "never", "--variant", "csipgs", stdin="buy p\nbuy 9\nquit\n")
    err = next(line for line in out.splitlines() if "'buy p'" in line)
    assert "a purchase names a design slot (a number) or a design's Betza text" in err
    assert "'p' is the letter of fcFfmW: buy 3 or buy fcFfmW" in err
    assert "1) B, 2) BR, 3) fcFfmW" in err
    assert "there is no design 9" in out


def test_a_12x8_board_shows_its_piece_letters(fb):
    code, out, _ = fb("play", "--color", "never", "--variant", "tomorrow-1", stdin="quit\n")
    assert "Pieces: R rook, G giraffe, L camel, N knight, B bishop, Q queen, K king, P pawn" in out
    code, out, _ = fb("play", "--color", "always", "--variant", "tomorrow-3", "--yes", stdin="quit\n")
    assert "Pieces: R rook, T tiger, O cannon, M man" in out
    code, out, _ = fb("play", "--color", "never", "--variant", "orthodox", "--yes", stdin="quit\n")
    assert "Pieces:" not in out


def test_a_random_variant_says_which_array_the_dice_chose_and_why(fb):
    code, out, _ = fb("play", "--color", "never", "--variant", "random", stdin="quit\n")
    name = re.search(r"New game \S+: (random-(\d)-(\d)-(\d))\.", out)
    dice = "-".join(name.groups()[1:])
    rv = random_variant.select(dice)
    assert f"The dice: {dice}. They select Tomorrow's Chess {rv.base}'s array, by the rule: {rv.description}." in out
    assert "Back rank (file a to l): " + ", ".join(n.replace("-", " ").title() for n in rv.back_rank) in out
    code, out, _ = fb("play", "--color", "never", stdin="quit\n")               # resumed: said again
    assert "Resumed game" in out and f"The dice: {dice}." in out
