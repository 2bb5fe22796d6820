"""Fakes that behave like the board's hardware, and a rig that runs firmware and host together.

* :class:`FakeTicks` -- MicroPython's ``time.ticks_ms``/``ticks_diff`` on a virtual clock that
  wraps at 2**30 like the real one;
* :class:`FakeMachine` -- a ``machine`` module whose ``Pin`` models the reed-switch matrix:
  a row input with a pull-up reads 0 while a column driven low has a closed switch on that
  row. It refuses what would be a wiring bug on the real board (driving an input, reading a
  floating input, a GPIO the Pico does not break out, one GPIO used twice);
* :class:`FakeNeopixel` -- a ``neopixel`` module whose strips keep every frame written;
* :class:`PtyCable` -- the USB cable: a pty whose master is the board's end and whose slave is
  opened by the host by name (through a symlink, like a udev name); unplugging closes the pty,
  plugging in makes a new one, maybe under a new name. Like the Pico's USB serial, what the
  board writes while no host has the port open is kept in a 256-byte FIFO that keeps the
  newest bytes, and flushed to the host when it opens the port: cut at the front;
* :class:`Rig` -- a :class:`VirtualBoard` and a host :class:`~firmware_bridge.link.Link` driven
  in lockstep on virtual clocks; real I/O over the pty is awaited by byte counts, not sleeps.
"""

from __future__ import annotations

import os
import pty
import select
import sys
import threading
import time
import tty
from pathlib import Path
from typing import Callable, Container, Iterable

import pytest
import serial

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "hardware" / "firmware"
if str(FIRMWARE_DIR) not in sys.path:
    # The firmware's modules are flat files on the Pico; import them the same way here.
    sys.path.append(str(FIRMWARE_DIR))

import fb_core  # noqa: E402
import fb_pins  # noqa: E402

from firmware_bridge import Occupancy, OccupancyReason  # noqa: E402
from firmware_bridge.link import Link, LinkTimings, Received  # noqa: E402

TICKS_PERIOD = 1 << 30
PICO_GPIOS = frozenset(range(0, 23)) | {26, 27, 28}


class FakeTicks:
    """``time.ticks_ms`` and ``time.ticks_diff`` of MicroPython, on a clock moved by hand."""

    def __init__(self, start: int = TICKS_PERIOD - 1500) -> None:
        self.now = start  # close to the wrap, so every test crosses it

    def ticks_ms(self) -> int:
        return self.now

    def ticks_diff(self, a: int, b: int) -> int:
        d = (a - b) & (TICKS_PERIOD - 1)
        return d - TICKS_PERIOD if d >= TICKS_PERIOD // 2 else d

    def advance(self, ms: int) -> None:
        self.now = (self.now + ms) % TICKS_PERIOD


class RealTicks(FakeTicks):
    """``time.ticks_ms`` on the real monotonic clock (for threaded runs and the benchmark)."""

    def __init__(self) -> None:
        super().__init__(0)

    def ticks_ms(self) -> int:
        return int(time.monotonic() * 1000) % TICKS_PERIOD

    def advance(self, ms: int) -> None:
        raise RuntimeError("real time cannot be advanced")


class FakeClock:
    """A host clock in seconds, moved by hand."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakePin:
    """One GPIO of a :class:`FakeMachine`."""

    def __init__(self, machine: "FakeMachine", gpio: int, mode: int = -1, pull: int = -1, *,
                 value: int | None = None) -> None:
        if gpio not in PICO_GPIOS:
            raise ValueError(f"GPIO {gpio} is not on the Pico's header")
        if gpio in machine.pins:
            raise ValueError(f"GPIO {gpio} is already in use")
        self.machine, self.gpio = machine, gpio
        self.mode, self.pull, self.out = FakeMachine.IN, -1, 0
        machine.pins[gpio] = self
        self.init(mode, pull, value=value)

    def init(self, mode: int = -1, pull: int = -1, *, value: int | None = None) -> None:
        if mode != -1:
            self.mode = mode
        if pull != -1:
            self.pull = pull
        if value is not None:
            self.out = 1 if value else 0
        self.machine.changed(self)

    def value(self, x: int | None = None) -> int | None:
        if x is not None:
            if self.mode != FakeMachine.OUT:
                raise RuntimeError(f"GPIO {self.gpio} is an input; driving it is a bug")
            self.out = 1 if x else 0
            self.machine.changed(self)
            return None
        if self.mode == FakeMachine.OUT:
            return self.out
        return self.machine.level(self)

    __call__ = value

    def on(self) -> None:
        self.value(1)

    def off(self) -> None:
        self.value(0)


class _PinFactory:
    """``machine.Pin``: callable like the class, with its mode/pull constants."""

    IN, OUT, OPEN_DRAIN = 0, 1, 2
    PULL_UP, PULL_DOWN = 1, 2

    def __init__(self, machine: "FakeMachine") -> None:
        self._machine = machine

    def __call__(self, gpio: int, mode: int = -1, pull: int = -1, *, value: int | None = None) -> FakePin:
        return FakePin(self._machine, gpio, mode, pull, value=value)


class FakeMachine:
    """A ``machine`` module wired to a reed-switch matrix (columns x rows, one diode each)."""

    IN, OUT = _PinFactory.IN, _PinFactory.OUT
    PULL_UP, PULL_DOWN = _PinFactory.PULL_UP, _PinFactory.PULL_DOWN

    def __init__(self, closed: Callable[[], Container[int]], columns=fb_pins.COLUMNS, rows=fb_pins.ROWS,
                 rise_us: float = 0.0) -> None:
        self.pins: dict[int, FakePin] = {}
        # The slow edge of the Pico's scan: a row pulled low through a column that has since
        # gone high again rises back only through its pull-up (50-80 kohm internal), taking
        # rise_us; read sooner it still reads low (a phantom on the next column).
        self.rise_us = rise_us
        self.now_us = 0.0
        self._released: dict[int, float] = {}    # column -> when it last went high
        self.Pin = _PinFactory(self)
        self._closed = closed
        self._columns = {g: c for c, g in enumerate(columns)}
        self._rows = {g: r for r, g in enumerate(rows)}
        self._low_columns: set[int] = set()  # columns driven low right now
        self.reads = 0
        self.mem32 = FakeSio(self)

    def changed(self, pin: FakePin) -> None:
        """A pin's mode or output changed: keep track of which columns pull low."""
        col = self._columns.get(pin.gpio)
        if col is not None:
            if pin.mode == self.OUT and pin.out == 0:
                self._low_columns.add(col)
            else:
                if col in self._low_columns:
                    self._released[col] = self.now_us
                self._low_columns.discard(col)

    def delay_us(self, us: float) -> None:
        """Time passes (the firmware's settle wait)."""
        self.now_us += us

    def level(self, pin: FakePin) -> int:
        """What an input pin reads: pulled low through a closed switch and a low column."""
        self.reads += 1
        row = self._rows.get(pin.gpio)
        if row is not None and (self._low_columns or self.rise_us):
            closed = self._closed()
            base = row * len(self._columns)
            for col in self._low_columns:
                if base + col in closed:
                    return 0
            for col, since in self._released.items():
                if self.now_us - since < self.rise_us and base + col in closed:
                    return 0                       # still rising through the pull-up
        if pin.pull == self.PULL_UP:
            return 1
        if pin.pull == self.PULL_DOWN:
            return 0
        raise RuntimeError(f"GPIO {pin.gpio} is a floating input (no pull resistor)")


class FakeSio:
    """``machine.mem32`` at the RP2040's SIO registers, as far as the matrix scan goes:
    GPIO_IN reads every pin (an output its own level), OUT_SET / OUT_CLR drive outputs. Any
    other address, or driving a pin that is not an output, is a bug in the firmware."""

    GPIO_IN, GPIO_OUT_SET, GPIO_OUT_CLR = 0xD0000004, 0xD0000014, 0xD0000018
    PADS = 0x4001C004          # PADS_BANK0 GPIO0; +4 a GPIO; +0x2000 set, +0x3000 clear alias

    def __init__(self, machine: "FakeMachine") -> None:
        self.machine = machine
        self.pads = {g: 0x56 for g in range(30)}      # the reset value: 4 mA drive

    def drive_ma(self, gpio: int) -> int:
        return (2, 4, 8, 12)[self.pads[gpio] >> 4 & 3]

    def __getitem__(self, addr: int) -> int:
        if addr != self.GPIO_IN:
            raise ValueError(f"mem32[{addr:#x}]: not a register the firmware reads")
        word = 0
        for gpio, pin in self.machine.pins.items():
            level = pin.out if pin.mode == FakeMachine.OUT else self.machine.level(pin)
            word |= level << gpio
        return word

    def __setitem__(self, addr: int, mask: int) -> None:
        for alias, op in ((0x2000, "set"), (0x3000, "clear")):
            gpio, rest = divmod(addr - self.PADS - alias, 4)
            if rest == 0 and 0 <= gpio < 30:
                self.pads[gpio] = self.pads[gpio] | mask if op == "set" else self.pads[gpio] & ~mask
                return
        if addr not in (self.GPIO_OUT_SET, self.GPIO_OUT_CLR):
            raise ValueError(f"mem32[{addr:#x}] = {mask:#x}: not a register the firmware writes")
        for gpio in range(30):
            if mask >> gpio & 1:
                pin = self.machine.pins.get(gpio)
                if pin is None or pin.mode != FakeMachine.OUT:
                    raise RuntimeError(f"GPIO {gpio} is not an output; driving it is a bug")
                pin.value(1 if addr == self.GPIO_OUT_SET else 0)


class FakeStrip:
    """``neopixel.NeoPixel`` as MicroPython's: a bytearray ``buf`` of n x bpp bytes in the
    colour ``ORDER`` of WS2812s (G, R, B), which ``write()`` sends; remembers every frame
    written, as (r, g, b) tuples."""

    ORDER = (1, 0, 2, 3)

    def __init__(self, pin: FakePin, n: int, bpp: int = 3, timing: int = 1) -> None:
        if not isinstance(pin, FakePin):
            raise TypeError(f"NeoPixel needs a Pin, got {pin!r}")
        pin.init(FakeMachine.OUT)
        self.pin, self.n, self.bpp = pin, n, bpp
        self.buf = bytearray(n * bpp)
        self.history: list[tuple[tuple[int, ...], ...]] = []

    def __len__(self) -> int:
        return self.n

    def __setitem__(self, i: int, v: tuple[int, ...]) -> None:
        if len(v) != self.bpp or not all(isinstance(c, int) and 0 <= c <= 255 for c in v):
            raise ValueError(f"pixel {i}: {v!r} is not {self.bpp} bytes")
        for k in range(self.bpp):
            self.buf[i * self.bpp + self.ORDER[k]] = v[k]

    def __getitem__(self, i: int) -> tuple[int, ...]:
        return tuple(self.buf[i * self.bpp + self.ORDER[k]] for k in range(self.bpp))

    def fill(self, v: tuple[int, ...]) -> None:
        for i in range(self.n):
            self[i] = v

    def write(self) -> None:
        self.history.append(tuple(self[i] for i in range(self.n)))

    @property
    def shown(self) -> tuple[tuple[int, ...], ...]:
        """What the LEDs show: the last frame written (all dark before any)."""
        return self.history[-1] if self.history else ((0,) * self.bpp,) * self.n


class FakeNeopixel:
    """A ``neopixel`` module; remembers the strips it made."""

    def __init__(self) -> None:
        self.strips: list[FakeStrip] = []

    def NeoPixel(self, pin: FakePin, n: int, bpp: int = 3, timing: int = 1) -> FakeStrip:  # noqa: N802
        strip = FakeStrip(pin, n, bpp, timing)
        self.strips.append(strip)
        return strip


class PtyCable:
    """The USB cable as a pty: the firmware's byte I/O on the master, the host opens the slave.

    ``to_host`` / ``to_board`` may be set to a function that rewrites the bytes in flight
    (to corrupt, drop or repeat them). ``sent``/``received`` count the bytes of this plug-in
    that the board wrote to / read from the host.
    """

    #: MicroPython's CDC transmit FIFO (CFG_TUD_CDC_TX_BUFSIZE): while no host has the port
    #: open it keeps the newest bytes written and overwrites the oldest
    TX_FIFO = 256

    def __init__(self, directory: Path, name: str = "ttyFAIRY0") -> None:
        self.directory = directory
        self.unheard = bytearray()  # written while no host had the port open: the FIFO's content
        self.master: int | None = None
        self.slave: int | None = None
        self.path: Path | None = None
        self.host_connected = False
        self.to_host: Callable[[bytes], bytes] | None = None
        self.to_board: Callable[[bytes], bytes] | None = None
        self.sent = self.received = 0
        self.plug(name)

    def connect(self) -> None:
        """A host opened the port: a fresh session with empty buffers (counts start at 0)."""
        while self.master is not None:
            try:
                if not os.read(self.master, 4096):
                    break
            except (BlockingIOError, OSError):
                break
        self.sent = self.received = 0
        self.host_connected = True
        stale, self.unheard = bytes(self.unheard), bytearray()
        if stale:
            self.write(stale)

    @property
    def tty_name(self) -> str | None:
        return os.ttyname(self.slave) if self.slave is not None else None

    def plug(self, name: str) -> None:
        assert self.master is None, "already plugged in"
        self.master, self.slave = pty.openpty()
        tty.setraw(self.slave)  # the line discipline must not echo or translate
        os.set_blocking(self.master, False)
        self.path = self.directory / name
        self.path.symlink_to(os.ttyname(self.slave))
        self.sent = self.received = 0

    def unplug(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None
        for fd in (self.master, self.slave):
            if fd is not None:
                os.close(fd)
        self.master = self.slave = None
        self.host_connected = False
        self.unheard.clear()

    # the firmware's io: read() / write() / wait()

    def read(self, limit: int = 4096) -> bytes:
        if self.master is None:
            return b""
        try:
            data = os.read(self.master, limit)
        except (BlockingIOError, OSError):
            return b""
        self.received += len(data)
        if self.to_board is not None:
            data = self.to_board(data)
        return data

    def write(self, data: bytes) -> None:
        if self.master is None:
            return
        data = bytes(data)
        if not self.host_connected:
            # nobody listening: the FIFO keeps the newest bytes, the host gets them on opening
            self.unheard += data
            del self.unheard[:-self.TX_FIFO]
            return
        if self.to_host is not None:
            data = self.to_host(data)
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.master, view)
            except BlockingIOError:
                select.select([], [self.master], [], 1.0)
                continue
            self.sent += n
            view = view[n:]

    def wait(self, ms: int) -> None:
        if self.master is not None:
            select.select([self.master], [], [], ms / 1000)


class CountingPort:
    """A pyserial port that counts the bytes it passes, and tells the cable when it closes."""

    def __init__(self, port: serial.SerialBase, cable: PtyCable | None) -> None:
        self.port, self.cable = port, cable
        self.read_count = self.write_count = 0

    @property
    def in_waiting(self) -> int:
        return self.port.in_waiting

    def read(self, size: int = 1) -> bytes:
        data = self.port.read(size)
        self.read_count += len(data)
        return data

    def write(self, data: bytes) -> int | None:
        n = self.port.write(data)
        self.write_count += len(data)
        return n

    def close(self) -> None:
        if self.cable is not None:
            self.cable.host_connected = False
        self.port.close()


class VirtualBoard:
    """The Pico: firmware logic on fake pins and LEDs, behind a :class:`PtyCable`."""

    def __init__(self, directory: Path, *, boot_id: int = 0xB007, ticks: FakeTicks | None = None,
                 read_timeout: float = 0.0) -> None:
        self.directory = Path(directory)
        self.closed: set[int] = set()
        self.cable = PtyCable(self.directory)
        self.ticks = ticks or FakeTicks()
        self.read_timeout = read_timeout  # of the host's port
        self.host_port: CountingPort | None = None
        self.hung = False  # a hung board: the firmware stops running, the cable stays
        self.opened: list[str] = []
        self.boot(boot_id)

    @property
    def port_glob(self) -> str:
        return str(self.directory / "ttyFAIRY*")

    def boot(self, boot_id: int) -> None:
        """Power up (again): new firmware state, LEDs dark, same switches and cable."""
        self.cable.unheard.clear()  # the USB FIFO starts empty at power-up
        self.machine = FakeMachine(lambda: self.closed)
        self.neopixel = FakeNeopixel()
        self.fw = fb_core.build(self.machine, self.neopixel, fb_pins, self.cable, self.ticks, boot_id)
        self.fw.start()

    @property
    def strip(self) -> FakeStrip:
        return self.neopixel.strips[-1]

    def set_closed(self, closed: Iterable[int]) -> None:
        self.closed = set(closed)

    def open_port(self, url: str) -> CountingPort:
        """The host's way in (``Link(open_port=...)``): pyserial on the name, counted."""
        self.opened.append(url)
        port = serial.serial_for_url(url, timeout=self.read_timeout, write_timeout=1.0)
        cable = self.cable if self.cable.tty_name and os.path.realpath(url) == self.cable.tty_name else None
        if cable is not None:
            cable.connect()
        self.host_port = CountingPort(port, cable)
        return self.host_port

    def run_forever(self, stop: threading.Event) -> None:
        """The firmware's main loop on real time, until ``stop`` is set (for a thread)."""
        while not stop.is_set():
            self.fw.step()
            self.cable.wait(min(self.fw.ms_until_due(), 5))

    def close(self) -> None:
        self.cable.unplug()


class Rig:
    """A virtual board and a host link on virtual clocks, moved together.

    :meth:`advance` moves both clocks 1 ms at a time, letting the firmware and the link each
    do one round per ms and waiting (in real time, bounded) until the pty has carried every
    byte written. :attr:`events` collects everything the link delivered.
    """

    def __init__(self, board: VirtualBoard, *, timings: LinkTimings | None = None, **link_kwargs) -> None:
        self.board = board
        self.clock = FakeClock()
        self.events: list[Received] = []
        self.timings = timings or LinkTimings(read_timeout=0.0)
        link_kwargs.setdefault("ports", [board.port_glob])
        self.link = Link(clock=self.clock, timings=self.timings, open_port=board.open_port,
                         sink=self.events.append, **link_kwargs)
        self.link.open()

    def settle(self, timeout: float = 2.0) -> None:
        """Exchange bytes (clocks stopped) until neither side has anything in flight."""
        board, cable = self.board, self.board.cable
        deadline = time.monotonic() + timeout
        while True:
            if not board.hung:
                board.fw.step()
            self.link.service()
            port = board.host_port
            if port is None or port.cable is not cable or not cable.host_connected:
                return
            if port.read_count == cable.sent and (board.hung or cable.received == port.write_count):
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"pty did not settle: host read {port.read_count}/{cable.sent} bytes, "
                    f"board read {cable.received}/{port.write_count}")

    def advance(self, ms: int) -> None:
        """Let ``ms`` milliseconds pass on both clocks."""
        for _ in range(ms):
            self.board.ticks.advance(1)
            self.clock.advance(0.001)
            self.settle()

    def until(self, condition: Callable[[], bool], max_ms: int = 5000) -> int:
        """Advance until ``condition()`` holds; return the ms it took (fails after ``max_ms``)."""
        for elapsed in range(max_ms + 1):
            self.settle()
            if condition():
                return elapsed
            self.board.ticks.advance(1)
            self.clock.advance(0.001)
        raise AssertionError(f"condition not met within {max_ms} virtual ms; health: {self.link.health()}")

    def messages(self, kind: type) -> list:
        return [e.message for e in self.events if isinstance(e.message, kind)]

    def occupancies(self, reason: OccupancyReason | None = None) -> list[Occupancy]:
        return [m for m in self.messages(Occupancy) if reason is None or m.reason is reason]

    def close(self) -> None:
        self.link.close()


@pytest.fixture
def board(tmp_path):
    """A virtual board (firmware logic + fake pins + fake LEDs) plugged in through a pty."""
    vb = VirtualBoard(tmp_path)
    yield vb
    vb.close()
