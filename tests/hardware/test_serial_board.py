"""The serial board backend against the Pico firmware's own logic over a real pty."""

from __future__ import annotations

import threading

import pytest
from hw_fakes import SerialRig

from board_driver.devices import FAST, SLOW, LedImage, LedSink, RawFrame, SensorSource
from board_driver.errors import ConfigError
from board_driver.hardware._check import Section
from board_driver.errors import HardwareError
from board_driver.hardware.serial_board import (
    DEFAULT_PORTS,
    SerialConfig,
    open_serial_board,
)
from board_driver.referee.layout import LedOrder
from firmware_bridge import Blink
from firmware_bridge.link import LinkState, LinkStatus

RED, GREEN, BLUE, DARK = (255, 0, 0), (0, 255, 0), (0, 0, 255), (0, 0, 0)


@pytest.fixture
def rig(tmp_path, reed, clock):
    r = SerialRig(tmp_path, reed=reed, clock=clock)
    yield r
    r.close()


def frame(lit: dict[int, tuple], blink: dict[int, int] | None = None) -> LedImage:
    colours = [DARK] * 96
    pattern = [0] * 96
    for sq, c in lit.items():
        colours[sq] = c
    for sq, b in (blink or {}).items():
        pattern[sq] = b
    return LedImage(tuple(colours), tuple(pattern))


def test_is_a_sensor_source_and_an_led_sink(rig):
    assert isinstance(rig.serial, SensorSource) and isinstance(rig.serial, LedSink)
    assert rig.serial.sensor_count == 96 and rig.serial.led_count == 96


def test_occupancy_arrives_as_raw_frames_on_the_link_clock(rig, reed, clock):
    src = rig.source
    first = src.read(0.1)
    assert first is not None and first.closed == frozenset()
    reed.place("e4")
    t0 = clock.ms()
    f = src.read(0.2)
    assert f.closed == {reed.sq("e4")}
    assert 20 <= f.t - t0 <= 30          # the firmware's 20 ms debounce and 5 ms scan
    reed.place("l8")
    reed.lift("e4")
    while True:
        f = src.read(0.2)
        if f.closed != {reed.sq("e4")}:
            break
    assert f.closed == {reed.sq("l8")}


def test_a_bounce_shorter_than_the_debounce_never_arrives(rig, reed, clock):
    src = rig.source
    src.read(0.05)
    clock.after(0.005, lambda: reed.place("a1"))
    clock.after(0.015, lambda: reed.lift("a1"))
    frames = []
    for _ in range(10):
        f = src.read(0.05)
        if f is not None:
            frames.append(f)
    assert all(f.closed == frozenset() for f in frames)


def test_leds_follow_the_profile_order(tmp_path, reed, clock):
    order = LedOrder(12, 8, "serpentine", "l1")
    rig = SerialRig(tmp_path, reed=reed, clock=clock, led_order=order)
    try:
        rig.serial.show(frame({reed.sq("a1"): RED, reed.sq("b2"): GREEN, reed.sq("l8"): BLUE}))
        rig.step(2)
        shown = rig.squares()
        assert shown[reed.sq("a1")] == RED and shown[reed.sq("b2")] == GREEN and shown[reed.sq("l8")] == BLUE
        assert sum(1 for c in shown if c != DARK) == 3
        # the chain really starts at l1 and snakes: LED 0 is under l1, LED 11 under a1, LED 12 under a2
        assert rig.board.strip.shown[11] == RED
    finally:
        rig.close()


def test_blink_patterns_reach_the_firmware(rig, reed):
    rig.serial.show(frame({0: RED, 1: GREEN}, {0: SLOW, 1: FAST}))
    rig.step(2)
    assert list(rig.board.fw.leds.blink[:3]) == [Blink.SLOW, Blink.FAST, Blink.STEADY]


def test_an_unchanged_frame_is_not_sent_again(rig):
    f = frame({5: RED})
    rig.serial.show(f)
    rig.serial.show(f)
    rig.step(2)
    sent = rig.link.health().frames_sent
    rig.serial.show(f)
    assert rig.link.health().frames_sent == sent
    rig.serial.show(frame({6: RED}))
    assert rig.link.health().frames_sent == sent + 1


def test_leds_come_back_after_the_board_resets(rig, reed):
    rig.serial.show(frame({reed.sq("d4"): GREEN}))
    rig.step(2)
    rig.board.boot(0x1111)                  # power glitch: firmware restarts, LEDs dark
    assert rig.squares()[reed.sq("d4")] == DARK
    for _ in range(3000):
        rig.step()
        if rig.squares()[reed.sq("d4")] == GREEN:
            break
    assert rig.squares()[reed.sq("d4")] == GREEN
    health = rig.serial.health()
    assert health.board_resets == 1 and health.state is LinkState.READY


def test_link_notices_are_kept_for_diagnostics(rig):
    rig.source.read(0.01)
    rig.board.cable.unplug()                  # the USB cable pulled
    assert rig.source.read(0.05) is None
    states = [n.message.state for n in rig.serial.notices if isinstance(n.message, LinkStatus)]
    assert states[-2:] == [LinkState.READY, LinkState.DISCONNECTED]
    assert rig.serial.health().state is LinkState.DISCONNECTED


def test_a_wrong_size_led_frame_is_refused(rig):
    with pytest.raises(HardwareError, match="64 squares"):
        rig.serial.show(LedImage.dark(64))


def test_close_darkens_the_leds(rig, reed):
    rig.serial.show(frame({0: RED}))
    rig.step(2)
    assert rig.squares()[0] == RED
    rig.serial.close()
    rig.board.fw.step()                       # the board reads what was sent before the port closed
    assert rig.squares() == [DARK] * 96
    assert rig.link.state is LinkState.CLOSED


def test_open_serial_board_waits_for_the_hello_over_a_real_thread(tmp_path):
    from bridge_fakes import RealTicks, VirtualBoard
    board = VirtualBoard(tmp_path, ticks=RealTicks())
    stop = threading.Event()
    runner = threading.Thread(target=board.run_forever, args=(stop,), daemon=True)
    runner.start()
    try:
        config = SerialConfig(ports=("/nonexistent/ttyACM9", board.port_glob), ready_timeout=5.0)
        sb = open_serial_board(config, led_order=LedOrder(), open_port=board.open_port)
        try:
            assert sb.hello.sensor_count == 96
            board.closed = {7}
            got = None
            for _ in range(200):
                got = sb.read(0.05)
                if got is not None and got.closed == {7}:
                    break
            assert got is not None and got.closed == {7}
        finally:
            sb.close()
        with pytest.raises(HardwareError, match="8x8"):
            open_serial_board(config, led_order=LedOrder(8, 8), open_port=board.open_port)
    finally:
        stop.set()
        runner.join()
        board.close()


def test_config_is_validated_naming_file_key_and_value():
    def parse(data):
        return SerialConfig.from_section(Section(data, "pico-serial.yaml", "hardware.sensors"))
    assert parse({"backend": "serial"}).ports == DEFAULT_PORTS
    assert parse({"port": "/dev/ttyACM0"}).ports == ("/dev/ttyACM0",)
    c = parse({"ports": ["/dev/fairyboard", "/dev/ttyACM*"], "debounce_ms": 40})
    assert c.board_settings().debounce_ms == 40
    for data, pattern in [
        ({"ports": "/dev/ttyACM0"}, r"hardware.sensors.ports: '/dev/ttyACM0': must be a list"),
        ({"port": "/dev/a", "ports": ["/dev/b"]}, "hardware.sensors.port: '/dev/a': give either"),
        ({"periodic_ms": 50}, "hardware.sensors.periodic_ms: 50: must be 0 .off. or"),
        ({"debounce_ms": "fast"}, "hardware.sensors.debounce_ms: 'fast': must be a whole number"),
        ({"baud": 9600}, "hardware.sensors.baud: unknown key"),
    ]:
        with pytest.raises(ConfigError, match="pico-serial.yaml: " + pattern):
            parse(data)


def test_raw_frame_stamp_is_milliseconds(rig, clock):
    f = rig.source.read(0.1)
    assert isinstance(f, RawFrame) and abs(f.t - clock.ms()) <= 100
