"""The emulated Pico's USB CDC port on a pty, opened by the project's own host code
(firmware_bridge.Link) as it opens /dev/ttyACM0: the handshake, the matrix's occupancy, a magnet
moved and an LED frame, shown on the data pin and acknowledged. The chip runs free here (at a
fraction of real time), so the link's timeouts are stretched; timing is the business of
test_pico_speed.py, in simulated time."""

from __future__ import annotations

import time

import pytest

import pico_emu
from firmware_bridge import Link, LinkTimings, Occupancy, OccupancyReason
from firmware_bridge.link import LinkState

pytestmark = pytest.mark.slow

# the emulator runs at 0.04-0.5x real time: every timeout of the link x 20
SLOW = LinkTimings(listen_first=3.0, hello_timeout=20.0, heartbeat_timeout=60.0, led_ack_timeout=10.0,
                   retry_interval=1.0, occupancy_request_interval=2.0)


@pytest.fixture(scope="module")
def pico_link(pico_fs):
    pico = pico_emu.Pico(pico_fs, pty=True)
    pico.set_closed({0, 11, 95})
    pico.free()
    link = Link([pico.port], timings=SLOW)
    link.start()
    yield pico, link
    link.close()
    pico.close()


def wait_for(link, pred, timeout=60.0):
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        item = link.get(timeout=0.1)
        if item is not None:
            seen.append(item.message)
            if pred(item.message):
                return item.message
    raise AssertionError(f"not seen within {timeout} s: {seen}")


def test_the_link_gets_ready_and_reads_the_matrix(pico_link):
    pico, link = pico_link
    hello = link.wait_ready(60.0)
    assert (hello.sensor_count, hello.led_count, hello.files, hello.ranks) == (96, 96, 12, 8)
    wait_for(link, lambda m: isinstance(m, Occupancy) and m.closed == {0, 11, 95})
    assert link.state is LinkState.READY


def test_a_magnet_moved_reaches_the_host(pico_link):
    pico, link = pico_link
    link.wait_ready(60.0)
    pico.set_closed({0, 11, 94})
    occ = wait_for(link, lambda m: isinstance(m, Occupancy) and m.closed == {0, 11, 94})
    assert occ.reason == OccupancyReason.CHANGE


def test_an_led_frame_is_shown_on_the_data_pin_and_acknowledged(pico_link):
    pico, link = pico_link
    link.wait_ready(60.0)
    pico.log()
    colours = [(200, 0, 0), (0, 100, 0), (0, 0, 50)] + [(0, 0, 0)] * 93
    link.send_leds(colours, brightness=255)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not link.health().leds_acked:
        time.sleep(0.1)
    assert link.health().leds_acked
    shown = [f["hex"] for f in pico.log()["leds"]]
    want = "00c800" + "640000" + "000032" + "00" * 3 * 93           # G, R, B per LED
    assert want in shown
    h = link.health()
    assert h.crc_errors == 0 and h.framing_errors == 0 and h.board_resets == 0
