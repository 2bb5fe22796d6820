# The firmware's start-up on the Pico: safe-mode check, watchdog, the main loop, and a reset
# after any failure. main.py imports this after turning Ctrl-C off; the test harness runs
# main.py under CPython with fake machine/micropython/neopixel/time modules and a fake USB.

import machine
import micropython
import neopixel
import time

import fb_core
import fb_pins
import fb_usb


def boot_id():
    try:
        import os
        return int.from_bytes(os.urandom(2), "little")
    except (ImportError, AttributeError, NotImplementedError):
        # ticks are opaque values for ticks_diff, not numbers to mask
        return time.ticks_diff(time.ticks_cpu(), 0) & 0xFFFF


def settle():
    time.sleep_us(fb_pins.SETTLE_US)


def board(io):
    # The firmware on this Pico's pins (fb_pins): the real machine, neopixel and time here,
    # so the static check (tests/firmware/test_static_check.py) checks every call on them.
    Pin = machine.Pin
    columns = [Pin(n, Pin.OUT, value=1) for n in fb_pins.COLUMNS]
    rows = [Pin(n, Pin.IN, Pin.PULL_UP) for n in fb_pins.ROWS]
    strip = neopixel.NeoPixel(Pin(fb_pins.LED_DATA, Pin.OUT), fb_pins.LED_COUNT)
    return fb_core.assemble(columns, rows, strip, machine.mem32, fb_pins, io, time, boot_id(), settle)


def main():
    safe = machine.Pin(fb_pins.SAFE_MODE, machine.Pin.IN, machine.Pin.PULL_UP)
    if safe.value() == 0:
        micropython.kbd_intr(3)  # the REPL and mpremote need Ctrl-C
        print("fairyboard: safe-mode pin is low, firmware not started")
        return
    # From here on the watchdog resets a board whose loop stalls (or that fails to start).
    wdt = machine.WDT(timeout=fb_pins.WATCHDOG_MS)
    fw = None
    try:
        io = fb_usb.UsbSerial()
        fw = board(io)
        fb_core.run(fw, io, wdt.feed)
    except Exception as exc:
        # Tell the host, then reset at once: the board boots again and says Hello, and the
        # host re-sends its LED state. (Never the REPL: it would take the host's frames.)
        if fw is not None:
            fw.report_crash(exc)
        else:
            # failed while starting (a missing or mismatched .mpy?): say so as text, and wait
            # a moment so that a boot loop does not re-enumerate the USB port non-stop
            print("fairyboard: start-up failed:", repr(exc))
            time.sleep_ms(2000)
        machine.reset()
