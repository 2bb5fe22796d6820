# fairyboard firmware entry point for the Raspberry Pi Pico running MicroPython.
# Copy fb_proto.py, fb_core.py, fb_pins.py, fb_usb.py and this file to the Pico's root
# (see README.md); MicroPython runs main.py at every boot.

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
        return time.ticks_cpu() & 0xFFFF


def settle():
    time.sleep_us(5)


def main():
    safe = machine.Pin(fb_pins.SAFE_MODE, machine.Pin.IN, machine.Pin.PULL_UP)
    if safe.value() == 0:
        print("fairyboard: safe-mode pin is low, firmware not started")
        return
    io = fb_usb.UsbSerial()
    fw = fb_core.build(machine, neopixel, fb_pins, io, time, boot_id(), settle)
    micropython.kbd_intr(-1)
    wdt = machine.WDT(timeout=fb_pins.WATCHDOG_MS)
    try:
        fb_core.run(fw, io, wdt.feed)
    except Exception as exc:
        # Tell the host, then let the watchdog reset the board (it then says Hello again).
        fw.report_crash(exc)
        micropython.kbd_intr(3)
        raise


main()
