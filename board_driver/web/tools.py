"""The Board tab's tools: the selftest and the calibration wizard, run inside the service
(which owns the devices), on the board loop's thread.

The server queues the work as a job (:meth:`WebBridge.call`); while it runs, the game is
paused: the sensor frames go to the selftest or the wizard, not to the session. Afterwards
the session's LED frame is shown again and the board is read afresh (a piece moved meanwhile
is explained as after any unwatched time).

The wizard talks through :class:`WebPrompter`: its ``say`` lines and its current question are
what ``GET /api/calibrate`` answers (and the WebSocket pushes); ``ask`` waits for
``POST /api/calibrate/answer``; ``POST /api/calibrate/stop`` aborts it.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from board_driver.devices import RawFrame
from board_driver.errors import BoardDriverError
from board_driver.maintenance.calibrate import CalibrationAborted, Wizard
from engine.contract import TextEnum

if TYPE_CHECKING:
    from board_driver.referee.session import Session

KEEP_LINES = 200
ANSWER_WAIT_S = 900            # a question unanswered this long stops the calibration


# every calibration status change, in order; from the service's start time in ms, so that a page
# left open across a restart still sees the new process's statuses as the newer
_SEQ = itertools.count(int(time.time() * 1000))


class WizardState(TextEnum):
    """Where the calibration wizard on the page stands (its status's ``state``)."""

    RUNNING = "running"
    DONE = "done"
    STOPPED = "stopped"
    FAILED = "failed"


class WebPrompter:
    """The wizard's voice on the page (thread-safe: the loop writes, the web thread reads).
    Each change takes the next ``seq``: a status pushed over the WebSocket and one in an HTTP
    answer may reach the page in either order, and the page keeps the newer."""

    def __init__(self, on_change: Callable[[dict], None] = lambda status: None, *,
                 stopping: Callable[[], bool] = lambda: False):
        self._lock = threading.Lock()
        self._answers: "queue.Queue[str]" = queue.Queue()
        self._abort = threading.Event()
        self.on_change = on_change
        self.stopping = stopping        # the service is stopping (SIGTERM): the wizard ends
        self.state = WizardState.RUNNING
        self.lines: list[dict] = []
        self._n = 0
        self.question: str | None = None
        self.squares: list[str] = []    # the squares to fill now (lit on the board)
        self.report: list[str] = []
        self.written: str | None = None
        self.ok: bool | None = None
        self.error: str | None = None
        self.seq = next(_SEQ)

    # -- the wizard's side (loop thread) --
    def say(self, text: str) -> None:
        with self._lock:
            self._n += 1
            self.lines.append({"n": self._n, "text": text})
            del self.lines[:-KEEP_LINES]
        self._changed()

    def ask(self, text: str) -> str:
        self.check()
        while True:                      # an answer sent before the question is not this one's
            try:
                self._answers.get_nowait()
            except queue.Empty:
                break
        with self._lock:
            self.question = text
        self.say(text)
        end = time.monotonic() + ANSWER_WAIT_S
        try:
            while True:
                self.check()
                try:
                    return self._answers.get(timeout=0.1)
                except queue.Empty:
                    if time.monotonic() > end:
                        raise CalibrationAborted(f"no answer in {ANSWER_WAIT_S // 60} minutes: calibration stopped")
        finally:
            with self._lock:
                self.question = None
            self._changed()

    def check(self) -> None:
        if self._abort.is_set():
            raise CalibrationAborted("calibration stopped from the page")
        if self.stopping():
            raise CalibrationAborted("the service is stopping")

    def fill(self, squares: list[str]) -> None:
        with self._lock:
            self.squares = list(squares)
        self._changed()

    def finish(self, state: WizardState, **kw: Any) -> None:
        with self._lock:
            self.state = state
            self.question = None
            self.squares = []
            for k, v in kw.items():
                setattr(self, k, v)
        self._changed()

    # -- the page's side (web thread) --
    def answer(self, text: str) -> bool:
        """Answer the question waiting; False when none is."""
        with self._lock:
            if self.question is None or self.state is not WizardState.RUNNING:
                return False
        self._answers.put(text)
        return True

    def stop(self) -> None:
        self._abort.set()

    def status(self) -> dict:
        with self._lock:
            return {"state": self.state.value, "question": self.question, "squares": list(self.squares),
                    "lines": list(self.lines), "report": list(self.report), "written": self.written,
                    "ok": self.ok, "error": self.error, "seq": self.seq}

    def _changed(self) -> None:
        with self._lock:
            self.seq = next(_SEQ)
        try:
            self.on_change(self.status())
        except Exception:           # a page that went away never stops the wizard
            pass


class StoppableSource:
    """The sensor source as the wizard reads it: a stop from the page ends a wait for a piece."""

    def __init__(self, inner, prompter: WebPrompter):
        self.inner = inner
        self.prompter = prompter
        self.sensor_count: int = getattr(inner, "sensor_count", 0)

    def read(self, timeout: float) -> RawFrame | None:
        self.prompter.check()
        return self.inner.read(min(timeout, 0.1))

    def close(self) -> None:
        """Nothing to do: the service owns the source and closes it."""


class PageWizard(Wizard):
    """The wizard that tells the page which squares to fill (while the LEDs light them)."""

    ui: WebPrompter

    def walk_square(self, sq, stuck, seen):
        self.ui.fill([self.geometry.name(sq)])
        try:
            return super().walk_square(sq, stuck, seen)
        finally:
            self.ui.fill([])

    def rectangle_test(self, middle, sensor_of):
        self.ui.fill([self.geometry.name(q) for q in (middle, *self.rectangle(middle)[:2])])
        try:
            return super().rectangle_test(middle, sensor_of)
        finally:
            self.ui.fill([])


class HardwareTools:
    """The real board's tools (``fairyboard serve``): its profile, open devices, raw source and
    the LED sink the session's frames go to."""

    sim = False

    def __init__(self, board, hw, source, sink, stopping: Callable[[], bool] = lambda: False):
        self.board, self.hw, self.source, self.sink = board, hw, source, sink
        self.stopping = stopping

    def calibration_refusal(self) -> str | None:
        if self.board.hardware.sensor_backend == "sim":
            return "the simulated board needs no calibration"
        return None

    def selftest(self, session: Session, seconds: float, leds: bool) -> dict:
        """On the loop thread: the selftest on the open devices."""
        from board_driver.maintenance.selftest import config_findings, device_findings
        findings = config_findings(self.board)
        try:
            device_findings(findings, self.board.profile, source=self.source, leds=self.hw.leds if leds else None,
                            serial=self.hw.serial, seconds=seconds, sensor_backend=self.board.hardware.sensor_backend)
        finally:
            self.resume(session)
        return findings

    def plan(self, squares: list[str], out: str | None = None):
        """In the web thread, before anything starts: where it writes and what it walks."""
        from board_driver.maintenance.calibrate import calibration_plan
        return calibration_plan(self.board, out, squares)

    def calibrate(self, session: Session, prompter: WebPrompter, plan, *, leds: bool, settle: float, timeout: float) -> None:
        """On the loop thread: the wizard, until it ends or is stopped (the game paused)."""
        from board_driver.maintenance.calibrate import write_calibration
        out, squares, previous, rectangles = plan
        p = self.board.profile
        chain = self.hw.leds if leds else None
        if chain is not None and not hasattr(chain, "show_chain"):
            chain = None
        try:
            wizard = PageWizard(StoppableSource(self.source, prompter), prompter, files=p.files, ranks=p.ranks,
                                leds=chain, led_order=p.led_order, settle=settle, square_timeout=timeout)
            cal = wizard.run(squares, previous=previous, check_leds=chain is not None, rectangles=rectangles)
            write_calibration(self.board, cal, out)
            report = cal.report() + [f"Written to {out}. Restart the service to play with it."]
            for line in report:
                prompter.say(line)
            prompter.finish(WizardState.DONE, report=report, written=str(out), ok=cal.ok)
        except CalibrationAborted as exc:
            prompter.say(f"Stopped: {exc}. Nothing was written.")
            prompter.finish(WizardState.STOPPED, error=str(exc))
        except (BoardDriverError, OSError, ValueError) as exc:
            prompter.say(f"error: {exc}")
            prompter.finish(WizardState.FAILED, error=str(exc))
        finally:
            self.resume(session)

    def resume(self, session: Session) -> None:
        """The game again: its LED frame shown, the board read afresh."""
        base = getattr(self.sink, "base", None)
        inner = getattr(self.sink, "inner", self.sink)
        if base is not None:
            if hasattr(self.sink, "refresh"):
                self.sink.refresh()
            else:
                inner.show(base)
        else:
            inner.show(session.leds)
        last = getattr(self.source, "last", None)
        if last is not None:
            session.read_board(last)


class SimTools:
    """The simulated board's tools (``play --web``): a selftest of the profile and the
    simulated sensors; no calibration."""

    sim = True

    def __init__(self, profile, board_fn: Callable[[], Any]):
        self.profile = profile
        self.board_fn = board_fn

    def stopping(self) -> bool:
        return False

    def calibration_refusal(self) -> str | None:
        return "the simulated board needs no calibration (calibrate a real board: fairyboard serve --web)"

    def plan(self, squares: list[str], out: str | None = None):
        raise BoardDriverError(self.calibration_refusal())

    def calibrate(self, session: Session, prompter: WebPrompter, plan, *, leds: bool, settle: float, timeout: float) -> None:
        raise BoardDriverError(self.calibration_refusal())

    def selftest(self, session: Session, seconds: float, leds: bool) -> dict:
        from board_driver.maintenance.selftest import device_findings
        p = self.profile
        findings: dict = {"problems": [], "config": {
            "file": None, "board": p.name, "size": f"{p.files}x{p.ranks}", "sensors": "sim", "leds": "sim",
            "led_order": f"{p.led_order.order} from {p.led_order.first}", "calibrated": True, "buttons": []}}
        board = self.board_fn()
        closed = board.current().closed if board is not None else frozenset()
        # the simulator speaks only when a piece moves: its frames stay the game's
        device_findings(findings, p, source=None, seconds=0.0, sensor_backend="sim", closed_now=closed)
        return findings
