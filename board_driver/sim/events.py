"""Physical event scripts: the simulator's JSON-lines format, parsed and played in virtual time.

One event per line (DESIGN.md): ``{"t": 1200, "lift": "e2"}``, ``{"t": 1900, "place": "e4"}``,
``{"t": 2500, "input": "choose q"}`` -- ``t`` in milliseconds, never decreasing. A ``lift`` or
``place`` is a raw sensor change (several within a few milliseconds are contact bounce);
an ``input`` is any console command. Blank lines are skipped.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from board_driver.devices import RawFrame
from board_driver.errors import BoardDriverError
from board_driver.referee.runner import Display, pump, settle
from board_driver.referee.session import CommandError, NewGame, Session
from board_driver.sim.board import SimulatedBoard, SimulatorError, VirtualClock
from engine.geometry import Geometry


class EventFileError(BoardDriverError, ValueError):
    """An event line is malformed; the message names the line."""


@dataclass(frozen=True, slots=True)
class Ev:
    """One scripted event: a lift or place of a square, or a console input."""

    t: int
    kind: str        # lift | place | input
    arg: str

    def to_json(self) -> dict:
        return {"t": self.t, self.kind: self.arg}

    def line(self) -> str:
        return json.dumps(self.to_json(), separators=(", ", ": "))


def parse_events(lines: Iterable[str], geometry: Geometry, source: str = "events") -> list[Ev]:
    """Validate every line; EventFileError names the first bad one."""
    return list(iter_events(lines, geometry, source))


def iter_events(lines: Iterable[str], geometry: Geometry, source: str = "events") -> Iterator[Ev]:
    """The events of ``lines``, one at a time (a file is streamed, never held whole);
    EventFileError names the first bad line when it is reached."""
    last_t = 0
    for n, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text:
            continue
        where = f"{source} line {n}"
        try:
            obj = json.loads(text)
        except RecursionError:
            raise EventFileError(f"{where}: JSON nested too deeply to be an event") from None
        except json.JSONDecodeError as exc:
            raise EventFileError(f"{where}: not JSON ({exc.msg}): {text[:60]!r}") from None
        if not isinstance(obj, dict):
            raise EventFileError(f"{where}: an event is a JSON object such as {{\"t\": 0, \"lift\": \"e2\"}}, not {text[:40]!r}")
        t = obj.get("t")
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            raise EventFileError(f"{where}: \"t\" must be a whole number of milliseconds >= 0, not {t!r}")
        if t < last_t:
            raise EventFileError(f"{where}: time {t} goes back (the line before was at {last_t})")
        kinds = [k for k in ("lift", "place", "input") if k in obj]
        extra = set(obj) - {"t", "lift", "place", "input"}
        if len(kinds) != 1 or extra:
            bad = sorted(extra)[0] if extra else None
            raise EventFileError(f"{where}: an event has \"t\" and exactly one of \"lift\", \"place\", \"input\""
                                 + (f" (unknown key {bad!r})" if bad else ""))
        kind = kinds[0]
        arg = obj[kind]
        if not isinstance(arg, str) or not arg.strip():
            raise EventFileError(f"{where}: \"{kind}\" needs a {'command' if kind == 'input' else 'square'} string, not {arg!r}")
        if kind != "input":
            try:
                geometry.parse(arg)
            except ValueError as exc:
                raise EventFileError(f"{where}: {exc}") from None
            arg = arg.strip().lower()
        yield Ev(t, kind, arg.strip())
        last_t = t



def apply_event(session: Session, board, display, ev) -> None:
    """One scripted event on the simulated board: a lift, a place, or a console command (for
    which the board is brought up to date first, as a player speaks after what the board
    showed). Raises what the simulator or the command raises."""
    if ev.kind == "lift":
        board.lift(ev.arg, ev.t)
    elif ev.kind == "place":
        board.place(ev.arg, ev.t)
    else:
        pump(session, board, display, ev.t)
        session.command(ev.arg, ev.t)

def play_events(session: Session, board: SimulatedBoard, clock: VirtualClock, events: Iterable[Ev],
                display: Display | None = None, *, strict: bool = False) -> list[dict]:
    """Play a script in virtual time, then let time run on until the board settled.

    Returns the warnings (physically impossible events, refused inputs), each with its
    event number. With ``strict`` they raise instead.
    """
    warnings: list[dict] = []
    board.queue.clear()
    session.read_board(board.current())     # the board is read before the first event (a resumed game)
    if display is not None:
        display.update(session)
    last = session.now
    session.script_time(horizon=None, flag_until=None)
    for i, ev in enumerate(events, 1):
        last = ev.t
        clock.advance_to(ev.t)
        pump(session, board, display, ev.t)
        try:
            apply_event(session, board, display, ev)
        except (SimulatorError, CommandError, ValueError) as exc:
            if strict:
                raise
            warnings.append({"event": i, "t": ev.t, "warning": str(exc)})
        req = session.take_handover()
        if isinstance(req, NewGame):
            raise SimulatorError(f"'new {req.variant}' is not available in an event file: run play again")
        pump(session, board, display, ev.t)
    # the script's time ends at its last event: the board settles after it, the clocks stop there
    session.script_time(horizon=None, flag_until=last)
    try:
        settle(session, display)
    finally:
        session.script_time(horizon=last, flag_until=None)
    return warnings


MAX_LINE = 4096        # characters in one event line: an event is well under 100


def bounded_lines(f, source: str) -> Iterator[str]:
    """The lines of ``f``, each read with a bound: a line longer than :data:`MAX_LINE` (or one
    that never ends, such as /dev/zero) is an EventFileError, never a file held in memory."""
    n = 0
    while True:
        line = f.readline(MAX_LINE + 1)
        if not line:
            return
        n += 1
        if len(line) > MAX_LINE:
            raise EventFileError(f"{source} line {n}: longer than {MAX_LINE} characters: not an event line")
        yield line


class EventScript:
    """An events file (or ``-``: standard input, spooled to a temporary file first), read line
    by line and never whole: :meth:`check` reads it through once before any game is created,
    :meth:`events` plays it."""

    def __init__(self, name: str, geometry: Geometry):
        self.name = name
        self.geometry = geometry
        self.spool = None
        if name == "-":
            self.spool = tempfile.TemporaryFile("w+", encoding="utf-8")
            for line in bounded_lines(sys.stdin, "<stdin>"):    # never a line without end in memory
                self.spool.write(line)
            self.source = "<stdin>"
        else:
            try:
                Path(name).open(encoding="utf-8").close()
            except OSError as exc:
                raise BoardDriverError(f"--events {name}: cannot read: {exc.strerror or exc}") from None
            self.source = name

    def _lines(self) -> Iterator[str]:
        if self.spool is not None:
            self.spool.seek(0)
            yield from bounded_lines(self.spool, self.source)
        else:
            with open(self.name, encoding="utf-8", errors="replace") as f:
                yield from bounded_lines(f, self.source)

    def check(self) -> None:
        for _ in iter_events(self._lines(), self.geometry, self.source):
            pass

    def events(self) -> Iterator[Ev]:
        return iter_events(self._lines(), self.geometry, self.source)


class ScriptedSource:
    """A script played on the simulated board in real time, while the service runs: each event
    is carried out when its ``t`` (milliseconds since the script started) has come; an
    ``input`` goes to ``commands`` as if typed. Wraps the board's sensor source; a lift or place
    the board cannot do is said through ``warn`` and skipped."""

    def __init__(self, inner, events: Iterable[Ev], clock: Callable[[], int], commands, *,
                 warn: Callable[[str], None] = print):
        self.inner = inner
        self.events = iter(events)
        self.clock = clock
        self.commands = commands
        self.warn = warn
        self.t0 = clock()
        self.next: Ev | None = next(self.events, None)
        self.sensor_count = inner.sensor_count

    @property
    def done(self) -> bool:
        return self.next is None

    def _feed(self) -> None:
        now = self.clock() - self.t0
        while self.next is not None and self.next.t <= now:
            ev = self.next
            try:
                if ev.kind == "input":
                    self.commands.put(ev.arg)
                elif ev.kind == "lift":
                    self.inner.lift(ev.arg)
                else:
                    self.inner.place(ev.arg)
            except (SimulatorError, ValueError) as exc:
                self.warn(f"warning: event at {ev.t} ms: {exc}")
            self.next = next(self.events, None)

    def due_in(self) -> float | None:
        """Seconds until the script's next event is due (0 when it is late), None at its end:
        a source that waits on something else (the page's :class:`~board_driver.web.board_io.WebSource`)
        waits no longer than this."""
        if self.next is None:
            return None
        return max(0.0, (self.next.t - (self.clock() - self.t0)) / 1000)

    def read(self, timeout: float) -> RawFrame | None:
        self._feed()
        due = self.due_in()
        if due is not None:
            timeout = min(timeout, due)
        frame = self.inner.read(timeout)
        self._feed()
        return frame

    def __getattr__(self, name):
        return getattr(self.inner, name)
