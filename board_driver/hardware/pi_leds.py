"""WS2812 LEDs driven from the Pi itself, when the board has no Pico.

Two drivers, each through a well-kept library that is an optional extra (imported only when
used, with an error saying what to install):

``spi`` (``pip install 'fairyboard[leds]'``: py-spidev)
    The LED data line on SPI0 MOSI (GPIO 10). Every WS2812 bit becomes three SPI bits at
    2.4 MHz (``100`` for a 0, ``110`` for a 1), so the kernel's SPI driver makes the timing.
    Works on every Pi including the Pi 5, and without root (the service user is in group
    ``spi``). Enable SPI (``dtparam=spi=on``); on a Pi 3/4 fix the core clock
    (``core_freq=250`` / ``core_freq_min=500``) so the SPI clock does not drift.
``ws281x`` (``pip install 'fairyboard[leds-pwm]'``: rpi_ws281x)
    PWM on GPIO 18 (or 12, 13, 19), PCM on GPIO 21, or SPI on GPIO 10 through the rpi_ws281x
    library. Pi 1-4 only, and PWM/PCM need root.

:class:`PiLedSink` is the :class:`~board_driver.devices.LedSink`: it maps physical squares to
the chain with the profile's :class:`~board_driver.referee.layout.LedOrder`, scales by brightness and
runs the blink patterns on its clock with the same phases as the Pico firmware (slow: on
while ``ms % 1000 < 500``; fast: on while ``ms % 250 < 125``). :meth:`PiLedSink.tick` redraws
when a blink phase changes; :meth:`PiLedSink.start` runs ``tick`` in a thread of its own, which
sleeps until the next phase edge (:meth:`PiLedSink.next_edge`: every 125 ms while a square
blinks fast, every 500 ms while only slow patterns blink) and, while nothing blinks, until a
new frame comes: an idle board's LEDs cost no wake-up at all.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from board_driver.devices import DARK, FAST, RGB, SLOW, SLOW_INVERTED, STEADY, Blink, LedImage
from board_driver.hardware._check import Section
from board_driver.errors import HardwareError, MissingLibraryError
from board_driver.referee.layout import LedOrder

DRIVERS = ("spi", "ws281x")
WS281X_PINS = {18: 0, 12: 0, 10: 0, 21: 0, 13: 1, 19: 1}   # pin -> PWM channel
SPI_HZ = 2_400_000
RESET_BYTES = 90      # 300 us of low at 2.4 MHz: the latch (WS2812B needs > 280 us)
#: Low bytes sent before every frame: MOSI may idle high between transfers (it keeps the last
#: bit on some controllers), and the first LED would take the rising edge of the frame's
#: first bit for the end of a bit already started; 300 us of low first is a clean reset.
LEAD_BYTES = 90
#: Current model of a WS2812B (the firmware's is the same): dark, and per channel at 255.
LED_IDLE_MA = 1
LED_CHANNEL_MA = 20
#: Default LED current budget (mA): the BOM's 2.5 A slow-blow fuse at 64% (1.5 A + 0.1 A dark), on a 5 V 3 A LED supply.
BUDGET_MA = 1500


def current_ma(pixels: Sequence[RGB]) -> float:
    """What a chain showing ``pixels`` draws (mA), by the model above."""
    return len(pixels) * LED_IDLE_MA + sum(r + g + b for r, g, b in pixels) * LED_CHANNEL_MA / 255


def fit_budget(pixels: Sequence[RGB], budget_ma: int | None) -> list[RGB]:
    """``pixels`` scaled by one factor (rounding down) so that they draw at most ``budget_ma``;
    unchanged when they fit. The Pico firmware does exactly this with its own budget."""
    pixels = list(pixels)
    if budget_ma is None:
        return pixels
    total = sum(r + g + b for r, g, b in pixels)
    allowed = max(0, budget_ma - LED_IDLE_MA * len(pixels)) * 255 // LED_CHANNEL_MA
    if total <= allowed:
        return pixels
    return [(r * allowed // total, g * allowed // total, b * allowed // total) for r, g, b in pixels]


def budget_brightness(colours: Sequence[RGB], brightness: int, budget_ma: int | None) -> int:
    """The highest brightness (at most ``brightness``) at which ``colours``, all lit, fit the
    budget -- for a board that scales by its brightness byte (the Pico's LED_FRAME)."""
    if budget_ma is None:
        return brightness
    b = brightness
    while b > 0 and current_ma([((r * b + 127) // 255, (g * b + 127) // 255, (bl * b + 127) // 255)
                                for r, g, bl in colours]) > budget_ma:
        b -= 1
    return b


@dataclass(frozen=True, slots=True)
class PiLedConfig:
    """``hardware.leds`` with ``backend: pi``."""

    driver: str = "spi"
    pin: int = 10
    spi_bus: int = 0
    spi_device: int = 0
    brightness: int = 64
    count: int = 96
    budget_ma: int = BUDGET_MA

    @classmethod
    def from_section(cls, s: Section, count: int) -> PiLedConfig:
        s.only(("backend", "driver", "pin", "spi_bus", "spi_device", "brightness", "budget_ma"))
        driver = s.choice("driver", DRIVERS, "spi")
        if driver == "spi":
            pin = s.integer("pin", 10, 10, 10) if s.has("pin") else 10
        else:
            pin = s.pin("pin", 18)
            if pin not in WS281X_PINS:
                raise s.fail("pin", pin, f"rpi_ws281x drives GPIO {', '.join(map(str, sorted(WS281X_PINS)))}")
        return cls(driver, pin, s.integer("spi_bus", 0, 0, 6), s.integer("spi_device", 0, 0, 3),
                   s.integer("brightness", 64, 0, 255), count, budget(s))


def budget(s: Section) -> int:
    """``budget_ma``: the most the LEDs may draw from their supply, in mA."""
    return s.integer("budget_ma", BUDGET_MA, 100, 20000)


class PixelDriver(Protocol):
    """A chain of RGB LEDs: ``write`` shows one (r, g, b) per LED, in chain order."""

    count: int

    def write(self, pixels: Sequence[RGB]) -> None: ...

    def close(self) -> None: ...


# --- SPI --------------------------------------------------------------------------------------

def _spi_table() -> tuple[bytes, ...]:
    table = []
    for byte in range(256):
        bits = 0
        for i in range(7, -1, -1):
            bits = (bits << 3) | (0b110 if byte >> i & 1 else 0b100)
        table.append(bits.to_bytes(3, "big"))
    return tuple(table)


_SPI = _spi_table()


def encode_spi(pixels: Sequence[RGB]) -> bytes:
    """The SPI bytes (at 2.4 MHz) that send ``pixels`` to a WS2812 chain: a low period, the
    pixels in GRB order, then the latch."""
    out = bytearray(LEAD_BYTES)
    table = _SPI
    for r, g, b in pixels:
        out += table[g]
        out += table[r]
        out += table[b]
    out += bytes(RESET_BYTES)
    return bytes(out)


def decode_spi(data: bytes, *, idle_high: bool = True) -> list[RGB]:
    """The pixels a WS2812 chain reads from :func:`encode_spi`'s bytes (for checks).

    ``idle_high``: MOSI idled high before the transfer (as it may); then the line must be low
    for the reset time (280 us) before the first bit, or the first LED misreads: that is
    reported as an error here."""
    bits = "".join(f"{b:08b}" for b in data)
    lead = len(bits) - len(bits.lstrip("0"))
    if idle_high and lead < 280e-6 * SPI_HZ:
        raise ValueError(f"the line is low for only {lead} SPI bits before the first pixel: after an idle-high "
                         "MOSI the first LED misreads its first bit")
    bits = bits[lead - lead % 3:] if lead else bits
    values: list[int] = []
    byte = n = i = 0
    while i + 3 <= len(bits):
        sym = bits[i:i + 3]
        if sym == "000":
            break                                    # the latch: the line stays low
        if sym not in ("100", "110"):
            raise ValueError(f"not a WS2812 symbol at SPI bit {i}: {sym}")
        byte, n, i = byte << 1 | (sym == "110"), n + 1, i + 3
        if n == 8:
            values.append(byte)
            byte = n = 0
    if "1" in bits[i:] or n or len(values) % 3:
        raise ValueError("stray bits after the last whole pixel")
    return [(values[k + 1], values[k], values[k + 2]) for k in range(0, len(values), 3)]


class SpiDriver:
    """WS2812 on SPI MOSI through py-spidev."""

    def __init__(self, count: int, bus: int = 0, device: int = 0, *, spidev_module=None) -> None:
        if spidev_module is None:
            try:
                import spidev  # pyright: ignore[reportMissingImports]  (the pi extra: only on a Pi)
            except ImportError as exc:
                raise MissingLibraryError(
                    f"LEDs on the Pi's SPI need the spidev module ({exc}): "
                    "`pip install 'fairyboard[leds]'`, and enable SPI (dtparam=spi=on)") from None
            spidev_module = spidev
        self.count = count
        self._spi = spidev_module.SpiDev()
        try:
            self._spi.open(bus, device)
        except OSError as exc:
            raise HardwareError(f"cannot open /dev/spidev{bus}.{device}: {exc.strerror or exc} "
                                "(is SPI enabled, and is the user in group spi?)") from None
        self._spi.max_speed_hz = SPI_HZ
        self._spi.mode = 0
        try:
            # No chip select: with dtoverlay=spi0-0cs the driver would still toggle GPIO 8 on
            # every write, and GPIO 8 may be wired to something else (WIRING.md).
            self._spi.no_cs = True
        except (OSError, AttributeError):
            pass

    def write(self, pixels: Sequence[RGB]) -> None:
        self._spi.writebytes2(encode_spi(pixels))

    def close(self) -> None:
        self._spi.close()


class Ws281xDriver:
    """WS2812 through the rpi_ws281x library (PWM, PCM or SPI; Pi 1-4)."""

    def __init__(self, count: int, pin: int = 18, *, module=None) -> None:
        if module is None:
            try:
                import rpi_ws281x  # pyright: ignore[reportMissingImports]  (the pi extra: only on a Pi)
            except ImportError as exc:
                raise MissingLibraryError(
                    f"LEDs on the Pi's PWM need the rpi_ws281x module ({exc}): "
                    "`pip install 'fairyboard[leds-pwm]'` (Raspberry Pi 1-4; run as root), "
                    "or use driver: spi") from None
            module = rpi_ws281x
        self.count = count
        self._color = module.Color
        self._strip = module.PixelStrip(count, pin, 800_000, 10, False, 255, WS281X_PINS.get(pin, 0))
        try:
            self._strip.begin()
        except RuntimeError as exc:
            raise HardwareError(f"rpi_ws281x cannot start on GPIO {pin}: {exc} (PWM and PCM need root)") from None

    def write(self, pixels: Sequence[RGB]) -> None:
        for i, (r, g, b) in enumerate(pixels):
            self._strip.setPixelColor(i, self._color(r, g, b))
        self._strip.show()

    def close(self) -> None:
        pass


def open_driver(config: PiLedConfig) -> PixelDriver:
    if config.driver == "spi":
        return SpiDriver(config.count, config.spi_bus, config.spi_device)
    return Ws281xDriver(config.count, config.pin)


# --- the sink ---------------------------------------------------------------------------------

def blink_phase(ms: int) -> int:
    """Bit 0: slow patterns in their on half; bit 1: fast patterns in their on half."""
    return (1 if ms % 1000 < 500 else 0) | (2 if ms % 250 < 125 else 0)


FAST_EDGE_MS = 125
"""A fast pattern changes every 125 ms (on while ``ms % 250 < 125``), a slow one every 500 ms."""
SLOW_EDGE_MS = 500
EDGE_LATE_S = 0.001
"""The blink thread wakes this long after a phase edge, so that the clock reads the new phase."""


def _on(pattern: Blink, phase: int) -> bool:
    return (pattern == STEADY or (pattern == SLOW and phase & 1 != 0) or (pattern == FAST and phase & 2 != 0)
            or (pattern == SLOW_INVERTED and not phase & 1))


class PiLedSink:
    """A :class:`~board_driver.devices.LedSink` on a :class:`PixelDriver` (see the module docstring)."""

    def __init__(self, driver: PixelDriver, *, order: LedOrder = LedOrder(), brightness: int = 255,
                 clock: Callable[[], float] = time.monotonic, budget_ma: int | None = BUDGET_MA) -> None:
        self.driver = driver
        self.order = order
        self.brightness = brightness
        self.budget_ma = budget_ma
        self.led_count = order.files * order.ranks
        if driver.count < self.led_count:
            raise HardwareError(f"an LED chain of {driver.count} for {self.led_count} squares")
        self._clock = clock
        self._chain: tuple[RGB, ...] = (DARK,) * driver.count
        self._blink: tuple[Blink, ...] = (STEADY,) * driver.count
        self._blinking = False
        self._edge_ms = SLOW_EDGE_MS         # while blinking: the phase edges' spacing
        self._phase = -1
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)   # a new frame, or close
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._closed = False
        self.writes = 0
        self.wakes = 0                       # times the blink thread woke (a frame, or a phase edge)

    def show(self, frame: LedImage) -> None:
        if len(frame.colors) != self.led_count:
            raise HardwareError(f"an LED frame of {len(frame.colors)} squares for a "
                                f"{self.order.files}x{self.order.ranks} board")
        pad = self.driver.count - self.led_count
        self._set(self.order.to_chain(frame.colors) + (DARK,) * pad,
                  self.order.to_chain(frame.blink) + (STEADY,) * pad)

    def show_chain(self, colours: Sequence[RGB]) -> None:
        """Light LEDs by chain index, bypassing the LED order (calibration checks the order)."""
        colours = tuple(colours)[:self.driver.count]
        self._set(colours + (DARK,) * (self.driver.count - len(colours)), (STEADY,) * self.driver.count)

    def _set(self, chain: tuple, blink: tuple) -> None:
        with self._lock:
            if self._closed:
                raise HardwareError("show() on closed LEDs")
            self._chain, self._blink = chain, blink
            self._blinking = any(b != STEADY for b in blink)
            self._edge_ms = FAST_EDGE_MS if FAST in blink else SLOW_EDGE_MS
            self._render()
            self._changed.notify_all()       # the blink thread: blinking or not, and its next edge

    def _render(self) -> None:
        ms = int(self._clock() * 1000)
        phase = blink_phase(ms) if self._blinking else 0
        br = self.brightness
        pixels = []
        for (r, g, b), pattern in zip(self._chain, self._blink):
            if _on(pattern, phase):
                pixels.append(((r * br + 127) // 255, (g * br + 127) // 255, (b * br + 127) // 255))
            else:
                pixels.append(DARK)
        self.driver.write(fit_budget(pixels, self.budget_ma))
        self.writes += 1
        self._phase = phase

    def tick(self) -> bool:
        """Redraw if a blink phase changed since the last draw; True if it drew."""
        with self._lock:
            return self._tick()

    def _tick(self) -> bool:
        if self._closed or not self._blinking:
            return False
        if blink_phase(int(self._clock() * 1000)) == self._phase:
            return False
        self._render()
        return True

    def next_edge(self) -> float | None:
        """Seconds until the next blink phase edge of the frame shown (just after it), or None
        while nothing blinks: how long the blink thread sleeps unless a new frame comes."""
        with self._lock:
            return self._next_edge()

    def _next_edge(self) -> float | None:
        if not self._blinking:
            return None
        now = self._clock()
        step = self._edge_ms
        edge = (int(now * 1000) // step + 1) * step
        return edge / 1000 - now + EDGE_LATE_S

    def start(self) -> PiLedSink:
        """Run :meth:`tick` in a daemon thread until :meth:`close`, at every blink phase edge
        while something blinks, and not at all while nothing does (a second call does nothing)."""
        with self._lock:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name="fairyboard-leds", daemon=True)
                self._thread.start()
        return self

    def _run(self) -> None:
        with self._changed:
            while not self._stopping:
                self._changed.wait(self._next_edge())     # None: until a new frame
                if self._stopping:
                    return
                self.wakes += 1
                self._tick()

    def close(self) -> None:
        """Stop blinking, darken the chain and release the driver."""
        with self._lock:
            self._stopping = True
            self._changed.notify_all()
            thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self.driver.write([DARK] * self.driver.count)
            finally:
                self.driver.close()
