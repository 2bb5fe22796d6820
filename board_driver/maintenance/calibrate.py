"""Calibration: which sensor watches which square, and which way the LED chain runs.

``fairyboard calibrate`` walks a person over the board. It first asks for an empty board
(any sensor closed now is *stuck*), then lights three LEDs of the chain by their chain index
and asks which squares they are on (that gives the chain's first corner and whether it is
along the ranks or the files, straight or serpentine; a pattern lit through the result is then
confirmed), then lights
(or, without LEDs, names) each square in turn and asks for a piece there, recording which
sensor closes. From the readings, :func:`analyse` builds the sensor -> square map and says
what is wrong, by name:

========  =====  ===================================================================
kind      fixed  what the person is told
========  =====  ===================================================================
stuck     no     a sensor is closed with the board empty (stuck reed, shorted wires)
dead      no     no sensor responds on a square: first the reed's position (a magnet
                 centred over a flat reed leaves it open), then a dead reed, wire or diode
doubled   no     one sensor responds on two squares (their wires joined)
multiple  no     one square closes two sensors at once (a short between them)
neighbour no     a piece closes its own reed and a neighbouring square's (the magnet
                 reaches the neighbour's reed: move that reed, or use a weaker magnet)
diode     no     the three-piece rectangle test shows a phantom piece on the fourth
                 corner: the middle corner's diode is missing or shorted
swapped   yes    two squares' sensors are crossed; the map corrects it
moved     yes    a square is read by another square's sensor; the map corrects it
leds      yes/no the LED chain runs another way than the profile says (corrected), or
                 no order explains it / the person did not confirm it (not fixed)
========  =====  ===================================================================

The result is written as a complete board profile (the profile the calibration started
from, with ``sensors:`` and ``leds:`` replaced and the readings kept under
``hardware.calibration``), which the service then loads. ``--square e4`` re-runs one square
and re-analyses with the readings kept in the file.

:func:`analyse`, :func:`led_order_from` and the file functions are pure. :class:`Wizard`
talks to the person through a :class:`Prompter` and to the board through a
:class:`~board_driver.devices.SensorSource` and an optional LED sink; its clock is injected.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence, runtime_checkable

import yaml

from board_driver.devices import DARK, RGB, LedImage, SensorSource
from board_driver.errors import BoardDriverError, ConfigError
from board_driver.referee.layout import LedOrder
from engine.geometry import Geometry

RED, GREEN, BLUE, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)
CORNERS = ("a1", "l1", "a8", "l8")


class CalibrationAborted(BoardDriverError, RuntimeError):
    """The person quit the calibration."""


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with the board, said so that a person can find it."""

    kind: str                       # stuck | dead | doubled | multiple | swapped | moved | leds
    fixed: bool                     # True: the new map/order corrects it; False: repair the board
    text: str
    squares: tuple[int, ...] = ()
    sensors: tuple[int, ...] = ()

    def __str__(self) -> str:
        return ("fixed by the map: " if self.fixed else "REPAIR: ") + self.text


@dataclass(frozen=True, slots=True)
class Calibration:
    """The outcome: the sensor map, the LED order and the problems found."""

    files: int
    ranks: int
    sensor_map: tuple[int, ...]                         # sensor index -> physical square
    readings: tuple[tuple[int, frozenset[int]], ...]    # (square, sensors that closed), by square
    stuck: frozenset[int] = frozenset()
    led_order: LedOrder | None = None
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        """True when nothing needs repairing (the map corrects everything found)."""
        return all(p.fixed for p in self.problems)

    def of_kind(self, kind: str) -> list[Problem]:
        return [p for p in self.problems if p.kind == kind]

    def square_names(self) -> list[str]:
        g = Geometry(self.files, self.ranks)
        return [g.name(sq) for sq in self.sensor_map]

    def report(self) -> list[str]:
        walked = len(self.readings)
        lines = [f"{walked} square{'s' * (walked != 1)} checked, {len(self.problems)} problem"
                 f"{'s' * (len(self.problems) != 1)} found."]
        lines += [f"  {p}" for p in self.problems]
        if self.led_order is not None:
            lines.append(f"LED chain: {self.led_order.order} from {self.led_order.first}.")
        lines.append("The board is ready to play." if self.ok else
                     "Repair the problems marked REPAIR, then run `fairyboard calibrate --square SQUARE` for each.")
        return lines


def _name(g: Geometry, sq: int) -> str:
    return g.name(sq)


def analyse(files: int, ranks: int, readings: Mapping[int, Iterable[int]], *,
            stuck: Iterable[int] = (), led_order: LedOrder | None = None,
            led_problems: Sequence[Problem] = ()) -> Calibration:
    """Build the sensor map from the readings (square -> sensors that closed with a piece
    on it, stuck sensors left out) and name every problem. The wiring guide puts sensor
    ``rank * files + file`` under each square; a reading elsewhere is a crossed wire."""
    g = Geometry(files, ranks)
    n = files * ranks
    stuck = frozenset(stuck)
    reads = {sq: frozenset(s) - stuck for sq, s in readings.items()}
    problems: list[Problem] = []

    def sname(s: int) -> str:
        return f"sensor {s} ({g.name(s)}'s)" if 0 <= s < n else f"sensor {s}"

    for s in sorted(stuck):
        problems.append(Problem("stuck", False, f"{sname(s)} is closed with the board empty: a stuck reed "
                                              f"switch or a short on its wires", (s,), (s,)))
    # a square closing several sensors (a short) counts by its own sensor when that is among them
    primary = {sq: (frozenset({sq}) if len(s) > 1 and sq in s else s) for sq, s in reads.items()}
    by_sensor: dict[int, list[int]] = defaultdict(list)
    for sq in sorted(primary):
        for s in primary[sq]:
            by_sensor[s].append(sq)
    heard = set(by_sensor)
    def owner(s: int, besides: int) -> int | None:
        """The square a sensor belongs to: the square that alone closed it, else its own."""
        others = [q for q in by_sensor.get(s, ()) if q != besides]
        if others:
            return others[0]
        return s if 0 <= s < n and s != besides else None

    def neighbours(a: int, b: int) -> bool:
        return a != b and max(abs(a % files - b % files), abs(a // files - b // files)) == 1

    for sq in sorted(reads):
        sensors = reads[sq]
        if not sensors:
            why = (f"its sensor {sq} is stuck closed" if sq in stuck else
                   "check the reed's position first: a magnet centred over a flat reed switch leaves it "
                   "open (WIRING.md, the reed switches); then the reed switch, its diode and wires")
            problems.append(Problem("dead", False, f"{g.name(sq)}: no sensor responds ({why})", (sq,), (sq,)))
        elif len(sensors) > 1:
            own = sq if sq in sensors else None
            extra = sorted(s for s in sensors if s != own)
            owners = [owner(s, sq) for s in extra]
            if own is not None and all(o is not None and neighbours(sq, o) for o in owners):
                names = " and ".join(f"{g.name(o)}'s reed ({sname(s)})" for s, o in zip(extra, owners) if o is not None)
                problems.append(Problem(
                    "neighbour", False,
                    f"{g.name(sq)}: a piece there also closes {names}: the magnet reaches the neighbouring "
                    f"reed (not a wiring short) -- move that reed further from {g.name(sq)}, turn it, or use "
                    f"a weaker magnet (WIRING.md, the reed switches)",
                    (sq,) + tuple(o for o in owners if o is not None), tuple(sorted(sensors))))
                continue
            names = " and ".join(sname(s) for s in sorted(sensors))
            problems.append(Problem("multiple", False, f"{g.name(sq)}: {names} close together: a short between "
                                                        f"their wires", (sq,), tuple(sorted(sensors))))
    for s in sorted(by_sensor):
        sqs = by_sensor[s]
        if len(sqs) > 1:
            silent = [q for q in sqs if q != s and q not in heard and q not in stuck]
            mute = "".join(f"; {sname(q)}, meant for {g.name(q)}, never responds" for q in silent)
            problems.append(Problem("doubled", False, f"{sname(s)} responds on {' and '.join(g.name(q) for q in sqs)}: "
                                                      f"two squares on one sensor (their wires are joined){mute}",
                                    tuple(sqs), (s,)))
    # unique readings become the map
    assign: dict[int, int] = {}
    for sq, sensors in reads.items():
        if len(sensors) == 1:
            (s,) = sensors
            if len(by_sensor[s]) == 1:
                assign[sq] = s
        elif len(sensors) > 1 and sq in sensors and len(by_sensor[sq]) == 1:
            assign[sq] = sq
    for sq in sorted(assign):
        s = assign[sq]
        if s == sq:
            continue
        if assign.get(s) == sq:
            if sq < s:
                problems.append(Problem("swapped", True, f"{g.name(sq)} and {g.name(s)} are swapped: {sname(sq)} "
                                                         f"responds on {g.name(s)} and {sname(s)} on {g.name(sq)} "
                                                         f"(crossed wires)", (sq, s), (s, sq)))
        else:
            problems.append(Problem("moved", True, f"{g.name(sq)} is read by {sname(s)}", (sq,), (s,)))
    problems.extend(led_problems)
    sensor_map = [-1] * n
    for sq, s in assign.items():
        if 0 <= s < n:
            sensor_map[s] = sq
    used = set(sensor_map)
    for s in range(n):              # sensors without a reading keep their own square if it is free
        if sensor_map[s] < 0 and s not in used:
            sensor_map[s] = s
            used.add(s)
    free = iter(sq for sq in range(n) if sq not in used)
    for s in range(n):
        if sensor_map[s] < 0:
            sensor_map[s] = next(free)
    return Calibration(files, ranks, tuple(sensor_map), tuple(sorted(reads.items())), stuck, led_order,
                       tuple(problems))


# --- LEDs ---------------------------------------------------------------------------------------

LED_ORDERS = ("row-major", "serpentine", "column-major", "column-serpentine")
PROBE_WORDS = ("RED", "GREEN", "BLUE", "WHITE")


def _squares_of(order: LedOrder, indexes: Sequence[int]) -> tuple[int, ...]:
    where = {order.chain_index(p): p for p in range(order.files * order.ranks)}
    return tuple(where[i] for i in indexes)


def probe_indexes(files: int, ranks: int = 8) -> tuple[int, ...]:
    """The chain indexes lit to find the order: the first LED (the corner), the second (along a
    rank or along a file), and the first of the second rank (row orders) -- which on most
    boards also tells the column orders apart; where it does not, the first of the second file."""
    for probes in ((0, 1, files), (0, 1, files, ranks)):
        if max(probes) >= files * ranks:
            continue
        seen = {_squares_of(LedOrder(files, ranks, o, c), probes) for o in LED_ORDERS for c in CORNERS}
        if len(seen) == len(LED_ORDERS) * len(CORNERS):
            return probes
    return (0, 1, files)


def led_order_from(files: int, ranks: int, squares: Sequence[int]) -> LedOrder | None:
    """The LED order under which the probe LEDs (:func:`probe_indexes`) sit on ``squares``."""
    probes = probe_indexes(files, ranks)
    for order in LED_ORDERS:
        for first in CORNERS:
            lo = LedOrder(files, ranks, order, first)
            if all(lo.chain_index(sq) == i for sq, i in zip(squares, probes)):
                return lo
    return None


def describe_order_change(old: LedOrder, new: LedOrder) -> str:
    n = old.files * old.ranks
    if all(new.chain_index(p) == n - 1 - old.chain_index(p) for p in range(n)):
        how = "reversed: it"
    else:
        how = "it"
    return (f"the LED chain is {how} runs {new.order} from {new.first}, not {old.order} from {old.first} "
            f"as the profile said")


# --- the file -----------------------------------------------------------------------------------

def profile_data(base: Mapping[str, Any], cal: Calibration, *, when: str | None = None) -> dict:
    """The board profile to write: ``base`` with the calibrated sensors and LED order."""
    g = Geometry(cal.files, cal.ranks)
    out = dict(base)
    names = cal.square_names()
    out["sensors"] = "identity" if list(cal.sensor_map) == list(range(len(cal.sensor_map))) else names
    if cal.led_order is not None:
        leds = dict(base.get("leds") or {})
        leds.update(order=cal.led_order.order, first=cal.led_order.first)
        out["leds"] = leds
    hw = dict(base.get("hardware") or {})
    record: dict[str, Any] = {}
    if when:
        record["date"] = when
    record["stuck"] = [g.name(s) for s in sorted(cal.stuck)]
    record["readings"] = {g.name(sq): sorted(s) for sq, s in cal.readings}
    record["problems"] = [str(p) for p in cal.problems]
    hw["calibration"] = record
    out["hardware"] = hw
    return out


def write_profile(path: Path, data: Mapping[str, Any], cal: Calibration) -> None:
    """Write the calibrated profile atomically (a cut-off write leaves the old file)."""
    path = Path(path)
    head = ["# Board profile written by `fairyboard calibrate`.",
            "# Re-check one square with `fairyboard calibrate --board THIS_FILE --square e4`."]
    head += [f"# {line}" for line in cal.report()]
    text = "\n".join(head) + "\n" + yaml.safe_dump(dict(data), sort_keys=False, width=96, default_flow_style=None)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def previous_readings(data: Mapping[str, Any], source: str, files: int, ranks: int
                      ) -> tuple[dict[int, frozenset[int]], frozenset[int]]:
    """The readings and stuck sensors kept in a calibrated profile (empty if none)."""
    g = Geometry(files, ranks)
    hw = data.get("hardware") or {}
    rec = hw.get("calibration") if isinstance(hw, Mapping) else None
    if not rec:
        return {}, frozenset()
    if not isinstance(rec, Mapping):
        raise ConfigError(f"{source}: hardware.calibration: {rec!r}: must be a mapping")
    readings: dict[int, frozenset[int]] = {}
    raw = rec.get("readings") or {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: hardware.calibration.readings: must map squares to sensor lists")
    for name, sensors in raw.items():
        try:
            sq = g.parse(str(name))
        except ValueError as exc:
            raise ConfigError(f"{source}: hardware.calibration.readings.{name}: {exc}") from None
        if not isinstance(sensors, list) or not all(isinstance(s, int) and not isinstance(s, bool)
                                                    and 0 <= s < files * ranks for s in sensors):
            raise ConfigError(f"{source}: hardware.calibration.readings.{name}: {sensors!r}: "
                              f"must be a list of sensor indexes 0..{files * ranks - 1}")
        readings[sq] = frozenset(sensors)
    stuck = set()
    for name in rec.get("stuck") or []:
        try:
            stuck.add(g.parse(str(name)))
        except ValueError as exc:
            raise ConfigError(f"{source}: hardware.calibration.stuck: {name!r}: {exc}") from None
    return readings, frozenset(stuck)


# --- the wizard -----------------------------------------------------------------------------------

class Prompter(Protocol):
    """How the wizard talks to the person: a console, or a script in the tests."""

    def say(self, text: str) -> None: ...

    def ask(self, text: str) -> str: ...


@runtime_checkable
class ChainLeds(Protocol):
    """An LED sink that can also light LEDs by chain index (PiLedSink, SerialBoard)."""

    led_count: int

    def show(self, frame: LedImage) -> None: ...

    def show_chain(self, colours: Sequence[RGB]) -> None: ...


@dataclass
class Wizard:
    """Walks a person through the board (see the module docstring)."""

    source: SensorSource
    ui: Prompter
    files: int = 12
    ranks: int = 8
    leds: ChainLeds | None = None
    led_order: LedOrder = field(default_factory=LedOrder)
    clock: Callable[[], float] = time.monotonic
    settle: float = 0.3            # a reading counts once it has held this long (s)
    square_timeout: float = 30.0   # how long to wait for a piece (s)
    closed: frozenset[int] | None = None

    def __post_init__(self) -> None:
        self.geometry = Geometry(self.files, self.ranks)
        self.leds_work = self.leds is not None

    # -- sensors --
    def _first_frame(self) -> None:
        end = self.clock() + 5.0
        while self.closed is None:
            if self.clock() >= end:
                raise BoardDriverError("no sensor frames from the board in 5 s: is it connected?")
            f = self.source.read(0.1)
            if f is not None:
                self.closed = f.closed

    def watch(self, want: Callable[[frozenset[int]], bool], timeout: float) -> frozenset[int] | None:
        """Read frames until ``want(closed)`` has held for :attr:`settle`; None after ``timeout``."""
        self._first_frame()
        assert self.closed is not None      # _first_frame waits for one (or raises)
        start = self.clock()
        since = start if want(self.closed) else None
        while True:
            now = self.clock()
            if since is not None and now - since >= self.settle:
                return self.closed
            if now - start >= timeout:
                return None
            left = (since + self.settle if since is not None else start + timeout) - now
            f = self.source.read(min(0.05, max(0.001, left)))
            if f is not None and f.closed != self.closed:
                self.closed = f.closed
                since = self.clock() if want(f.closed) else None

    def pause(self, seconds: float) -> None:
        """Let ``seconds`` pass reading frames (an LED frame sent over a link needs a moment)."""
        end = self.clock() + seconds
        while self.clock() < end:
            f = self.source.read(min(0.05, max(0.001, end - self.clock())))
            if f is not None:
                self.closed = f.closed

    def empty_board(self) -> frozenset[int]:
        """Ask for an empty board; the sensors still closed are stuck -- unless a piece was
        left there: the person may clear the board and have it looked at again."""
        self.ui.ask("Take every piece off the board, then press Enter.")
        self._first_frame()
        while True:
            got = self.watch(lambda c: True, self.settle * 2)
            stuck = got if got is not None else self.closed
            if not stuck:
                return frozenset()
            names = ", ".join(f"sensor {s} ({self.geometry.name(s)})" for s in sorted(stuck))
            ans = self.ui.ask(f"Closed with the board empty: {names}. Is a piece still there? Clear it and "
                              f"press Enter to look again, or answer 'stuck' to go on with them marked stuck.")
            if ans.strip().lower().startswith("s"):
                self.ui.say(f"Closed with the board empty (stuck): {names}.")
                return frozenset(stuck)

    # -- LEDs --
    def _ask_square(self, text: str) -> int | None:
        while True:
            ans = self.ui.ask(text).strip().lower()
            if ans in ("none", "n", "no", "-", ""):
                return None
            try:
                return self.geometry.parse(ans)
            except ValueError:
                self.ui.say(f"{ans!r} is not a square of this board (a1..{self.geometry.name(self.files * self.ranks - 1)}).")

    def check_leds(self) -> tuple[LedOrder | None, list[Problem]]:
        """Find the chain's order by asking where three LEDs are, then confirm it with a pattern."""
        if self.leds is None:
            return None, []
        n = self.files * self.ranks
        chain = [DARK] * n
        idx = probe_indexes(self.files, self.ranks)
        colours = (RED, GREEN, BLUE, WHITE)
        for i, c in zip(idx, colours):
            chain[i] = c
        self.leds.show_chain(chain)
        self.pause(0.1)
        answers = []
        count = ("Three", "Four")[len(idx) - 3]
        for word in PROBE_WORDS[:len(idx)]:
            sq = self._ask_square(f"{count} LEDs are lit. Which square is {word}? (its name, e.g. a1; "
                                  f"'none' if no LED is lit)")
            if sq is None:
                self.leds_work = False
                self.leds.show_chain([DARK] * n)
                return None, [Problem("leds", False, "no LED lights up where asked: check the LED power, the data "
                                                     "line and its level shifter; squares are named instead")]
            answers.append(sq)
        order = led_order_from(self.files, self.ranks, answers)
        if order is None:
            g = self.geometry
            self.leds_work = False
            return None, [Problem("leds", False, f"LEDs {', '.join(map(str, idx))} of the chain are on "
                                                 f"{', '.join(g.name(s) for s in answers)}: no order along "
                                                 f"the ranks or the files, straight or serpentine, from a "
                                                 f"corner puts them there")]
        frame = [DARK] * n
        marks = {"a1": RED, self.geometry.name(self.files - 1): GREEN,
                 self.geometry.name(n - self.files): BLUE, self.geometry.name(n - 1): WHITE}
        for name, c in marks.items():
            frame[self.geometry.parse(name)] = c
        self.leds.show_chain(order.to_chain(tuple(frame)))
        self.pause(0.1)
        corners = ", ".join(f"{name} {word}" for name, word in zip(marks, ("red", "green", "blue", "white")))
        ok = self.ui.ask(f"Now the corners should be lit: {corners}. Are they? [y/n]").strip().lower()
        self.leds.show_chain([DARK] * n)
        problems = []
        if not ok.startswith("y"):
            self.leds_work = False
            return None, [Problem("leds", False, f"the LED chain does not run {order.order} from {order.first} "
                                                 f"after all: check for a break or a skipped LED")]
        if order != self.led_order:
            problems.append(Problem("leds", True, describe_order_change(self.led_order, order)))
        self.led_order = order
        return order, problems

    def _light(self, sq: int | None, colour: RGB = WHITE) -> None:
        if not self.leds_work or self.leds is None:
            return
        n = self.files * self.ranks
        colours = [DARK] * n
        if sq is not None:
            colours[sq] = colour
        # through the order found: the sink's own order may be the old one
        self.leds.show_chain(self.led_order.to_chain(tuple(colours)))
        self.pause(0.05)

    # -- squares --
    def walk_square(self, sq: int, stuck: frozenset[int], seen: Mapping[int, int]) -> frozenset[int]:
        """Ask for a piece on ``sq``; return the sensors that closed (empty: none did, skipped)."""
        name = self.geometry.name(sq)
        while True:
            self._light(sq)
            where = " (the lit square)" if self.leds_work else ""
            self.ui.say(f"Put a piece on {name}{where}.")
            got = self.watch(lambda c: bool(c - stuck), self.square_timeout)
            if got is not None:
                break
            ans = self.ui.ask(f"No sensor responded on {name}. If a piece is on it, check the reed's position "
                              f"under the square first (a magnet centred over a flat reed leaves it open). "
                              f"Try again, skip it (count it dead) or quit? [t/s/q]")
            ans = ans.strip().lower()[:1]
            if ans == "q":
                raise CalibrationAborted(f"calibration stopped at {name}")
            if ans == "s":
                self._light(None)
                return frozenset()
        sensors = frozenset(got - stuck)
        for s in sorted(sensors):
            if s in seen and seen[s] != sq:
                self.ui.say(f"Sensor {s} already answered for {self.geometry.name(seen[s])}: "
                            f"two squares on one sensor?")
        self._light(None)
        while True:
            self.ui.say(f"Lift the piece from {name}.")
            if self.watch(lambda c: not (c - stuck), self.square_timeout) is not None:
                return sensors
            ans = self.ui.ask(f"A sensor still reads closed after lifting from {name}. Check again or go on? [c/g]")
            if ans.strip().lower().startswith("g"):
                return sensors

    # -- diodes --
    def rectangle(self, middle: int) -> tuple[int, int, int]:
        """The three-piece rectangle around ``middle``: (its rank neighbour, its file neighbour,
        the fourth corner), each one step away (towards the board's inside at an edge)."""
        f, r = middle % self.files, middle // self.files
        f2 = f + 1 if f + 1 < self.files else f - 1
        r2 = r + 1 if r + 1 < self.ranks else r - 1
        return r * self.files + f2, r2 * self.files + f, r2 * self.files + f2

    def rectangle_test(self, middle: int, sensor_of: Mapping[int, int]) -> Problem | None:
        """Pieces on ``middle`` and on its rank and file neighbours: the empty fourth corner must
        stay empty. A phantom there means ``middle``'s diode is missing or shorted (current runs
        back through its switch); one piece at a time can never show this."""
        g = self.geometry
        across, along, fourth = self.rectangle(middle)
        pieces = (middle, across, along)
        want = {sensor_of.get(q, q) for q in pieces}
        names = f"{g.name(middle)}, {g.name(across)} and {g.name(along)}"
        self._light_many(pieces)
        self.ui.say(f"Put pieces on {names}.")
        got = self.watch(lambda c: want <= c, self.square_timeout)
        self._light_many(())
        problem = None
        if got is None:
            self.ui.say(f"Not all of {names} responded: rectangle test at {g.name(middle)} skipped.")
        else:
            ghost = sensor_of.get(fourth, fourth)
            if ghost in got:
                problem = Problem("diode", False,
                                  f"with pieces on {names}, the empty {g.name(fourth)} reads occupied: the diode "
                                  f"of {g.name(middle)}'s reed switch is missing or shorted (current flows back "
                                  f"through it)", (middle, fourth), (sensor_of.get(middle, middle), ghost))
        self.ui.say(f"Lift the pieces from {names}.")
        self.watch(lambda c: not (c & want), self.square_timeout)
        return problem

    def _light_many(self, squares: Sequence[int]) -> None:
        if not self.leds_work or self.leds is None:
            return
        colours = [DARK] * (self.files * self.ranks)
        for q in squares:
            colours[q] = WHITE
        self.leds.show_chain(self.led_order.to_chain(tuple(colours)))
        self.pause(0.05)

    def run(self, squares: Sequence[int] | None = None, *,
            previous: Mapping[int, frozenset[int]] | None = None, check_leds: bool = True,
            rectangles: Sequence[int] = ()) -> Calibration:
        """The whole walk (or ``squares`` only, on top of ``previous`` readings), then the
        three-piece rectangle test around each square of ``rectangles``."""
        stuck = self.empty_board()
        order, led_problems = self.check_leds() if check_leds else (None, [])
        readings = dict(previous or {})
        todo = list(range(self.files * self.ranks)) if squares is None else list(squares)
        for k, sq in enumerate(todo):
            if len(todo) > 1 and k % self.files == 0:
                self.ui.say(f"Square {k + 1} of {len(todo)}.")
            readings.pop(sq, None)
            seen = {s: q for q, ss in readings.items() for s in ss}
            readings[sq] = self.walk_square(sq, stuck, seen)
        self._light(None)
        cal = analyse(self.files, self.ranks, readings, stuck=stuck, led_order=order, led_problems=led_problems)
        if not rectangles:
            return cal
        sensor_of = {q: s for s, q in enumerate(cal.sensor_map)}
        diodes = [p for p in (self.rectangle_test(m, sensor_of) for m in rectangles) if p is not None]
        return analyse(self.files, self.ranks, readings, stuck=stuck, led_order=order,
                       led_problems=list(led_problems) + diodes)


def config_dir() -> Path:
    return Path(os.environ.get("FAIRYBOARD_CONFIG_DIR") or "/etc/fairyboard")


def calibration_plan(board, out: str | None, square_names=(), diode_names=(), diodes: bool = False):
    """Where a calibration of ``board`` writes (``out``, else the board's own file, never a
    shipped profile) and what it walks: (out, squares or None for all, previous readings,
    rectangle squares). Refuses the simulated board and bad squares with a clear message."""
    from board_driver.config import configs_dir, read_yaml
    from board_driver.maintenance.calibrate import previous_readings
    from engine.geometry import Geometry

    if board.hardware.sensor_backend == "sim":
        raise BoardDriverError(f"{board.path}: the simulated board needs no calibration "
                               f"(give --board gpio-12x8, pico-serial or your board's file)")
    target: Path
    if out:
        target = Path(out)
    elif board.path.resolve().parent == (configs_dir() / "boards").resolve():
        target = config_dir() / "board.yaml"          # never overwrite a shipped profile
    else:
        target = board.path
    geo = Geometry(board.profile.files, board.profile.ranks)
    squares = None
    previous = None
    try:
        rectangles = list(range(geo.size)) if diodes else [geo.parse(s) for s in diode_names]
    except ValueError as exc:
        raise ConfigError(f"--diode: {exc}") from None
    if square_names:
        try:
            squares = [geo.parse(s) for s in square_names]
        except ValueError as exc:
            raise ConfigError(f"--square: {exc}") from None
        source_data = board.data
        if target.exists() and target != board.path:
            source_data = read_yaml(target)
        previous, _ = previous_readings(source_data, str(target), geo.files, geo.ranks)
        if len(previous) < geo.size - len(squares):
            raise BoardDriverError(f"--square needs a full calibration first: {target} has readings for "
                                   f"{len(previous)} of {geo.size} squares")
    elif rectangles:
        # the rectangle test on a calibrated board: no walk, the readings in the file are used
        source_data = read_yaml(target) if target.exists() else board.data
        kept, _ = previous_readings(source_data, str(target), geo.files, geo.ranks)
        if len(kept) == geo.size:
            squares, previous = [], kept
    return target, squares, previous, rectangles


def write_calibration(board, cal, out: Path) -> None:
    """The calibrated profile written to ``out`` (the profile the calibration started from)."""
    from board_driver.maintenance.calibrate import profile_data, write_profile
    data = profile_data(board.data, cal, when=datetime.now().isoformat(timespec="seconds"))
    write_profile(out, data, cal)
