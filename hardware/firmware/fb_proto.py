# fairyboard serial protocol, board side: framing, CRC and payloads.
#
# Runs unchanged on MicroPython (the Pico) and CPython (the tests), so it uses only what
# both have: no f-strings, no dataclasses, no typing. The definition is hardware/PROTOCOL.md;
# the host's independent implementation is firmware_bridge/ and the tests check one against
# the other.
#
#   wire :  COBS( body ) 00
#   body :  type u8 | length u16 LE | payload (length bytes) | crc u16 LE
#   crc  :  CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over type, length and payload

import struct
from array import array

import fb_fast as F

PROTOCOL_VERSION = 1
MAX_PAYLOAD = 2048
MIN_BODY = 5
MAX_BODY = MIN_BODY + MAX_PAYLOAD
# the largest COBS-encoded frame without its delimiter: 2053 + 9 = 2062 bytes
MAX_ENCODED = MAX_BODY + (MAX_BODY + 253) // 254
MAX_TEXT = 255

# Message types: board to host
HELLO = 0x01
OCCUPANCY = 0x02
HEARTBEAT = 0x03
ERROR = 0x04
SETTINGS = 0x05
LED_ACK = 0x06
PONG = 0x07
# Message types: host to board
REQUEST = 0x81
LED_FRAME = 0x82
SET_SETTINGS = 0x83
PING = 0x84

# Occupancy reasons
REASON_CHANGE = 1
REASON_REFRESH = 2
REASON_REQUESTED = 3

# Request kinds
WANT_HELLO = 1
WANT_SETTINGS = 2
WANT_OCCUPANCY = 3

# Blink patterns
BLINK_STEADY = 0
BLINK_SLOW = 1
BLINK_FAST = 2
BLINK_SLOW_INVERTED = 3
BLINK_MAX = 3

# Error codes
E_BAD_FRAME = 1
E_UNKNOWN_TYPE = 2
E_BAD_PAYLOAD = 3
E_LED_COUNT = 4
E_BAD_SETTING = 5
E_INTERNAL = 6

# Settings: (name, lowest, highest); periodic_ms may also be 0 (off)
SETTING_RANGES = (
    ("scan_period_ms", 1, 1000),
    ("debounce_ms", 0, 5000),
    ("periodic_ms", 100, 60000),
    ("heartbeat_ms", 100, 60000),
)


def _make_table():
    table = array("H", bytes(512))
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            if crc & 0x8000:
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF
            else:
                crc = (crc << 1) & 0xFFFF
        table[i] = crc
    return table


_CRC_TABLE = _make_table()


def crc16(data, crc=0xFFFF):
    return F.crc16(data, 0, len(data), crc, _CRC_TABLE)


def cobs_encode(data):
    n = len(data)
    out = bytearray(n + n // 254 + 2)
    return out[:F.cobs_encode(data, n, out)]


def cobs_decode(data):
    # Raises ValueError for bytes no encoder produces.
    n = len(data)
    out = bytearray(n)
    m = F.cobs_decode(data, n, out)
    if m < 0:
        if F.find_zero(data, 0, n) >= 0:
            raise ValueError("COBS: zero code byte")
        raise ValueError("COBS: block runs past the end")
    return out[:m]


def encode_frame(msg_type, payload):
    # the frame on the wire: COBS(body) and its 00 delimiter, in one new bytearray
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise ValueError("payload too long")
    body = bytearray(n + MIN_BODY)
    struct.pack_into("<BH", body, 0, msg_type, n)
    body[3:3 + n] = payload
    struct.pack_into("<H", body, 3 + n, F.crc16(body, 0, 3 + n, 0xFFFF, _CRC_TABLE))
    out = bytearray(n + MIN_BODY + (n + MIN_BODY) // 254 + 2)
    k = F.cobs_encode(body, n + MIN_BODY, out)
    out[k] = 0
    return out[:k + 1]


def decode_body(body, n=None):
    # (type, payload) of the frame body body[:n], or ValueError
    if n is None:
        n = len(body)
    if n < MIN_BODY:
        raise ValueError("frame too short")
    msg_type, length = struct.unpack_from("<BH", body, 0)
    if length > MAX_PAYLOAD:
        raise ValueError("length field over 2048")
    if n != MIN_BODY + length:
        raise ValueError("length field does not match")
    if struct.unpack_from("<H", body, n - 2)[0] != F.crc16(body, 0, n - 2, 0xFFFF, _CRC_TABLE):
        raise ValueError("CRC mismatch")
    return msg_type, bytes(body[3:n - 2])


# Every frame has at least MIN_BODY + 1 bytes before its delimiter; the first HEAD of them hold
# its type and length unless the body has zeros there.
HEAD = 4


class FrameReader:
    # Splits a byte stream at 00 delimiters. feed() returns a list of (type, payload) for
    # good frames and (None, reason) for bad ones; empty frames are ignored.
    #
    # need() says how many more bytes the frame being received certainly still has, so that
    # the USB port can be read in blocks (MicroPython's stdin blocks until it has as many bytes
    # as asked for, and has no count of the bytes waiting): once a frame has begun (a byte
    # other than 00), its first HEAD bytes; then, if its type and length are a message the
    # board takes (`limits`: type -> largest payload), the rest: its body has 5 + length
    # bytes, COBS adds at least one and the delimiter one more. A frame with another head
    # promises nothing more: it is read a byte per poll.

    def __init__(self, limits=None):
        self.buf = bytearray(MAX_ENCODED)
        self.body = bytearray(MAX_ENCODED)
        self.n = 0
        self.skipping = False
        self.limits = limits or {}
        self.promised = -1      # bytes this frame has in all (header known), or -1

    def reset(self):
        self.n = 0
        self.skipping = False
        self.promised = -1

    def need(self):
        n = self.n
        if self.skipping or not n:
            return 0
        if self.promised == -1:
            if n < HEAD:
                return HEAD - n     # a frame has at least HEAD bytes before its delimiter
            self.promised = self._promised()
            if self.promised < 0:
                return 0
        left = self.promised - n
        return left if left > 0 else 0

    def _promised(self):
        # from the first bytes of the frame: 5 + length + 2 when type and length are read and
        # plausible; -2 when they are read and not plausible; -1 while they are not read yet
        buf = self.buf
        n = self.n
        head = bytearray(3)
        got = 0
        i = 0
        while i < n and got < 3:
            code = buf[i]
            end = i + code
            i += 1
            while i < end and i < n and got < 3:
                head[got] = buf[i]
                got += 1
                i += 1
            if got == 3:
                break
            if i < end or i >= n:
                return -1           # the block, or what follows it, is still to come
            if code != 0xFF:
                head[got] = 0       # a byte follows the block: its zero is real
                got += 1
        if got < 3:
            return -1
        largest = self.limits.get(head[0], -1)
        length = head[1] | head[2] << 8
        if length > largest:
            return -2
        return MIN_BODY + length + 2

    def feed(self, data):
        n = len(data)
        if n == 1 and not data[0] and not self.n and not self.skipping:
            return ()               # the lone 00 a host sends before its frames
        out = []
        i = 0
        while i < n:
            z = F.find_zero(data, i, n)
            end = n if z < 0 else z
            k = end - i
            if k and not self.skipping:
                if self.n + k > MAX_ENCODED:
                    self.skipping = True
                    self.n = 0
                    self.promised = -1
                    out.append((None, "frame too long"))
                else:
                    F.copy(self.buf, self.n, data, i, k)
                    self.n += k
            if z < 0:
                break
            i = z + 1
            if self.skipping:
                self.skipping = False
            elif self.n:
                m = F.cobs_decode(self.buf, self.n, self.body)
                if m < 0:
                    out.append((None, "COBS: block runs past the end"))
                else:
                    try:
                        out.append(decode_body(self.body, m))
                    except ValueError as exc:
                        out.append((None, str(exc)))
                self.n = 0
                self.promised = -1
        return out


# --- payloads the board sends -----------------------------------------------------------------

def hello_payload(version, sensor_count, led_count, files, ranks, boot_id):
    return struct.pack("<BBBBHHBBH", PROTOCOL_VERSION, version[0], version[1], version[2],
                       sensor_count, led_count, files, ranks, boot_id)


def occupancy_payload(seq, reason, sensor_count, mask):
    # mask: bytes-like of (sensor_count + 7) // 8 bytes, sensor i = bit i % 8 of byte i // 8
    out = bytearray(struct.pack("<HBH", seq & 0xFFFF, reason, sensor_count))
    out.extend(mask)
    return out


def heartbeat_payload(uptime_ms, occupancy_seq, rx_errors):
    return struct.pack("<IHH", uptime_ms & 0xFFFFFFFF, occupancy_seq & 0xFFFF, rx_errors & 0xFFFF)


def cut_utf8(data, limit):
    # data (UTF-8 bytes) cut to at most limit bytes, never inside a character
    if len(data) <= limit:
        return data
    n = limit
    while n > 0 and (data[n] & 0xC0) == 0x80:
        n -= 1
    return data[:n]


def error_payload(code, ref_type, detail, text):
    out = bytearray(struct.pack("<BBH", code, ref_type & 0xFF, detail & 0xFFFF))
    out.extend(cut_utf8(text.encode(), MAX_TEXT))
    return out


def settings_payload(settings):
    # settings: a list or tuple of the four values in SETTING_RANGES order
    return struct.pack("<HHHH", settings[0], settings[1], settings[2], settings[3])


def u16_payload(value):
    return struct.pack("<H", value & 0xFFFF)


# --- payloads the board receives --------------------------------------------------------------

def parse_u16(payload):
    if len(payload) != 2:
        raise ValueError("payload must be 2 bytes")
    return struct.unpack("<H", payload)[0]


def parse_request(payload):
    if len(payload) != 1:
        raise ValueError("payload must be 1 byte")
    return payload[0]


def parse_settings(payload):
    if len(payload) != 8:
        raise ValueError("payload must be 8 bytes")
    return list(struct.unpack("<HHHH", payload))


def check_settings(values):
    # None if the values are acceptable, else (index, bad value)
    for i in range(4):
        name, low, high = SETTING_RANGES[i]
        v = values[i]
        if name == "periodic_ms" and v == 0:
            continue
        if v < low or v > high:
            return i, v
    return None


def parse_led_frame(payload):
    # (seq, brightness, count, records): records holds count x (r, g, b, blink)
    if len(payload) < 5:
        raise ValueError("LED frame too short")
    seq, brightness, count = struct.unpack_from("<HBH", payload, 0)
    if len(payload) != 5 + 4 * count:
        raise ValueError("LED frame length does not match its count")
    return seq, brightness, count, memoryview(payload)[5:]
