"""An idle service sleeps: the loop waits in its source's read(timeout) for a frame, a deadline
or a command, and a command wakes it at once (runner.LoopQueue and the sources' wake()).

Counted, never timed: loop steps against the fake Pi's own scans, and a loop told to wait up
to a minute that still takes a command while the test waits far less than that."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "board_driver"))

from drivertools import Table  # noqa: E402

from board_driver.devices import RawFrame  # noqa: E402
from board_driver.hardware.gpio_matrix import REFRESH_S, GpioMatrix, MatrixConfig  # noqa: E402
from board_driver.referee.runner import LoopQueue, run_realtime  # noqa: E402
from board_driver.sim.board import SimulatedBoard  # noqa: E402
from board_driver.web.board_io import WebSource  # noqa: E402

FEN = "4k3/8/8/8/8/8/8/R3K3 w - - 0 1"
LONG = 60.0             # the longest the loop is let wait: a command must not wait for it


def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


class Recording:
    """A source that counts the loop's reads and the timeouts it waited with."""

    def __init__(self, inner):
        self.inner = inner
        self.sensor_count = inner.sensor_count
        self.timeouts: list[float] = []
        self.wake = inner.wake

    def read(self, timeout: float) -> RawFrame | None:
        self.timeouts.append(timeout)
        return self.inner.read(timeout)

    def close(self) -> None:
        self.inner.close()


class Loop:
    """run_realtime on its own thread with a LoopQueue, counting its steps; :meth:`ask` puts a
    job and waits for it (far less long than the loop would sleep without a wake)."""

    def __init__(self, session, source, sink):
        self.commands = LoopQueue()
        self.steps = 0
        self.stopped = threading.Event()
        self.error: list[BaseException] = []

        def run() -> None:
            try:
                run_realtime(session, source, sink, monotonic_ms, commands=self.commands,
                             stop=self.stopped.is_set, on_notice=lambda line: None, poll=LONG,
                             on_update=self._step)
            except BaseException as exc:       # the test says what broke
                self.error.append(exc)
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def _step(self, session) -> None:
        self.steps += 1

    def ask(self, timeout: float = LONG / 3) -> int:
        """Put a job; the loop's step count when it ran (AssertionError if it did not run
        within ``timeout``: the loop slept on)."""
        ran = threading.Event()
        at: list[int] = []
        self.commands.put(lambda session: (at.append(self.steps), ran.set()))
        assert ran.wait(timeout), "the loop took no command: it slept on"
        return at[0]

    def stop(self) -> None:
        self.stopped.set()
        self.commands.wake()
        self.thread.join(LONG)
        assert not self.thread.is_alive(), "the loop did not stop when woken"
        assert not self.error, self.error


def test_an_idle_loop_on_the_simulated_board_sleeps_until_a_command_wakes_it():
    t = Table(fen=FEN)
    board = SimulatedBoard(t.session.layout, clock=monotonic_ms, closed=t.board.closed)
    source = Recording(board)
    loop = Loop(t.session, source, board)
    try:
        for _ in range(3):
            loop.ask()
        waited = [x for x in source.timeouts if x > 0]
        assert waited and max(waited) >= LONG, source.timeouts      # idle: waits as long as allowed
        assert len(source.timeouts) <= 12, f"{len(source.timeouts)} reads for 3 commands"
    finally:
        loop.stop()


def test_the_page_on_the_simulated_board_wakes_the_loop_through_its_bridge():
    from board_driver.web.bridge import WebBridge
    t = Table(fen=FEN)
    board = SimulatedBoard(t.session.layout, clock=monotonic_ms, closed=t.board.closed)
    bridge = WebBridge(sim=True)
    source = WebSource(board, bridge, wakeable=True)
    assert source.wake == bridge.wake.set
    loop = Loop(t.session, source, board)
    try:
        for _ in range(3):
            loop.ask()
        assert loop.steps <= 12
    finally:
        loop.stop()
    hardware = WebSource(board, bridge, wakeable=False)
    assert hardware.wake == board.wake                  # the board's own, behind the page's layer


def test_an_idle_loop_on_the_gpio_matrix_steps_about_once_a_refresh_not_once_a_scan(gpio, reed):
    """The scan thread scans 100 times a second; the loop steps on changes, the refresh every
    REFRESH_S and commands -- counted against the fake Pi's scans, not timed."""
    t = Table(fen=FEN)
    reed.set_pieces(t.session.layout.closed_sensors(t.session.occupancy))
    m = GpioMatrix(MatrixConfig(gpio_rows(gpio), gpio_columns(gpio)), gpio=gpio, delay_us=gpio.delay_us).start()
    loop = Loop(t.session, m, t.board)
    try:
        loop.ask()
        first_scan, first_step = len(gpio.scan_times), loop.steps
        assert gpio.wait_scans(first_scan + 300)
        scans = len(gpio.scan_times) - first_scan
        span = gpio.scan_times[-1] - gpio.scan_times[first_scan - 1]
        steps = loop.steps - first_step
        assert steps <= span / REFRESH_S + 3, f"{steps} loop steps over {scans} scans ({span:.1f} s)"
        # a command does not wait for the next refresh: fewer scans than a refresh's pass first
        before = len(gpio.scan_times)
        loop.ask()
        assert len(gpio.scan_times) - before < 50, "the command waited for a frame"
    finally:
        loop.stop()
        m.close()


def gpio_rows(gpio) -> tuple[int, ...]:
    return tuple(sorted(gpio.rows, key=gpio.rows.__getitem__))


def gpio_columns(gpio) -> tuple[int, ...]:
    return tuple(sorted(gpio.columns, key=gpio.columns.__getitem__))
