"""The journal: nothing is shown before it is on disk, a resumed session is the same session."""

import json

from drivertools import Table

from board_driver.host import lifecycle
from board_driver.journal import GameStore, Journal, load_record, read_records
from board_driver.referee.runner import Display, pump
from board_driver.settings import load_profile, load_settings


class JournalWatchingSink:
    """An LED sink that, whenever a frame arrives, reads what the journal has on disk."""

    def __init__(self, board, store):
        self.board, self.store = board, store
        self.led_count = board.led_count
        self.seen = []

    def show(self, frame):
        gid = self.store.current()
        rec = load_record(self.store.path(gid))
        self.seen.append((frame, list(rec.actions)))
        self.board.show(frame)

    def close(self):
        pass


def test_the_leds_never_confirm_a_move_the_journal_does_not_have(tmp_path):
    t = Table(data=tmp_path)
    sink = JournalWatchingSink(t.board, t.store)
    t.display = Display(sink)
    for frm, to in (("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "b5")):
        t.move(frm, to)
    t.lift("c6").lift("b5").place("c6").settle()
    palette = t.settings.palette
    lay, geo = t.session.layout, t.session.game.geometry
    checked = 0
    for frame, on_disk in sink.seen:
        lit = {geo.name(lay.game_square(p)) for p, c in enumerate(frame.colors)
               if c == palette.last_move and lay.game_square(p) is not None}
        if lit:
            last = on_disk[-1]
            assert lit <= {last[:2], last[2:4]}, (lit, on_disk)
            checked += 1
    assert checked >= 6
    assert load_record(t.store.path(t.session.game_id)).actions == t.moves


def _resume(t: Table) -> Table:
    """What a restart does: a new session from the journal, on the same board."""
    s = lifecycle.resume(t.store, t.session.game_id, profile=load_profile("sim"), settings=load_settings(),
                       now=t.clock())
    t.session = s
    t.board.queue.append(t.board.current())
    t.display = Display(t.board)
    pump(s, t.board, t.display, t.clock())
    return t.settle()


def test_a_resumed_session_continues_a_capture_half_made(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4").move("d7", "d5")
    t.lift("e4").lift("d5").place("d5")          # White's capture, not yet committed...
    _resume(t)                                    # ... the process dies and comes back
    t.settle()
    assert t.moves == ["e2e4", "d7d5", "e4d5"]
    assert t.pending is None


def test_a_resumed_session_keeps_an_open_prompt_and_a_board_changed_meanwhile(tmp_path):
    t = Table(data=tmp_path, fen="4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    t.move("a7", "a8").settle()
    assert t.pending["type"] == "prompt"
    _resume(t)
    assert t.pending["type"] == "prompt" and t.moves == []
    t.say("choose n")
    assert t.moves == ["a7a8n"]
    t.board.lift("e8")                            # moved while the service was down
    t.board.place("d7")
    _resume(t)
    assert t.moves == ["a7a8n", "e8d7"]


def test_a_resumed_board_that_does_not_match_enters_recovery(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    t.board.lift("a2")                            # knocked off while the service was down
    t.board.lift("h7")
    _resume(t)
    p = t.pending
    assert p["type"] == "mismatch" and set(p["fill"]) == {"a2", "h7"}
    t.place("a2").place("h7").settle()
    assert t.pending is None and t.moves == ["e2e4"]


def test_a_torn_last_line_is_ignored_and_cut_before_the_next_record(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    path = t.store.path(t.session.game_id)
    t.session.close()
    with open(path, "ab") as f:
        f.write(b'{"type":"push","ply":2,"act')      # a write cut short by a power cut
    assert load_record(path).actions == ["e2e4"]
    _resume(t)
    t.move("e7", "e5")
    recs = read_records(path)
    assert [r["action"] for r in recs if r["type"] == "push"] == ["e2e4", "e7e5"]
    assert all(line.startswith(b"{") for line in path.read_bytes().splitlines())


def test_game_records_hold_variant_date_players_result_and_every_action(tmp_path):
    store = GameStore(tmp_path)
    s = lifecycle.start(store, "orthodox", profile=load_profile("sim"), settings=load_settings(),
                      players={"white": "Ann", "black": "Bob"})
    s.close()
    rec = store.load(s.game_id)
    assert rec.header["variant"] == "orthodox" and rec.header["players"] == {"white": "Ann", "black": "Bob"}
    assert rec.header["date"][:2] == "20" and rec.result is None
    assert store.current() == s.game_id
    t = Table(data=tmp_path / "b")
    for frm, to in (("f2", "f3"), ("e7", "e5"), ("g2", "g4"), ("d8", "h4")):
        t.move(frm, to)
    rec = t.store.load(t.session.game_id)
    assert rec.actions == ["f2f3", "e7e5", "g2g4", "d8h4"]
    assert (rec.result, rec.reason) == ("0-1", "checkmate")
    j = Journal(tmp_path / "x.jsonl")
    j.write({"type": "game"}, sync=True)
    j.close()
    assert json.loads((tmp_path / "x.jsonl").read_text()) == {"type": "game"}


def test_the_data_folder(monkeypatch, tmp_path):
    from board_driver.journal import data_dir
    monkeypatch.setenv("FAIRYBOARD_DATA", str(tmp_path / "fb"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "fb"
    monkeypatch.delenv("FAIRYBOARD_DATA")
    assert data_dir() == tmp_path / "xdg" / "fairyboard"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_dir() == tmp_path / "home" / ".local" / "share" / "fairyboard"


def test_a_board_event_is_in_the_file_when_its_step_ends_and_a_move_goes_with_its_last_event(tmp_path):
    from board_driver.records import as_dict
    t = Table(data=tmp_path)
    path = t.session.journal.path

    def lines():
        return [json.loads(x) for x in path.read_text().splitlines()]
    t.lift("e2")                                    # no move yet: the event is written by the step's end
    assert [r["sq"] for r in lines() if r["type"] == "event"] == ["e2"]
    writes = []
    real = t.session.journal.write_all
    t.session.journal.write_all = lambda recs, sync: (writes.append([as_dict(r)["type"] for r in t.session.journal._held + recs]),
                                                     real(recs, sync=sync))
    t.place("e4").wait(500)
    assert ["event", "push"] in writes              # the completing event and the move in one write
    assert [r["type"] for r in lines()][-2:] == ["event", "push"]
