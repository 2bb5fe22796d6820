"""The firmware on the stock MicroPython for RPI_PICO, on an emulated RP2040 (rp2040js), installed
as hardware/firmware/README.md installs it, talking USB CDC: what a builder's Pico does, timed in
the chip's own simulated nanoseconds (deterministic: the same on any machine).

One chip is booted for the module and the tests run on it in order; the tests that need a fresh
power-up (the Ctrl-C flood, safe mode, the watchdog) boot their own.
"""

from __future__ import annotations

import pytest

import pico_emu
from pico_emu import MS, board_frames, last_in
from firmware_bridge import (
    Blink, BoardError, Hello, LedAck, LedFrame, Occupancy, OccupancyReason, Ping, Pong, Request, RequestKind, encode,
)

pytestmark = pytest.mark.slow

SCAN_MS, DEBOUNCE_MS = 10, 30                       # the firmware's defaults (PROTOCOL.md 5)
REPORT_BOUND_MS = -(-DEBOUNCE_MS // SCAN_MS) * SCAN_MS + SCAN_MS    # 40 ms (PROTOCOL.md 6)
BUDGET_MA, IDLE_MA, CHANNEL_MA, LEDS = 1500, 1, 20, 96

# WS2812B datasheet: T0H 0.4 us, T1H 0.8 us (+-150 ns); a bit 1.25 us (+-600 ns); the LEDs
# latch (end the frame) after the line stays low for the reset time, which some parts take
# as short as ~6 us: inside a frame the line must never rest low that long.
T0H_NS, T1H_NS, BIT_NS = (250, 550), (650, 950), (650, 1850)
MAX_LOW_IN_FRAME_NS = 5000


class Board:
    def __init__(self, pico: pico_emu.Pico) -> None:
        self.pico = pico
        self.seq = 100

    def boot(self) -> dict:
        self.pico.run_ms(400)
        return self.pico.log()

    def exchange(self, msg, run_ms: float = 60):
        """Send one frame (after a lone 0x00, as the host does); run; the frames that came back."""
        self.pico.log()
        self.pico.send(b"\x00" + encode(msg))
        self.pico.run_ms(run_ms)
        log = self.pico.log()
        return log, board_frames(log)

    def answer_ms(self, msg, kind, run_ms: float = 60) -> tuple[float, object, dict]:
        log, frames = self.exchange(msg, run_ms)
        first, _, _, answer = next(f for f in frames if isinstance(f[3], kind))
        return (first - last_in(log)) / MS, answer, log


@pytest.fixture(scope="module")
def board(pico_fs):
    pico = pico_emu.Pico(pico_fs, pty=False)
    b = Board(pico)
    b.boot_log = b.boot()
    yield b
    pico.close()


def shown(brightness: int, colours) -> list[tuple[int, int, int]]:
    """What PROTOCOL.md section 5 says LED i shows (steady pattern, within the budget)."""
    out = [tuple((c * brightness + 127) // 255 for c in rgb) for rgb in colours]
    out += [(0, 0, 0)] * (LEDS - len(out))
    ma = LEDS * IDLE_MA + sum(map(sum, out)) * CHANNEL_MA / 255
    assert ma <= BUDGET_MA, "choose a frame within the budget"
    return out


def grb(colours) -> str:
    return bytes(b for r, g, b_ in colours for b in (g, r, b_)).hex()


# --- boot ------------------------------------------------------------------------------------------

def test_boot_says_hello_then_the_occupancy_within_a_quarter_second(board):
    log = board.boot_log
    frames = board_frames(log)
    msgs = [f[3] for f in frames]
    assert isinstance(msgs[0], Hello) and msgs[0].sensor_count == 96 and msgs[0].led_count == 96
    assert (msgs[0].files, msgs[0].ranks) == (12, 8)
    occ = msgs[1]
    assert isinstance(occ, Occupancy) and occ.seq == 0 and occ.reason == OccupancyReason.REFRESH
    assert occ.closed == set()
    connected = log["boots"][0][0]
    assert frames[1][1] - connected < 250 * MS          # listening soon after the port appears
    assert log["resets"] == []


def test_the_columns_are_driven_at_12_ma(board):
    drive = board.pico.call("pads")["drive"]
    ma = [(2, 4, 8, 12)[d] for d in drive]
    assert [ma[g] for g in range(2, 14)] == [12] * 12          # GP2..GP13, fb_pins.COLUMNS
    assert all(ma[g] == 4 for g in range(14, 22)), ma           # the rows (inputs) as reset


def test_the_dark_strip_is_written_at_boot_with_ws2812_timing(board):
    frames = board.boot_log["leds"]
    assert frames and frames[-1]["bits"] == 24 * LEDS and frames[-1]["hex"] == "00" * 3 * LEDS


# --- the matrix ----------------------------------------------------------------------------------------

def test_occupancy_is_what_the_matrix_holds_with_no_ghosts(board):
    corners = {0, 11, 84, 95, 40}           # a1 l1 a8 l8 e4: three of a rectangle never ghost its fourth
    board.pico.set_closed(corners - {95})
    board.pico.run_ms(60)
    _, occ, _ = board.answer_ms(Request(RequestKind.OCCUPANCY), Occupancy)
    assert occ.reason == OccupancyReason.REQUESTED and occ.closed == corners - {95}


def test_a_magnet_moved_is_reported_within_the_protocol_bound(board):
    board.pico.set_closed(set())
    board.pico.run_ms(60)
    board.pico.log()
    t0 = board.pico.set_closed({27}) or board.pico.now()        # d3 arrives
    board.pico.run_ms(80)
    frames = board_frames(board.pico.log())
    change = [f for f in frames if isinstance(f[3], Occupancy) and f[3].reason == OccupancyReason.CHANGE]
    assert change and change[0][3].closed == {27}
    took = (change[0][0] - t0) / MS
    assert DEBOUNCE_MS <= took <= REPORT_BOUND_MS + SCAN_MS, took


# --- LEDs --------------------------------------------------------------------------------------------

COLOURS = [((i * 37) % 256, (i * 91) % 256, (i * 13) % 256) for i in range(LEDS)]


def test_a_96_led_frame_reaches_the_data_pin_exactly_with_ws2812_timing(board):
    board.seq += 1
    _, ack, log = board.answer_ms(LedFrame(board.seq, COLOURS, brightness=90), LedAck, run_ms=200)
    assert ack.seq == board.seq
    strip = log["leds"]
    assert len(strip) == 1                                 # shown once, as one frame
    f = strip[0]
    assert f["bits"] == 24 * LEDS and f["hex"] == grb(shown(90, COLOURS))
    assert T0H_NS[0] <= f["t0h"][0] and f["t0h"][1] <= T0H_NS[1], f
    assert T1H_NS[0] <= f["t1h"][0] and f["t1h"][1] <= T1H_NS[1], f
    assert BIT_NS[0] <= f["period"][0] and f["period"][1] <= BIT_NS[1], f
    assert f["max_low"] < MAX_LOW_IN_FRAME_NS, f           # never latched half-way


def test_two_led_frames_in_one_read_are_kept_a_latch_time_apart_on_the_data_pin(board):
    # Newer WS2812B parts take a frame as ended (latch) only after the line rests low for
    # 280 us: a frame begun sooner runs on into the one before. The firmware keeps 300 us
    # (here the chip's own work between the frames takes about 2 ms; test_latch.py checks the
    # wait itself, with that work taking no time).
    board.seq += 2
    first = LedFrame(board.seq - 1, [(200, 0, 0)] * 3, brightness=255)
    second = LedFrame(board.seq, [(0, 0, 90)] * 3, brightness=255)
    board.pico.log()
    board.pico.send(b"\x00" + encode(first) + b"\x00" + encode(second))
    board.pico.run_ms(60)
    log = board.pico.log()
    assert len(log["in"]) == 1                              # both came in one USB packet: one read
    acks = [f[3].seq for f in board_frames(log) if isinstance(f[3], LedAck)]
    assert acks == [first.seq, second.seq]
    strip = log["leds"]
    want = [grb(shown(255, first.colours)), grb(shown(255, second.colours))]
    assert [f["hex"] for f in strip] == want, [(f["bits"], f["max_low"]) for f in strip]
    gap = strip[1]["start"] - strip[0]["end"]
    assert gap >= 300_000, f"only {gap / 1000:.0f} us between the frames"


def test_blinking_leds_change_on_the_data_pin_with_the_uptime(board):
    board.seq += 1
    board.exchange(LedFrame(board.seq, [(0, 0, 200)] * 2, blink=(Blink.FAST, Blink.STEADY)), run_ms=5)
    board.pico.run_ms(500)
    frames = board.pico.log()["leds"]
    on = [f for f in frames if f["hex"][:6] == "0000c8"]
    off = [f for f in frames if f["hex"][:6] == "000000"]
    assert len(on) >= 2 and len(off) >= 2                  # FAST: 125 ms on, 125 ms off
    assert all(f["hex"][6:12] == "0000c8" for f in frames)  # the steady one stays on


# --- power-up, Ctrl-C, safe mode, watchdog: each on a Pico of its own -------------------------------

def test_a_ctrl_c_flood_from_the_moment_the_port_appears_does_not_stop_the_firmware(new_pico):
    pico = new_pico()
    # 0x03 is Ctrl-C: a host that writes as soon as the port appears sends 00 03 ... The
    # harness's USB host hands bytes over from the moment the port is configured.
    for _ in range(40):
        pico.send(b"\x03" * 64)
        pico.run_ms(5)
    pico.send(b"\x00" + encode(Ping(0x0303)))
    pico.run_ms(1500)               # 2.5 KB of garbage first: read a byte per poll, ~0.3 ms each
    log = pico.log()
    out = pico_emu.board_bytes(log)
    assert log["boots"] and log["boots"][0][0] < 20 * MS         # the port appeared during the flood
    assert b"MicroPython" not in out and b">>>" not in out       # never at the prompt
    msgs = [f[3] for f in board_frames(log)]
    assert any(isinstance(m, Hello) for m in msgs)
    assert Pong(0x0303) in msgs
    assert any(isinstance(m, BoardError) and m.text == "frame too long" for m in msgs)


def test_safe_mode_pin_low_at_power_up_gives_the_prompt(new_pico):
    pico = new_pico()
    pico.pin(28, 0)                      # GP28 tied to GND
    pico.run_ms(300)
    pico.send(b"\x03\r\nprint(6 * 7)\r\n")
    pico.run_ms(100)
    out = pico_emu.board_bytes(pico.log())
    assert b"safe-mode pin is low" in out and b">>> " in out and b"42" in out
    assert log_has_no_frames(out)


def log_has_no_frames(out: bytes) -> bool:
    from firmware_bridge import Decoder
    return not Decoder().feed(out)


def test_a_hung_firmware_is_reset_by_the_watchdog_and_says_hello_again(new_pico):
    pico = new_pico()
    pico.run_ms(300)
    first = [f[3] for f in board_frames(pico.log()) if isinstance(f[3], Hello)]
    pico.hang()                          # the CPU stuck with interrupts off
    hung = pico.now()
    pico.run_ms(5400)
    log = pico.log()
    assert [why for _, why in log["resets"]] == ["watchdog"]
    after = (log["resets"][0][0] - hung) / MS
    assert 4900 <= after <= 5100, after                          # fb_pins.WATCHDOG_MS = 5000
    again = [f for f in board_frames(log) if isinstance(f[3], Hello)]
    assert again and again[0][0] > log["resets"][0][0]
    assert first and again[0][3].led_count == first[0].led_count
    # (boot_id comes from os.urandom, which the RP2040 seeds from its ring oscillator: noise on a
    # real chip, the same bits at every boot of the emulated one, so it is not compared here)
