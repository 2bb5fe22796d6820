"""The protocol's messages as frozen values.

Board to host: :class:`Hello`, :class:`Occupancy`, :class:`Heartbeat`, :class:`BoardError`,
:class:`Settings`, :class:`LedAck`, :class:`Pong`.
Host to board: :class:`Request`, :class:`LedFrame`, :class:`SetSettings`, :class:`Ping`.

Constructors check every field against its width on the wire and raise
:class:`~firmware_bridge.errors.MessageError` naming the field and the bad value, so a message
that exists can always be encoded. ``repr`` of every message evaluates back to an equal value.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from itertools import chain
from typing import Any, ClassVar, Iterable, Mapping, Sequence, TypeVar, Union

from firmware_bridge.errors import MessageError

#: The protocol version this package speaks (``Hello.protocol_version``).
PROTOCOL_VERSION = 1


_E = TypeVar("_E", bound=IntEnum)


class _WireEnum(IntEnum):
    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    __str__ = __repr__


class OccupancyReason(_WireEnum):
    """Why the board sent an occupancy frame."""

    CHANGE = 1     #: the debounced occupancy changed
    REFRESH = 2    #: periodic refresh, or the first frame after boot
    REQUESTED = 3  #: the host asked (``Request(RequestKind.OCCUPANCY)``)


class RequestKind(_WireEnum):
    """What a :class:`Request` asks the board to send."""

    HELLO = 1
    SETTINGS = 2
    OCCUPANCY = 3


class Blink(_WireEnum):
    """Blink pattern of one LED; phases run on the board's uptime clock, so LEDs blink together."""

    STEADY = 0         #: always on
    SLOW = 1           #: on 500 ms, off 500 ms (on while uptime % 1000 < 500)
    FAST = 2           #: on 125 ms, off 125 ms (on while uptime % 250 < 125)
    SLOW_INVERTED = 3  #: SLOW in opposite phase (on while uptime % 1000 >= 500)


class ErrorCode(_WireEnum):
    """What went wrong, in a :class:`BoardError`."""

    BAD_FRAME = 1      #: a received frame failed COBS, length or CRC checks
    UNKNOWN_TYPE = 2   #: a well-formed frame of a type the board does not accept
    BAD_PAYLOAD = 3    #: a payload of the wrong size or with an invalid value
    LED_COUNT = 4      #: an LED frame for more LEDs than the board has
    BAD_SETTING = 5    #: a setting out of range; detail is the offending value
    INTERNAL = 6       #: the firmware failed; text says how


def _uint(owner: str, name: str, value: object, bits: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageError(f"{owner}.{name} must be an int, got {value!r}")
    if not 0 <= value < (1 << bits):
        raise MessageError(f"{owner}.{name} must be 0..{(1 << bits) - 1}, got {value!r}")
    return value


def _enum(owner: str, name: str, value: Any, enum: type[_E]) -> _E:
    try:
        return enum(value)      # any value: a bad one is the ValueError below
    except ValueError:
        allowed = ", ".join(f"{m.value} ({m.name})" for m in enum)
        raise MessageError(f"{owner}.{name} must be one of {allowed}; got {value!r}") from None


def _colour_tuple(i: int, c: Any) -> tuple:
    try:
        return tuple(c)
    except TypeError:
        raise MessageError(f"LedFrame.colours[{i}] must be (r, g, b), got {c!r}") from None


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


# --- board to host ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """The board introduces itself: at boot, and whenever the host sends ``Request(HELLO)``.

    ``boot_id`` is random per boot: a hello with a new ``boot_id`` means the board was reset.
    ``files`` x ``ranks`` is the sensor matrix (columns x rows); sensor index = row * files + col.
    """

    TYPE: ClassVar[int] = 0x01

    protocol_version: int
    firmware_version: tuple[int, int, int]
    sensor_count: int
    led_count: int
    files: int
    ranks: int
    boot_id: int

    def __post_init__(self) -> None:
        _uint("Hello", "protocol_version", self.protocol_version, 8)
        version = tuple(self.firmware_version)
        if len(version) != 3:
            raise MessageError(f"Hello.firmware_version must be (major, minor, patch), got {self.firmware_version!r}")
        for part in version:
            _uint("Hello", "firmware_version", part, 8)
        _set(self, "firmware_version", version)
        _uint("Hello", "sensor_count", self.sensor_count, 16)
        _uint("Hello", "led_count", self.led_count, 16)
        _uint("Hello", "files", self.files, 8)
        _uint("Hello", "ranks", self.ranks, 8)
        _uint("Hello", "boot_id", self.boot_id, 16)

    def __repr__(self) -> str:
        return (f"Hello(protocol_version={self.protocol_version}, firmware_version={self.firmware_version!r}, "
                f"sensor_count={self.sensor_count}, led_count={self.led_count}, files={self.files}, "
                f"ranks={self.ranks}, boot_id=0x{self.boot_id:04X})")


@dataclass(frozen=True, slots=True)
class Occupancy:
    """The full set of closed sensors, as a bitmask: bit ``i`` of ``mask`` is sensor ``i``.

    ``seq`` counts occupancy frames (mod 65536) since the board booted, whatever their reason,
    so a gap means frames were lost and a repeat means a frame arrived twice.
    """

    TYPE: ClassVar[int] = 0x02

    seq: int
    reason: OccupancyReason
    sensor_count: int
    mask: int

    def __post_init__(self) -> None:
        _uint("Occupancy", "seq", self.seq, 16)
        _set(self, "reason", _enum("Occupancy", "reason", self.reason, OccupancyReason))
        _uint("Occupancy", "sensor_count", self.sensor_count, 16)
        if isinstance(self.mask, bool) or not isinstance(self.mask, int) or self.mask < 0:
            raise MessageError(f"Occupancy.mask must be a non-negative int, got {self.mask!r}")
        if self.mask >> self.sensor_count:
            raise MessageError(
                f"Occupancy.mask 0x{self.mask:X} has sensors beyond sensor_count={self.sensor_count}")

    @classmethod
    def from_closed(cls, seq: int, sensor_count: int, closed: Iterable[int],
                    reason: OccupancyReason = OccupancyReason.CHANGE) -> "Occupancy":
        """Build from the indexes of the closed sensors."""
        mask = 0
        for i in closed:
            if not 0 <= i < sensor_count:
                raise MessageError(f"sensor index {i!r} is outside 0..{sensor_count - 1}")
            mask |= 1 << i
        return cls(seq, reason, sensor_count, mask)

    @property
    def closed(self) -> frozenset[int]:
        """Indexes of the closed sensors."""
        mask, out, i = self.mask, [], 0
        while mask:
            if mask & 1:
                out.append(i)
            mask >>= 1
            i += 1
        return frozenset(out)

    def is_closed(self, index: int) -> bool:
        """Whether sensor ``index`` is closed."""
        return bool(self.mask >> index & 1)

    def __repr__(self) -> str:
        return (f"Occupancy(seq={self.seq}, reason={self.reason!r}, sensor_count={self.sensor_count}, "
                f"mask=0x{self.mask:X})")


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Sent every ``Settings.heartbeat_ms``: uptime (mod 2**32), last occupancy seq, receive errors."""

    TYPE: ClassVar[int] = 0x03

    uptime_ms: int
    occupancy_seq: int
    rx_errors: int

    def __post_init__(self) -> None:
        _uint("Heartbeat", "uptime_ms", self.uptime_ms, 32)
        _uint("Heartbeat", "occupancy_seq", self.occupancy_seq, 16)
        _uint("Heartbeat", "rx_errors", self.rx_errors, 16)


@dataclass(frozen=True, slots=True)
class BoardError:
    """The board reports a problem: a code, the message type it concerns (0: none), a detail, text."""

    TYPE: ClassVar[int] = 0x04

    code: ErrorCode
    ref_type: int
    detail: int
    text: str = ""

    def __post_init__(self) -> None:
        _set(self, "code", _enum("BoardError", "code", self.code, ErrorCode))
        _uint("BoardError", "ref_type", self.ref_type, 8)
        _uint("BoardError", "detail", self.detail, 16)
        if not isinstance(self.text, str):
            raise MessageError(f"BoardError.text must be a str, got {self.text!r}")
        if len(self.text.encode("utf-8")) > 255:
            raise MessageError(f"BoardError.text must be at most 255 UTF-8 bytes, got {self.text!r}")


@dataclass(frozen=True, slots=True)
class Settings:
    """The board's timing settings, in milliseconds (``periodic_ms == 0``: no periodic refresh).

    Ranges the board accepts: scan 1..1000, debounce 0..5000, periodic 0 or 100..60000,
    heartbeat 100..60000.
    """

    TYPE: ClassVar[int] = 0x05

    scan_period_ms: int = 10
    debounce_ms: int = 30
    periodic_ms: int = 1000
    heartbeat_ms: int = 1000

    def __post_init__(self) -> None:
        for name in ("scan_period_ms", "debounce_ms", "periodic_ms", "heartbeat_ms"):
            _uint("Settings", name, getattr(self, name), 16)


@dataclass(frozen=True, slots=True)
class LedAck:
    """The board has applied the LED frame with this ``seq``."""

    TYPE: ClassVar[int] = 0x06

    seq: int

    def __post_init__(self) -> None:
        _uint("LedAck", "seq", self.seq, 16)


@dataclass(frozen=True, slots=True)
class Pong:
    """Answer to :class:`Ping`, echoing its token."""

    TYPE: ClassVar[int] = 0x07

    token: int

    def __post_init__(self) -> None:
        _uint("Pong", "token", self.token, 16)


# --- host to board ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    """Ask the board to send a :class:`Hello`, its :class:`Settings` or an :class:`Occupancy` now."""

    TYPE: ClassVar[int] = 0x81

    what: RequestKind

    def __post_init__(self) -> None:
        _set(self, "what", _enum("Request", "what", self.what, RequestKind))


Colour = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class LedFrame:
    """Colours for LEDs ``0..len(colours)-1`` (the rest go dark), a blink pattern each, and brightness.

    The board shows ``(c * brightness + 127) // 255`` for each channel ``c`` while the LED's
    pattern is in its on phase, and black otherwise. ``blink`` defaults to all steady.
    """

    TYPE: ClassVar[int] = 0x82

    seq: int
    colours: tuple[Colour, ...]
    blink: tuple[Blink, ...] = ()
    brightness: int = 255

    def __post_init__(self) -> None:
        _uint("LedFrame", "seq", self.seq, 16)
        _uint("LedFrame", "brightness", self.brightness, 8)
        colours = self.colours
        if colours.__class__ is not tuple or set(map(type, colours)) - {tuple}:
            colours = tuple(map(_colour_tuple, range(len(colours)), colours))
        if set(map(len, colours)) - {3}:
            i, bad = next((i, c) for i, c in enumerate(colours) if len(c) != 3)
            raise MessageError(f"LedFrame.colours[{i}] must be (r, g, b), got {bad!r}")
        channels = tuple(chain.from_iterable(colours))
        if set(map(type, channels)) - {int} or (channels and not 0 <= min(channels) <= max(channels) <= 255):
            i, bad = next((i, c) for i, c in enumerate(colours)
                          if any(v.__class__ is not int or not 0 <= v <= 255 for v in c))
            raise MessageError(f"LedFrame.colours[{i}] channels must be ints 0..255, got {bad!r}")
        n = len(colours)
        if n > 0xFFFF:
            raise MessageError(f"LedFrame can carry at most 65535 LEDs, got {n}")
        _set(self, "colours", colours)
        blink = self.blink
        if not blink:
            blink = (Blink.STEADY,) * n
        elif len(blink) != n:
            raise MessageError(f"LedFrame.blink has {len(blink)} entries for {n} colours")
        elif blink.__class__ is not tuple or set(map(type, blink)) - {Blink}:
            blink = tuple(_enum("LedFrame", f"blink[{i}]", p, Blink) for i, p in enumerate(blink))
        _set(self, "blink", blink)

    @classmethod
    def _from_wire(cls, seq: int, colours: tuple[Colour, ...], blink: tuple[Blink, ...],
                   brightness: int) -> "LedFrame":
        """Skip the checks: for the decoder, whose values come from bytes and are valid by
        construction (u8 channels, Blink members, counts that fit a u16)."""
        frame = object.__new__(cls)
        _set(frame, "seq", seq)
        _set(frame, "colours", colours)
        _set(frame, "blink", blink)
        _set(frame, "brightness", brightness)
        return frame

    @classmethod
    def build(cls, seq: int, colours: Sequence[Colour],
              blink: Sequence[int] | Mapping[int, int] | None = None, brightness: int = 255) -> "LedFrame":
        """Like the constructor, but ``blink`` may also be ``None`` (all steady) or a sparse
        ``{led_index: Blink}`` mapping."""
        n = len(colours)
        if blink is None:
            pattern: tuple = ()
        elif isinstance(blink, Mapping):
            full: list[int] = [Blink.STEADY] * n
            for index, p in blink.items():
                if not (isinstance(index, int) and 0 <= index < n):
                    raise MessageError(f"blink index {index!r} is outside 0..{n - 1}")
                full[index] = p
            pattern = tuple(full)
        else:
            pattern = tuple(blink)
        return cls(seq, tuple(colours), pattern, brightness)

    def __repr__(self) -> str:
        if all(p is Blink.STEADY for p in self.blink):
            return f"LedFrame(seq={self.seq}, colours={self.colours!r}, brightness={self.brightness})"
        return (f"LedFrame(seq={self.seq}, colours={self.colours!r}, blink={self.blink!r}, "
                f"brightness={self.brightness})")


@dataclass(frozen=True, slots=True)
class SetSettings:
    """Ask the board to use these settings; it answers with the :class:`Settings` in force."""

    TYPE: ClassVar[int] = 0x83

    settings: Settings

    def __post_init__(self) -> None:
        if not isinstance(self.settings, Settings):
            raise MessageError(f"SetSettings.settings must be a Settings, got {self.settings!r}")


@dataclass(frozen=True, slots=True)
class Ping:
    """Ask the board to answer :class:`Pong` with the same token."""

    TYPE: ClassVar[int] = 0x84

    token: int

    def __post_init__(self) -> None:
        _uint("Ping", "token", self.token, 16)


Message = Union[Hello, Occupancy, Heartbeat, BoardError, Settings, LedAck, Pong,
                Request, LedFrame, SetSettings, Ping]

#: Messages the board sends.
BOARD_MESSAGES: tuple[type[Message], ...] = (Hello, Occupancy, Heartbeat, BoardError, Settings, LedAck, Pong)
#: Messages the host sends.
HOST_MESSAGES: tuple[type[Message], ...] = (Request, LedFrame, SetSettings, Ping)
