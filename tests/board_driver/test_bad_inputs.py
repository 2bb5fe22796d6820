"""Runaway and wrong inputs on the command line: each is one line saying what is wrong (exit
code 2, the usage-error code), nothing is created, and memory stays flat."""

import os
import subprocess
import sys
import time

import chess
import pytest

from board_driver.cli import main
from board_driver.config import load_variant
from board_driver.host.lifecycle import LifecycleError, playable_start
from board_driver.opponents.players import PlayerError, parse_spec
from engine.game import new_game, start_problem

CLI = [sys.executable, "-m", "board_driver.cli"]
LONG_HOST = "a" * 300

BAD = [
    (["roll", "--schedule", "1000000000"], "from 0 to 10000"),
    (["roll", "--schedule", "-1"], "from 0 to 10000"),
    (["recorder", "--broker", LONG_HOST], "not a host name: 300 characters"),
    (["recorder", "--broker", "b" * 70 + ".local:1883"], "a label of 70 characters"),
    (["recorder", "--broker", "club..local"], "an empty label"),
    (["play", "--black", "fsf:-21", "--events", "-"], "skill levels are -20 to 20"),
    (["play", "--black", "builtin:0", "--events", "-"], "builtin levels are 1 to 20"),
    (["play", "--white", "remote:", "--events", "-"], "remote: needs the other board's name"),
    (["serve", "--board", "sim", "--black", "remote:"], "remote: needs the other board's name"),
    (["play", "--move-time", "1e308", "--events", "-"], "seconds a move must be 0.01 to 3600"),
    (["play", "--move-time", "nan", "--events", "-"], "seconds a move must be 0.01 to 3600"),
    (["play", "--move-time", "0", "--events", "-"], "seconds a move must be 0.01 to 3600"),
    (["serve", "--board", "sim", "--move-time", "inf"], "seconds a move must be 0.01 to 3600"),
    (["serve", "--board", "sim", "--clock", ""], "time control '': say 300, 300+3"),
    (["match", "--white", "random", "--black", "random", "--clock", ""], "time control ''"),
    (["play", "--fen", "kkkkkkkk/8/8/8/8/8/8/KKKKKKKK w - - 0 1", "--events", "-"],
     "White has 8 kings; orthodox gives each side one"),
    (["play", "--fen", "P3k3/8/8/8/8/8/8/4K3 w - - 0 1", "--events", "-"],
     "a white pawn on a8: pawns promote on rank 8"),
    (["serve", "--board", "sim", "--bogus"], "unrecognized arguments: --bogus"),
    (["replay", "--variant", "orthodox", "--fen", "4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1"],
     "Black's king on e8 is in check with White to move"),
    (["play", "--board", "/dev/zero", "--events", "-"], "/dev/zero: a device, not a YAML file"),
    (["serve", "--board", "/dev/zero"], "/dev/zero: a device, not a YAML file"),
]


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRYBOARD_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("FAIRYBOARD_BOARD", raising=False)
    monkeypatch.setattr(sys, "stdin", open(os.devnull))
    return tmp_path / "data"


@pytest.mark.parametrize("argv,says", BAD, ids=[" ".join(a)[:60] for a, _ in BAD])
def test_a_bad_input_is_one_line_and_changes_nothing(argv, says, data, capsys):
    code = main(argv)                   # a usage error too is a return code, not an exception
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (out, err)
    assert len(lines) == 1 and "Traceback" not in err, err
    assert says in lines[0], lines[0]
    assert LONG_HOST not in lines[0]    # a runaway value is not echoed whole
    assert not (data / "games").exists() or not list((data / "games").iterdir())


def test_in_range_values_are_taken():
    assert parse_spec("fsf:-5").level == -5            # Fairy-Stockfish's Skill Level runs -20..20
    assert parse_spec("fsf:20").level == 20
    from board_driver.club.broker import host_problem, parse_address
    assert parse_address("club.local") == ("club.local", 1883)
    assert parse_address("[::1]:8883") == ("::1", 8883)
    assert parse_address("b\u00fccher.example") == ("b\u00fccher.example", 1883)     # an IDNA name
    assert host_problem("x" * 63 + ".local") is None and host_problem("x" * 64 + ".local") is not None
    assert host_problem(".".join(["a" * 63] * 4)[:253]) is None


# FENs judged by python-chess's Board.status() as the reference for orthodox chess: the kinds of
# trouble start_problem checks (kings, pawns on the back ranks, the side not to move in check).
CHECKED = chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING | chess.STATUS_TOO_MANY_KINGS | \
    chess.STATUS_PAWNS_ON_BACKRANK | chess.STATUS_OPPOSITE_CHECK
FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "kkkkkkkk/8/8/8/8/8/8/KKKKKKKK w - - 0 1",
    "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/3KK3 w - - 0 1",
    "4kk2/8/8/8/8/8/8/4K3 b - - 0 1",
    "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K2p b - - 0 1",
    "4k3/p7/8/8/8/8/8/P3K3 w - - 0 1",
    "p3k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1",
    "4k3/4Q3/8/8/8/8/8/4K3 b - - 0 1",
    "4k3/8/8/8/8/8/4q3/4K3 b - - 0 1",
    "4k3/8/8/8/8/8/8/8 w - - 0 1",
    "8/8/8/8/8/8/8/4K3 b - - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
]


@pytest.mark.parametrize("fen", FENS)
def test_orthodox_start_problems_agree_with_python_chess(fen):
    game = new_game(load_variant("orthodox"), fen)
    reference = chess.Board(fen).status() & CHECKED
    ours = start_problem(game)
    assert (ours is None) == (reference == chess.STATUS_VALID), (fen, ours, chess.Status(reference))
    if ours is not None:
        with pytest.raises(LifecycleError, match="no game can start there: no game of orthodox reaches"):
            playable_start(load_variant("orthodox"), fen)


def test_each_family_keeps_its_own_royal_rule():
    # csipgs: several royal pieces (royal_rule last) are the game's own business
    csipgs = new_game(load_variant("csipgs"))
    king = csipgs.variant.piece_index("k")
    empty = [sq for sq in range(csipgs.variant.geometry.size) if csipgs.position.piece_at(sq) is None]
    for sq in empty[:3]:
        csipgs.position.put_piece(sq, king, 0)
    assert len(csipgs.position.royal_squares(0)) == 4 and start_problem(csipgs) is None
    # 12x8: the king counts and the pawn ranks of Tomorrow's Chess
    t3 = load_variant("tomorrow-3")
    assert start_problem(new_game(t3)) is None
    assert "White has 2 kings" in start_problem(new_game(t3, "5k6/12/12/12/12/12/12/4KK6 w - - 0 1"))
    assert "promote on rank 8" in start_problem(new_game(t3, "P4k6/12/12/12/12/12/12/5K6 w - - 0 1"))
    # Chego has neither royal pieces nor promotions
    assert start_problem(new_game(load_variant("chego"))) is None


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@pytest.mark.skipif(not os.path.exists("/proc/self/status") or not os.path.exists("/dev/zero"),
                    reason="reads VmRSS from /proc and needs /dev/zero")
@pytest.mark.parametrize("argv", [["selftest", "--board", "/dev/zero"], ["play", "--board", "/dev/zero"]])
def test_dev_zero_as_a_board_keeps_memory_flat(tmp_path, argv):
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    p = subprocess.Popen(CLI + argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    peak = 0.0
    deadline = time.monotonic() + 60
    try:
        while p.poll() is None and time.monotonic() < deadline:
            peak = max(peak, _rss_mb(p.pid))
            assert peak < 200, f"{argv}: {peak:.0f} MB and growing"
            try:
                p.wait(0.02)            # ends at once when the process does; else the next sample
            except subprocess.TimeoutExpired:
                pass
    finally:
        if p.poll() is None:
            p.kill()
        out, err = p.communicate(timeout=30)
    print(f"{' '.join(argv)}: peak RSS {peak:.1f} MB")
    assert p.returncode in (1, 2), (out, err)      # selftest reports a config problem (1), play an error (2)
    said = (err + out).strip().splitlines()
    assert any("/dev/zero: a device, not a YAML file" in ln for ln in said), said
    assert "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_that_is_no_serial_port_is_named_so():
    import serial

    from firmware_bridge.link import open_serial
    with pytest.raises(serial.SerialException, match="not a serial port"):
        open_serial("/dev/zero")
