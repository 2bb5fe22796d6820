"""The same physical game, played on the simulated board, on the fake Pi's GPIO matrix (LEDs
from the Pi) and on the Pico firmware over a pty, through the driver's own session
(debouncer, reconciler, engine, LED scene) and runner: every backend must give the same
board events, the same moves and the same LEDs."""

from __future__ import annotations

import pytest
from fake_gpio import PI_COLUMNS, PI_ROWS, FakeGPIO, ReedBoard
from hw_fakes import FakeStrip, SerialRig, VirtualClock

from board_driver.config import load_variant
from board_driver.devices import STEADY
from board_driver.hardware.gpio_matrix import GpioMatrix, MatrixConfig
from board_driver.hardware.pi_leds import PiLedSink
from board_driver.referee.layout import Layout
from board_driver.referee.runner import Display, pump
from board_driver.referee.session import Session
from board_driver.settings import load_profile, load_settings
from board_driver.sim.board import SimulatedBoard
from board_driver.sim.board import VirtualClock as MsClock
from engine.game import new_game

MOVES = [("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "c4"), ("g8", "f6")]


def script() -> list[tuple[int, str, str]]:
    """(t ms, lift|place, game square): a short Italian game, castling rook second, a capture
    with the victim lifted first, and a contact bounce on d2 that is not a move."""
    out, t = [], 1000
    for a, b in MOVES:
        out += [(t, "lift", a), (t + 300, "place", b)]
        t += 800
    out += [(t, "lift", "d2"), (t + 8, "place", "d2")]                   # a bounce: 8 ms
    t += 500
    out += [(t, "lift", "e1"), (t + 300, "place", "g1"), (t + 700, "lift", "h1"), (t + 1000, "place", "f1")]
    t += 1800
    out += [(t, "lift", "e4"), (t + 300, "lift", "f6"), (t + 600, "place", "e4")]      # Nxe4
    return out


EXPECTED = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "f6e4"]


class Recorder:
    """An LedSink in front of another: keeps every frame it passes on."""

    def __init__(self, sink):
        self.sink, self.frames = sink, []
        self.led_count = sink.led_count

    def show(self, frame):
        self.frames.append(frame)
        self.sink.show(frame)

    def close(self):
        self.sink.close()


class Harness:
    """A backend under the driver's session; subclasses move time and pieces their own way."""

    def __init__(self):
        self.profile = load_profile("sim")
        self.variant = load_variant("orthodox")
        self.layout = Layout.place(self.profile, self.variant.geometry)
        self.start = new_game(self.variant).occupancy()
        self.start_phys = [self.layout.physical(sq) for sq in self.variant.geometry.squares_of(self.start)]

    def begin(self, source, sink, now_ms: int):
        self.source, self.sink = source, Recorder(sink)
        self.session = Session(new_game(self.variant), variant_name="orthodox", layout=self.layout,
                               settings=load_settings(), san_notices=False, now=now_ms)
        self.display = Display(self.sink)
        self.display.update(self.session)

    def phys(self, name: str) -> int:
        return self.layout.physical(self.variant.geometry.parse(name))

    def play(self, events) -> None:
        t0 = self.now()
        for t, kind, square in events:
            self.advance_to(t0 + t)
            self.act(kind, square)
        self.advance_to(t0 + events[-1][0] + 2000)

    def pump(self):
        pump(self.session, self.source, self.display, self.now())

    def shown(self) -> list:
        """What the physical LEDs show, one colour per physical square."""
        raise NotImplementedError


class SimHarness(Harness):
    name = "sim"

    def __init__(self, tmp_path):
        super().__init__()
        self.clock = MsClock(100_000)
        self.board = SimulatedBoard(self.layout, clock=self.clock, closed=self.layout.closed_sensors(self.start))
        self.begin(self.board, self.board, self.clock())

    def now(self):
        return self.clock()

    def advance_to(self, t):
        while self.clock() < t:
            self.clock.advance_to(min(t, self.clock() + 10))
            self.pump()

    def act(self, kind, square):
        getattr(self.board, kind)(square)
        self.pump()

    def shown(self):
        return list(self.board.last_frame.colors)

    def close(self):
        self.board.close()


class GpioHarness(Harness):
    name = "gpio"

    def __init__(self, tmp_path):
        super().__init__()
        self.clock = VirtualClock(100.0)
        self.reed = ReedBoard()
        self.reed.set_pieces(self.start_phys)
        self.gpio = FakeGPIO(self.reed, rows=PI_ROWS, columns=PI_COLUMNS)
        source = GpioMatrix(MatrixConfig(PI_ROWS, PI_COLUMNS), gpio=self.gpio, clock=self.clock,
                            sleep=self.clock.sleep, delay_us=self.gpio.delay_us)
        self.strip = FakeStrip(installed=self.profile.led_order)
        self.leds = PiLedSink(self.strip, order=self.profile.led_order, clock=self.clock)
        self.begin(source, self.leds, self.clock.ms())

    def now(self):
        return self.clock.ms()

    def advance_to(self, t):
        while self.clock.ms() < t:
            self.clock.sleep(min(0.005, (t - self.clock.ms()) / 1000))
            self.pump()
            self.leds.tick()

    def act(self, kind, square):
        getattr(self.reed, kind)(self.phys(square))

    def shown(self):
        return self.strip.squares()

    def close(self):
        self.leds.close()
        self.source.close()


class SerialHarness(Harness):
    name = "serial"

    def __init__(self, tmp_path):
        super().__init__()
        self.clock = VirtualClock(100.0)
        self.reed = ReedBoard()
        self.reed.set_pieces(self.start_phys)
        self.rig = SerialRig(tmp_path, reed=self.reed, clock=self.clock, led_order=self.profile.led_order,
                             quantum_ms=5)
        self.begin(self.rig.source, self.rig.serial, self.clock.ms())

    def now(self):
        return self.clock.ms()

    def advance_to(self, t):
        while self.clock.ms() < t:
            self.rig.step(min(5, t - self.clock.ms()))
            self.pump()

    def act(self, kind, square):
        getattr(self.reed, kind)(self.phys(square))

    def shown(self):
        return self.rig.squares()

    def close(self):
        self.rig.close()


BACKENDS = {"sim": SimHarness, "gpio": GpioHarness, "serial": SerialHarness}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Each backend after the whole script: {name: harness}."""
    out = {}
    for name, cls in BACKENDS.items():
        h = cls(tmp_path_factory.mktemp(name))
        h.t0 = h.now()
        h.play(script())
        out[name] = h
    yield out
    for h in out.values():
        h.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_game_is_read_the_same(played, backend):
    s = played[backend].session
    assert [a.text for a in s.game.history] == EXPECTED
    assert s.verdict.status == "settled"


@pytest.mark.parametrize("backend", ["gpio", "serial"])
def test_board_events_match_the_simulator(played, backend):
    sim, other = played["sim"].session, played[backend].session
    geo = played["sim"].variant.geometry
    kinds = [(geo.name(e.square), e.placed) for e in sim.events]
    assert [(geo.name(e.square), e.placed) for e in other.events] == kinds
    assert ("d2", False) not in kinds                   # the bounce never became an event
    # stamped on each backend's own clock, within a scan and the firmware's debounce of the sim
    ts = [e.t - played["sim"].t0 for e in sim.events]
    to = [e.t - played[backend].t0 for e in other.events]
    assert all(0 <= b - a <= 40 for a, b in zip(ts, to)), list(zip(ts, to))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_leds_show_the_scene(played, backend):
    h = played[backend]
    frame = h.session.leds
    assert frame == played["sim"].session.leds            # the same scene everywhere
    assert h.display.last == frame                        # and it was sent to the backend's LEDs
    shown = h.shown()
    lit = frame.lit()
    assert lit, "the last move should be lit"
    for phys in range(len(frame.colors)):
        if frame.blink[phys] == STEADY:
            assert shown[phys] == frame.colors[phys], (backend, phys)
        else:
            assert shown[phys] in (frame.colors[phys], (0, 0, 0))


@pytest.mark.parametrize("backend", ["gpio", "serial"])
def test_led_frames_match_the_simulator(played, backend):
    sim = played["sim"].sink.frames
    assert len(sim) >= 2 * len(EXPECTED)                  # the scene changed all along the game
    assert played[backend].sink.frames == sim
