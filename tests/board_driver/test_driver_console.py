"""What the console shows a player, from the command registry and the engine's typed view:
the real `fairyboard play` in a subprocess, fed as a player types."""

import os
import subprocess
import sys

import pytest

from board_driver.referee.commands import COMMANDS, button_words, help_lines

CLI = [sys.executable, "-m", "board_driver.cli"]


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["FAIRYBOARD_DATA"] = str(tmp_path / "data")
    e.pop("XDG_DATA_HOME", None)
    return e


def play(env, variant, lines):
    r = subprocess.run(CLI + ["play", "--new", "--variant", variant, "--color", "never"],
                       input="".join(x + "\n" for x in lines), capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_help_lists_every_command_and_what_end_does_here(env):
    out = play(env, "cost-progressive", ["help", "quit"])
    for word in ("choose", "pass", "end", "buy", "design", "invent", "setup", "takeback", "undo", "resign",
                 "new", "help", "board", "moves", "quit"):
        assert f"\n          {word}" in out or f"Commands: {word}" in out or f"| {word}" in out, word
    assert "In cost-progressive:" in out and "ends your turn before its movement points run out" in out
    # every registry entry is in help, and buttons may send the session's commands only
    text = "\n".join(help_lines())
    assert all(c.usage in text for c in COMMANDS)
    assert "quit" not in button_words() and "takeback" in button_words() and "setup" not in button_words()


def test_csipgs_shows_phase_treasuries_and_reserves_in_words(env):
    # White moves (the action phase ends), ends the design phase; Black moves, then buys nothing
    out = play(env, "csipgs", ["e1-d1", "end", "quit"])
    assert "Phase: white's action phase." in out
    assert "Phase: white's design phase." in out
    assert "Phase: black's action phase." in out
    assert "Treasuries: White 1, Black 1 zorkmids." in out
    assert "Reserve of White: nothing." in out and "Reserve of Black: nothing." in out
    assert "{" not in out.split("New game", 1)[1]          # no raw dict any more


def test_chego_shows_both_hands_and_points(env):
    out = play(env, "chego", ["pass", "quit"])
    assert "Hand of White: 1 x king (K), 1 x queen (Q), 2 x rook (R)" in out
    assert "Hand of Black: 1 x king (K)" in out
    assert "Points if the game ended now: White 0, Black 0." in out
    # a refused verb says why, in the rules' words (White must drop first)
    assert "White starts the game by dropping a piece" in out


def test_a_verb_the_game_does_not_have_says_why(env):
    out = play(env, "orthodox", ["end", "buy N", "pass", "quit"])
    assert "end: not possible now in orthodox (only a multi-move turn ends with end)" in out
    assert "buy: not possible now in orthodox (purchases, designs and armies are csipgs rules)" in out
    assert "pass: not possible now in orthodox (passing is not allowed in this game)" in out


def test_json_report_carries_the_typed_view():
    from drivertools import Table
    t = Table("chego")
    t.place("d4").settle()
    t.say("choose n")
    state = t.session.report()["state"]
    assert state["turn"] == "black" and state["passes"] == 0
    assert state["hands"]["white"]["N"] == 1 and state["hands"]["black"]["N"] == 2
    assert state["points"] == {"white": 8, "black": 0}        # the knight's eight empty squares
    c = Table("csipgs")
    c.move("e1", "d1")
    c.say("end")
    cs = c.session.report()["state"]
    assert cs["phase"] == "action" and cs["turn"] == "black"
    assert cs["treasuries"] == {"white": "1", "black": "1"} and cs["reserves"] == {"white": {}, "black": {}}


def test_moves_and_a_takeback_speak_san_with_move_numbers_and_say_what_goes_back(env):
    out = play(env, "orthodox", ["e2-e4", "d7-d5", "e4-d5", "moves", "takeback", "moves"])
    assert "1. e4 d5 2. exd5\n" in out
    assert "Taken back: 2. exd5 (put the black pawn back on d5)." in out
    assert "1. e4 d5\n" in out
    assert "White to play, move 2." in out
