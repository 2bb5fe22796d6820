"""One board cannot stop the recorder: whatever a board publishes on its own topics (the ACL
lets it), every field is checked; a bad message is logged, set aside and acknowledged, and every
other board's games go on being stored, across a restart of the recorder too."""

from __future__ import annotations

import json
import time

import pytest
from clubtools import OPERA
from test_club_faults import raw_client, same_as_journal, settle

from board_driver.club import topics

BAD_RECORDS = [
    b'{"seq":%d,"rec":{"type":"push","ply":1,"action":"e2e4","w":0}}' % 2 ** 63,         # past SQLite's integers
    b'{"seq":1,"t":1%s,"rec":{"type":"push","ply":1,"action":"e2e4","w":0}}' % (b"0" * 400),   # no float
    b'{"seq":1,"t":NaN,"rec":{"type":"push","ply":1,"action":"e2e4","w":0}}',
    b'{"seq":1,"t":-5,"rec":{"type":"push","ply":1,"action":"e2e4","w":0}}',
    b'{"seq":-1,"rec":{"type":"push"}}',
    b'{"seq":true,"rec":{"type":"push"}}',
    b'{"seq":1.5,"rec":{"type":"push"}}',
    b'{"seq":1,"rec":{"type":7}}',
    b'{"seq":1,"rec":[1,2]}',
    b'{"seq":1%s,"rec":{"type":"push"}}' % (b"0" * 5000),                                     # no int either
    b'{"seq":1,"rec":{"type":"push","x":' + b"[" * 5000 + b"]" * 5000 + b"}}",               # too deep
    b'{"seq":1,"rec":{"type":"push","x":"' + b"a" * 70_000 + b'"}}',                          # too big
    b'\xff\xfe not utf-8',
    b'[1, 2, 3]',
]


@pytest.mark.slow
def test_one_board_cannot_stop_the_recorder(make_board, make_recorder, broker):
    rec = make_recorder()
    b1 = make_board("b1")
    g1 = b1.new_game()
    b1.move("e2e4", 1)
    assert settle(rec, b1, g1, 10)
    bad, rc = raw_client(broker, "b2", "pw-b2")        # b2 on its own topics: the ACL allows all of it
    assert not rc.is_failure
    gid = "20250101-120000"
    header = json.dumps({"type": "game", "variant": {"x": 1}, "players": ["a", "b"], "date": 5})
    sent = [bad.publish(topics.record("fairyboard", "b2", gid), p, qos=1) for p in BAD_RECORDS]
    sent += [bad.publish(topics.state("fairyboard", "b2", gid), json.dumps({"seq": 2 ** 63}), qos=1),
             bad.publish(topics.state("fairyboard", "b2", gid), b'{"seq": 1e999}', qos=1),
             bad.publish(topics.presence("fairyboard", "b2"), json.dumps({"online": "yes"}), qos=1),
             bad.publish(topics.health("fairyboard", "b2"), b"[]", qos=1),
             # a header whose fields are of the wrong kinds: stored (it is the board's line), shown as unknown
             bad.publish(topics.record("fairyboard", "b2", gid), b'{"seq":0,"rec":%s}' % header.encode(), qos=1),
             bad.publish(topics.record("fairyboard", "b2", gid),
                         b'{"seq":1,"rec":{"type":"push","ply":1,"action":{"a":1},"w":0}}', qos=1)]
    for info in sent:
        info.wait_for_publish(5)
    bad.loop_stop()
    bad.disconnect()
    for i, m in enumerate(OPERA[1:8], 2):              # the other board plays on
        b1.move(m, i)
    assert settle(rec, b1, g1, 10), rec.store.seqs("b1", g1)
    assert rec.wait_for(lambda: rec.store.seqs("b2", gid) == [0, 1], 5)
    n_bad = len(BAD_RECORDS) + 4
    assert rec.wait_for(lambda: len(rec.store.set_aside_rows()) == n_bad, 5), rec.store.set_aside_rows()
    reasons = [r["reason"] for r in rec.store.set_aside_rows()]
    assert all(r["board"] == "b2" for r in rec.store.set_aside_rows())
    assert reasons[0].startswith("seq an integer of 64 bits is not a line number")
    assert reasons[1].startswith("t an integer of 1329 bits is not a time")
    assert any("nested too deeply" in r for r in reasons) and any("a payload of" in r for r in reasons)
    g = rec.store.games("b2")[0]
    # neither line is a record (board_driver.records reads neither): stored as the board's lines, counted as nothing
    assert (g["variant"], g["players"], g["date"], g["actions"], g["last_action"]) == (None, {}, None, 0, None)
    from board_driver.club.web import Positions, boards_data, boards_fragment
    data = boards_data(rec.store, Positions())          # the page still draws every board
    assert [d["board"] for d in data] == ["b1", "b2"] and "fen" in data[0]["position"]
    assert "b2" in boards_fragment(data)
    # restarted, the recorder gets none of the bad messages again (acknowledged) and goes on
    rec.close()
    rec.store.close()
    rec = make_recorder()
    for i, m in enumerate(OPERA[8:12], 9):
        b1.move(m, i)
    assert settle(rec, b1, g1, 10)
    time.sleep(0.5)
    assert len(rec.store.set_aside_rows()) == n_bad and rec.refused == 0


def test_a_message_that_fails_in_the_store_is_set_aside_not_retried(make_recorder, make_board, broker):
    """Whatever slips past the checks and fails in the store (here: a record the store cannot
    take) is found by storing its batch message by message, set aside and acknowledged."""
    rec = make_recorder()
    real = rec.store.add_records

    def picky(items, **kw):
        if any(it[0] == "b2" for it in items):
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return real(items, **kw)
    rec.store.add_records = picky
    c, rc = raw_client(broker, "b2", "pw-b2")
    c.publish(topics.record("fairyboard", "b2", "g"), b'{"seq":0,"rec":{"type":"game"}}', qos=1).wait_for_publish(5)
    b1 = make_board("b1")
    g1 = b1.new_game()
    for i, m in enumerate(OPERA[:4], 1):
        b1.move(m, i)
    assert settle(rec, b1, g1, 10)
    assert rec.wait_for(lambda: len(rec.store.set_aside_rows()) == 1, 5)
    row = rec.store.set_aside_rows()[0]
    assert row["board"] == "b2" and "OverflowError" in row["reason"]
    c.loop_stop()
    c.disconnect()



@pytest.mark.slow
def test_the_first_body_stays_and_another_is_set_aside_and_reported(make_board, make_recorder, broker):
    """A second body for a line already stored, sent with the board's own credentials, changes
    nothing: the line keeps its first body, the other is kept among the conflicts once and
    reported (the recorder's log, `fairyboard conflicts`). A body forged ahead of the board is
    stored first; the board's own line then shows as the conflict, and the documented correction
    (`fairyboard conflicts --take ID`) puts it in place."""
    import subprocess
    import sys
    logged: list[str] = []
    rec = make_recorder(grace=0.3, retry=1.0)
    rec.log = logged.append
    b = make_board("b1")
    gid = b.new_game()
    b.move("e2e4", 1)
    assert settle(rec, b, gid, 10)
    forger, rc = raw_client(broker, "b1", "pw-b1", client_id="forger")
    assert not rc.is_failure
    fake = b'{"seq":%d,"t":1.0,"rec":{"type":"push","ply":%d,"action":"h2h4","w":0}}'
    stored3 = rec.store.journal_lines("b1", gid)[3]
    for _ in range(2):                                  # the same forgery twice: one conflict
        forger.publish(topics.record("fairyboard", "b1", gid), fake % (3, 1), qos=1).wait_for_publish(5)
    assert rec.wait_for(lambda: len(rec.store.conflicts()) == 1, 5)
    assert rec.store.journal_lines("b1", gid)[3] == stored3 and rec.store.games("b1")[0]["last_action"] == "e2e4"
    c = rec.store.conflicts()[0]
    assert (c["board"], c["game"], c["seq"], c["stored"]) == ("b1", gid, 3, stored3) and '"h2h4"' in c["body"]
    assert rec.wait_for(lambda: any(f"b1's game {gid}: line 3 came again with another body" in line
                                    for line in logged), 5), logged
    # ahead of the board: its line 6 is the next move's action
    forger.publish(topics.record("fairyboard", "b1", gid), fake % (6, 2), qos=1).wait_for_publish(5)
    assert rec.wait_for(lambda: 6 in rec.store.seqs("b1", gid), 5)
    b.move("e7e5", 2)
    b.move("g1f3", 3)
    own6 = b.lines(gid)[6]
    assert rec.wait_for(lambda: any(x["seq"] == 6 and x["body"] == own6 for x in rec.store.conflicts()), 10)
    cli = [sys.executable, "-m", "board_driver.cli", "conflicts", "--db", str(rec.store.path)]
    listed = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and listed.stdout.splitlines()[-1].startswith("2 conflicts in "), listed
    assert f"b1/{gid} line 6: stored " in listed.stdout and f"b1/{gid} line 3: stored " in listed.stdout
    cid = next(x["id"] for x in rec.store.conflicts() if x["seq"] == 6)
    took = subprocess.run(cli + ["--take", str(cid)], capture_output=True, text=True, timeout=60)
    assert took.returncode == 0 and f"line 6: conflict {cid}'s body is stored now" in took.stdout, took
    assert settle(rec, b, gid, 10), rec.store.journal_lines("b1", gid)      # the store is the board's journal again
    assert rec.store.games("b1")[0]["last_action"] == "g1f3" and rec.store.games("b1")[0]["actions"] == 3
    assert sorted(x["seq"] for x in rec.store.conflicts()) == [3, 6]       # the forged body kept, set aside
    bad = subprocess.run(cli + ["--take", "999"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "no conflict 999" in bad.stderr
    forger.loop_stop()
    forger.disconnect()
