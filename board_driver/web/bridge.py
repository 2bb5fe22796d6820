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

from board_driver.devices import SLOW, LedImage, RawFrame
from board_driver.errors import BoardDriverError
from board_driver.referee.commands import HandOver
from board_driver.web.live_eval import LiveEval
from board_driver.web.state import NOTICE_KEEP, snapshot
from engine.contract import TextEnum

PAIR_SECONDS = 30
PAIR_COLOR = (255, 255, 255)
MAX_WAITING = 3                     # pairings lit at once (a watcher cannot light the whole board)
PAIR_PER_CLIENT = 3                 # pairings of one client that may run out unanswered ...
PAIR_WINDOW = 600.0                 # ... within 10 minutes (a client cannot keep a square lit for good)
TOKEN_DAYS = 30                     # a token not used for 30 days expires (each use restarts the 30 days)
TOKEN_SECONDS = TOKEN_DAYS * 24 * 3600
TOKEN_USE_WRITE_S = 3600.0          # a token's last use is written to the file at most hourly


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
    token: str | None = None
    client: str = "?"               # who asked (client_key): one waiting pairing each
    label: str = ""                 # the device, as the token list names it
    lifted: frozenset[int] | None = None    # the other closed sensors when the piece was lifted
    spoiled: bool = False           # something else changed on the board while it was off

    @property
    def seen_open(self) -> bool:
        return self.lifted is not None


@dataclass
class Device:
    """A token granted to a browser or a script, as the owner sees it (never the token itself)."""

    id: str                         # a short id to name it by (revoke)
    hash: str                       # SHA-256 of the token
    label: str = ""                 # what asked for it: "Chrome on Android (192.168.1.23)"
    via: str = "pairing"            # pairing | password
    created: float = 0.0            # time.time() seconds
    used: float = 0.0               # the last request that carried it

    def public(self, ttl: float) -> dict:
        return {"id": self.id, "label": self.label, "via": self.via, "created": _iso(self.created),
                "last_used": _iso(self.used), "expires": _iso(self.used + ttl)}


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class TokenStore:
    """Tokens granted to browsers and API clients, kept as hashes (optionally in a file, mode
    0600). A token unused for ``ttl`` seconds (30 days) expires; every use restarts its time.
    The owner lists them (:meth:`devices`) and revokes them (:meth:`revoke`); a change of the
    file by another process (``fairyboard web forget``) is read before the next check."""

    def __init__(self, path: Path | None = None, *, clock: Callable[[], float] = time.time,
                 ttl: float = TOKEN_SECONDS):
        self.path = Path(path) if path is not None else None
        self.clock = clock
        self.ttl = ttl
        self._lock = threading.Lock()
        self._devices: dict[str, Device] = {}          # hash -> device
        self._written: dict[str, float] = {}           # hash -> last use as written to the file
        self._stamp: tuple | None = None
        with self._lock:
            self._load()

    @staticmethod
    def _hash(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    # -- the file ----------------------------------------------------------------------------------
    def _file_stamp(self) -> tuple | None:
        try:
            st = self.path.stat() if self.path is not None else None
        except OSError:
            return None
        return None if st is None else (st.st_mtime_ns, st.st_size, st.st_ino)

    def _load(self) -> None:
        self._stamp = self._file_stamp()
        if self.path is None:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self._devices = {}
            return
        now = self.clock()
        out: dict[str, Device] = {}
        for item in (data.get("tokens", []) if isinstance(data, dict) else []):
            if isinstance(item, str):        # the first format: hashes alone (their 30 days start now)
                out[item] = Device(item[:10], item, "a device paired before tokens expired", "unknown", now, now)
            elif isinstance(item, dict) and isinstance(item.get("hash"), str):
                try:
                    d = Device(str(item.get("id") or item["hash"][:10]), item["hash"], str(item.get("label", "")),
                               str(item.get("via", "pairing")), float(item.get("created", now)),
                               float(item.get("used", now)))
                except (TypeError, ValueError):
                    continue
                out[d.hash] = d
        self._devices = out
        self._written = {h: d.used for h, d in out.items()}

    def _reload_if_changed(self) -> None:
        if self.path is not None and self._file_stamp() != self._stamp:
            self._load()

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            data = {"version": 2, "tokens": [
                {"id": d.id, "hash": d.hash, "label": d.label, "via": d.via, "created": round(d.created, 3),
                 "used": round(d.used, 3)} for d in sorted(self._devices.values(), key=lambda d: d.created)]}
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(data, indent=1))
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
            self._written = {h: d.used for h, d in self._devices.items()}
        except OSError:
            pass
        self._stamp = self._file_stamp()

    def _expire(self, now: float) -> bool:
        old = [h for h, d in self._devices.items() if now - d.used > self.ttl]
        for h in old:
            del self._devices[h]
        return bool(old)

    # -- tokens ------------------------------------------------------------------------------------
    def grant(self, label: str = "", via: str = "pairing") -> str:
        token = secrets.token_urlsafe(24)
        now = self.clock()
        with self._lock:
            self._reload_if_changed()
            self._expire(now)
            ids = {d.id for d in self._devices.values()}
            did = secrets.token_hex(4)
            while did in ids:
                did = secrets.token_hex(4)
            h = self._hash(token)
            self._devices[h] = Device(did, h, label[:120], via, now, now)
            self._save()
        return token

    def _find(self, token: str | None) -> Device | None:
        """The token's device if it is valid now (its use noted); the lock is held."""
        if not token or len(token) > 200:
            return None
        now = self.clock()
        self._reload_if_changed()
        if self._expire(now):
            self._save()
        d = self._devices.get(self._hash(token))
        if d is None:
            return None
        d.used = now
        if now - self._written.get(d.hash, 0.0) >= TOKEN_USE_WRITE_S:
            self._save()
        return d

    def valid(self, token: str | None) -> bool:
        with self._lock:
            return self._find(token) is not None

    def device_of(self, token: str | None) -> str | None:
        """The id of the token's device (None when it is not valid)."""
        with self._lock:
            d = self._find(token)
            return d.id if d is not None else None

    def devices(self) -> list[dict]:
        """Every valid token's device, oldest first: id, label, via, created, last_used, expires."""
        with self._lock:
            self._reload_if_changed()
            if self._expire(self.clock()):
                self._save()
            return [d.public(self.ttl) for d in sorted(self._devices.values(), key=lambda d: (d.created, d.id))]

    def revoke(self, ids=None) -> int:
        """Forget the devices named by id (every one when ``ids`` is None); returns how many."""
        with self._lock:
            self._reload_if_changed()
            gone = [h for h, d in self._devices.items() if ids is None or d.id in ids]
            for h in gone:
                del self._devices[h]
            if gone or ids is None:
                self._save()
            return len(gone)


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
        self.base: LedImage | None = None
        self.overlay: dict[int, tuple] = {}

    def show(self, frame: LedImage) -> None:
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
        self.inner.show(LedImage(tuple(colors), tuple(blink)))

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
    lobby: Callable[[], dict | None] | None = None     # boards online, invitations (Invitations.status)

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
        self._pair_misses: dict[str, list[float]] = {}     # client -> when its pairings ran out unanswered
        self._last_closed: frozenset[int] | None = None    # the raw frame before (pairing's lift)
        self._session_id: int | None = None
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

        def job(session) -> None:
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

    def refresh(self) -> None:
        """Something the snapshot shows changed outside the loop (the live evaluation's figures):
        the loop publishes at its next step, woken at once on the simulated board. Any thread."""
        self._dirty = True
        self.wake.set()

    def notice(self, line: str) -> None:
        self._notice_n += 1
        self._notices.append({"n": self._notice_n, "text": line})
        del self._notices[:-NOTICE_KEEP]
        self._dirty = True

    def on_update(self, session) -> None:
        """Called by the loop after every step: expire pairings, publish when anything changed."""
        self._expire()
        self._link = self._read_link()
        self.live.follow(session)
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
                        extra={"run": self.run, "link": self._link, "eval": self.live.snapshot(),
                               "lobby": self._read_lobby(), **self.extra})
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

    def start_pairing(self, session, client: str = "?", label: str = "") -> Pairing:
        """Light one occupied square that the game's move under way does not touch; a lift and
        put-back of its piece within 30 s, with nothing else changed on the board meanwhile,
        pairs. A client with a pairing waiting gets that one again; a client whose last
        :data:`PAIR_PER_CLIENT` pairings ran out unanswered within :data:`PAIR_WINDOW` seconds
        waits until the first of them is that old."""
        self._expire()
        now = time.monotonic()
        with self._lock:
            for p in self._pairings.values():
                if p.client == client and p.state is PairingState.WAITING:
                    return p                    # one waiting pairing per client: the same one again
            misses = [t for t in self._pair_misses.get(client, []) if now - t < PAIR_WINDOW]
            if misses:
                self._pair_misses[client] = misses
            else:
                self._pair_misses.pop(client, None)
            if len(misses) >= PAIR_PER_CLIENT:
                raise PairingBusy(f"{len(misses)} pairings of this device ran out in {round(PAIR_WINDOW / 60)} "
                                  "minutes without the piece lifted: try again later", misses[0] + PAIR_WINDOW - now)
            waiting = [p for p in self._pairings.values() if p.state is PairingState.WAITING]
        if len(waiting) >= MAX_WAITING:
            raise PairingBusy(f"{len(waiting)} pairings are already waiting: lift and put back a lit piece, "
                              f"or ask again when they ran out ({PAIR_SECONDS} s)",
                              min(p.deadline for p in waiting) - now, status=400)
        g = session.game
        layout = session.layout
        lit = {p.square for p in waiting}
        squares = [sq for sq in pairing_squares(session)
                   if layout.physical(sq) >= 0 and g.geometry.name(sq) not in lit]
        if not squares:
            if not any(session.occupancy >> sq & 1 for sq in g.piece_map()):
                raise PairingError("pairing needs a piece on the board: put one on any square, then ask again")
            raise PairingError("every piece on the board takes part in the move under way (or is lit for "
                               "another pairing): ask again once the move is made")
        sq = secrets.choice(squares)
        p = Pairing(secrets.token_urlsafe(12), g.geometry.name(sq), layout.physical(sq), layout.sensor_of(sq),
                    now + PAIR_SECONDS, client=client, label=label)
        with self._lock:
            self._pairings[p.id] = p
        self._show_overlay()
        return p

    def observe(self, frame: RawFrame) -> None:
        """A raw frame: does it complete a pairing? Its piece lifted and put back, and nothing
        else on the board changed from the frame before the lift until the put-back (a capture
        on the lit square lifts the capturing piece elsewhere: it never pairs)."""
        granted = False
        closed = frozenset(frame.closed)
        before = self._last_closed
        self._last_closed = closed
        with self._lock:
            waiting = [p for p in self._pairings.values() if p.state is PairingState.WAITING]
        for p in waiting:
            if frame.gap:                       # unwatched meanwhile: what happened is not known
                p.lifted, p.spoiled = None, False
                continue
            if p.lifted is None:
                if p.sensor not in closed:      # the lift: the rest of the board must stay as it was
                    p.lifted = (before - {p.sensor}) if before is not None and p.sensor in before else closed
                    p.spoiled = closed != p.lifted
            elif p.sensor not in closed:
                if closed != p.lifted:
                    p.spoiled = True
            elif not p.spoiled and closed - {p.sensor} == p.lifted:
                p.token = self.tokens.grant(p.label or "a paired device", "pairing")
                p.state = PairingState.GRANTED
                granted = True
            else:                               # back, but after another change: a lift is needed again
                p.lifted, p.spoiled = None, False
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
                    self._pair_misses.setdefault(p.client, []).append(now)
                    if len(self._pair_misses) > 4096:      # bounded: the oldest client forgotten
                        del self._pair_misses[next(iter(self._pair_misses))]
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


class PairingBusy(PairingError):
    """A pairing cannot start yet: the client asked too often (429) or every slot is taken
    (400); ``retry_after`` seconds until it may."""

    def __init__(self, message: str, retry_after: float, status: int = 429):
        super().__init__(message)
        self.retry_after = max(1, math.ceil(retry_after))
        self.status = status


def pairing_squares(session) -> list[int]:
    """The squares a pairing may light: occupied (game and sensors), not touched by the move
    under way (lifted or placed since the position was settled, or a square of a move the board
    may be on its way to) and not one the side to move may capture. Squares that no legal action
    touches at all come first: those, when there are any, else the rest."""
    g = session.game
    pm = g.piece_map()
    occupied = [sq for sq in sorted(pm) if session.occupancy >> sq & 1]
    busy: set[int] = set()
    verdicts = [session.verdict]
    if session.tentative is not None:
        verdicts.append(session.tentative.verdict)
    for v in verdicts:
        busy |= v.lifted | v.placed
        for e in v.options + v.partial:
            for a in e.actions:
                busy |= a.lifts | a.places
        if v.fix is not None:
            busy |= v.fix.squares
    touched: set[int] = set()
    try:
        legal = list(g.legal_actions()) if session.outcome() is None else []
    except Exception:                        # a position the engine cannot list: no square is safe to guess
        legal = []
        busy |= set(occupied)
    for a in legal:
        touched |= a.lifts | a.places
        busy |= {sq for sq in a.lifts if sq in pm and pm[sq][1] != g.turn}      # the victims
    free = [sq for sq in occupied if sq not in busy]
    apart = [sq for sq in free if sq not in touched]
    return apart or free

