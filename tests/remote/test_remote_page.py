"""A board without hardware plays a board owner: ``play --web`` on the simulated board (the
moves made on the page's board, /api/sim) with ``--white remote:b1`` against a side process
(tests/remote/side.py, the game host as serve runs it), over a real mosquitto."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from clubtools import MOSQUITTO
from test_remote_games import broker, plies_of, said, side, wait_for  # noqa: F401  (broker: the fixture)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "board_driver"))
from webtools import Server  # noqa: E402

from board_driver.journal import load_any  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(MOSQUITTO is None, reason="needs mosquitto")]

MATE = "e2e4 e7e5 f1c4 b8c6 d1h5 g8f6 h5f7".split()        # the scholar's mate: White (b1) wins


def test_a_simulated_board_on_the_page_plays_a_serve_side(tmp_path, broker):
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(MATE[0::2]))
    said(tmp_path, "b1", "Invited b2")      # b1's invitation stands: the page's board accepts it
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
                if ply == 0:            # the page's legend names the other board, not the computer
                    leds = wait_for(lambda: (x := page.wait_state())["computer"] and x["leds"], 10, "b1's move lit")
                    assert leds[a]["meaning"] == "b1's move: lift this piece", leds
                    assert leds[b]["meaning"] == "b1's move: put the piece here", leds
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
        output = page.stop()
        if b1.poll() is None:
            b1.kill()
    gid = st["game"]
    h1 = load_any(tmp_path / "b1" / "games" / f"{gid}.jsonl")
    h2 = load_any(tmp_path / "b2" / "games" / f"{gid}.jsonl")
    assert [str(x) for x in h1.actions] == [str(x) for x in h2.actions] == MATE
    assert h2.header["remote"] == {"peer": "b1", "side": "white", "me": "b2"}
    assert "Accepted b1's game" in output


def test_the_terminal_play_sends_a_remote_player_to_play_web(tmp_path):
    import os
    import subprocess
    r = subprocess.run([sys.executable, "-m", "board_driver.cli", "play", "--white", "remote:b1", "--yes"],
                       capture_output=True, text=True, env={**os.environ, "FAIRYBOARD_DATA": str(tmp_path)},
                       stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode != 0 and "use play --web or serve" in r.stderr, (r.stdout, r.stderr)
    assert not (tmp_path / "games").exists() or not list((tmp_path / "games").glob("*.jsonl"))


def test_a_draw_offer_is_answered_and_a_request_withdrawn_on_the_page(tmp_path, broker):
    """The page shows what the other board's player asks (Accept / Decline) and what this
    board's player asked (Withdraw); the buttons send accept and decline."""
    pytest.importorskip("selenium.webdriver")
    from test_web_page import CHROMEDRIVER, CHROMIUM, SHOTS, click, open_browser, text_of, wait
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("needs the distribution's chromium and chromedriver")
    commands = tmp_path / "b1.commands"
    # b1 plays White and thinks a long time before its second move: the requests come then
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(MATE[0::2]),
              "--hold-at", "2", "--hold-for", "60", "--commands", str(commands))
    profile = tmp_path / "page-board.yaml"
    sim = (Path(__file__).resolve().parents[2] / "configs" / "boards" / "sim.yaml").read_text()
    profile.write_text(sim + f"broker:\n  host: 127.0.0.1\n  port: {broker.port}\n  name: b2\n"
                             f"  password: pw-b2\n  keepalive: 3\n")
    page = Server(tmp_path / "b2", "--board", str(profile), "--white", "remote:b1")
    d = None
    try:
        token = page.pair()
        wait_for(lambda: plies_of(tmp_path, "b1") >= 1, 15, "b1's first move")
        time.sleep(0.2)
        page.move("e2", "e4")                               # carried out on the page's board
        wait_for(lambda: len(page.wait_state()["moves"]) == 1, 10, "e4 on the page")
        page.move("e7", "e5")
        wait_for(lambda: plies_of(tmp_path, "b1") == 2, 10, "e5 on b1")
        d = open_browser(page.url)
        d.add_cookie({"name": "fairyboard_token", "value": token, "path": "/"})
        d.refresh()
        # this board's player offers a draw (the button a remote game shows), then withdraws it
        wait(d, lambda: text_of(d, "#btn-draw") == "Offer a draw", what="the draw button")
        click(d, "#btn-draw")
        box = "#remote-box .request.asking"
        words = wait(d, lambda: text_of(d, box), what="the offer waiting on the page")
        assert "waiting for b1 to answer" in words, words
        click(d, f"{box} button.req-decline")
        wait(d, lambda: not text_of(d, "#remote-box .request"), what="the offer withdrawn")
        assert page.wait_state()["remote"]["asking"] is None
        # b1's player offers one: the page asks, and Accept ends both games drawn
        commands.write_text("draw\n")
        box = "#remote-box .request[data-what='draw']"
        words = wait(d, lambda: text_of(d, box), what="b1's offer on the page")
        assert "b1 (white) offers a draw" in words, words
        SHOTS.mkdir(parents=True, exist_ok=True)
        d.save_screenshot(str(SHOTS / "remote-draw-offer.png"))
        click(d, f"{box} button.req-accept")
        wait_for(lambda: page.wait_state()["result"] == "1/2-1/2", 15, "the draw on the page's board")
        b1.wait(20)
    finally:
        if d is not None:
            d.quit()
        page.stop()
        if b1.poll() is None:
            b1.kill()
    games = sorted((tmp_path / "b1" / "games").glob("*.jsonl"))
    h1 = load_any(games[-1])
    h2 = load_any(tmp_path / "b2" / "games" / games[-1].name)
    assert (h1.result, h1.reason) == (h2.result, h2.reason) == ("1/2-1/2", "agreement")
    assert [str(x) for x in h1.actions] == [str(x) for x in h2.actions] == MATE[:2]
