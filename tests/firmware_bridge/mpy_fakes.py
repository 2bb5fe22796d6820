"""MicroPython's runtime around main.py, as far as the boot race and the USB port go.

* :class:`FakeUsb` -- the Pico's USB CDC port: the host's bytes arrive in the background
  (between any two statements, as USB interrupts do); while Ctrl-C is on
  (``micropython.kbd_intr(3)``, MicroPython's state before main.py runs) a 0x03 byte raises
  KeyboardInterrupt in whatever the board is running, which ends main.py and leaves the board
  at the REPL. The transmit side is MicroPython's 256-byte FIFO: poll() says writable while
  it has room, and a write larger than the room would wait for the host (up to 500 ms) --
  here it fails the test instead. While the host does not read, the FIFO stays full.
* :func:`boot` runs ``hardware/firmware/main.py`` under CPython with fake ``machine``,
  ``micropython``, ``neopixel``, ``time`` and ``select`` modules and this USB, fresh imports of
  the firmware's modules, and a trace that gives the USB its background turn before every
  line the firmware runs.
"""

from __future__ import annotations

import runpy
import sys
import types
from pathlib import Path

from bridge_fakes import FIRMWARE_DIR, FakeMachine, FakeNeopixel, FakeTicks

FIRMWARE_MODULES = ("fb_main", "fb_core", "fb_proto", "fb_pins", "fb_usb")
POLLIN, POLLOUT = 1, 4


class BoardStopped(BaseException):
    """Ends a harness run (the watchdog's feed after enough rounds, or machine.reset())."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class WouldBlock(AssertionError):
    """The firmware wrote more than the USB FIFO had room for: on a Pico that write waits."""


class FakeUsb:
    TX_FIFO = 256

    def __init__(self) -> None:
        self.intr_char = 3              # MicroPython turns Ctrl-C on before running main.py
        self.arriving = bytearray()     # sent by the host, not yet seen by the board's USB stack
        self.arrive_at: int | None = None  # ...which sees it from this background turn on
        self.rx = bytearray()           # the stdin ring buffer
        self.fifo = bytearray()         # the transmit FIFO
        self.host_reading = True
        self.to_host = bytearray()      # what the host has read
        self.turns = 0
        self.interrupted_at: int | None = None
        self.writes = 0
        self.ticks = None               # the board's clock, moved while poll() waits

    # the host's side
    def host_write(self, data: bytes, at_turn: int | None = None) -> None:
        self.arriving += data
        self.arrive_at = at_turn if at_turn is not None else self.turns

    def host_read(self) -> bytes:
        data = bytes(self.fifo)
        self.fifo.clear()
        self.to_host += data
        return data

    # MicroPython's background USB task
    def background(self) -> None:
        self.turns += 1
        if self.host_reading and self.fifo:
            self.host_read()
        if self.arriving and self.arrive_at is not None and self.turns >= self.arrive_at:
            data, self.arriving = bytes(self.arriving), bytearray()
            for k, b in enumerate(data):
                if b == self.intr_char:
                    self.arriving = bytearray(data[k + 1:])
                    self.interrupted_at = self.turns
                    raise KeyboardInterrupt
                self.rx.append(b)

    # micropython.kbd_intr
    def kbd_intr(self, c: int) -> None:
        self.intr_char = c

    # sys.stdin.buffer / sys.stdout.buffer
    def readinto(self, buf) -> int:
        if not self.rx:
            raise AssertionError("read on an empty stdin: on a Pico it waits for the host")
        n = min(len(buf), len(self.rx))
        buf[:n] = self.rx[:n]
        del self.rx[:n]
        return n

    def write(self, data) -> int:
        data = bytes(data)
        room = self.TX_FIFO - len(self.fifo)
        if len(data) > room:
            raise WouldBlock(f"a write of {len(data)} bytes with {room} bytes of room")
        self.fifo += data
        self.writes += 1
        return len(data)

    def poll_state(self, events: int) -> int:
        out = 0
        if events & POLLIN and self.rx:
            out |= POLLIN
        if events & POLLOUT and len(self.fifo) < self.TX_FIFO:
            out |= POLLOUT
        return out


class _Stream:
    def __init__(self, usb: FakeUsb, name: str) -> None:
        self.usb, self.name = usb, name
        self.buffer = usb

    def write(self, text: str) -> int:       # print() on the board goes to the USB too
        return self.usb.write(text.encode()) if self.usb.TX_FIFO - len(self.usb.fifo) >= len(text) else 0

    def flush(self) -> None:
        pass


class _Poll:
    def __init__(self, usb: FakeUsb) -> None:
        self.usb = usb
        self.events = 0

    def register(self, stream, events: int) -> None:
        self.events |= events

    def poll(self, timeout: int = -1):
        self.usb.background()
        got = self.usb.poll_state(self.events)
        if not got and timeout and self.usb.ticks is not None:
            self.usb.ticks.advance(min(timeout, 10) if timeout > 0 else 10)  # time passes while waiting
            self.usb.background()
            got = self.usb.poll_state(self.events)
        return [(None, got)] if got else []


def select_module(usb: FakeUsb) -> types.ModuleType:
    mod = types.ModuleType("select")
    mod.POLLIN, mod.POLLOUT = POLLIN, POLLOUT
    mod.poll = lambda: _Poll(usb)
    return mod


class FakeTime(FakeTicks):
    """MicroPython's ``time``: ticks on a virtual clock; sleep_us and ticks_cpu."""

    def sleep_us(self, us: int) -> None:
        pass

    def sleep_ms(self, ms: int) -> None:
        self.advance(ms)

    def ticks_cpu(self) -> int:
        return self.now & 0xFFFF


class PicoMachine(FakeMachine):
    """``machine`` with the watchdog, reset() and pins that can be tied to ground."""

    def __init__(self, closed, log: list, grounded=()) -> None:
        super().__init__(closed)
        self.log = log
        self.grounded = set(grounded)
        self.wdt = None
        machine = self
        base = self.Pin

        class Pin:
            IN, OUT = base.IN, base.OUT
            PULL_UP, PULL_DOWN = base.PULL_UP, base.PULL_DOWN

            def __new__(cls, gpio, *args, **kwargs):
                log.append(("Pin", gpio))
                return base(gpio, *args, **kwargs)
        self.Pin = Pin

        class WDT:
            def __init__(self, timeout: int) -> None:
                log.append(("WDT", timeout))
                self.timeout, self.feeds = timeout, 0
                machine.wdt = self

            def feed(self) -> None:
                self.feeds += 1
                if self.feeds >= machine.rounds:
                    raise BoardStopped("running")
        self.WDT = WDT
        self.rounds = 50

    def level(self, pin) -> int:
        if pin.gpio in self.grounded:
            return 0
        return super().level(pin)

    def reset(self) -> None:
        self.log.append(("reset",))
        raise BoardStopped("reset")


class Boot:
    """The outcome of one :func:`boot`."""

    def __init__(self, usb: FakeUsb, machine: PicoMachine, neopixel: FakeNeopixel, ticks: FakeTime,
                 outcome: str, log: list) -> None:
        self.usb, self.machine, self.neopixel, self.ticks = usb, machine, neopixel, ticks
        self.outcome, self.log = outcome, log

    @property
    def at_repl(self) -> bool:
        return self.outcome == "repl"


def boot(monkeypatch, *, main: Path = FIRMWARE_DIR / "main.py", usb: FakeUsb | None = None,
         closed=(), grounded=(), rounds: int = 50, before_loop=None) -> Boot:
    """Power the Pico up and run main.py until the watchdog has been fed ``rounds`` times,
    main.py ends (the board is then at the REPL), or machine.reset() is called."""
    usb = usb or FakeUsb()
    log: list = []
    closed = set(closed)
    machine = PicoMachine(lambda: closed, log, grounded)
    machine.rounds = rounds
    neopixel = FakeNeopixel()
    ticks = FakeTime()
    micropython = types.ModuleType("micropython")
    micropython.kbd_intr = lambda c: (log.append(("kbd_intr", c)), usb.kbd_intr(c))[-1]
    ticks_mod = types.ModuleType("time")
    for name in ("ticks_ms", "ticks_diff", "sleep_us", "sleep_ms", "ticks_cpu"):
        setattr(ticks_mod, name, getattr(ticks, name))
    machine_mod = types.ModuleType("machine")
    machine_mod.Pin, machine_mod.WDT, machine_mod.reset = machine.Pin, machine.WDT, machine.reset
    machine_mod.mem32 = machine.mem32
    neo_mod = types.ModuleType("neopixel")
    neo_mod.NeoPixel = neopixel.NeoPixel
    saved = {name: sys.modules.get(name) for name in FIRMWARE_MODULES}
    for name in FIRMWARE_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    for name, mod in (("machine", machine_mod), ("micropython", micropython), ("neopixel", neo_mod),
                      ("time", ticks_mod), ("select", select_module(usb))):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(sys, "stdin", _Stream(usb, "stdin"))
    monkeypatch.setattr(sys, "stdout", _Stream(usb, "stdout"))
    firmware = str(FIRMWARE_DIR)

    def local(frame, event, arg):
        if event == "line":
            usb.background()
        return local

    def tracer(frame, event, arg):
        if frame.f_code.co_filename.startswith(firmware) or frame.f_code.co_filename == str(main):
            return local
        return None

    usb.ticks = ticks
    outcome = "returned"
    sys.settrace(tracer)
    try:
        runpy.run_path(str(main), run_name="__main__")
        outcome = "repl"          # main.py ended: MicroPython goes to the REPL
    except KeyboardInterrupt:
        outcome = "repl"
    except BoardStopped as stop:
        outcome = stop.why
    finally:
        sys.settrace(None)
        for name, mod in saved.items():   # the tests' own imports of the firmware stay as they were
            if mod is not None:
                sys.modules[name] = mod
    return Boot(usb, machine, neopixel, ticks, outcome, log)
