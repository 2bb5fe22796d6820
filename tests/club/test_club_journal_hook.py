"""The journal's observer hook: each record once, after the fsync that covers it, numbered by
its line in the file."""

from __future__ import annotations

from board_driver import journal
from board_driver.journal import GameStore, read_records


def broken(gid, seq, rec):
    raise RuntimeError("observer bug")


def test_observer_sees_records_after_fsync_numbered_by_line(tmp_path):
    store = GameStore(tmp_path)
    seen = []

    def obs(gid, seq, rec):
        seen.append((gid, seq, rec))
    journal.add_observer(obs)
    try:
        gid, j = store.create("orthodox", "startfen")
        assert seen == [(gid, 0, read_records(store.path(gid))[0])]
        j.write({"type": "event", "t": 1, "sq": "e2", "placed": False, "occ": "0"}, sync=False)
        j.write({"type": "push", "ply": 1, "action": "e2e4", "w": 0}, sync=False)
        assert len(seen) == 1                       # not on disk yet: nobody told
        j.sync()
        j.write({"type": "result", "result": "1-0", "reason": "resignation"}, sync=True)
        j.close()
        recs = read_records(store.path(gid))
        assert [(s, r) for _, s, r in seen] == list(enumerate(recs))
        journal.add_observer(broken)
        j2 = store.open(gid)                        # reopened: numbering goes on from the file
        j2.write({"type": "reopen"}, sync=True)
        j2.close()
        assert seen[-1][1:] == (4, {"type": "reopen"})
        assert len(read_records(store.path(gid))) == 5
    finally:
        journal.remove_observer(obs)
        journal.remove_observer(broken)
