"""Frame layer: COBS byte stuffing, CRC-16 and the frame body.

A frame on the wire is the COBS encoding of a *body*, followed by one ``0x00`` delimiter::

    wire   :  COBS( body )  00
    body   :  +------+---------+---------+-------------+---------+
              | type | length (u16 LE)   | payload ... | crc (u16 LE)
              +------+---------+---------+-------------+---------+
              | 0    | 1       | 2       | 3 .. 3+L-1  | 3+L, 4+L
    length =  L, the number of payload bytes
    crc    =  CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0)
              over type, length and payload

COBS removes every ``0x00`` from the body, so a ``0x00`` on the wire always ends a frame and a
receiver that starts mid-stream, or meets garbage, is back in step at the next ``0x00``.
See ``hardware/PROTOCOL.md`` for the full definition.
"""

from __future__ import annotations

import binascii
import struct

from firmware_bridge.errors import CrcError, FrameError

DELIMITER = 0x00
#: Largest payload a frame may carry, in bytes.
MAX_PAYLOAD = 2048
#: Smallest body: type, length, crc.
MIN_BODY = 5
#: Largest body.
MAX_BODY = MIN_BODY + MAX_PAYLOAD
#: Largest COBS-encoded frame (without the delimiter): one overhead byte per 254 bytes,
#: 2053 + 9 = 2062.
MAX_ENCODED = MAX_BODY + (MAX_BODY + 253) // 254

_HEADER = struct.Struct("<BH")
_CRC = struct.Struct("<H")


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (check value: ``crc16(b"123456789") == 0x29B1``)."""
    return binascii.crc_hqx(data, crc)


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing: ``data`` without any ``0x00`` (delimiter not added).

    Each run of up to 254 non-zero bytes becomes ``len+1`` followed by the run; the code
    byte stands for the ``0x00`` that ended the run, except after a full run (code ``0xFF``)
    and at the end of the data.
    """
    segments = bytes(data).split(b"\x00")
    lengths = list(map(len, segments))
    if max(lengths) < 254:
        # The common case: no full blocks, so the output is a code byte in front of the data
        # and one in place of each 0x00, each code being the distance to the next.
        out = bytearray(len(data) + 1)
        out[1:] = data
        pos = 0
        for length in lengths:
            out[pos] = length + 1
            pos += length + 1
        return bytes(out)
    out = bytearray()
    last = len(segments) - 1
    for n, seg in enumerate(segments):
        while len(seg) >= 254:
            out.append(0xFF)
            out += seg[:254]
            seg = seg[254:]
            if not seg and n == last:
                # A final run of exactly k*254 bytes needs no trailing empty block.
                return bytes(out)
        out.append(len(seg) + 1)
        out += seg
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Undo :func:`cobs_encode`; raises :class:`FrameError` for bytes no encoder produces."""
    n = len(data)
    zero = bytes(data).find(0)
    if zero >= 0:
        raise FrameError(f"COBS: 0x00 inside a frame at offset {zero}")
    # Every code byte stands for the 0x00 that ends its block, except the first code byte and
    # the code byte after a full (0xFF) block, which stand for nothing.
    out = bytearray(data)
    full_blocks = []
    i = 0
    while i < n:
        code = data[i]
        out[i] = 0
        if code == 0xFF:
            full_blocks.append(i + 0xFF)
        i += code
    if i != n:
        raise FrameError(f"COBS: the last block needs {i - n} more bytes than the frame holds")
    for pos in reversed(full_blocks):
        if pos < n:
            del out[pos]
    del out[0]
    return bytes(out)


def pack_body(msg_type: int, payload: bytes) -> bytes:
    """The frame body for a message type and payload: type, length, payload, CRC."""
    if len(payload) > MAX_PAYLOAD:
        raise FrameError(f"payload of {len(payload)} bytes exceeds the maximum of {MAX_PAYLOAD}")
    head = _HEADER.pack(msg_type, len(payload)) + payload
    return head + _CRC.pack(crc16(head))


def unpack_body(body: bytes) -> tuple[int, bytes]:
    """Check a frame body and return ``(type, payload)``; raises :class:`FrameError`/:class:`CrcError`."""
    n = len(body)
    if n < MIN_BODY:
        raise FrameError(f"frame body of {n} bytes is shorter than the minimum {MIN_BODY}")
    msg_type, length = _HEADER.unpack_from(body)
    if length > MAX_PAYLOAD:
        raise FrameError(f"length field says {length} payload bytes, over the maximum of {MAX_PAYLOAD}")
    if n != MIN_BODY + length:
        raise FrameError(f"length field says {length} payload bytes, frame holds {n - MIN_BODY}")
    (sent,) = _CRC.unpack_from(body, n - 2)
    got = crc16(body[:-2])
    if sent != got:
        raise CrcError(f"CRC mismatch: frame says 0x{sent:04X}, contents give 0x{got:04X}")
    return msg_type, body[3:-2]


def encode_frame(msg_type: int, payload: bytes) -> bytes:
    """Wire bytes for one frame: ``COBS(body) + 00``."""
    return cobs_encode(pack_body(msg_type, payload)) + b"\x00"
