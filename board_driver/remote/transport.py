"""The broker link of a remote game: two boards, one game (docs/remote.md).

A :class:`RemoteLink` is one MQTT 5 connection (paho, QoS 1) of this board, as the club's
``broker:`` section names it, to the board it plays against. It only moves messages: what they
mean is :mod:`board_driver.remote.side`'s. Everything it says goes under this board's own
name and names the peer (``PREFIX/ME/remote/PEER/...``); it hears what the peer addresses to it
(``PREFIX/PEER/remote/ME/...``) and nothing from any other board.

paho's network thread only puts what arrives on a queue; the session takes it from there on its
own thread (:meth:`RemoteLink.drain`), so the loop never waits for the network.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from typing import Any, Callable

from board_driver.club import topics
from board_driver.club.broker import BrokerConfig, board_client, connect

MAX_PAYLOAD = 256 * 1024        # an action list of a long game; anything bigger is not the peer's


class RemoteLink:
    """This board's connection for a remote game against ``peer``."""

    def __init__(self, cfg: BrokerConfig, peer: str, *, log: Callable[[str], None] | None = None,
                 client_id: str | None = None) -> None:
        self.cfg = cfg
        self.me = cfg.name
        self.peer = peer
        self.log = log or (lambda line: None)
        self.client_id = client_id or f"fairyboard-remote-{cfg.name}"
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()    # (kind, game, payload, received_at)
        self.connected = threading.Event()
        self.peer_online: bool | None = None
        self.wake: Callable[[], None] | None = None            # called when something arrives
        self._client: Any = None
        self._said_lost = False

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> "RemoteLink":
        c = board_client(self.cfg, self.client_id, reconnect=(0.2, 4))
        c.max_inflight_messages_set(100)
        c.max_queued_messages_set(0)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        self._client = c
        connect(c, self.cfg)
        return self

    def close(self) -> None:
        c = self._client
        self._client = None                 # a disconnection from here on is ours: not said
        if c is not None:
            try:
                c.disconnect()
            finally:
                c.loop_stop()
            self._client = None

    # -- paho's thread ---------------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if reason_code.is_failure:
            self.log(f"remote: the broker refused board {self.me}: {reason_code}")
            return
        client.subscribe([(topics.remote_inbox(self.cfg.prefix, self.me), 1),
                          (topics.presence(self.cfg.prefix, self.peer), 1)])
        if self._said_lost:
            self.log(f"remote: the broker is back; catching up with {self.peer}")
        self._said_lost = False
        self.connected.set()
        self._put("connected", None, {})

    def _on_disconnect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if self.connected.is_set() and self._client is not None:   # not a close()
            self._said_lost = True
            self.log(f"remote: lost the broker ({reason_code}); the moves wait in the journal")
        self.connected.clear()

    def _on_message(self, client, userdata, msg) -> None:
        if msg.topic == topics.presence(self.cfg.prefix, self.peer):
            try:
                self.peer_online = bool(json.loads(msg.payload).get("online"))
            except (ValueError, AttributeError, TypeError):
                return
            self._put("presence", None, {"online": self.peer_online})
            return
        parsed = topics.parse_remote(self.cfg.prefix, msg.topic)
        if parsed is None or len(msg.payload) > MAX_PAYLOAD:
            return
        sender, receiver, kind, game = parsed
        if sender != self.peer or receiver != self.me:
            return                          # another board's word: not for this game
        if not msg.payload:
            self._put(kind, game, None)     # a retained message cleared
            return
        try:
            payload = json.loads(msg.payload)
        except (ValueError, RecursionError):
            return
        if isinstance(payload, dict):
            self._put(kind, game, payload)

    def _put(self, kind: str, game: str | None, payload) -> None:
        self.inbox.put((kind, game, payload, time.time()))
        w = self.wake
        if w is not None:
            w()

    # -- the session's thread --------------------------------------------------------------------
    def pending(self) -> bool:
        return not self.inbox.empty()

    def drain(self) -> list[tuple]:
        out = []
        while True:
            try:
                out.append(self.inbox.get_nowait())
            except queue.Empty:
                return out

    def send(self, kind: str, payload: dict | None, *, game: str | None = None, retain: bool = False) -> bool:
        """Publish to the peer (QoS 1). False when the link is down: the caller sends it again
        once the link is back (everything that matters is in the journal)."""
        c = self._client
        if c is None:
            return False
        data = b"" if payload is None else json.dumps(payload, separators=(",", ":")).encode()
        info = c.publish(topics.remote(self.cfg.prefix, self.me, self.peer, kind, game), data, qos=1, retain=retain)
        return info.rc == 0

    def wait(self, kinds: set[str], timeout: float, stop: Callable[[], bool] = lambda: False):
        """The first message of one of ``kinds`` within ``timeout`` (others are put aside and
        returned in ``self.aside``): the handshake's, before any game is open."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and not stop():
            try:
                item = self.inbox.get(timeout=min(0.1, max(0.0, end - time.monotonic())))
            except queue.Empty:
                continue
            if item[0] in kinds:
                return item
        return None
