"""The recorder's page in a real Chromium: every board drawn by the board page's component
(chessgroundx under a grid of squares), with its last move, clock and result."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from clubtools import OPERA

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


def _put(store, board, variant, moves, result=None):
    from board_driver.config import load_variant
    v = load_variant(variant)
    recs = [{"type": "game", "version": 1, "id": "g1", "variant": variant, "start_fen": v.start_fen,
             "date": "2026-11-23T03:00:00+00:00", "players": {"white": "Ann", "black": "Bob"}}]
    recs += [{"type": "push", "ply": i, "action": m, "w": 0} for i, m in enumerate(moves, 1)]
    if result:
        recs.append({"type": "result", "result": result, "reason": "checkmate"})
    store.add_records([(board, "g1", i, json.dumps(r)) for i, r in enumerate(recs)])


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (scripts/system-deps installs it)")
def test_page_draws_every_board_with_the_board_component(tmp_path):
    from board_driver.club.store import RecorderStore
    from board_driver.club.web import serve
    st = RecorderStore(tmp_path / "club.sqlite")
    _put(st, "board-01", "orthodox", OPERA, "1-0")
    _put(st, "board-02", "tomorrow-1", ["f2f4", "f7f5"])
    st.note_presence("board-02", False)
    srv = serve(st, "127.0.0.1", 0)
    try:
        r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            f"--user-data-dir={tmp_path / 'chromium'}", "--virtual-time-budget=5000", "--dump-dom",
                            f"http://127.0.0.1:{srv.server_address[1]}/"],
                           capture_output=True, text=True, timeout=90)
    finally:
        srv.shutdown()
    dom = r.stdout
    assert 'data-live="1"' in dom, r.stderr[-2000:]          # the script took over from the server's tables
    cards = {m.group(1): m.group(2) for m in re.finditer(r'<section class="card[^"]*" id="board-([\w-]+)">(.*?)</section>',
                                                         dom, re.S)}
    assert set(cards) == {"board-01", "board-02"}

    def piece(card, sq):
        m = re.search(rf'data-square="{sq}"[^>]*data-piece="(\w*)"', card)
        return m and m.group(1)
    one, two = cards["board-01"], cards["board-02"]
    assert one.count("data-square=") == 64 and two.count("data-square=") == 96
    assert "<cg-board" in one and "<piece" in one                    # chessground drew the pieces
    assert (piece(one, "d8"), piece(one, "b8"), piece(one, "c1"), piece(one, "e1")) == ("R", "n", "K", "")
    assert (piece(two, "f4"), piece(two, "f5"), piece(two, "b1"), piece(two, "k8")) == ("P", "p", "G", "g")
    assert "1-0 (checkmate)" in one and ">d1d8<" in one and "33" in one
    assert "OFFLINE" in two and "playing" in two


def test_the_recorder_shows_each_boards_clocks_as_the_last_move_left_them():
    from board_driver.club.web import boards_fragment, clock_of, game_record
    head = {"type": "game", "version": 1, "id": "20250101-120000", "variant": "orthodox",
            "start_fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "players": {"white": "Ann", "black": "Bob"}, "clock": {"tc": "300+3", "mode": "auto"}}
    recs = [head, {"type": "push", "ply": 1, "action": "e2e4", "clk": [296_500, 300_000]},
            {"type": "event", "t": 9000, "sq": "e7", "placed": False, "occ": "ff"},
            {"type": "push", "ply": 2, "action": "e7e5", "clk": [296_500, 8_350]}]
    rec = game_record("b1", "20250101-120000", recs)
    assert clock_of(rec) == {"tc": "300+3", "white_ms": 296_500, "black_ms": 8_350}
    assert clock_of(game_record("b1", "g", [dict(head, clock=None)])) is None
    html = boards_fragment([{"board": "b1", "online": True, "game": {
        "game": "20250101-120000", "variant": "orthodox", "players": head["players"], "result": None,
        "reason": None, "missing": 0, "last_action": "e7e5", "last_move_at": None, "actions": 2},
        "position": {"error": "not drawn here", "clock": clock_of(rec)}}])
    assert '<b class="clk-white">0:04:56</b>' in html and '<b class="clk-black">0:00:08.3</b>' in html
