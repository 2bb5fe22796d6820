"""Properties of the codec on random messages: round trips on both implementations, any
splitting of the stream, and corruption that never turns into a wrong message.

The corruption properties run derandomized (the same examples every run): a CRC-16 lets
roughly one random corrupted frame in 65536 through, so a property that asserts "never" on
fresh random data each run would be a flaky test, not a stronger one.
"""

from __future__ import annotations

import bridge_fakes  # noqa: F401  (puts the firmware's modules on sys.path)
import fb_proto
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge import (
    Blink,
    BoardError,
    Decoder,
    ErrorCode,
    Heartbeat,
    Hello,
    LedAck,
    LedFrame,
    Occupancy,
    OccupancyReason,
    Ping,
    Pong,
    Request,
    RequestKind,
    SetSettings,
    Settings,
    decode,
    encode,
)
from firmware_bridge.codec import payload_of

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)


@st.composite
def occupancies(draw):
    n = draw(st.integers(0, 200))
    return Occupancy(draw(u16), draw(st.sampled_from(OccupancyReason)), n, draw(st.integers(0, (1 << n) - 1)))


@st.composite
def led_frames(draw):
    n = draw(st.integers(0, 100))
    colours = draw(st.lists(st.tuples(u8, u8, u8), min_size=n, max_size=n))
    blink = draw(st.lists(st.sampled_from(Blink), min_size=n, max_size=n))
    return LedFrame(draw(u16), colours, blink, draw(u8))


settings_values = st.builds(Settings, u16, u16, u16, u16)
error_texts = st.text(max_size=80).filter(lambda t: len(t.encode()) <= 255)

board_messages = st.one_of(
    st.builds(Hello, st.just(1), st.tuples(u8, u8, u8), u16, u16, u8, u8, u16),
    occupancies(),
    st.builds(Heartbeat, u32, u16, u16),
    st.builds(BoardError, st.sampled_from(ErrorCode), u8, u16, error_texts),
    settings_values,
    st.builds(LedAck, u16),
    st.builds(Pong, u16),
)
host_messages = st.one_of(
    st.builds(Request, st.sampled_from(RequestKind)),
    led_frames(),
    st.builds(SetSettings, settings_values),
    st.builds(Ping, u16),
)
messages = st.one_of(board_messages, host_messages)

fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
fixed = settings(max_examples=150, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow])


def firmware_wire(msg) -> bytes:
    """The bytes the board's firmware sends for a board message."""
    p = fb_proto
    if isinstance(msg, Hello):
        payload = p.hello_payload(msg.firmware_version, msg.sensor_count, msg.led_count,
                                  msg.files, msg.ranks, msg.boot_id)
    elif isinstance(msg, Occupancy):
        payload = p.occupancy_payload(msg.seq, msg.reason, msg.sensor_count,
                                      msg.mask.to_bytes((msg.sensor_count + 7) // 8, "little"))
    elif isinstance(msg, Heartbeat):
        payload = p.heartbeat_payload(msg.uptime_ms, msg.occupancy_seq, msg.rx_errors)
    elif isinstance(msg, BoardError):
        payload = p.error_payload(msg.code, msg.ref_type, msg.detail, msg.text)
    elif isinstance(msg, Settings):
        payload = p.settings_payload([msg.scan_period_ms, msg.debounce_ms, msg.periodic_ms, msg.heartbeat_ms])
    else:
        payload = p.u16_payload(msg.seq if isinstance(msg, LedAck) else msg.token)
    return bytes(p.encode_frame(type(msg).TYPE, payload))


@pytest.mark.slow
@fast
@given(messages)
def test_host_round_trip(msg):
    assert decode(encode(msg)) == msg


@fast
@given(board_messages)
def test_firmware_sends_exactly_what_the_host_would(msg):
    assert firmware_wire(msg) == encode(msg)


@fast
@given(host_messages)
def test_firmware_reads_what_the_host_sends(msg):
    ((msg_type, payload),) = fb_proto.FrameReader().feed(encode(msg))
    assert msg_type == type(msg).TYPE and payload == payload_of(msg)
    if isinstance(msg, LedFrame):
        seq, brightness, count, records = fb_proto.parse_led_frame(payload)
        assert (seq, brightness, count) == (msg.seq, msg.brightness, len(msg.colours))
        assert [tuple(records[4 * i:4 * i + 3]) for i in range(count)] == list(msg.colours)
        assert list(records[3::4]) == list(msg.blink)
    elif isinstance(msg, SetSettings):
        s = msg.settings
        assert fb_proto.parse_settings(payload) == [s.scan_period_ms, s.debounce_ms, s.periodic_ms, s.heartbeat_ms]
    elif isinstance(msg, Ping):
        assert fb_proto.parse_u16(payload) == msg.token
    else:
        assert fb_proto.parse_request(payload) == msg.what


@fast
@given(st.lists(messages, max_size=8), st.data())
def test_any_split_of_a_stream_gives_the_same_messages(msgs, data):
    wire = b"".join(encode(m) for m in msgs)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=10)))
    d = Decoder()
    got = []
    for a, b in zip([0] + cuts, cuts + [len(wire)]):
        got += d.feed(wire[a:b])
    assert got == msgs
    assert d.pending == 0 and d.stats.rejected == 0


def is_subsequence(got, original):
    it = iter(original)
    return all(any(g == o for o in it) for g in got)


corruption = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 7)),
    st.tuples(st.just("set"), st.integers(0, 10**6), u8),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=6)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 6)),
)


def corrupt(wire: bytes, op) -> tuple[bytes, int, int]:
    """Apply one corruption; return the new bytes and the range of original bytes it touched."""
    kind, pos, arg = op
    pos %= len(wire)
    if kind == "flip":
        out = bytearray(wire)
        out[pos] ^= 1 << arg
        return bytes(out), pos, pos
    if kind == "set":
        out = bytearray(wire)
        out[pos] = arg
        return bytes(out), pos, pos
    if kind == "insert":
        return wire[:pos] + arg + wire[pos:], pos - 1, pos
    return wire[:pos] + wire[pos + arg:], pos, pos + arg - 1


@pytest.mark.slow
@fixed
@given(st.lists(messages, min_size=1, max_size=6), corruption)
def test_one_corruption_costs_at_most_the_frames_it_touches(msgs, op):
    wires = [encode(m) for m in msgs]
    wire = b"".join(wires)
    bad, lo, hi = corrupt(wire, op)
    got = Decoder().feed(bad)
    assert is_subsequence(got, msgs)
    # frame i spans (end of frame i-1, end of frame i]; it survives if nothing there changed
    ends, pos = [], -1
    for w in wires:
        pos += len(w)
        ends.append(pos)
    starts = [-1] + ends[:-1]
    intact = [m for m, s, e in zip(msgs, starts, ends) if hi < s or lo > e]
    assert is_subsequence(intact, got)


@fixed
@given(st.lists(messages, min_size=1, max_size=6), st.lists(corruption, min_size=1, max_size=6))
def test_random_corruption_never_yields_a_wrong_message(msgs, ops):
    wire = b"".join(encode(m) for m in msgs)
    for op in ops:
        if wire:
            wire = corrupt(wire, op)[0]
    assert is_subsequence(Decoder().feed(wire), msgs)
    # and the firmware's reader lets nothing wrong through either
    originals = [(type(m).TYPE, payload_of(m)) for m in msgs]
    good = [(t, p) for t, p in fb_proto.FrameReader().feed(wire) if t is not None]
    assert is_subsequence(good, originals)


@pytest.mark.parametrize("msg", [
    Occupancy.from_closed(300, 96, {0, 1, 2, 50, 95}),
    LedFrame(9, [(255, 0, 0), (0, 0, 0), (0, 17, 0)] * 32, [Blink.FAST] * 96, 200),
    Hello(1, (1, 0, 0), 96, 96, 12, 8, 0),
], ids=lambda m: type(m).__name__)
def test_every_single_bit_flip_and_every_truncation_is_caught(msg):
    """Exhaustive, not sampled: no flip of any bit of the frame, and no cut, gets through."""
    neighbour = encode(Pong(1))
    wire = encode(msg)
    for i in range(len(wire)):
        for bit in range(8):
            bad = bytearray(wire)
            bad[i] ^= 1 << bit
            got = Decoder().feed(neighbour + bytes(bad) + neighbour)
            assert got in ([Pong(1), Pong(1)], [Pong(1)]), (i, bit, got)
            # (only a flip of the delimiter itself costs the next frame too)
            assert len(got) == 2 or i == len(wire) - 1, (i, bit)
    for keep in range(len(wire) - 1):
        assert Decoder().feed(wire[:keep] + b"\x00") == []
