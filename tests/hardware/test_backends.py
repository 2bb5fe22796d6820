"""Board profiles name their devices: the shipped profiles load, bad ones are refused naming the
file, key and value, and each profile opens the devices it names (on fakes)."""

from __future__ import annotations

import threading

import pytest
import yaml
from fake_gpio import PI_COLUMNS, PI_ROWS, FakeGPIO, ReedBoard
from hw_fakes import FakeStrip

from board_driver.config import configs_dir
from board_driver.devices import LedImage
from board_driver.errors import ConfigError
from board_driver.hardware.backends import load_board, open_hardware
from board_driver.hardware.buttons import Button, ButtonDebouncer, ButtonsConfig
from board_driver.hardware.gpio_matrix import GpioMatrix, MatrixConfig
from board_driver.hardware.pi_leds import PiLedConfig, PiLedSink
from board_driver.hardware.serial_board import SerialBoard, SerialConfig
from board_driver.sim.board import SimulatedBoard

BOARDS = configs_dir() / "boards"


def test_the_shipped_profiles_load():
    sim = load_board("sim")
    assert sim.hardware.sensor_backend == "sim" and sim.hardware.led_backend == "sim"
    gpio = load_board("gpio-12x8")
    assert gpio.hardware.sensors == MatrixConfig(PI_ROWS, PI_COLUMNS, 25, 10)   # settle: docs/hardware.md
    assert isinstance(gpio.hardware.leds, PiLedConfig) and gpio.hardware.leds.driver == "spi"
    assert [b.command for b in gpio.hardware.buttons.buttons] == ["choose", "end", "takeback", "help"]
    pico = load_board("pico-serial")
    assert isinstance(pico.hardware.sensors, SerialConfig) and pico.hardware.led_backend == "serial"
    assert pico.hardware.sensors.ports[0] == "/dev/fairyboard"
    for b in (gpio, pico):
        assert b.profile.led_order.order == "serpentine"


def test_gpio_profile_pins_are_all_different_and_avoid_the_led_spi_pins():
    hw = load_board("gpio-12x8").hardware
    pins = list(hw.sensors.rows) + list(hw.sensors.columns) + [b.pin for b in hw.buttons.buttons]
    assert len(pins) == len(set(pins)) == 24
    assert not {10, 11} & set(pins)            # SPI MOSI (LED data) and SCLK
    assert not {2, 3} & set(hw.sensors.columns)   # I2C pins have 1.8k pull-ups: rows only


def bad(tmp_path, change, name="board.yaml"):
    data = yaml.safe_load((BOARDS / "gpio-12x8.yaml").read_text())
    change(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["hardware"]["sensors"].update(backend="usb"),
     "hardware.sensors.backend: 'usb': use one of sim, gpio, serial"),
    (lambda d: d["hardware"]["sensors"]["rows"].append(9), "hardware.sensors.rows: .*must list 8 GPIO numbers, not 9"),
    (lambda d: d["hardware"]["leds"].update(backend="serial"),
     "hardware.leds.backend: 'serial': serial LEDs are the Pico's"),
    (lambda d: d["hardware"]["buttons"]["pins"].append({"pin": 13, "command": "end"}),
     r"hardware.buttons.pins\[4\].pin: 13: GPIO 13 is already used by the matrix"),
    (lambda d: d["hardware"]["buttons"]["pins"].append({"pin": 11, "command": "end"}),
     r"hardware.buttons.pins\[4\].pin: 11: GPIO 11 is already used"),
    (lambda d: d["hardware"]["buttons"]["pins"][0].update(command="castle"),
     r"hardware.buttons.pins\[0\].command: 'castle': not a console command"),
    (lambda d: d["hardware"].update(wifi=True), "hardware.wifi: unknown key"),
])
def test_bad_profiles_name_file_key_and_value(tmp_path, change, message):
    path = bad(tmp_path, change)
    with pytest.raises(ConfigError, match=f"^{path}: {message}"):
        load_board(path)


def test_unknown_board_names_the_known_ones():
    with pytest.raises(ConfigError, match="known: .*gpio-12x8.*pico-serial.*sim"):
        load_board("nosuchboard")


def test_gpio_profile_opens_matrix_leds_and_buttons_on_fakes(clock):
    board = load_board("gpio-12x8")
    reed = ReedBoard()
    gpio = FakeGPIO(reed, rows=PI_ROWS, columns=PI_COLUMNS)
    strip = FakeStrip(installed=board.profile.led_order)
    hw = open_hardware(board, gpio=gpio, clock=clock, sleep=clock.sleep, delay_us=gpio.delay_us,
                       pixel_driver=strip, start_threads=False)
    assert isinstance(hw.source, GpioMatrix) and isinstance(hw.leds, PiLedSink)
    reed.place("g7")
    assert hw.source.read(1.0).closed == {reed.sq("g7")}
    hw.leds.show(LedImage(tuple((9, 9, 9) if i == reed.sq("g7") else (0, 0, 0) for i in range(96)), (0,) * 96))
    assert strip.squares()[reed.sq("g7")] == (2, 2, 2)          # brightness 64 of 255
    gpio.press(15)
    assert hw.buttons.poll() == []
    clock.sleep(0.05)
    assert hw.buttons.poll() == ["choose"]
    hw.close()
    hw.close()
    assert strip.closed and gpio.pins == {}


def test_serial_profile_opens_the_pico_board(tmp_path):
    from bridge_fakes import RealTicks, VirtualBoard
    vb = VirtualBoard(tmp_path, ticks=RealTicks())
    stop = threading.Event()
    runner = threading.Thread(target=vb.run_forever, args=(stop,), daemon=True)
    runner.start()
    try:
        data = yaml.safe_load((BOARDS / "pico-serial.yaml").read_text())
        data["hardware"]["sensors"]["ports"] = [vb.port_glob]
        path = tmp_path / "pico.yaml"
        path.write_text(yaml.safe_dump(data))
        hw = open_hardware(load_board(str(path)), open_port=vb.open_port)
        try:
            assert isinstance(hw.source, SerialBoard) and hw.leds is hw.source
            assert hw.source.brightness == 64
        finally:
            hw.close()
    finally:
        stop.set()
        runner.join()
        vb.close()


def test_sim_profile_opens_the_simulated_board(clock):
    hw = open_hardware(load_board("sim"), clock=clock)
    assert isinstance(hw.source, SimulatedBoard) and hw.leds is hw.source
    hw.close()


def test_gpio_backends_without_rpi_gpio_say_what_to_install(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "RPi", None)
    monkeypatch.setitem(sys.modules, "RPi.GPIO", None)
    with pytest.raises(ImportError, match=r"fairyboard\[pi\].*fairyboard\[pi5\]"):
        open_hardware(load_board("gpio-12x8"))


# --- buttons ---------------------------------------------------------------------------------------

CFG = ButtonsConfig((Button(5, "choose"), Button(6, "end", hold="pass")), debounce_ms=30, hold_ms=1000)


def run(deb, script):
    """script: (t, levels) steps; returns [(t, command)]."""
    out = []
    for t, levels in script:
        out += [(t, c) for c in deb.feed(t, levels)]
    return out


def test_a_press_counts_once_after_the_debounce_and_bounces_do_not():
    deb = ButtonDebouncer(CFG)
    steps = [(0, [True, False]), (5, [False, False]), (8, [True, False])]     # contact bounce
    steps += [(t, [True, False]) for t in range(10, 200, 10)]
    steps += [(t, [False, False]) for t in range(200, 400, 10)]
    steps += [(t, [True, False]) for t in range(400, 420, 10)] + [(420, [False, False])]   # 20 ms: too short
    assert run(deb, steps) == [(40, "choose")]


def test_a_held_button_sends_its_hold_command_and_a_short_press_its_command():
    deb = ButtonDebouncer(CFG)
    steps = [(t, [False, True]) for t in range(0, 1500, 10)] + [(t, [False, False]) for t in range(1500, 1600, 10)]
    steps += [(t, [False, True]) for t in range(2000, 2200, 10)] + [(t, [False, False]) for t in range(2200, 2300, 10)]
    assert run(deb, steps) == [(1030, "pass"), (2230, "end")]


# --- the real board, when one is named ---------------------------------------------------------------

@pytest.mark.hardware
@pytest.mark.skipif(not __import__("os").environ.get("FAIRYBOARD_TEST_BOARD"),
                    reason="set FAIRYBOARD_TEST_BOARD to a board profile on a Pi with the board attached")
def test_the_real_board_keeps_the_device_contract():
    """On a Pi: the named board's devices give frames of valid sensors and take LED frames."""
    import os

    from board_driver.devices import LedSink, SensorSource
    board = load_board(os.environ["FAIRYBOARD_TEST_BOARD"])
    hw = open_hardware(board)
    try:
        assert isinstance(hw.source, SensorSource)
        frames = [f for f in (hw.source.read(0.5) for _ in range(10)) if f is not None]
        assert frames, "no sensor frame in 5 s"
        assert all(f.closed <= set(range(hw.source.sensor_count)) for f in frames)
        assert all(b.t >= a.t for a, b in zip(frames, frames[1:]))
        if hw.leds is not None:
            assert isinstance(hw.leds, LedSink) and hw.leds.led_count == board.profile.size
            hw.leds.show(LedImage.dark(board.profile.size))
    finally:
        hw.close()
