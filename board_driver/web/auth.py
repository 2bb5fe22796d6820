"""Who may change the game from the page: the tokens granted to browsers and scripts
(:class:`TokenStore`, kept as hashes) and the growing waits after wrong passwords
(:class:`LoginLimiter`, ``POST /api/login``). docs/web.md, *Security*."""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from board_driver.connections import client_key as client_key   # who a request comes from (both pages use it)

TOKEN_DAYS = 30                     # a token not used for 30 days expires (each use restarts the 30 days)
TOKEN_SECONDS = TOKEN_DAYS * 24 * 3600
TOKEN_USE_WRITE_S = 3600.0          # a token's last use is written to the file at most hourly


@dataclass
class Device:
    """A token granted to a browser or a script, as the owner sees it (never the token itself)."""

    id: str                         # a short id to name it by (revoke)
    hash: str                       # SHA-256 of the token
    label: str = ""                 # what asked for it: "Chrome on Android (192.168.1.23)"
    via: str = "pairing"            # pairing | password
    created: float = 0.0            # time.time() seconds
    used: float = 0.0               # the last request that carried it

    def use(self, now: float) -> None:
        """A request carried the token now: its 30 days start again."""
        self.used = now

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
        d.use(now)
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
    """Password guesses: each client (:func:`~board_driver.connections.client_key`) and all clients together wait longer
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
