"""Who is on the broker and who invites this board: the page's list of boards online and the
invitations addressed to this board (docs/remote.md, docs/web.md).

A :class:`Lobby` is one MQTT 5 connection of this board (paho, QoS 1), as the ``broker:`` section
names it. It reads the retained presence of every board (``PREFIX/+/presence``, which the club's
publisher of each board keeps: ``{"board", "online", "t"}``) and the retained invitations other
boards address to this one (``PREFIX/PEER/remote/ME/invite``, written by
:func:`.handshake.agree`; an empty payload withdraws one). Like
:class:`.transport.RemoteLink` it only moves messages; what they mean is the remote
protocol's. ``announce``: the lobby keeps this board's own presence (online, and offline by
its will) -- for a board that runs no publisher (``play --web``).

paho's network thread only updates the tables under a lock and calls ``on_change``.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable

from board_driver.club import topics
from board_driver.club.broker import NAME_RE, BrokerConfig, board_client, connect

MAX_PAYLOAD = 64 * 1024


class Lobby:
    """The boards on the broker and the invitations to this board."""

    def __init__(self, cfg: BrokerConfig, *, announce: bool = False, on_change: Callable[[], None] | None = None,
                 log: Callable[[str], None] | None = None, client_id: str | None = None) -> None:
        self.cfg = cfg
        self.me = cfg.name
        self.announce = announce
        self.on_change = on_change
        self.log = log or (lambda line: None)
        self.client_id = client_id or f"fairyboard-lobby-{cfg.name}"
        self.connected = threading.Event()
        self._lock = threading.Lock()
        self._boards: dict[str, dict] = {}          # name -> {"board", "online", "t"}
        self._invites: dict[str, dict] = {}         # peer -> its invitation (payload + "from", "received")
        self._client: Any = None

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> "Lobby":
        c = board_client(self.cfg, self.client_id, presence_of=self.me if self.announce else None)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        self._client = c
        connect(c, self.cfg)
        return self

    def close(self) -> None:
        c = self._client
        self._client = None
        if c is None:
            return
        try:
            if self.announce and self.connected.is_set():
                info = c.publish(topics.presence(self.cfg.prefix, self.me),
                                 json.dumps({"board": self.me, "online": False, "t": time.time()}), qos=1, retain=True)
                info.wait_for_publish(timeout=1.0)
        except (RuntimeError, ValueError):
            pass
        finally:
            c.disconnect()
            c.loop_stop()

    # -- paho's thread -------------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if reason_code.is_failure:
            self.log(f"lobby: the broker refused board {self.me}: {reason_code}")
            return
        client.subscribe([(f"{self.cfg.prefix}/+/presence", 1),
                          (f"{self.cfg.prefix}/+/remote/{self.me}/invite", 1)])
        if self.announce:
            client.publish(topics.presence(self.cfg.prefix, self.me),
                           json.dumps({"board": self.me, "online": True, "t": time.time()}), qos=1, retain=True)
        self.connected.set()
        self._changed()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties=None) -> None:
        self.connected.clear()
        self._changed()

    def _on_message(self, client, userdata, msg) -> None:
        if len(msg.payload) > MAX_PAYLOAD:
            return
        parts = msg.topic.split("/")
        if len(parts) == 3 and parts[0] == self.cfg.prefix and parts[2] == "presence" and NAME_RE.match(parts[1]):
            board = parts[1]
            try:
                p = json.loads(msg.payload) if msg.payload else {"online": False}
                online = bool(p.get("online"))
                t = p.get("t") if isinstance(p.get("t"), (int, float)) else None
            except (ValueError, AttributeError, TypeError, RecursionError):
                return
            with self._lock:
                self._boards[board] = {"board": board, "online": online, "t": t}
            self._changed()
            return
        parsed = topics.parse_remote(self.cfg.prefix, msg.topic)
        if parsed is None:
            return
        sender, receiver, kind, game = parsed
        if receiver != self.me or kind != "invite" or game is not None or not NAME_RE.match(sender):
            return
        invite = None
        if msg.payload:
            try:
                p = json.loads(msg.payload)
            except (ValueError, RecursionError):
                return
            if isinstance(p, dict) and isinstance(p.get("game"), str) and isinstance(p.get("variant"), str) \
                    and p.get("side") in ("white", "black"):
                invite = dict(p, **{"from": sender, "received": time.time()})
        with self._lock:
            if invite is None:
                self._invites.pop(sender, None)     # withdrawn (or answered)
            else:
                self._invites[sender] = invite
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:           # a listener's trouble never stops the network thread
                pass

    # -- any thread ----------------------------------------------------------------------------
    def boards(self) -> list[dict]:
        """Every other board whose presence the broker keeps, by name: ``{"board", "online",
        "t"}`` (``t``: when it said so, the board's clock, or None)."""
        with self._lock:
            return [dict(b) for name, b in sorted(self._boards.items()) if name != self.me]

    def invitations(self) -> list[dict]:
        """The invitations standing for this board, oldest first."""
        with self._lock:
            return sorted((dict(p) for p in self._invites.values()), key=lambda p: p["received"])

    def invitation(self, peer: str) -> dict | None:
        with self._lock:
            p = self._invites.get(peer)
            return dict(p) if p is not None else None

    def forget(self, peer: str) -> None:
        """An invitation answered here: no longer listed (the inviter withdraws it too)."""
        with self._lock:
            self._invites.pop(peer, None)
        self._changed()

    def sender(self, peer: str) -> "PeerSender":
        """What :func:`.handshake.decline` sends through (a link's ``send``)."""
        return PeerSender(self, peer)

    def publish(self, topic: str, payload: dict | None, *, retain: bool = False) -> bool:
        c = self._client
        if c is None:
            return False
        data = b"" if payload is None else json.dumps(payload, separators=(",", ":")).encode()
        return c.publish(topic, data, qos=1, retain=retain).rc == 0


class PeerSender:
    """The lobby's connection as the remote protocol's link to one peer (``send`` only)."""

    def __init__(self, lobby: Lobby, peer: str) -> None:
        self.lobby = lobby
        self.me = lobby.me
        self.peer = peer

    def send(self, kind: str, payload: dict | None, *, game: str | None = None, retain: bool = False) -> bool:
        cfg = self.lobby.cfg
        return self.lobby.publish(topics.remote(cfg.prefix, self.me, self.peer, kind, game), payload, retain=retain)
