"""The device boundaries of the board driver: sensor sources and LED sinks.

A hardware backend (GPIO matrix scan, the Pico firmware over serial, the simulator, an event
file) plugs into the driver by implementing one of two small Protocols:

* :class:`SensorSource` -- ``read(timeout)`` returns the next :class:`RawFrame` (the set of
  closed sensor indexes, stamped in milliseconds on the clock the backend was given), or None
  when no frame arrived within ``timeout`` seconds. A source may send a frame on every scan or
  only on change; the debouncer does not mind. ``sensor_count`` says how many sensors exist
  (board squares first, then any reserve-tray sensors).
* :class:`LedSink` -- ``show(frame)`` displays one :class:`LedImage`: a colour and a blink
  pattern per *physical square* of the board (rank-major, a1 first, ``files * ranks`` of them).
  The sink maps physical squares to its LED chain (along ranks or files, straight or serpentine, any corner first:
  see :class:`board_driver.referee.layout.LedOrder`) and runs the blink patterns itself (the Pico
  firmware does; a GPIO sink needs a timer of its own).

Both are closed with ``close()``. Everything above them -- calibration, debouncing,
reconciliation, the LED scene -- is pure and works in physical squares or game squares
through :class:`board_driver.referee.layout.Layout`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from board_driver.errors import BoardDriverError
from firmware_bridge.messages import Blink

RGB = tuple[int, int, int]
DARK: RGB = (0, 0, 0)

# Blink patterns: the firmware protocol's enum (an IntEnum, so the wire values stay 0-3), which
# every sink runs alike; the short names are the ones the scene and the sinks import.
STEADY, SLOW, FAST, SLOW_INVERTED = Blink.STEADY, Blink.SLOW, Blink.FAST, Blink.SLOW_INVERTED
BLINK_NAMES = {STEADY: "steady", SLOW: "slow", FAST: "fast", SLOW_INVERTED: "slow-inverted"}


@dataclass(frozen=True, slots=True)
class RawFrame:
    """One scan of the sensors: which sensor indexes are closed, at ``t`` milliseconds."""

    t: int
    closed: frozenset[int]
    gap: bool = False       # the first frame after a time nobody watched (the link came back): read afresh

    def __repr__(self) -> str:
        return f"RawFrame({self.t!r}, frozenset({sorted(self.closed)!r})" + (", gap=True)" if self.gap else ")")


@dataclass(frozen=True, slots=True)
class LedImage:
    """A colour ``(r, g, b)`` and a blink pattern for every physical square, a1 first."""

    colors: tuple[RGB, ...]
    blink: tuple[Blink, ...]

    def __post_init__(self) -> None:
        if len(self.colors) != len(self.blink):
            raise LedImageError(f"LedImage has {len(self.colors)} colours but {len(self.blink)} blink patterns")

    @classmethod
    def dark(cls, size: int) -> LedImage:
        return cls((DARK,) * size, (STEADY,) * size)

    def lit(self) -> dict[int, tuple[RGB, Blink]]:
        """The squares that are not dark: {physical square: (colour, blink)}."""
        return {i: (c, b) for i, (c, b) in enumerate(zip(self.colors, self.blink)) if c != DARK}


class LedImageError(BoardDriverError, ValueError):
    """An LED frame is malformed."""


@runtime_checkable
class SensorSource(Protocol):
    """Where raw sensor frames come from (GPIO scan, serial firmware, simulator, event file)."""

    sensor_count: int

    def read(self, timeout: float) -> RawFrame | None:
        """The next frame, or None when none arrived within ``timeout`` seconds."""
        ...

    def close(self) -> None:
        ...


@runtime_checkable
class LedSink(Protocol):
    """Where LED frames go (serial firmware, GPIO strip, simulator)."""

    led_count: int

    def show(self, frame: LedImage) -> None:
        """Display ``frame`` (one entry per physical square) until the next one."""
        ...

    def close(self) -> None:
        ...
