# The rp2 port's `time` for the firmware under MicroPython's unix port: ticks_ms/us/cpu wrap
# at 2**30 as on the Pico (the unix port's wrap at 2**62, so no wrap would ever be seen), and
# start 1.5 s before the wrap, so that every run goes through one. Everything else is the unix
# port's own `time`.
from utime import *  # noqa: F401,F403
import utime as _t

_PERIOD = 1 << 30
_MASK = _PERIOD - 1
_HALF = 1 << 29
_MS0 = _PERIOD - 1500 - _t.ticks_ms()
_US0 = _PERIOD - 1500000 - _t.ticks_us()


def ticks_ms():
    return (_t.ticks_ms() + _MS0) & _MASK


def ticks_us():
    return (_t.ticks_us() + _US0) & _MASK


def ticks_cpu():
    return _t.ticks_cpu() & _MASK


def ticks_add(t, delta):
    return (t + delta) & _MASK


def ticks_diff(a, b):
    return ((a - b + _HALF) & _MASK) - _HALF
