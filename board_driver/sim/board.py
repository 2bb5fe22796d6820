"""The simulated board: a fake sensor source and LED sink that behave like the real board.

:class:`SimulatedBoard` implements both :class:`~board_driver.devices.SensorSource` and
:class:`~board_driver.devices.LedSink`. Like the hardware it knows occupancy only (which
sensors are closed), never which piece stands where; like the hardware it refuses what a
board cannot do: a lift from an empty square, a place on an occupied one, an LED frame of
the wrong size. Test-only controls (``lift("e2")``, ``place("e4")``, ``bounce``, ``glitch``)
queue raw frames stamped by the clock it was given; ``frames_shown`` keeps every LED frame.

:class:`VirtualClock` is the injected clock of tests and of the simulator's event files.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import deque
from pathlib import Path
from typing import Callable

from board_driver.devices import LedImage, RawFrame
from board_driver.errors import BoardDriverError
from board_driver.referee.layout import BoardProfile, Layout

log = logging.getLogger(__name__)


class SimulatorError(BoardDriverError, ValueError):
    """The simulated board was asked to do what a physical board cannot."""


class VirtualClock:
    """Milliseconds that pass only when told to."""

    def __init__(self, t: int = 0):
        self.t = t

    def __call__(self) -> int:
        return self.t

    def advance_to(self, t: int) -> None:
        if t > self.t:
            self.t = t


class SimulatedBoard:
    """Sensors and LEDs of a board, simulated; squares are addressed as game squares via ``layout``."""

    def __init__(self, layout: Layout, *, clock: Callable[[], int], closed: frozenset[int] = frozenset(),
                 state_file: Path | None = None):
        self.layout = layout
        self.profile: BoardProfile = layout.profile
        self.sensor_count = self.profile.sensor_count
        self.led_count = self.profile.size
        self.clock = clock
        self.closed: set[int] = set(closed)
        self.queue: deque[RawFrame] = deque()
        self.frames_shown: list[LedImage] = []
        self.state_file = Path(state_file) if state_file is not None else None
        self.closed_flag = False
        self._unsaved: str | None = None     # why the last save failed (said once, until one works)
        # a frame made: read() waits on it as a real board's source waits for the next scan
        self._arrived = threading.Condition()
        self._woken = False

    # -- persistence (the pieces stay where they are when the program stops) ---------------------
    @classmethod
    def restore(cls, layout: Layout, *, clock: Callable[[], int], state_file: Path,
                default: frozenset[int]) -> SimulatedBoard:
        closed = default
        try:
            data = json.loads(Path(state_file).read_text(encoding="utf-8"))
            if data.get("files") == layout.profile.files and data.get("ranks") == layout.profile.ranks:
                closed = frozenset(int(s) for s in data["closed"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return cls(layout, clock=clock, closed=closed, state_file=state_file)

    def save(self) -> None:
        """Write where the pieces stand. A failure (a full disk, no file handle left) is said
        once and the pieces stay in memory: it never stops the board's events, nor the game."""
        if self.state_file is None:
            return
        try:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.state_file.with_suffix(".tmp")
            tmp.write_text(json.dumps({"files": self.profile.files, "ranks": self.profile.ranks,
                                       "closed": sorted(self.closed)}), encoding="utf-8")
            os.replace(tmp, self.state_file)
        except OSError as exc:
            why = exc.strerror or str(exc)
            if why != self._unsaved:
                log.warning("%s: cannot save the simulated board's pieces (%s); they are kept in memory",
                            self.state_file, why)
            self._unsaved = why
            return
        self._unsaved = None

    # -- test controls ----------------------------------------------------------------------------
    def sensor(self, square: str | int) -> int:
        sq = self.layout.geometry.parse(square) if isinstance(square, str) else square
        return self.layout.sensor_of(sq)

    def occupied(self, square: str | int) -> bool:
        return self.sensor(square) in self.closed

    def lift(self, square: str | int, t: int | None = None) -> None:
        s = self.sensor(square)
        if s not in self.closed:
            raise SimulatorError(f"there is no piece on {self._name(square)} to lift")
        self.closed.discard(s)
        self._emit(t)

    def place(self, square: str | int, t: int | None = None) -> None:
        s = self.sensor(square)
        if s in self.closed:
            raise SimulatorError(f"{self._name(square)} is occupied: lift that piece first")
        self.closed.add(s)
        self._emit(t)

    def bounce(self, square: str | int, t: int, times: int = 2, gap: int = 3) -> None:
        """Contact bounce: the sensor flickers ``times`` times, ``gap`` ms apart, then rests as it was."""
        s = self.sensor(square)
        for i in range(times):
            self._toggle(s)
            self._emit(t + 2 * i * gap)
            self._toggle(s)
            self._emit(t + (2 * i + 1) * gap)

    def setup(self, closed: frozenset[int], t: int | None = None) -> None:
        """Put the pieces so that exactly ``closed`` sensors are closed (the players set up the board)."""
        self.closed = set(closed)
        self._emit(t)

    def _toggle(self, s: int) -> None:
        if s in self.closed:
            self.closed.discard(s)
        else:
            self.closed.add(s)

    def _name(self, square) -> str:
        return square if isinstance(square, str) else self.layout.geometry.name(square)

    def _emit(self, t: int | None) -> None:
        self.queue.append(RawFrame(self.clock() if t is None else t, frozenset(self.closed)))
        self.save()
        with self._arrived:
            self._arrived.notify_all()

    # -- SensorSource -------------------------------------------------------------------------------
    def read(self, timeout: float = 0.0) -> RawFrame | None:
        """The next frame, waiting up to ``timeout`` seconds for one as a real board's source
        does (the service loop idles here, not in a busy loop). A board on a virtual clock never
        waits: its time passes only when told to."""
        if self.closed_flag:
            raise SimulatorError("the simulated board is closed")
        if not self.queue and timeout > 0 and not isinstance(self.clock, VirtualClock):
            with self._arrived:
                if not self.queue and not self._woken:
                    self._arrived.wait(timeout)
                self._woken = False
        return self.queue.popleft() if self.queue else None

    def wake(self) -> None:
        """Make a ``read`` waiting now (or the next one) return at once: the service loop has a
        command to take (:class:`board_driver.referee.runner.LoopQueue`). Any thread."""
        with self._arrived:
            self._woken = True
            self._arrived.notify_all()

    def current(self) -> RawFrame:
        """A frame of the sensors as they are now (what a fresh scan reports)."""
        return RawFrame(self.clock(), frozenset(self.closed))

    # -- LedSink ---------------------------------------------------------------------------------------
    def show(self, frame: LedImage) -> None:
        if self.closed_flag:
            raise SimulatorError("the simulated board is closed")
        if len(frame.colors) != self.led_count:
            raise SimulatorError(f"an LED frame for this board has {self.led_count} entries, not {len(frame.colors)}")
        self.frames_shown.append(frame)

    @property
    def last_frame(self) -> LedImage | None:
        return self.frames_shown[-1] if self.frames_shown else None

    def close(self) -> None:
        self.closed_flag = True
