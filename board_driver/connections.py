"""Connection limits shared by the board's page (:mod:`board_driver.web.limits`) and the
recorder's page (:mod:`board_driver.club.web`): the limits and their defaults (the board
profile's ``web.limits``), who a client is, what the open-file limit leaves for sockets, and the
log that says each kind of refusal once a minute at most (docs/web.md, *Connections*)."""

from __future__ import annotations

import ipaddress
import logging
import os
import time
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping

from board_driver.errors import ConfigError

log = logging.getLogger("board_driver.web")

RESERVE_FDS = 64            # open files kept free of the page's sockets for the game and the process
MIN_CONNECTIONS = 8         # the page stays usable even under a very low open-file limit
LOG_EVERY_S = 60.0          # one line per kind of refusal at most this often


@dataclass(frozen=True, slots=True)
class WebLimits:
    """The board profile's ``web.limits`` (docs/web.md, *Connections*)."""

    connections: int = 256          # open connections in total (WebSockets included)
    per_client: int = 32            # open connections from one client
    header_timeout: float = 20.0    # s: a request's header whole, and the longest pause in its body
    keepalive_timeout: float = 75.0     # s: a connection idle between requests is closed

    @classmethod
    def from_dict(cls, data: Any, source: str) -> WebLimits:
        if data is None:
            return cls()
        names = [f.name for f in fields(cls)]
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: web.limits: {data!r}: must be a mapping of {', '.join(names)}")
        out: dict[str, Any] = {}
        for k, v in data.items():
            if k not in names:
                raise ConfigError(f"{source}: web.limits.{k}: unknown key (known: {', '.join(names)})")
            if k in ("connections", "per_client"):
                if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 100000:
                    raise ConfigError(f"{source}: web.limits.{k}: {v!r}: must be a whole number from 1 to 100000")
            elif isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.05 <= v <= 3600:
                raise ConfigError(f"{source}: web.limits.{k}: {v!r}: must be seconds from 0.05 to 3600")
            out[k] = v
        return cls(**out)


def open_files() -> tuple[int | None, int]:
    """(the soft open-file limit, or None when unlimited or unknown; the files open now)."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        limit = None if soft == resource.RLIM_INFINITY else int(soft)
    except (ImportError, OSError, ValueError):
        limit = None
    try:
        now = len(os.listdir("/proc/self/fd"))
    except OSError:
        now = 32
    return limit, now


def room_for(limits: WebLimits, files: tuple[int | None, int]) -> int:
    """The connections the page may hold: ``limits.connections``, cut down to the open-file
    limit less the files open now and :data:`RESERVE_FDS` (at least :data:`MIN_CONNECTIONS`)."""
    limit, now = files
    if limit is None:
        return limits.connections
    return max(MIN_CONNECTIONS, min(limits.connections, limit - now - RESERVE_FDS))


class RefusalLog:
    """One log line per kind of refusal at once, then the count of the same kind at most once a
    minute (said at the next refusal or :meth:`flush` after the minute)."""

    def __init__(self, logger: logging.Logger = log, every: float = LOG_EVERY_S,
                 clock: Callable[[], float] = time.monotonic):
        self.log = logger
        self.every = every
        self.clock = clock
        self._said: dict[str, float] = {}               # kind -> when its last line was said
        self._counted: dict[str, tuple[int, str]] = {}  # kind -> (events since, the last one's words)

    def note(self, kind: str, text: str) -> None:
        now = self.clock()
        said = self._said.get(kind)
        if said is not None and now - said < self.every:
            n, _ = self._counted.get(kind) or (0, "")
            self._counted[kind] = (n + 1, text)
            return
        self._said[kind] = now
        n, _ = self._counted.pop(kind, (0, ""))
        if n:
            self.log.warning("%s (and %d more like this in the %d s before)", text, n, round(now - (said or now)))
        else:
            self.log.warning("%s (more like this are counted and said at most once a minute)", text)

    def flush(self, *, final: bool = False) -> None:
        """Say the counts of the kinds whose minute is over (``final``: of every kind, as the
        page stops)."""
        now = self.clock()
        for kind, (n, text) in list(self._counted.items()):
            said = self._said.get(kind, now)
            if final or now - said >= self.every:
                del self._counted[kind]
                self._said[kind] = now
                self.log.warning("%d more like this in the last %d s; the last: %s", n, round(now - said), text)


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
