"""A board without hardware plays a board owner: ``play --web`` on the simulated board (the
moves made on the page's board, /api/sim) with ``--white remote:b1`` against a side process
(tests/remote/side.py, the game host as serve runs it), over a real mosquitto."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from clubtools import MOSQUITTO
from test_remote_games import broker, plies_of, side, wait_for  # noqa: F401  (broker: the fixture)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "board_driver"))
from webtools import Server  # noqa: E402

from board_driver.journal import load_any  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(MOSQUITTO is None, reason="needs mosquitto")]

MATE = "e2e4 e7e5 f1c4 b8c6 d1h5 g8f6 h5f7".split()        # the scholar's mate: White (b1) wins


def test_a_simulated_board_on_the_page_plays_a_serve_side(tmp_path, broker):
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(MATE[0::2]))
    profile = tmp_path / "page-board.yaml"
    sim = (Path(__file__).resolve().parents[2] / "configs" / "boards" / "sim.yaml").read_text()
    profile.write_text(sim + f"broker:\n  host: 127.0.0.1\n  port: {broker.port}\n  name: b2\n"
                             f"  password: pw-b2\n  keepalive: 3\n")
    page = Server(tmp_path / "b2", "--board", str(profile), "--white", "remote:b1")
    try:
        for ply, mv in enumerate(MATE):
            a, b = mv[:2], mv[2:]
            if ply % 2 == 0:        # b1's move: carried out on the page's board once it is shown
                wait_for(lambda: plies_of(tmp_path, "b1") > ply, 15, f"b1's move {mv}")
                time.sleep(0.2)
            else:
                wait_for(lambda: len(page.wait_state()["moves"]) == ply, 15, f"the page's turn at {ply}")
            t0 = time.monotonic()
            page.move(a, b, capture=b in ("f7",))
            wait_for(lambda: len(page.wait_state()["moves"]) == ply + 1, 10, f"{mv} committed on the page")
            assert time.monotonic() - t0 < 2.0, "the page waited for the remote player's polling"
        st = page.wait_state()
        assert st["moves"] == MATE and st["result"] == "1-0", st
        b1.wait(15)
    finally:
        said = page.stop()
        if b1.poll() is None:
            b1.kill()
    gid = st["game"]
    h1 = load_any(tmp_path / "b1" / "games" / f"{gid}.jsonl")
    h2 = load_any(tmp_path / "b2" / "games" / f"{gid}.jsonl")
    assert [str(x) for x in h1.actions] == [str(x) for x in h2.actions] == MATE
    assert h2.header["remote"] == {"peer": "b1", "side": "white", "me": "b2"}
    assert "Accepted b1's game" in said


def test_the_terminal_play_sends_a_remote_player_to_play_web(tmp_path):
    import os
    import subprocess
    r = subprocess.run([sys.executable, "-m", "board_driver.cli", "play", "--white", "remote:b1", "--yes"],
                       capture_output=True, text=True, env={**os.environ, "FAIRYBOARD_DATA": str(tmp_path)},
                       stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode != 0 and "use play --web or serve" in r.stderr, (r.stdout, r.stderr)
    assert not (tmp_path / "games").exists() or not list((tmp_path / "games").glob("*.jsonl"))
