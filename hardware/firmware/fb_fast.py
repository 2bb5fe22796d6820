# fairyboard firmware: the loops that run over every byte, compiled to machine code.
#
# On the Pico these are MicroPython viper functions (@micropython.viper: typed machine words
# and raw pointers into buffers, about 50 times faster than bytecode), so a 96-LED frame is
# decoded, checked, scaled and put into the NeoPixel buffer in well under a millisecond. Under
# CPython (the tests) the same functions run as plain Python: the decorator does nothing and
# the viper type names are stand-ins. Every function here keeps to what both run alike: only
# small non-negative integers (no 32-bit overflow), indexes inside the buffers, no len() on a
# pointer argument.
#
# mpy-cross compiles viper code only for a named architecture: `-march=armv6m` (the RP2040's
# Cortex-M0+; the RP2350's Arm cores run it too), as in hardware/firmware/README.md.

import sys

if sys.implementation.name == "micropython":
    import micropython
else:  # CPython: the code emitters' decorators and viper's type names do nothing
    import builtins

    class _Emitters:
        # stands in for the module micropython: its code emitters' decorators
        @staticmethod
        def viper(f):
            return f

        native = viper

    micropython = _Emitters()

    def _same(x):
        return x

    # builtins, as on MicroPython (and in its stubs, which the static check reads)
    for _name in ("ptr8", "ptr16", "ptr32", "uint"):
        setattr(builtins, _name, _same)


@micropython.viper
def crc16(buf: ptr8, start: int, end: int, crc: int, table: ptr16) -> int:
    # CRC-16/CCITT-FALSE of buf[start:end], continuing from crc, with a 256-entry table
    i = start
    while i < end:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ buf[i]) & 0xFF]
        i += 1
    return crc


@micropython.viper
def find_zero(buf: ptr8, start: int, end: int) -> int:
    # index of the first 0x00 in buf[start:end], or -1
    i = start
    while i < end:
        if buf[i] == 0:
            return i
        i += 1
    return -1


@micropython.viper
def cobs_decode(src: ptr8, n: int, dst: ptr8) -> int:
    # COBS-decodes src[:n] into dst (room for n bytes); the decoded length, or -1 when a code
    # byte is zero or its block runs past the end
    i = 0
    o = 0
    while i < n:
        code = src[i]
        if code == 0:
            return -1
        end = i + code
        if end > n:
            return -1
        i += 1
        while i < end:
            dst[o] = src[i]
            o += 1
            i += 1
        if code != 0xFF and i < n:
            dst[o] = 0
            o += 1
    return o


@micropython.viper
def cobs_encode(src: ptr8, n: int, dst: ptr8) -> int:
    # COBS-encodes src[:n] into dst (room for n + n // 254 + 1 bytes); the encoded length
    code_at = 0
    o = 1
    code = 1
    i = 0
    while i < n:
        b = src[i]
        i += 1
        if b == 0:
            dst[code_at] = code
            code_at = o
            o += 1
            code = 1
        else:
            dst[o] = b
            o += 1
            code += 1
            if code == 0xFF:
                dst[code_at] = code
                code = 1
                if i < n:
                    code_at = o
                    o += 1
                else:
                    code_at = -1
    if code_at >= 0:
        dst[code_at] = code
    return o


@micropython.viper
def scale_table(table: ptr8, mul: int, add: int, div: int):
    # table[v] = (v * mul + add) // div for v in 0..255 (every result 0..255)
    v = 0
    while v < 256:
        table[v] = (v * mul + add) // div
        v += 1


@micropython.viper
def render(rgb: ptr8, blink: ptr8, count: int, lit: int, table: ptr8, out: ptr8,
           r_at: int, g_at: int, b_at: int) -> int:
    # The LEDs as shown: for LED i, table[channel] when bit blink[i] of lit is set, else
    # black, into out (3 bytes an LED, each channel at its offset: NeoPixel's colour order).
    # Returns the sum of every channel written (for the current budget).
    total = 0
    i = 0
    j = 0
    while i < count:
        if (lit >> blink[i]) & 1:
            r = table[rgb[j]]
            g = table[rgb[j + 1]]
            b = table[rgb[j + 2]]
        else:
            r = 0
            g = 0
            b = 0
        out[j + r_at] = r
        out[j + g_at] = g
        out[j + b_at] = b
        total += r + g + b
        i += 1
        j += 3
    return total


@micropython.viper
def remap(buf: ptr8, n: int, table: ptr8):
    # buf[k] = table[buf[k]] for k < n
    k = 0
    while k < n:
        buf[k] = table[buf[k]]
        k += 1


@micropython.viper
def first_above(rec: ptr8, count: int, at: int, limit: int) -> int:
    # index of the first 4-byte record whose byte `at` is above limit, or -1
    i = 0
    while i < count:
        if rec[4 * i + at] > limit:
            return i
        i += 1
    return -1


@micropython.viper
def split_records(rec: ptr8, count: int, size: int, rgb: ptr8, blink: ptr8) -> int:
    # count 4-byte records (r, g, b, blink) into rgb (3 bytes an LED) and blink; LEDs count..
    # size-1 dark and steady. Returns how many LEDs blink.
    blinking = 0
    i = 0
    while i < size:
        j = 3 * i
        if i < count:
            r = 4 * i
            rgb[j] = rec[r]
            rgb[j + 1] = rec[r + 1]
            rgb[j + 2] = rec[r + 2]
            blink[i] = rec[r + 3]
            if rec[r + 3]:
                blinking += 1
        else:
            rgb[j] = 0
            rgb[j + 1] = 0
            rgb[j + 2] = 0
            blink[i] = 0
        i += 1
    return blinking


@micropython.viper
def matrix_bits(into: ptr8, size: int, words: ptr32, ncols: int, rows: ptr8, nrows: int):
    # The scan's GPIO_IN words, one a column, into the sensor bitmap: sensor row * ncols + col
    # is bit (i % 8) of into[i // 8], set when the row's GPIO read low (a closed switch)
    k = 0
    while k < size:
        into[k] = 0
        k += 1
    c = 0
    while c < ncols:
        low = int(words[c]) ^ -1
        r = 0
        while r < nrows:
            if (low >> rows[r]) & 1:
                i = r * ncols + c
                into[i >> 3] = into[i >> 3] | (1 << (i & 7))
            r += 1
        c += 1


@micropython.viper
def copy(dst: ptr8, at: int, src: ptr8, start: int, n: int):
    # dst[at:at + n] = src[start:start + n], front to back (so dst may be src, at <= start).
    # (A slice assignment to a bytearray moves the whole rest of it in MicroPython: 190 us for
    # one byte into a 2 KB buffer on the RP2040.)
    k = 0
    while k < n:
        dst[at + k] = src[start + k]
        k += 1
