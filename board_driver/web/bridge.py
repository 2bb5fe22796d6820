"""The seam between the web thread and the board loop (the session's one owner).

The web side never touches the session. It queues *jobs* -- callables taking the session --
onto the loop's command queue (the same queue the buttons put their commands on) and waits
on a future for the answer; the loop runs them between frames (see
:func:`board_driver.referee.runner.run_realtime`). After every loop step the loop calls
:meth:`WebBridge.on_update`, which builds a new snapshot when anything changed and hands it
to the web thread's listeners (the WebSocket pushes).

The page's notices (:class:`Notices`) are a log of their own, made before the game host, so
that the host's lines go to the page from its first one. Pairing runs in the loop too
(:class:`~board_driver.web.pairing.Pairings`): the bridge hands it the raw frames
(:class:`~board_driver.web.board_io.WebSource`) and lights its squares on the overlay sink.
"""

from __future__ import annotations

import concurrent.futures
import queue
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from board_driver.devices import RawFrame
from board_driver.referee.commands import HandOver
from board_driver.web.auth import TokenStore
from board_driver.web.board_io import OverlaySink
from board_driver.web.live_eval import LiveEval
from board_driver.web.pairing import Pairing, Pairings
from board_driver.web.state import NOTICE_KEEP, snapshot

if TYPE_CHECKING:
    from board_driver.referee.session import Session


class Notices:
    """The lines the page shows among its notices, numbered (any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[dict] = []
        self._n = 0

    @property
    def count(self) -> int:
        """How many lines were ever added (a new one changes it)."""
        return self._n

    def add(self, line: str) -> None:
        with self._lock:
            self._n += 1
            self._lines.append({"n": self._n, "text": line})
            del self._lines[:-NOTICE_KEEP]

    def recent(self) -> list[dict]:
        with self._lock:
            return list(self._lines)

    def speaker(self, say: Callable[[str], None]) -> Callable[[str], None]:
        """``say`` that also puts the line among the notices (a game host's ``say``)."""
        def both(line: str) -> None:
            say(line)
            self.add(line)
        return both


@dataclass
class WebBridge:
    """Jobs in, snapshots out; pairing; the notices log."""

    commands: "queue.Queue[Any]" = field(default_factory=queue.Queue)
    clock: Callable[[], int] = lambda: int(time.monotonic() * 1000)
    tokens: TokenStore = field(default_factory=TokenStore)
    password: str | None = None
    sim: bool = False
    extra: dict = field(default_factory=dict)          # fixed fields added to every snapshot
    link: Callable[[], dict] | None = None             # the board's link (GameHost.link), read every step
    lobby: Callable[[], dict | None] | None = None     # boards online, invitations (Invitations.status)
    notices: Notices = field(default_factory=Notices)  # the page's notices (the game host's lines too)

    def __post_init__(self) -> None:
        self.wake = threading.Event()
        self.board: Any = None             # the simulated board, when there is one (loop thread)
        self.sink: OverlaySink | None = None
        self.layout: Any = None
        self._lock = threading.Lock()
        self._snapshot: dict | None = None
        self._version = 0
        self._key: tuple | None = None
        self._dirty = True
        self._listeners: list[Callable[[dict], None]] = []
        self.pairings = Pairings(self.tokens, notice=self.notice, on_lit=self._light)
        # which run of the server a snapshot comes from: versions count from 1 again after a
        # restart, so a page compares versions only within one run
        self.run = f"{int(time.time() * 1000):x}-{secrets.token_hex(3)}"
        self.published_at: float | None = None      # monotonic time of the last publish
        self._link: dict = {}
        self.live = LiveEval(on_result=self.refresh)       # the live evaluation (off until switched on)

    # -- web thread ---------------------------------------------------------------------------
    def call(self, fn: Callable[[Any], Any], *, changes: bool = True) -> concurrent.futures.Future:
        """Run ``fn(session)`` in the board loop; the future has its result (or exception).
        ``changes=False``: a read that changes nothing (no new snapshot for it)."""
        fut: concurrent.futures.Future = concurrent.futures.Future()

        def job(session: Session) -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                result = fn(session)
            except BaseException as exc:       # handed to the waiting request, never lost
                fut.set_exception(exc)
                self._dirty = self._dirty or changes
                return
            self._dirty = self._dirty or changes
            fut.set_result(result)
        self.commands.put(job)
        self.wake.set()
        return fut

    def hand_over(self, cmd: HandOver) -> concurrent.futures.Future:
        """Give the game host ``cmd`` (a new game) through the loop's queue; the future (the
        command's ``reply``) has the answer once the new game is on disk, or the refusal."""
        fut = cmd.reply
        assert fut is not None, "a command handed over from the page has a reply"
        self._dirty = True
        self.commands.put(cmd)
        self.wake.set()
        return fut

    def latest(self) -> dict | None:
        with self._lock:
            return self._snapshot

    def add_listener(self, fn: Callable[[dict], None]) -> None:
        with self._lock:
            self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[dict], None]) -> None:
        with self._lock:
            if fn in self._listeners:
                self._listeners.remove(fn)

    def pairing(self, pid: str) -> Pairing | None:
        return self.pairings.get(pid)

    # -- loop thread ----------------------------------------------------------------------------
    def attach(self, session: Session, *, board=None, sink: OverlaySink | None = None) -> None:
        """A (new) session and its devices: the next update publishes it."""
        self.board = board
        if sink is not None:
            self.sink = sink
        self.layout = session.layout
        self.pairings.new_board()
        self._dirty = True

    def refresh(self) -> None:
        """Something the snapshot shows changed outside the loop (the live evaluation's figures):
        the loop publishes at its next step, woken at once on the simulated board. Any thread."""
        self._dirty = True
        self.wake.set()

    def notice(self, line: str) -> None:
        self.notices.add(line)
        self._dirty = True

    def on_update(self, session: Session) -> None:
        """Called by the loop after every step: expire pairings, publish when anything changed."""
        self.pairings.expire()
        self._link = self._read_link()
        self.live.follow(session)
        key = (id(session), session.leds, id(session.verdict), session.occupancy, len(session.game.history),
               session.recover, self._link.get("state"), self._link.get("up"), self.notices.count)
        if key == self._key and not self._dirty:
            return
        self.publish(session, key)

    def publish(self, session: Session, key: tuple | None = None) -> dict:
        self._key = key
        self._dirty = False
        self._version += 1
        if key is None:
            self._link = self._read_link()
        snap = snapshot(session, sim=self.sim, version=self._version, notices=self.notices.recent(),
                        extra={"run": self.run, "link": self._link, "eval": self.live.snapshot(),
                               "lobby": self._read_lobby(), **self.extra})
        snap["leds"].update(self.pairings.leds())       # the pairing squares, lit on top of the game's
        with self._lock:
            self._snapshot = snap
            listeners = list(self._listeners)
        self.published_at = time.monotonic()
        for fn in listeners:
            fn(snap)
        return snap

    def _read_lobby(self) -> dict | None:
        if self.lobby is None:
            return None
        try:
            return self.lobby()
        except Exception:                 # the broker's trouble is not a reason to stop the page
            return None

    def _read_link(self) -> dict:
        """The board's link now: ``{"state", "up", ...}`` (a board without a link is always up)."""
        if self.link is None:
            return {"state": "simulated" if self.sim else "ready", "up": True}
        try:
            return dict(self.link())
        except Exception:                 # a link that cannot say is not a reason to stop the page
            return {"state": "unknown", "up": True}

    def start_pairing(self, session: Session, client: str = "?", label: str = "") -> Pairing:
        """Light a square for a new pairing (:meth:`Pairings.start`)."""
        return self.pairings.start(session, client, label)

    def observe(self, frame: RawFrame) -> None:
        """A raw frame from the sensors (:class:`~board_driver.web.board_io.WebSource`): pairing's."""
        self.pairings.observe(frame)

    def _light(self, lit: dict[int, tuple]) -> None:
        if self.sink is not None:
            self.sink.set_overlay(lit)
        self.refresh()                  # the snapshot's leds carry the pairing squares too
