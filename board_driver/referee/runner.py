"""Runners: move frames between the devices and the session, in virtual or real time.

* :func:`pump` -- feed every frame a source has queued (handling any deadline that falls
  between two frames first), then show the LED frame if it changed;
* :func:`settle` -- let virtual time run on until nothing is due (debounce, holds);
* :func:`run_realtime` -- the service loop for real hardware: wait for a frame or the next
  deadline, whichever comes first; commands arrive on a queue (console thread, buttons).

An idle loop sleeps. It waits in its source's ``read(timeout)`` until a frame, the session's
next deadline, or a command: a :class:`LoopQueue` wakes the source (its ``wake()``) when a
command is put, so the loop need not look at the queue every few milliseconds. With such a
source and queue the loop wakes at least every :data:`IDLE` seconds (the page's pairings
expire, the link's state is read); without, every :data:`POLL` seconds.
"""

from __future__ import annotations

import gc
import queue
from typing import Callable, Union

from board_driver.devices import LedImage, LedSink, SensorSource
from board_driver.errors import BoardDriverError
from board_driver.journal import JournalError
from board_driver.referee.commands import HandOver
from board_driver.referee.session import Session
from engine.errors import EngineError


class Display:
    """Shows the session's LED frame on a sink, only when it changed."""

    def __init__(self, sink: LedSink):
        self.sink = sink
        self.last: LedImage | None = None

    def update(self, session: Session) -> bool:
        frame = session.leds
        if frame != self.last:
            self.sink.show(frame)
            self.last = frame
            return True
        return False


def _due(session: Session, until: int) -> None:
    while True:
        d = session.next_deadline()
        if d is None or d > until:
            return
        session.tick(d)


def pump(session: Session, source: SensorSource, display: Display | None = None, now: int | None = None) -> None:
    """Feed the frames ``source`` has ready; deadlines in between are met in time order."""
    while True:
        frame = source.read(0.0)
        if frame is None:
            break
        _due(session, frame.t)
        session.on_frame(frame)
        if display is not None:
            display.update(session)
    if now is not None:
        _due(session, now)
        session.tick(now)
    if display is not None:
        display.update(session)


def settle(session: Session, display: Display | None = None, limit: int = 60_000) -> int:
    """Advance virtual time until nothing is due; returns the time reached."""
    t = session.now
    for _ in range(1000):
        d = session.next_deadline()
        if d is None or d - t > limit:
            break
        t = max(t, d)
        session.tick(t)
        if display is not None:
            display.update(session)
    return t


def settle_memory() -> None:
    """Once start-up is done (modules, move tables, the replayed game): collect the garbage
    once and freeze what is left (:func:`gc.freeze`), so that the collector's passes during
    play scan only the objects made since, never the start-up ones again. A full pass over a
    running service's objects costs milliseconds on a Pi; a commit is budgeted at well
    under one (see tests/bench/bench_driver.py, and :func:`collect_garbage` for when the
    passes happen)."""
    gc.collect()
    gc.freeze()


_THRESHOLDS = gc.get_threshold()


def collect_garbage() -> None:
    """The collector's work at the loop's pace: the service loop turns the automatic
    collection off and calls this after each step, once the LED frame is out, so that no
    collection ever lands inside a commit. It collects as the interpreter would have (the
    youngest objects once enough were made, the older generations every so many passes of
    the younger ones: :func:`gc.get_threshold`), only later."""
    t0, t1, t2 = _THRESHOLDS
    c0, c1, c2 = gc.get_count()
    if c0 < t0:
        return
    if c1 + 1 < t1:
        gc.collect(0)
    else:
        gc.collect(2 if c2 + 1 >= t2 else 1)


POLL = 0.05     # seconds the service loop waits for a frame before an idle step (tick, prepare)
IDLE = 1.0      # the same when a command wakes the source (a LoopQueue and a source with wake())


LoopCommand = Union[str, Callable[[Session], object], HandOver]
"""What the loop's command queue carries: a console line (a button's word), a job called with
the session (the web page's: see :mod:`board_driver.web.bridge`), or a :class:`HandOver` for the
game host (a new game, an agreed remote game)."""


class LoopQueue(queue.Queue[LoopCommand]):
    """The loop's command queue: :meth:`put` also wakes the loop where it waits (its sensor
    source's ``wake()``), so a command is taken at once however long the loop would sleep."""

    def __init__(self) -> None:
        super().__init__()
        self.wakers: list[Callable[[], object]] = []

    def put(self, item: LoopCommand, block: bool = True, timeout: float | None = None) -> None:
        super().put(item, block, timeout)
        self.wake()

    def wake(self) -> None:
        """Wake the loop without a command (a stop was asked for: it looks at ``stop()``)."""
        for wake in list(self.wakers):
            wake()


def waker_of(source: SensorSource) -> Callable[[], object] | None:
    """The source's ``wake()``: makes a ``read(timeout)`` waiting now, or the next one, return at
    once (None when the source has none)."""
    wake = getattr(source, "wake", None)
    return wake if callable(wake) else None


def run_realtime(session: Session, source: SensorSource, sink: LedSink, clock: Callable[[], int], *,
                 commands: "queue.Queue[LoopCommand] | None" = None, stop: Callable[[], bool] = lambda: False,
                 on_notice: Callable[[str], None] = print, poll: float = POLL,
                 on_update: Callable[[Session], None] | None = None) -> HandOver | None:
    """The service loop: frames and commands in, LED frames out, until ``stop()`` (None) or
    until a command is for the game host (a new game): that :class:`HandOver` is returned.

    A command is a :data:`LoopCommand`. ``on_update(session)`` is called after
    every step (the page's snapshots). The session's computer thinks in the background here
    (:meth:`board_driver.opponents.computer.Computer.think_in_background`): a commit's LED frame goes out
    at once, and frames and commands are read while it thinks. So does the ``hint`` command's."""
    if session.computer is not None:
        session.computer.think_in_background()
    if session.hinter is not None:
        session.hinter.think_in_background()    # the hint command's search too
    display = Display(sink)
    display.update(session)
    settle_memory()
    wake = waker_of(source)
    woken = commands if isinstance(commands, LoopQueue) and wake is not None else None
    if woken is not None and wake is not None:
        woken.wakers.append(wake)
        if not woken.empty():
            wake()              # put before the loop listened: the first wait must not sleep on it
        poll = max(poll, IDLE)  # a command wakes the source: wait for frames, deadlines and commands alone
    automatic = gc.isenabled()
    gc.disable()                # collections happen between steps (collect_garbage), never in one
    try:
        return _loop(session, source, display, clock, commands, stop, on_notice, poll, on_update)
    finally:
        if automatic:
            gc.enable()
        if woken is not None and wake is not None:
            woken.wakers.remove(wake)


def _loop(session: Session, source: SensorSource, display: Display, clock: Callable[[], int],
          commands: "queue.Queue[LoopCommand] | None", stop: Callable[[], bool], on_notice: Callable[[str], None],
          poll: float, on_update: Callable[[Session], None] | None) -> HandOver | None:
    failing = None
    ahead = False                   # the session has more work ahead: look for a frame, do not wait
    while not stop():
        d = session.next_deadline()
        now = clock()
        timeout = poll if d is None else max(0.0, min(poll, (d - now) / 1000))
        frame = source.read(0.0 if ahead else timeout)
        ahead = False
        try:
            if frame is not None:
                _due(session, frame.t)
                session.on_frame(frame)
            else:
                session.tick(clock())
                # idle: work ahead for the next frame, a bounded step at a time, the source
                # read between steps, so a frame never waits for more than one step
                ahead = session.prepare()
            failing = None
        except JournalError as exc:
            # the disk refused a record (full, quota): the game stays what its journal holds,
            # the next frame tries again; said once, not on every frame
            if str(exc) != failing:
                on_notice(f"error: {exc}")
            failing = str(exc)
        while commands is not None:
            try:
                item = commands.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, HandOver):
                for line in session.drain_notices():
                    on_notice(line)
                return item             # for the game host
            if callable(item):
                for line in session.drain_notices():    # what happened before the job, in order
                    on_notice(line)
                item(session)           # a job: it answers its caller itself
                handover = session.take_handover()
                if handover is not None:
                    return handover     # the job gave the session a ``new`` command
                continue
            try:
                for line in session.command(item, clock()):
                    on_notice(line)
            except (ValueError, BoardDriverError, EngineError) as exc:
                on_notice(f"error: {exc}")      # a bad command is an error message, never an exit
            handover = session.take_handover()
            if handover is not None:
                return handover         # ``new``: the game host replaces the session
        display.update(session)
        for line in session.drain_notices():
            on_notice(line)
        if on_update is not None:
            on_update(session)
        collect_garbage()
    return None
