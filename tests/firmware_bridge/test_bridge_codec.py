"""The host codec: COBS and CRC vectors, every message, and a decoder fed bytes the hard way."""

from __future__ import annotations

import bridge_fakes  # noqa: F401  (puts the firmware's modules on sys.path)
import fb_proto
import pytest

from firmware_bridge import (
    Blink,
    BoardError,
    BridgeError,
    CrcError,
    Decoder,
    ErrorCode,
    FrameError,
    Heartbeat,
    Hello,
    LedAck,
    LedFrame,
    MessageError,
    Occupancy,
    OccupancyReason,
    Ping,
    Pong,
    Request,
    RequestKind,
    SetSettings,
    Settings,
    body_of,
    decode,
    encode,
)
from firmware_bridge.framing import (
    MAX_ENCODED,
    MAX_PAYLOAD,
    cobs_decode,
    cobs_encode,
    crc16,
    pack_body,
)

H = bytes.fromhex

# The examples of the COBS paper / common test set: (data, encoding without delimiter).
COBS_VECTORS = [
    (b"", H("01")),
    (H("00"), H("0101")),
    (H("0000"), H("010101")),
    (H("00110000"), H("0102110101")),
    (H("11220033"), H("0311220233")),
    (H("11223344"), H("0511223344")),
    (H("11000000"), H("0211010101")),
    (bytes(range(1, 255)), H("ff") + bytes(range(1, 255))),
    (bytes(range(0, 255)), H("01ff") + bytes(range(1, 255))),
    (bytes(range(1, 256)), H("ff") + bytes(range(1, 255)) + H("02ff")),
    (bytes(range(2, 256)) + H("00"), H("ff") + bytes(range(2, 256)) + H("0101")),
    (bytes(range(3, 256)) + H("0001"), H("fe") + bytes(range(3, 256)) + H("0201")),
]

SAMPLES = [
    Hello(1, (1, 0, 0), 96, 96, 12, 8, 0xB007),
    Occupancy.from_closed(7, 96, {0, 11, 95}),
    Occupancy(0, OccupancyReason.REFRESH, 96, 0),
    Occupancy(65535, OccupancyReason.REQUESTED, 5, 0b10101),
    Heartbeat(123456, 7, 2),
    BoardError(ErrorCode.BAD_FRAME, 0, 3, "CRC mismatch"),
    BoardError(ErrorCode.INTERNAL, 0, 0, "é ünïcode"),
    Settings(),
    Settings(1, 0, 0, 100),
    LedAck(9),
    Pong(0xFFFF),
    Request(RequestKind.OCCUPANCY),
    LedFrame(1, [(255, 0, 0), (0, 0, 0), (1, 2, 3)], [Blink.SLOW, Blink.STEADY, Blink.FAST], 128),
    LedFrame(2, [(0, 0, 0)] * 96),
    LedFrame(3, []),
    SetSettings(Settings(5, 20, 0, 500)),
    Ping(42),
]


@pytest.mark.parametrize("data,encoded", COBS_VECTORS, ids=range(len(COBS_VECTORS)))
def test_cobs_vectors_host_and_firmware(data, encoded):
    assert cobs_encode(data) == encoded
    assert cobs_decode(encoded) == data
    assert bytes(fb_proto.cobs_encode(data)) == encoded
    assert bytes(fb_proto.cobs_decode(encoded)) == data


@pytest.mark.parametrize("bad", [H("00"), H("05112233"), H("0211ff"), H("020000")])
def test_cobs_rejects_what_no_encoder_makes(bad):
    with pytest.raises(FrameError):
        cobs_decode(bad)


def test_crc16_is_ccitt_false_on_both_sides():
    assert crc16(b"123456789") == 0x29B1
    assert fb_proto.crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF


@pytest.mark.parametrize("msg", SAMPLES, ids=lambda m: type(m).__name__)
def test_every_message_round_trips_and_reprs_back(msg):
    wire = encode(msg)
    assert wire.endswith(b"\x00") and 0 not in wire[:-1]
    assert decode(wire) == msg
    assert Decoder().feed(wire) == [msg]
    assert eval(repr(msg), vars(__import__("firmware_bridge"))) == msg


def test_body_layout_is_type_length_payload_crc():
    body = body_of(Ping(0x1234))
    assert body[:5] == H("84 0200 3412")
    assert int.from_bytes(body[5:], "little") == crc16(body[:5])


# --- the decoder, fed bytes the hard way -------------------------------------------------------

STREAM = [Hello(1, (1, 2, 3), 96, 96, 12, 8, 1), Occupancy.from_closed(1, 96, {5}),
          LedFrame(4, [(9, 0, 9)] * 10), Heartbeat(1, 1, 0), Pong(3)]
WIRE = b"".join(encode(m) for m in STREAM)


def test_whole_stream_in_one_feed():
    assert Decoder().feed(WIRE) == STREAM


def test_split_at_every_position():
    for cut in range(len(WIRE) + 1):
        d = Decoder()
        assert d.feed(WIRE[:cut]) + d.feed(WIRE[cut:]) == STREAM, cut


def test_byte_by_byte_keeps_the_remainder():
    d = Decoder()
    got = []
    for i in range(len(WIRE)):
        got += d.feed(WIRE[i:i + 1])
        assert d.pending <= len(WIRE)
    assert got == STREAM
    assert d.pending == 0
    assert d.stats.frames == len(STREAM) and d.stats.rejected == 0


def test_partial_frame_waits_for_its_delimiter():
    d = Decoder()
    wire = encode(Pong(7))
    assert d.feed(wire[:-1]) == []
    assert d.pending == len(wire) - 1
    assert d.feed(b"\x00") == [Pong(7)]


def test_garbage_before_between_and_after_frames():
    garbage = b"MicroPython v1.22 on 2024-01-01; Raspberry Pi Pico\r\n>>> "
    d = Decoder()
    wire = garbage + b"\x00" + encode(STREAM[0]) + b"\xff\x13\x37\x00" + encode(STREAM[1]) + garbage
    assert d.feed(wire) == STREAM[:2]
    assert d.stats.rejected == 2  # the two garbage runs that ended in a delimiter
    assert d.pending == len(garbage)  # trailing garbage waits, then is rejected
    assert d.feed(encode(STREAM[2])) == []  # glued to the garbage: lost
    assert d.feed(encode(STREAM[3])) == [STREAM[3]]


def test_garbage_inside_a_frame_drops_only_that_frame():
    a, b, c = (encode(m) for m in STREAM[:3])
    mid = len(b) // 2
    d = Decoder()
    assert d.feed(a + b[:mid] + b"\x42\x42" + b[mid:] + c) == [STREAM[0], STREAM[2]]
    assert d.stats.rejected == 1
    # a delimiter in the garbage cuts the frame in two: both halves are rejected
    d = Decoder()
    assert d.feed(a + b[:mid] + b"\x00" + b[mid:] + c) == [STREAM[0], STREAM[2]]
    assert d.stats.rejected == 2


def test_bad_crc_is_counted_and_skipped():
    body = bytearray(body_of(Occupancy.from_closed(3, 96, {1, 2})))
    body[-1] ^= 0x01
    d = Decoder()
    assert d.feed(cobs_encode(bytes(body)) + b"\x00" + encode(Pong(1))) == [Pong(1)]
    assert d.stats.crc_errors == 1 and d.stats.frames == 1
    assert "CRC" in d.stats.last_error
    with pytest.raises(CrcError):
        decode(cobs_encode(bytes(body)))


def test_truncated_frames_are_rejected():
    wire = encode(STREAM[2])
    for keep in range(1, len(wire) - 1):
        d = Decoder()
        assert d.feed(wire[:keep] + b"\x00" + encode(Pong(5))) == [Pong(5)], keep
        assert d.stats.rejected == 1


def test_back_to_back_frames_and_empty_frames():
    d = Decoder()
    assert d.feed(b"\x00\x00" + b"\x00".join(encode(m) for m in STREAM) + b"\x00\x00") == STREAM
    assert d.stats.rejected == 0


def test_length_field_must_match():
    body = bytearray(pack_body(Pong.TYPE, b"\x01\x00"))
    body[1] = 3  # claims 3 payload bytes
    with pytest.raises(FrameError, match="length field says 3"):
        decode(cobs_encode(bytes(body)))


def test_unknown_type_and_bad_payload_are_message_errors():
    d = Decoder()
    wire = (cobs_encode(pack_body(0x7E, b"")) + b"\x00"
            + cobs_encode(pack_body(Pong.TYPE, b"\x01")) + b"\x00"
            + cobs_encode(pack_body(LedFrame.TYPE, H("0100ff0100") + H("01020309"))) + b"\x00"
            + encode(Pong(2)))
    assert d.feed(wire) == [Pong(2)]
    assert d.stats.message_errors == 3
    assert "blink pattern must be 0..3, got 9" in d.stats.last_error
    with pytest.raises(MessageError, match="0x7E"):
        decode(cobs_encode(pack_body(0x7E, b"")))


def test_a_run_without_delimiter_is_bounded():
    d = Decoder()
    assert d.feed(b"\x01" * (MAX_ENCODED + 10)) == []
    assert d.pending == 0 and d.stats.framing_errors == 1
    assert d.feed(b"\x01" * 100 + b"\x00" + encode(Pong(8))) == [Pong(8)]
    assert d.stats.framing_errors == 1  # the tail of the long run is not a second error


def test_largest_payload_passes_and_one_more_is_refused():
    frame = LedFrame(1, [(1, 1, 1)] * ((MAX_PAYLOAD - 5) // 4))
    assert Decoder().feed(encode(frame)) == [frame]
    with pytest.raises(FrameError, match="exceeds the maximum"):
        pack_body(0x82, bytes(MAX_PAYLOAD + 1))


# --- message values ---------------------------------------------------------------------------

@pytest.mark.parametrize("make,text", [
    (lambda: Ping(70000), "Ping.token must be 0..65535, got 70000"),
    (lambda: LedAck(-1), "LedAck.seq must be 0..65535, got -1"),
    (lambda: Settings(scan_period_ms=1.5), "Settings.scan_period_ms must be an int, got 1.5"),
    (lambda: Hello(1, (1, 0), 96, 96, 12, 8, 0), "firmware_version must be (major, minor, patch), got (1, 0)"),
    (lambda: Occupancy(1, 9, 96, 0), "Occupancy.reason must be one of"),
    (lambda: Occupancy(1, 1, 8, 0x100), "beyond sensor_count=8"),
    (lambda: Occupancy.from_closed(1, 96, [96]), "sensor index 96 is outside 0..95"),
    (lambda: LedFrame(1, [(1, 2, 300)]), "colours[0] channels must be ints 0..255, got (1, 2, 300)"),
    (lambda: LedFrame(1, [(1, 2)]), "colours[0] must be (r, g, b), got (1, 2)"),
    (lambda: LedFrame(1, [(1, 2, 3)], [1, 2]), "blink has 2 entries for 1 colours"),
    (lambda: LedFrame(1, [(1, 2, 3)], brightness=256), "brightness must be 0..255, got 256"),
    (lambda: LedFrame.build(1, [(1, 2, 3)], {4: Blink.FAST}), "blink index 4 is outside 0..0"),
    (lambda: BoardError(ErrorCode.INTERNAL, 0, 0, "x" * 256), "at most 255 UTF-8 bytes"),
    (lambda: SetSettings((1, 2, 3, 4)), "SetSettings.settings must be a Settings"),
])
def test_bad_field_values_name_the_value(make, text):
    with pytest.raises(MessageError) as info:
        make()
    assert text in str(info.value)
    assert isinstance(info.value, (BridgeError, ValueError))


def test_led_frame_normalises_its_input():
    frame = LedFrame.build(5, [[1, 2, 3], (4, 5, 6)], {1: 2}, 10)
    assert frame == LedFrame(5, ((1, 2, 3), (4, 5, 6)), (Blink.STEADY, Blink.FAST), 10)
    assert frame.blink[1] is Blink.FAST
    assert LedFrame(1, [(1, 1, 1)]).blink == (Blink.STEADY,)


def test_occupancy_closed_set_and_bits():
    occ = Occupancy.from_closed(1, 96, {0, 47, 95})
    assert occ.closed == {0, 47, 95}
    assert occ.is_closed(47) and not occ.is_closed(46)
    # bit i of byte i // 8, least significant first
    assert encode(occ) == encode(Occupancy(1, OccupancyReason.CHANGE, 96, (1 << 0) | (1 << 47) | (1 << 95)))
    payload = body_of(occ)[3:-2]
    assert payload[5:] == H("01 00 00 00 00 80 00 00 00 00 00 80")


def test_messages_are_frozen_and_slotted():
    msg = Ping(1)
    with pytest.raises(AttributeError):
        msg.token = 2
    assert not hasattr(msg, "__dict__")


def test_the_bridge_imports_neither_engine_nor_board_driver():
    import ast
    from pathlib import Path

    import firmware_bridge
    for path in Path(firmware_bridge.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not any(n.split(".")[0] in ("engine", "board_driver") for n in names), path.name
