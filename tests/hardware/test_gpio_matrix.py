"""The GPIO matrix scan on a fake Pi: what the board reports, and that it drives the pins as a
real Pi needs them driven."""

from __future__ import annotations

import pytest
from fake_gpio import PI_COLUMNS as COLUMNS
from fake_gpio import PI_ROWS as ROWS
from fake_gpio import FakeGPIO, ReedBoard

from board_driver.devices import RawFrame, SensorSource
from board_driver.errors import ConfigError
from board_driver.hardware._check import Section
from board_driver.errors import HardwareError
from board_driver.hardware.gpio_matrix import GpioMatrix, MatrixConfig

CONFIG = MatrixConfig(ROWS, COLUMNS, settle_us=10, scan_ms=10)


def matrix(gpio, clock, config=CONFIG):
    return GpioMatrix(config, gpio=gpio, clock=clock, sleep=clock.sleep, delay_us=gpio.delay_us)


def test_is_a_sensor_source(gpio, clock):
    m = matrix(gpio, clock)
    assert isinstance(m, SensorSource)
    assert m.sensor_count == 96


def test_every_square_reports_its_own_index(gpio, reed, clock):
    m = matrix(gpio, clock)
    assert m.scan() == frozenset()
    for sq in range(96):
        reed.set_pieces([sq])
        assert m.scan() == {sq}, reed.geometry.name(sq)


def test_full_board_and_ghost_rectangles_read_true(gpio, reed, clock):
    m = matrix(gpio, clock)
    reed.set_pieces(["a1", "b1", "a2"])          # three corners: no ghost on b2
    assert m.scan() == {0, 1, 12}
    reed.set_pieces(set(range(96)) - {13})
    assert m.scan() == set(range(96)) - {13}


def test_pins_set_up_rows_driven_low_columns_pulled_down(gpio, clock):
    matrix(gpio, clock)
    assert gpio.mode == gpio.BCM
    for g in ROWS:
        assert gpio.pins[g].direction == gpio.OUT and gpio.pins[g].level == 0
    for g in COLUMNS:
        assert gpio.pins[g].direction == gpio.IN and gpio.pins[g].pull == gpio.PUD_DOWN


def test_one_row_high_at_a_time_and_all_low_after_a_scan(gpio, reed, clock):
    m = matrix(gpio, clock)
    reed.set_pieces(range(96))
    highs = []
    real_input = gpio.input

    def spy(ch):
        highs.append(sum(1 for g in ROWS if gpio.pins[g].level))
        return real_input(ch)
    gpio.input = spy
    m.scan()
    assert highs and set(highs) == {1}
    assert not any(gpio.pins[g].level for g in ROWS)


def test_operations_per_scan(gpio, clock):
    m = matrix(gpio, clock)
    before = len(gpio.calls)
    m.scan()
    calls = gpio.calls[before:]
    assert sum(1 for c in calls if c[0] == "input") == 96
    assert sum(1 for c in calls if c[0] == "output") == 9
    assert len(calls) == 105


def test_too_short_a_settle_shows_a_phantom_on_the_next_rank(reed, clock):
    # the slow edge: e4's file wire, pulled high while rank 4 was driven, falls through the
    # Pi's internal pull-down (tens of kohm) and still reads high when rank 5 is read
    reed.set_pieces(["e4", "l8"])
    slow = FakeGPIO(reed, rows=ROWS, columns=COLUMNS, fall_us=15)
    assert matrix(slow, clock, MatrixConfig(ROWS, COLUMNS, settle_us=10)).scan() == \
        {reed.sq("e4"), reed.sq("e5"), reed.sq("l8")}
    slow = FakeGPIO(reed, rows=ROWS, columns=COLUMNS, fall_us=15)
    assert matrix(slow, clock, MatrixConfig(ROWS, COLUMNS, settle_us=20)).scan() == {reed.sq("e4"), reed.sq("l8")}


def test_a_missing_diode_shows_a_ghost_only_with_three_pieces_on_a_rectangle(reed, gpio, clock):
    reed.no_diode("c3")
    m = matrix(gpio, clock)
    for pieces in (["c3"], ["c3", "c6"], ["c3", "f3"], ["c6", "f3", "f6"]):
        reed.set_pieces(pieces)
        assert m.scan() == {reed.sq(p) for p in pieces}, pieces
    reed.set_pieces(["c3", "c6", "f3"])               # the fourth corner, f6, reads closed
    assert m.scan() == {reed.sq(p) for p in ("c3", "c6", "f3", "f6")}


def test_read_scans_every_scan_ms_on_the_clock(gpio, reed, clock):
    m = matrix(gpio, clock)
    t0 = clock.ms()
    frames = [m.read(1.0) for _ in range(5)]
    assert [f.t - t0 for f in frames] == [0, 10, 20, 30, 40]
    # a short timeout before the next scan is due: nothing, and the clock moved by the timeout
    assert m.read(0.004) is None
    assert clock.ms() - t0 == 44
    frame = m.read(0.1)
    assert frame.t - t0 == 50
    reed.place("c3")
    assert m.read(1.0) == RawFrame(t0 + 60, frozenset({reed.sq("c3")}))


def test_a_slow_reader_gets_no_burst_of_stale_scans(gpio, clock):
    m = matrix(gpio, clock)
    m.read(0)
    clock.sleep(1.0)                      # the reader was busy for a second
    a, b = m.read(1.0), m.read(1.0)
    assert b.t - a.t == 10


def test_close_releases_only_the_matrix_pins(gpio, clock):
    gpio.setmode(gpio.BCM)
    gpio.setup(8, gpio.IN, pull_up_down=gpio.PUD_UP)   # someone else's (a button)
    m = matrix(gpio, clock)
    m.close()
    m.close()
    assert gpio.count("cleanup") == 1
    assert set(gpio.pins) == {8}
    with pytest.raises(HardwareError):
        m.scan()


def test_refuses_a_process_using_physical_pin_numbers(gpio, clock):
    gpio.setmode(gpio.BOARD)
    with pytest.raises(HardwareError, match="BCM"):
        matrix(gpio, clock)


# --- the fake behaves like the real module ---------------------------------------------------

def test_fake_refuses_what_a_pi_refuses():
    g = FakeGPIO(ReedBoard(), rows=ROWS, columns=COLUMNS)
    with pytest.raises(RuntimeError, match="setmode"):
        g.setup(4, g.OUT)
    g.setmode(g.BCM)
    with pytest.raises(ValueError, match="different mode"):
        g.setmode(g.BOARD)
    with pytest.raises(ValueError, match="invalid"):
        g.setup(28, g.IN)
    with pytest.raises(ValueError, match="outputs"):
        g.setup(4, g.OUT, pull_up_down=g.PUD_UP)
    with pytest.raises(RuntimeError, match="setup"):
        g.input(13)
    g.setup(13, g.IN, pull_up_down=g.PUD_DOWN)
    with pytest.raises(RuntimeError, match="OUTPUT"):
        g.output(13, g.HIGH)                       # driving an input
    g.setup(4, g.OUT)
    with pytest.raises(RuntimeError, match="output"):
        g.input(4)                                 # reading back an output
    g.setup(9, g.IN)
    with pytest.raises(RuntimeError, match="floating"):
        g.input(9)
    assert ("output", 13, g.HIGH) in g.calls


def test_fake_faults_show_in_the_scan(gpio, reed, clock):
    m = matrix(gpio, clock)
    reed.swap("a1", "b1")
    reed.kill("c1")
    reed.stick("d1")
    reed.double("e1", "f1")
    assert m.scan() == {reed.sq("d1")}
    reed.set_pieces(["a1"])
    assert m.scan() == {reed.sq("b1"), reed.sq("d1")}
    reed.set_pieces(["c1"])
    assert m.scan() == {reed.sq("d1")}
    reed.set_pieces(["f1"])
    assert m.scan() == {reed.sq("e1"), reed.sq("d1")}


# --- config ----------------------------------------------------------------------------------

def section(data):
    return Section(data, "gpio-12x8.yaml", "hardware.sensors")


def test_config_is_validated_naming_file_key_and_value():
    ok = MatrixConfig.from_section(section({"backend": "gpio", "rows": list(ROWS), "columns": list(COLUMNS)}), 12, 8)
    assert ok == MatrixConfig(ROWS, COLUMNS)
    cases = [
        ({"rows": list(ROWS)[:7], "columns": list(COLUMNS)}, "hardware.sensors.rows: .* must list 8"),
        ({"rows": list(ROWS), "columns": list(COLUMNS[:-1]) + [40]}, r"hardware.sensors.columns\[11\]: 40"),
        ({"rows": list(ROWS), "columns": list(COLUMNS[:-1]) + [2]}, r"hardware.sensors.columns: .*GPIO 2 is also a row"),
        ({"rows": list(ROWS), "columns": list(COLUMNS), "settle_us": -1}, "hardware.sensors.settle_us: -1: must be from 0"),
        ({"rows": list(ROWS), "columns": list(COLUMNS), "scan": 5}, "hardware.sensors.scan: unknown key"),
        ({"columns": list(COLUMNS)}, "hardware.sensors.rows: missing"),
    ]
    for data, pattern in cases:
        with pytest.raises(ConfigError, match="gpio-12x8.yaml: " + pattern):
            MatrixConfig.from_section(section(data), 12, 8)


def test_rpi_gpio_failing_at_setup_on_a_pi_5_says_what_to_install(reed, clock):
    class Pi5Gpio(FakeGPIO):
        def setup(self, *args, **kwargs):
            raise RuntimeError("Cannot determine SOC peripheral base address")
    from board_driver.errors import HardwareError
    with pytest.raises(HardwareError, match=r"Raspberry Pi 5.*fairyboard\[pi5\].*RPI_LGPIO_CHIP"):
        matrix(Pi5Gpio(reed, rows=ROWS, columns=COLUMNS), clock)


# --- started: a scan thread of its own ----------------------------------------------------------

def started(gpio, config=CONFIG):
    """A matrix scanning in its own thread on the real clock (as the service opens it)."""
    return GpioMatrix(config, gpio=gpio, delay_us=gpio.delay_us).start()


def test_a_started_matrix_keeps_scanning_while_the_reader_is_in_a_commit(gpio, reed):
    """The game's thread holds its lock and computes (a commit: milliseconds on a Pi); the scan
    thread scans on meanwhile, and a piece set down during the commit is read afterwards with
    the instant it was scanned at -- not when the commit ended. With the scan in the reader's
    thread, no scan would happen until the commit ended: the wait below would time out."""
    import threading
    import time
    m = started(gpio)
    try:
        first = m.read(60.0)
        assert first is not None and first.closed == frozenset()
        game = threading.Lock()
        with game:                                  # the commit: busy, holding the game's lock
            at_start = len(gpio.scan_times)
            end = time.monotonic() + 60
            placed_at = None
            while len(gpio.scan_times) < at_start + 6 and time.monotonic() < end:
                sum(i * i for i in range(2000))     # the commit's work keeps the core busy
                if placed_at is None and len(gpio.scan_times) >= at_start + 2:
                    reed.place("e4")
                    placed_at = time.monotonic()
            during = len(gpio.scan_times) - at_start
            committed_at = time.monotonic()
        assert during >= 6, f"{during} scans while the reader was busy"
        frame = m.read(60.0)
        assert frame is not None and frame.closed == {reed.sq("e4")}
        assert placed_at is not None and placed_at * 1000 - 1 <= frame.t <= committed_at * 1000 + 1
    finally:
        m.close()


def test_a_started_matrix_queues_a_frame_on_change_and_stays_quiet_otherwise(gpio, reed):
    """An idle reader sleeps: nothing is queued while nothing changes, but for the refresh
    every REFRESH_S (counted by the fake's own scans, never timed)."""
    from board_driver.hardware.gpio_matrix import REFRESH_S
    m = started(gpio)
    try:
        assert m.read(60.0) is not None
        n = len(gpio.scan_times)
        assert gpio.wait_scans(n + 30)
        quiet = []
        while (f := m.read(0)) is not None:
            quiet.append(f)
        span = gpio.scan_times[-1] - gpio.scan_times[n - 1]
        assert len(quiet) <= span / REFRESH_S + 1, f"{len(quiet)} frames over {span:.2f} s of no change"
        assert all(f.closed == frozenset() for f in quiet)
        reed.place("c3", "h6")
        frame = m.read(60.0)
        while frame is not None and frame.closed != {reed.sq("c3"), reed.sq("h6")}:
            frame = m.read(60.0)
        assert frame is not None
    finally:
        m.close()


def test_closing_a_started_matrix_stops_its_scans(gpio):
    import threading
    before = {t for t in threading.enumerate() if t.name == "fairyboard-scan"}
    m = started(gpio)
    assert m.started and gpio.wait_scans(3)
    m.close()
    n = len(gpio.scan_times)
    assert not m.started
    assert {t for t in threading.enumerate() if t.name == "fairyboard-scan"} <= before
    assert gpio.count("cleanup") == 1
    m.close()
    assert len(gpio.scan_times) == n
    with pytest.raises(HardwareError):
        m.start()


def test_a_gpio_failing_in_the_scan_thread_is_the_readers_error(gpio, reed):
    m = started(gpio)
    try:
        assert m.read(60.0) is not None

        def broken(ch):
            raise RuntimeError("GPIO channel has not been set up")
        gpio.input = broken
        with pytest.raises(HardwareError, match="the GPIO scan stopped: GPIO channel has not been set up"):
            while True:
                m.read(60.0)
        with pytest.raises(HardwareError, match="the GPIO scan stopped"):
            m.read(0)
    finally:
        m.close()


def test_the_default_settle_covers_the_slowest_fall_through_the_internal_pull_down(reed, clock):
    """65 kohm x 250 pF x ln(3.3 V / 0.8 V) = 23 us (docs/hardware.md, "Settle times"): a file
    wire falling that slowly shows no phantom at the default settle, and would at the old 10."""
    import math
    fall = 65e3 * 250e-12 * math.log(3.3 / 0.8) * 1e6
    assert 22 < fall < 24
    reed.set_pieces(["e4"])
    slow = FakeGPIO(reed, rows=ROWS, columns=COLUMNS, fall_us=fall)
    assert matrix(slow, clock, MatrixConfig(ROWS, COLUMNS)).scan() == {reed.sq("e4")}
    slow = FakeGPIO(reed, rows=ROWS, columns=COLUMNS, fall_us=fall)
    assert reed.sq("e5") in matrix(slow, clock, MatrixConfig(ROWS, COLUMNS, settle_us=10)).scan()   # a phantom


def test_a_started_matrix_narrows_the_switch_interval_and_gives_it_back(gpio):
    """The game's thread lets the scan run within 1 ms, not Python's default 5 ms."""
    import sys
    before = sys.getswitchinterval()
    m = started(gpio)
    try:
        assert sys.getswitchinterval() == min(before, 0.001)
    finally:
        m.close()
    assert sys.getswitchinterval() == before


# --- scanning slowly when idle ------------------------------------------------------------------

def test_a_quiet_board_is_scanned_at_the_idle_rate(gpio, reed, clock):
    """Nothing changes for IDLE_AFTER_S: from then on a scan every idle_scan_ms (40), a quarter
    of the scans; counted on the virtual clock."""
    from board_driver.hardware.gpio_matrix import IDLE_AFTER_S
    reed.place("a1", "l8")
    m = matrix(gpio, clock, MatrixConfig(ROWS, COLUMNS, settle_us=10, scan_ms=10, idle_scan_ms=40))
    t0 = clock()
    while clock() < t0 + IDLE_AFTER_S:
        m.read(1.0)
    assert m.scans in (IDLE_AFTER_S * 100, IDLE_AFTER_S * 100 + 1)            # full rate until quiet
    n, t1 = m.scans, clock()
    frames = []
    while clock() < t1 + 10:
        frames.append(m.read(1.0))
    assert m.scans - n in (250, 251), f"{m.scans - n} scans in 10 s of a quiet board"
    assert {b.t - a.t for a, b in zip(frames, frames[1:])} == {40}
    assert all(f.closed == {reed.sq("a1"), reed.sq("l8")} for f in frames)


def test_after_a_quiet_spell_the_lift_is_seen_within_the_idle_period_and_the_set_down_at_full_rate(gpio, reed, clock):
    """A move after a quiet spell: its lift (at an instant between two idle scans) is seen up to
    idle_scan_ms later; its set-down is seen within one scan_ms, as on a busy board."""
    reed.place("e2")
    m = matrix(gpio, clock, MatrixConfig(ROWS, COLUMNS, settle_us=10, scan_ms=10, idle_scan_ms=40))
    t0 = clock()
    lift_at, down_at = t0 + 20.0137, t0 + 20.4561            # between scans: the worst case is near a whole period
    clock.at(lift_at, lambda: reed.lift("e2"))
    clock.at(down_at, lambda: reed.place("e4"))
    seen: dict[str, int] = {}
    while "down" not in seen:
        f = m.read(1.0)
        if "lift" not in seen and f.closed == frozenset():
            seen["lift"] = f.t
        if f.closed == {reed.sq("e4")}:
            seen["down"] = f.t
    assert 0 <= seen["lift"] - lift_at * 1000 <= 40
    assert 0 <= seen["down"] - down_at * 1000 <= 10
    before = m.scans
    t = clock()
    while clock() < t + 1:
        m.read(1.0)
    assert m.scans - before in (100, 101)             # full rate for IDLE_AFTER_S after the move


def test_idle_scan_ms_0_scans_at_full_rate_always(gpio, clock):
    m = matrix(gpio, clock, MatrixConfig(ROWS, COLUMNS, settle_us=10, scan_ms=10, idle_scan_ms=0))
    t0 = clock()
    while clock() < t0 + 10:
        m.read(1.0)
    assert m.scans in (1000, 1001)


def test_idle_scan_ms_is_validated():
    base = {"backend": "gpio", "rows": list(ROWS), "columns": list(COLUMNS)}
    assert MatrixConfig.from_section(section(base), 12, 8).idle_scan_ms == 40
    assert MatrixConfig.from_section(section({**base, "idle_scan_ms": 0}), 12, 8).idle_period == 0.01
    assert MatrixConfig.from_section(section({**base, "scan_ms": 50}), 12, 8).idle_period == 0.05
    with pytest.raises(ConfigError, match=r"gpio-12x8.yaml: hardware.sensors.idle_scan_ms: 5: must be 0 \(off\) "
                                          r"or at least scan_ms \(10\)"):
        MatrixConfig.from_section(section({**base, "idle_scan_ms": 5}), 12, 8)
    with pytest.raises(ConfigError, match="hardware.sensors.idle_scan_ms: 2000"):
        MatrixConfig.from_section(section({**base, "idle_scan_ms": 2000}), 12, 8)


def test_a_started_matrix_slows_down_when_quiet_and_speeds_up_on_a_change(gpio, reed, monkeypatch):
    """The scan thread follows the same pace: on a quiet board its scans are one per
    idle_scan_ms instant at most (the fake Pi's own stamps), and a change is queued."""
    from board_driver.hardware import gpio_matrix
    monkeypatch.setattr(gpio_matrix, "IDLE_AFTER_S", 0.05)
    m = started(gpio, MatrixConfig(ROWS, COLUMNS, settle_us=10, scan_ms=10, idle_scan_ms=40))
    try:
        assert m.read(60.0) is not None
        assert gpio.wait_scans(len(gpio.scan_times) + 20)
        quiet = list(gpio.scan_times)[-10:]
        # one scan per instant at most, instants 40 ms apart (a late scan may come sooner after the last)
        assert len(quiet) - 1 <= (quiet[-1] - quiet[0]) / 0.04 + 1, [round(b - a, 4) for a, b in zip(quiet, quiet[1:])]
        reed.place("d5")
        frame = m.read(60.0)
        while frame is not None and frame.closed != {reed.sq("d5")}:
            frame = m.read(60.0)
        assert frame is not None
        assert m.period(frame.t / 1000) == 0.01
    finally:
        m.close()


def test_the_settle_is_waited_only_after_a_row_that_read_a_column_high(reed, clock):
    """Nothing falls after a row that read every column low: no wait there. A set-up board
    (ranks 1, 2, 7, 8) waits before ranks 2, 3 and 8; and still shows no phantom on a slow fall."""
    waits = []
    slow = FakeGPIO(reed, rows=ROWS, columns=COLUMNS, fall_us=23)
    m = GpioMatrix(MatrixConfig(ROWS, COLUMNS), gpio=slow, clock=clock, sleep=clock.sleep,
                   delay_us=lambda us: (waits.append(us), slow.delay_us(us)))
    assert m.scan() == frozenset() and waits == []
    start = set(range(24)) | set(range(72, 96))
    reed.set_pieces(start)
    assert m.scan() == start and waits == [25, 25, 25]
    reed.set_pieces(["e4", "e6"])                     # e5 between them: no phantom either side
    assert m.scan() == {reed.sq("e4"), reed.sq("e6")}
