"""A refused action says why, in words, in every family: what the board shows was tried (the
piece, the squares), the rule it breaks, and how to put the board right."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from drivertools import Table

from board_driver.sim.console import status_lines
from board_driver.sim.events import Ev


def _said(t: Table, before: int) -> list[str]:
    return t.session.notices[before:]


def _refused(t: Table, do) -> tuple[str, dict]:
    """Do ``do(t)`` on the board; the notice the session said, and the open mismatch."""
    n = len(t.session.notices)
    do(t)
    t.settle()
    said = [line for line in _said(t, n) if line.startswith("Not allowed: ")]
    assert said, _said(t, n)
    p = t.pending
    assert p is not None and p["type"] == "mismatch", p
    return said[-1], p


def test_a_tiger_moved_like_a_rook_is_refused_by_its_moves_from_the_command_line(tmp_path):
    """The report: tomorrow-3 b1-b3 (a Tiger) said only how to fix the board."""
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    env.pop("XDG_DATA_HOME", None)
    script = tmp_path / "tiger.jsonl"
    script.write_text("".join(e.line() + "\n" for e in (Ev(1000, "lift", "b1"), Ev(1400, "place", "b3"))))
    cli = [sys.executable, "-m", "board_driver.cli", "play", "--variant", "tomorrow-3", "--events", str(script)]
    out = json.loads(subprocess.run(cli + ["--json"], capture_output=True, text=True, env=env, timeout=120,
                                    check=True).stdout)
    why = "the white tiger on b1 cannot go to b3: a tiger moves as a bishop and captures as a knight (Betza mBcN)"
    assert out["pending"]["why"] == why
    assert out["pending"]["text"] == "move the piece on b3 to b1 (white tiger)"
    shown = subprocess.run(cli + ["--color", "never"], capture_output=True, text=True, env=env, timeout=120,
                           check=True).stdout
    assert f"Not allowed: {why}. The board does not match: move the piece on b3 to b1 (white tiger)." in shown
    assert f"Not allowed: {why}.\nFix the board: move the piece on b3 to b1 (white tiger)" in shown


def test_a_pawn_that_moved_this_turn_capturing_again_is_refused_not_left_in_the_hand():
    """The report: Cost Progressive c7-c6, then c6xb5 in the same turn read as a piece in the
    hand ('In hand: c6 -> b5c6, c7c6')."""
    t = Table("cost-progressive")
    for frm, to in (("e2", "e4"), ("a7", "a6"), ("a2", "a3")):
        t.move(frm, to).settle()
    t.say("end")
    t.move("h7", "h6").settle()
    t.say("end")
    t.move("f1", "b5").settle()
    t.move("c7", "c6").settle()
    assert t.moves[-1] == "c7c6" and t.session.game.turn == 1          # Black has 2 points left
    said, p = _refused(t, lambda t: t.lift("b5", "c6").place("b5"))    # c6xb5, the bishop off the board
    assert said == ("Not allowed: the black pawn on c6 cannot go to b5: it has moved this turn already "
                    "(a piece moves at most once a turn). The board does not match: move the piece on b5 to c6 "
                    "(black pawn); then put the white bishop back on b5.")
    assert p["moves"] == [["b5", "c6"]] and p["back"] == ["b5"]
    lines = status_lines(t.session)
    assert not any(line.startswith("In hand") for line in lines), lines
    assert "Not allowed: the black pawn on c6 cannot go to b5: it has moved this turn already " \
           "(a piece moves at most once a turn)." in lines
    assert t.led("b5") == "clear" and t.led("c6") == "fill"
    # put right as the text says: the pawn back, the bishop back -- and the turn goes on
    t.lift("b5").place("c6").place("b5").settle()
    assert t.pending is None and t.moves[-1] == "c7c6"
    t.move("d7", "d6").settle()
    assert t.moves[-2:] == ["c7c6", "d7d6"]


def test_a_move_the_turn_cannot_pay_for_names_the_piece_and_its_cost():
    said, p = _refused(Table("cost-progressive"), lambda t: t.move("g1", "f3"))
    assert said.startswith("Not allowed: the white knight on g1 cannot go to f3: a knight move costs 3 movement "
                           "points; 1 is left this turn. The board does not match: move the piece on f3 to g1")


@pytest.mark.parametrize("variant, fen, do, why", [
    ("orthodox", "4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1", lambda t: t.move("d2", "f3"),
     "the white knight on d2 cannot go to f3: it would leave the white king on e1 in check "
     "(the black bishop on b4 attacks it)"),
    ("orthodox", None, lambda t: t.move("e7", "e5"),
     "the black pawn on e7 cannot move now: it is White's turn"),
    ("orthodox", "4k3/8/8/8/8/8/5r2/R3K2R w KQ - 0 1", lambda t: t.move("e1", "g1").move("h1", "f1"),
     "the white king on e1 cannot castle to g1: the king may not pass over f1, which is attacked"),
    ("orthodox", "4k3/8/8/8/8/8/8/R2rK2R w KQ - 0 1", lambda t: t.move("e1", "g1"),
     "the white king on e1 cannot castle to g1: no castling out of check"),
    ("courier", None, lambda t: t.move("a1", "a4"),
     "the white rook on a1 cannot go to a4: the way is blocked on a2"),
    ("tomorrow-1", None, lambda t: t.move("c2", "d3"),
     "the white pawn on c2 cannot go to d3: that way it only captures, and d3 is empty; a pawn moves one square "
     "forward or two squares forward from its first rank (not over a piece) and captures one square diagonally "
     "forward (Betza fmWfcFifmnD)"),
    ("random-1-1-1", None, lambda t: t.lift("a1"),
     "the white rook on a1 has no legal move: a rook moves and captures along ranks and files (Betza R)"),
    ("csipgs", None, lambda t: t.place("d4"),
     "a piece set down on d4: White has no piece in reserve (buy one first: White has 1 zorkmid)"),
    ("csipgs", "4k3/8/8/8/8/8/8/4K3[NN] w - - 0 1", lambda t: t.place("d4"),
     "a piece set down on d4: a reserve piece goes next to a royal piece of its side (e1), and d4 is not"),
    ("csipgs", None, lambda t: t.move("e1", "e3"),
     "the white royal-WF piece on e1 cannot go to e3: a royal-WF piece moves and captures as a king (Betza WF)"),
    ("chego", "8/8/8/8/3K4/8/8/8[Qk] b - - 0 1", lambda t: t.place("d5"),
     "d5 is not neutral (attacked by 1 white and 0 black pieces)"),
    ("chego", "8/8/8/8/3K4/8/8/8[Qk] b - - 0 1", lambda t: t.move("d4", "e4"),
     "the white king on d4 cannot go to e4: in Chego pieces are dropped from the hand, never moved"),
])
def test_every_family_says_why_it_refuses_an_action(variant, fen, do, why):
    said, p = _refused(Table(variant, fen=fen), do)
    assert p["why"] == why
    assert said.startswith(f"Not allowed: {why}. The board does not match: ")


def test_a_legal_position_of_the_hand_is_not_refused():
    """A piece in the hand that may still go somewhere is a move under way, not a refusal."""
    t = Table("orthodox")
    n = len(t.session.notices)
    t.lift("g1").settle()
    assert t.pending["type"] == "move"
    assert not any("Not allowed" in line for line in _said(t, n))
    t.place("f3").settle()
    assert t.moves == ["g1f3"]
