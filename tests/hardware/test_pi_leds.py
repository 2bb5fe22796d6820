"""WS2812 LEDs driven from the Pi: chain order, brightness, blinking, the SPI bit stream, and
the error a Pi owner sees when the LED library is missing."""

from __future__ import annotations

import sys

import pytest
from hw_fakes import FakeStrip

from board_driver.devices import FAST, SLOW, SLOW_INVERTED, LedImage, LedSink
from board_driver.errors import ConfigError
from board_driver.hardware._check import Section
from board_driver.errors import HardwareError, MissingLibraryError
from board_driver.hardware.pi_leds import (
    LEAD_BYTES,
    RESET_BYTES,
    PiLedConfig,
    PiLedSink,
    SpiDriver,
    Ws281xDriver,
    budget_brightness,
    current_ma,
    decode_spi,
    encode_spi,
    fit_budget,
)
from board_driver.referee.layout import LedOrder

RED, GREEN, BLUE, WHITE, DARK = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255), (0, 0, 0)


def frame(lit, blink=None):
    colours, pattern = [DARK] * 96, [0] * 96
    for sq, c in lit.items():
        colours[sq] = c
    for sq, b in (blink or {}).items():
        pattern[sq] = b
    return LedImage(tuple(colours), tuple(pattern))


@pytest.mark.parametrize("order", [LedOrder(12, 8, o, f) for o in ("row-major", "serpentine", "column-major",
                                                                    "column-serpentine")
                                   for f in ("a1", "l1", "a8", "l8")], ids=lambda o: f"{o.order}-{o.first}")
def test_every_square_lights_its_own_led_in_any_chain_order(order, clock):
    strip = FakeStrip(installed=order)
    sink = PiLedSink(strip, order=order, clock=clock)
    assert isinstance(sink, LedSink)
    for sq in range(96):
        sink.show(frame({sq: RED}))
        shown = strip.squares()
        assert shown[sq] == RED and shown.count(DARK) == 95, sq


def test_a_chain_installed_reversed_lights_the_mirror_square(clock):
    strip = FakeStrip(installed=LedOrder(12, 8, "row-major", "l8"))
    sink = PiLedSink(strip, order=LedOrder(), clock=clock)      # the profile says a1 first
    sink.show(frame({0: RED}))
    assert strip.squares()[95] == RED


def test_brightness_scales_every_channel(clock):
    strip = FakeStrip()
    sink = PiLedSink(strip, brightness=64, clock=clock)
    sink.show(frame({0: WHITE, 1: (255, 128, 0)}))
    assert strip.shown[:2] == ((64, 64, 64), (64, 32, 0))


def test_blink_phases_match_the_firmware(clock):
    strip = FakeStrip()
    clock.now = 1000.0
    sink = PiLedSink(strip, clock=clock)
    sink.show(frame({0: RED, 1: RED, 2: RED, 3: RED}, {1: SLOW, 2: FAST, 3: SLOW_INVERTED}))
    seen = {}
    for ms in range(1000):
        clock.now = 1000.0 + ms / 1000
        sink.tick()
        seen[ms] = tuple(strip.shown[i] != DARK for i in range(4))
    for ms, lit in seen.items():
        assert lit == (True, ms % 1000 < 500, ms % 250 < 125, ms % 1000 >= 500), ms
    assert len(strip.history) <= 10           # drawn on phase changes only


def test_steady_frames_are_not_redrawn(clock):
    strip = FakeStrip()
    sink = PiLedSink(strip, clock=clock)
    sink.show(frame({0: RED}))
    for _ in range(100):
        clock.sleep(0.01)
        assert not sink.tick()
    assert len(strip.history) == 1


def test_close_darkens_and_releases_once(clock):
    strip = FakeStrip()
    sink = PiLedSink(strip, clock=clock)
    sink.show(frame({0: RED}))
    sink.close()
    sink.close()
    assert strip.shown == (DARK,) * 96 and strip.closed
    with pytest.raises(HardwareError):
        sink.show(frame({0: RED}))


def test_show_chain_lights_by_chain_index(clock):
    strip = FakeStrip()
    sink = PiLedSink(strip, order=LedOrder(12, 8, "serpentine", "l8"), clock=clock)
    sink.show_chain([RED, GREEN])
    assert strip.shown[:3] == (RED, GREEN, DARK)


def test_spi_stream_carries_the_pixels_in_grb_order():
    pixels = [(255, 0, 0), (0, 1, 128), (17, 34, 51)]
    data = encode_spi(pixels)
    assert len(data) == LEAD_BYTES + 9 * len(pixels) + RESET_BYTES
    assert data[:LEAD_BYTES] == bytes(LEAD_BYTES)                        # 300 us low first
    body = data[LEAD_BYTES:]
    assert body[:3] == bytes([0b10010010, 0b01001001, 0b00100100])       # green 0 first
    assert body[3:6] == bytes([0b11011011, 0b01101101, 0b10110110])      # then red 255
    assert decode_spi(data) == pixels
    assert data[-RESET_BYTES:] == bytes(RESET_BYTES)
    # without the low period, a chain whose data line idled high misreads the first LED
    with pytest.raises(ValueError, match="first LED"):
        decode_spi(body)
    assert decode_spi(body, idle_high=False) == pixels


def test_frames_are_scaled_into_the_current_budget(clock):
    strip = FakeStrip()
    sink = PiLedSink(strip, brightness=255, clock=clock, budget_ma=1500)
    sink.show(LedImage((WHITE,) * 96, (0,) * 96))
    shown = strip.shown
    assert current_ma(shown) <= 1500 < current_ma([WHITE] * 96)
    assert len(set(shown)) == 1 and shown[0][0] > 0
    sink.show(frame({0: RED, 5: GREEN}))                  # a small frame is not touched
    assert strip.shown[0] == RED and strip.shown[5] == GREEN
    assert fit_budget([WHITE] * 96, None) == [WHITE] * 96
    # the Pico's frames are limited through their brightness byte
    b = budget_brightness([WHITE] * 96, 64, 1500)
    assert b < 64 and current_ma([(b, b, b)] * 96) <= 1500 < current_ma([(b + 1,) * 3] * 96)
    assert budget_brightness([RED], 200, 1500) == 200


class FakeSpidev:
    """py-spidev's module: SpiDev objects that record what they were set to and sent."""

    def __init__(self, fail_open=False):
        self.devices = []
        self.fail_open = fail_open

    def SpiDev(self):  # noqa: N802
        module = self

        class Dev:
            def __init__(self):
                self.sent, self.opened, self.closed = [], None, False
                module.devices.append(self)

            def open(self, bus, device):
                if module.fail_open:
                    raise FileNotFoundError(2, "No such file or directory")
                self.opened = (bus, device)

            def writebytes2(self, data):
                self.sent.append(bytes(data))

            def close(self):
                self.closed = True
        return Dev()


def test_spi_driver_sends_at_2_4_mhz(clock):
    fake = FakeSpidev()
    driver = SpiDriver(96, 0, 0, spidev_module=fake)
    dev = fake.devices[0]
    assert dev.opened == (0, 0) and dev.max_speed_hz == 2_400_000 and dev.mode == 0
    assert dev.no_cs is True              # GPIO 8 (CE0) is never toggled
    sink = PiLedSink(driver, clock=clock)
    sink.show(frame({0: BLUE}))
    assert decode_spi(dev.sent[-1])[:2] == [BLUE, DARK]
    with pytest.raises(HardwareError, match="spidev0.1.*group spi"):
        SpiDriver(96, 0, 1, spidev_module=FakeSpidev(fail_open=True))


def test_missing_libraries_say_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "spidev", None)
    monkeypatch.setitem(sys.modules, "rpi_ws281x", None)
    with pytest.raises(MissingLibraryError, match=r"fairyboard\[leds\]"):
        SpiDriver(96)
    with pytest.raises(MissingLibraryError, match=r"fairyboard\[leds-pwm\]"):
        Ws281xDriver(96)
    assert issubclass(MissingLibraryError, ImportError)


def test_config_is_validated_naming_file_key_and_value():
    def parse(data):
        return PiLedConfig.from_section(Section(data, "gpio-12x8.yaml", "hardware.leds"), 96)
    assert parse({"backend": "pi"}) == PiLedConfig()
    assert parse({"driver": "ws281x"}).pin == 18
    for data, pattern in [
        ({"driver": "pwm"}, "hardware.leds.driver: 'pwm': use one of spi, ws281x"),
        ({"driver": "ws281x", "pin": 4}, "hardware.leds.pin: 4: rpi_ws281x drives GPIO"),
        ({"driver": "spi", "pin": 18}, "hardware.leds.pin: 18: must be from 10 to 10"),
        ({"brightness": 300}, "hardware.leds.brightness: 300"),
        ({"budget_ma": 50}, "hardware.leds.budget_ma: 50: must be from 100"),
    ]:
        with pytest.raises(ConfigError, match="gpio-12x8.yaml: " + pattern):
            parse(data)


# --- the blink thread: woken by frames and phase edges only ------------------------------------

def run_blink_thread(sink, clock, seconds):
    """What the blink thread does, on the virtual clock: sleep until the next edge, tick.
    Returns (wakes, draws); stops early (wakes so far) when the thread would sleep for good."""
    wakes = draws = 0
    end = clock() + seconds
    while (delay := sink.next_edge()) is not None and clock() + delay <= end:
        clock.sleep(delay)
        wakes += 1
        draws += sink.tick()
    return wakes, draws


def test_a_steady_frame_leaves_the_blink_thread_asleep(clock):
    sink = PiLedSink(FakeStrip(), clock=clock)
    sink.show(frame({0: RED, 5: GREEN}))
    assert sink.next_edge() is None
    assert run_blink_thread(sink, clock, 60) == (0, 0)


def test_a_fast_blink_wakes_the_thread_at_each_phase_edge_only(clock):
    """8 edges a second (on while ms % 250 < 125), each one drawn; not 100 ticks a second."""
    strip = FakeStrip()
    sink = PiLedSink(strip, clock=clock)
    clock.now = 1000.0437
    sink.show(frame({0: RED, 1: RED}, {0: FAST, 1: SLOW}))
    lit = []
    wakes = 0
    end = clock() + 10
    while clock() + sink.next_edge() <= end:
        clock.sleep(sink.next_edge())
        wakes += 1
        assert sink.tick()                                 # every wake draws a new phase
        ms = clock.ms() - 1                                # the edge just passed (woken 1 ms after it)
        assert ms % 125 == 0
        lit.append((strip.shown[0] != DARK, strip.shown[1] != DARK, ms))
    assert wakes == 80
    assert all(fast == (ms % 250 < 125) and slow == (ms % 1000 < 500) for fast, slow, ms in lit)


def test_only_slow_blinks_wake_the_thread_twice_a_second(clock):
    sink = PiLedSink(FakeStrip(), clock=clock)
    clock.now = 100.2
    sink.show(frame({0: RED, 1: RED}, {0: SLOW, 1: SLOW_INVERTED}))
    assert run_blink_thread(sink, clock, 10) == (20, 20)
    sink.show(frame({0: RED}))                             # blinking ends: the thread sleeps for good
    assert sink.next_edge() is None


class SignalStrip(FakeStrip):
    """A strip whose writes can be waited for."""

    def __init__(self) -> None:
        super().__init__()
        import threading
        self.wrote = threading.Condition()

    def write(self, pixels) -> None:
        with self.wrote:
            super().write(pixels)
            self.wrote.notify_all()

    def wait_writes(self, n: int) -> bool:
        with self.wrote:
            return self.wrote.wait_for(lambda: len(self.history) >= n, 60)


def test_the_started_blink_thread_wakes_for_a_new_frame_and_draws_at_each_edge():
    """On the real clock: a steady frame, then a blinking one: the sleeping thread wakes for
    it and draws the phase edges; every wake but the frames' draws one."""
    import threading
    strip = SignalStrip()
    sink = PiLedSink(strip).start()
    try:
        sink.show(frame({0: RED}))
        assert strip.wait_writes(1)
        sink.show(frame({0: RED}, {0: FAST}))
        assert strip.wait_writes(6)                        # the frame, then 4 phase edges drawn by the thread
        with sink._lock:                                   # the thread counts a wake and draws under it
            assert sink.wakes <= len(strip.history)        # each wake is a frame's (2) or draws an edge
    finally:
        sink.close()
    assert strip.closed and not any(t.name == "fairyboard-leds" for t in threading.enumerate())
