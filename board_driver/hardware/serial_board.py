"""The Pico serial board: sensors and LEDs through :mod:`firmware_bridge`.

One :class:`SerialBoard` is both the :class:`~board_driver.devices.SensorSource` and the
:class:`~board_driver.devices.LedSink` of a board whose Pico runs the firmware in
``hardware/firmware``. It owns a :class:`firmware_bridge.link.Link`:

* ``read`` returns each occupancy the board sends (on change, on request, and the periodic
  refresh) as a :class:`~board_driver.devices.RawFrame` stamped with the link's clock; link
  state changes and board errors are kept in :attr:`SerialBoard.notices` and logged (a state
  change ends the wait with None, so the reader sees it at once); ``wake`` ends a wait too;
* ``show`` maps physical squares to the LED chain (the profile's :class:`LedOrder`) and hands
  the frame to the link, which re-sends it until acknowledged and after every reconnect;
* ``health`` is the link's counters, for ``fairyboard selftest``;
* :meth:`SerialBoard.host_debounce_ms` says whether the driver should debounce the frames
  again: not while the Pico debounces them (its ``debounce_ms`` setting is above 0), since an
  OCCUPANCY frame reports each sensor's *debounced* state (``hardware/PROTOCOL.md``, sections
  5 and 6) and a second debounce on the host only makes every change wait twice.

:func:`open_serial_board` starts the link's reader thread and waits for the board's Hello.
A test drives a link without a thread instead (``read(0)`` only drains what has arrived).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Sequence

from board_driver.devices import LedImage, RawFrame
from board_driver.hardware._check import Section
from board_driver.errors import HardwareError
from board_driver.hardware.pi_leds import budget_brightness
from board_driver.referee.layout import LedOrder
from firmware_bridge import BoardError, Hello, Occupancy, Settings
from firmware_bridge.link import Link, LinkHealth, LinkStatus, LinkTimings

log = logging.getLogger(__name__)

DEFAULT_PORTS = ("/dev/fairyboard", "/dev/serial/by-id/usb-MicroPython*", "/dev/ttyACM*")
HOST_DEBOUNCE = ("auto", "always")


@dataclass(frozen=True, slots=True)
class SerialConfig:
    """Where the Pico is and how it should scan (``hardware.sensors`` with ``backend: serial``)."""

    ports: tuple[str, ...] = DEFAULT_PORTS
    scan_ms: int = 10
    debounce_ms: int = 30
    periodic_ms: int = 1000
    heartbeat_ms: int = 1000
    ready_timeout: float = 5.0
    #: ``auto``: the driver does not debounce again what the Pico has debounced (``debounce_ms``
    #: above 0); ``always``: it does (its own ``driver.debounce_ms`` on top: for comparison)
    host_debounce: str = "auto"

    @classmethod
    def from_section(cls, s: Section) -> SerialConfig:
        s.only(("backend", "ports", "port", "scan_ms", "debounce_ms", "periodic_ms", "heartbeat_ms",
                "ready_timeout", "host_debounce"))
        if s.has("port") and s.has("ports"):
            raise s.fail("port", s.get("port"), "give either port or ports, not both")
        if s.has("port"):
            ports: tuple[str, ...] = (s.text("port"),)
        elif s.has("ports"):
            raw = s.get("ports")
            if not isinstance(raw, list) or not raw or not all(isinstance(p, str) and p for p in raw):
                raise s.fail("ports", raw, "must be a list of port names, URLs or globs, first choice first")
            ports = tuple(raw)
        else:
            ports = DEFAULT_PORTS
        periodic = s.integer("periodic_ms", 1000, 0, 60000)
        if 0 < periodic < 100:
            raise s.fail("periodic_ms", periodic, "must be 0 (off) or from 100 to 60000")
        return cls(ports, s.integer("scan_ms", 10, 1, 1000), s.integer("debounce_ms", 30, 0, 5000), periodic,
                   s.integer("heartbeat_ms", 1000, 100, 60000), s.number("ready_timeout", 5.0, 0.1, 600),
                   s.choice("host_debounce", HOST_DEBOUNCE, "auto"))

    def board_settings(self) -> Settings:
        return Settings(self.scan_ms, self.debounce_ms, self.periodic_ms, self.heartbeat_ms)


class SerialBoard:
    """A SensorSource and LedSink over a firmware link (see the module docstring)."""

    def __init__(self, link: Link, *, led_order: LedOrder = LedOrder(), brightness: int = 255,
                 sensor_count: int | None = None, led_count: int | None = None,
                 budget_ma: int | None = None, debounce_ms: int | None = None,
                 host_debounce: str = "auto") -> None:
        self.link = link
        self.debounce_ms = debounce_ms      # what the link asks the board for (None: not known)
        self.host_debounce = host_debounce
        self.led_order = led_order
        self.brightness = brightness
        self.budget_ma = budget_ma
        hello = link.hello
        size = led_order.files * led_order.ranks
        self.sensor_count = sensor_count if sensor_count is not None else (hello.sensor_count if hello else size)
        self.led_count = led_count if led_count is not None else size
        self.notices: deque = deque(maxlen=100)
        self._last_led: tuple | None = None
        self._closed = False

    # -- SensorSource --
    def read(self, timeout: float) -> RawFrame | None:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            left = deadline - time.monotonic()
            item = self.link.get(timeout=left if left > 0 else 0)
            if item is None:
                return None
            msg = item.message
            if isinstance(msg, Occupancy):
                closed = msg.closed
                if msg.sensor_count != self.sensor_count:
                    closed = frozenset(i for i in closed if i < self.sensor_count)
                return RawFrame(int(round(item.at * 1000)), closed)
            if isinstance(msg, (LinkStatus, BoardError)):
                self.notices.append(item)
                if isinstance(msg, LinkStatus):
                    log.info("board link %s: %s", msg.state.value, msg.reason)
                    return None         # the reader looks at the notices now, not at its next frame
                log.warning("board reports %s: %s", msg.code.name, msg.text or msg.detail)

    def wake(self) -> None:
        """Make a ``read`` waiting now (or the next one) return None at once: the service loop
        has a command to take (:class:`board_driver.referee.runner.LoopQueue`). Any thread."""
        self.link.wake()

    # -- LedSink --
    def show(self, frame: LedImage) -> None:
        if self._closed:
            raise HardwareError("show() on a closed serial board")
        if len(frame.colors) != self.led_order.files * self.led_order.ranks:
            raise HardwareError(f"an LED frame of {len(frame.colors)} squares for a "
                                f"{self.led_order.files}x{self.led_order.ranks} board")
        colours = self.led_order.to_chain(frame.colors)
        blink = self.led_order.to_chain(frame.blink)
        key = (colours, blink)
        if key == self._last_led:
            return                                  # the link keeps the board in sync already
        self._last_led = key
        self.link.send_leds(colours, blink, budget_brightness(colours, self.brightness, self.budget_ma))

    def show_chain(self, colours: Sequence[tuple[int, int, int]]) -> None:
        """Light LEDs by chain index, bypassing the LED order (calibration checks the order)."""
        self._last_led = None
        colours = tuple(colours)
        self.link.send_leds(colours, None, budget_brightness(colours, self.brightness, self.budget_ma))

    # -- debouncing --
    def board_debounce_ms(self) -> int:
        """How long the board debounces each sensor before it reports a change: the SETTINGS in
        force it last reported, else what the link asks for at every handshake; 0 when not
        known (then the board is taken to report raw readings)."""
        reported = self.link.health().board_settings
        if reported is not None:
            return reported.debounce_ms
        return self.debounce_ms or 0

    def host_debounce_ms(self, driver_ms: int) -> int:
        """How long the driver should debounce this board's frames, ``driver_ms`` being its own
        setting (``driver.debounce_ms``): 0 while the Pico debounces, unless the profile says
        ``host_debounce: always``."""
        if self.host_debounce == "always" or self.board_debounce_ms() <= 0:
            return driver_ms
        return 0

    # -- diagnostics --
    def health(self) -> LinkHealth:
        return self.link.health()

    @property
    def hello(self) -> Hello | None:
        return self.link.hello

    def close(self) -> None:
        """Darken the LEDs (when the board is there to hear it) and close the link."""
        if self._closed:
            return
        self._closed = True
        try:
            self.link.send_leds((), None, self.brightness)
        finally:
            self.link.close()


def open_serial_board(config: SerialConfig, *, led_order: LedOrder, brightness: int = 255,
                      sensor_count: int | None = None, clock: Callable[[], float] = time.monotonic,
                      open_port: Callable | None = None, timings: LinkTimings = LinkTimings(),
                      budget_ma: int | None = None) -> SerialBoard:
    """Open the first port that answers, start the reader thread and wait for the Hello."""
    link = Link(list(config.ports), clock=clock, timings=timings, settings=config.board_settings(),
                open_port=open_port)
    link.start()
    try:
        hello = link.wait_ready(config.ready_timeout)
    except Exception:
        link.close()
        raise
    size = led_order.files * led_order.ranks
    if hello.files * hello.ranks != size or hello.sensor_count < (sensor_count or size):
        link.close()
        raise HardwareError(f"the board on {link.health().port} has a {hello.files}x{hello.ranks} matrix "
                            f"({hello.sensor_count} sensors), the profile a {led_order.files}x{led_order.ranks} board")
    if hello.led_count < size:
        log.warning("the board on %s drives %d LEDs for %d squares", link.health().port, hello.led_count, size)
    return SerialBoard(link, led_order=led_order, brightness=brightness, sensor_count=sensor_count or size,
                       budget_ma=budget_ma, debounce_ms=config.debounce_ms, host_debounce=config.host_debounce)
