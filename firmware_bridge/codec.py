"""The I/O-free codec: messages to wire bytes and back.

``encode(msg)`` gives the bytes of one frame; a :class:`Decoder` is fed whatever bytes
arrive, in any pieces, and returns the whole messages among them, keeping the remainder
for the next call. Corrupt frames are counted in :attr:`Decoder.stats` and skipped, never
returned. Payload layouts (all integers little-endian)::

    0x01 Hello       proto u8 | fw major u8 | fw minor u8 | fw patch u8 | sensors u16
                     | leds u16 | files u8 | ranks u8 | boot_id u16                     (12 bytes)
    0x02 Occupancy   seq u16 | reason u8 | sensors u16 | mask ceil(sensors/8) bytes,
                     sensor i = bit (i % 8) of mask byte (i // 8)
    0x03 Heartbeat   uptime_ms u32 | occupancy_seq u16 | rx_errors u16                 (8 bytes)
    0x04 BoardError  code u8 | ref_type u8 | detail u16 | text UTF-8 (rest, <= 255)
    0x05 Settings    scan_period_ms u16 | debounce_ms u16 | periodic_ms u16
                     | heartbeat_ms u16                                               (8 bytes)
    0x06 LedAck      seq u16
    0x07 Pong        token u16
    0x81 Request     what u8
    0x82 LedFrame    seq u16 | brightness u8 | count u16 | count x (r u8, g u8, b u8, blink u8)
    0x83 SetSettings same 8 bytes as Settings
    0x84 Ping        token u16
"""

from __future__ import annotations

import struct
from itertools import chain
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from firmware_bridge.errors import CrcError, FrameError, MessageError
from firmware_bridge.framing import MAX_ENCODED, cobs_decode, cobs_encode, pack_body, unpack_body
from firmware_bridge.messages import (
    Blink, BoardError, Heartbeat, Hello, LedAck, LedFrame, Message, Occupancy, Ping, Pong,
    Request, SetSettings, Settings,
)

_HELLO = struct.Struct("<BBBBHHBBH")
_OCC_HEAD = struct.Struct("<HBH")
_HEARTBEAT = struct.Struct("<IHH")
_ERROR_HEAD = struct.Struct("<BBH")
_SETTINGS = struct.Struct("<HHHH")
_U16 = struct.Struct("<H")
_LED_HEAD = struct.Struct("<HBH")

_BLINKS = tuple(Blink)


def _exact(payload: bytes, size: int, name: str) -> None:
    if len(payload) != size:
        raise MessageError(f"{name} payload must be {size} bytes, got {len(payload)}")


# --- per-message payloads ---------------------------------------------------------------------

def _enc_hello(m: Hello) -> bytes:
    return _HELLO.pack(m.protocol_version, *m.firmware_version, m.sensor_count, m.led_count,
                       m.files, m.ranks, m.boot_id)


def _dec_hello(p: bytes) -> Hello:
    _exact(p, _HELLO.size, "Hello")
    pv, major, minor, patch, sensors, leds, files, ranks, boot = _HELLO.unpack(p)
    return Hello(pv, (major, minor, patch), sensors, leds, files, ranks, boot)


def _enc_occupancy(m: Occupancy) -> bytes:
    return _OCC_HEAD.pack(m.seq, m.reason, m.sensor_count) + m.mask.to_bytes((m.sensor_count + 7) // 8, "little")


def _dec_occupancy(p: bytes) -> Occupancy:
    if len(p) < _OCC_HEAD.size:
        raise MessageError(f"Occupancy payload must be at least {_OCC_HEAD.size} bytes, got {len(p)}")
    seq, reason, sensors = _OCC_HEAD.unpack_from(p)
    _exact(p, _OCC_HEAD.size + (sensors + 7) // 8, f"Occupancy of {sensors} sensors")
    return Occupancy(seq, reason, sensors, int.from_bytes(p[_OCC_HEAD.size:], "little"))


def _enc_heartbeat(m: Heartbeat) -> bytes:
    return _HEARTBEAT.pack(m.uptime_ms, m.occupancy_seq, m.rx_errors)


def _dec_heartbeat(p: bytes) -> Heartbeat:
    _exact(p, _HEARTBEAT.size, "Heartbeat")
    return Heartbeat(*_HEARTBEAT.unpack(p))


def cut_utf8(data: bytes, limit: int) -> bytes:
    """UTF-8 ``data`` cut to at most ``limit`` bytes, never inside a character."""
    if len(data) <= limit:
        return data
    n = limit
    while n > 0 and data[n] & 0xC0 == 0x80:
        n -= 1
    return data[:n]


def _enc_error(m: BoardError) -> bytes:
    return _ERROR_HEAD.pack(m.code, m.ref_type, m.detail) + cut_utf8(m.text.encode("utf-8"), 255)


def _dec_error(p: bytes) -> BoardError:
    if not _ERROR_HEAD.size <= len(p) <= _ERROR_HEAD.size + 255:
        raise MessageError(f"BoardError payload must be 4..259 bytes, got {len(p)}")
    code, ref, detail = _ERROR_HEAD.unpack_from(p)
    try:
        text = p[_ERROR_HEAD.size:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MessageError(f"BoardError text is not UTF-8: {p[_ERROR_HEAD.size:]!r}") from exc
    return BoardError(code, ref, detail, text)


def _enc_settings(m: Settings) -> bytes:
    return _SETTINGS.pack(m.scan_period_ms, m.debounce_ms, m.periodic_ms, m.heartbeat_ms)


def _dec_settings(p: bytes) -> Settings:
    _exact(p, _SETTINGS.size, "Settings")
    return Settings(*_SETTINGS.unpack(p))


def _dec_set_settings(p: bytes) -> SetSettings:
    _exact(p, _SETTINGS.size, "SetSettings")
    return SetSettings(Settings(*_SETTINGS.unpack(p)))


def _enc_set_settings(m: SetSettings) -> bytes:
    return _enc_settings(m.settings)


def _u16_field(cls: type, field: str) -> tuple[Callable[[Message], bytes], Callable[[bytes], Message]]:
    """Encoder and decoder for a message whose payload is one u16 field."""
    def enc(m) -> bytes:
        return _U16.pack(getattr(m, field))

    def dec(p: bytes):
        _exact(p, 2, cls.__name__)
        return cls(_U16.unpack(p)[0])

    return enc, dec


def _dec_request(p: bytes) -> Request:
    _exact(p, 1, "Request")
    return Request(p[0])      # type: ignore[arg-type]  # __post_init__ makes it a RequestKind or a MessageError


def _enc_request(m: Request) -> bytes:
    return bytes((m.what,))


def _enc_led(m: LedFrame) -> bytes:
    n = len(m.colours)
    channels = bytes(chain.from_iterable(m.colours))
    out = bytearray(_LED_HEAD.size + 4 * n)
    _LED_HEAD.pack_into(out, 0, m.seq, m.brightness, n)
    records = memoryview(out)[_LED_HEAD.size:]
    records[0::4] = channels[0::3]
    records[1::4] = channels[1::3]
    records[2::4] = channels[2::3]
    records[3::4] = bytes(m.blink)
    return bytes(out)


def _dec_led(p: bytes) -> LedFrame:
    if len(p) < _LED_HEAD.size:
        raise MessageError(f"LedFrame payload must be at least {_LED_HEAD.size} bytes, got {len(p)}")
    seq, brightness, count = _LED_HEAD.unpack_from(p)
    _exact(p, _LED_HEAD.size + 4 * count, f"LedFrame of {count} LEDs")
    body = p[_LED_HEAD.size:]
    colours = tuple(zip(body[0::4], body[1::4], body[2::4]))
    try:
        blink = tuple(map(_BLINKS.__getitem__, body[3::4]))
    except IndexError:
        bad = next(v for v in body[3::4] if v >= len(_BLINKS))
        raise MessageError(f"LedFrame blink pattern must be 0..{len(_BLINKS) - 1}, got {bad}") from None
    return LedFrame._from_wire(seq, colours, blink, brightness)


# each encoder takes its own class's messages (the table pairs them)
_CODECS: dict[type[Message], tuple[Callable[[Any], bytes], Callable[[bytes], Message]]] = {
    Hello: (_enc_hello, _dec_hello),
    Occupancy: (_enc_occupancy, _dec_occupancy),
    Heartbeat: (_enc_heartbeat, _dec_heartbeat),
    BoardError: (_enc_error, _dec_error),
    Settings: (_enc_settings, _dec_settings),
    LedAck: _u16_field(LedAck, "seq"),
    Pong: _u16_field(Pong, "token"),
    Request: (_enc_request, _dec_request),
    LedFrame: (_enc_led, _dec_led),
    SetSettings: (_enc_set_settings, _dec_set_settings),
    Ping: _u16_field(Ping, "token"),
}
_ENCODERS = {cls: enc for cls, (enc, _dec) in _CODECS.items()}
_DECODERS = {cls.TYPE: dec for cls, (_enc, dec) in _CODECS.items()}


# --- public API -------------------------------------------------------------------------------

def payload_of(msg: Message) -> bytes:
    """The payload bytes of a message (the part between length and CRC)."""
    try:
        enc = _ENCODERS[type(msg)]
    except KeyError:
        raise MessageError(f"not a protocol message: {msg!r}") from None
    return enc(msg)


def body_of(msg: Message) -> bytes:
    """The frame body of a message, before COBS: type, length, payload, CRC."""
    return pack_body(type(msg).TYPE, payload_of(msg))


def encode(msg: Message) -> bytes:
    """Wire bytes of one message: ``COBS(body) + 00``."""
    return cobs_encode(body_of(msg)) + b"\x00"


def decode_payload(msg_type: int, payload: bytes) -> Message:
    """The message of a type code and payload; raises :class:`MessageError`."""
    try:
        dec = _DECODERS[msg_type]
    except KeyError:
        raise MessageError(f"unknown message type 0x{msg_type:02X}") from None
    return dec(payload)


def decode(frame: bytes) -> Message:
    """The message in one frame's wire bytes (trailing delimiter optional).

    Raises :class:`FrameError` (or its :class:`CrcError`) for a corrupt frame and
    :class:`MessageError` for a valid frame that holds no valid message.
    """
    if frame.endswith(b"\x00"):
        frame = frame[:-1]
    if len(frame) > MAX_ENCODED:
        raise FrameError(f"frame of {len(frame)} bytes exceeds the maximum of {MAX_ENCODED}")
    return decode_payload(*unpack_body(cobs_decode(frame)))


@dataclass(frozen=True, slots=True)
class DecoderStats:
    """What a :class:`Decoder` has seen: good frames and each kind of rejected frame."""

    frames: int = 0
    crc_errors: int = 0
    framing_errors: int = 0
    message_errors: int = 0
    last_error: str | None = None
    #: frames dropped, not counted as errors, while waiting for the first good frame after
    #: :meth:`Decoder.reset` with ``startup=True`` (the cut-off tail of what the board wrote
    #: while no host had the port open)
    startup_discarded: int = 0

    @property
    def rejected(self) -> int:
        """All frames thrown away."""
        return self.crc_errors + self.framing_errors + self.message_errors


class Decoder:
    """Turns a byte stream into messages. Feed it any pieces; it keeps partial frames.

    Bytes before the first delimiter, garbage between frames and frames that fail any check
    are dropped and counted; empty frames (repeated ``00``) are ignored without counting.
    A run of more than ``MAX_ENCODED`` bytes without a delimiter is dropped up to the next one
    (counted once, when the byte over the limit arrives).

    ``accept`` (optional) is the set of message types this side receives: a valid frame of
    another type (for the host, a host-to-board type) is a message error. After
    ``reset(startup=True)`` frames that fail are dropped without being counted as errors until
    the first good frame (they are counted in ``startup_discarded``).
    """

    __slots__ = ("_buf", "_skipping", "_frames", "_crc", "_framing", "_message", "_last_error",
                 "_accept", "_startup", "_discarded")

    def __init__(self, accept: "Iterable[int] | None" = None) -> None:
        self._buf = bytearray()
        self._skipping = False
        self._frames = self._crc = self._framing = self._message = 0
        self._last_error: str | None = None
        self._accept = frozenset(accept) if accept is not None else None
        self._startup = False
        self._discarded = 0

    @property
    def pending(self) -> int:
        """Bytes held back waiting for their frame's delimiter."""
        return len(self._buf)

    @property
    def stats(self) -> DecoderStats:
        return DecoderStats(self._frames, self._crc, self._framing, self._message, self._last_error,
                            self._discarded)

    def reset(self, startup: bool = False) -> None:
        """Drop any partial frame (counters are kept). ``startup``: a new connection; do not count
        failing frames as errors until the first good one."""
        self._buf.clear()
        self._skipping = False
        self._startup = startup

    def feed(self, data: bytes) -> list[Message]:
        """Take more bytes; return the messages completed by them, in order."""
        if not isinstance(data, bytes):
            data = bytes(data)
        out: list[Message] = []
        buf = self._buf
        start = 0
        while True:
            end = data.find(0, start)
            if end < 0:
                if not self._skipping:
                    buf += data[start:] if start else data
                    if len(buf) > MAX_ENCODED:
                        self._reject_oversize(len(buf))
                        buf.clear()
                        self._skipping = True
                return out
            if self._skipping:
                self._skipping = False
            else:
                if buf:
                    buf += data[start:end]
                    frame = bytes(buf)
                    buf.clear()
                else:
                    frame = data[start:end]
                if frame:
                    if len(frame) > MAX_ENCODED:
                        self._reject_oversize(len(frame))
                    else:
                        msg = self._decode(frame)
                        if msg is not None:
                            out.append(msg)
            start = end + 1

    def _reject_oversize(self, size: int) -> None:
        if self._startup:
            self._discarded += 1
            return
        self._framing += 1
        self._last_error = f"frame longer than {MAX_ENCODED} bytes ({size} without a delimiter)"

    def _decode(self, frame: bytes) -> Message | None:
        try:
            msg_type, payload = unpack_body(cobs_decode(frame))
            if self._accept is not None and msg_type not in self._accept:
                raise MessageError(f"message type 0x{msg_type:02X} is not one this side receives")
            msg = decode_payload(msg_type, payload)
        except (FrameError, MessageError) as exc:
            if self._startup:
                self._discarded += 1
            elif isinstance(exc, CrcError):
                self._crc += 1
            elif isinstance(exc, FrameError):
                self._framing += 1
            else:
                self._message += 1
            self._last_error = str(exc) + (" (before the first good frame: not counted)"
                                           if self._startup else "")
        else:
            self._startup = False
            self._frames += 1
            return msg
        return None

