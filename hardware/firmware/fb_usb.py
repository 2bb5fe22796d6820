# USB serial byte I/O for the firmware on the Pico (MicroPython; the tests pass fake streams).
#
# The host sees the Pico's USB CDC port (/dev/ttyACM*). main.py turns the Ctrl-C interrupt off
# first, so a 0x03 byte in a frame is data, not a KeyboardInterrupt.
#
# The board never waits for the host. MicroPython's USB write waits (up to 500 ms) for room
# in its 256-byte transmit FIFO when the host holds the port open but does not read, and may
# then send only part of what it was given. So frames go into an outgoing buffer of our own,
# which is emptied only while poll() says the port takes more, one byte at a time (a write no
# larger than the room poll() promised never waits); a frame that does not fit in the buffer
# is dropped whole -- never cut -- and counted (fb_core sends the current occupancy again
# once there is room). Input is taken while poll() says a byte waits, into one preallocated
# buffer handed to the frame reader as a block: MicroPython's stdin has no count of waiting
# bytes, and reading more than are there would block.

import select
import sys

OUT_LIMIT = 512    # bytes of frames waiting for the host; more are dropped whole
IN_LIMIT = 512     # bytes taken from the host per round


class UsbSerial:
    def __init__(self, stdin=None, stdout=None, poll=None):
        self._in = (stdin or sys.stdin).buffer
        self._out = (stdout or sys.stdout).buffer
        make = poll or select.poll
        self._pin = make()
        self._pin.register(stdin or sys.stdin, select.POLLIN)
        self._pout = make()
        self._pout.register(stdout or sys.stdout, select.POLLOUT)
        self._rbuf = bytearray(IN_LIMIT)
        self._rview = memoryview(self._rbuf)
        self._obuf = bytearray()
        self.dropped = 0        # frames dropped whole: no room for them
        self.partial = 0        # writes that took fewer bytes than offered

    def read(self, limit=IN_LIMIT):
        # The bytes waiting now (at most limit), without blocking.
        n = 0
        view = self._rview
        limit = min(limit, IN_LIMIT)
        while n < limit and self._pin.poll(0):
            got = self._in.readinto(view[n:n + 1])
            if not got:
                break
            n += got
        return self._rbuf[:n] if n else b""

    def write(self, data):
        # Queue one whole frame; False (and counted) when it does not fit.
        if len(self._obuf) + len(data) > OUT_LIMIT:
            self.dropped += 1
            self.flush()
            return False
        self._obuf.extend(data)
        self.flush()
        return True

    def pending(self):
        return len(self._obuf)

    def flush(self, wait_ms=0):
        # Send what the port takes now (waiting at most wait_ms for room); never blocks longer.
        buf = self._obuf
        sent = 0
        while sent < len(buf) and self._pout.poll(wait_ms if sent == 0 else 0):
            n = self._out.write(buf[sent:sent + 1])
            if not n:
                self.partial += 1
                break
            sent += n
        if sent:
            self._obuf = buf[sent:]
        return sent

    def wait(self, ms):
        # Return when input arrives, when queued output can move, or after ms milliseconds.
        if self._obuf:
            self.flush()
            if self._obuf and ms > 1:
                ms = 1   # room may come at any moment: look again soon
        self._pin.poll(ms)
