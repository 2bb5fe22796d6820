"""The WS2812 latch in the firmware's logic, under CPython: the firmware's work takes no time
here, so two LED frames in one read would reach the strip back to back, and only the firmware's
own wait keeps the line low for the latch (hardware/firmware/README.md, "LEDs"). The emulated
Pico checks the same on the data pin in the chip's time (test_pico_emulated.py)."""

from __future__ import annotations

import bridge_fakes
import fb_core
import fb_pins

from firmware_bridge import LedFrame, encode

PERIOD = 1 << 30                # MicroPython's ticks wrap here on the Pico
WRITE_US = 2880                 # 96 LEDs x 24 bits x 1.25 us on the wire


class MicroClock:
    """MicroPython's ``time``: ticks_ms, ticks_us and sleep_us on one virtual microsecond count,
    started just before the wrap so that the wait is computed across it."""

    def __init__(self) -> None:
        self.us = PERIOD - 1000

    def ticks_ms(self) -> int:
        return (self.us // 1000) % PERIOD

    def ticks_us(self) -> int:
        return self.us % PERIOD

    def ticks_diff(self, a: int, b: int) -> int:
        d = (a - b) % PERIOD
        return d - PERIOD if d >= PERIOD // 2 else d

    def sleep_us(self, us: int) -> None:
        self.us += us


class TimedStrip(bridge_fakes.FakeStrip):
    """A strip whose write takes the wire's time on the clock; remembers (start, end) in us."""

    clock: MicroClock

    def write(self) -> None:
        start = self.clock.us
        self.clock.us += WRITE_US
        super().write()
        self.writes.append((start, self.clock.us))


class Io:
    """The USB port: the host's bytes all waiting at once (one read), the board's kept."""

    def __init__(self) -> None:
        self.waiting = bytearray()
        self.sent = bytearray()

    def read(self, need: int = 0) -> bytes:
        n = need or 1
        out, self.waiting = bytes(self.waiting[:n]), self.waiting[n:]
        return out

    def write(self, data) -> bool:
        self.sent += data
        return True


def firmware(clock):
    machine = bridge_fakes.FakeMachine(lambda: set())
    neopixel = bridge_fakes.FakeNeopixel()
    pin = machine.Pin(fb_pins.LED_DATA, machine.OUT)
    strip = TimedStrip(pin, fb_pins.LED_COUNT)
    strip.clock, strip.writes = clock, []
    neopixel.NeoPixel = lambda *a, **k: strip      # type: ignore[method-assign]
    machine.pins.pop(fb_pins.LED_DATA)              # build() makes the data pin again
    io = Io()
    fw = fb_core.build(machine, neopixel, fb_pins, io, clock, 0xB007)
    fw.start()
    return fw, io, strip


def test_two_led_frames_in_one_read_reach_the_strip_a_latch_time_apart():
    clock = MicroClock()
    fw, io, strip = firmware(clock)
    clock.us += 5000                                # the dark frame of the boot is long past
    io.waiting += b"\x00" + encode(LedFrame(1, [(200, 0, 0)] * 3)) + b"\x00" + encode(LedFrame(2, [(0, 0, 90)] * 3))
    fw.step()
    assert [f[:3] for f in strip.history[-2:]] == [((200, 0, 0),) * 3, ((0, 0, 90),) * 3]
    (_, end), (start, _) = strip.writes[-2:]
    assert start - end == fb_core.LATCH_US          # the line rested low for the latch, no longer


def test_only_what_is_left_of_the_latch_is_waited():
    clock = MicroClock()
    fw, io, strip = firmware(clock)
    clock.us += 200                                 # 200 us after the boot's dark frame ended
    io.waiting += b"\x00" + encode(LedFrame(1, [(0, 50, 0)]))
    fw.step()
    gap = strip.writes[-1][0] - strip.writes[-2][1]
    assert gap == fb_core.LATCH_US                  # waited only the 100 us left of the latch
    clock.us += 1000
    io.waiting += b"\x00" + encode(LedFrame(2, [(0, 60, 0)]))
    fw.step()
    assert strip.writes[-1][0] - strip.writes[-2][1] == 1000
