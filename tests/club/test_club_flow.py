"""A board's games reach the recorder's store exactly as journaled, through a real broker."""

from __future__ import annotations

from clubtools import OPERA


def test_game_reaches_store_line_for_line(make_board, make_recorder):
    rec = make_recorder()
    b = make_board("b1")
    gid = b.new_game()
    for i, m in enumerate(OPERA, 1):
        b.move(m, i)
    b.finish("1-0", "checkmate")
    want = b.lines()
    assert rec.wait_for(lambda: len(rec.store.journal_lines("b1", gid)) == len(want), 10)
    import json
    assert [json.loads(x) for x in rec.store.journal_lines("b1", gid)] == [json.loads(x) for x in want]
    assert rec.store.seqs("b1", gid) == list(range(len(want)))
    g = rec.store.games("b1")[0]
    assert (g["result"], g["reason"], g["actions"], g["last_action"]) == ("1-0", "checkmate", len(OPERA), "d1d8")
    assert b.pub.wait_idle(5)
