"""main.py's start-up and the USB port under a model of MicroPython's runtime (mpy_fakes):
the Ctrl-C race at boot, the watchdog, the reset after a failure, and writes that never wait."""

from __future__ import annotations

import pytest
from bridge_fakes import FIRMWARE_DIR  # first: puts the firmware on sys.path
from mpy_fakes import FakeUsb, WouldBlock, boot

from firmware_bridge import (
    BoardError,
    Decoder,
    ErrorCode,
    Hello,
    Occupancy,
    Request,
    RequestKind,
    encode,
)

# main.py as it was: Ctrl-C turned off only after the imports and building the firmware
OLD_MAIN = '''
import machine
import micropython
import neopixel
import time

import fb_core
import fb_pins
import fb_usb


def main():
    io = fb_usb.UsbSerial()
    fw = fb_core.build(machine, neopixel, fb_pins, io, time, 0xB007)
    micropython.kbd_intr(-1)
    wdt = machine.WDT(timeout=fb_pins.WATCHDOG_MS)
    fb_core.run(fw, io, wdt.feed)


main()
'''

# what a host that writes as soon as the port appears sends first: 00 03 81 ...
HOST_FIRST = b"\x00" + encode(Request(RequestKind.HELLO))


def received(usb: FakeUsb):
    usb.host_read()
    return Decoder().feed(bytes(usb.to_host))


def test_the_host_first_frame_starts_with_ctrl_c():
    assert HOST_FIRST[:2] == b"\x00\x03"


def test_the_fake_reproduces_the_race_with_ctrl_c_turned_off_late(monkeypatch, tmp_path):
    old = tmp_path / "main.py"
    old.write_text(OLD_MAIN)
    usb = FakeUsb()
    usb.host_write(HOST_FIRST, at_turn=20)      # during the imports
    got = boot(monkeypatch, main=old, usb=usb)
    assert got.at_repl and usb.interrupted_at == 20
    assert ("WDT", 5000) not in got.log          # the firmware never started
    assert [m for m in received(usb) if isinstance(m, Hello)] == []


@pytest.mark.parametrize("turn", [3, 4, 10, 40, 200, 600])
def test_ctrl_c_is_off_from_main_py_s_first_statements(monkeypatch, turn):
    usb = FakeUsb()
    usb.host_write(HOST_FIRST, at_turn=turn)
    got = boot(monkeypatch, usb=usb)
    assert got.outcome == "running", got.outcome
    assert got.log[0] == ("kbd_intr", -1)
    hellos = [m for m in received(usb) if isinstance(m, Hello)]
    assert len(hellos) == 2                      # at boot, and the answer to the host's request


def test_main_py_turns_ctrl_c_off_before_anything_else():
    lines = [ln.strip() for ln in (FIRMWARE_DIR / "main.py").read_text().splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    assert lines[:2] == ["import micropython", "micropython.kbd_intr(-1)"]


def test_the_watchdog_is_armed_right_after_the_safe_mode_check(monkeypatch):
    got = boot(monkeypatch)
    assert got.log[:3] == [("kbd_intr", -1), ("Pin", 28), ("WDT", 5000)]
    assert got.machine.wdt.feeds == 50


def test_safe_mode_leaves_the_prompt_usable(monkeypatch):
    got = boot(monkeypatch, grounded={28})
    assert got.at_repl
    assert ("WDT", 5000) not in got.log
    assert got.log[-1] == ("kbd_intr", 3)        # Ctrl-C back on for the REPL and mpremote
    assert b"safe-mode pin is low" in bytes(got.usb.to_host) + bytes(got.usb.fifo)


def test_a_failure_is_reported_then_the_board_resets(monkeypatch):
    import bridge_fakes

    def broken_write(self):
        raise OSError(5, "EIO")
    monkeypatch.setattr(bridge_fakes.FakeStrip, "write", broken_write)
    got = boot(monkeypatch)
    assert got.outcome == "reset"
    errors = [m for m in received(got.usb) if isinstance(m, BoardError)]
    assert [e.code for e in errors] == [ErrorCode.INTERNAL]
    assert "EIO" in errors[0].text
    assert not got.at_repl


def test_writes_never_wait_for_a_host_that_does_not_read(monkeypatch):
    usb = FakeUsb()
    usb.host_reading = False                     # the port is open, nobody reads
    got = boot(monkeypatch, usb=usb, rounds=3000, closed={5})
    assert got.outcome == "running"              # WouldBlock would have ended it
    assert len(usb.fifo) == usb.TX_FIFO          # full: the rest waited, or was dropped
    # the host reads again: only whole frames, ending with the board's current state
    usb.host_reading = True
    msgs = received(usb)
    assert msgs and isinstance(msgs[0], Hello)


def test_the_fake_usb_refuses_a_write_larger_than_its_room():
    usb = FakeUsb()
    usb.write(b"x" * 250)
    with pytest.raises(WouldBlock):
        usb.write(b"y" * 7)


def test_a_stalled_host_costs_frames_never_the_scan_and_the_state_catches_up(monkeypatch):
    import fb_core
    import fb_pins
    import fb_usb
    from bridge_fakes import FakeMachine, FakeNeopixel, FakeTicks
    from mpy_fakes import _Stream, select_module

    usb = FakeUsb()
    usb.intr_char = -1
    monkeypatch.setattr(fb_usb, "select", select_module(usb))
    io = fb_usb.UsbSerial(stdin=_Stream(usb, "stdin"), stdout=_Stream(usb, "stdout"))
    closed = set()
    ticks = FakeTicks()
    fw = fb_core.build(FakeMachine(lambda: closed), FakeNeopixel(), fb_pins, io, ticks, 0xB007)
    fw.start()
    fw.settings = [10, 30, 100, 100]           # a refresh and a heartbeat every 100 ms: ~400 bytes/s
    usb.host_reading = False                   # the host holds the port and reads nothing
    scans_before = fw.matrix.rows[0].machine.reads
    for ms in range(4000):
        if ms == 3000:
            closed.add(17)
        ticks.advance(1)
        fw.step()                               # a write that waited would raise WouldBlock
    assert io.dropped > 0 and len(usb.fifo) == usb.TX_FIFO
    assert fw.debouncer.stable[17 // 8] & (1 << 17 % 8)      # the scan went on
    assert fw.matrix.rows[0].machine.reads > scans_before
    usb.host_reading = True
    for _ in range(100):
        ticks.advance(1)
        fw.step()
        usb.background()
    d = Decoder()
    msgs = d.feed(bytes(usb.to_host))
    assert d.stats.rejected == 0                # only whole frames, never a cut one
    occ = [m for m in msgs if isinstance(m, Occupancy)]
    assert [o.seq for o in occ] == list(range(occ[0].seq, occ[0].seq + len(occ)))   # no seq skipped
    assert occ[-1].closed == {17}               # the owed occupancy: the state now


def test_a_failure_while_starting_is_said_and_the_board_resets_after_a_pause(monkeypatch):
    import bridge_fakes

    def no_strip(self, pin, n, bpp=3, timing=1):
        raise ImportError("no module named 'fb_core'")
    monkeypatch.setattr(bridge_fakes.FakeNeopixel, "NeoPixel", no_strip)
    got = boot(monkeypatch)
    assert got.outcome == "reset" and ("WDT", 5000) in got.log
    assert b"start-up failed" in bytes(got.usb.to_host) + bytes(got.usb.fifo)
    waited = got.ticks.ticks_diff(got.ticks.now, bridge_fakes.FakeTicks().now)
    assert waited >= 2000                                         # not a tight boot loop
