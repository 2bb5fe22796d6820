"""The engine's CLI contracts, run as a real subprocess: variants, perft, roll, replay, fsf."""

from __future__ import annotations

import json
import subprocess
import sys

import chess
import pytest


def run(*args, ok=True):
    proc = subprocess.run([sys.executable, "-m", "board_driver.cli", *args],
                          capture_output=True, text=True, timeout=120)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_variants_lists_every_variant_with_a_description():
    out = run("variants").stdout.splitlines()
    names = {line.split()[0] for line in out}
    assert {"orthodox", "tomorrow-1", "tomorrow-2", "tomorrow-3", "tomorrow-4", "tomorrow-5",
            "tomorrow-4-great", "courier"} <= names
    assert all(len(line.split(None, 1)) == 2 for line in out)


def test_perft_prints_the_count_alone_on_the_last_line():
    assert run("perft", "3").stdout.splitlines()[-1] == "8902"
    # after 1.e4 python-chess counts the same
    b = chess.Board()
    b.push_uci("e2e4")
    want = sum(1 for _ in b.legal_moves)
    assert run("perft", "--moves", "e2e4", "1").stdout.splitlines()[-1] == str(want)


def test_perft_divide_lines_add_up_to_the_total():
    lines = run("perft", "--variant", "tomorrow-1", "--divide", "2").stdout.splitlines()
    pairs = [line.split(": ") for line in lines if ": " in line]
    assert len(pairs) == 36
    assert sum(int(n) for _, n in pairs) == int(lines[-1])
    # every root move of tomorrow-1: 24 pawn moves, knights d1 (c3, e3) and i1 (h3, j3),
    # camels c1 (b4, d4) and j1 (i4, k4), giraffes b1 (a5, c5) and k1 (j5, l5) = 36
    assert {"d1c3", "c1b4", "b1a5", "k1l5"} <= {m for m, _ in pairs}


def test_perft_with_a_fen():
    kiwi = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    assert run("perft", "--fen", kiwi, "2").stdout.splitlines()[-1] == "2039"


def test_roll_with_dice_prints_the_back_rank_last():
    out = run("roll", "--dice", "3-2-1").stdout.splitlines()
    # 1-2-3: "The second variant, as shown"
    assert out[-1] == "Rook, Princess, Camel, Knight, Bishop, Queen, King, Bishop, Knight, Camel, Empress, Rook"
    out = run("roll", "--dice", "1-1-1").stdout.splitlines()
    assert out[-1] == "Rook, Giraffe, Camel, Knight, Bishop, Queen, King, Bishop, Knight, Camel, Giraffe, Rook"
    out = run("roll", "--dice", "4-5-6").stdout.splitlines()
    assert out[-1] == "Rook, Princess, Camel, Knight, Alfil, Fers, King, Alfil, Knight, Camel, Empress, Rook"


def test_roll_throws_valid_dice_and_the_variant_plays():
    out = run("roll", "--seed", "5").stdout.splitlines()
    dice = out[0].split(": ")[1]
    assert len(out[-1].split(", ")) == 12
    assert run("perft", "--variant", f"random-{dice}", "1").stdout.strip().isdigit()


def test_roll_schedule():
    out = run("roll", "--schedule", "8").stdout.splitlines()
    rows = [line.split()[:4] for line in out[1:]]
    # the text's table: A B V = W B 1, B W 1, B W 2, W B 2, W B 3, B W 3, B W 4, W B 4
    assert [r[1:] for r in rows] == [["W", "B", "1"], ["B", "W", "1"], ["B", "W", "2"], ["W", "B", "2"],
                                     ["W", "B", "3"], ["B", "W", "3"], ["B", "W", "4"], ["W", "B", "4"]]


def test_replay_json():
    rep = json.loads(run("replay", "--moves", "f2f3 e7e5 g2g4 d8h4", "--json").stdout)
    assert rep["result"] == "0-1" and rep["reason"] == "checkmate" and rep["in_check"] is True
    assert rep["legal_moves"] == []
    rep = json.loads(run("replay", "--variant", "tomorrow-1", "--moves", "e2e4", "--json").stdout)
    assert rep["result"] is None and rep["fen"].startswith("rglnbqkbnlgr/")
    assert len(rep["legal_moves"]) == 36 and "e7e5" in rep["legal_moves"]
    rep = json.loads(run("replay", "--variant", "tomorrow-1", "--fen", "k11/12/1Q10/12/12/12/12/11K b - - 0 1",
                         "--json").stdout)
    assert (rep["result"], rep["reason"]) == ("3/5-2/5", "stalemate")


def test_bad_input_gets_a_clear_message_and_exit_code_2():
    p = run("perft", "--variant", "nosuch", "1", ok=False)
    assert p.returncode == 2 and "unknown variant 'nosuch'" in p.stderr and "orthodox" in p.stderr
    p = run("replay", "--moves", "e2e4 e2e4", ok=False)
    assert p.returncode == 2 and "'e2e4' is not a legal move" in p.stderr
    p = run("perft", "--fen", "8/8/8 w - - 0 1", "1", ok=False)
    assert p.returncode == 2 and "3 ranks" in p.stderr
    p = run("roll", "--dice", "1-2-9", ok=False)
    assert p.returncode == 2 and "9" in p.stderr
    p = run("perft", "abc", ok=False)
    assert p.returncode == 2 and "depth must be a whole number" in p.stderr
    p = run("fsf", "--variant", "tomorrow-1", ok=False)
    assert p.returncode == 2 and "giraffe" in p.stderr


def test_fsf_section_loads_in_fairy_stockfish():
    import pyffish
    text = run("fsf", "--variant", "tomorrow-3").stdout
    assert text.startswith("[fairyboard-tomorrow-3:chess]")
    pyffish.load_variant_config(text)
    assert len(pyffish.legal_moves("fairyboard-tomorrow-3", pyffish.start_fen("fairyboard-tomorrow-3"), [])) == 29


@pytest.mark.slow
def test_variant_random_throws_the_dice_and_names_the_outcome():
    seen = set()
    for _ in range(4):
        rep = json.loads(run("replay", "--variant", "random", "--json").stdout)
        dice = rep["variant"].split("-")[1:]
        assert rep["variant"].startswith("random-") and len(dice) == 3
        assert all(1 <= int(d) <= 6 for d in dice) and dice == sorted(dice)
        # the position is the start of exactly that dice outcome's array
        same = json.loads(run("replay", "--variant", rep["variant"], "--json").stdout)
        assert same["fen"] == rep["fen"]
        seen.add(rep["variant"])
    assert "random" in run("variants").stdout.split()
