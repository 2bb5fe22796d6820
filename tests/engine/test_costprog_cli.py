"""The command line on Cost Progressive Chess: replay --json reports the turn, perft counts turns."""

import json
import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "board_driver.cli", *args],
                          capture_output=True, text=True, timeout=60)


def replay(moves):
    p = run("replay", "--variant", "cost-progressive", "--moves", moves, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_replay_after_a_turn_that_spent_its_point():
    r = replay("e2e4")
    assert r["turn"] == "black" and r["side_to_move"] == "black"
    assert (r["turn_number"], r["turn_budget"], r["points_left"]) == (1, 1, 1)
    assert r["turn_over"] is True and r["last_turn_ended_by"] == "points"
    assert len(r["legal_moves"]) == 16 and "end" not in r["legal_moves"]


def test_replay_in_the_middle_of_a_turn():
    r = replay("e2e4 e7e5 d2d4")
    assert r["turn"] == "white"
    assert (r["turn_number"], r["turn_budget"], r["points_spent"], r["points_left"]) == (2, 2, 1, 1)
    assert r["turn_over"] is False and r["turn_moves"] == ["d2d4"]
    assert "end" in r["legal_moves"] and "d4d5" not in r["legal_moves"]
    assert r["fen"].split()[1:] == ["w", "KQkq", "-", "0", "2"]


def test_replay_after_end():
    r = replay("e2e4 e7e5 d2d4 end")
    assert (r["turn"], r["turn_number"], r["points_left"], r["turn_over"]) == ("black", 2, 2, True)
    assert r["last_turn_ended_by"] == "end" and r["moves"][-1] == "end"


def test_replay_refuses_a_second_move_of_the_same_piece():
    p = run("replay", "--variant", "cost-progressive", "--moves", "e2e4 e7e5 d2d3 d3d4", "--json")
    assert p.returncode == 2
    assert "'d3d4'" in p.stderr and "already moved this turn" in p.stderr


def test_perft_counts_turns_of_the_first_moves():
    # 16 pawn moves for White's 1 point, then 16 for Black's: 256 (chess has 400).
    p = run("perft", "--variant", "cost-progressive", "2")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "256"
