"""A board's games reach the recorder's store exactly as journaled, through a real broker; the
recorder's page and PGN feeds show them (the PGN read back by python-chess)."""

from __future__ import annotations

import io
import json
import time
import urllib.request

import chess.pgn
import pytest
from clubtools import OPERA

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url):
    try:
        with _OPENER.open(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_game_reaches_store_line_for_line(make_board, make_recorder):
    rec = make_recorder()
    b = make_board("b1")
    gid = b.new_game()
    for i, m in enumerate(OPERA, 1):
        b.move(m, i)
    b.finish("1-0", "checkmate")
    want = b.lines()
    assert rec.wait_for(lambda: len(rec.store.journal_lines("b1", gid)) == len(want), 10)
    assert [json.loads(x) for x in rec.store.journal_lines("b1", gid)] == [json.loads(x) for x in want]
    assert rec.store.seqs("b1", gid) == list(range(len(want)))
    g = rec.store.games("b1")[0]
    assert (g["result"], g["reason"], g["actions"], g["last_action"]) == ("1-0", "checkmate", len(OPERA), "d1d8")
    assert b.pub.wait_idle(5)


def test_page_and_pgn_feeds(make_board, make_recorder):
    from board_driver.club.web import serve
    rec = make_recorder()
    rec.store.start_round("R1")
    time.sleep(0.01)
    b1, b2 = make_board("b1"), make_board("b2")
    g1 = b1.new_game("Morphy", "Duke")
    g2 = b2.new_game("Cy", "Di", variant="tomorrow-1")
    for i, m in enumerate(OPERA, 1):
        b1.move(m, i)
    b1.finish("1-0", "checkmate")
    b2.move("f2f4", 1)
    b2.move("f7f5", 2)
    assert rec.wait_for(lambda: [g["contig"] for g in rec.store.games()] == [len(b1.lines()), len(b2.lines())], 10)
    srv = serve(rec.store, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        code, text = _get(f"{base}/board/b1.pgn")
        assert code == 200
        game = chess.pgn.read_game(io.StringIO(text))
        assert [m.uci() for m in game.mainline_moves()] == OPERA
        assert game.headers["Result"] == "1-0" and game.headers["White"] == "Morphy"
        assert game.headers["Site"] == "b1" and game.headers["Round"] == "R1"
        assert game.end().board().is_checkmate()
        code, text = _get(f"{base}/round/R1.pgn")
        assert code == 200 and text.count("[Event ") == 2 and f'[GameId "b2/{g2}"]' in text
        code, text = _get(f"{base}/board/b2/{g2}.pgn")
        assert code == 200 and "1. f4 " in text and " f5 *" in text and '[Result "*"]' in text
        code, text = _get(f"{base}/board/b1/{g1}.jsonl")          # the journal, back on a board's tools
        assert code == 200 and text.splitlines() == b1.lines()
        from board_driver.pgn import pgn_of
        from board_driver.journal import GameStore
        other = GameStore(b1.folder.parent / "elsewhere")
        other.games.mkdir(parents=True)
        other.path(g1).write_text(text)
        assert pgn_of(other.load(g1)) == pgn_of(b1.store.load(g1))
        assert _get(f"{base}/board/b1/nope.jsonl")[0] == 404
        assert _get(f"{base}/board/b9.pgn")[0] == 404
        assert _get(f"{base}/board/b1/nope.pgn")[0] == 404
        code, body = _get(f"{base}/boards.json")
        boards = {d["board"]: d for d in json.loads(body)}
        assert boards["b1"]["game"]["result"] == "1-0" and boards["b1"]["game"]["last_action"] == "d1d8"
        assert boards["b2"]["position"]["fen"] == "rglnbqkbnlgr/ppppp1pppppp/12/5p6/5P6/12/PPPPP1PPPPPP/RGLNBQKBNLGR w KQkq - 0 2"
        assert boards["b2"]["position"]["files"] == 12 and boards["b2"]["online"] is True
        code, page = _get(f"{base}/")
        assert code == 200 and page.count('class="board"') == 2 and page.count("<td") >= 64 + 96
        assert "checkmate" in page and g1 in page
    finally:
        srv.shutdown()


def test_store_keeps_each_record_once_in_its_place(tmp_path):
    from board_driver.club.store import RecorderStore
    st = RecorderStore(tmp_path / "s.sqlite")
    recs = [json.dumps({"type": "game", "variant": "orthodox", "players": {}}),
            json.dumps({"type": "push", "ply": 1, "action": "e2e4", "w": 0}),
            json.dumps({"type": "push", "ply": 2, "action": "e7e5", "w": 0}),
            json.dumps({"type": "pop", "ply": 2, "action": "e7e5", "why": "takeback"})]
    p = st.add_records([("b", "g", 2, recs[2]), ("b", "g", 2, recs[2])])[("b", "g")]
    assert (p.contig, p.max_seq, p.gap) == (0, 2, True)
    p = st.add_records([("b", "g", 0, recs[0]), ("b", "g", 3, recs[3])])[("b", "g")]
    assert (p.contig, p.gap) == (1, True)
    p = st.add_records([("b", "g", 1, recs[1]), ("b", "g", 0, recs[0])])[("b", "g")]
    assert (p.contig, p.gap) == (4, False)
    assert st.seqs("b", "g") == [0, 1, 2, 3] and st.count() == 4
    assert st.games()[0]["actions"] == 1 and st.games()[0]["last_action"] == "e7e5"
    st.close()
    st = RecorderStore(tmp_path / "s.sqlite")           # reopened: all still there
    assert [json.loads(x) for x in st.journal_lines("b", "g")] == [json.loads(r) for r in recs]


@pytest.mark.slow
def test_retained_state_health_and_presence(make_board, make_recorder, broker):
    """A newcomer (a second page, a broadcaster's tool) learns every game's state, the board's
    health and presence from the broker's retained messages alone."""
    import paho.mqtt.client as mqtt
    rec = make_recorder()
    b = make_board("b1")
    gid = b.new_game()
    for i, m in enumerate(OPERA, 1):
        b.move(m, i)
    b.finish("1-0", "checkmate")
    assert rec.wait_for(lambda: rec.store.games("b1") and rec.store.games("b1")[0]["contig"] == len(b.lines()), 10)
    assert b.pub.wait_idle(5)
    time.sleep(0.3)
    got = {}
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="newcomer", protocol=mqtt.MQTTv311)
    c.username_pw_set("recorder", "pw-rec")
    c.on_message = lambda client, userdata, msg: got.__setitem__(msg.topic, (msg.retain, json.loads(msg.payload)))
    c.connect("127.0.0.1", broker.port)
    c.subscribe("fairyboard/b1/#", qos=1)
    c.loop_start()
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(got) < 3:
            time.sleep(0.05)
    finally:
        c.loop_stop()
        c.disconnect()
    retain, st = got[f"fairyboard/b1/game/{gid}/state"]
    assert retain and (st["seq"], st["actions"], st["last"], st["result"], st["reason"]) == \
        (len(b.lines()) - 1, len(OPERA), "d1d8", "1-0", "checkmate")
    assert st["players"] == {"white": "Ann", "black": "Bob"} and st["variant"] == "orthodox"
    assert got["fairyboard/b1/presence"][0] and got["fairyboard/b1/presence"][1]["online"] is True
    assert got["fairyboard/b1/health"][0] and got["fairyboard/b1/health"][1]["sensors"] == "sim"
    # the next game: the broker keeps its state only, the recorder both games
    g2 = b.new_game()
    b.move("d2d4", 1)
    assert rec.wait_for(lambda: len(rec.store.games("b1")) == 2 and rec.store.games("b1")[1]["contig"] == len(b.lines()), 10)
    assert b.pub.wait_idle(5)
    time.sleep(0.5)
    got.clear()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="newcomer2", protocol=mqtt.MQTTv311)
    c.username_pw_set("recorder", "pw-rec")
    c.on_message = lambda client, userdata, msg: got.__setitem__(msg.topic, msg.payload)
    c.connect("127.0.0.1", broker.port)
    c.subscribe("fairyboard/b1/game/+/state", qos=1)
    c.loop_start()
    time.sleep(1.0)
    c.loop_stop()
    c.disconnect()
    assert list(got) == [f"fairyboard/b1/game/{g2}/state"]
    assert json.loads(got[f"fairyboard/b1/game/{g2}/state"])["last"] == "d2d4"
    assert rec.store.games("b1")[0]["result"] == "1-0"


def test_journal_never_waits_for_the_publisher(make_board, make_recorder):
    """With the publisher's thread stuck (a broker that takes nothing), the game's records are
    still written at once; released, every one goes out, in order."""
    import threading
    rec = make_recorder()
    b = make_board("b1")
    stuck = threading.Event()
    real = b.pub._send

    def blocked():
        stuck.wait(30)
        real()
    b.pub._send = blocked
    gid = b.new_game()
    done = threading.Event()

    def play():
        for i, m in enumerate(OPERA, 1):
            b.move(m, i)
        done.set()
    threading.Thread(target=play, daemon=True).start()
    assert done.wait(20), "the journal waited for the publisher"
    assert len(b.lines()) == 1 + 3 * len(OPERA)
    assert rec.store.games("b1") == [] or rec.store.games("b1")[0]["contig"] == 0
    stuck.set()
    assert rec.wait_for(lambda: len(rec.store.journal_lines("b1", gid)) == len(b.lines()), 10)
    assert [json.loads(x) for x in rec.store.journal_lines("b1", gid)] == [json.loads(x) for x in b.lines()]


def test_boards_started_together_have_games_of_their_own(make_board, make_recorder):
    """Two boards' games started in the same second share a local id (the start time); the
    store keeps both, and in the PGN feeds each has its own GameId, BOARD/GAME."""
    from board_driver.club.web import serve
    rec = make_recorder()
    rec.store.start_round("R1")
    time.sleep(0.01)
    boards = [make_board(n) for n in ("b1", "b2", "b3")]
    gid = "20250101-120000"
    for i, b in enumerate(boards):
        assert b.new_game(f"W{i}", f"B{i}", game_id=gid) == gid
        b.move(OPERA[0] if i != 1 else "d2d4", 1)
    assert rec.wait_for(lambda: [g["contig"] for g in rec.store.games()] == [len(b.lines()) for b in boards], 10)
    srv = serve(rec.store, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        code, text = _get(f"{base}/round/R1.pgn")
        assert code == 200
        stream = io.StringIO(text)
        games = [chess.pgn.read_game(stream) for _ in boards]
        assert [g.headers["GameId"] for g in games] == [f"b{i}/{gid}" for i in (1, 2, 3)]
        assert [g.headers["White"] for g in games] == ["W0", "W1", "W2"]
        assert [g.next().move.uci() for g in games] == ["e2e4", "d2d4", "e2e4"]
        code, text = _get(f"{base}/board/b2/{gid}.pgn")
        assert code == 200 and f'[GameId "b2/{gid}"]' in text and "1. d4 *" in text
        code, body = _get(f"{base}/rounds.json")
        assert [g["id"] for g in json.loads(body)[0]["games"]] == [f"b{i}/{gid}" for i in (1, 2, 3)]
        code, body = _get(f"{base}/boards.json")
        assert [d["game"]["id"] for d in json.loads(body)] == [f"b{i}/{gid}" for i in (1, 2, 3)]
    finally:
        srv.shutdown()
