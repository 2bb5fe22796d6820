"""The game host: one owner of a game's life, whatever the front end (host/game_host.py).

The restart and the simulated board under ``serve`` are checked through the real CLI, as a
player meets them; the host's decisions (what a resume restores, what a new game checks) are
checked on the host itself, on the simulated board in virtual time.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path

import chess.pgn
import pytest
from webtools import Server, start_serve, until

from board_driver.errors import BoardDriverError
from board_driver.host.game_host import GameHost, GameRequest, SimSeat
from board_driver.journal import GameStore, load_any
from board_driver.referee.commands import NewGame
from board_driver.settings import load_profile, load_settings
from board_driver.sim.board import VirtualClock

CLI = [sys.executable, "-m", "board_driver.cli"]


def records(store_root: Path, gid: str) -> list[dict]:
    return [json.loads(line) for line in (store_root / "games" / f"{gid}.jsonl").read_text().splitlines() if line]


def host_of(root: Path, said: list[str] | None = None) -> GameHost:
    store = GameStore(root)
    clock = VirtualClock(0)
    out = said if said is not None else []
    return GameHost(store, settings=load_settings(), profile=load_profile("sim"), seat=SimSeat(store, clock),
                    clock=clock, say=out.append, note=out.append)


# -- the host's decisions ------------------------------------------------------------------------

def test_a_resume_keeps_the_players_and_the_move_time_the_game_started_with(tmp_path):
    host = host_of(tmp_path)
    s = host.open(GameRequest(new=True, white="Ann", black="random", move_time=0.25))
    gid = s.game_id
    host.close()
    again = host_of(tmp_path)
    s2 = again.open(GameRequest())                       # `play` with nothing named
    assert s2.game_id == gid and again.resumed
    assert s2.players == {"white": "Ann", "black": "random"}
    assert again.move_time == 0.25 and s2.computer is not None and s2.computer.plays(1)
    again.close()
    kinds = [r["type"] for r in records(tmp_path, gid)]
    assert "players" not in kinds and "computer" not in kinds     # nothing rewritten on a resume
    head = records(tmp_path, gid)[0]
    assert head["players"] == {"white": "Ann", "black": "random"} and head["computer"] == {"move_time": 0.25}


def test_names_given_again_are_journaled_once_as_a_change(tmp_path):
    host = host_of(tmp_path)
    gid = host.open(GameRequest(new=True, white="Ann", black="Bob")).game_id
    host.close()
    for _ in range(2):
        h = host_of(tmp_path)
        assert h.open(GameRequest(black="Carol")).players == {"white": "Ann", "black": "Carol"}
        h.close()
    changes = [r for r in records(tmp_path, gid) if r["type"] == "players"]
    assert changes == [{"type": "players", "players": {"white": "Ann", "black": "Carol"}}]
    assert load_any(GameStore(tmp_path).path(gid)).header["players"]["black"] == "Carol"


def test_a_bad_new_game_is_an_error_and_the_game_goes_on(tmp_path):
    said: list[str] = []
    host = host_of(tmp_path, said)
    s = host.open(GameRequest(new=True))
    gid = s.game_id
    for req in (NewGame("no-such-variant", reply=Future()), NewGame("orthodox", fen="not a fen", reply=Future()),
                NewGame("orthodox", players={"white": "fsf:99", "black": "Bob"}, reply=Future())):
        assert host.replace(req) is None
        assert host.session is s and s.game_id == gid and GameStore(tmp_path).current() == gid
        assert isinstance(req.reply.exception(timeout=0), (ValueError, BoardDriverError))
        assert said[-1].startswith("error: ")
    assert load_any(GameStore(tmp_path).path(gid)).result is None          # not abandoned
    host.close()


def test_a_new_game_from_a_position_is_set_up_on_the_simulated_board(tmp_path):
    host = host_of(tmp_path)
    old = host.open(GameRequest(new=True, white="Ann", black="Bob")).game_id
    req = NewGame("orthodox", fen="4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", reply=Future())
    new = host.replace(req)
    assert new is not None and new.game_id != old
    assert req.reply.result(timeout=0) == {"new_game": "orthodox", "variant": "orthodox", "game": new.game_id}
    assert new.game.fen().startswith("4k3/8/8/3p4/4P3/8/8/4K3 w")
    assert new.players == {"white": "Ann", "black": "Bob"}                 # the same players
    board = host.seat.board
    assert board.occupied("e4") and board.occupied("d5")
    assert not board.occupied("e2") and new.pending() is None              # the board is the position
    assert load_any(GameStore(tmp_path).path(old)).reason == "abandoned"
    host.close()


def test_a_clock_asked_at_a_resume_is_said_to_wait_for_the_next_new_game(tmp_path):
    host = host_of(tmp_path)
    gid = host.open(GameRequest(new=True, clock="60+1")).game_id
    host.close()
    said: list[str] = []
    again = host_of(tmp_path, said)
    s = again.open(GameRequest(clock="300"))
    assert s.game_id == gid and s.clock is not None and s.clock.tc.text == "60+1"     # the game's own
    assert any(line.startswith("--clock 300: game ") and "keeps its own time control (60+1)" in line
               and "gets 300" in line for line in said), said
    req = NewGame("orthodox", reply=Future())
    new = again.replace(req)
    assert new is not None and new.clock is not None and new.clock.tc.text == "300"
    req = NewGame("orthodox", reply=Future())                      # and the one after keeps it
    newer = again.replace(req)
    assert newer is not None and newer.clock is not None and newer.clock.tc.text == "300"
    again.close()


# -- through the real CLI ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_restart_keeps_the_players_and_the_computer(tmp_path):
    """The issue's repro: `play --new --white Ann --black computer --web`, e2-e4, stop, `play
    --web` again: the record still says Ann against the computer, and the computer moves."""
    data = tmp_path / "data"
    s = Server(data, "--new", "--white", "Ann", "--black", "random", "--move-time", "0.1")
    try:
        s.move("e2", "e4")
        st = until(lambda: (x := s.wait_state())["computer"] and x, what="the computer's move shown")
        a, b = st["computer"]["move"][:2], st["computer"]["move"][2:4]
        s.move(a, b, capture=b in st["pieces"])
        gid = until(lambda: (x := s.wait_state())["moves"] == ["e2e4", a + b] and x["game"], what="its move made")
    finally:
        s.stop()
    s = Server(data)                                        # restarted: nothing named
    try:
        st = s.wait_state()
        assert st["game"] == gid and st["players"] == {"white": "Ann", "black": "random"}
        s.move("d2", "d4")
        st = until(lambda: (x := s.wait_state())["computer"] and x, what="the computer moving after the restart")
        assert st["computer"]["move"]
    finally:
        s.stop()
    kinds = [r["type"] for r in records(data, gid)]
    assert "players" not in kinds
    pgn = subprocess.run(CLI + ["games", "export", gid], capture_output=True, text=True,
                         env={**os.environ, "FAIRYBOARD_DATA": str(data)}, check=True).stdout
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game.headers["White"] == "Ann" and game.headers["Black"] == "fairyboard random"   # the PGN names the engine


@pytest.mark.slow
def test_serve_on_the_simulated_board_plays_an_events_script(tmp_path):
    events = tmp_path / "game.jsonl"
    events.write_text("\n".join(json.dumps(e) for e in (
        {"t": 300, "lift": "e2"}, {"t": 500, "place": "e4"},
        {"t": 1200, "lift": "e7"}, {"t": 1400, "place": "e5"},
        {"t": 2100, "lift": "g1"}, {"t": 2300, "place": "f3"})) + "\n")
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    proc, s, out = start_serve(["--board", "sim", "--web", "127.0.0.1:0", "--new", "--events", str(events)], env)
    try:
        st = until(lambda: (x := s.wait_state())["moves"] == ["e2e4", "e7e5", "g1f3"] and x,
                    what="the script's three moves")
        assert st["sim"] is True and st["pending"] is None
    finally:
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=20)[0].decode()
    assert proc.returncode == 0, "".join(out) + rest
    assert "White: Nf3" in "".join(out) + rest


def test_serve_refuses_an_events_script_on_a_real_board(tmp_path):
    r = subprocess.run(CLI + ["serve", "--board", "gpio-12x8", "--events", str(tmp_path / "x.jsonl")],
                       capture_output=True, text=True, env=dict(os.environ, FAIRYBOARD_DATA=str(tmp_path)),
                       stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode == 2 and "--events plays on the simulated board only" in r.stderr
