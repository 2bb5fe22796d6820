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


def test_an_observer_of_one_data_folder_hears_only_its_games(tmp_path):
    """Two boards' folders in one process (the benchmark's boards), games with the same id:
    each folder's observer hears its own records only."""
    from datetime import datetime
    when = datetime(2026, 1, 1, 12, 0, 0).astimezone()
    heard = {"a": [], "b": []}
    obs = {k: (lambda gid, seq, rec, k=k: heard[k].append((gid, seq, rec["type"]))) for k in heard}
    for k in heard:
        journal.add_observer(obs[k], tmp_path / k)
    try:
        ga, ja = GameStore(tmp_path / "a").create("orthodox", "x", now=when)
        gb, jb = GameStore(tmp_path / "b").create("orthodox", "x", now=when)
        assert ga == gb                                        # the same id in both folders
        ja.write({"type": "push", "ply": 1, "action": "e2e4", "w": 0}, sync=True)
        ja.close()
        jb.close()
        assert heard == {"a": [(ga, 0, "game"), (ga, 1, "push")], "b": [(gb, 0, "game")]}
    finally:
        for fn in obs.values():
            journal.remove_observer(fn)
