"""A connection to the sensor board over a serial port: handshake, sequence checks, recovery.

The :class:`Link` opens the first of its candidate ports that works (``/dev/ttyACM0``, a udev
symlink, a glob such as ``/dev/ttyACM*``, ``loop://``, a pty, any ``serial_for_url`` URL),
asks for a :class:`~firmware_bridge.messages.Hello`, and from then on:

* delivers what the board says as :class:`Received` values (message + receive time from the
  injected clock) to a queue or to a ``sink`` callable;
* checks occupancy sequence numbers: repeats are dropped, gaps are counted, and when the
  heartbeat or a corrupt frame suggests a frame went missing it asks for a fresh one;
* after every handshake (first contact, a reset board, a resync after silence, a port that
  came back) re-sends the desired settings and the current LED frame, and asks for occupancy;
* re-sends an LED frame the board has not acknowledged;
* when the port fails or vanishes, closes it and tries the candidates again until one opens.

Timers run on the injected ``clock``: :meth:`Link.service` does one round of I/O and timer
checks and can be driven by a test with a fake clock, or by :meth:`Link.start`'s reader thread.
::

    state:  DISCONNECTED --open--> HANDSHAKE --Hello--> READY
                ^                    |   ^                |
                |   no Hello after   |   |  silence for   |
                '-- N requests, or --'   '- heartbeat_- --'
                    any port error          timeout
"""

from __future__ import annotations

import enum
import errno
import functools
import glob
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence, Union, cast, runtime_checkable

import serial

from firmware_bridge.codec import Decoder, encode
from firmware_bridge.errors import (
    IncompatibleBoardError, LinkClosedError, LinkTimeoutError, MessageError, PortError,
)
from firmware_bridge.messages import (
    BOARD_MESSAGES, PROTOCOL_VERSION, BoardError, Colour, ErrorCode, Heartbeat, Hello, LedAck, LedFrame, Message,
    Occupancy, OccupancyReason, Ping, Pong, Request, RequestKind, SetSettings, Settings,
)

log = logging.getLogger(__name__)

_GLOB_CHARS = frozenset("*?[")


class SerialPort(Protocol):
    """What the link needs of a port: the part of pyserial's API it uses."""

    @property
    def in_waiting(self) -> int: ...

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes) -> int | None: ...

    def close(self) -> None: ...


@runtime_checkable
class BoardLink(Protocol):
    """What a board driver needs of a link; :class:`Link` is one, a driver's test fake another."""

    def open(self) -> "BoardLink": ...

    def close(self) -> None: ...

    def health(self) -> "LinkHealth": ...

    def send_leds(self, colours: Sequence[Colour], blink: Sequence[int] | Mapping[int, int] | None = None,
                  brightness: int = 255) -> LedFrame: ...

    def request(self, what: RequestKind) -> None: ...

    def drain(self) -> list["Received"]: ...


class LinkState(enum.Enum):
    """Where the link stands."""

    CLOSED = "closed"              #: not opened yet, or closed
    DISCONNECTED = "disconnected"  #: no port open; trying the candidates every retry_interval
    HANDSHAKE = "handshake"        #: port open, waiting for the board's Hello
    READY = "ready"                #: the board answered; LEDs and settings are synced
    INCOMPATIBLE = "incompatible"  #: the board speaks another protocol version


@dataclass(frozen=True, slots=True)
class LinkTimings:
    """Timeouts and intervals, in seconds of the link's clock (``read_timeout``/``write_timeout``
    are real time: they bound how long one port call may block).

    ``listen_first``: after opening a port the link writes nothing until a good frame arrives
    from the board (its firmware runs, so 0x03 in a frame is data, not Ctrl-C) or this long has
    passed: a Pico replugged or reset while the service runs is still booting when its port
    appears, with MicroPython's Ctrl-C handling on (hardware/PROTOCOL.md, section 7).

    ``idle_read_timeout``: how long one read may block instead while the link waits for
    nothing (ready, the LED frame acknowledged, no occupancy asked for): the board's own
    frames and heartbeats wake the reader, so an idle link does not wake it every
    ``read_timeout`` (the reader's timers are looked at after each read). A ``read_timeout``
    of 0 (a link driven by hand, reads never blocking) stays 0."""

    read_timeout: float = 0.02
    idle_read_timeout: float = 0.5
    write_timeout: float = 0.5
    listen_first: float = 1.5
    hello_timeout: float = 1.0
    hello_attempts: int = 3
    heartbeat_timeout: float = 3.0
    retry_interval: float = 0.5
    led_ack_timeout: float = 0.5
    occupancy_request_interval: float = 0.1


@dataclass(frozen=True, slots=True)
class LinkStatus:
    """A change of :class:`LinkState`, delivered in the event stream like a message."""

    state: LinkState
    port: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class Received:
    """Something the link delivers: a board message (or a :class:`LinkStatus`) and when it arrived."""

    message: Union[Message, LinkStatus]
    at: float


@dataclass(frozen=True, slots=True)
class LinkHealth:
    """Counters and state for diagnostics; a snapshot, taken by :meth:`Link.health`."""

    state: LinkState
    port: str | None
    hello: Hello | None
    board_settings: Settings | None
    frames_received: int
    frames_sent: int
    bytes_received: int
    crc_errors: int
    framing_errors: int
    message_errors: int
    occupancy_frames: int
    occupancy_lost: int
    occupancy_duplicates: int
    occupancy_stale: int
    resyncs: int
    reconnects: int
    heartbeat_timeouts: int
    board_resets: int
    board_errors: int
    board_rx_errors: int
    led_resends: int
    leds_acked: bool
    leds_refused: int
    startup_discarded: int
    last_rx_at: float | None
    last_error: str | None

    def lines(self) -> list[str]:
        """One ``name: value`` line per field, for a diagnostics printout."""
        return [f"{name}: {getattr(self, name)}" for name in self.__dataclass_fields__]


def resolve_ports(ports: Sequence[str]) -> list[str]:
    """The candidate ports, in order: URLs and plain names as given, globs expanded (sorted)."""
    out: list[str] = []
    for item in ports:
        if "://" not in item and _GLOB_CHARS & set(item):
            out.extend(p for p in sorted(glob.glob(item)) if p not in out)
        elif item not in out:
            out.append(item)
    return out


def open_serial(url: str, *, timings: LinkTimings = LinkTimings()) -> serial.SerialBase:
    """Open a port by name or URL through ``serial.serial_for_url`` with the link's timeouts.

    Ports are locked for exclusive use (on POSIX), so a second program cannot read frames
    meant for the first: its open fails with "Could not exclusively lock port".
    """
    try:
        return serial.serial_for_url(url, baudrate=115200, timeout=timings.read_timeout,
                                     write_timeout=timings.write_timeout, exclusive=True)
    except serial.SerialException as exc:
        if getattr(exc, "errno", None) == errno.ENOTTY or "Inappropriate ioctl" in str(exc):
            # /dev/zero, a file: something opened, but no terminal settings to take
            raise serial.SerialException("not a serial port (not a terminal device)") from None
        raise


_SEQ_MOD = 1 << 16


@dataclass(slots=True)
class _Counters:
    """The link's running counts (mutable, private; :class:`LinkHealth` is the public copy)."""

    frames_sent: int = 0
    bytes_received: int = 0
    occupancy_frames: int = 0
    occupancy_lost: int = 0
    occupancy_duplicates: int = 0
    occupancy_stale: int = 0
    syncs: int = 0          # handshakes completed; all but the first are resyncs
    attaches: int = 0       # ports opened; all but the first are reconnects
    heartbeat_timeouts: int = 0
    board_resets: int = 0
    board_errors: int = 0
    board_rx_errors: int = 0
    led_resends: int = 0
    leds_refused: int = 0


class Link:
    """The host's end of the board link. See the module docstring.

    ``ports`` is one name/URL/glob or a list of them, tried in order. ``settings`` (optional)
    are sent to the board after every handshake. ``clock`` returns seconds; ``open_port``
    replaces :func:`open_serial`; ``sink`` receives every :class:`Received` instead of the
    internal queue (read with :meth:`get` / :meth:`drain`).
    """

    def __init__(self, ports: str | Sequence[str], *, clock: Callable[[], float] = time.monotonic,
                 timings: LinkTimings = LinkTimings(), settings: Settings | None = None,
                 open_port: Callable[[str], SerialPort] | None = None,
                 sink: Callable[[Received], None] | None = None) -> None:
        self._ports = (ports,) if isinstance(ports, str) else tuple(ports)
        if not self._ports:
            raise ValueError("Link needs at least one candidate port")
        self._clock = clock
        self._timings = timings
        # every port serial_for_url opens has in_waiting (pyserial's stubs declare it on the
        # platform classes, not on SerialBase)
        self._open_port: Callable[[str], SerialPort] = open_port or cast(
            Callable[[str], SerialPort], functools.partial(open_serial, timings=timings))
        self._queue: queue.Queue[Received | None] = queue.Queue()    # None: wake()
        self._sink = sink or self._queue.put
        self._lock = threading.RLock()
        self._ready = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

        self._state = LinkState.CLOSED
        self._port: SerialPort | None = None
        self._port_name: str | None = None
        self._decoder = Decoder(accept=(cls.TYPE for cls in BOARD_MESSAGES))
        self._desired_settings = settings
        self._board_settings: Settings | None = None
        self._hello: Hello | None = None
        self._next_open_at = 0.0
        self._hello_deadline = 0.0
        self._hello_requests = 0
        self._last_rx_at: float | None = None
        self._last_seq: int | None = None
        self._led: LedFrame | None = None
        self._led_seq = 0
        self._led_acked = True
        self._led_refused = False
        self._led_sent_at = 0.0
        self._listen_until: float | None = None
        self._want_occupancy = False
        self._awaiting_state = True     # until the answer to the REQUEST OCCUPANCY sent at sync
        self._occupancy_requested_at: float | None = None
        self._ping_token = 0
        self._last_error: str | None = None
        self._rejected_seen = 0
        self._c = _Counters()

    # --- lifecycle -------------------------------------------------------------------------

    def open(self) -> "Link":
        """Start connecting: the first :meth:`service` call tries the ports. Returns self."""
        with self._lock:
            if self._state is LinkState.CLOSED:
                self._set_state(LinkState.DISCONNECTED, "waiting for a port", self._clock())
                self._next_open_at = float("-inf")
        return self

    def close(self) -> None:
        """Stop the reader thread (if any) and close the port."""
        self.stop()
        with self._lock:
            self._close_port()
            if self._state is not LinkState.CLOSED:
                self._set_state(LinkState.CLOSED, "closed", self._clock())

    def __enter__(self) -> "Link":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> "Link":
        """Open, and run :meth:`service` in a daemon reader thread until :meth:`stop`."""
        self.open()
        with self._lock:
            if self._thread is None:
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, name="firmware-bridge-reader",
                                                daemon=True)
                self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the reader thread; the port stays open."""
        thread = self._thread
        if thread is not None:
            self._stop.set()
            thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.service()
            except Exception as exc:  # keep the link alive; the failure is visible in health()
                log.exception("firmware bridge reader failed")
                with self._lock:
                    self._last_error = f"reader failed: {exc!r}"
            if self._port is None:
                self._stop.wait(self._timings.read_timeout)

    # --- the consumer's side ---------------------------------------------------------------

    @property
    def state(self) -> LinkState:
        return self._state

    @property
    def hello(self) -> Hello | None:
        """The board's latest Hello."""
        return self._hello

    def candidates(self) -> list[str]:
        """The ports the link would try now, in order."""
        return resolve_ports(self._ports)

    def get(self, timeout: float | None = 0.0) -> Received | None:
        """The next delivered item, waiting up to ``timeout`` real seconds (None: forever), or
        None at once after :meth:`wake`."""
        try:
            if timeout == 0:
                return self._queue.get_nowait()
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def wake(self) -> None:
        """Make a :meth:`get` waiting now (or the next one) return None at once (the consumer
        has something else to do). Any thread."""
        self._queue.put(None)

    def drain(self) -> list[Received]:
        """Everything delivered so far, without waiting."""
        out: list[Received] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return out
            if item is not None:            # a wake() nobody waited for
                out.append(item)

    def wait_ready(self, timeout: float) -> Hello:
        """Block until the link is READY (at most ``timeout`` real seconds) and return the Hello.

        Raises :class:`PortError` if no candidate port could be opened in that time,
        :class:`LinkTimeoutError` if a port is open but the board has not answered, and
        :class:`IncompatibleBoardError` as soon as the board turns out to speak another
        protocol version. Without a reader thread this drives :meth:`service` itself.
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            if self._state is LinkState.CLOSED:
                raise LinkClosedError("wait_ready() on a closed link; call open() or start() first")
        while True:
            with self._lock:
                if self._state is LinkState.READY and self._hello is not None:
                    return self._hello
                if self._state is LinkState.INCOMPATIBLE:
                    raise IncompatibleBoardError(f"the board on {self._port_name}: {self._last_error}")
                left = deadline - time.monotonic()
                if left <= 0:
                    if self._port is None:
                        raise PortError(f"no board port after {timeout} s: {self._last_error}")
                    raise LinkTimeoutError(
                        f"board on {self._port_name} not ready after {timeout} s: "
                        f"state {self._state.value}, last error {self._last_error!r}")
                if self._thread is not None:
                    self._ready.wait(left)
                    continue
            self.service()
            if self._port is None:
                time.sleep(min(self._timings.read_timeout, max(0.0, deadline - time.monotonic())))

    def send_leds(self, colours: Sequence[Colour],
                  blink: Sequence[int] | Mapping[int, int] | None = None,
                  brightness: int = 255) -> LedFrame:
        """Make this the board's LED state: a colour per LED index, optional blink, brightness.

        Sent now if the board is ready, otherwise at the next handshake; re-sent until the
        board acknowledges it, and after every resync. Returns the frame.
        """
        with self._lock:
            self._led_seq = (self._led_seq + 1) % _SEQ_MOD
            frame = LedFrame.build(self._led_seq, colours, blink, brightness)
            self._led = frame
            self._led_acked = False
            self._led_refused = False
            if self._state is LinkState.READY:
                self._send_led(self._clock())
            return frame

    def set_settings(self, settings: Settings) -> None:
        """Ask the board to use ``settings`` now and after every handshake."""
        if not isinstance(settings, Settings):
            raise MessageError(f"set_settings() needs a Settings, got {settings!r}")
        with self._lock:
            self._desired_settings = settings
            if self._state is LinkState.READY:
                self._send(SetSettings(settings), self._clock())

    def request(self, what: RequestKind) -> None:
        """Ask the board for a Hello, its Settings or an Occupancy frame (if a port is open)."""
        msg = Request(what)
        with self._lock:
            if self._port is not None:
                self._send(msg, self._clock())

    def ping(self) -> int:
        """Send a Ping; the board's Pong with the returned token arrives as a Received."""
        with self._lock:
            self._ping_token = (self._ping_token + 1) % _SEQ_MOD
            if self._port is not None:
                self._send(Ping(self._ping_token), self._clock())
            return self._ping_token

    def health(self) -> LinkHealth:
        """A snapshot of the link's state and counters."""
        with self._lock:
            s, c = self._decoder.stats, self._c
            return LinkHealth(
                state=self._state, port=self._port_name, hello=self._hello,
                board_settings=self._board_settings, frames_received=s.frames,
                frames_sent=c.frames_sent, bytes_received=c.bytes_received,
                crc_errors=s.crc_errors, framing_errors=s.framing_errors,
                message_errors=s.message_errors, occupancy_frames=c.occupancy_frames,
                occupancy_lost=c.occupancy_lost, occupancy_duplicates=c.occupancy_duplicates,
                occupancy_stale=c.occupancy_stale,
                resyncs=max(0, c.syncs - 1), reconnects=max(0, c.attaches - 1),
                heartbeat_timeouts=c.heartbeat_timeouts, board_resets=c.board_resets,
                board_errors=c.board_errors, board_rx_errors=c.board_rx_errors,
                led_resends=c.led_resends, leds_acked=self._led_acked, leds_refused=c.leds_refused,
                startup_discarded=s.startup_discarded,
                last_rx_at=self._last_rx_at, last_error=self._last_error)

    # --- one round of work -----------------------------------------------------------------

    def service(self) -> None:
        """Open a port if none is open (at most every retry_interval), read what has arrived
        (blocking up to the port's read timeout), handle it and run the timers."""
        with self._lock:
            if self._state is LinkState.CLOSED:
                raise LinkClosedError("service() on a closed link; call open() first")
            if self._port is None:
                self._try_open(self._clock())
            port = self._port
            wait = self._read_wait()
        if port is None:
            return
        if getattr(port, "timeout", wait) != wait:
            try:
                setattr(port, "timeout", wait)  # pyserial's setter (not in SerialPort: a fake port may lack it)
            except (AttributeError, ValueError, serial.SerialException):
                pass
        try:
            waiting = port.in_waiting
            data = port.read(waiting if waiting > 0 else 1)
            if data and waiting <= 0:
                # Woken by the first byte of something: take the rest that came with it.
                waiting = port.in_waiting
                if waiting > 0:
                    data += port.read(waiting)
        except (serial.SerialException, OSError) as exc:
            with self._lock:
                if self._port is port:
                    self._lost(f"reading {self._port_name} failed: {exc}", self._clock())
            return
        with self._lock:
            if self._port is not port:
                return
            now = self._clock()
            if data:
                self._on_bytes(data, now)
            if self._port is port:
                self._on_timers(now)

    # --- internals (called with the lock held) ---------------------------------------------

    def _read_wait(self) -> float:
        """How long the next read may block: ``idle_read_timeout`` while no timer of the link's
        can fall due (ready, the LED frame acknowledged, no occupancy asked for), else
        ``read_timeout``."""
        t = self._timings
        if t.read_timeout <= 0 or t.idle_read_timeout <= t.read_timeout:
            return t.read_timeout
        idle = (self._state is LinkState.READY and self._listen_until is None and not self._want_occupancy
                and (self._led is None or self._led_acked or self._led_refused))
        return t.idle_read_timeout if idle else t.read_timeout

    def _deliver(self, message: Union[Message, LinkStatus], now: float) -> None:
        self._sink(Received(message, now))

    def _set_state(self, state: LinkState, reason: str, now: float) -> None:
        if state is not self._state:
            self._state = state
            self._deliver(LinkStatus(state, self._port_name, reason), now)
            self._ready.notify_all()

    def _try_open(self, now: float) -> None:
        if now < self._next_open_at:
            return
        self._next_open_at = now + self._timings.retry_interval
        names = self.candidates()
        errors = []
        for name in names:
            try:
                port = self._open_port(name)
            except (serial.SerialException, OSError, ValueError) as exc:
                errors.append(f"{name}: {exc}")
                continue
            self._attach(port, name, now)
            return
        self._last_error = ("cannot open " + "; ".join(errors)) if errors else \
            f"no port matches {list(self._ports)}"

    def _attach(self, port: SerialPort, name: str, now: float) -> None:
        self._port, self._port_name = port, name
        self._c.attaches += 1
        # What the board wrote while no host had the port open comes first, cut at the front:
        # its failing frames are not errors (PROTOCOL.md, section 7).
        self._decoder.reset(startup=True)
        self._last_seq = None
        self._last_rx_at = now
        self._want_occupancy = False
        self._awaiting_state = True
        self._occupancy_requested_at = None
        # Write nothing yet: the board may still be booting, and 0x03 would be its Ctrl-C.
        self._listen_until = now + self._timings.listen_first
        self._set_state(LinkState.HANDSHAKE, f"opened {name}", now)

    def _start_talking(self, now: float) -> None:
        """The first write after opening: a lone delimiter ends whatever partial frame the
        board holds, then REQUEST HELLO."""
        self._listen_until = None
        if self._write(b"\x00", now):
            self._request_hello(now, first=True)

    def _close_port(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except Exception:  # a vanished port may fail to close; it is gone either way
                pass

    def _lost(self, reason: str, now: float) -> None:
        self._last_error = reason
        self._listen_until = None
        self._close_port()
        self._next_open_at = now
        self._set_state(LinkState.DISCONNECTED, reason, now)
        self._port_name = None

    def _write(self, data: bytes, now: float) -> bool:
        port = self._port
        if port is None:
            return False
        try:
            port.write(data)
        except (serial.SerialException, OSError) as exc:
            self._lost(f"writing to {self._port_name} failed: {exc}", now)
            return False
        return True

    def _send(self, msg: Message, now: float) -> bool:
        if self._listen_until is not None:
            return False  # not a byte to a board that may still be booting
        if self._write(encode(msg), now):
            self._c.frames_sent += 1
            return True
        return False

    def _send_led(self, now: float) -> None:
        if self._led is not None and self._send(self._led, now):
            self._led_sent_at = now

    def _request_hello(self, now: float, first: bool) -> None:
        if self._listen_until is not None:
            return  # still listening: the first good frame or the listening time ends it
        self._hello_requests = 1 if first else self._hello_requests + 1
        self._hello_deadline = now + self._timings.hello_timeout
        self._send(Request(RequestKind.HELLO), now)

    def _request_occupancy(self, now: float) -> None:
        self._want_occupancy = True
        last = self._occupancy_requested_at
        if last is None or now - last >= self._timings.occupancy_request_interval:
            self._occupancy_requested_at = now
            self._want_occupancy = False
            self._send(Request(RequestKind.OCCUPANCY), now)

    def _on_bytes(self, data: bytes, now: float) -> None:
        self._c.bytes_received += len(data)
        messages = self._decoder.feed(data)
        if self._listen_until is not None and not messages and self._decoder.stats.last_error:
            self._last_error = self._decoder.stats.last_error   # noise on a new port: say so
        rejected = self._decoder.stats.rejected
        if rejected != self._rejected_seen:
            self._rejected_seen = rejected
            self._last_error = self._decoder.stats.last_error
            if self._state is LinkState.READY:
                # The corrupt frame may have been an occupancy change: get the state again.
                self._request_occupancy(now)
        for msg in messages:
            if self._port is None or self._state is LinkState.INCOMPATIBLE:
                return
            self._last_rx_at = now
            if self._listen_until is not None:
                # The firmware runs: writing is safe now.
                if isinstance(msg, Hello):
                    self._listen_until = None
                    self._write(b"\x00", now)
                else:
                    self._start_talking(now)
            self._on_message(msg, now)

    def _on_message(self, msg: Message, now: float) -> None:
        if isinstance(msg, Occupancy):
            self._on_occupancy(msg, now)
        elif isinstance(msg, Hello):
            self._on_hello(msg, now)
        elif isinstance(msg, Heartbeat):
            self._c.board_rx_errors = msg.rx_errors
            if self._awaiting_state and self._state is LinkState.READY:
                self._request_occupancy(now)   # the answer to the sync's request went missing
            last = self._last_seq
            if last is not None and 0 < (msg.occupancy_seq - last) % _SEQ_MOD < _SEQ_MOD // 2:
                # The board sent occupancy frames we never got: ask for the current one.
                self._request_occupancy(now)
        elif isinstance(msg, LedAck):
            if self._led is not None and msg.seq == self._led.seq:
                self._led_acked = True
        elif isinstance(msg, BoardError):
            self._c.board_errors += 1
            self._last_error = f"board reports {msg.code.name}: {msg.text or msg.detail}"
            if msg.ref_type == LedFrame.TYPE and msg.code in (ErrorCode.LED_COUNT, ErrorCode.BAD_PAYLOAD) \
                    and self._led is not None and not self._led_acked:
                # The board refused the frame itself: sending it again would only be refused
                # again. It stays refused until the next send_leds() (or the next handshake).
                self._led_refused = True
                self._c.leds_refused += 1
            elif msg.code is ErrorCode.BAD_FRAME and not self._led_acked and not self._led_refused \
                    and self._state is LinkState.READY:
                self._c.led_resends += 1
                self._send_led(now)
            self._deliver(msg, now)
        elif isinstance(msg, Settings):
            self._board_settings = msg
            self._deliver(msg, now)
        elif isinstance(msg, Pong):
            self._deliver(msg, now)

    def _on_occupancy(self, msg: Occupancy, now: float) -> None:
        if self._awaiting_state:
            if msg.reason is not OccupancyReason.REQUESTED or self._state is not LinkState.READY:
                # Written before this host synchronised (the board's USB hands over what it
                # kept while no host had the port), or overtaken by the answer on its way:
                # the answer to the sync's REQUEST OCCUPANCY is the state. Not a loss.
                self._c.occupancy_stale += 1
                return
            self._awaiting_state = False
        last = self._last_seq
        if last is not None:
            step = (msg.seq - last) % _SEQ_MOD
            if step == 0 or step >= _SEQ_MOD // 2:
                self._c.occupancy_duplicates += 1
                return
            self._c.occupancy_lost += step - 1
        self._last_seq = msg.seq
        if msg.reason is OccupancyReason.REQUESTED:
            self._occupancy_requested_at = None  # answered: the next request may go at once
        self._c.occupancy_frames += 1
        self._deliver(msg, now)

    def _on_hello(self, msg: Hello, now: float) -> None:
        if msg.protocol_version != PROTOCOL_VERSION:
            self._hello = msg
            self._last_error = (f"board speaks protocol version {msg.protocol_version}, "
                                f"this host speaks {PROTOCOL_VERSION}")
            self._deliver(msg, now)
            self._set_state(LinkState.INCOMPATIBLE, self._last_error, now)
            return
        previous = self._hello
        reset = previous is not None and previous.boot_id != msg.boot_id
        if reset:
            self._c.board_resets += 1
            self._last_seq = None
        self._hello = msg
        self._deliver(msg, now)
        if self._state is LinkState.READY and not reset:
            return  # an answer to someone's request: nothing was lost
        # Sync: the board may have lost (reset) or we may have missed (resync) our state.
        self._c.syncs += 1
        if self._desired_settings is not None:
            self._send(SetSettings(self._desired_settings), now)
        if self._led is not None:
            self._led_acked = False
            self._led_refused = False
            self._send_led(now)
        self._occupancy_requested_at = None
        self._awaiting_state = True
        self._request_occupancy(now)
        if self._port is not None:
            self._set_state(LinkState.READY, "board reset" if reset else f"hello from {self._port_name}", now)

    def _on_timers(self, now: float) -> None:
        t = self._timings
        if self._listen_until is not None:
            if now < self._listen_until:
                return
            self._start_talking(now)
            return
        if self._state is LinkState.HANDSHAKE:
            if now >= self._hello_deadline:
                if self._hello_requests < t.hello_attempts:
                    self._request_hello(now, first=False)
                else:
                    self._lost(f"no Hello from {self._port_name} after {self._hello_requests} requests", now)
            return
        if self._state is not LinkState.READY:
            return
        if self._last_rx_at is not None and now - self._last_rx_at >= t.heartbeat_timeout:
            self._c.heartbeat_timeouts += 1
            self._last_error = f"board silent for {now - self._last_rx_at:.3f} s"
            self._set_state(LinkState.HANDSHAKE, self._last_error, now)
            self._request_hello(now, first=True)
            return
        if self._led is not None and not self._led_acked and not self._led_refused \
                and now - self._led_sent_at >= t.led_ack_timeout:
            self._c.led_resends += 1
            self._send_led(now)
        if self._want_occupancy:
            self._request_occupancy(now)
