"""The names the board answers to (docs/web.md, *Host names*): a request's ``Host`` must be
one of them, so that a page of another site resolved to the board's address (DNS rebinding)
is refused; and which peers are this machine itself."""

from __future__ import annotations

import ipaddress
import socket
import time
from typing import Iterable
from urllib.parse import urlsplit

LOOPBACK_NAMES: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")


def is_loopback(address: str | None) -> bool:
    """Whether a peer address is this machine's loopback (127.0.0.0/8, ::1, ::ffff:127.x)."""
    try:
        ip = ipaddress.ip_address((address or "").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def host_name(header: str) -> str | None:
    """The name or address in a ``Host`` header (no port, no brackets, lower case, no final
    dot), or None when it is not a host at all."""
    text = header.strip()
    if not text or any(c in text for c in "/\\@?# \t"):
        return None
    try:
        parts = urlsplit("//" + text)
        name = parts.hostname
        parts.port                                  # a bad port is no host either
    except ValueError:
        return None
    if not name:
        return None
    return name.rstrip(".")


def machine_addresses() -> set[str]:
    """This machine's interface addresses now (IPv4 by ioctl, IPv6 from /proc, both Linux; and
    what its hostname resolves to), as normalised texts."""
    out: set[str] = set()
    try:
        import fcntl
        import struct
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _, name in socket.if_nameindex():
                try:
                    req = struct.pack("256s", name.encode()[:15])
                    out.add(socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, req)[20:24]))   # SIOCGIFADDR
                except OSError:
                    continue
    except (ImportError, OSError):
        pass
    try:
        with open("/proc/net/if_inet6", encoding="ascii") as f:
            for line in f:
                h = line.split()[0]
                out.add(str(ipaddress.IPv6Address(bytes.fromhex(h))))
    except (OSError, ValueError, IndexError):
        pass
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None):
            out.add(str(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])))
    except (OSError, ValueError):
        pass
    return out


def _norm_ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.split("%", 1)[0]))
    except ValueError:
        return None


class HostNames:
    """The names a request's ``Host`` may carry: the board's own (docs/web.md, *Host names*).
    A page of another site resolved to the board's address (DNS rebinding) carries its own
    name and is refused."""

    REFRESH_S = 10.0            # interface addresses read again at most this often (DHCP, Wi-Fi joining late)

    def __init__(self, listen_host: str = "127.0.0.1", extra: Iterable[str] = ()):
        names: set[str] = set(LOOPBACK_NAMES)
        try:
            hn = socket.gethostname().lower().rstrip(".")
            if hn:
                names |= {hn, hn.split(".")[0] + ".local"}
            fq = socket.getfqdn().lower().rstrip(".")
            if fq:
                names.add(fq)
        except OSError:
            pass
        lh = (listen_host or "").strip("[]").lower()
        if lh:                      # the listen address, as printed (0.0.0.0 reaches only this machine)
            names.add(lh)
        names |= {str(x).strip().strip("[]").lower().rstrip(".") for x in extra if str(x).strip()}
        self.names = {(_norm_ip(n) or n) for n in names}
        self._addresses: set[str] = set()
        self._read_at = float("-inf")

    def addresses(self, fresh: bool = False) -> set[str]:
        now = time.monotonic()
        if fresh and now - self._read_at >= self.REFRESH_S or self._read_at == float("-inf"):
            self._addresses = machine_addresses()
            self._read_at = now
        return self._addresses

    def allows(self, header: str | None, local: str | None = None) -> bool:
        """Whether ``header`` (a request's Host) names this board; ``local`` is the address the
        request arrived at (always one of the board's own)."""
        if header is None:
            return True             # no Host (HTTP/1.0): no browser sends such a request
        name = host_name(header)
        if name is None:
            return False
        ip = _norm_ip(name)
        if ip is None:
            return name in self.names
        if ip in self.names or (local is not None and ip == _norm_ip(local)):
            return True
        return ip in self.addresses() or ip in self.addresses(fresh=True)
