# USB serial byte I/O for the firmware on the Pico (MicroPython only).
#
# The host sees the Pico's USB CDC port (/dev/ttyACM*). main.py disables the Ctrl-C
# interrupt first, so a 0x03 byte in a frame is data, not a KeyboardInterrupt.

import select
import sys


class UsbSerial:
    def __init__(self):
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)

    def read(self, limit=512):
        # The bytes waiting now (at most limit), without blocking.
        buf = bytearray()
        while len(buf) < limit and self._poll.poll(0):
            b = self._in.read(1)
            if not b:
                break
            buf.extend(b)
        return buf

    def write(self, data):
        self._out.write(data)

    def wait(self, ms):
        # Return when input arrives or after ms milliseconds.
        self._poll.poll(ms)
