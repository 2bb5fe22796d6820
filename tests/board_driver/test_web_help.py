"""The engine's help on the page's API (docs/web.md): the hint in the snapshot, the live
evaluation switched on and off (the board answering its sensors while the engine thinks), and a
saved game analysed once for the evaluation graph, its big swings marked."""

from __future__ import annotations

import json
import time

import pytest
from webtools import until

# 1.e4 e5 2.Qh5 Nc6 3.Bc4 Nf6??: White mates with Qxf7
SCHOLAR = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
BLUNDER = [("e2", "e4"), ("e7", "e5"), ("d1", "h5"), ("b8", "c6"), ("f1", "c4"), ("g8", "f6"), ("h5", "f7")]



def test_the_hint_is_said_and_shown_in_the_snapshot_until_the_game_moves_on(server, token):
    server.new_game(token, "orthodox", fen=SCHOLAR)
    assert server.wait_state()["hint"] is None
    assert server.post("/api/command", {"text": "hint"})[0] == 401
    status, body = server.post("/api/command", {"text": "hint"}, token=token)
    assert status == 200, body
    # the hint may come back with the command or later (a search in the background): the
    # snapshot says it either way
    st = until(lambda: (s := server.wait_state())["hint"] and s, what="the hint in the snapshot")
    assert st["hint"]["move"] == "h5f7" and st["hint"]["ply"] == 0
    assert "move the queen from h5 to f7" in st["hint"]["text"]
    said = [n["text"] for n in st["notices"] if n["text"].startswith("Hint for white")]
    assert said and "#1" in said[-1], st["notices"]
    assert st["computer"] is None                           # a hint is not the computer's move
    h5 = st["leds"]["h5"]
    assert h5["layer"] == "computer from" and h5["meaning"] == "the hint's move: lift this piece"
    server.move("b1", "c3")
    st = until(lambda: (s := server.wait_state())["moves"] == ["b1c3"] and s)
    assert st["hint"] is None
    assert not [sq for sq, led in st["leds"].items() if led["layer"].startswith("computer")]


def test_the_live_evaluation_is_off_until_switched_on_and_follows_the_position(server, token):
    server.new_game(token, "orthodox", fen=SCHOLAR)
    assert server.wait_state()["eval"] is None                       # off by default
    assert server.post("/api/eval", {"on": True})[0] == 401
    assert server.post("/api/eval", {"on": "yes"}, token=token)[0] == 400
    assert server.post("/api/eval", {"on": True, "seconds": 99}, token=token)[0] == 400
    status, body = server.post("/api/eval", {"on": True, "seconds": 0.5}, token=token)
    assert status == 200 and body["on"] is True and body["eval"]["state"] in ("thinking", "done"), body
    ev = until(lambda: (e := server.wait_state()["eval"]) and e["state"] == "done" and e, what="the evaluation")
    assert ev["ply"] == 0 and ev["turn"] == "white" and ev["mate"] == 1 and ev["cp"] > 0, ev   # White mates in 1
    assert ev["engine"] in ("fsf", "builtin") and ev["best"] == "h5f7"
    server.move("b1", "c3")                                          # the mate missed
    ev = until(lambda: (e := server.wait_state()["eval"]) and e["ply"] == 1 and e["state"] == "done" and e,
               what="the evaluation of the next position")
    assert ev["turn"] == "black" and ev["mate"] is None and isinstance(ev["cp"], int)
    # a long think: the board reads its sensors meanwhile
    assert server.post("/api/eval", {"on": True, "seconds": 6}, token=token)[0] == 200
    time.sleep(0.3)
    t0 = time.monotonic()
    st = server.sim({"t": 0, "lift": "a7"})["state"]
    took = time.monotonic() - t0
    assert "a7" in st["lifted"] and st["eval"]["state"] == "thinking", st["eval"]
    assert took < 2.0, f"the lift waited {took:.1f} s for the engine"
    server.sim({"t": 0, "place": "a7"})
    status, body = server.post("/api/eval", {"on": False}, token=token)
    assert status == 200 and body["eval"] is None
    st = server.wait_state()
    assert st["eval"] is None and "Live evaluation off." in [n["text"] for n in st["notices"]]


@pytest.mark.slow
def test_the_board_answers_while_the_built_in_search_thinks_in_the_service(server, token):
    """The built-in search (Cost Progressive has no Fairy-Stockfish) runs on a thread of the
    service's own process: the board's lifts and puts are still answered at once."""
    st = server.new_game(token, "cost-progressive")
    assert server.post("/api/eval", {"on": True, "seconds": 4}, token=token)[0] == 200
    time.sleep(0.5)
    try:
        for _ in range(3):
            t0 = time.monotonic()
            got = server.sim({"t": 0, "lift": "b1"})["state"]
            server.sim({"t": 0, "place": "b1"})
            took = time.monotonic() - t0
            assert got["eval"]["state"] == "thinking" and "b1" in got["lifted"], got["eval"]
            assert took < 1.0, f"a lift and a put took {took:.2f} s while the engine thought"
        ev = until(lambda: (e := server.wait_state()["eval"]) and e["state"] == "done" and e, what="the evaluation")
        assert ev["engine"] == "builtin" and ev["ply"] == 0 and isinstance(ev["cp"], int), ev
        assert st["pieces"]["b1"] == "N"
    finally:
        server.post("/api/eval", {"on": False}, token=token)


def test_a_saved_game_is_analysed_once_and_its_big_swings_marked(server, token):
    server.new_game(token, "orthodox")
    for a, b in BLUNDER:
        server.move(a, b, capture=b == "f7")
    st = until(lambda: (s := server.wait_state())["result"] and s, what="the mate")
    gid = st["game"]
    status, body = server.get(f"/api/games/{gid}/analysis")
    assert status == 200 and body["state"] == "none" and body["turns"] == []
    assert server.post(f"/api/games/{gid}/analyse", {})[0] == 401
    assert server.post("/api/games/nosuchgame/analyse", {}, token=token)[0] == 404
    assert server.post(f"/api/games/{gid}/analyse", {"seconds": 0}, token=token)[0] == 400
    status, body = server.post(f"/api/games/{gid}/analyse", {"seconds": 0.1}, token=token)
    assert status == 202 and body["analysis"]["state"] == "running" and body["analysis"]["total"] == 7, body
    a = until(lambda: (b := server.get(f"/api/games/{gid}/analysis")[1])["state"] == "done" and b, 60,
              "the analysis done")
    assert [t["ply"] for t in a["turns"]] == [1, 2, 3, 4, 5, 6, 7]
    assert [t["san"] for t in a["turns"]][-2:] == ["Nf6", "Qxf7#"]
    nf6 = a["turns"][5]
    assert nf6["mark"] == "??" and nf6["loss"] >= 300 and nf6["mate"] == 1, nf6    # the mate it allowed
    assert 6 in a["swings"] and a["turns"][6]["mate"] == 0 and a["done"] == a["total"] == 7
    assert isinstance(a["start_cp"], int) and a["engine"] in ("fsf", "builtin")
    # kept beside the game: asked again, it is answered from the file, not judged again
    cache = server.data_dir / "games" / f"{gid}.analysis.json"
    assert json.loads(cache.read_text())["turns"] == a["turns"]
    stamp = cache.stat().st_mtime_ns
    status, body = server.post(f"/api/games/{gid}/analyse", {"seconds": 0.1}, token=token)
    assert status == 200 and body["analysis"]["state"] == "done" and body["analysis"]["turns"] == a["turns"]
    assert cache.stat().st_mtime_ns == stamp
    assert gid in [g["id"] for g in server.get("/api/games")[1]["games"]]       # the list shows games only
    assert f"{gid}.analysis" not in [g["id"] for g in server.get("/api/games")[1]["games"]]


@pytest.mark.slow
def test_an_analysis_under_way_is_pushed_on_the_websocket(server, token):
    import asyncio

    import aiohttp
    server.new_game(token, "orthodox")
    for a, b in BLUNDER[:4]:
        server.move(a, b)
    gid = server.wait_state()["game"]

    async def listen():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(server.url + "/api/ws") as ws:
                status, body = server.post(f"/api/games/{gid}/analyse", {"seconds": 0.1}, token=token)
                assert status == 202, body
                seen = []
                end = time.monotonic() + 30
                while time.monotonic() < end:
                    msg = json.loads((await ws.receive(timeout=30)).data)
                    if msg["type"] == "analysis":
                        seen.append(msg["analysis"])
                        if msg["analysis"]["state"] == "done":
                            return seen
        return seen
    seen = asyncio.run(listen())
    assert seen and seen[-1]["state"] == "done" and seen[-1]["id"] == gid and len(seen[-1]["turns"]) == 4
    assert [s["done"] for s in seen] == sorted(s["done"] for s in seen)


def test_a_board_without_a_broker_says_so(server, token):
    status, body = server.get("/api/remote/boards")
    assert status == 409 and body["error"].startswith("no broker configured"), body
    assert server.wait_state()["lobby"] is None
    status, body = server.post("/api/remote/invite", {"board": "b1"}, token=token)
    assert status == 409 and "no broker configured" in body["error"]
    status, body = server.post("/api/new", {"white": "remote:b1"}, token=token)
    assert status == 400 and "broker" in body["error"], body


def test_an_invitation_naming_no_usable_game_id_is_not_shown(tmp_path):
    """Another board's invitation is read from the broker: one whose game id this board could
    not keep (a path, a space) is left out, the others listed."""
    from types import SimpleNamespace

    from board_driver.remote.invitations import Invitations
    from board_driver.journal import GameStore

    class Lobby:
        connected = SimpleNamespace(is_set=lambda: True)

        @staticmethod
        def invitations():
            base = {"variant": "orthodox", "side": "white", "players": {"white": "b1", "black": "b2"}}
            return [dict(base, game="../../etc/passwd", **{"from": "b1"}),
                    dict(base, game="20250101-120000-b3", **{"from": "b3"})]
    host = SimpleNamespace(broker=SimpleNamespace(name="b2"), store=GameStore(tmp_path), say=print)
    inv = Invitations(host)
    inv.lobby = Lobby()
    st = inv.status()
    assert [i["from"] for i in st["invitations"]] == ["b3"] and st["invitations"][0]["you_play"] == "black"
