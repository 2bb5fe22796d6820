# The rp2 port's `machine` for the firmware under MicroPython's unix port, as far as the
# firmware uses it: Pin, mem32 at the SIO's GPIO registers, WDT and reset. The pins are those
# of a 12 x 8 reed-switch matrix with a diode per switch: a row reads low while a column
# driven low has a closed switch on it. The closed switches are the sensor indexes in the file
# $FB_BOARD_DIR/closed (read at the start of every scan); reset() ends the process with code 3.
import os
import sys

import fb_pins

_DIR = os.getenv("FB_BOARD_DIR") or "."
_CLOSED = _DIR + "/closed"
_pins = {}
_closed = set()


def _load_closed():
    global _closed
    try:
        with open(_CLOSED) as f:
            _closed = set(int(w) for w in f.read().split())
    except (OSError, ValueError):
        pass                            # being rewritten: the next scan reads it


class Pin:
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, gpio, mode=-1, pull=-1, *, value=None):
        if not 0 <= gpio < 30:
            raise ValueError("invalid pin")
        self.gpio = gpio
        self.mode = Pin.IN
        self.pull = None
        self.out = 0
        _pins[gpio] = self
        self.init(mode, pull, value=value)

    def init(self, mode=-1, pull=-1, *, value=None):
        if mode != -1:
            self.mode = mode
        if pull != -1:
            self.pull = pull
        if value is not None:
            self.out = 1 if value else 0

    def value(self, x=None):
        if x is None:
            return self.out if self.mode == Pin.OUT else _level(self.gpio)
        self.out = 1 if x else 0

    __call__ = value

    def on(self):
        self.out = 1

    def off(self):
        self.out = 0

    def __repr__(self):
        return "Pin(GPIO%d)" % self.gpio


def _level(gpio):
    pin = _pins.get(gpio)
    if pin is not None and pin.mode == Pin.OUT:
        return pin.out
    if gpio in fb_pins.ROWS:
        row = fb_pins.ROWS.index(gpio)
        ncols = len(fb_pins.COLUMNS)
        for col, g in enumerate(fb_pins.COLUMNS):
            p = _pins.get(g)
            if p is not None and p.mode == Pin.OUT and not p.out and row * ncols + col in _closed:
                return 0
    if pin is not None and pin.pull == Pin.PULL_DOWN:
        return 0
    return 1


class _Sio:
    GPIO_IN = 0xD0000004
    GPIO_OUT_SET = 0xD0000014
    GPIO_OUT_CLR = 0xD0000018

    def __getitem__(self, addr):
        if addr != self.GPIO_IN:
            raise ValueError("mem32: unmodelled address %x" % addr)
        word = 0
        for g in range(30):
            word |= _level(g) << g
        return word

    def __setitem__(self, addr, mask):
        if 0x4001E004 <= addr < 0x4001F07C:     # the pads' set/clear aliases: drive strength
            return
        if addr == self.GPIO_OUT_CLR:
            if mask == 1 << fb_pins.COLUMNS[0]:
                _load_closed()          # a scan begins
            level = 0
        elif addr == self.GPIO_OUT_SET:
            level = 1
        else:
            raise ValueError("mem32: unmodelled address %x" % addr)
        for g in range(30):
            if mask >> g & 1:
                p = _pins.get(g)
                if p is None or p.mode != Pin.OUT:
                    raise ValueError("GPIO%d is not an output" % g)
                p.out = level


mem32 = _Sio()


class WDT:
    def __init__(self, id=0, timeout=5000):
        if not 1 <= timeout <= 8388:
            raise ValueError("timeout out of range")
        self.timeout = timeout

    def feed(self):
        pass


def reset():
    with open(_DIR + "/resets", "a") as f:
        f.write("reset\n")
    sys.exit(3)
