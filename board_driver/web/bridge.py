"""The seam between the web thread and the board loop (the session's one owner).

The web side never touches the session. It queues *jobs* -- callables taking the session --
onto the loop's command queue (the same queue the buttons put their commands on) and waits
on a future for the answer; the loop runs them between frames (see
:func:`board_driver.referee.runner.run_realtime`). After every loop step the loop calls
:meth:`WebBridge.on_update`, which builds a new snapshot when anything changed and hands it
to the web thread's listeners (the WebSocket pushes).

Pairing (proof of presence): :meth:`WebBridge.start_pairing` lights one occupied square on the
board (the LEDs only: :class:`OverlaySink`) and watches its sensor in the raw frames
(:class:`WebSource`); a lift and a put-back of that piece within 30 s grants a token.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import ipaddress
import json
import math
import os
import queue
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from board_driver.devices import SLOW, LedFrame, RawFrame
from board_driver.errors import BoardDriverError
from board_driver.referee.session import NewGameRequest
from board_driver.web.state import NOTICE_KEEP, snapshot
from engine.contract import TextEnum

PAIR_SECONDS = 30
PAIR_COLOR = (255, 255, 255)
MAX_WAITING = 3                     # pairings lit at once (a watcher cannot light the whole board)


class PairingState(TextEnum):
    """Where a pairing stands (``GET /api/pair/ID`` answers it as ``state``)."""

    WAITING = "waiting"     # for the piece on its square to be lifted and put back
    GRANTED = "granted"     # it was: the token is the browser's
    EXPIRED = "expired"     # the deadline passed first


@dataclass
class Pairing:
    id: str
    square: str
    physical: int
    sensor: int
    deadline: float                 # time.monotonic() seconds
    state: PairingState = PairingState.WAITING
    seen_open: bool = False
    token: str | None = None


class TokenStore:
    """Tokens granted to browsers and API clients (kept as hashes; optionally in a file)."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self._lock = threading.Lock()
        self._hashes: set[str] = set()
        if path is not None:
            try:
                data = json.loads(Path(path).read_text(encoding="utf-8"))
                self._hashes = {h for h in data.get("tokens", []) if isinstance(h, str)}
            except (OSError, ValueError, AttributeError):
                pass

    @staticmethod
    def _hash(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    def grant(self) -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._hashes.add(self._hash(token))
            self._save()
        return token

    def valid(self, token: str | None) -> bool:
        if not token:
            return False
        h = self._hash(token)
        with self._lock:
            return any(secrets.compare_digest(h, x) for x in self._hashes)

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"tokens": sorted(self._hashes)}), encoding="utf-8")
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError:
            pass


# -- wrong passwords: growing delays per client and in total (POST /api/login) --------------------
LOGIN_FREE = 5                  # wrong passwords a client may give before its delays begin
LOGIN_DELAY = 2.0               # the first delay (seconds); it doubles with every further wrong one
LOGIN_MAX_DELAY = 900.0         # a client waits at most 15 minutes between guesses
LOGIN_TOTAL_FREE = 20           # wrong passwords from all clients together before everyone waits
LOGIN_TOTAL_MAX_DELAY = 300.0   # ... at most 5 minutes between any two guesses
LOGIN_FORGET = 3600.0           # a count with no wrong password for an hour starts again from 0
LOGIN_KEYS = 4096               # clients remembered at most (the oldest forgotten first)


class Backoff:
    """Failures counted per key: after the first ``free`` each one makes the key wait, ``first``
    seconds, doubling with every further failure up to ``cap``. ``clock`` gives seconds."""

    def __init__(self, free: int, first: float, cap: float, *, forget: float = LOGIN_FORGET,
                 clock: Callable[[], float] = time.monotonic, keys: int = LOGIN_KEYS):
        self.free, self.first, self.cap, self.forget, self.clock, self.keys = free, first, cap, forget, clock, keys
        self._lock = threading.Lock()
        self._keys: dict[str, tuple[int, float, float]] = {}      # key -> (failures, last failure, until)

    def _entry(self, key: str, now: float) -> tuple[int, float, float]:
        e = self._keys.get(key)
        if e is None or (now - e[1] > self.forget and now >= e[2]):
            return (0, now, now)
        return e

    def wait(self, key: str) -> float:
        """Seconds ``key`` must wait before its next try (0: it may try now)."""
        now = self.clock()
        with self._lock:
            return max(0.0, self._entry(key, now)[2] - now)

    def delay(self, failures: int) -> float:
        """The wait after the ``failures``-th failure in a row."""
        if failures < self.free:
            return 0.0
        return min(self.cap, self.first * 2 ** min(failures - self.free, 64))

    def failed(self, key: str) -> float:
        """One more failure of ``key``; returns the wait it now has."""
        now = self.clock()
        with self._lock:
            n = self._entry(key, now)[0] + 1
            wait = self.delay(n)
            self._keys.pop(key, None)
            self._keys[key] = (n, now, now + wait)
            while len(self._keys) > self.keys:                  # the oldest first (insertion order)
                del self._keys[next(iter(self._keys))]
            return wait

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._keys.pop(key, None)


class LoginLimiter:
    """Password guesses: each client (:func:`client_key`) and all clients together wait longer
    after every wrong password past their free ones; a try while waiting is refused unchecked."""

    TOTAL = "*"

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clients = Backoff(LOGIN_FREE, LOGIN_DELAY, LOGIN_MAX_DELAY, clock=clock)
        self.total = Backoff(LOGIN_TOTAL_FREE, LOGIN_DELAY, LOGIN_TOTAL_MAX_DELAY, clock=clock)

    def wait(self, client: str) -> float:
        return max(self.clients.wait(client), self.total.wait(self.TOTAL))

    def retry_after(self, client: str) -> int:
        """Whole seconds for ``Retry-After`` (0: may try now)."""
        return math.ceil(self.wait(client))

    def failed(self, client: str) -> None:
        self.clients.failed(client)
        self.total.failed(self.TOTAL)

    def succeeded(self, client: str) -> None:
        self.clients.succeeded(client)


def client_key(address: str | None) -> str:
    """Who a request comes from, for limits: the IPv4 address, an IPv6 address's /64 (one
    machine picks new addresses within its /64 at will), an IPv4-mapped IPv6 as IPv4."""
    if not address:
        return "?"
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


class OverlaySink:
    """An LED sink that adds the pairing square on top of the session's frames."""

    def __init__(self, inner):
        self.inner = inner
        self.led_count = inner.led_count
        self.base: LedFrame | None = None
        self.overlay: dict[int, tuple] = {}

    def show(self, frame: LedFrame) -> None:
        self.base = frame
        self.refresh()

    def refresh(self) -> None:
        if self.base is None:
            return
        if not self.overlay:
            self.inner.show(self.base)
            return
        colors, blink = list(self.base.colors), list(self.base.blink)
        for p, (c, b) in self.overlay.items():
            if 0 <= p < len(colors):
                colors[p], blink[p] = c, b
        self.inner.show(LedFrame(tuple(colors), tuple(blink)))

    def set_overlay(self, overlay: dict[int, tuple]) -> None:
        if overlay != self.overlay:
            self.overlay = dict(overlay)
            self.refresh()

    def close(self) -> None:
        self.inner.close()


class WebSource:
    """A sensor source that lets the bridge see raw frames (pairing) and wake the loop at once
    when a job is queued (the simulated board has no scan to wait on)."""

    def __init__(self, inner, bridge: WebBridge, *, wakeable: bool):
        self.inner = inner
        self.bridge = bridge
        self.wakeable = wakeable
        self.sensor_count = inner.sensor_count

    def read(self, timeout: float) -> RawFrame | None:
        if self.wakeable:
            frame = self.inner.read(0.0)
            if frame is None:
                self.bridge.wake.wait(timeout)
                self.bridge.wake.clear()
                frame = self.inner.read(0.0)
        else:
            frame = self.inner.read(timeout)
        if frame is not None:
            self.bridge.observe(frame)
        return frame

    def close(self) -> None:
        self.inner.close()


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

    def __post_init__(self) -> None:
        self.wake = threading.Event()
        self.board = None                  # the simulated board, when there is one (loop thread)
        self.sink: OverlaySink | None = None
        self.layout = None
        self._lock = threading.Lock()
        self._snapshot: dict | None = None
        self._version = 0
        self._key: tuple | None = None
        self._dirty = True
        self._notices: list[dict] = []
        self._notice_n = 0
        self._listeners: list[Callable[[dict], None]] = []
        self._pairings: dict[str, Pairing] = {}
        self._session_id: int | None = None
        # which run of the server a snapshot comes from: versions count from 1 again after a
        # restart, so a page compares versions only within one run
        self.run = f"{int(time.time() * 1000):x}-{secrets.token_hex(3)}"
        self.published_at: float | None = None      # monotonic time of the last publish
        self._link: dict = {}

    # -- web thread ---------------------------------------------------------------------------
    def call(self, fn: Callable[[Any], Any], *, changes: bool = True) -> concurrent.futures.Future:
        """Run ``fn(session)`` in the board loop; the future has its result (or exception).
        ``changes=False``: a read that changes nothing (no new snapshot for it)."""
        fut: concurrent.futures.Future = concurrent.futures.Future()

        def job(session) -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                result = fn(session)
            except NewGameRequest as req:
                req.reply = fut         # the game host answers once the new game is on disk, or refused
                self._dirty = True
                raise
            except BaseException as exc:       # handed to the waiting request, never lost
                fut.set_exception(exc)
                self._dirty = self._dirty or changes
                return
            self._dirty = self._dirty or changes
            fut.set_result(result)
        self.commands.put(job)
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
        with self._lock:
            return self._pairings.get(pid)

    # -- loop thread ----------------------------------------------------------------------------
    def attach(self, session, *, board=None, sink: OverlaySink | None = None) -> None:
        """A (new) session and its devices: the next update publishes it."""
        self.board = board
        if sink is not None:
            self.sink = sink
        self.layout = session.layout
        self._dirty = True

    def notice(self, line: str) -> None:
        self._notice_n += 1
        self._notices.append({"n": self._notice_n, "text": line})
        del self._notices[:-NOTICE_KEEP]
        self._dirty = True

    def on_update(self, session) -> None:
        """Called by the loop after every step: expire pairings, publish when anything changed."""
        self._expire()
        self._link = self._read_link()
        key = (id(session), session.leds, id(session.verdict), session.occupancy, len(session.game.history),
               session.recover, self._link.get("state"), self._link.get("up"))
        if key == self._key and not self._dirty:
            return
        self.publish(session, key)

    def publish(self, session, key: tuple | None = None) -> dict:
        self._key = key
        self._dirty = False
        self._version += 1
        if key is None:
            self._link = self._read_link()
        snap = snapshot(session, sim=self.sim, version=self._version, notices=list(self._notices),
                        extra={"run": self.run, "link": self._link, **self.extra})
        with self._lock:
            self._snapshot = snap
            listeners = list(self._listeners)
        self.published_at = time.monotonic()
        for fn in listeners:
            fn(snap)
        return snap

    def _read_link(self) -> dict:
        """The board's link now: ``{"state", "up", ...}`` (a board without a link is always up)."""
        if self.link is None:
            return {"state": "simulated" if self.sim else "ready", "up": True}
        try:
            return dict(self.link())
        except Exception:                 # a link that cannot say is not a reason to stop the page
            return {"state": "unknown", "up": True}

    def start_pairing(self, session) -> Pairing:
        """Light one occupied square; a lift and put-back of its piece within 30 s pairs."""
        g = session.game
        pm = g.piece_map()
        layout = session.layout
        squares = [sq for sq in sorted(pm) if session.occupancy >> sq & 1 and layout.physical(sq) >= 0]
        if not squares:
            raise PairingError("pairing needs a piece on the board: put one on any square, then ask again")
        with self._lock:
            waiting = sum(1 for p in self._pairings.values() if p.state is PairingState.WAITING)
        if waiting >= MAX_WAITING:
            raise PairingError(f"{waiting} pairings are already waiting: lift and put back a lit piece, "
                               f"or ask again when they ran out ({PAIR_SECONDS} s)")
        sq = secrets.choice(squares)
        p = Pairing(secrets.token_urlsafe(12), g.geometry.name(sq), layout.physical(sq), layout.sensor_of(sq),
                    time.monotonic() + PAIR_SECONDS)
        with self._lock:
            self._pairings[p.id] = p
        self._show_overlay()
        return p

    def observe(self, frame: RawFrame) -> None:
        """A raw frame: does it complete a pairing (the lit piece lifted, then put back)?"""
        granted = False
        with self._lock:
            waiting = [p for p in self._pairings.values() if p.state is PairingState.WAITING]
        for p in waiting:
            if p.sensor not in frame.closed:
                p.seen_open = True
            elif p.seen_open:
                p.token = self.tokens.grant()
                p.state = PairingState.GRANTED
                granted = True
        if granted:
            self.notice("A browser is paired with the board.")
            self._show_overlay()

    def _expire(self) -> None:
        now = time.monotonic()
        changed = False
        with self._lock:
            for pid, p in list(self._pairings.items()):
                if p.state is PairingState.WAITING and now > p.deadline:
                    p.state = PairingState.EXPIRED
                    changed = True
                if now > p.deadline + 300:
                    del self._pairings[pid]
        if changed:
            self._show_overlay()

    def _show_overlay(self) -> None:
        if self.sink is None:
            return
        with self._lock:
            lit = {p.physical: (PAIR_COLOR, SLOW) for p in self._pairings.values() if p.state is PairingState.WAITING}
        self.sink.set_overlay(lit)


class PairingError(BoardDriverError, ValueError):
    """A pairing cannot start now."""
