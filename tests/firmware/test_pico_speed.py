"""How fast the firmware answers on the emulated Pico, in the chip's simulated time (deterministic:
the same figures on any machine): the goals of docs/hardware.md, "Speed on the chip"."""

from __future__ import annotations

import pytest

import pico_emu
from pico_emu import MS, board_frames
from firmware_bridge import LedAck, LedFrame, Occupancy, OccupancyReason, Ping, Pong, encode
from test_pico_emulated import COLOURS, DEBOUNCE_MS, LEDS, REPORT_BOUND_MS, SCAN_MS, Board

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def board(pico_fs):
    pico = pico_emu.Pico(pico_fs, pty=False)
    b = Board(pico)
    b.boot()
    yield b
    pico.close()


# --- USB -----------------------------------------------------------------------------------------------

def test_ping_is_answered_and_every_frame_goes_out_in_one_usb_packet(board):
    took, pong, log = board.answer_ms(Ping(0xBEEF), Pong, run_ms=1500)
    assert pong.token == 0xBEEF
    frames = board_frames(log)
    assert len(frames) >= 2                                # the PONG and at least a HEARTBEAT
    assert [f[2] for f in frames] == [1] * len(frames), [(type(f[3]).__name__, f[2]) for f in frames]


# --- speed, in the chip's simulated time -------------------------------------------------------------

LED_FRAME_ANSWER_MS = 10
PING_ANSWER_MS = 2


def test_a_96_led_frame_is_answered_within_10_ms(board):
    board.seq += 1
    took, ack, _ = board.answer_ms(LedFrame(board.seq, COLOURS, brightness=128), LedAck, run_ms=200)
    print(f"LED_FRAME, 96 LEDs: last byte in -> LED_ACK {took:.2f} ms (simulated)")
    assert ack.seq == board.seq and took <= LED_FRAME_ANSWER_MS


def test_a_ping_is_answered_within_2_ms(board):
    worst = 0.0
    for token in range(5):
        took, pong, _ = board.answer_ms(Ping(token), Pong, run_ms=20)
        assert pong.token == token
        worst = max(worst, took)
    print(f"PING -> PONG worst of 5: {worst:.2f} ms (simulated)")
    assert worst <= PING_ANSWER_MS


def led_stream(board, seconds: float, per_second: int = 20, move_at: float | None = None):
    """The host's LED frames at `per_second` (96 LEDs, a new picture each), a magnet put on
    square 60 at `move_at` seconds; returns the log of it all and when the magnet came."""
    pico = board.pico
    pico.set_closed(set())
    pico.run_ms(60)
    pico.log()
    start = pico.now()
    moved = None
    period = 1000 / per_second
    for k in range(int(seconds * per_second)):
        board.seq += 1
        colours = [((i + k) % 256, (3 * i) % 256, k % 256) for i in range(LEDS)]
        pico.send(b"\x00" + encode(LedFrame(board.seq, colours, brightness=40)))
        if move_at is not None and moved is None and k * period >= move_at * 1000:
            pico.run_until(start + int((k * period + period / 2) * MS))
            pico.set_closed({60})
            moved = pico.now()
        pico.run_until(start + int((k + 1) * period * MS))
    return pico.log(), moved


def test_while_led_frames_arrive_at_20_per_second_scans_keep_time_and_changes_are_reported(board):
    log, moved = led_stream(board, 1.0, move_at=0.4)
    gaps = [(b - a) / MS for a, b in zip(log["scans"], log["scans"][1:])]
    frames = board_frames(log)
    acks = [f for f in frames if isinstance(f[3], LedAck)]
    change = [f for f in frames if isinstance(f[3], Occupancy) and f[3].reason == OccupancyReason.CHANGE]
    took = (change[0][0] - moved) / MS if change else None
    print(f"20 LED frames/s: {len(acks)} acks, longest gap between scans {max(gaps):.2f} ms, "
          f"change reported after {took} ms (simulated)")
    assert len(acks) == 20
    assert max(gaps) < 2 * SCAN_MS                         # no scan more than one period late
    assert change and change[0][3].closed == {60}
    assert took <= REPORT_BOUND_MS + SCAN_MS


def test_cpu_budget_idle_and_under_led_traffic(board):
    pico = board.pico
    pico.run_ms(100)
    pico.log()
    pico.run_ms(1000)
    cpu = pico.log()["cpu"]
    idle_busy = cpu["busy_ns"] / (cpu["busy_ns"] + cpu["idle_ns"])
    log, _ = led_stream(board, 1.0)
    busy = log["cpu"]["busy_ns"] / (log["cpu"]["busy_ns"] + log["cpu"]["idle_ns"])
    print(f"CPU busy: idle board {idle_busy:.1%}, 20 LED frames/s {busy:.1%} (simulated)")
    assert idle_busy < 0.25
    assert busy < 0.40
