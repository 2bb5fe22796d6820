"""A fake ``RPi.GPIO`` module wired to a fake reed-switch board, behaving like a Pi.

:class:`ReedBoard` is the physical board: pieces on squares, and how each square is wired to
a switch of the matrix. Test controls make it faulty the ways real boards are: a dead square
(:meth:`ReedBoard.kill`), a stuck switch (:meth:`ReedBoard.stick`), two squares on one sensor
(:meth:`ReedBoard.double`), two squares' wires swapped (:meth:`ReedBoard.swap`), a missing
or shorted diode (:meth:`ReedBoard.no_diode`: with three closed switches on the corners of a
rectangle and this one in the middle corner, the fourth corner reads closed), a magnet that
closes a neighbour's reed too (:meth:`ReedBoard.reach`).

:class:`FakeGPIO` is a module object with the RPi.GPIO API (pass it as ``gpio=``). It refuses
what the real module refuses, and what would be a bug in a scan on real hardware:

* any call before ``setmode``, and switching numbering once chosen;
* a channel that is not a GPIO of the 40-pin header, or a pull resistor on an output;
* ``output`` on a channel not set up as an output (driving an input);
* ``input`` on a channel not set up, or on an output (the real module would return the level
  the Pi drives, which in a matrix scan is always a bug), or on a floating input;

and it models the matrix: rows are outputs, columns inputs with pull-downs; a column reads
high while a row driven high crosses it through a closed switch (and its diode), once the row
has been high for ``rise_us`` microseconds of :attr:`FakeGPIO.now_us` (``delay_us`` moves it;
the rise is driven, so fast). The slow edge is the fall: a column pulled high through a row
that has since gone low falls through the Pi's internal pull-down (tens of kilo-ohms) and
still reads high for ``fall_us`` -- too short a settle shows a phantom piece on the next row.
Push buttons (:meth:`press`/:meth:`release`) pull their pin to ground.

:meth:`FakeGPIO.registers` is the same Pi's GPIO bank a register at a time, as
``board_driver.hardware.gpio_registers`` maps it from /dev/gpiomem on a Pi 1-4: GPSET0 and GPCLR0
writes (one bit a pin) and GPLEV0 reads (every pin's level), on the same pins and matrix model;
it refuses a set or clear of a pin that is not an output (on a Pi the write would change
nothing: a scan bug). Every call is
recorded in :attr:`FakeGPIO.calls`, and the instant (on ``stamp_clock``, real time by default)
of every scan's start -- the first row driven high -- in :attr:`FakeGPIO.scan_times`: what a
logic analyser on the first row wire would show.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Iterable

from engine.geometry import Geometry

# BOARD (physical header pin) -> BCM
BOARD_TO_BCM = {3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24,
                19: 10, 21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5, 31: 6, 32: 12,
                33: 13, 35: 19, 36: 16, 37: 26, 38: 20, 40: 21}
BCM_CHANNELS = frozenset(range(28))

# The pin map of configs/boards/gpio-12x8.yaml (hardware/WIRING.md): rows driven, columns read.
PI_ROWS = (2, 3, 4, 17, 27, 22, 5, 6)
PI_COLUMNS = (13, 19, 26, 21, 20, 16, 12, 25, 24, 23, 18, 14)


class ReedBoard:
    """The physical board: pieces, the wiring of squares to matrix switches, and faults."""

    def __init__(self, files: int = 12, ranks: int = 8) -> None:
        self.geometry = Geometry(files, ranks)
        self.pieces: set[int] = set()
        self.wiring: dict[int, tuple[int, ...]] = {sq: (sq,) for sq in range(files * ranks)}
        self.stuck: set[int] = set()
        self.diodeless: set[int] = set()
        self.reaches: dict[int, tuple[int, ...]] = {}
        self.closed: frozenset[int] = frozenset()
        self.history: list[tuple[str, int]] = []

    def sq(self, square: int | str) -> int:
        return square if isinstance(square, int) else self.geometry.parse(square)

    def _update(self) -> None:
        closed = set(self.stuck)
        for p in self.pieces:
            closed.update(self.wiring[p])
            for q in self.reaches.get(p, ()):
                closed.update(self.wiring[q])
        self.closed = frozenset(closed)

    def conducts(self, row: int, col: int, ncols: int) -> bool:
        """Does current flow from ``row`` to ``col``: through its own closed switch, or back
        through a switch without its diode (row -> (row, c2) -> col c2 -> back through
        diodeless (r2, c2) -> row r2 -> (r2, col) -> col)?"""
        closed = self.closed
        if row * ncols + col in closed:
            return True
        for s in self.diodeless & closed:
            r2, c2 = divmod(s, ncols)
            if r2 != row and c2 != col and row * ncols + c2 in closed and r2 * ncols + col in closed:
                return True
        return False

    # -- pieces --
    def place(self, *squares: int | str) -> None:
        for s in squares:
            self.pieces.add(self.sq(s))
            self.history.append(("place", self.sq(s)))
        self._update()

    def lift(self, *squares: int | str) -> None:
        for s in squares:
            self.pieces.discard(self.sq(s))
            self.history.append(("lift", self.sq(s)))
        self._update()

    def set_pieces(self, squares: Iterable[int | str]) -> None:
        self.pieces = {self.sq(s) for s in squares}
        self._update()

    def clear(self) -> None:
        self.set_pieces(())

    # -- faults --
    def swap(self, a: int | str, b: int | str) -> None:
        """The wires of squares a and b are crossed: a closes b's switch and b closes a's."""
        a, b = self.sq(a), self.sq(b)
        self.wiring[a], self.wiring[b] = self.wiring[b], self.wiring[a]
        self._update()

    def kill(self, square: int | str) -> None:
        """A dead square: its switch never closes (broken reed, wire or diode)."""
        self.wiring[self.sq(square)] = ()
        self._update()

    def stick(self, switch: int | str) -> None:
        """A stuck switch: always closed, with or without a piece."""
        self.stuck.add(self.sq(switch))
        self._update()

    def no_diode(self, switch: int | str) -> None:
        """The switch's diode is missing or shorted: current flows back through it."""
        self.diodeless.add(self.sq(switch))
        self._update()

    def reach(self, square: int | str, neighbour: int | str) -> None:
        """A piece on ``square`` also closes ``neighbour``'s reed (a magnet too strong, or the
        reed placed near the edge)."""
        a = self.sq(square)
        self.reaches[a] = self.reaches.get(a, ()) + (self.sq(neighbour),)
        self._update()

    def double(self, a: int | str, b: int | str) -> None:
        """Square b is wired to a's switch too (two squares on one sensor); b's own is unused."""
        self.wiring[self.sq(b)] = self.wiring[self.sq(a)]
        self._update()


class _Pin:
    __slots__ = ("direction", "pull", "level", "since_us")

    def __init__(self, direction: int, pull: int, level: int, since_us: float) -> None:
        self.direction, self.pull, self.level, self.since_us = direction, pull, level, since_us


class FakeGPIO:
    """``RPi.GPIO`` for a Pi wired to a :class:`ReedBoard` matrix (see the module docstring)."""

    BOARD, BCM = 10, 11
    OUT, IN = 0, 1
    LOW, HIGH = 0, 1
    PUD_OFF, PUD_DOWN, PUD_UP = 20, 21, 22
    RISING, FALLING, BOTH = 31, 32, 33
    VERSION = "0.7.1 (fake)"
    RPI_INFO = {"P1_REVISION": 3, "TYPE": "fake Pi", "PROCESSOR": "fake"}

    def __init__(self, board: ReedBoard | None = None, *, rows: Iterable[int] = (), columns: Iterable[int] = (),
                 rise_us: float = 0.0, fall_us: float = 0.0,
                 stamp_clock: Callable[[], float] = time.monotonic) -> None:
        self.board = board if board is not None else ReedBoard()
        self.rows = {g: r for r, g in enumerate(rows)}
        self.columns = {g: c for c, g in enumerate(columns)}
        self.rise_us = rise_us
        self.fall_us = fall_us
        self.now_us = 0.0
        self._low_rows: dict[int, float] = {}    # row index -> time it last went low
        self.mode: int | None = None
        self.warnings = True
        self.pins: dict[int, _Pin] = {}
        self.pressed: set[int] = set()
        self.calls: list[tuple] = []
        self._high_rows: dict[int, float] = {}   # row index -> time it went high
        self.stamp_clock = stamp_clock
        self.scan_times: list[float] = []         # when the first row went high, scan after scan
        self.scanned = threading.Condition()      # notified at every scan's start
        self.driven = 0                           # bit n: GPIO n is an output driven high
        self.layout = 0                           # moves on with every setup() and cleanup()

    # -- test controls --
    def delay_us(self, us: float) -> None:
        self.now_us += us

    def press(self, pin: int) -> None:
        self.pressed.add(pin)

    def release(self, pin: int) -> None:
        self.pressed.discard(pin)

    def wait_scans(self, n: int, timeout: float = 60.0) -> bool:
        """Wait until ``n`` scans have started in all (False after ``timeout`` seconds)."""
        with self.scanned:
            return self.scanned.wait_for(lambda: len(self.scan_times) >= n, timeout)

    def count(self, *names: str) -> int:
        return sum(1 for c in self.calls if c[0] in names)

    # -- the module's API --
    def setwarnings(self, flag: bool) -> None:
        self.calls.append(("setwarnings", flag))
        self.warnings = bool(flag)

    def setmode(self, mode: int) -> None:
        self.calls.append(("setmode", mode))
        if mode not in (self.BCM, self.BOARD):
            raise ValueError("An invalid mode was passed to setmode()")
        if self.mode is not None and mode != self.mode:
            raise ValueError("A different mode has already been set!")
        self.mode = mode

    def getmode(self) -> int | None:
        self.calls.append(("getmode",))
        return self.mode

    def _bcm(self, channel: object) -> int:
        if self.mode is None:
            raise RuntimeError("Please set pin numbering mode using GPIO.setmode(GPIO.BOARD) or GPIO.setmode(GPIO.BCM)")
        if isinstance(channel, bool) or not isinstance(channel, int):
            raise ValueError("Channel must be an integer or list/tuple of integers")
        if self.mode == self.BOARD:
            if channel not in BOARD_TO_BCM:
                raise ValueError("The channel sent is invalid on a Raspberry Pi")
            return BOARD_TO_BCM[channel]
        if channel not in BCM_CHANNELS:
            raise ValueError("The channel sent is invalid on a Raspberry Pi")
        return channel

    @staticmethod
    def _list(channel: object) -> list:
        return list(channel) if isinstance(channel, (list, tuple)) else [channel]

    def setup(self, channel, direction, pull_up_down=PUD_OFF, initial=-1) -> None:
        self.calls.append(("setup", channel, direction, pull_up_down, initial))
        if direction not in (self.IN, self.OUT):
            raise ValueError("An invalid direction was passed to setup()")
        if direction == self.OUT and pull_up_down != self.PUD_OFF:
            raise ValueError("pull_up_down parameter is not valid for outputs")
        if pull_up_down not in (self.PUD_OFF, self.PUD_DOWN, self.PUD_UP):
            raise ValueError("Invalid value for pull_up_down - should be either PUD_OFF, PUD_UP or PUD_DOWN")
        for ch in self._list(channel):
            g = self._bcm(ch)
            level = 0 if initial in (-1, self.LOW) else 1
            self.pins[g] = _Pin(direction, pull_up_down, level if direction == self.OUT else 0, self.now_us)
            self.layout += 1
            self._track(g)

    def output(self, channel, value) -> None:
        self.calls.append(("output", channel, value))
        chans = self._list(channel)
        values = self._list(value) if isinstance(value, (list, tuple)) else [value] * len(chans)
        if len(values) != len(chans):
            raise RuntimeError("Number of channels != number of values")
        for ch, v in zip(chans, values):
            g = self._bcm(ch)
            pin = self.pins.get(g)
            if pin is None or pin.direction != self.OUT:
                raise RuntimeError("The GPIO channel has not been set up as an OUTPUT")
            level = 1 if v else 0
            if level != pin.level:
                pin.level, pin.since_us = level, self.now_us
                self._track(g)

    def _track(self, g: int) -> None:
        pin = self.pins.get(g)
        if pin is not None and pin.direction == self.OUT and pin.level:
            self.driven |= 1 << g
        else:
            self.driven &= ~(1 << g)
        r = self.rows.get(g)
        if r is None:
            return
        pin = self.pins.get(g)
        if pin is not None and pin.direction == self.OUT and pin.level:
            self._high_rows[r] = pin.since_us
            if r == 0:
                with self.scanned:
                    self.scan_times.append(self.stamp_clock())
                    self.scanned.notify_all()
        else:
            if self._high_rows.pop(r, None) is not None:
                self._low_rows[r] = self.now_us

    def input(self, channel) -> int:
        self.calls.append(("input", channel))
        g = self._bcm(channel)
        pin = self.pins.get(g)
        if pin is None:
            raise RuntimeError("You must setup() the GPIO channel first")
        if pin.direction == self.OUT:
            raise RuntimeError(f"GPIO {g} is an output: reading it back returns the Pi's own drive, "
                               "not the matrix (a scan bug)")
        return self._level(g, pin)

    def _level(self, g: int, pin: _Pin) -> int:
        """An input's level: a pressed button, a column through the matrix, else its pull."""
        if g in self.pressed:
            return self.LOW
        c = self.columns.get(g)
        ncols = len(self.columns)
        if c is not None and self._high_rows:
            for r, since in self._high_rows.items():
                if self.now_us - since >= self.rise_us and self.board.conducts(r, c, ncols):
                    return self.HIGH
        if c is not None and self.fall_us:
            for r, since in self._low_rows.items():
                if self.now_us - since < self.fall_us and self.board.conducts(r, c, ncols):
                    return self.HIGH          # still falling through the pull-down
        if pin.pull == self.PUD_DOWN:
            return self.LOW
        if pin.pull == self.PUD_UP:
            return self.HIGH
        raise RuntimeError(f"GPIO {g} is a floating input (no pull resistor): it reads noise")

    def registers(self) -> FakeRegisters:
        """The GPIO bank a register at a time (the module docstring)."""
        return FakeRegisters(self)

    def _drive(self, mask: int, level: int) -> None:
        while mask:
            bit = mask & -mask
            mask ^= bit
            g = bit.bit_length() - 1
            pin = self.pins.get(g)
            if pin is None or pin.direction != self.OUT:
                raise RuntimeError(f"GPIO {g} is not set up as an output: a write to its bit changes nothing "
                                   "on a Pi (a scan bug)")
            if level != pin.level:
                pin.level, pin.since_us = level, self.now_us
                self._track(g)

    def cleanup(self, channel=None) -> None:
        self.calls.append(("cleanup", channel))
        if channel is None:
            chans = list(self.pins)
            self.mode = None
        else:
            chans = [self._bcm(c) for c in self._list(channel)]
        for g in chans:
            self.pins.pop(g, None)
            self.layout += 1
            self._track(g)


class FakeRegisters:
    """GPSET0, GPCLR0 and GPLEV0 of a :class:`FakeGPIO` (``gpio_registers.GpioRegisters``)."""

    def __init__(self, gpio: FakeGPIO) -> None:
        self.gpio = gpio
        self.closed = False
        self._board_closed: frozenset[int] | None = None
        self._row_columns: dict[int, int] = {}       # row -> the column GPIOs it conducts to
        self._memo: dict[tuple, int] = {}             # (pins driven, set-up, buttons, switches) -> the word

    def set(self, mask: int) -> None:
        self.gpio.calls.append(("set", mask))
        self.gpio._drive(mask, 1)

    def clear(self, mask: int) -> None:
        self.gpio.calls.append(("clear", mask))
        self.gpio._drive(mask, 0)

    def levels(self) -> int:
        """Bit n: GPIO n's level, as :meth:`FakeGPIO.input` reads an input (outputs their drive;
        a pin not set up reads 0). As quick as the fake can make it -- on a Pi this is one load
        -- so a benchmark measures the scan, not the model: the word is kept for each state of
        the pins and switches seen (unless rises and falls take time), and the columns a row
        conducts to are worked out once per change of the board."""
        gpio = self.gpio
        gpio.calls.append(("levels",))
        key = (gpio.driven, gpio.layout, frozenset(gpio.pressed), gpio.board.closed) \
            if not (gpio.rise_us or gpio.fall_us) else None
        word = self._memo.get(key) if key is not None else None
        if word is None:
            word = self._levels()
            if key is not None:
                if len(self._memo) > 64:
                    self._memo.clear()
                self._memo[key] = word
        return word

    def _levels(self) -> int:
        gpio = self.gpio
        word = 0
        columns = gpio.columns
        for g, pin in gpio.pins.items():
            if pin.direction == gpio.OUT:
                word |= pin.level << g
            elif g in gpio.pressed:
                continue
            elif pin.pull == gpio.PUD_UP:
                word |= 1 << g
            elif pin.pull != gpio.PUD_DOWN and g in columns:
                raise RuntimeError(f"GPIO {g} is a floating input (no pull resistor): it reads noise")
        board = gpio.board
        if board.closed is not self._board_closed:
            self._board_closed, self._row_columns = board.closed, {}
        masks = self._row_columns
        now = gpio.now_us
        high = 0
        for r, since in gpio._high_rows.items():
            if now - since >= gpio.rise_us:
                high |= masks[r] if r in masks else self._row_mask(r)
        if gpio.fall_us:
            for r, since in gpio._low_rows.items():
                if now - since < gpio.fall_us:
                    high |= masks[r] if r in masks else self._row_mask(r)
        for g in columns:
            pin = gpio.pins.get(g)
            if high >> g & 1 and pin is not None and pin.direction == gpio.IN and g not in gpio.pressed:
                word |= 1 << g
        return word

    def _row_mask(self, r: int) -> int:
        gpio = self.gpio
        ncols = len(gpio.columns)
        mask = 0
        for g, c in gpio.columns.items():
            if gpio.board.conducts(r, c, ncols):
                mask |= 1 << g
        self._row_columns[r] = mask
        return mask

    def close(self) -> None:
        self.closed = True
