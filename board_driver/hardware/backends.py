"""Build the sensor source, LED sink and buttons a board profile names.

A board profile (``configs/boards/*.yaml``) describes the board for the driver (size, sensor
map, LED order) and, under ``hardware:``, the devices behind it::

    hardware:
      sensors:                  # where occupancy comes from
        backend: gpio           # gpio | serial | sim
        rows: [2, 3, ...]       #   gpio: BCM pins, rank 1 first, driven
        columns: [13, 19, ...]  #   gpio: BCM pins, file a first, read with pull-downs
        settle_us: 25           #   gpio: wait after driving a row (internal pull-downs: docs/hardware.md)
        scan_ms: 10
        idle_scan_ms: 40        #   gpio: the scan period once nothing changed for 5 s (0: off)
        # serial: ports: [/dev/fairyboard, "/dev/ttyACM*"], scan_ms, debounce_ms, periodic_ms, heartbeat_ms
      leds:                     # where the LED frames go
        backend: pi             # pi | serial (the Pico's, needs sensors.backend serial) | sim | none
        driver: spi             #   pi: spi (GPIO 10) | ws281x (PWM GPIO 18, Pi 1-4, root)
        brightness: 64
        budget_ma: 1500         # the most the LEDs may draw (mA): every frame is scaled to fit
      buttons:                  # optional push buttons (to ground) sending console commands
        pins:
          - {pin: 15, command: choose}
          - {pin: 1, command: end, hold: pass}   # never GPIO 8 with SPI LEDs: it is CE0
      calibration: {...}        # written by `fairyboard calibrate` (the readings it used)

:func:`load_board` reads and validates a profile once (errors name the file, key and value);
:func:`open_hardware` opens the devices, taking the GPIO module, port opener, LED driver and
clock as keyword arguments so the tests run it on fakes.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from board_driver.devices import LedSink, SensorSource
from board_driver.errors import HardwareError
from board_driver.hardware._check import Section
from board_driver.hardware.buttons import ButtonsConfig, GpioButtons
from board_driver.hardware.gpio_registers import GpioRegisters, open_registers
from board_driver.hardware.gpio_matrix import (
    GpioMatrix,
    GpioModule,
    MatrixConfig,
    import_gpio,
    sleep_us,
)
from board_driver.hardware.pi_leds import (
    BUDGET_MA,
    PiLedConfig,
    PiLedSink,
    PixelDriver,
    budget,
    open_driver,
)
from board_driver.hardware.serial_board import (
    SerialBoard,
    SerialConfig,
    open_serial_board,
)
from board_driver.referee.layout import BoardProfile

SENSOR_BACKENDS = ("sim", "gpio", "serial")
LED_BACKENDS = ("sim", "pi", "serial", "none")


@dataclass(frozen=True, slots=True)
class SerialLeds:
    """``hardware.leds`` with ``backend: serial``: the Pico drives the LEDs."""

    brightness: int = 64
    budget_ma: int = BUDGET_MA


@dataclass(frozen=True, slots=True)
class HardwareConfig:
    """The ``hardware:`` section of a board profile, validated."""

    sensors: MatrixConfig | SerialConfig | None = None          # None: the simulated board
    leds: PiLedConfig | SerialLeds | None | str = "sim"         # "sim", "none" or a config
    buttons: ButtonsConfig | None = None

    @property
    def sensor_backend(self) -> str:
        return "gpio" if isinstance(self.sensors, MatrixConfig) else "serial" if self.sensors else "sim"

    @property
    def led_backend(self) -> str:
        if isinstance(self.leds, PiLedConfig):
            return "pi"
        if isinstance(self.leds, SerialLeds):
            return "serial"
        return str(self.leds)

    @classmethod
    def from_dict(cls, data: Any, source: str, files: int = 12, ranks: int = 8) -> HardwareConfig:
        hw = Section(data, source, "hardware")
        hw.only(("sensors", "leds", "buttons", "calibration"))
        sens = hw.section("sensors")
        backend = sens.choice("backend", SENSOR_BACKENDS, "sim")
        sensors: MatrixConfig | SerialConfig | None
        if backend == "gpio":
            sensors = MatrixConfig.from_section(sens, files, ranks)
        elif backend == "serial":
            sensors = SerialConfig.from_section(sens)
        else:
            sens.only(("backend",))
            sensors = None
        led = hw.section("leds")
        lb = led.choice("backend", LED_BACKENDS, "serial" if backend == "serial" else "sim" if backend == "sim" else "none")
        leds: PiLedConfig | SerialLeds | str
        if lb == "pi":
            leds = PiLedConfig.from_section(led, files * ranks)
        elif lb == "serial":
            if backend != "serial":
                raise led.fail("backend", lb, "serial LEDs are the Pico's: they need hardware.sensors.backend serial")
            led.only(("backend", "brightness", "budget_ma"))
            leds = SerialLeds(led.integer("brightness", 64, 0, 255), budget(led))
        else:
            led.only(("backend",))
            leds = lb
        buttons = None
        if hw.has("buttons") and hw.get("buttons") is not None:
            taken = set(sensors.pins()) if isinstance(sensors, MatrixConfig) else set()
            if isinstance(leds, PiLedConfig):
                # SPI0: MOSI, SCLK, and CE0 (GPIO 8), which the kernel's SPI driver may still
                # drive even with dtoverlay=spi0-0cs
                taken |= {leds.pin, 11, 8} if leds.driver == "spi" else {leds.pin}
            buttons = ButtonsConfig.from_section(hw.section("buttons"), taken)
        if isinstance(sensors, MatrixConfig) and isinstance(leds, PiLedConfig) and leds.pin in sensors.pins():
            raise led.fail("pin", leds.pin, f"GPIO {leds.pin} is also a matrix pin")
        return cls(sensors, leds, buttons)


@dataclass(frozen=True, slots=True)
class BoardConfig:
    """A board profile as read from its file: the driver's profile and the hardware section."""

    path: Path | None
    profile: BoardProfile
    hardware: HardwareConfig
    data: Mapping[str, Any] = field(compare=False, repr=False, default_factory=dict)


def load_board(name: str | os.PathLike | None = None) -> BoardConfig:
    """Read and validate a board profile, chosen as :func:`board_driver.settings.board_name`
    says (``--board``, ``$FAIRYBOARD_BOARD``, ``/etc/fairyboard/board.yaml``, ``driver.board``,
    ``sim``): the driver's profile plus the devices of its ``hardware:`` section."""
    from board_driver.settings import read_profile

    path, data = read_profile(name)
    profile = BoardProfile.from_dict(data, str(path) if path else "<sim>")
    hardware = HardwareConfig.from_dict(data.get("hardware"), str(path) if path else "<sim>",
                                        profile.files, profile.ranks)
    return BoardConfig(path, profile, hardware, data)


def gpio_device_problem(dev: Path = Path("/dev")) -> str | None:
    """Why this process cannot use the GPIO, or None: no GPIO device at all (not a Raspberry
    Pi: RPi.GPIO needs /dev/gpiomem, rpi-lgpio on a Pi 5 a /dev/gpiochip), or none it may open."""
    found = sorted(dev.glob("gpiomem*")) + sorted(dev.glob("gpiochip*"))
    if not found:
        return (f"this machine has no GPIO (no {dev / 'gpiomem'} or {dev / 'gpiochip*'}): a board profile "
                f"with gpio sensors or buttons runs on a Raspberry Pi (elsewhere: --board sim)")
    if not any(os.access(p, os.R_OK | os.W_OK) for p in found):
        return (f"no access to {found[0]}: add the user to the gpio group (`sudo usermod -aG gpio USER`, "
                f"then log in again), or run as root")
    return None


def open_gpio(dev: Path = Path("/dev")) -> GpioModule:
    """RPi.GPIO where this process can use the GPIO; else one line saying why not (which
    package to install, or what the machine lacks) instead of the module's own error."""
    try:
        gpio = import_gpio()
    except HardwareError as exc:     # RPi.GPIO refuses to load: say what is missing, if we can
        raise HardwareError(gpio_device_problem(dev) or str(exc)) from None
    problem = gpio_device_problem(dev)
    if problem is not None:
        raise HardwareError(problem)
    return gpio


@dataclass
class Hardware:
    """The open devices of a board; :meth:`close` closes each once."""

    source: SensorSource
    leds: LedSink | None
    buttons: GpioButtons | None = None
    serial: SerialBoard | None = None
    gpio: GpioModule | None = None

    def close(self) -> None:
        done: list[object] = []
        for dev in (self.buttons, self.leds, self.source):
            if dev is not None and not any(dev is d for d in done):
                done.append(dev)
                dev.close()


def open_hardware(board: BoardConfig, *, gpio: GpioModule | None = None,
                  clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                  delay_us: Callable[[float], None] | None = None, open_port: Callable | None = None,
                  pixel_driver: PixelDriver | None = None, start_threads: bool = True,
                  registers: GpioRegisters | None = None) -> Hardware:
    """Open the devices ``board`` names. ``gpio`` defaults to RPi.GPIO (imported only when a
    GPIO device is named), ``pixel_driver`` to the profile's LED driver; ``start_threads``
    False leaves the LED blink thread and the matrix's scan thread to the caller (tests call
    ``tick``, and the matrix's ``read`` scans in the caller's thread). ``registers`` is the
    GPIO bank the matrix scans a register at a time; by default, with RPi.GPIO itself and
    ``access: auto``, the Pi 1-4's through /dev/gpiomem (:func:`~board_driver.hardware.gpio_registers.open_registers`)."""
    hw, profile = board.hardware, board.profile
    opened: list = []
    try:
        needs_gpio = isinstance(hw.sensors, MatrixConfig) or hw.buttons is not None
        real_gpio = needs_gpio and gpio is None
        if real_gpio:
            gpio = open_gpio()
        serial = None
        leds: LedSink | None = None
        if isinstance(hw.sensors, MatrixConfig):
            assert gpio is not None         # imported above: the matrix needs it
            if registers is None and real_gpio and hw.sensors.access == "auto":
                registers = open_registers(hw.sensors.pins())      # a Pi 1-4: a rank of columns in one read
            matrix = GpioMatrix(hw.sensors, gpio=gpio, clock=clock, sleep=sleep, delay_us=delay_us or sleep_us,
                                registers=registers)
            source: SensorSource = matrix.start() if start_threads else matrix      # scans in a thread of its own
        elif isinstance(hw.sensors, SerialConfig):
            brightness = hw.leds.brightness if isinstance(hw.leds, SerialLeds) else 0
            serial = open_serial_board(hw.sensors, led_order=profile.led_order, brightness=brightness,
                                       budget_ma=hw.leds.budget_ma if isinstance(hw.leds, SerialLeds) else None,
                                       sensor_count=profile.sensor_count, clock=clock, open_port=open_port)
            source = serial
        else:
            from board_driver.referee.layout import Layout
            from board_driver.sim.board import SimulatedBoard
            from engine.geometry import Geometry
            layout = Layout.place(profile, Geometry(profile.files, profile.ranks))
            sim = SimulatedBoard(layout, clock=lambda: int(clock() * 1000))
            source = sim
            if hw.leds == "sim":
                leds = sim
        opened.append(source)
        if isinstance(hw.leds, SerialLeds):
            leds = serial
        elif isinstance(hw.leds, PiLedConfig):
            driver = pixel_driver if pixel_driver is not None else open_driver(hw.leds)
            sink = PiLedSink(driver, order=profile.led_order, brightness=hw.leds.brightness, clock=clock,
                             budget_ma=hw.leds.budget_ma)
            opened.append(sink)
            leds = sink.start() if start_threads else sink
        buttons = None
        if hw.buttons is not None:
            assert gpio is not None         # imported above: the buttons need it
            # polled after the matrix's scans when there is one: one thread, one wake-up for both
            buttons = GpioButtons(hw.buttons, gpio=gpio, clock=clock,
                                  matrix=source if isinstance(source, GpioMatrix) else None)
        return Hardware(source, leds, buttons, serial, gpio)
    except BaseException:
        for dev in reversed(opened):
            try:
                dev.close()
            except Exception:
                pass
        raise
