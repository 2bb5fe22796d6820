"""The recorder: subscribes to every board, stores every record once, asks for what is missing.

- Records arrive on paho's network thread and are handed to a writer thread, which stores each
  batch in one transaction and only then acknowledges the messages to the broker (paho's manual
  acknowledgement): a recorder killed mid-batch has acknowledged nothing it did not store, and
  its persistent session (``clean_session`` off, a fixed client id) makes the broker keep what
  arrives while it is away.
- Gaps: a record whose seq is above the game's contiguous count, or a board's state saying it
  has more than is stored, schedules a re-send request ``{"game", "from"}`` to that board after
  a short grace (the missing records may just be in flight); repeated while the gap lasts.
- After every (re)connection, to the same broker or a restarted one that forgot everything, the
  recorder asks every board for each unfinished game's records past what it holds: a board
  answers with what it has, or with nothing.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from board_driver.club import topics
from board_driver.club.broker import Tls
from board_driver.club.store import Progress, RecorderStore

if TYPE_CHECKING:       # pragma: no cover
    import paho.mqtt.client as mqtt


@dataclass(frozen=True)
class RecorderConfig:
    host: str = "127.0.0.1"
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: Tls | None = None
    prefix: str = "fairyboard"
    client_id: str = "fairyboard-recorder"
    keepalive: int = 15
    grace: float = 1.5            # seconds before a gap becomes a re-send request
    retry: float = 5.0            # seconds between requests for the same gap


class Recorder:
    def __init__(self, cfg: RecorderConfig, store: RecorderStore, *, log: Callable[[str], None] | None = None) -> None:
        self.cfg = cfg
        self.store = store
        self.log = log or (lambda line: None)
        self._in: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._client: mqtt.Client | None = None
        self._writer: threading.Thread | None = None
        self._checker: threading.Thread | None = None
        self._due: dict[tuple[str, str], float] = {}      # game -> when to check it for a gap
        self._asked: dict[tuple[str, str], tuple[int, float]] = {}   # game -> (from, when) last request
        self._due_lock = threading.Lock()
        self.connected = threading.Event()
        self._gen = 0                     # the connection a message came on: acknowledged on that one only
        self.stored = 0
        self.requests = 0
        self.on_stored: Callable[[list[tuple[str, str, int, float]]], None] | None = None   # benchmarks

    # -- life -------------------------------------------------------------------------------
    def start(self) -> "Recorder":
        import paho.mqtt.client as mqtt
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.cfg.client_id, clean_session=False,
                        protocol=mqtt.MQTTv311, manual_ack=True)
        if self.cfg.username:
            c.username_pw_set(self.cfg.username, self.cfg.password)
        if self.cfg.tls is not None:
            c.tls_set(ca_certs=self.cfg.tls.ca, certfile=self.cfg.tls.cert, keyfile=self.cfg.tls.key)
        c.reconnect_delay_set(0.5, 8)     # type: ignore[arg-type]  # paho annotates int; any number of seconds works
        c.max_inflight_messages_set(1000)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        self._client = c
        self._writer = threading.Thread(target=self._write_loop, name="recorder-writer", daemon=True)
        self._checker = threading.Thread(target=self._check_loop, name="recorder-gaps", daemon=True)
        self._writer.start()
        self._checker.start()
        c.connect_async(self.cfg.host, self.cfg.port, keepalive=self.cfg.keepalive)
        c.loop_start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._in.put(None)
        if self._writer is not None:
            self._writer.join(5)
        if self._checker is not None:
            self._checker.join(5)
        if self._client is not None:
            self._client.disconnect()
            self._client.loop_stop()

    # -- paho's thread ----------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if reason_code.is_failure:
            self.log(f"recorder: the broker {self.cfg.host}:{self.cfg.port} refused the recorder: {reason_code}")
            return
        self._gen += 1
        client.subscribe([(t, 1) for t in topics.subscriptions(self.cfg.prefix)])
        self.connected.set()
        self.log(f"recorder: connected to {self.cfg.host}:{self.cfg.port}")
        self._in.put(("reconnected",))

    def _on_disconnect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if self.connected.is_set():
            self.log(f"recorder: lost the broker ({reason_code}); reconnecting")
        self.connected.clear()

    def _on_message(self, client, userdata, msg) -> None:
        self._in.put(("msg", msg.topic, msg.payload, msg.mid, msg.qos, self._gen))

    # -- the writer -------------------------------------------------------------------------
    def _write_loop(self) -> None:
        while not self._stop.is_set():
            try:
                first = self._in.get(timeout=0.5)
            except queue.Empty:
                continue
            batch = [first]
            while len(batch) < 2000:
                try:
                    batch.append(self._in.get_nowait())
                except queue.Empty:
                    break
            delay = 0.5
            while True:
                try:
                    self._handle(batch)
                    break
                except Exception as exc:     # the store failed (disk full, locked): unacknowledged, retry
                    self.log(f"recorder: could not store a batch: {type(exc).__name__}: {exc}; retrying")
                    if self._stop.wait(delay):
                        return
                    delay = min(delay * 2, 10.0)

    def _handle(self, batch: list) -> None:
        records: list[tuple] = []
        acks: list[tuple[int, int]] = []
        now = time.time()
        reconnected = False
        for item in batch:
            if item is None:
                continue
            if item[0] == "reconnected":
                reconnected = True
                continue
            _, topic, payload, mid, qos, gen = item
            if gen == self._gen:          # after a reconnection the broker sends it again anyway
                acks.append((mid, qos))
            parsed = topics.parse(self.cfg.prefix, topic)
            if parsed is None:
                continue
            kind, board, game = parsed
            if not payload:                  # a retained message cleared
                continue
            try:
                data = json.loads(payload)
            except ValueError:
                self.log(f"recorder: {topic}: not JSON, ignored")
                continue
            if not isinstance(data, dict):
                continue
            if kind == "record":
                seq, rec = data.get("seq"), data.get("rec")
                if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or not isinstance(rec, dict) \
                        or "type" not in rec or (seq == 0) != (rec.get("type") == "game"):
                    self.log(f"recorder: {topic}: not a journal record, ignored")
                    continue
                t = data.get("t")
                t = float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None
                records.append((board, game, seq, json.dumps(rec, separators=(",", ":")), t))
            elif kind == "state" and game is not None:     # a state topic always names its game
                seq = data.get("seq")
                if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0:
                    self._progress(self.store.note_state(board, game, seq, now=now))
            elif kind == "presence":
                self.store.note_presence(board, bool(data.get("online")), now=now)
            elif kind == "health":
                self.store.note_health(board, data, now=now)
        if records:
            touched = self.store.add_records(records, now=now)
            self.stored += len(records)
            for p in touched.values():
                self._progress(p)
            if self.on_stored is not None:
                self.on_stored([(r[0], r[1], r[2], now) for r in records])
        c = self._client
        assert c is not None            # messages arrive only on a started client
        for mid, qos in acks:
            if qos > 0:
                c.ack(mid, qos)
        if reconnected:
            for p in self.store.behind():
                self._ask(p.board, p.game, p.contig)

    # -- gaps -------------------------------------------------------------------------------
    def _progress(self, p: Progress) -> None:
        key = (p.board, p.game)
        with self._due_lock:
            if p.gap:
                self._due.setdefault(key, time.monotonic() + self.cfg.grace)
            else:
                self._due.pop(key, None)

    def _check_loop(self) -> None:
        while not self._stop.wait(0.25):
            now = time.monotonic()
            with self._due_lock:
                ready = [k for k, t in self._due.items() if t <= now]
                for k in ready:
                    self._due[k] = now + self.cfg.retry
            if not ready or not self.connected.is_set():
                continue
            behind = {(p.board, p.game): p for p in self.store.behind()}
            for key in ready:
                p = behind.get(key)
                if p is None or not p.gap:
                    with self._due_lock:
                        self._due.pop(key, None)
                    continue
                self._ask(p.board, p.game, p.contig)

    def _ask(self, board: str, game: str, frm: int) -> None:
        c = self._client
        if c is None or not self.connected.is_set():
            return
        self._asked[(board, game)] = (frm, time.monotonic())
        c.publish(topics.resend(self.cfg.prefix, board), json.dumps({"game": game, "from": frm}), qos=1)
        self.requests += 1

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(0.05)
        return predicate()
