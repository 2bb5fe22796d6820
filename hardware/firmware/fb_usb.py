# USB serial byte I/O for the firmware on the Pico (MicroPython; the tests pass fake streams).
#
# The host sees the Pico's USB CDC port (/dev/ttyACM*). main.py turns the Ctrl-C interrupt off
# first, so a 0x03 byte in a frame is data, not a KeyboardInterrupt.
#
# Reading. MicroPython's stdin has no count of the bytes waiting and a read waits until it has
# all it asked for; poll() says only whether one byte waits. One byte per poll costs ~40 us on
# the RP2040 (15 ms for a 96-LED frame), so the port is read in blocks of the size the frame
# being received still certainly has (fb_proto.FrameReader.need(): once its type and length
# are read and are a message the board takes) -- a read that takes ~2.5 us a byte and waits only
# for bytes the host has already begun to send -- and one byte per poll otherwise (between
# frames, and the few bytes of each frame's head).
#
# Writing. The board never waits for the host. MicroPython's USB write waits (up to 500 ms)
# for room in its 256-byte transmit FIFO when the host holds the port open but does not read,
# and may then send only part of what it was given. So frames go into an outgoing buffer of
# our own, which is emptied only while poll() says the port takes more; a frame that does not
# fit in the buffer is dropped whole -- never cut -- and counted (fb_core sends the current
# occupancy again once there is room). Each frame goes to the port in one write (one USB
# packet for a frame of up to 64 bytes) while `credit` -- the bytes the FIFO surely has room
# for -- covers it, else one byte per poll (a write no larger than the room poll() promised
# never waits). The credit is the FIFO's size at boot and again whenever the host has sent a
# good frame (it is there and reading: heard()), unless the FIFO was seen full since then.

import select
import sys

import fb_fast as F

OUT_LIMIT = 512    # bytes of frames waiting for the host; more are dropped whole
IN_LIMIT = 512     # bytes taken from the host per round
TX_FIFO = 256      # MicroPython's USB transmit FIFO (CFG_TUD_CDC_TX_BUFSIZE on the rp2 port)


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
        self._obuf = bytearray(OUT_LIMIT)
        self._oview = memoryview(self._obuf)
        self._olen = 0
        self.credit = TX_FIFO
        self.backed_up = False  # the FIFO was seen full since the last credit
        self.dropped = 0        # frames dropped whole: no room for them
        self.partial = 0        # writes that took fewer bytes than offered

    def read(self, need=0):
        # need > 0: that many bytes (at most IN_LIMIT), which the host has promised (waits
        # for them); else the byte waiting now, if any. Returns a memoryview (empty: none).
        if need > 0:
            if need > IN_LIMIT:
                need = IN_LIMIT
            got = self._in.readinto(self._rview[:need])
            return self._rview[:got or 0]
        if self._pin.poll(0):
            got = self._in.readinto(self._rview[:1])
            return self._rview[:got or 0]
        return self._rview[:0]

    def heard(self):
        # the host sent a good frame: it is there, and the FIFO drains
        if not self.backed_up:
            self.credit = TX_FIFO

    def write(self, data):
        # Queue one whole frame; False (and counted) when it does not fit.
        n = len(data)
        if self._olen + n > OUT_LIMIT:
            self.dropped += 1
            self.flush()
            return False
        F.copy(self._obuf, self._olen, data, 0, n)
        self._olen += n
        self.flush()
        return True

    def pending(self):
        return self._olen

    def flush(self, wait_ms=0):
        # Send what the port takes now (waiting at most wait_ms for room); never blocks longer.
        view = self._oview
        olen = self._olen
        sent = 0
        while sent < olen:
            if not self._pout.poll(wait_ms if sent == 0 else 0):
                self.backed_up = True
                self.credit = 0
                break
            k = F.find_zero(view, sent, olen) + 1 - sent    # every frame ends with its 00
            if k <= 0:
                k = olen - sent
            if k > self.credit:
                k = 1
            n = self._out.write(view[sent:sent + k])
            if n is None:
                n = k
            if n > 0:
                sent += n
                self.credit = self.credit - n if self.credit > n else 0
            if n < k:
                self.partial += 1
                self.backed_up = True
                self.credit = 0
                break
        if sent:
            rest = olen - sent
            if rest:
                F.copy(self._obuf, 0, self._obuf, sent, rest)
            self._olen = rest
        if not self._olen:
            self.backed_up = False
        return sent

    def wait(self, ms):
        # Return when input arrives, when queued output can move, or after ms milliseconds.
        if self._olen:
            self.flush()
            if self._olen and ms > 1:
                ms = 1   # room may come at any moment: look again soon
        self._pin.poll(ms)
