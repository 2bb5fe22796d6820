"""Faults with a real broker process: the broker killed, the recorder killed, a board's link
cut while play goes on, copies and disorder, an impostor. In every one the recorder's store ends
with each journal record exactly once (the primary key would refuse a second copy; the test
compares the whole sequence with the board's own journal)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time

import pytest
from clubtools import OPERA, TcpProxy

pytestmark = pytest.mark.slow          # a real broker killed, cut and restarted


def same_as_journal(store, board, gid, lines) -> bool:
    return (store.seqs(board, gid) == list(range(len(lines)))
            and [json.loads(x) for x in store.journal_lines(board, gid)] == [json.loads(x) for x in lines])


def settle(rec, board, gid, timeout=20.0) -> bool:
    return rec.wait_for(lambda: same_as_journal(rec.store, board.name, gid, board.lines(gid)), timeout)


def raw_client(broker, user, password, *, client_id=None):
    """A plain paho client; returns (client, connack reason code)."""
    import paho.mqtt.client as mqtt
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id or f"raw-{user}-{random.random()}",
                    protocol=mqtt.MQTTv311)
    if user:
        c.username_pw_set(user, password)
    done = threading.Event()
    result = {}

    def on_connect(client, userdata, flags, rc, props=None):
        result["rc"] = rc
        done.set()

    def on_disconnect(client, userdata, flags, rc, props=None):
        result.setdefault("rc", rc)
        done.set()
    c.on_connect = on_connect
    c.on_disconnect = on_disconnect
    c.connect("127.0.0.1", broker.port, keepalive=5)
    c.loop_start()
    assert done.wait(10)
    return c, result["rc"]


def test_broker_killed_and_restarted_mid_game(make_board, make_recorder, broker):
    rec = make_recorder()
    b = make_board("b1")
    gid = b.new_game()
    for i, m in enumerate(OPERA[:10], 1):
        b.move(m, i)
    broker.kill()                                   # forgets every session and retained message
    for i, m in enumerate(OPERA[10:20], 11):        # play goes on: the journal is the queue
        b.move(m, i)
    time.sleep(0.3)
    broker.start()
    for i, m in enumerate(OPERA[20:], 21):
        b.move(m, i)
    b.finish("1-0", "checkmate")
    assert settle(rec, b, gid), (rec.store.seqs("b1", gid), len(b.lines()))
    g = rec.store.games("b1")[0]
    assert g["result"] == "1-0" and g["actions"] == len(OPERA)


def _recorder_process(tmp_path, broker):
    (tmp_path / "rec.pass").write_text("pw-rec\n")
    return subprocess.Popen([sys.executable, "-m", "board_driver.cli", "recorder", "--broker",
                             f"127.0.0.1:{broker.port}", "--password-file", str(tmp_path / "rec.pass"),
                             "--db", str(tmp_path / "club.sqlite")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_recorder_killed_and_restarted(tmp_path, make_board, broker):
    from board_driver.club.store import RecorderStore
    b1, b2 = make_board("b1"), make_board("b2")
    g1, g2 = b1.new_game(), b2.new_game()
    proc = _recorder_process(tmp_path, broker)
    try:
        store = None
        deadline = time.monotonic() + 20
        for i, m in enumerate(OPERA[:12], 1):
            b1.move(m, i)
            b2.move(m, i)
        while time.monotonic() < deadline:          # until it has stored something
            if (tmp_path / "club.sqlite").exists():
                store = store or RecorderStore(tmp_path / "club.sqlite", readonly=True)
                try:
                    if store.count() > 5:
                        break
                except Exception:
                    pass
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)           # mid-game, mid-batch perhaps
        proc.wait(10)
        for i, m in enumerate(OPERA[12:], 13):
            b1.move(m, i)
            b2.move(m, i)
        b1.finish("1-0", "checkmate")
        proc = _recorder_process(tmp_path, broker)
        b2.move("a2a3", len(OPERA) + 1)
        ro = RecorderStore(tmp_path / "club.sqlite", readonly=True)
        deadline = time.monotonic() + 25
        ok = False
        while time.monotonic() < deadline and not ok:
            ok = (same_as_journal(ro, "b1", g1, b1.lines()) and same_as_journal(ro, "b2", g2, b2.lines()))
            time.sleep(0.2)
        assert ok, (ro.seqs("b1", g1), len(b1.lines()), ro.seqs("b2", g2), len(b2.lines()))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def test_network_cut_while_play_goes_on(make_board, make_recorder, broker):
    rec = make_recorder()
    proxy = TcpProxy(broker.port)
    try:
        b = make_board("b1", port=proxy.port)
        gid = b.new_game()
        for i, m in enumerate(OPERA[:6], 1):
            b.move(m, i)
        assert settle(rec, b, gid, 10)
        assert rec.wait_for(lambda: rec.store.boards()[0]["online"] is True, 5)
        proxy.cut()                                 # the board's cable pulled
        for i, m in enumerate(OPERA[6:], 7):
            b.move(m, i)
            time.sleep(0.03)
        last_move = time.time()
        # the broker saw the link die: the board's last will says it is gone
        assert rec.wait_for(lambda: rec.store.boards()[0]["online"] is False, 10)
        assert rec.store.games("b1")[0]["actions"] == 6
        assert b.pub.pending() > 0
        time.sleep(0.5)
        proxy.restore()
        b.finish("1-0", "checkmate")
        assert settle(rec, b, gid)
        g = rec.store.games("b1")[0]                # the last move's time: when it was played
        assert g["last_move_at"] <= last_move < g["updated_at"] - 0.4
        assert rec.wait_for(lambda: rec.store.boards()[0]["online"] is True, 5)
        assert b.pub.wait_idle(5)
    finally:
        proxy.close()


def test_copies_and_disorder_and_a_hole_asked_for(make_board, make_recorder, broker):
    """Records delivered twice and shuffled, one missing: the store keeps each once, in its
    place, and the recorder asks the board for the missing one."""
    from board_driver.club import topics
    rec = make_recorder(grace=0.3, retry=1.0)
    b = make_board("b2", start=False)               # its journal only: this test speaks for it
    gid = b.new_game()
    for i, m in enumerate(OPERA[:8], 1):
        b.move(m, i)
    lines = b.lines()
    c, rc = raw_client(broker, "b2", "pw-b2")
    assert not rc.is_failure
    asked = []
    c.on_message = lambda client, userdata, msg: asked.append(json.loads(msg.payload))
    c.subscribe(topics.resend("fairyboard", "b2"), qos=1)
    hole = 7
    order = [s for s in range(len(lines)) if s != hole]
    order = order + random.Random(5).sample(order, 10)      # copies
    random.Random(7).shuffle(order)
    for s in order:
        c.publish(topics.record("fairyboard", "b2", gid), b'{"seq":%d,"rec":%s}' % (s, lines[s].encode()), qos=1)
    assert rec.wait_for(lambda: rec.store.seqs("b2", gid) == [s for s in range(len(lines)) if s != hole], 10)
    assert rec.store.games("b2")[0]["contig"] == hole
    assert rec.wait_for(lambda: {"game": gid, "from": hole} in asked, 10), asked
    c.publish(topics.record("fairyboard", "b2", gid), b'{"seq":%d,"rec":%s}' % (hole, lines[hole].encode()), qos=1)
    assert rec.wait_for(lambda: same_as_journal(rec.store, "b2", gid, lines), 10)
    g = rec.store.games("b2")[0]
    assert (g["contig"], g["actions"], g["last_action"]) == (len(lines), 8, OPERA[7])
    # a record that contradicts its place (a header past 0) is refused, not stored
    c.publish(topics.record("fairyboard", "b2", gid), b'{"seq":99,"rec":%s}' % lines[0].encode(), qos=1)
    c.publish(topics.record("fairyboard", "b2", gid), b'not json', qos=1)
    time.sleep(0.5)
    assert rec.store.seqs("b2", gid) == list(range(len(lines)))
    c.loop_stop()
    c.disconnect()


def test_board_answers_a_resend_request_from_its_journal(make_board, make_recorder, broker):
    from board_driver.club import topics
    rec = make_recorder()
    b = make_board("b3")
    gid = b.new_game()
    for i, m in enumerate(OPERA[:5], 1):
        b.move(m, i)
    assert settle(rec, b, gid, 10)
    assert b.pub.wait_idle(5)
    c, rc = raw_client(broker, "recorder", "pw-rec")
    got = []
    topic = topics.record("fairyboard", "b3", gid)
    c.on_message = lambda client, userdata, msg: msg.topic == topic and got.append(json.loads(msg.payload)["seq"])
    c.subscribe(topic, qos=1)
    time.sleep(0.3)
    c.publish(topics.resend("fairyboard", "b3"), json.dumps({"game": gid, "from": 4}), qos=1)
    n = len(b.lines())
    assert rec.wait_for(lambda: got == list(range(4, n)), 10), got
    c.loop_stop()
    c.disconnect()
    assert same_as_journal(rec.store, "b3", gid, b.lines())


def test_impostor_is_refused(make_board, make_recorder, broker):
    """A board cannot publish under another board's name: not with its own credentials (the
    ACL), not with a wrong password, not anonymously."""
    if not broker.secured:
        pytest.skip(f"{broker.kind} runs here without passwords and ACL (install mosquitto)")
    from board_driver.club import topics
    rec = make_recorder()
    b1 = make_board("b1")
    gid = b1.new_game()
    b1.move("e2e4", 1)
    assert settle(rec, b1, gid, 10)
    fake = b'{"seq":%d,"rec":{"type":"push","ply":%d,"action":"a7a5","w":0}}'
    c, rc = raw_client(broker, "b2", "pw-b2")       # b2's own credentials, b1's name in the topic
    assert not rc.is_failure
    for s in (4, 5):
        c.publish(topics.record("fairyboard", "b1", gid), fake % (s, s), qos=1).wait_for_publish(5)
    c.publish(topics.state("fairyboard", "b1", gid), json.dumps({"seq": 40}), qos=1, retain=True).wait_for_publish(5)
    c.publish(topics.record("fairyboard", "b1", "forged"), b'{"seq":0,"rec":{"type":"game"}}', qos=1).wait_for_publish(5)
    c.loop_stop()
    c.disconnect()
    for user, pw in (("b1", "wrong"), ("", None)):
        bad, rc = raw_client(broker, user, pw)
        assert rc.is_failure, (user, rc)
        bad.loop_stop()
    b1.move("e7e5", 2)
    assert settle(rec, b1, gid, 10)
    time.sleep(0.5)
    assert [g["game"] for g in rec.store.games("b1")] == [gid]
    assert rec.store.games("b1")[0]["known"] <= len(b1.lines())
    assert same_as_journal(rec.store, "b1", gid, b1.lines())


@pytest.mark.slow
def test_restarted_board_sends_what_was_not_acknowledged(make_board, make_recorder, broker):
    """The board stops while the broker is down; restarted, it sends on its own (nobody asks:
    the recorder is away) what was never acknowledged, from its journal and cursor. The broker
    taking the records is not delivery: the cursor moves only once the recorder has them."""
    rec = make_recorder()
    b = make_board("b4")
    gid = b.new_game()
    for i, m in enumerate(OPERA[:4], 1):
        b.move(m, i)
    assert settle(rec, b, gid, 10)
    assert b.pub.wait_idle(5)
    rec.close()
    broker.kill()
    for i, m in enumerate(OPERA[4:9], 5):
        b.move(m, i)
    b.stop()                                       # the board's service stops (power, update ...)
    cursor = b.folder / "club" / "acked" / gid
    before = int(cursor.read_text())
    assert before == 1 + 3 * 4 < len(b.lines())
    broker.start()                                 # without its memory: no session of the recorder
    b.start()                                      # a new publisher: it counts from 0
    assert rec.wait_for(lambda: b.pub.published >= len(b.lines()) - before, 10)   # sent on its own
    time.sleep(1.0)
    assert b.pub.pending() == len(b.lines()) - before       # the broker took them; the recorder has not
    b.stop()
    assert int(cursor.read_text()) == before
    b.start()
    rec = make_recorder()                          # back: asks for what it missed meanwhile
    assert settle(rec, b, gid)
    assert b.pub.wait_idle(10)
    b.stop()
    assert int(cursor.read_text()) == len(b.lines())      # every record acknowledged by the recorder


@pytest.mark.slow
def test_refused_publishes_are_not_counted_as_delivered(make_board, make_recorder, broker):
    """A board the ACL does not let publish (here: a prefix the ACL does not name) loses nothing
    silently: the broker's MQTT 5 acknowledgement says "Not authorized", the board logs it, and
    its cursor stays where the recorder's word left it (nothing). A profile whose user name is
    not its board name is refused before anything starts."""
    import dataclasses

    from board_driver.club.publisher import Publisher
    from board_driver.errors import ConfigError
    if not broker.secured:
        pytest.skip(f"{broker.kind} runs here without passwords and ACL (install mosquitto)")
    make_recorder()
    b = make_board("b1", start=False)
    with pytest.raises(ConfigError, match="username 'b2' is not the board's name 'b1'"):
        Publisher(dataclasses.replace(b.cfg, username="b2", password="pw-b2"), b.folder)
    b.cfg = dataclasses.replace(b.cfg, prefix="elsewhere")
    said = []
    gid = b.new_game()
    for i, m in enumerate(OPERA[:3], 1):
        b.move(m, i)
    b.pub = Publisher(b.cfg, b.folder, window=b.window, log=said.append).start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any("refused" in x for x in said):
        time.sleep(0.05)
    assert any("the broker refused a record of board b1 (Not authorized)" in x for x in said), said
    time.sleep(0.5)
    assert b.pub.pending() == len(b.lines())
    b.stop()
    cursor = b.folder / "club" / "acked" / gid
    assert not cursor.exists() or int(cursor.read_text()) == 0
