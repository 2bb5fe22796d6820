"""Debouncing, the device Protocols, and the real-time service loop on fake devices."""

import queue

from drivertools import Table

from board_driver.devices import LedSink, RawFrame, SensorSource
from board_driver.referee.debounce import Debouncer, SquareEvent
from board_driver.referee.runner import run_realtime
from board_driver.sim.board import SimulatedBoard, VirtualClock


def test_a_change_counts_once_it_has_held_for_the_settle_time():
    d = Debouncer(40, stable=0b1)
    assert d.feed(100, 0b11) == []
    assert d.deadline() == 140
    assert d.advance(139) == []
    assert d.advance(140) == [SquareEvent(140, 1, placed=True)]
    assert d.stable == 0b11 and d.deadline() is None


def test_bounce_and_a_slide_over_a_square_produce_nothing():
    d = Debouncer(40, stable=0)
    for t, raw in ((0, 1), (3, 0), (6, 1), (9, 0)):        # contact bounce, then back to empty
        assert d.feed(t, raw) == []
    assert d.advance(1000) == [] and d.stable == 0
    assert d.feed(2000, 0b100) == [] and d.feed(2025, 0) == []   # a piece dragged over: 25 ms
    assert d.advance(3000) == []


def test_several_squares_change_in_order_of_their_changes():
    d = Debouncer(30, stable=0b1)
    d.feed(10, 0b0)
    d.feed(20, 0b1000)
    assert d.advance(100) == [SquareEvent(40, 0, placed=False), SquareEvent(50, 3, placed=True)]


def test_the_simulator_is_a_sensor_source_and_an_led_sink():
    t = Table()
    assert isinstance(t.board, SensorSource) and isinstance(t.board, LedSink)
    t.board.lift("e2")
    f = t.board.read(0)
    assert isinstance(f, RawFrame) and t.board.sensor("e2") not in f.closed
    assert t.board.read(0) is None
    assert "RawFrame(" in repr(f)


def test_a_simulated_board_on_the_real_clock_waits_for_its_next_frame_as_a_real_source_does():
    """The service loop idles in read(timeout): a board on the real clock waits there for a
    frame (made on another thread: the page, a script) instead of answering None at once, which
    made an idle serve --board sim spin a core (tests/bench/bench_idle.py: 100% -> 0.5%)."""
    import threading
    import time as _time

    from board_driver.config import load_variant
    from board_driver.referee.layout import Layout
    from board_driver.settings import load_profile
    board = SimulatedBoard(Layout.place(load_profile("sim"), load_variant("orthodox").geometry),
                           clock=lambda: int(_time.monotonic() * 1000))
    waiting = threading.Event()
    got: list = []

    def reader() -> None:
        waiting.set()
        got.append(board.read(60.0))    # returns when the frame comes, long before 60 s
    th = threading.Thread(target=reader)
    th.start()
    assert waiting.wait(10)
    board.setup(frozenset({board.sensor("e2")}))
    th.join(60)
    assert not th.is_alive() and got and got[0] is not None and board.sensor("e2") in got[0].closed


class ScriptedSource:
    """A sensor source that plays frames at given times on a fake clock (read() advances it)."""

    sensor_count = 96

    def __init__(self, clock, frames):
        self.clock, self.frames = clock, list(frames)

    def read(self, timeout):
        if self.frames and self.frames[0].t <= self.clock() + timeout * 1000:
            f = self.frames.pop(0)
            self.clock.advance_to(f.t)
            return f
        self.clock.advance_to(self.clock() + int(timeout * 1000))
        return None

    def close(self):
        pass


def test_the_real_time_loop_commits_holds_on_time_and_takes_commands():
    t = Table(fen="4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    clock = t.clock
    lay = t.session.layout
    closed = set(lay.closed_sensors(t.session.occupancy))
    frames = []
    closed.discard(lay.sensor_of(t.session.game.geometry.parse("a1")))
    frames.append(RawFrame(1000, frozenset(closed)))
    closed.add(lay.sensor_of(t.session.game.geometry.parse("a5")))
    frames.append(RawFrame(1300, frozenset(closed)))
    source = ScriptedSource(clock, frames)
    commands = queue.Queue()
    notices = []
    sink = SimulatedBoard(lay, clock=clock)
    sent = []

    def stop():
        if clock() >= 2500 and not sent:
            sent.append(clock())
            commands.put("resign")          # typed on the console while the loop runs
        return clock() >= 5000

    run_realtime(t.session, source, sink, clock, commands=commands, stop=stop, on_notice=notices.append)
    assert t.moves == ["a1a5"]
    assert any("White: Ra5" in n or "a1a5" in n for n in notices)
    assert "Black resigns: 1-0." in notices
    assert sink.frames_shown and sink.frames_shown[-1] == t.session.leds
    assert t.session.outcome().reason == "resignation"


def test_the_virtual_clock_only_moves_forward():
    c = VirtualClock(5)
    c.advance_to(3)
    assert c() == 5
    c.advance_to(9)
    assert c() == 9


def test_the_loop_freezes_its_start_up_objects_out_of_the_collector():
    # a full collection over a running service's objects costs milliseconds on a Pi: the
    # start-up objects (tables, modules, the replayed game) are frozen before play begins
    import gc
    gc.unfreeze()
    t = Table(fen="4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    seen = [gc.get_freeze_count()]

    def stop():
        seen.append(gc.get_freeze_count())
        return t.clock() >= 500

    try:
        run_realtime(t.session, ScriptedSource(t.clock, []), SimulatedBoard(t.session.layout, clock=t.clock),
                     t.clock, stop=stop, on_notice=lambda line: None)
    finally:
        gc.unfreeze()
    assert seen[0] == 0 and seen[-1] > 1000


def test_the_loop_collects_between_steps_and_gives_the_collector_back():
    # automatic collection is off while the loop runs (no pass lands inside a commit); the
    # loop collects between steps instead, so garbage made meanwhile is still freed
    import gc
    import weakref

    class Node:
        pass

    t = Table(fen="4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    commands = queue.Queue()
    freed, during, sent = [], [], []

    def make_garbage(session):
        for _ in range(3000):
            n = Node()
            n.me = n                    # a cycle: only the collector frees it
        weakref.finalize(n, freed.append, True)

    def stop():
        during.append(gc.isenabled())
        if t.clock() >= 500 and not sent:
            sent.append(t.clock())
            commands.put(make_garbage)
        return t.clock() >= 3000

    assert gc.isenabled()
    try:
        run_realtime(t.session, ScriptedSource(t.clock, []), SimulatedBoard(t.session.layout, clock=t.clock),
                     t.clock, commands=commands, stop=stop, on_notice=lambda line: None)
    finally:
        gc.unfreeze()
    assert freed == [True]                  # collected while the loop ran
    assert not any(during)                  # never automatically during the loop
    assert gc.isenabled()                   # and given back afterwards


def test_the_idle_loop_works_ahead_without_waiting_until_every_preview_is_made():
    # with the queen in the hand, the loop previews each of her moves a few per step and
    # reads the source between steps without waiting, then goes back to its poll interval
    t = Table(fen="4k3/8/8/8/3Q4/8/8/4K3 w - - 0 1")
    s = t.session
    lay = s.layout
    d4 = s.game.geometry.parse("d4")
    closed = set(lay.closed_sensors(s.occupancy)) - {lay.sensor_of(d4)}
    source = ScriptedSource(t.clock, [RawFrame(1000, frozenset(closed))])
    timeouts = []
    read = source.read
    source.read = lambda timeout: (timeouts.append(timeout), read(timeout))[1]
    # the lift counts at 1040 (debounced); by 1150 the loop has been idle for two polls at most
    run_realtime(s, source, SimulatedBoard(lay, clock=t.clock), t.clock, stop=lambda: t.clock() >= 1150,
                 on_notice=lambda line: None)
    queen_moves = [a for a in s.game.legal_actions() if d4 in a.lifts]
    assert len(queen_moves) > 3 * s.PREVIEWS_PER_STEP
    assert all(s.bases.preview_of(a) is not None for a in queen_moves)
    assert timeouts.count(0.0) >= len(queen_moves) // s.PREVIEWS_PER_STEP - 1
    assert timeouts[-1] > 0                     # done: waiting its poll again


def test_a_simulated_board_that_cannot_save_its_pieces_says_so_once_and_goes_on(tmp_path, caplog):
    """Saving where the pieces stand is a convenience: a failure (no file handle left, a full
    disk) must not stop the board's events, or the game with them."""
    from board_driver.config import load_variant
    from board_driver.referee.layout import Layout
    from board_driver.settings import load_profile
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    layout = Layout.place(load_profile("sim"), load_variant("orthodox").geometry)
    board = SimulatedBoard(layout, clock=lambda: 0, closed=frozenset({layout.sensor_of(layout.geometry.parse("e2"))}),
                           state_file=blocker / "board.json")
    board.lift("e2")
    board.place("e4")
    board.lift("e4")
    assert board.occupied("e2") is False and board.occupied("e4") is False
    said = [r.getMessage() for r in caplog.records if "cannot save the simulated board" in r.getMessage()]
    assert len(said) == 1 and str(blocker / "board.json") in said[0]
