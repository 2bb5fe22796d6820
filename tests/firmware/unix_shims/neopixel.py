# The rp2 port's `neopixel` (micropython-lib's) for the firmware under MicroPython's unix port:
# the same buffer layout (n x bpp bytes in ORDER: G, R, B); write() appends the buffer, as hex,
# as one line of $FB_BOARD_DIR/leds -- what the strip shows from then on.
import os

_DIR = os.getenv("FB_BOARD_DIR") or "."


class NeoPixel:
    ORDER = (1, 0, 2, 3)

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)
        pin.init(pin.OUT)
        self.timing = timing

    def __len__(self):
        return self.n

    def __setitem__(self, i, v):
        offset = i * self.bpp
        for k in range(self.bpp):
            self.buf[offset + self.ORDER[k]] = v[k]

    def __getitem__(self, i):
        offset = i * self.bpp
        return tuple(self.buf[offset + self.ORDER[k]] for k in range(self.bpp))

    def fill(self, v):
        for i in range(self.n):
            self[i] = v

    def write(self):
        with open(_DIR + "/leds", "a") as f:
            f.write(self.buf.hex() + "\n")
