"""The Pi scans the reed-switch matrix itself, through the RPi.GPIO API.

Wiring (hardware/WIRING.md): one reed switch and one diode per square; the diode's anode on
the row wire, its cathode on the column wire. Rows (ranks) are outputs, idle low; columns
(files) are inputs with the Pi's internal pull-downs. A scan drives one row high at a time,
waits ``settle_us`` -- long enough for a column pulled high through the previous row to fall
back through its pull-down (the slow edge: too short a wait shows a phantom piece on the same
file, next rank) -- and reads every column: a column reads high when
the switch where it crosses the driven row is closed. The diodes stop current flowing back
through an idle row, so any pattern of closed switches reads true (no ghosts).

Sensor index = ``row * len(columns) + col`` -- with row 0 on rank 1 and column 0 on file a,
the same index as the physical square, and the same numbering as the Pico firmware's.

One scan costs ``rows + 1`` calls of ``GPIO.output`` (each call lowers the previous row and
raises the next, through RPi.GPIO's list form) and ``rows * columns`` calls of
``GPIO.input``: 105 calls for 12 x 8. On a Pi 1-4 the scan goes a register at a time instead
(``access: auto``, :mod:`board_driver.hardware.gpio_registers`): a rank's columns in one read,
24 operations. ``tests/bench/bench_gpio_scan.py`` measures both.

Two ways to read it. Started (:meth:`GpioMatrix.start`, as the service does), the matrix is
scanned in a thread of its own, every ``scan_ms`` on an absolute schedule whatever the game's
thread is doing (a commit takes milliseconds on a Pi: a scan in the game's thread would wait
for it); the thread queues a frame when the closed set changed, and once a second
(:data:`REFRESH_S`) when it did not, as the Pico does, and ``read(timeout)`` waits on that
queue, so an idle service sleeps there instead of waking for every scan. Not started (tests on
a virtual clock, ``bench_gpio_scan.py``), ``read`` scans in the caller's thread, every
``scan_ms``, and returns every scan.

Scanning slowly when idle: while anything happens the matrix is scanned every ``scan_ms``
(10); once nothing changed for :data:`IDLE_AFTER_S` (5 s) -- no switch, and no button held
when the buttons are polled from the scan (:meth:`GpioMatrix.attach`) -- every
``idle_scan_ms`` (40), a quarter of the scans. Any change brings the full rate back at once:
the scan that sees it schedules the next one ``scan_ms`` later. What that costs a player: the
first change after a quiet spell is a lift (a move starts by lifting a piece), seen up to
``idle_scan_ms`` later than at full rate; the set-down that ends the move is scanned at full
rate again, so the latency from a set-down to its LEDs is unchanged. ``idle_scan_ms: 0`` (or
equal to ``scan_ms``) scans at full rate always.

The settle time, ``settle_us``: when a row goes low, a file wire that was high falls only
through its pull-down, ``t = R * C * ln(V0 / V_IL)``. With the Pi's internal pull-down
(50-65 kohm, the BCM283x's figure), 160-250 pF of file wire, diodes and pin, V0 = 3.3 V at worst
(a row's 3.3 V less the diode's drop is less) and V_IL = 0.8 V, that is 11 us (50 kohm,
160 pF) to 23 us (65 kohm, 250 pF): the default, :data:`SETTLE_US` = 25, covers the worst
case. With the 10 kohm external pull-downs (8.7 kohm with the internal one beside it) the fall
takes at most 3.1 us, and ``settle_us: 5`` is enough. docs/hardware.md, "Settle times", has the
whole derivation. The wait is a sleep (:func:`sleep_us`), not a busy wait: the settle is a
minimum, and a sleep's overshoot (25 us becomes 60-100 us on Linux) only reads the columns a
little later, while spinning would burn 200 us of CPU per scan. And it is waited only where
something falls: after a row on which some column read high. A row that read every column low
left no wire high (a driven rise through a diode takes nanoseconds), and the first row's
predecessor went low a whole period ago; so an empty rank costs no wait, and a set-up 12 x 8
board (ranks 1, 2, 7 and 8 full) waits 3 times per scan instead of 8. The one case this misses,
a switch closing between its row's read and the row going low (microseconds), shows a phantom
for one scan, which the driver's 40 ms debounce never turns into an event.

The GPIO module comes in as an argument (``gpio=``): ``RPi.GPIO`` on a Pi (the rpi-lgpio
package provides the same module on a Pi 5), a fake in the tests.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol, cast

from board_driver.devices import RawFrame
from board_driver.hardware._check import Section
from board_driver.hardware.gpio_registers import GpioRegisters
from board_driver.errors import HardwareError, MissingLibraryError


class GpioModule(Protocol):
    """The part of the RPi.GPIO module the scan and the buttons use."""

    BCM: int
    OUT: int
    IN: int
    HIGH: int
    LOW: int
    PUD_DOWN: int
    PUD_UP: int

    def setmode(self, mode: int) -> None: ...

    def getmode(self) -> int | None: ...

    def setwarnings(self, flag: bool) -> None: ...

    def setup(self, channel: Any, direction: int, pull_up_down: int = ..., initial: int = ...) -> None: ...

    def output(self, channel: Any, value: Any) -> None: ...

    def input(self, channel: int) -> int: ...

    def cleanup(self, channel: Any = ...) -> None: ...


def import_gpio() -> GpioModule:
    """The RPi.GPIO module, or a clear error saying which package provides it."""
    try:
        import RPi.GPIO as GPIO  # noqa: N814
    except ImportError as exc:
        raise MissingLibraryError(
            f"the GPIO backends need the RPi.GPIO module ({exc}): on a Raspberry Pi 1-4 "
            "install it with `pip install 'fairyboard[pi]'`, on a Pi 5 with "
            "`pip install 'fairyboard[pi5]'` (rpi-lgpio provides the same module)") from None
    except RuntimeError as exc:  # RPi.GPIO raises this off a Pi or without /dev/gpiomem access
        raise HardwareError(f"RPi.GPIO cannot run here: {exc}") from None
    return cast(GpioModule, GPIO)           # the module, as the protocol above declares what it offers


def setup_pin(gpio: GpioModule, pin: int, direction: int, **kw: Any) -> None:
    """``gpio.setup`` with the error a Pi 5 owner needs: RPi.GPIO imports on a Pi 5 but fails
    here ("Cannot determine SOC peripheral base address"), because the Pi 5's GPIO is behind
    its RP1 chip; rpi-lgpio provides the same module for it."""
    try:
        gpio.setup(pin, direction, **kw)
    except RuntimeError as exc:
        raise HardwareError(
            f"RPi.GPIO cannot set up GPIO {pin}: {exc}. On a Raspberry Pi 5 RPi.GPIO does not work: "
            f"`pip uninstall RPi.GPIO` and `pip install 'fairyboard[pi5]'` (rpi-lgpio, the same module "
            f"for the Pi 5; if it picks the wrong GPIO chip, set RPI_LGPIO_CHIP, e.g. RPI_LGPIO_CHIP=0 "
            f"on a Pi 5 with a recent kernel, 4 with an older one)") from None


def use_bcm(gpio: GpioModule) -> None:
    """Number pins by BCM GPIO; refuse a process that already chose physical numbering."""
    mode = gpio.getmode()
    if mode is None:
        gpio.setwarnings(False)
        gpio.setmode(gpio.BCM)
    elif mode != gpio.BCM:
        raise HardwareError(f"GPIO numbering is already set to {mode!r}; fairyboard's pin maps are BCM numbers")


SETTLE_US = 25
"""The default wait after driving a row (us): the slowest fall of a file wire through the Pi's
internal pull-down, 65 kohm x 250 pF x ln(3.3 V / 0.8 V) = 23 us, rounded up (module docstring)."""

IDLE_AFTER_S = 5.0
"""After this long (s) with no change on the board (nor a button pressed), the matrix scans at
``idle_scan_ms`` instead of ``scan_ms``; any change brings the full rate back at once."""

IDLE_SCAN_MS = 40
"""The default idle scan period (ms): 25 scans a second on a quiet board (module docstring)."""

REFRESH_S = 1.0
"""A started matrix queues a frame at least this often (s) even when nothing changed, as the
Pico's periodic refresh does: the reader sees the board is alive, and its time moves on."""

SLEEP_S = 0.1
"""The scan thread waits for its next instant in ``time.sleep`` when it is this close (s), else
on its stop event: an ``Event.wait`` with a timeout costs about twice the CPU of a sleep (a lock
made, taken with a timeout, released: 95 against 50 us a wake-up on the x86 machine of the
benchmarks), and at 25 idle scans a second that is 0.1% of a core; :meth:`GpioMatrix.close`
waits at most this long for the thread to see its stop."""

SWITCH_S = 0.001
"""The interpreter's switch interval once a matrix scans in its own thread (s): how long the
scan may wait for the game's thread to let it run (:meth:`GpioMatrix.start`)."""


def sleep_us(us: float) -> None:
    """Wait at least ``us`` microseconds without using the CPU: the settle wait of a scan.

    The settle time is a minimum: a longer wait only reads the columns later, and at a 10 ms
    period nothing notices. ``time.sleep`` of 25 us overshoots to 60-100 us on Linux (the
    timer slack), so 8 rows take under 1 ms of the 10 ms period; the thread sleeps meanwhile,
    where a busy wait would spend 8 x 25 us = 200 us of CPU in every scan, 2% of a core at
    100 scans a second."""
    time.sleep(us / 1e6)


def busy_wait_us(us: float) -> None:
    """Wait ``us`` microseconds spinning on the CPU: exact to a microsecond, but it costs the
    whole wait in CPU (:func:`sleep_us` is the scan's default; bench_gpio_scan.py compares)."""
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


@dataclass(frozen=True, slots=True)
class MatrixConfig:
    """Which GPIOs scan the matrix and how fast (``hardware.sensors`` with ``backend: gpio``)."""

    rows: tuple[int, ...]        # BCM numbers, row 0 (rank 1) first: driven
    columns: tuple[int, ...]     # BCM numbers, column 0 (file a) first: read with pull-downs
    settle_us: int = SETTLE_US   # wait after driving a row, before reading the columns
    scan_ms: int = 10            # one scan every scan_ms
    idle_scan_ms: int = IDLE_SCAN_MS   # ... or every idle_scan_ms once quiet for IDLE_AFTER_S (0: never)
    access: str = "auto"         # "auto": whole registers where the Pi has them (gpio_registers); "pins": RPi.GPIO calls

    @property
    def sensor_count(self) -> int:
        return len(self.rows) * len(self.columns)

    @property
    def idle_period(self) -> float:
        """The scan period once the board is quiet (s): ``idle_scan_ms``, or ``scan_ms`` when off."""
        return max(self.idle_scan_ms, self.scan_ms) / 1000

    @classmethod
    def from_section(cls, s: Section, files: int, ranks: int) -> MatrixConfig:
        s.only(("backend", "rows", "columns", "settle_us", "scan_ms", "idle_scan_ms", "access"))
        rows = s.pins("rows", ranks)
        columns = s.pins("columns", files)
        both = set(rows) & set(columns)
        if both:
            raise s.fail("columns", list(columns), f"GPIO {sorted(both)[0]} is also a row")
        scan_ms = s.integer("scan_ms", 10, 1, 1000)
        idle_ms = s.integer("idle_scan_ms", max(IDLE_SCAN_MS, scan_ms), 0, 1000)
        if 0 < idle_ms < scan_ms:
            raise s.fail("idle_scan_ms", idle_ms, f"must be 0 (off) or at least scan_ms ({scan_ms})")
        return cls(rows, columns, s.integer("settle_us", SETTLE_US, 0, 10_000), scan_ms, idle_ms,
                   s.choice("access", ("auto", "pins"), "auto"))

    def pins(self) -> tuple[int, ...]:
        return self.rows + self.columns


class GpioMatrix:
    """A :class:`~board_driver.devices.SensorSource` scanning the matrix through RPi.GPIO.

    ``clock`` returns seconds (frames are stamped ``int(clock() * 1000)`` ms), ``sleep`` waits
    seconds between scans, ``delay_us`` waits the settle time; tests pass a virtual clock.
    Until :meth:`start`, ``read`` scans in the caller's thread, every ``scan_ms`` (or
    ``idle_scan_ms`` when quiet: :meth:`period`), and returns every scan; once started, a thread of its own scans and ``read`` waits for what it queues
    (the module docstring).
    """

    def __init__(self, config: MatrixConfig, *, gpio: GpioModule, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 delay_us: Callable[[float], None] = sleep_us, registers: GpioRegisters | None = None) -> None:
        self.config = config
        self.registers = registers      # set: scans a register at a time (after RPi.GPIO set the pins up)
        self._column_bits = [(c, 1 << col) for c, col in enumerate(config.columns)]   # (column, its GPLEV0 bit)
        self._column_mask = sum(1 << col for col in config.columns)
        self.sensor_count = config.sensor_count
        self._gpio, self._clock, self._sleep, self._delay_us = gpio, clock, sleep, delay_us
        self._next: float | None = None
        self._closed = False
        self.scans = 0
        self.late = 0                   # started: scans that began a period or more after their instant
        self._frames: queue.SimpleQueue[RawFrame | BaseException | None] = queue.SimpleQueue()   # None: wake()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()   # one scan at a time, and none once closed
        self._failed: HardwareError | None = None
        self._switch: float | None = None   # the interpreter's switch interval before start()
        self._hooks: list[Callable[[], bool]] = []   # run after each scan (attach): True while busy
        self._seen: frozenset[int] | None = None     # the last scan's closed set
        self._active: float | None = None            # when the last change (or busy hook) was scanned
        use_bcm(gpio)
        for row in config.rows:
            setup_pin(gpio, row, gpio.OUT, initial=gpio.LOW)
        for col in config.columns:
            setup_pin(gpio, col, gpio.IN, pull_up_down=gpio.PUD_DOWN)

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> GpioMatrix:
        """Scan in a thread of its own from now on (a second call does nothing).

        The interpreter hands its lock to a waiting thread only every switch interval (5 ms by
        default): a scan due while the game's thread computes would start up to 5 ms late.
        Starting the scan lowers the interval to :data:`SWITCH_S` for the process (a thread
        that waits for nothing is never interrupted, so it costs only while both run);
        :meth:`close` gives the old one back."""
        if self._closed:
            raise HardwareError("start() on a closed GPIO matrix")
        if self._thread is None:
            self._switch = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch, SWITCH_S))
            self._thread = threading.Thread(target=self._run, name="fairyboard-scan", daemon=True)
            self._thread.start()
        return self

    def attach(self, hook: Callable[[], bool]) -> None:
        """Run ``hook`` after every scan, in the scan's thread (the buttons, polled at the scan's
        rate instead of in a thread of their own). It returns True while something happens (a
        button held): the scan stays at full rate meanwhile. Any thread."""
        with self._lock:
            self._hooks.append(hook)

    def detach(self, hook: Callable[[], bool]) -> None:
        """Stop running ``hook``; once this returns it runs no more (its pins may be released)."""
        with self._lock:
            if hook in self._hooks:
                self._hooks.remove(hook)

    def period(self, now: float) -> float:
        """The scan period at ``now`` (s): ``scan_ms``, or ``idle_scan_ms`` once nothing has
        changed for :data:`IDLE_AFTER_S`."""
        if self._active is not None and now - self._active >= IDLE_AFTER_S:
            return self.config.idle_period
        return self.config.scan_ms / 1000

    def _scan_at(self, t: float) -> frozenset[int]:
        """One scan at ``t`` and the attached hooks; notes when something last happened."""
        closed = self.scan()
        busy = False
        for hook in self._hooks:
            busy = hook() or busy
        if busy or closed != self._seen or self._active is None:
            self._active = t
        self._seen = closed
        return closed

    def _run(self) -> None:
        """The scan thread: a scan at every instant ``t0 + k * period`` (never two for one
        instant: one that starts late is counted in :attr:`late` and the schedule moves on to
        the next instant still ahead), the period being :meth:`period`'s; a frame queued on
        change and every :data:`REFRESH_S`."""
        clock, frames, stop = self._clock, self._frames, self._stop
        due = clock()
        last: frozenset[int] | None = None
        sent = 0.0
        try:
            while True:
                wait = due - clock()
                if wait > 0:
                    if wait > SLEEP_S:
                        if stop.wait(wait):
                            return
                    else:
                        time.sleep(wait)      # a wake-up of half the CPU of an Event's (the constant's docstring)
                if stop.is_set():
                    return
                t = clock()
                period = self.period(t)
                if t - due >= period:
                    self.late += 1
                    due += (t - due) // period * period     # the instant just passed: no burst
                with self._lock:
                    if self._closed:
                        return
                    closed = self._scan_at(t)
                if closed != last or t - sent >= REFRESH_S:
                    frames.put(RawFrame(int(round(t * 1000)), closed))
                    last, sent = closed, t
                due += self.period(t)                      # full rate again at once after a change
        except BaseException as exc:        # a GPIO call failed: the reader hears of it
            frames.put(exc)

    def scan(self) -> frozenset[int]:
        """One pass over the matrix: the indexes of the closed switches."""
        if self._closed:
            raise HardwareError("scan() on a closed GPIO matrix")
        if self.registers is not None:
            return self._scan_registers(self.registers)
        gpio = self._gpio
        output, read = gpio.output, gpio.input
        high, low = gpio.HIGH, gpio.LOW
        columns = self.config.columns
        settle = self.config.settle_us
        delay = self._delay_us
        ncols = len(columns)
        closed: list[int] = []
        prev = None
        base = 0
        falling = False          # a column read high on the previous row: it falls while this row is read
        for row in self.config.rows:
            if prev is None:
                output(row, high)
            else:
                output((prev, row), (low, high))   # one call: previous row low, then this row high
            if settle and falling:
                delay(settle)
            n = len(closed)
            for c, col in enumerate(columns):
                if read(col):
                    closed.append(base + c)
            falling = len(closed) > n
            prev = row
            base += ncols
        if prev is not None:
            output(prev, low)
        self.scans += 1
        return frozenset(closed)

    def _scan_registers(self, regs: GpioRegisters) -> frozenset[int]:
        """:meth:`scan` a register at a time: per row, a clear of the previous row and a set of
        this one, then one read of every column's level (``gpio_registers``): 24 operations for
        12 x 8 where the pin calls take 105. The same order, settle and result."""
        columns = self.config.columns
        bits, colmask = self._column_bits, self._column_mask
        settle = self.config.settle_us
        delay = self._delay_us
        ncols = len(columns)
        closed: list[int] = []
        prev = 0
        base = 0
        falling = False
        for row in self.config.rows:
            if prev:
                regs.clear(prev)
            prev = 1 << row
            regs.set(prev)
            if settle and falling:
                delay(settle)
            level = regs.levels() & colmask
            if level:
                closed.extend(base + c for c, bit in bits if level & bit)
            falling = bool(level)
            base += ncols
        if prev:
            regs.clear(prev)
        self.scans += 1
        return frozenset(closed)

    def read(self, timeout: float) -> RawFrame | None:
        if self._failed is not None:
            raise self._failed
        if self._thread is not None:
            try:
                item = self._frames.get(timeout=timeout) if timeout > 0 else self._frames.get_nowait()
            except queue.Empty:
                return None
            if isinstance(item, BaseException):
                self._failed = HardwareError(f"the GPIO scan stopped: {item}")
                raise self._failed from item
            return item         # a frame, or None: woken
        now = self._clock()
        if self._next is None:
            self._next = now
        wait = self._next - now
        if wait > timeout:
            if timeout > 0:
                self._sleep(timeout)
            return None
        if wait > 0:
            self._sleep(wait)
        t = self._clock()
        with self._lock:
            closed = self._scan_at(t)
        period = self.period(t)
        self._next += period
        if self._next <= t:          # fell behind (a slow reader): do not scan in a burst
            self._next = t + period
        return RawFrame(int(round(t * 1000)), closed)

    def wake(self) -> None:
        """Make a ``read`` waiting now (or the next one) return None at once: the service loop
        has a command to take (:class:`board_driver.referee.runner.LoopQueue`). Any thread."""
        self._frames.put(None)

    def close(self) -> None:
        """Stop the scan thread and release the matrix pins (rows back to inputs), once."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        if self._switch is not None:
            sys.setswitchinterval(self._switch)
            self._switch = None
        with self._lock:
            if not self._closed:
                self._closed = True
                if self.registers is not None:
                    self.registers.close()
                self._gpio.cleanup(list(self.config.pins()))

    def __enter__(self) -> GpioMatrix:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
