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
- Once a batch is committed, each board hears on ``PREFIX/BOARD/ack`` how many of each touched
  game's first records the store holds (``{"game", "have"}``), and again in answer to every
  state message: a board counts a record as delivered only then.
- One board cannot stop the recorder: every field of every message is checked (a payload over
  ``MAX_PAYLOAD`` bytes, a ``seq`` that is no line number, a ``t`` that is no time, a record
  that is no journal record ...); a bad message is logged (at most a line per board every
  10 s), set aside in the store's ``set_aside`` table and acknowledged, never retried. Only a
  store that fails as a whole (disk full, locked) makes a batch wait and retry; a batch that
  fails otherwise is stored message by message, and the one message that fails is set aside.
- The first body stored for a line stays: another body for it (a copy forged with the board's
  own password, say) changes nothing; it is kept in the store's ``conflicts`` and logged (the
  same limit per board), and only ``fairyboard conflicts --take ID`` puts it in the line's place.
"""

from __future__ import annotations

import json
import math
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from board_driver.club import topics
from board_driver.club.broker import Tls
from board_driver.club.store import Progress, RecorderStore
from board_driver.journal import MAX_RECORD

MAX_PAYLOAD = MAX_RECORD + 1024      # bytes in one message: a journal line and the record's envelope
MAX_SEQ = 10_000_000                 # a game's line numbers are below this
MAX_T = 2.0 ** 33                    # unix seconds (the year 2242)


class Refused(ValueError):
    """A message the recorder sets aside: what is wrong with it."""


def _show(v: Any) -> str:
    """A field's value for a log line, short whatever it is."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 18:
        return f"an integer of {v.bit_length()} bits"
    try:
        r = repr(v)
    except (RecursionError, ValueError):
        r = f"a {type(v).__name__}"
    return r if len(r) <= 40 else r[:37] + "..."


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(payload: bytes) -> Any:
    """A message's JSON (bounded, strict: no NaN or Infinity); Refused if it is not."""
    if len(payload) > MAX_PAYLOAD:
        raise Refused(f"a payload of {len(payload)} bytes (at most {MAX_PAYLOAD})")
    try:
        return json.loads(payload, parse_constant=_no_constant)
    except RecursionError:
        raise Refused("JSON nested too deeply") from None
    except ValueError as exc:                   # UnicodeDecodeError, a 5000-digit number ...
        raise Refused(f"not JSON ({str(exc)[:60]})") from None


def _seq(v: Any, what: str = "seq") -> int:
    if type(v) is not int or not 0 <= v < MAX_SEQ:
        raise Refused(f"{what} {_show(v)} is not a line number (0 to {MAX_SEQ - 1})")
    return v


def check_record(data: Any) -> tuple[int, str, float | None]:
    """A record message ``{"seq", "t"?, "rec"}`` as ``(seq, body, t)``; Refused naming the bad
    field. Other keys are ignored."""
    if not isinstance(data, dict):
        raise Refused("not a JSON object")
    seq = _seq(data.get("seq"))
    t = data.get("t")
    if t is not None:
        if type(t) not in (int, float) or not 0 <= t <= MAX_T or not math.isfinite(t):
            raise Refused(f"t {_show(t)} is not a time (unix seconds)")
        t = float(t)
    rec = data.get("rec")
    if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
        raise Refused("rec is not a journal record (an object with a type)")
    if (seq == 0) != (rec["type"] == "game"):
        raise Refused(f"a {_show(rec['type'])} record on line {seq} (line 0, and only line 0, is the game's header)")
    try:
        body = json.dumps(rec, separators=(",", ":"))
    except (RecursionError, ValueError):
        raise Refused("rec cannot be written back as JSON") from None
    if len(body) > MAX_RECORD:
        raise Refused(f"a record of {len(body)} bytes (a journal line is at most {MAX_RECORD})")
    return seq, body, t

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
        self.subscribed = threading.Event()     # the broker has acknowledged the subscriptions: nothing sent from now on is missed
        self._gen = 0                     # the connection a message came on: acknowledged on that one only
        self.stored = 0
        self.requests = 0
        self.refused = 0
        self.conflicts = 0                  # bodies heard for lines already stored with another
        self._warned: dict[str | None, tuple[int, float]] = {}
        self.on_stored: Callable[[list[tuple[str, str, int, float]]], None] | None = None   # benchmarks

    # -- life -------------------------------------------------------------------------------
    def start(self) -> "Recorder":
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.cfg.client_id, clean_session=False,
                        protocol=mqtt.MQTTv311, manual_ack=True)
        if self.cfg.username:
            c.username_pw_set(self.cfg.username, self.cfg.password)
        if self.cfg.tls is not None:
            c.tls_set(ca_certs=self.cfg.tls.ca, certfile=self.cfg.tls.cert, keyfile=self.cfg.tls.key)
        c.reconnect_delay_set(0.5, 8)     # type: ignore[arg-type]  # paho annotates int; any number of seconds works
        c.max_inflight_messages_set(1000)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_subscribe = self._on_subscribe
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

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties=None) -> None:
        self.subscribed.set()

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
            try:
                if not self._store_retrying(batch):
                    return
            except Exception as exc:        # not the store: one of the messages. Find it, set it aside.
                self.log(f"recorder: a batch failed ({type(exc).__name__}: {exc}); storing it message by message")
                for item in batch:
                    try:
                        if not self._store_retrying([item]):
                            return
                    except Exception as exc1:
                        self._set_aside_failed(item, exc1)

    def _store_retrying(self, batch: list) -> bool:
        """Handle the batch; while the store fails as a whole (disk full, locked, unwritable),
        wait and retry, acknowledging nothing. False when stopped meanwhile."""
        delay = 0.5
        while True:
            try:
                self._handle(batch)
                return True
            except sqlite3.OperationalError as exc:
                self.log(f"recorder: could not store a batch: {type(exc).__name__}: {exc}; retrying")
                if self._stop.wait(delay):
                    return False
                delay = min(delay * 2, 10.0)

    def _set_aside_failed(self, item, exc: Exception) -> None:
        if not item or item[0] != "msg":
            return
        _, topic, payload, mid, qos, gen = item
        parsed = topics.parse(self.cfg.prefix, topic)
        board = parsed[1] if parsed else None
        reason = f"could not be stored: {type(exc).__name__}: {str(exc)[:100]}"
        self._warn(board, f"recorder: {topic}: {reason}; set aside")
        try:
            self.store.set_aside([(board, topic, reason, payload)])
        except Exception:
            pass
        self.refused += 1
        if gen == self._gen and qos > 0 and self._client is not None:
            self._client.ack(mid, qos)

    def _warn(self, board: str | None, line: str) -> None:
        """Log a refusal: at most one line per board every 10 s (with the count not shown)."""
        now = time.monotonic()
        hidden, since = self._warned.get(board, (0, -1e9))
        if now - since >= 10.0:
            self.log(line + (f" ({hidden} more from this board not shown)" if hidden else ""))
            self._warned[board] = (0, now)
        else:
            self._warned[board] = (hidden + 1, since)

    def _handle(self, batch: list) -> None:
        records: list[tuple] = []
        acks: list[tuple[int, int]] = []
        aside: list[tuple] = []
        have: dict[tuple[str, str], int] = {}       # what to tell the boards the store holds
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
                data = loads(payload)
                if kind == "record":
                    seq, body, t = check_record(data)
                    records.append((board, game, seq, body, t))
                    continue
                if not isinstance(data, dict):
                    raise Refused("not a JSON object")
                if kind == "state" and game is not None:     # a state topic always names its game
                    p = self.store.note_state(board, game, _seq(data.get("seq")), now=now)
                    self._progress(p)
                    have[(board, game)] = p.contig
                elif kind == "presence":
                    online = data.get("online")
                    if not isinstance(online, bool):
                        raise Refused(f"online {_show(online)} is not true or false")
                    self.store.note_presence(board, online, now=now)
                elif kind == "health":
                    self.store.note_health(board, data, now=now)
            except Refused as exc:
                aside.append((board, topic, str(exc), payload))
        if records:
            touched = self.store.add_records(records, now=now)
            self.stored += len(records)
            for p in touched.values():
                self._progress(p)
                have[(p.board, p.game)] = p.contig
            for b, g, s in self.store.conflicted:
                self.conflicts += 1
                self._warn(b, f"recorder: {b}'s game {g}: line {s} came again with another body; the first one "
                              f"is kept, the other set aside ('fairyboard conflicts' lists them)")
            if self.on_stored is not None:
                self.on_stored([(r[0], r[1], r[2], now) for r in records])
        if aside:
            self.store.set_aside(aside, now=now)
            self.refused += len(aside)
            for board, topic, reason, _ in aside:
                self._warn(board, f"recorder: {topic}: {reason}; set aside")
        c = self._client
        assert c is not None            # messages arrive only on a started client
        if self.connected.is_set():
            for (board, game), n in have.items():
                c.publish(topics.ack(self.cfg.prefix, board), json.dumps({"game": game, "have": n}), qos=1)
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
