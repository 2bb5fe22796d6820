"""The calibration wizard end to end: a person (scripted, looking at the LEDs and moving pieces)
walks a faulty board -- on the fake Pi's GPIO matrix with LEDs from the Pi, and on the Pico
firmware over a pty -- and the wizard finds and names every fault."""

from __future__ import annotations

import re

import pytest
import yaml
from fake_gpio import PI_COLUMNS as COLUMNS
from fake_gpio import PI_ROWS as ROWS
from hw_fakes import FakeStrip, SerialRig

from board_driver.config import configs_dir
from board_driver.hardware.gpio_matrix import GpioMatrix, MatrixConfig
from board_driver.hardware.pi_leds import PiLedSink
from board_driver.maintenance.calibrate import (
    Calibration,
    Wizard,
    analyse,
    led_order_from,
    previous_readings,
    profile_data,
    write_profile,
)
from board_driver.referee.layout import LedOrder
from board_driver.settings import load_profile
from engine.geometry import Geometry

G = Geometry(12, 8)
COLOUR_WORDS = {"RED": (255, 0, 0), "GREEN": (0, 255, 0), "BLUE": (0, 0, 255), "WHITE": (255, 255, 255)}
REVERSED = LedOrder(12, 8, "row-major", "l8")     # the chain was laid from the far corner


def sq(name: str) -> int:
    return G.parse(name)


class Person:
    """Reads what the wizard says, looks at the board's LEDs and moves pieces, a moment later."""

    def __init__(self, reed, clock, look, *, delay: float = 0.05, confirm: bool = True, forgets=()):
        self.reed, self.clock, self.look, self.delay, self.confirm = reed, clock, look, delay, confirm
        self.heard: list[str] = []
        self.forgets = set(forgets)          # pieces left on the board at the empty-board step
        self.cleared = False
        self.unlit: list[str] = []           # squares asked for whose LED was not lit

    def say(self, text: str) -> None:
        self.heard.append(text)
        m = re.match(r"Put a piece on ([a-l]\d)( \(the lit square\))?\.", text)
        if m:
            name = m.group(1)
            if m.group(2):
                lit = [i for i, c in enumerate(self.look()) if c != (0, 0, 0)]
                if lit != [sq(name)]:
                    self.unlit.append(name)
            self.clock.after(self.delay, lambda: self.reed.place(name))
            return
        m = re.match(r"Lift the piece from ([a-l]\d)\.", text)
        if m:
            self.clock.after(self.delay, lambda n=m.group(1): self.reed.lift(n))
        m = re.match(r"Put pieces on ([a-l]\d), ([a-l]\d) and ([a-l]\d)\.", text)
        if m:
            self.clock.after(self.delay, lambda ns=m.groups(): self.reed.place(*ns))
        m = re.match(r"Lift the pieces from ([a-l]\d), ([a-l]\d) and ([a-l]\d)\.", text)
        if m:
            self.clock.after(self.delay, lambda ns=m.groups(): self.reed.lift(*ns))

    def ask(self, text: str) -> str:
        self.heard.append(text)
        if text.startswith("Take every piece off"):
            self.reed.set_pieces(self.forgets)
            return ""
        if text.startswith("Closed with the board empty:"):
            if self.forgets and not self.cleared:
                self.cleared = True
                self.reed.clear()
                return ""
            return "stuck"
        m = re.search(r"Which square is (RED|GREEN|BLUE|WHITE)\?", text)
        if m:
            shown = self.look()
            hits = [i for i, c in enumerate(shown) if c == COLOUR_WORDS[m.group(1)]]
            return G.name(hits[0]) if hits else "none"
        m = re.search(r"Now the corners should be lit: (.*)\. Are they", text)
        if m:
            shown = self.look()
            ok = all(shown[sq(name)] == COLOUR_WORDS[word.upper()]
                     for name, word in (p.split() for p in m.group(1).split(", ")))
            return "y" if ok and self.confirm else "n"
        m = re.match(r"No sensor responded on ([a-l]\d)", text)
        if m:
            self.reed.lift(m.group(1))
            return "s"
        raise AssertionError(f"the person does not know what to answer to {text!r}")


def faulty(reed):
    reed.swap("c2", "d2")       # two sensors' wires crossed
    reed.kill("h6")             # a dead reed switch


def check_found_every_fault(cal: Calibration, person: Person):
    kinds = sorted(p.kind for p in cal.problems)
    assert kinds == ["dead", "leds", "swapped"], [str(p) for p in cal.problems]
    (swap,) = cal.of_kind("swapped")
    assert swap.fixed and set(swap.squares) == {sq("c2"), sq("d2")}
    assert "c2 and d2 are swapped" in swap.text
    (dead,) = cal.of_kind("dead")
    assert not dead.fixed and dead.squares == (sq("h6"),) and dead.text.startswith("h6: no sensor responds")
    (leds,) = cal.of_kind("leds")
    assert leds.fixed and "reversed" in leds.text and "from l8" in leds.text
    assert cal.led_order == REVERSED
    # the map reads c2's piece through d2's sensor and back
    assert cal.sensor_map[sq("c2")] == sq("d2") and cal.sensor_map[sq("d2")] == sq("c2")
    assert sorted(cal.sensor_map) == list(range(96))
    assert not cal.ok
    report = "\n".join(cal.report())
    assert "REPAIR: h6: no sensor responds" in report and "c2 and d2 are swapped" in report
    # while walking, every square was lit where the person looked for it (the order found was used)
    assert person.unlit == []
    assert any("No sensor responded on h6" in h for h in person.heard)


def test_wizard_on_the_gpio_matrix_with_pi_leds(gpio, reed, clock):
    faulty(reed)
    strip = FakeStrip(installed=REVERSED)
    leds = PiLedSink(strip, order=LedOrder(), clock=clock)
    source = GpioMatrix(MatrixConfig(ROWS, COLUMNS), gpio=gpio, clock=clock, sleep=clock.sleep,
                        delay_us=gpio.delay_us)
    person = Person(reed, clock, strip.squares)
    wizard = Wizard(source, person, leds=leds, led_order=LedOrder(), clock=clock, settle=0.1, square_timeout=2.0)
    cal = wizard.run()
    check_found_every_fault(cal, person)
    assert len(cal.readings) == 96


@pytest.mark.slow
def test_wizard_on_the_pico_firmware_over_a_pty(tmp_path, reed, clock):
    faulty(reed)
    rig = SerialRig(tmp_path, reed=reed, clock=clock, led_order=LedOrder(), installed=REVERSED, quantum_ms=5)
    try:
        person = Person(reed, clock, rig.squares)
        wizard = Wizard(rig.source, person, leds=rig.serial, led_order=LedOrder(), clock=clock, settle=0.1,
                        square_timeout=1.0)
        cal = wizard.run()
        check_found_every_fault(cal, person)
        assert rig.serial.health().crc_errors == 0
    finally:
        rig.close()


def test_stuck_and_doubled_sensors_are_named(gpio, reed, clock):
    reed.stick("k7")
    reed.double("e4", "f4")                    # f4 is wired onto e4's sensor
    source = GpioMatrix(MatrixConfig(ROWS, COLUMNS), gpio=gpio, clock=clock, sleep=clock.sleep,
                        delay_us=gpio.delay_us)
    person = Person(reed, clock, lambda: [(0, 0, 0)] * 96)
    wizard = Wizard(source, person, clock=clock, settle=0.1, square_timeout=2.0)
    cal = wizard.run(squares=[sq(n) for n in ("e4", "f4", "k7", "a1")])
    assert any(h.startswith("Closed with the board empty (stuck): sensor 82 (k7)") for h in person.heard)
    assert any(h.startswith("Sensor 40 already answered for e4") for h in person.heard)
    by_kind = {p.kind: p for p in cal.problems}
    assert set(by_kind) == {"stuck", "doubled", "dead"}
    assert "sensor 40 (e4's) responds on e4 and f4" in by_kind["doubled"].text
    assert "sensor 41 (f4's), meant for f4, never responds" in by_kind["doubled"].text
    assert by_kind["dead"].text == "k7: no sensor responds (its sensor 82 is stuck closed)"
    assert "Put a piece on e4." in person.heard          # no LEDs: the square is named only


def test_a_person_who_does_not_confirm_the_leds_gets_an_led_problem(gpio, reed, clock):
    strip = FakeStrip(installed=LedOrder())
    leds = PiLedSink(strip, clock=clock)
    source = GpioMatrix(MatrixConfig(ROWS, COLUMNS), gpio=gpio, clock=clock, sleep=clock.sleep,
                        delay_us=gpio.delay_us)
    person = Person(reed, clock, strip.squares, confirm=False)
    cal = Wizard(source, person, leds=leds, clock=clock, settle=0.1).run(squares=[0])
    (p,) = cal.problems
    assert p.kind == "leds" and not p.fixed and cal.led_order is None
    assert "Put a piece on a1." in person.heard           # LEDs not trusted: squares are named


def test_rerun_of_one_square_after_a_repair(tmp_path, gpio, reed, clock):
    # first walk: h6 dead. Repair it, re-run h6 only: the file says the board is fine.
    reed.kill("h6")
    source = GpioMatrix(MatrixConfig(ROWS, COLUMNS), gpio=gpio, clock=clock, sleep=clock.sleep,
                        delay_us=gpio.delay_us)
    person = Person(reed, clock, lambda: [(0, 0, 0)] * 96)
    cal = Wizard(source, person, clock=clock, settle=0.05, square_timeout=1.0).run(check_leds=False)
    assert [p.kind for p in cal.problems] == ["dead"]
    base = yaml.safe_load(open(configs_dir() / "boards" / "sim.yaml"))
    out = tmp_path / "board.yaml"
    write_profile(out, profile_data(base, cal, when="2024-05-01T10:00:00"), cal)
    data = yaml.safe_load(out.read_text())
    assert data["hardware"]["calibration"]["readings"]["h6"] == []
    reed.wiring[sq("h6")] = (sq("h6"),)           # the new reed switch
    previous, _ = previous_readings(data, str(out), 12, 8)
    assert len(previous) == 96
    cal2 = Wizard(source, person, clock=clock, settle=0.05).run([sq("h6")], previous=previous, check_leds=False)
    assert cal2.ok and cal2.problems == () and len(cal2.readings) == 96
    write_profile(out, profile_data(data, cal2), cal2)
    text = out.read_text()
    assert "The board is ready to play." in text
    assert yaml.safe_load(text)["sensors"] == "identity"


# --- the pure part ------------------------------------------------------------------------------

def identity_readings(**changes):
    r = {s: frozenset({s}) for s in range(96)}
    for name, sensors in changes.items():
        r[sq(name)] = frozenset(sensors)
    return r


def test_analyse_builds_a_permutation_and_names_problems():
    r = identity_readings(a1={5}, f1={0}, b1={7}, h1={2}, c1={1})      # a swap and a 3-cycle
    cal = analyse(12, 8, r)
    assert sorted(cal.sensor_map) == list(range(96))
    assert [p.kind for p in cal.problems] == ["swapped", "moved", "moved", "moved"]
    assert cal.problems[0].text.startswith("a1 and f1 are swapped")
    assert cal.ok
    assert cal.sensor_map[5] == sq("a1") and cal.sensor_map[7] == sq("b1")


def test_analyse_short_between_two_sensors():
    cal = analyse(12, 8, identity_readings(c3={26, 29}))
    (p,) = cal.problems
    assert p.kind == "multiple" and not p.fixed and "sensor 26 (c3's) and sensor 29 (f3's) close together" in p.text
    # the same with the neighbouring square's sensor: the magnet reaches its reed
    (p,) = analyse(12, 8, identity_readings(c3={26, 27})).problems
    assert p.kind == "neighbour" and p.squares == (sq("c3"), sq("d3"))


def test_led_order_from_the_three_probe_squares():
    for order in ("row-major", "serpentine"):
        for first in ("a1", "l1", "a8", "l8"):
            lo = LedOrder(12, 8, order, first)
            where = [next(p for p in range(96) if lo.chain_index(p) == i) for i in (0, 1, 12)]
            assert led_order_from(12, 8, where) == lo
    assert led_order_from(12, 8, [sq("a1"), sq("a2"), sq("b1")]) is None      # runs along files


def test_written_profile_loads_as_a_board_profile(tmp_path):
    cal = analyse(12, 8, identity_readings(a1={1}, b1={0}), led_order=REVERSED)
    base = yaml.safe_load(open(configs_dir() / "boards" / "sim.yaml"))
    out = tmp_path / "calibrated.yaml"
    write_profile(out, profile_data(base, cal), cal)
    profile = load_profile(str(out))                     # as the driver loads a board
    assert profile.sensor_map[0] == sq("b1") and profile.sensor_map[1] == sq("a1")
    assert profile.hardware["calibration"]["readings"]["a1"] == [1]
    assert profile.led_order == REVERSED
    assert not list(tmp_path.glob("*.tmp"))


def test_previous_readings_are_validated(tmp_path):
    bad = {"hardware": {"calibration": {"readings": {"z9": [1]}}}}
    with pytest.raises(Exception, match="board.yaml: hardware.calibration.readings.z9"):
        previous_readings(bad, "board.yaml", 12, 8)
    bad = {"hardware": {"calibration": {"readings": {"a1": [400]}}}}
    with pytest.raises(Exception, match=r"readings.a1: \[400\]: must be a list of sensor indexes 0..95"):
        previous_readings(bad, "board.yaml", 12, 8)


# --- what one piece at a time cannot show; reed placement -----------------------------------------

def wizard_on_gpio(gpio, reed, clock, person=None, **kw):
    source = GpioMatrix(MatrixConfig(ROWS, COLUMNS), gpio=gpio, clock=clock, sleep=clock.sleep,
                        delay_us=gpio.delay_us)
    person = person or Person(reed, clock, lambda: [(0, 0, 0)] * 96)
    return Wizard(source, person, clock=clock, settle=0.05, square_timeout=1.0, **kw), person


def test_a_piece_left_on_the_board_is_cleared_and_looked_at_again(gpio, reed, clock):
    person = Person(reed, clock, lambda: [(0, 0, 0)] * 96, forgets={"d5"})
    wizard, _ = wizard_on_gpio(gpio, reed, clock, person)
    cal = wizard.run(squares=[sq("a1")], check_leds=False)
    assert any(h.startswith("Closed with the board empty: sensor 52 (e5)") is False and
               h.startswith("Closed with the board empty: sensor 51 (d5)") for h in person.heard)
    assert cal.stuck == frozenset() and cal.problems == ()


def test_a_missing_diode_is_found_by_the_rectangle_test(gpio, reed, clock):
    reed.no_diode("c3")
    wizard, person = wizard_on_gpio(gpio, reed, clock)
    cal = wizard.run(squares=[sq(n) for n in ("c3", "d3", "c4", "d4")], check_leds=False)
    assert cal.problems == ()                          # one piece at a time: nothing to see
    cal = wizard.run(squares=[], previous=dict(cal.readings), check_leds=False,
                     rectangles=[sq("c3"), sq("f6")])
    (p,) = cal.problems
    assert p.kind == "diode" and not p.fixed and p.squares == (sq("c3"), sq("d4"))
    assert "the empty d4 reads occupied: the diode of c3's reed switch is missing or shorted" in p.text
    assert "Put pieces on c3, d3 and c4." in person.heard and "Put pieces on f6, g6 and f7." in person.heard
    assert wizard.rectangle(sq("l8")) == (sq("k8"), sq("l7"), sq("k7"))   # at the corner: inwards


def test_a_magnet_reaching_the_neighbouring_reed_is_not_called_a_short(gpio, reed, clock):
    reed.reach("c3", "d3")
    wizard, _ = wizard_on_gpio(gpio, reed, clock)
    cal = wizard.run(squares=[sq(n) for n in ("c3", "d3", "e3")], check_leds=False)
    (p,) = cal.problems
    assert p.kind == "neighbour" and not p.fixed
    assert p.text.startswith("c3: a piece there also closes d3's reed (sensor 27 (d3's))")
    assert "not a wiring short" in p.text
    assert cal.sensor_map[sq("c3")] == sq("c3") and cal.sensor_map[sq("d3")] == sq("d3")
    # two sensors far apart are still a short
    assert analyse(12, 8, identity_readings(c3={26, 60})).problems[0].kind == "multiple"


def test_a_square_that_reads_empty_points_at_the_reed_position_first(gpio, reed, clock):
    reed.kill("b2")                        # e.g. the magnet centred over a flat reed: its dead zone
    wizard, person = wizard_on_gpio(gpio, reed, clock)
    cal = wizard.run(squares=[sq("b2")], check_leds=False)
    (p,) = cal.problems
    assert p.kind == "dead" and "check the reed's position first" in p.text
    assert any("check the reed's position" in h for h in person.heard if h.startswith("No sensor responded on b2"))


@pytest.mark.parametrize("files,ranks", [(12, 8), (8, 8), (16, 8), (10, 10)])
def test_every_led_order_is_found_from_the_probes(files, ranks):
    from board_driver.maintenance.calibrate import LED_ORDERS, probe_indexes
    probes = probe_indexes(files, ranks)
    for order in LED_ORDERS:
        for first in ("a1", "l1", "a8", "l8"):
            lo = LedOrder(files, ranks, order, first)
            n = files * ranks
            where = [next(p for p in range(n) if lo.chain_index(p) == i) for i in probes]
            assert led_order_from(files, ranks, where) == lo, (order, first)


def test_the_wizard_finds_a_chain_laid_along_the_files(gpio, reed, clock):
    installed = LedOrder(12, 8, "column-serpentine", "l1")   # twelve 8-LED strips, one per file
    strip = FakeStrip(installed=installed)
    leds = PiLedSink(strip, order=LedOrder(), clock=clock)
    person = Person(reed, clock, strip.squares)
    wizard, _ = wizard_on_gpio(gpio, reed, clock, person, leds=leds, led_order=LedOrder())
    cal = wizard.run(squares=[sq("a1"), sq("e5")])
    assert cal.led_order == installed and person.unlit == []
    (p,) = cal.problems
    assert p.kind == "leds" and p.fixed and "column-serpentine from l1" in p.text
