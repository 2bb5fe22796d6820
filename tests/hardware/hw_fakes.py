"""Test helpers for the hardware backends: a virtual clock, a fake LED strip driver, and a
lockstep rig for the serial board over a pty (the Pico firmware's own logic on the far side)."""

from __future__ import annotations

import heapq
import itertools
from typing import Callable, Sequence

from board_driver.referee.layout import LedOrder


class VirtualClock:
    """Seconds on a clock moved by hand; ``sleep`` moves it and runs what is due on the way."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start
        self._due: list = []
        self._n = itertools.count()

    def __call__(self) -> float:
        return self.now

    def at(self, t: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._due, (t, next(self._n), action))

    def after(self, dt: float, action: Callable[[], None]) -> None:
        self.at(self.now + dt, action)

    def sleep(self, dt: float) -> None:
        end = self.now + max(0.0, dt)
        while self._due and self._due[0][0] <= end:
            t, _, action = heapq.heappop(self._due)
            self.now = max(self.now, t)
            action()
        self.now = end

    advance = sleep

    def ms(self) -> int:
        return int(round(self.now * 1000))


def chain_to_squares(order: LedOrder, chain: Sequence) -> list:
    """What each physical square shows, for a chain of LED values laid out as ``order`` says."""
    out = [None] * (order.files * order.ranks)
    for phys in range(len(out)):
        i = order.chain_index(phys)
        out[phys] = chain[i] if i < len(chain) else (0, 0, 0)
    return out


class FakeStrip:
    """A WS2812 chain driven from the Pi (the PixelDriver a PiLedSink writes to).

    ``installed`` is how the chain really runs over the board, whatever the profile says;
    :meth:`squares` is what a person sees on each physical square.
    """

    def __init__(self, count: int = 96, *, installed: LedOrder = LedOrder()) -> None:
        self.count = count
        self.installed = installed
        self.history: list[tuple] = []
        self.closed = False

    def write(self, pixels: Sequence[tuple[int, int, int]]) -> None:
        if self.closed:
            raise RuntimeError("write() on a closed strip")
        if len(pixels) != self.count:
            raise ValueError(f"{len(pixels)} pixels for a chain of {self.count}")
        for p in pixels:
            if len(p) != 3 or not all(isinstance(c, int) and 0 <= c <= 255 for c in p):
                raise ValueError(f"bad pixel {p!r}")
        self.history.append(tuple(tuple(p) for p in pixels))

    def close(self) -> None:
        self.closed = True

    @property
    def shown(self) -> tuple:
        return self.history[-1] if self.history else ((0, 0, 0),) * self.count

    def squares(self) -> list:
        return chain_to_squares(self.installed, self.shown)


class SerialRig:
    """The Pico board (firmware logic on fake pins, :mod:`bridge_fakes`) behind a pty, and the
    host's :class:`SerialBoard` on a link without a reader thread, moved in lockstep.

    The switches follow a :class:`fake_gpio.ReedBoard`; :meth:`step` lets one millisecond pass
    on both clocks (running what the virtual clock has due, e.g. a scripted person's moves)
    and waits -- by byte counts, not sleeps -- until the pty has carried everything written.
    :attr:`source` is a SensorSource whose ``read(timeout)`` lets that much virtual time pass.
    """

    def __init__(self, directory, *, reed, clock: VirtualClock, led_order: LedOrder = LedOrder(),
                 installed: LedOrder | None = None, settings=None, boot_id: int = 0xB007,
                 quantum_ms: int = 1) -> None:
        from bridge_fakes import VirtualBoard

        from board_driver.hardware.serial_board import SerialBoard
        from firmware_bridge import Settings
        from firmware_bridge.link import Link, LinkState, LinkTimings

        self.reed, self.clock = reed, clock
        self.quantum_ms = quantum_ms
        self.installed = installed or led_order
        self.board = VirtualBoard(directory, boot_id=boot_id)
        self.board.closed = reed.closed
        self.link = Link([self.board.port_glob], clock=clock, timings=LinkTimings(read_timeout=0.0),
                         settings=settings or Settings(scan_period_ms=5, debounce_ms=20),
                         open_port=self.board.open_port)
        self.link.open()
        for _ in range(2000):
            self.settle()
            if self.link.state is LinkState.READY:
                break
            self.step()
        else:
            raise AssertionError(f"board never ready: {self.link.health()}")
        # The boot frames waited in the board's USB FIFO and came first; start the tests from
        # the answer to the host's REQUEST OCCUPANCY (link notices are kept).
        from firmware_bridge import Occupancy, OccupancyReason
        items = []
        for _ in range(100):
            items += self.link.drain()
            if any(isinstance(i.message, Occupancy) and i.message.reason is OccupancyReason.REQUESTED
                   for i in items):
                break
            self.step()
        last_requested = max(k for k, i in enumerate(items) if isinstance(i.message, Occupancy))
        for k, item in enumerate(items):
            if not isinstance(item.message, Occupancy) or k == last_requested:
                self.link._queue.put(item)
        self.serial = SerialBoard(self.link, led_order=led_order)
        self.source = LockstepSource(self)

    def settle(self, timeout: float = 2.0) -> None:
        import time
        board, cable = self.board, self.board.cable
        deadline = time.monotonic() + timeout
        while True:
            board.closed = self.reed.closed
            board.fw.step()
            self.link.service()
            port = board.host_port
            if port is None or port.cable is not cable or not cable.host_connected:
                return
            if port.read_count == cable.sent and cable.received == port.write_count:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"pty did not settle: host read {port.read_count}/{cable.sent} bytes, "
                                     f"board read {cable.received}/{port.write_count}")

    def step(self, ms: int = 1) -> None:
        """Let ``ms`` pass, in steps of ``quantum_ms`` (the firmware catches up a missed scan)."""
        while ms > 0:
            q = min(ms, self.quantum_ms)
            self.board.ticks.advance(q)
            self.clock.sleep(q / 1000)
            self.settle()
            ms -= q

    def squares(self) -> list:
        """What each physical square's LED shows."""
        return chain_to_squares(self.installed, self.board.strip.shown)

    def close(self) -> None:
        self.serial.close()
        self.board.close()


class LockstepSource:
    """A SensorSource: the rig's serial board, with ``read(timeout)`` moving virtual time."""

    def __init__(self, rig: SerialRig) -> None:
        self.rig = rig
        self.sensor_count = rig.serial.sensor_count

    def read(self, timeout: float):
        frame = self.rig.serial.read(0)
        ms = 0
        q = self.rig.quantum_ms
        while frame is None and ms < int(round(timeout * 1000)):
            self.rig.step(q)
            ms += q
            frame = self.rig.serial.read(0)
        return frame

    def host_debounce_ms(self, driver_ms: int) -> int:
        return self.rig.serial.host_debounce_ms(driver_ms)

    def close(self) -> None:
        self.rig.close()
