"""Two boards, one game, over a real mosquitto with the club's ACL: each board a process of its
own (tests/remote/side.py: the game host on the simulated board, its remote player, and a player
who carries out what the LEDs show). At the end both journals hold the same actions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clubtools import MOSQUITTO, OPERA, Broker
from latency import figures

from board_driver.journal import load_any

SIDE = Path(__file__).with_name("side.py")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MOSQUITTO is None, reason="needs mosquitto")]


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "broker", {"b1": "pw-b1", "b2": "pw-b2", "b3": "pw-b3"}).start()
    yield b
    b.stop()


def side(tmp_path, broker, name, *extra, latency=None):
    args = [sys.executable, str(SIDE), "--data", str(tmp_path / name), "--port", str(broker.port), "--name", name,
            "--password", f"pw-{name}", "--report", str(tmp_path / f"{name}.json"), *extra]
    if latency:
        args += ["--latency", str(latency)]
    log = open(tmp_path / f"{name}.out", "a")
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def said(tmp_path, name, text, timeout=60):
    """Wait until board ``name`` has said ``text`` (its output)."""
    end = time.monotonic() + timeout
    out = tmp_path / f"{name}.out"
    while time.monotonic() < end:
        if out.exists() and text in out.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} never said {text!r}: " + (out.read_text()[-3000:] if out.exists() else ""))


def finish(tmp_path, procs, timeout=60):
    end = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(max(1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError("the game did not end: " + "".join(
                (tmp_path / f"{n}.out").read_text()[-3000:] for n in ("b1", "b2")))
    return [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("b1", "b2")]


def same_game(tmp_path, r1, r2):
    assert r1["game"] == r2["game"] and r1["moves"] == r2["moves"] and r1["result"] == r2["result"], (r1, r2)
    assert r1["fork"] is None and r2["fork"] is None
    h1 = load_any(tmp_path / "b1" / "games" / f"{r1['game']}.jsonl")
    h2 = load_any(tmp_path / "b2" / "games" / f"{r2['game']}.jsonl")
    assert [str(a) for a in h1.actions] == [str(a) for a in h2.actions] == r1["moves"]
    for k in ("variant", "players"):
        assert h1.header.get(k) == h2.header.get(k), k
    assert h1.header.get("fen") == h2.header.get("fen")
    assert h1.header["remote"] == {"peer": "b2", "side": "black", "me": "b1"}
    assert h2.header["remote"] == {"peer": "b1", "side": "white", "me": "b2"}


def test_orthodox_game_over_the_broker(tmp_path, broker):
    lat = tmp_path / "latency.jsonl"
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(OPERA[0::2]), latency=lat)
    time.sleep(0.3)
    b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--moves", " ".join(OPERA[1::2]), latency=lat)
    r1, r2 = finish(tmp_path, [b1, b2])
    same_game(tmp_path, r1, r2)
    assert r1["moves"] == OPERA and r1["result"] == "1-0" and r1["reason"] == "checkmate"
    got = figures(lat)
    print("latency", got)       # the figures are tests/bench/bench_remote.py's; here: every move was seen
    assert got["n"] == len(OPERA) and got["previewed"] > 0, got


def test_sigkill_of_one_side_and_a_broker_restart_mid_game(tmp_path, broker):
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--seed", "3", "--resign-after", "40")
    time.sleep(0.3)
    b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--seed", "4", "--resign-after", "40")

    def plies(name):
        games = list((tmp_path / name / "games").glob("*.jsonl")) if (tmp_path / name / "games").exists() else []
        return len(load_any(games[0]).actions) if games else 0
    end = time.monotonic() + 20
    while plies("b2") < 10 and time.monotonic() < end:
        time.sleep(0.1)
    assert plies("b2") >= 10
    b2.send_signal(signal.SIGKILL)              # power cut: b1 plays on to the point it waits for b2
    b2.wait(5)
    time.sleep(1.0)
    broker.kill()                               # and the broker dies, forgetting everything
    time.sleep(0.5)
    broker.start()
    b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--seed", "5", "--resign-after", "40")
    end = time.monotonic() + 15
    while plies("b2") < 20 and time.monotonic() < end:
        time.sleep(0.1)
    broker.kill()                               # once more, mid-game, with both sides up
    time.sleep(1.0)
    broker.start()
    r1, r2 = finish(tmp_path, [b1, b2], timeout=60)
    same_game(tmp_path, r1, r2)
    assert r1["result"] is not None and len(r1["moves"]) >= 20
    assert "Resumed game" in (tmp_path / "b2.out").read_text()


def plies_of(tmp_path, name) -> int:
    games = list((tmp_path / name / "games").glob("*.jsonl")) if (tmp_path / name / "games").exists() else []
    return len(load_any(games[0]).actions) if games else 0


def wait_for(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_b1_s_record_parting_stops_both_boards_and_remote_adopt_goes_on(tmp_path, broker):
    """b1's board says (signed with the game's key, as only b1 can) that its record has another
    position after White's next move: b2 carries its own move out, finds the records part there and
    stops; b1, told by b2's state, stops too (nobody plays on); `remote adopt` on b1 (the shorter
    record) takes b2's, b2 agrees again and the game goes on to its end with the same actions in
    both journals. The same record from someone with b1's password but not the key was dropped."""
    import paho.mqtt.client as mqtt

    from board_driver.remote import signing
    cmds = tmp_path / "b1.commands"
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(OPERA[0::2]),
              "--hold-at", "2", "--hold-for", "3", "--commands", str(cmds), "--resign-after", "12")
    time.sleep(0.3)
    b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--moves", " ".join(OPERA[1::2]),
              "--resign-after", "12")
    wait_for(lambda: plies_of(tmp_path, "b2") >= 2, 20, "two plies on b2")
    gid = next((tmp_path / "b2" / "games").glob("*.jsonl")).stem
    states: dict = {}
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="forger", protocol=mqtt.MQTTv5)
    c.username_pw_set("b1", "pw-b1")
    c.on_message = lambda cl, u, m: states.update(json.loads(m.payload)) if m.payload else None
    c.connect("127.0.0.1", broker.port)
    c.loop_start()
    try:
        c.subscribe(f"fairyboard/b2/remote/b1/{gid}/state", 1)
        wait_for(lambda: states.get("n") == 2, 5, "b2's state after two plies")
        forged = {"seq": 2, "action": "d2d4", "side": "white", "hash": "0" * 16, "prev": states["hash"],
                  "t": time.time()}
        topic = f"fairyboard/b1/remote/b2/{gid}/action"
        c.publish(topic, json.dumps(forged), qos=1).wait_for_publish(5)      # b1's password, not the key
        wait_for(lambda: "Dropped an action message not signed by b1's board" in
                 (tmp_path / "b2.out").read_text(), 15, "b2 to drop the unsigned record")
        key = signing.load_key(tmp_path / "b1" / "games" / f"{gid}.jsonl")
        assert key is not None and key == signing.load_key(tmp_path / "b2" / "games" / f"{gid}.jsonl")
        forged["t"] = time.time()
        forged["mac"] = signing.mac(key, sender="b1", receiver="b2", game=gid, kind="action", payload=forged)
        c.publish(topic, json.dumps(forged), qos=1).wait_for_publish(5)
    finally:
        c.loop_stop()
        c.disconnect()
    out = lambda n: (tmp_path / f"{n}.out").read_text()     # noqa: E731
    wait_for(lambda: "b2 says the two boards disagree" in out("b1"), 15, "both boards to stop")
    assert "The two boards disagree" in out("b2") and "part at action 3" in out("b2")
    assert "action 3 (d2d4) leads to another position there" in out("b2")
    time.sleep(3.5)                                         # past b1's pause: still nobody plays on
    assert plies_of(tmp_path, "b1") == 2 and plies_of(tmp_path, "b2") == 3
    cmds.write_text("remote adopt\n")
    r1, r2 = finish(tmp_path, [b1, b2])
    same_game(tmp_path, r1, r2)
    assert r1["moves"][:3] == ["e2e4", "e7e5", "d2d4"] and r1["result"] is not None
    assert "Took b2's record: 3 actions (0 of this board's taken back)" in out("b1")
    assert "agree again" in out("b2")




def test_each_side_s_clock_is_its_own_board_s(tmp_path, broker):
    """With clocks, the time a board's player has left after each of its moves goes with the
    move; the other board takes it as is (a journaled adjustment), so the transmission (and the
    carrying out) is charged to neither player."""
    b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(OPERA[0::2]),
              "--clock", "300+0", "--resign-after", "10")
    said(tmp_path, "b1", "Invited b2")      # b1's invitation (with the clock) is the one b2 accepts
    b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--moves", " ".join(OPERA[1::2]),
              "--resign-after", "10")
    r1, r2 = finish(tmp_path, [b1, b2])
    same_game(tmp_path, r1, r2)

    def recs(name):
        path = tmp_path / name / "games" / f"{r1['game']}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line]

    def own_times(name, color):     # the mover's time after each of its own pushes, by ply
        out, ply = {}, 0
        for r in recs(name):
            if r["type"] == "push":
                if ply % 2 == color:
                    out[ply] = r["clk"][color]
                ply += 1
        return out

    def adjusted(name, color):
        return {r["ply"]: r["clk"][color] for r in recs(name)
                if r["type"] == "clock" and r.get("op") == "adjust" and r.get("color") == ("white", "black")[color]}

    w1, a2 = own_times("b1", 0), adjusted("b2", 0)
    b2t, a1 = own_times("b2", 1), adjusted("b1", 1)
    assert w1 and b2t and set(a2) <= set(w1) and set(a1) <= set(b2t)
    assert len(a2) >= len(w1) - 1 and len(a1) >= len(b2t) - 1, (w1, a2, b2t, a1)
    assert all(a2[p] == w1[p] for p in a2) and all(a1[p] == b2t[p] for p in a1), (w1, a2, b2t, a1)


def test_on_a_broker_without_acl_a_third_client_cannot_put_a_move_on_a_board(tmp_path):
    """No ACL: b3 (any club member) reads and writes every topic. While b1 (White) thinks over its
    second move, b3 sends b2 a legal move for b1 with the right hashes, a state saying the boards
    disagree, and a record two past the end with a bogus hash. b2 drops each (said once), nothing
    stops (one notice for the three), b1's real move is the one carried out and the game goes on
    to the same end on both."""
    import paho.mqtt.client as mqtt

    from board_driver.config import load_variant
    from board_driver.remote.protocol import position_hash
    from engine.game import new_game
    broker = Broker(tmp_path / "broker", {"b1": "pw-b1", "b2": "pw-b2", "b3": "pw-b3"}, acl=False).start()
    try:
        b1 = side(tmp_path, broker, "b1", "--black", "remote:b2", "--moves", " ".join(OPERA[0::2]),
                  "--hold-at", "2", "--hold-for", "4")
        time.sleep(0.3)
        b2 = side(tmp_path, broker, "b2", "--white", "remote:b1", "--moves", " ".join(OPERA[1::2]))
        states: dict = {}
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="third", protocol=mqtt.MQTTv5)
        c.username_pw_set("b3", "pw-b3")
        c.on_message = lambda cl, u, m: states.update(json.loads(m.payload)) if m.payload else None
        c.connect("127.0.0.1", broker.port)
        c.loop_start()
        try:
            c.subscribe("fairyboard/b2/remote/b1/+/state", 1)       # no ACL: b3 reads b2's word to b1
            wait_for(lambda: states.get("n") == 2, 20, "b2's state after e2e4 e7e5")
            gid = next((tmp_path / "b2" / "games").glob("*.jsonl")).stem
            g = new_game(load_variant("orthodox"))
            for m in ("e2e4", "e7e5"):
                g.push(g.parse(m))
            prev = position_hash(g)
            assert prev == states["hash"]
            g.push(g.parse("h2h3"))                                  # legal for b1 (White), not what b1 plays
            now = time.time()
            for kind, payload in (
                    ("action", {"seq": 2, "action": "h2h3", "side": "white", "hash": position_hash(g), "prev": prev,
                                "t": now}),
                    ("state", {"n": 3, "hash": position_hash(g), "have": 2, "result": None, "fork": "forged",
                               "t": now}),
                    ("action", {"seq": 4, "action": "a2a3", "side": "white", "hash": "0" * 16, "prev": "1" * 16,
                                "t": now})):
                c.publish(f"fairyboard/b1/remote/b2/{gid}/{kind}", json.dumps(payload), qos=1).wait_for_publish(5)
        finally:
            c.loop_stop()
            c.disconnect()
        said(tmp_path, "b2", "Dropped an action message not signed by b1's board", 15)
        r1, r2 = finish(tmp_path, [b1, b2])
    finally:
        broker.stop()
    same_game(tmp_path, r1, r2)
    assert r1["moves"] == OPERA and r1["result"] == "1-0"
    out2 = (tmp_path / "b2.out").read_text()
    assert "disagree" not in out2 and "h2h3" not in out2 and "plays h3" not in out2
    dropped = {line for line in out2.splitlines() if "Dropped " in line}
    assert dropped == {"[b2] Dropped an action message not signed by b1's board: it changes nothing, play goes on."}
    assert "check code" in out2
