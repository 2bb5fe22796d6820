"""What happened while nobody watched: the board is read at every start, resume and reconnect,
and the new occupancy is explained by legal actions from the journaled position."""


from drivertools import Table

from board_driver.devices import RawFrame
from board_driver.host import lifecycle
from board_driver.host.link import WatchedSource
from board_driver.referee.runner import Display
from board_driver.settings import load_profile, load_settings
from board_driver.sim.events import Ev, play_events


def _down(t: Table, *steps: str) -> None:
    """Pieces moved on the board while the program is not running (no frame is seen)."""
    for step in steps:
        kind, sq = step.split()
        getattr(t.board, kind)(sq)
    t.board.queue.clear()


def _restart(t: Table) -> Table:
    """A new session from the journal; it reads the board before anything else."""
    t.session.close()
    t.session = lifecycle.resume(t.store, t.session.game_id, profile=load_profile("sim"), settings=load_settings(),
                               now=t.clock())
    t.display = Display(t.board)
    t.session.read_board(t.board.current())
    t.display.update(t.session)
    return t.settle()


def test_a_move_made_while_down_is_recognised(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    _down(t, "lift e7", "place e5")
    _restart(t)
    assert t.moves == ["e2e4", "e7e5"] and t.pending is None


def test_a_capture_made_while_down_is_asked_about_and_taken_when_the_game_goes_on(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4").move("d7", "d5")
    _down(t, "lift d5", "lift e4", "place d5")    # exd5: the board shows only e4 emptied
    _restart(t)
    assert t.moves == ["e2e4", "d7d5"]
    p = t.pending
    assert p["type"] == "prompt" and p["options"] == ["e4d5"] and p["default"] == "e4d5"
    assert t.led("d5") == "prompt"
    t.move("g8", "f6").settle()                  # Black moves on: the capture was made
    assert t.moves == ["e2e4", "d7d5", "e4d5", "g8f6"] and t.pending is None


def test_the_capturer_in_the_hand_at_the_restart_is_a_move_when_it_is_set_down(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4").move("d7", "d5")
    _down(t, "lift e4")                           # White was holding the pawn
    _restart(t)
    t.place("e5").settle()
    assert t.moves == ["e2e4", "d7d5", "e4e5"] and t.pending is None


def test_a_capture_completed_while_down_after_the_capturers_lift_was_journaled_is_asked_and_taken(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4").move("d7", "d5")
    t.lift("e4")                                  # journaled before the kill
    _down(t, "lift d5", "place d5")               # exd5 completed: the board shows what the journal does
    _restart(t)
    p = t.pending
    assert t.moves == ["e2e4", "d7d5"] and p["type"] == "prompt" and p["options"] == ["e4d5"]
    assert p["default"] == "e4d5"
    t.move("g8", "f6").settle()                  # Black moves on: the capture was made
    assert t.moves == ["e2e4", "d7d5", "e4d5", "g8f6"] and t.pending is None
    t.move("c2", "c4").lift("d5").move("f6", "d5").settle()    # and the game goes on: c4 Nxd5
    assert t.moves[-2:] == ["c2c4", "f6d5"] and t.pending is None


def test_the_capturer_still_in_the_hand_after_its_lift_was_journaled_is_the_move_set_down(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4").move("d7", "d5")
    t.lift("e4")
    _restart(t)                                   # nothing happened meanwhile
    t.place("e5").settle()
    assert t.moves == ["e2e4", "d7d5", "e4e5"] and t.pending is None


def test_a_capture_completed_while_down_after_both_lifts_were_journaled_is_taken(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4").move("d7", "d5")
    t.lift("e4").lift("d5")
    _down(t, "place d5")
    _restart(t)
    assert t.moves == ["e2e4", "d7d5", "e4d5"] and t.pending is None


def test_two_captures_that_explain_the_board_are_shown_and_asked(tmp_path):
    t = Table(data=tmp_path, fen="3rk3/8/8/8/b7/8/8/3QK3 w - - 0 1")
    _down(t, "lift a4", "lift d1", "place a4")    # Qxa4 or Qxd8: the board shows only d1 emptied
    _restart(t)
    p = t.pending
    assert t.moves == [] and p["type"] == "prompt" and sorted(p["options"]) == ["d1a4", "d1d8"]
    assert p["default"] is None
    assert t.led("a4") == "prompt" and t.led("d8") == "prompt"
    t.say("choose d1a4")
    assert t.moves == ["d1a4"]


KNIGHT = "4k3/2r5/5b2/3N4/8/8/8/4K3 w - - 0 1"     # Nd5 can take on c7 and on f6


def test_a_knight_capture_half_made_at_a_power_cut_is_settled_by_setting_the_knight_down(tmp_path):
    for journaled in (True, False):
        t = Table(data=tmp_path / str(journaled), fen=KNIGHT)
        if journaled:
            t.lift("d5")                          # the knight's lift on disk before the cut
        else:
            _down(t, "lift d5")                   # ... or lost with the power
        _restart(t)
        p = t.pending                             # Nxc7 or Nxf6 made meanwhile? or in the hand
        assert t.moves == [] and p["type"] == "prompt" and sorted(p["options"]) == ["d5c7", "d5f6"]
        assert p["default"] is None
        t.lift("f6").place("f6").settle()         # the knight set down on f6: seen, not asked
        assert t.moves == ["d5f6"] and t.pending is None, journaled
        t.move("e8", "d8").settle()               # and the game goes on
        assert t.moves == ["d5f6", "e8d8"] and t.pending is None


def test_a_move_and_its_reply_made_while_down_are_both_recognised(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    _down(t, "lift e7", "place e5", "lift g1", "place f3")
    _restart(t)
    assert t.moves == ["e2e4", "e7e5", "g1f3"] and t.pending is None


def test_three_moves_made_while_down_are_a_mismatch_nothing_is_guessed(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    _down(t, "lift d7", "place d5", "lift g1", "place f3", "lift b8", "place c6")
    _restart(t)
    assert t.moves == ["e2e4"]
    assert t.pending["type"] == "mismatch"        # three moves: nothing is guessed, the LEDs show the fix


# Black, to move, has lifted the white pawn on e5 to take it with the bishop (Bg7xe5); the cut
# came before the lift reached the disk. Alone, the board (only e5 empty) is also Bxg4 e5-e6:
# a move of each side that nobody made.
VICTIM_IN_HAND = "4k3/6b1/4b3/4P3/6N1/8/8/4K3 b - - 0 1"


def test_a_victim_lifted_at_a_power_cut_is_a_move_under_way_never_a_move_of_each_side(tmp_path):
    for journaled in (False, True):
        t = Table(data=tmp_path / str(journaled), fen=VICTIM_IN_HAND)
        if journaled:
            t.lift("e5")                          # the lift on disk before the cut
        else:
            _down(t, "lift e5")                   # ... or lost with the power
        _restart(t)
        assert t.moves == [], journaled
        p = t.pending
        assert p["type"] == "move" and p["lifted"] == ["e5"] and "g7e5" in p["candidates"], journaled
        t.move("g7", "e5").settle()               # the capture the player was making
        assert t.moves == ["g7e5"] and t.pending is None, journaled
        t.move("e1", "d2").settle()               # and the game goes on
        assert t.moves == ["g7e5", "e1d2"] and t.pending is None, journaled


def test_pieces_missing_at_a_restart_are_never_an_exchange_nobody_saw(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4").move("d7", "d5")
    _down(t, "lift e4", "lift d8")                # exd5 Qxd5 leaves e4 and d8 empty too
    _restart(t)
    assert t.moves == ["e2e4", "d7d5"]
    p = t.pending
    assert p["type"] == "mismatch" and sorted(p["fill"]) == ["d8", "e4"] and not p["clear"] and not p["moves"]
    assert "put the white pawn back on e4" in p["text"] and "put the black queen back on d8" in p["text"]
    t.place("d8", "e4").settle()                  # put back as the LEDs show: play on
    assert t.pending is None
    t.move("e4", "e5").settle()
    assert t.moves == ["e2e4", "d7d5", "e4e5"] and t.pending is None


def test_a_move_and_a_piece_of_the_other_side_lifted_at_a_restart_are_never_a_capture(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    _down(t, "lift d7", "place d5", "lift e4")    # ...d5 and exd5 -- or ...d5 with White's pawn in the hand
    _restart(t)
    assert t.moves == ["e2e4"]                    # neither is taken: the LEDs show how to put the board back
    p = t.pending
    assert p["type"] == "mismatch"
    assert sorted([sq for m in p["moves"] for sq in m] + p["clear"] + p["fill"]) == ["d5", "d7", "e4"]
    t.lift("d5").place("d7", "e4").settle()
    assert t.pending is None
    t.move("d7", "d5").settle()                   # and the game goes on from the journal's position
    assert t.moves == ["e2e4", "d7d5"] and t.pending is None


def test_a_move_held_at_a_power_cut_waits_for_the_board_to_be_read(tmp_path):
    t = Table(data=tmp_path, fen="4k3/8/r7/8/8/8/8/R3K3 w - - 0 1")
    t.lift("a1").place("a3")                      # a stop on the way: held, and the cut comes
    assert t.status == "hold"
    _down(t, "lift a3", "lift a6", "place a6")    # the rook slid on and took on a6 meanwhile
    _restart(t)
    assert t.moves == []                          # Ra3 is not what the board shows: never recorded
    t.move("e8", "d7").settle()                   # Black moves on: the capture was made
    assert t.moves == ["a1a6", "e8d7"] and t.pending is None


def test_play_events_on_a_resumed_game_reads_the_board_before_the_first_event(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4")
    _down(t, "lift c7", "place c5")               # Black moved while the program was down
    t.session.close()
    s = lifecycle.resume(t.store, t.session.game_id, profile=load_profile("sim"), settings=load_settings(),
                       now=t.clock())
    start = t.clock() + 1000
    play_events(s, t.board, t.clock, [Ev(start, "lift", "g1"), Ev(start + 300, "place", "f3")])
    assert [a.text for a in s.game.history] == ["e2e4", "c7c5", "g1f3"]
    assert s.pending() is None


class _Link:
    """A sensor source whose link drops and comes back (the serial backend's notices)."""

    def __init__(self):
        from collections import deque
        self.frames, self.notices = deque(), deque()

    def read(self, timeout):
        return self.frames.popleft() if self.frames else None


class _State:
    def __init__(self, value):
        self.value = value


class _Notice:
    def __init__(self, ready):
        self.state, self.port, self.reason = _State("ready" if ready else "lost"), "ttyACM0", "test"


def test_the_first_frame_after_a_reconnect_is_read_afresh(tmp_path):
    t = Table(data=tmp_path)
    t.move("e2", "e4").move("d7", "d5")
    link = _Link()
    src = WatchedSource(link)
    link.notices.append(_Notice(False))           # the cable out ...
    assert src.read(0) is None and not src.up
    _down(t, "lift d5", "lift e4", "place d5")    # ... exd5 meanwhile ...
    link.notices.append(_Notice(True))            # ... and back
    link.frames.append(RawFrame(t.clock() + 100, frozenset(t.board.closed)))
    frame = src.read(0)
    assert frame.gap
    t.session.on_frame(frame)
    t.wait(1000)
    assert t.pending["type"] == "prompt" and t.pending["options"] == ["e4d5"]


def test_an_event_file_is_read_one_line_at_a_time():
    """An events file is streamed: the first event is played before later lines are read."""
    from board_driver.config import load_variant
    from board_driver.sim.events import iter_events

    read = []

    def lines():
        for n in range(1_000_000):
            read.append(n)
            yield '{"t": %d, "%s": "e2"}\n' % (n * 100, "lift" if n % 2 == 0 else "place")
    it = iter_events(lines(), load_variant("orthodox").geometry, "big")
    first = next(it)
    assert (first.kind, first.arg) == ("lift", "e2") and len(read) == 1
