"""The ``broker:`` section of a board profile, and the recorder's broker settings.

::

    broker:
      host: club.local        # the only two keys a board needs
      name: board-07          # the board's name in topics and its broker user name
      port: 1883              # default 1883, 8883 with tls
      username: board-07      # default: name (anything else is refused: the ACL wants the name)
      password: secret        # or password_file: /etc/fairyboard/broker.pass (first line)
      tls: false              # true (system CAs) or {ca: FILE, cert: FILE, key: FILE}
      keepalive: 15           # seconds: how soon a silent link counts as cut
      prefix: fairyboard      # topic prefix
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from board_driver.errors import ConfigError
from board_driver.hardware._check import Section

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True, slots=True)
class Tls:
    ca: str | None = None
    cert: str | None = None
    key: str | None = None


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    host: str
    name: str
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: Tls | None = None
    keepalive: int = 15
    prefix: str = "fairyboard"

    @classmethod
    def from_dict(cls, data: Any, source: str) -> BrokerConfig:
        sec = Section(data, source, "broker")
        sec.only(("host", "port", "name", "username", "password", "password_file", "tls", "keepalive", "prefix"))
        host = sec.get("host")
        if not isinstance(host, str) or not host.strip():
            raise sec.fail("host", host, "must be the broker's host name or address")
        why = host_problem(host.strip())
        if why is not None:
            raise sec.fail("host", _short(host), why)
        name = check_name(sec.get("name"), sec, "name")
        tls = tls_of(sec)
        port = sec.integer("port", 8883 if tls else 1883, 1, 65535)
        username = sec.get("username", None)
        if username is not None and not isinstance(username, str):
            raise sec.fail("username", username, "must be text")
        if username and username != name:       # the ACL's pattern: fairyboard/%u/# for user %u
            raise sec.fail("username", username, f"must be the board's name {name!r} (or left out): the club's "
                                                 f"ACL lets a board publish only under its own user name")
        password = password_of(sec)
        prefix = check_name(sec.get("prefix", "fairyboard"), sec, "prefix")
        return cls(host=host.strip(), name=name, port=port, username=username or name, password=password,
                   tls=tls, keepalive=sec.integer("keepalive", 15, 2, 3600), prefix=prefix)


def check_name(v: Any, sec: Section, key: str) -> str:
    if not isinstance(v, str) or not NAME_RE.match(v):
        raise sec.fail(key, v, "must be 1-64 letters, digits, '-', '_' or '.' (no '/', '+', '#' or spaces)")
    return v


def tls_of(sec: Section) -> Tls | None:
    t = sec.get("tls", False)
    if t is False or t is None:
        return None
    if t is True:
        return Tls()
    ts = sec.section("tls")
    ts.only(("ca", "cert", "key"))
    vals = {}
    for k in ("ca", "cert", "key"):
        v = ts.get(k, None)
        if v is not None:
            if not isinstance(v, str) or not Path(v).exists():
                raise ts.fail(k, v, "no such file")
        vals[k] = v
    if bool(vals["cert"]) != bool(vals["key"]):
        raise ts.fail("cert", vals["cert"], "a client certificate needs both cert and key")
    return Tls(**vals)


def password_of(sec: Section) -> str | None:
    if sec.has("password") and sec.has("password_file"):
        raise sec.fail("password_file", sec.get("password_file"), "give password or password_file, not both")
    pw = sec.get("password", None)
    if pw is not None:
        if not isinstance(pw, (str, int)) or isinstance(pw, bool):
            raise sec.fail("password", "***", "must be text")
        return str(pw)
    pf = sec.get("password_file", None)
    if pf is None:
        return None
    try:
        text = Path(str(pf)).read_text(encoding="utf-8")
    except OSError as exc:
        raise sec.fail("password_file", pf, f"cannot read: {exc.strerror or exc}") from None
    line = text.splitlines()[0].strip() if text.strip() else ""
    if not line:
        raise sec.fail("password_file", pf, "is empty")
    return line


def broker_of(data: Mapping[str, Any] | None, source: str) -> BrokerConfig | None:
    """The profile's ``broker:`` section, validated; None when the profile has none."""
    if not data or data.get("broker") is None:
        return None
    return BrokerConfig.from_dict(data.get("broker"), source)


MAX_HOST = 253          # the longest DNS name (RFC 1035), each label at most 63 characters
_LABEL_RE = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")


def _short(text: str, n: int = 60) -> str:
    """``text`` as a message quotes it: at most ``n`` characters (a 300-character name is not echoed)."""
    return text if len(text) <= n else f"{text[:n]}... ({len(text)} characters)"


def host_problem(host: str) -> str | None:
    """Why ``host`` is no host name or address (None: it is one): an IPv4 or IPv6 address, or a
    DNS name of at most 253 characters in labels of 1 to 63 (an internationalised name is
    checked as its IDNA form)."""
    import ipaddress
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    rule = f"a host name is labels of 1 to 63 letters, digits and '-' joined by dots, {MAX_HOST} characters at most"
    if len(host) > MAX_HOST:
        return f"not a host name: {len(host)} characters ({rule})"
    name = host[:-1] if host.endswith(".") else host
    labels = name.split(".")
    if any(not label for label in labels):
        return f"not a host name: an empty label ({rule})"
    long = next((label for label in labels if len(label) > 63), None)
    if long is not None:
        return f"not a host name: a label of {len(long)} characters ({rule})"
    try:
        ascii_name = name.encode("idna").decode("ascii")
    except UnicodeError:
        return f"not a host name: not valid IDNA ({rule})"
    if len(ascii_name) > MAX_HOST or not all(_LABEL_RE.match(label) for label in ascii_name.split(".")):
        return f"not a host name ({rule})"
    return None


def parse_address(text: str, default_port: int = 1883) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT`` or ``[V6]:PORT``."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    if not host:
        raise ConfigError(f"{_short(text)!r}: no host name")
    why = host_problem(host)
    if why is not None:
        raise ConfigError(f"{_short(text)!r}: {why}")
    if not port:
        return host, default_port
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ConfigError(f"{_short(text)!r}: the port must be a number from 1 to 65535")
    return host, int(port)


def board_client(cfg: BrokerConfig, client_id: str, *, presence_of: str | None = None,
                 reconnect: tuple[float, float] = (0.5, 8)):
    """A paho MQTT 5 client for a board's connection to ``cfg`` (its user, its TLS), not yet
    connected: the caller sets its callbacks, then :func:`connect`. ``presence_of``: the board
    whose presence goes offline (retained) when this connection is cut (the broker's will).
    MQTT 5: a publish the broker refuses is acknowledged with a reason code."""
    import json

    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from board_driver.club import topics
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    if cfg.username:
        c.username_pw_set(cfg.username, cfg.password)
    if cfg.tls is not None:
        c.tls_set(ca_certs=cfg.tls.ca, certfile=cfg.tls.cert, keyfile=cfg.tls.key)
    if presence_of is not None:
        c.will_set(topics.presence(cfg.prefix, presence_of),
                   json.dumps({"board": presence_of, "online": False}), qos=1, retain=True)
    c.reconnect_delay_set(*reconnect)     # type: ignore[arg-type]  # paho annotates int; any number of seconds works
    return c


def connect(client, cfg: BrokerConfig) -> None:
    """Connect in paho's own thread (and keep reconnecting)."""
    client.connect_async(cfg.host, cfg.port, keepalive=cfg.keepalive)
    client.loop_start()
