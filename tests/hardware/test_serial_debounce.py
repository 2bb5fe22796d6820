"""One debounce: the Pico debounces its sensors (an OCCUPANCY frame reports debounced states,
hardware/PROTOCOL.md), so the driver does not debounce a serial board's frames again -- a
change is acted on at the frame that reports it. The simulated board and the GPIO matrix
report raw readings and keep the driver's debounce. The Pico here is the firmware's own logic
behind a real pty, on virtual time (hw_fakes.SerialRig)."""

from __future__ import annotations

import pytest
from hw_fakes import SerialRig

from board_driver.config import load_variant
from board_driver.host.game_host import GameHost, GameRequest, HardwareSeat, SimSeat
from board_driver.host.link import WatchedSource
from board_driver.journal import GameStore
from board_driver.referee.layout import BoardProfile, Layout
from board_driver.settings import DriverSettings
from engine.game import new_game
from firmware_bridge import Settings

PROFILE = BoardProfile()                    # 12x8, an 8x8 game on files c..j
DRIVER = DriverSettings(debounce_ms=40)


def host_on(rig, tmp_path, reed) -> tuple[GameHost, WatchedSource, Layout]:
    v = load_variant("orthodox")
    layout = Layout.place(PROFILE, v.geometry)
    for sensor in layout.closed_sensors(new_game(v).occupancy()):
        reed.place(sensor)                  # the pieces stand on the start squares
    source = WatchedSource(rig.source)
    while source.last is None or source.last.closed != reed.closed:
        source.read(0.05)
    seat = HardwareSeat(source, rig.serial, PROFILE)
    host = GameHost(GameStore(tmp_path / "data"), settings=DRIVER, profile=PROFILE, seat=seat,
                    clock=rig.clock.ms, say=lambda line: None)
    host.open(GameRequest(variant="orthodox", new=True))
    return host, source, layout


def frame_with(source, closed):
    for _ in range(50):
        f = source.read(0.05)
        if f is not None and f.closed == closed:
            return f
    raise AssertionError(f"the board never reported {sorted(closed)}")


def test_a_change_the_pico_reports_is_acted_on_at_its_first_frame(tmp_path, reed, clock):
    rig = SerialRig(tmp_path, reed=reed, clock=clock, settings=Settings(scan_period_ms=5, debounce_ms=20))
    try:
        host, source, layout = host_on(rig, tmp_path, reed)
        assert host.settings.debounce_ms == 0           # the loop's choice: the Pico debounced it
        s = host.session
        assert s is not None and s.debouncer.settle_ms == 0
        e2 = s.game.geometry.parse("e2")
        events = len(s.events)
        reed.lift(layout.sensor_of(e2))
        f = frame_with(source, reed.closed)
        s.on_frame(f)                                   # that frame alone, no time after it
        assert len(s.events) == events + 1
        assert (s.events.time_of(events), s.occupancy >> e2 & 1) == (f.t, 0)
        assert s.verdict.status == "pending"            # the pawn is in the hand
        assert host.session is s and s.leds.colors != ()
    finally:
        rig.close()


def test_host_debounce_always_debounces_the_picos_frames_again(tmp_path, reed, clock):
    rig = SerialRig(tmp_path, reed=reed, clock=clock)
    rig.serial.host_debounce = "always"
    try:
        host, source, layout = host_on(rig, tmp_path, reed)
        assert host.settings.debounce_ms == 40
        s = host.session
        assert s is not None
        e2 = s.game.geometry.parse("e2")
        events = len(s.events)
        reed.lift(layout.sensor_of(e2))
        f = frame_with(source, reed.closed)
        s.on_frame(f)
        assert len(s.events) == events                  # held back for the driver's 40 ms
        s.tick(f.t + 40)
        assert len(s.events) == events + 1 and s.events.time_of(events) == f.t + 40
    finally:
        rig.close()


def test_a_pico_that_does_not_debounce_is_debounced_by_the_driver(tmp_path, reed, clock):
    rig = SerialRig(tmp_path, reed=reed, clock=clock, settings=Settings(scan_period_ms=5, debounce_ms=0))
    try:
        assert rig.serial.board_debounce_ms() == 0
        assert rig.serial.host_debounce_ms(40) == 40
    finally:
        rig.close()


@pytest.mark.parametrize("seat", ["sim", "gpio"])
def test_the_simulated_board_and_the_gpio_matrix_keep_the_drivers_debounce(tmp_path, seat, gpio, clock):
    if seat == "sim":
        chosen = SimSeat(GameStore(tmp_path), clock.ms).driver_settings(DRIVER)
    else:
        from board_driver.hardware.gpio_matrix import GpioMatrix, MatrixConfig
        from fake_gpio import PI_COLUMNS, PI_ROWS
        matrix = GpioMatrix(MatrixConfig(rows=PI_ROWS, columns=PI_COLUMNS), gpio=gpio, clock=clock,
                            sleep=clock.sleep, delay_us=lambda us: None)
        chosen = HardwareSeat(WatchedSource(matrix), None, PROFILE).driver_settings(DRIVER)  # type: ignore[arg-type]
    assert chosen.debounce_ms == 40


def test_host_debounce_in_the_profile_is_checked():
    from board_driver.errors import ConfigError
    from board_driver.hardware._check import Section
    from board_driver.hardware.serial_board import SerialConfig

    def parse(data):
        return SerialConfig.from_section(Section({"backend": "serial", **data}, "pico-serial.yaml", "hardware.sensors"))
    assert parse({}).host_debounce == "auto" and parse({"host_debounce": "always"}).host_debounce == "always"
    with pytest.raises(ConfigError, match=r"pico-serial.yaml: hardware.sensors.host_debounce: 'twice': use one of auto, always"):
        parse({"host_debounce": "twice"})
