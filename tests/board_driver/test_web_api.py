"""The page's JSON API end to end: the real CLI (`play --web`) on the simulated board, over HTTP
and WebSocket, checked against python-chess where it is the reference."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import time

import chess
import chess.pgn
import pytest
from webtools import CLI, Server, start_serve


def test_state_has_the_fields_of_play_json_and_the_legal_moves(server, tmp_path):
    st = server.wait_state()
    ev = tmp_path / "none.jsonl"
    ev.write_text("")
    env = dict(__import__("os").environ, FAIRYBOARD_DATA=str(tmp_path / "d"))
    out = json.loads(subprocess.run(CLI + ["play", "--events", str(ev), "--json"], capture_output=True, text=True,
                                    env=env, check=True).stdout)
    missing = set(out) - set(st) - {"warnings", "resumed"}
    assert not missing, missing
    assert st["variant"] == "orthodox" and st["turn"] == "white" and st["result"] is None
    assert sorted(st["legal"]) == sorted(m.uci() for m in chess.Board().legal_moves)
    assert st["board"] == {"files": 8, "ranks": 8, "holes": []}
    assert st["pieces"]["e1"] == "K" and st["pieces"]["d8"] == "q" and len(st["pieces"]) == 32
    assert {c["name"] for c in st["catalog"]} >= {"king", "queen", "rook", "bishop", "knight", "pawn"}
    assert st["sim"] is True and st["paired"] is False


def test_commands_need_a_token_and_cross_site_requests_are_refused(server, token):
    status, body = server.post("/api/command", {"text": "help"})
    assert status == 401 and "pair" in body["error"]
    status, _, headers = server.request("POST", "/api/command", {"text": "help"})
    assert headers.get("WWW-Authenticate") == "Bearer"
    assert server.post("/api/command", {"text": "help"}, token="not-a-token")[0] == 401
    assert server.post("/api/new", {"variant": "orthodox"})[0] == 401
    status, body = server.post("/api/command", {"text": "help"}, token=token,
                               headers={"Origin": "http://elsewhere.example"})
    assert status == 403 and "cross-site" in body["error"]
    status, body = server.post("/api/command", {"text": "help"}, token=token, headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    status, body, _ = server.request("POST", "/api/command", raw=b"text=help", token=token,
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 415
    status, body = server.post("/api/command", {"text": "help"}, token=token)
    assert status == 200 and any("choose" in line for line in body["replies"])
    status, body = server.post("/api/command", {"text": "fly away"}, token=token)
    assert status == 400 and "unknown command" in body["error"]


def test_only_the_boards_own_host_names_are_served(server, token):
    port = server.url.rsplit(":", 1)[1]
    # DNS rebinding: a page of another site, its name resolved to the board's address, is
    # same-origin with itself (Origin and Host agree) but names itself in Host
    rebound = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    status, body = server.post("/api/command", {"text": "help"}, token=token, headers=rebound)
    assert status == 421 and "own names" in body["error"]
    assert server.get("/api/state", headers={"Host": f"evil.example:{port}"})[0] == 421
    assert server.request("GET", "/", headers={"Host": "evil.example"})[0] == 421
    assert server.get("/api/state", headers={"Host": "bad host"})[0] == 421
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LocalHost"):
        assert server.get("/api/state", headers={"Host": host})[0] == 200, host


def _outside_address() -> str | None:
    """One of this machine's addresses that is not loopback (IPv4), if it has one."""
    import ipaddress

    from board_driver.web.hosts import machine_addresses
    return next((a for a in sorted(machine_addresses()) if ipaddress.ip_address(a).version == 4
                 and not ipaddress.ip_address(a).is_loopback), None)


@pytest.mark.slow
def test_the_simulated_board_needs_the_token_from_another_machine(tmp_path):
    address = _outside_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    s = Server(tmp_path / "data", "--variant", "orthodox", "--new", listen="0.0.0.0:0")
    try:
        port = s.url.rsplit(":", 1)[1]
        local = Server.__new__(Server)
        local.url = f"http://127.0.0.1:{port}"
        s.url = f"http://{address}:{port}"        # the board's own address: its Host is accepted
        assert s.get("/api/state")[0] == 200
        status, body = s.post("/api/sim", {"input": "resign"})
        assert status == 401 and "pair" in body["error"]
        assert s.post("/api/sim", {"lift": "e2"})[0] == 401
        assert local.wait_state()["result"] is None and local.wait_state()["occupied"].count("e2") == 1
        token = local.pair()                     # on its own machine the simulated board needs none
        status, body = s.post("/api/sim", [{"lift": "e2"}, {"t": 150, "place": "e4"}], token=token)
        assert status == 200 and body["state"]["moves"] == ["e2e4"]
    finally:
        s.stop()


def test_pairing_lights_a_piece_and_grants_a_token_as_a_cookie(server):
    status, p = server.post("/api/pair")
    assert status == 200 and p["square"] in server.wait_state()["occupied"] and p["expires_in"] == 30
    st = server.get(f"/api/pair/{p['id']}")[1]
    assert st["state"] == "waiting" and "token" not in st
    assert server.get("/api/pair/nonsense")[0] == 404
    server.sim({"t": 0, "lift": p["square"]})
    assert server.get(f"/api/pair/{p['id']}")[1]["state"] == "waiting"     # lifted, not yet back
    server.sim({"t": 0, "place": p["square"]})
    status, st, headers = server.request("GET", f"/api/pair/{p['id']}")
    assert st["state"] == "granted" and st["token"]
    assert f"fairyboard_token={st['token']}" in headers.get("Set-Cookie", "")
    assert "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
    status, body = server.post("/api/command", {"text": "help"}, headers={"Cookie": f"fairyboard_token={st['token']}"})
    assert status == 200
    assert server.get("/api/state", headers={"Cookie": f"fairyboard_token={st['token']}"})[1]["paired"] is True
    assert server.wait_state()["pending"] is None      # the piece lifted and put back is no move


def test_a_pairing_needs_its_piece_alone_lifted_and_put_back(server):
    status, p = server.post("/api/pair")
    assert status == 200
    assert server.post("/api/pair")[1]["id"] == p["id"]           # one waiting pairing per client
    other = next(sq for sq in ("a1", "h1", "a8", "h8", "e1") if sq != p["square"])
    server.sim({"t": 0, "lift": p["square"]}, {"t": 150, "lift": other}, {"t": 300, "place": other},
               {"t": 450, "place": p["square"]})
    assert server.get(f"/api/pair/{p['id']}")[1]["state"] == "waiting"     # something else moved meanwhile
    server.sim({"t": 0, "lift": p["square"]}, {"t": 150, "place": p["square"]})
    assert server.get(f"/api/pair/{p['id']}")[1]["state"] == "granted"


@pytest.mark.slow
def test_a_game_played_through_sim_is_refereed_like_python_chess(server, token):
    server.new_game(token, "orthodox")
    ref = chess.Board()
    for uci in ("e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6"):
        m = chess.Move.from_uci(uci)
        st = server.move(uci[:2], uci[2:], capture=ref.is_capture(m))["state"]
        ref.push(m)
        assert st["fen"].split()[0] == ref.board_fen(), uci
        assert sorted(st["legal"]) == sorted(x.uci() for x in ref.legal_moves)
    st = server.move("h5", "f7", capture=True)["state"]
    ref.push_uci("h5f7")
    assert ref.is_checkmate()
    assert st["result"] == "1-0" and st["reason"] == "checkmate" and st["legal"] == []
    assert st["moves"] == ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"]
    assert "e8" in st["check"] and st["leds"]["e8"]["layer"] in ("lose", "check")
    assert any("Game over" in n["text"] for n in st["notices"])


def test_a_lifted_piece_shows_its_targets_and_a_wrong_board_is_explained(server, token):
    server.new_game(token, "orthodox")
    st = server.sim({"t": 0, "lift": "g1"})["state"]
    assert st["lifted"] == ["g1"] and st["pending"]["type"] == "move"
    assert {sq for sq, led in st["leds"].items() if led["layer"] == "target"} == {"f3", "h3"}
    assert st["leds"]["f3"]["meaning"] == "the piece in hand may go here"
    st = server.sim({"t": 0, "place": "g4"})["state"]
    assert st["pending"]["type"] == "mismatch" and "g1" in st["pending"]["text"]
    st = server.sim({"t": 0, "lift": "g4"}, {"t": 100, "place": "g1"})["state"]
    assert st["pending"] is None and st["moves"] == []


def test_promotion_is_a_prompt_answered_by_a_command(server, token):
    fen = "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1"
    server.new_game(token, "orthodox", fen=fen)
    st = server.move("e7", "e8")["state"]
    p = st["pending"]
    assert p["type"] == "prompt" and "Promotion on e8" in p["text"]
    assert set(p["options"]) == {"e7e8q", "e7e8r", "e7e8b", "e7e8n"} and p["default"] == "e7e8q"
    n = p["options"].index("e7e8n") + 1
    status, body = server.post("/api/command", {"text": f"choose {n}"}, token=token)
    assert status == 200, body
    ref = chess.Board(fen)
    ref.push_uci("e7e8n")
    assert body["state"]["moves"] == ["e7e8n"] and body["state"]["fen"].split()[0] == ref.board_fen()


def test_the_websocket_pushes_changes_and_a_reconnect_catches_up(server, token):
    import aiohttp
    server.new_game(token, "orthodox")

    async def run():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(server.url + "/api/ws") as ws:
                first = json.loads((await ws.receive(timeout=5)).data)["state"]
                assert first["moves"] == []
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, server.sim, {"t": 0, "lift": "e2"})
                seen = []
                while not seen or "e2" not in seen[-1]["lifted"]:
                    seen.append(json.loads((await ws.receive(timeout=5)).data)["state"])
                assert seen[-1]["leds"]["e4"]["layer"] == "target"
            await loop.run_in_executor(None, server.sim, {"t": 0, "place": "e4"})    # while nobody listens
            async with http.ws_connect(server.url + "/api/ws") as ws:
                again = json.loads((await ws.receive(timeout=5)).data)["state"]
                assert again["moves"] == ["e2e4"] and again["version"] > seen[-1]["version"]
    asyncio.run(run())


def test_a_websocket_from_another_sites_page_is_refused(server):
    import aiohttp

    async def run():
        async with aiohttp.ClientSession() as http:
            for origin in ("http://evil.example", "null", server.url.replace("localhost", "127.0.0.1")):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(server.url + "/api/ws", origin=origin)
                assert refused.value.status == 403, origin
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(server.url + "/api/ws", headers={"Sec-Fetch-Site": "cross-site"})
            assert refused.value.status == 403
            # the board's own page, and a script without Origin (as documented), are served
            for origin in (server.url, None):
                async with http.ws_connect(server.url + "/api/ws", origin=origin) as ws:
                    assert json.loads((await ws.receive(timeout=5)).data)["type"] == "state"
    asyncio.run(run())
    status, body, _ = server.request("GET", "/api/ws", headers={"Origin": "http://evil.example",
                                                                "Connection": "Upgrade", "Upgrade": "websocket",
                                                                "Sec-WebSocket-Version": "13",
                                                                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
    assert status == 403 and "cross-site" in body["error"]


def test_sim_refuses_bad_events_with_a_clear_message(server, token):
    server.new_game(token, "orthodox")
    assert server.post("/api/sim", [{"t": 0, "lift": "e2", "place": "e4"}])[1]["error"].startswith("event 1")
    status, body = server.post("/api/sim", [{"t": 5, "lift": "e2"}, {"t": 1, "place": "e4"}])
    assert status == 400 and "goes back" in body["error"]
    assert server.post("/api/sim", {"t": 0, "jump": "e2"})[0] == 400
    status, body, _ = server.request("POST", "/api/sim", raw=b"{not json")
    assert status == 400 and "JSON" in body["error"]
    body = server.sim({"t": 0, "lift": "e5"})
    assert body["warnings"] and "no piece on e5" in body["warnings"][0]["warning"]
    assert server.sim({"t": 0, "lift": "z9"})["warnings"][0]["event"] == 1
    st = server.sim({"t": 0, "input": "resign"})["state"]           # an input event is a console command
    assert st["result"] == "0-1" and st["reason"] == "resignation"


def test_games_list_detail_and_pgn(server, token):
    server.new_game(token, "orthodox", white="Ann", black="Bob")
    for a, b in (("d2", "d4"), ("d7", "d5")):
        server.move(a, b)
    gid = server.wait_state()["game"]
    games = server.get("/api/games")[1]["games"]
    mine = next(g for g in games if g["id"] == gid)
    assert mine["players"] == {"white": "Ann", "black": "Bob"} and mine["actions"] == 2 and not mine["damaged"]
    detail = server.get(f"/api/games/{gid}")[1]
    assert [p["san"] for p in detail["positions"]] == [None, "d4", "d5"]
    assert detail["positions"][2]["pieces"]["d5"] == "p"
    status, text, headers = server.request("GET", f"/api/games/{gid}/pgn")
    assert status == 200 and f'{gid}.pgn' in headers["Content-Disposition"]
    game = chess.pgn.read_game(io.StringIO(text))
    assert game.headers["White"] == "Ann" and [m.uci() for m in game.mainline_moves()] == ["d2d4", "d7d5"]
    assert server.get("/api/games/../../etc/passwd")[0] == 404
    assert server.get("/api/games/nope")[0] == 404


def test_a_damaged_game_is_listed_as_damaged(server):
    data = server.wait_state()["journal"].rsplit("/", 1)[0]
    with open(f"{data}/20000101-000000.jsonl", "w") as f:
        f.write('{"type": "game", "variant": "orthodox"}\nnot json\n{"type": "push", "action": "e2e4"}\n')
    games = server.get("/api/games")[1]["games"]
    bad = next(g for g in games if g["id"] == "20000101-000000")
    assert bad["damaged"] is True and "line 2" in bad["error"]


def test_cost_prices_a_design_like_the_cost_command(server):
    out = subprocess.run(CLI + ["cost", "fcFfmW"], capture_output=True, text=True, check=True).stdout.splitlines()
    status, body = server.get("/api/cost?design=fcFfmW")
    assert status == 200
    assert f"{body['exact']} {body['price']}" == out[-1] == "1.08 2"
    assert body["lines"] == out[1:-1]
    status, body = server.get("/api/cost?design=Zq!")
    assert status == 400 and "Zq!" in body["error"]


def test_csipgs_offers_only_affordable_purchases(server, token):
    st = server.new_game(token, "csipgs-power-standard")      # 4 zorkmids a turn; a purchase is the action
    assert st["family"] == "csipgs" and st["view"]["phase"] == "action" and st["view"]["treasury"]["white"] == "4"
    offered = {b["design"]: b["price"] for b in st["buy"]}
    prices = st["view"]["prices"]["white"]
    assert offered == {d: p for d, p in prices.items() if int(p) <= 4} and "BR" not in offered
    status, body = server.post("/api/command", {"text": "buy BR"}, token=token)
    assert status == 400 and "costs 9" in body["error"]


def test_army_csipgs_shows_its_budget(server, token):
    st = server.new_game(token, "csipgs-army")
    assert st["army"]["budget"] == "52" and st["army"]["pieces"] == 16
    assert st["view"]["army"]["spent"] == {"white": "0", "black": "0"} and st["state"]["phase"] == "setup"


def test_new_game_refuses_unknown_variants_and_bad_names(server, token):
    assert server.post("/api/new", {"variant": "nonsense"}, token=token)[0] == 400
    assert server.post("/api/new", {"variant": "orthodox", "white": ""}, token=token)[0] == 400
    names = {v["name"] for v in server.get("/api/variants")[1]["variants"]}
    assert {"orthodox", "tomorrow-1", "chego-holes", "csipgs", "random"} <= names


@pytest.mark.slow
def test_a_board_profile_password_logs_in(tmp_path):
    profile = tmp_path / "board.yaml"
    profile.write_text("name: sim-pw\nfiles: 12\nranks: 8\nweb:\n  password: open sesame\n")
    s = Server(tmp_path / "data", "--board", str(profile))
    try:
        assert s.get("/api/state")[1]["password"] is True
        status, body = s.post("/api/login", {"password": "wrong"})
        assert status == 401
        status, body = s.post("/api/login", {"password": "open sesame"})
        assert status == 200
        # guessing: the sixth wrong password in a row waits, refused unchecked with Retry-After
        for _ in range(5):
            assert s.post("/api/login", {"password": "guess"})[0] == 401
        status, refused, headers = s.request("POST", "/api/login", {"password": "open sesame"})
        assert status == 429 and int(headers["Retry-After"]) >= 1 and "try again" in refused["error"]
        assert s.post("/api/command", {"text": "help"}, token=body["token"])[0] == 200
        ids = {s.post("/api/pair")[1]["id"] for _ in range(4)}     # a watcher asking again and again
        assert len(ids) == 1                                        # lights one square, no more
    finally:
        s.stop()


@pytest.mark.slow
def test_the_owner_lists_the_paired_devices_and_forgets_them(tmp_path):
    profile = tmp_path / "board.yaml"
    profile.write_text("name: sim-pw\nfiles: 12\nranks: 8\nweb:\n  password: open sesame\n")
    s = Server(tmp_path / "data", "--board", str(profile))
    try:
        phone = s.post("/api/login", {"password": "open sesame"},
                       headers={"User-Agent": "Mozilla/5.0 (Linux; Android 14) Chrome/126.0 Mobile Safari/537.36"})[1]
        laptop = s.post("/api/login", {"password": "open sesame"})[1]["token"]
        assert s.get("/api/tokens")[0] == 401
        status, listed = s.get("/api/tokens", token=laptop)
        assert status == 200 and listed["expire_days"] == 30 and len(listed["tokens"]) == 2
        first, second = listed["tokens"]
        assert first["label"].startswith("Chrome on Android") and first["via"] == "password"
        assert {"id", "created", "last_used", "expires"} <= set(first) and second["current"] and not first["current"]
        status, body = s.post("/api/tokens/revoke", {"id": first["id"]}, token=laptop)
        assert status == 200 and body["revoked"] == 1 and [d["id"] for d in body["tokens"]] == [second["id"]]
        assert s.post("/api/command", {"text": "help"}, token=phone["token"])[0] == 401
        assert s.post("/api/tokens/revoke", {"id": "nonsense"}, token=laptop)[0] == 404
        assert s.post("/api/tokens/revoke", {"all": "yes"}, token=laptop)[0] == 400
        status, body, headers = s.request("POST", "/api/tokens/revoke", {"all": True}, token=laptop)
        assert status == 200 and body["tokens"] == [] and "fairyboard_token=" in headers.get("Set-Cookie", "")
        assert s.post("/api/command", {"text": "help"}, token=laptop)[0] == 401
        # the command line forgets them too, while the service runs
        again = s.post("/api/login", {"password": "open sesame"})[1]["token"]
        env = dict(__import__("os").environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
        out = subprocess.run(CLI + ["web", "devices"], capture_output=True, text=True, env=env, check=True).stdout
        assert "password" in out
        out = subprocess.run(CLI + ["web", "forget"], capture_output=True, text=True, env=env, check=True).stdout
        assert "1 paired device forgotten" in out
        assert s.post("/api/command", {"text": "help"}, token=again)[0] == 401
    finally:
        s.stop()


def test_random_variant_chess_shows_its_dice_and_the_match_schedule(server, token):
    from engine.random_variant import select
    st = server.new_game(token, "random")
    dice = st["dice"]
    assert st["variant"] == "random-" + "-".join(map(str, dice)) and all(1 <= d <= 6 for d in dice)
    assert select(dice).description in st["description"]
    assert st["board"]["files"] == 12
    games = server.get("/api/schedule?games=9")[1]["games"]
    # the rules text: player A is White in games 1, 4, 5, 8, 9; a variant is drawn before every odd game
    assert [g["game"] for g in games if g["white"] == "A"] == [1, 4, 5, 8, 9]
    assert [g["game"] for g in games if g["draw"]] == [1, 3, 5, 7, 9]
    assert server.get("/api/schedule?games=0")[0] == 400


def test_hardware_names_the_simulated_board(server):
    h = server.get("/api/hardware")[1]
    assert h["sensors"] == "sim" and h["leds"] == "sim" and h["link"] is None and h["size"] == "12x8"


def test_the_simulated_board_has_a_selftest_but_no_calibration(server, token):
    assert server.post("/api/hardware/selftest", {})[0] == 401
    status, found = server.post("/api/hardware/selftest", {}, token=token)
    assert status == 200 and found["ok"] is True and found["problems"] == []
    assert found["config"]["sensors"] == "sim" and "link" not in found and "leds" not in found
    # the sensors are named by the 12x8 board's squares; an 8x8 game stands in its middle, files c-j
    game = server.wait_state()
    shift = (12 - game["board"]["files"]) // 2
    on_board = sorted(chr(ord(sq[0]) + shift) + sq[1:] for sq in game["occupied"])
    assert sorted(found["sensors"]["closed"]) == on_board
    cal = server.get("/api/calibrate")[1]
    assert cal["state"] == "idle" and "the simulated board needs no calibration" in cal["refused"]
    status, body = server.post("/api/calibrate/start", {"squares": ["e4"]}, token=token)
    assert status == 409 and "the simulated board needs no calibration" in body["error"]
    assert server.post("/api/calibrate/answer", {"text": ""}, token=token)[0] == 409
    assert server.get("/api/hardware")[1]["selftest"]["ok"] is True


def test_the_page_loads_from_the_board_alone_in_under_300_kb(server):
    import re
    status, html, headers = server.request("GET", "/")
    assert status == 200 and "text/html" in headers["Content-Type"]
    refs = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert refs and all(r.startswith("/static/") or r.startswith("data:") for r in refs), refs   # no CDN
    total = len(html.encode())
    for r in refs:
        if r.startswith("/static/"):
            status, body, _ = server.request("GET", r)
            assert status == 200, r
            total += len(body.encode())
            assert "https://" not in body and "http://" not in body.replace("http://www.w3.org/2000/svg", ""), r
    assert total < 300 * 1024, total


def test_the_computer_is_offered_and_its_move_is_carried_out_on_the_board(server, token):
    offer = server.get("/api/variants")[1]
    assert {"builtin", "random"} <= set(offer["computer"])
    assert offer["computer_levels"] == ["builtin:1", "builtin:2", "builtin:3"]
    assert offer["computer_names"]["builtin:3"] == "level 3: looks three turns ahead"
    assert set(offer["computer_names"]) == set(offer["computer"]) | set(offer["computer_levels"])
    status, body = server.post("/api/new", {"variant": "orthodox", "black": "uci:/bin/sh"}, token=token)
    assert status == 400 and "command line" in body["error"]
    server.new_game(token, "orthodox", white="Ann", black="random")
    st = server.move("e2", "e4")["state"]
    assert st["moves"] == ["e2e4"] and st["players"]["black"] == "random"
    assert "Computer (black) is thinking." in [n["text"] for n in st["notices"]]
    lit = {}
    for sq, led in st["leds"].items():
        lit.setdefault(led["layer"], []).append(sq)
    assert len(lit.get("computer from", [])) == 1 and len(lit.get("computer to", [])) == 1, lit
    a, b = lit["computer from"][0], lit["computer to"][0]
    assert a + b in st["legal"]
    assert st["leds"][a]["meaning"] == "the computer's move: lift this piece"
    assert st["computer"]["move"] == a + b and f"from {a} to {b}" in st["computer"]["text"]
    st = server.move(a, b, capture=b in st["pieces"])["state"]
    assert st["moves"] == ["e2e4", a + b] and st["turn"] == "white" and st["computer"] is None


@pytest.mark.slow
def test_serve_serves_the_page_for_the_board_it_runs(tmp_path):
    """`serve --web` on the simulated profile: the board is set up and plays as under `play --web`
    (/api/sim moves its pieces); SIGINT stops both."""
    import os
    import signal
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"))
    env.pop("XDG_DATA_HOME", None)
    proc, s, out = start_serve(["--board", "sim", "--web", "127.0.0.1:0", "--variant", "tomorrow-1"], env)
    try:
        st = s.wait_state(timeout=20)
        # the simulated board under serve plays as under play --web: set up, and moved by /api/sim
        assert st["variant"] == "tomorrow-1" and st["sim"] is True and st["board"]["files"] == 12
        assert st["pending"] is None and "l1" in st["occupied"]
        assert s.get("/api/hardware")[1]["sensors"] == "sim"
        assert s.post("/api/command", {"text": "help"})[0] == 401
        s.move("e2", "e4")
        end = time.monotonic() + 20
        while time.monotonic() < end and s.wait_state()["moves"] != ["e2e4"]:
            time.sleep(0.05)
        assert s.wait_state()["moves"] == ["e2e4"]
    finally:
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=20)[0].decode()
    assert proc.returncode == 0, "".join(out) + rest
    assert "stopped; the game is saved" in rest


def test_cost_progressive_shows_the_points_left_and_ends_a_turn(server, token):
    st = server.new_game(token, "cost-progressive")        # move n has n movement points
    assert st["state"]["points_left"] == 1 and st["state"]["turn_budget"] == 1
    st = server.move("e2", "e4")["state"]                    # a pawn costs 1: the turn is over
    st = server.move("e7", "e5")["state"]
    assert st["turn"] == "white" and st["state"]["turn_budget"] == 2
    st = server.move("d2", "d3")["state"]
    assert st["turn"] == "white" and st["state"]["points_left"] == 1 and "end" in st["actions"]
    status, body = server.post("/api/command", {"text": "end"}, token=token)
    assert status == 200 and body["state"]["turn"] == "black" and body["state"]["moves"][-1] == "end"


def test_a_new_game_is_answered_once_it_is_on_disk_and_a_bad_one_is_refused(server, token):
    before = server.wait_state()
    status, body = server.post("/api/new", {"variant": "orthodox", "fen": "this is no position"}, token=token)
    assert status == 400 and "FEN 'this is no position'" in body["error"], body
    after = server.wait_state()
    assert after["game"] == before["game"] and after["moves"] == before["moves"]      # the game goes on
    status, body = server.post("/api/new", {"variant": "orthodox", "fen": "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1"},
                               token=token)
    assert status == 200 and body["game"] != before["game"], body
    games = {g["id"] for g in server.get("/api/games")[1]["games"]}
    assert body["game"] in games                                   # on disk when the answer came


def test_a_position_that_is_already_over_cannot_start_a_game(server, token):
    before = server.wait_state()["game"]
    for fen in ("8/8/8/8/8/8/8/8 w - - 0 1", "4k3/8/8/8/8/8/8/8 w - - 0 1"):
        status, body = server.post("/api/new", {"variant": "orthodox", "fen": fen}, token=token)
        assert status == 400 and "no game can start there" in body["error"], body
    assert server.wait_state()["game"] == before


def test_json_nested_too_deeply_is_a_bad_request(server, token):
    status, body, _ = server.request("POST", "/api/command", raw=b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                                     token=token)
    assert status == 400 and "nested too deeply" in body["error"]
