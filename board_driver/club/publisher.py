"""The board's side: publish every journal record of its games to the broker, in order.

The journal is the queue. A game's records are its journal's lines (``seq`` = line index); the
publisher keeps, per game, a small cursor file ``<data>/club/acked/<GAME>`` with how many of the
game's first records the recorder holds: it says so on ``PREFIX/BOARD/ack`` (``{"game", "have"}``)
once they are committed to its store. The broker's acknowledgement (MQTT 5 PUBACK) only frees a
place in the window; a publish the broker refuses (its reason code, e.g. "Not authorized" from
the ACL) is logged and sent again later, never counted. While records wait for the recorder's
word, the game's state is published again every ``ping_every`` seconds: the recorder answers a
state with what it holds, and asks for what it lacks. So:

- the session never waits: the journal's observer only notes "game G has n records on disk" and
  wakes the publisher's own thread; paho's network loop runs in a thread of its own;
- a broker that is down or slow loses nothing: what is not acknowledged stays in the journal and
  goes out, in order, once the broker is back (at most ``window`` records are in flight);
- a restarted board sends again every record past its cursor (the recorder ignores copies);
- the recorder may ask for any range again (``resend``): the journal still has it.

Only games written while the publisher runs, the game in progress and games with a cursor are
published: a board's old games are not pushed into a new club's recorder.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from board_driver import journal as journal_mod
from board_driver.club import topics
from board_driver.club.broker import BrokerConfig, board_client, connect
from board_driver.records import GameFold, Header, Pop, Push, RecordError, Reopen, Resign, Result, Resume, read_record

STATE_TYPES = frozenset(c.TYPE for c in (Header, Push, Pop, Result, Resign, Reopen, Resume))

if TYPE_CHECKING:       # pragma: no cover
    import paho.mqtt.client as mqtt


@dataclass
class _Game:
    gid: str
    path: Path
    durable: int = 0                 # records known to be on disk
    sent: int = 0                    # next record to send for the first time
    acked: int = 0                   # the recorder holds records 0..acked-1
    ping_at: float = 0.0             # when the recorder last heard this game's state while records waited
    offsets: list = field(default_factory=lambda: [0])   # byte offset of each line read so far
    resend_from: int | None = None
    cursor_saved: int = -1
    # the game's state, folded from its records in order (records.fold)
    folded: int = 0
    fold: GameFold = field(default_factory=lambda: GameFold(keep_events=False))
    state_dirty: bool = True
    times: dict = field(default_factory=dict)    # seq -> wall time it was written (live records)
    retire: bool = False             # a newer game started: clear this one's retained state once all is sent


class Publisher:
    """Publishes one board's games. ``start()`` it, ``close()`` it; ``health`` returns a
    JSON-able dict (link, sensors) published retained every ``health_every`` seconds when it
    changes."""

    def __init__(self, cfg: BrokerConfig, data: Path, *, health: Callable[[], dict] | None = None,
                 window: int = 100, health_every: float = 10.0, client_id: str | None = None,
                 log: Callable[[str], None] | None = None, ping_every: float = 5.0) -> None:
        if cfg.username and cfg.username != cfg.name:
            from board_driver.errors import ConfigError
            raise ConfigError(f"broker: username {cfg.username!r} is not the board's name {cfg.name!r}: the club's "
                              f"ACL lets a board publish only under its own user name")
        self.cfg = cfg
        self.ping_every = ping_every
        self._hold_until = 0.0                   # after a refused publish: wait before sending again
        self._refusals_said: set[str] = set()
        self.data = Path(data)
        self.games_dir = self.data / "games"
        self.cursor_dir = self.data / "club" / "acked"
        self.health = health
        self.window = window
        self.health_every = health_every
        self.client_id = client_id or f"fairyboard-board-{cfg.name}"
        self._games: dict[str, _Game] = {}
        self._lock = threading.Lock()            # guards _noted (the observer's notes)
        self._noted: dict[str, int] = {}
        self._times: dict[tuple[str, int], float] = {}
        self._new_game: str | None = None
        self._events: queue.SimpleQueue = queue.SimpleQueue()   # ("ack", mid) | ("connect",) | ("resend", gid, n)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._inflight: dict[int, tuple[str, int, float]] = {}  # mid -> (game, seq, when)
        self._connected = False
        self._thread: threading.Thread | None = None
        self._client: mqtt.Client | None = None
        self._last_health: Any = None
        self._health_at = 0.0
        self.published = 0                       # records handed to the broker (with re-sends)
        self.errors: list[str] = []
        self.log = log or (lambda line: None)
        self._unreachable_said = False

    # -- the journal's side (runs on the session's thread: quick) ---------------------------
    def _observe(self, gid: str, seq: int, record: dict) -> None:
        with self._lock:
            if seq + 1 > self._noted.get(gid, 0):
                self._noted[gid] = seq + 1
            if record.get("type") in STATE_TYPES:
                self._times[(gid, seq)] = time.time()      # when it was made: the move's clock
            if seq == 0:
                self._new_game = gid
        self._wake.set()

    # -- life -------------------------------------------------------------------------------
    def start(self) -> "Publisher":
        self.cursor_dir.mkdir(parents=True, exist_ok=True)
        journal_mod.add_observer(self._observe, self.data)     # this board's data folder only
        self._scan()
        c = board_client(self.cfg, self.client_id, presence_of=self.cfg.name)
        c.max_inflight_messages_set(self.window)
        c.max_queued_messages_set(0)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_connect_fail = self._on_connect_fail
        c.on_publish = self._on_publish
        c.on_message = self._on_message
        self._client = c
        connect(c, self.cfg)
        self._thread = threading.Thread(target=self._run, name=f"club-publisher-{self.cfg.name}", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 2.0) -> None:
        """Stop: publish presence offline (when connected), save the cursors. Records not yet
        acknowledged stay in the journal for the next start."""
        journal_mod.remove_observer(self._observe)
        if self._thread is not None:
            self._drain_until = time.monotonic() + timeout
            self._stop.set()
            self._wake.set()
            self._thread.join(timeout + 2)
        c = self._client
        if c is not None:
            if self._connected:
                try:
                    info = c.publish(topics.presence(self.cfg.prefix, self.cfg.name),
                                     json.dumps({"board": self.cfg.name, "online": False, "t": time.time()}),
                                     qos=1, retain=True)
                    info.wait_for_publish(timeout=1.0)
                except (RuntimeError, ValueError):
                    pass
            c.disconnect()
            c.loop_stop()
        self._save_cursors(force=True)

    # -- paho's callbacks (network thread: hand over, never block) --------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if reason_code.is_failure:
            msg = f"broker {self.cfg.host}:{self.cfg.port} refused board {self.cfg.name}: {reason_code}"
            if not self.errors or self.errors[-1] != msg:
                self.errors.append(msg)
                self.log(f"club: {msg}; the games wait in the journal")
            return
        self.log(f"club: publishing to {self.cfg.host}:{self.cfg.port} as {self.cfg.name}")
        self._unreachable_said = False
        client.subscribe([(topics.resend(self.cfg.prefix, self.cfg.name), 1),
                          (topics.ack(self.cfg.prefix, self.cfg.name), 1)])
        self._connected = True
        self._events.put(("connect",))
        self._wake.set()

    def _on_connect_fail(self, client, userdata) -> None:
        if not self._unreachable_said:
            self._unreachable_said = True
            self.log(f"club: cannot reach the broker {self.cfg.host}:{self.cfg.port} yet; trying again, "
                     f"the games wait in the journal")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if self._connected and not self._stop.is_set():
            self.log(f"club: lost the broker {self.cfg.host}:{self.cfg.port} ({reason_code}); "
                     f"the games wait in the journal")
        self._connected = False

    def _on_publish(self, client, userdata, mid, reason_code=None, properties=None) -> None:
        if reason_code is not None and reason_code.is_failure:
            self._events.put(("refused", mid, str(reason_code)))
        else:
            self._events.put(("ack", mid))
        self._wake.set()

    def _on_message(self, client, userdata, msg) -> None:
        if len(msg.payload) > 1024:              # a request or an acknowledgement is a few bytes
            return
        try:
            req = json.loads(msg.payload)
            gid = req["game"]
            n = req["have"] if msg.topic.endswith("/ack") else req.get("from", 0)
        except (ValueError, KeyError, TypeError, RecursionError):
            return
        if not isinstance(gid, str) or not topics.valid_game(gid) or type(n) is not int or n < 0:
            return
        self._events.put(("have" if msg.topic.endswith("/ack") else "resend", gid, n))
        self._wake.set()

    # -- the publisher's thread ---------------------------------------------------------------
    def _run(self) -> None:
        last_save = 0.0
        while True:
            self._wake.wait(0.5)
            self._wake.clear()
            try:
                self._handle_events()
                self._take_notes()
                if self._connected:
                    self._send()
                    self._maybe_health()
                now = time.monotonic()
                if now - last_save > 0.5:
                    self._save_cursors()
                    last_save = now
            except Exception as exc:     # keep publishing whatever one bad file does
                msg = f"{type(exc).__name__}: {exc}"
                if not self.errors or self.errors[-1] != msg:
                    self.log(f"club: {msg}")
                self.errors.append(msg)
                del self.errors[:-20]
            if self._stop.is_set():
                if not self._inflight or not self._connected or time.monotonic() > self._drain_until:
                    return

    def _game(self, gid: str, *, create: bool = True) -> _Game | None:
        g = self._games.get(gid)
        if g is None:
            path = self.games_dir / f"{gid}.jsonl"
            if not create or not path.exists():
                return None
            g = _Game(gid, path)
            try:
                g.acked = int((self.cursor_dir / gid).read_text().strip() or 0)
            except (OSError, ValueError):
                g.acked = 0
            g.sent = g.acked
            g.cursor_saved = g.acked
            self._games[gid] = g
        return g

    def _scan(self) -> None:
        """At start: games with a cursor and the game in progress; everything on disk counts as
        durable (fsynced here, in case the last run was cut before its own fsync)."""
        gids: set[str] = set()
        try:
            gids.update(p.name for p in self.cursor_dir.iterdir() if not p.name.endswith(".tmp"))
        except OSError:
            pass
        cur = None
        try:
            cur = (self.data / "current").read_text(encoding="utf-8").strip() or None
            if cur:
                gids.add(cur)
        except OSError:
            pass
        for gid in sorted(gids):
            g = self._game(gid)
            if g is None:
                continue
            try:
                fd = os.open(g.path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                g.durable = g.path.read_bytes().count(b"\n")
            except OSError:
                continue
            if g.acked >= g.durable and gid != cur:    # all sent long ago: loaded again if asked for
                del self._games[gid]

    def _take_notes(self) -> None:
        with self._lock:
            noted, self._noted = self._noted, {}
            times, self._times = self._times, {}
            new, self._new_game = self._new_game, None
        for gid, n in noted.items():
            g = self._game(gid)
            if g is not None and n > g.durable:
                g.durable = n
        if new is not None:
            for g in self._games.values():
                if g.gid != new:
                    g.retire = True
        for (gid, seq), t in times.items():
            g = self._games.get(gid)
            if g is not None and seq >= g.sent:
                g.times[seq] = t

    def _handle_events(self) -> None:
        while True:
            try:
                ev = self._events.get_nowait()
            except queue.Empty:
                return
            if ev[0] == "ack":                   # the broker took it: a place in the window is free
                self._inflight.pop(ev[1], None)
            elif ev[0] == "refused":             # the broker did not take it: send it again later
                hit = self._inflight.pop(ev[1], None)
                if ev[2] not in self._refusals_said:
                    self._refusals_said.add(ev[2])
                    self.log(f"club: the broker refused a record of board {self.cfg.name} ({ev[2]}): the club's ACL "
                             f"lets user {self.cfg.username} publish only under {self.cfg.prefix}/{self.cfg.username}/; "
                             f"nothing is counted as delivered, the games wait in the journal")
                self._hold_until = time.monotonic() + 5.0
                g = self._games.get(hit[0]) if hit is not None else None
                if g is not None and hit is not None:
                    g.sent = min(g.sent, hit[1])
            elif ev[0] == "have":                # the recorder holds the game's first n records
                g = self._games.get(ev[1])
                if g is not None:
                    n = min(ev[2], g.sent)       # only what this board sent: never a line it has not
                    if n > g.acked:
                        g.acked = n
                        g.ping_at = time.monotonic()
            elif ev[0] == "connect":
                # paho re-sends what was in flight on the old connection; anything older than
                # that is already acknowledged. States and health go out afresh.
                for g in self._games.values():
                    g.state_dirty = True
                self._last_health = None
                self._publish(topics.presence(self.cfg.prefix, self.cfg.name),
                              json.dumps({"board": self.cfg.name, "online": True, "t": time.time()}), retain=True)
            elif ev[0] == "resend":
                g = self._game(ev[1])
                if g is None:
                    continue
                if g.durable == 0 and g.path.exists():
                    g.durable = g.path.read_bytes().count(b"\n")
                frm = min(ev[2], g.sent)
                g.resend_from = frm if g.resend_from is None else min(g.resend_from, frm)
                g.state_dirty = True

    def _lines(self, g: _Game, start: int, stop: int) -> list[bytes]:
        """Lines ``start .. stop-1`` of the game's journal (whole lines only)."""
        if stop <= start:
            return []
        known = len(g.offsets) - 1          # lines whose end we know
        with open(g.path, "rb") as f:
            if start > known:
                self._index(g, f, start)
                known = len(g.offsets) - 1
            begin = g.offsets[min(start, known)]
            f.seek(begin)
            data = f.read()
        out = []
        pos = 0
        idx = min(start, known)
        while idx < stop:
            end = data.find(b"\n", pos)
            if end < 0:
                break
            if idx >= known:
                g.offsets.append(begin + end + 1)
                known += 1
            if idx >= start:
                out.append(data[pos:end])
            pos = end + 1
            idx += 1
        return out

    def _index(self, g: _Game, f, upto: int) -> None:
        f.seek(g.offsets[-1])
        data = f.read()
        base = g.offsets[-1]
        pos = 0
        while len(g.offsets) - 1 < upto:
            end = data.find(b"\n", pos)
            if end < 0:
                return
            g.offsets.append(base + end + 1)
            pos = end + 1

    def _publish(self, topic: str, payload: bytes | str, *, retain: bool = False) -> int | None:
        assert self._client is not None     # publishing happens only on a started client
        info = self._client.publish(topic, payload, qos=1, retain=retain)
        if info.rc != 0:
            return None
        return info.mid

    def _send(self) -> None:
        now = time.monotonic()
        if self._inflight:
            oldest = min(t for _, _, t in self._inflight.values())
            if now - oldest > 30:               # an acknowledgement that will never come
                for gid, seq, _ in self._inflight.values():
                    g = self._games.get(gid)
                    if g is not None:
                        g.sent = min(g.sent, seq)
                self._inflight.clear()
        if now < self._hold_until:
            return
        for g in list(self._games.values()):
            if g.resend_from is not None:
                start, stop = g.resend_from, min(g.sent, g.durable)
                while start < stop and len(self._inflight) < self.window:
                    chunk = self._lines(g, start, min(stop, start + self.window - len(self._inflight)))
                    if not chunk:
                        break
                    for line in chunk:
                        if not self._send_record(g, start, line):
                            return
                        start += 1
                g.resend_from = start if start < stop else None
            while g.sent < g.durable and len(self._inflight) < self.window:
                chunk = self._lines(g, g.sent, min(g.durable, g.sent + self.window - len(self._inflight)))
                if not chunk:
                    g.durable = g.sent              # the file is shorter than noted (cut torn line)
                    break
                for line in chunk:
                    if not self._send_record(g, g.sent, line):
                        return
                    g.sent += 1
            self._fold(g)
            if g.acked < g.sent and now - g.ping_at > self.ping_every:
                g.ping_at = now                 # records wait for the recorder's word: tell it the state
                g.state_dirty = True
            if g.state_dirty and g.folded and g.resend_from is None and len(self._inflight) < self.window:
                f, h = g.fold, g.fold.header or Header(version=None)
                st = {"board": self.cfg.name, "game": g.gid, "seq": g.folded - 1,
                      "variant": h.variant, "players": h.players, "date": h.date, "actions": f.plies,
                      "last": f.pushes[-1].action if f.pushes else None, "result": f.result, "reason": f.reason,
                      "t": time.time()}
                if self._publish(topics.state(self.cfg.prefix, self.cfg.name, g.gid), json.dumps(st),
                                 retain=True) is not None:
                    g.state_dirty = False
            if g.retire and not g.state_dirty and g.resend_from is None and g.acked >= g.durable \
                    and g.sent >= g.durable and len(self._inflight) < self.window:
                # the broker keeps only the board's current game as retained state
                if self._publish(topics.state(self.cfg.prefix, self.cfg.name, g.gid), b"", retain=True) is not None:
                    del self._games[g.gid]

    def _send_record(self, g: _Game, seq: int, line: bytes) -> bool:
        t = g.times.pop(seq, None)
        if t is None:
            payload = b'{"seq":%d,"rec":%s}' % (seq, line)
        else:
            payload = b'{"seq":%d,"t":%.3f,"rec":%s}' % (seq, t, line)
        mid = self._publish(topics.record(self.cfg.prefix, self.cfg.name, g.gid), payload)
        if mid is None:
            return False
        self._inflight[mid] = (g.gid, seq, time.monotonic())
        self.published += 1
        return True

    def _fold(self, g: _Game) -> None:
        if g.folded >= g.sent:
            return
        for line in self._lines(g, g.folded, g.sent):
            try:
                r = read_record(line)
            except RecordError:
                r = None                # sent as it is; nothing of it to fold
            if r is not None:
                g.fold.add(r)
                if r.TYPE in STATE_TYPES:
                    g.state_dirty = True
            g.folded += 1

    def _maybe_health(self) -> None:
        if self.health is None:
            h = {}
        else:
            try:
                h = self.health()
            except Exception as exc:
                h = {"error": f"{type(exc).__name__}: {exc}"}
        now = time.monotonic()
        if h == self._last_health and now - self._health_at < self.health_every:
            return
        if self._last_health is not None and now - self._health_at < self.health_every:
            return
        payload = json.dumps({"board": self.cfg.name, **h, "t": time.time()}, default=str)
        if self._publish(topics.health(self.cfg.prefix, self.cfg.name), payload, retain=True) is not None:
            self._last_health, self._health_at = h, now

    def _save_cursors(self, force: bool = False) -> None:
        for g in list(self._games.values()):
            if g.acked != g.cursor_saved:
                tmp = self.cursor_dir / f"{g.gid}.tmp"
                try:
                    tmp.write_text(f"{g.acked}\n")
                    os.replace(tmp, self.cursor_dir / g.gid)
                    g.cursor_saved = g.acked
                except OSError as exc:
                    self.errors.append(f"cursor {g.gid}: {exc}")

    # -- for tests and the service ----------------------------------------------------------
    def pending(self) -> int:
        """Records on disk the recorder has not acknowledged yet."""
        return sum(max(0, g.durable - g.acked) for g in list(self._games.values()))

    def wait_idle(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self._wake.set()
            if self.pending() == 0 and not self._noted:
                return True
            time.sleep(0.02)
        return False


def check_board(board) -> None:
    """Validate the board profile's ``broker:`` section (a ConfigError names the key)."""
    from board_driver.club.broker import broker_of
    cfg = broker_of(board.data, str(board.path))
    if cfg is not None:
        try:
            import paho.mqtt.client  # noqa: F401
        except ImportError:
            from board_driver.errors import ConfigError
            raise ConfigError(f"{board.path}: broker: publishing needs paho-mqtt (pip install paho-mqtt)") from None


def board_health(board, hw) -> Callable[[], dict]:
    """The health a serving board publishes: its backends and, for a serial board, the link's
    counters."""
    def health() -> dict:
        out: dict = {"sensors": board.hardware.sensor_backend, "leds": board.hardware.led_backend}
        serial = getattr(hw, "serial", None)
        if serial is not None:
            h = serial.health()
            out["link"] = {k: getattr(h, k) for k in getattr(h, "__dataclass_fields__", {})}
        else:
            out["link"] = "direct"
        return out
    return health


def start_for_board(board, data: Path, *, hw=None, log: Callable[[str], None] | None = None) -> Publisher | None:
    """The started publisher for ``board`` (a loaded board profile) when it has a ``broker:``
    section, else None. Never waits for the broker."""
    from board_driver.club.broker import broker_of
    cfg = broker_of(board.data, str(board.path))
    if cfg is None:
        return None
    return Publisher(cfg, data, health=board_health(board, hw), log=log).start()
