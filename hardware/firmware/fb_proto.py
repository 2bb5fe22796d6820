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
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            if crc & 0x8000:
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF
            else:
                crc = (crc << 1) & 0xFFFF
        table.append(crc)
    return tuple(table)


_CRC_TABLE = _make_table()


def crc16(data, crc=0xFFFF):
    table = _CRC_TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
    return crc


def cobs_encode(data):
    out = bytearray()
    code_at = 0
    out.append(0)
    code = 1
    n = len(data)
    i = 0
    while i < n:
        b = data[i]
        i += 1
        if b == 0:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code = 1
                if i < n:
                    code_at = len(out)
                    out.append(0)
                else:
                    code_at = -1
    if code_at >= 0:
        out[code_at] = code
    return out


def cobs_decode(data):
    # Raises ValueError for bytes no encoder produces.
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ValueError("COBS: zero code byte")
        end = i + code
        if end > n:
            raise ValueError("COBS: block runs past the end")
        out.extend(data[i + 1:end])
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return out


def encode_frame(msg_type, payload):
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise ValueError("payload too long")
    body = bytearray(struct.pack("<BH", msg_type, n))
    body.extend(payload)
    body.extend(struct.pack("<H", crc16(body)))
    out = cobs_encode(body)
    out.append(0)
    return out


def decode_body(body):
    # (type, payload) of a frame body, or ValueError
    n = len(body)
    if n < MIN_BODY:
        raise ValueError("frame too short")
    msg_type, length = struct.unpack_from("<BH", body, 0)
    if length > MAX_PAYLOAD:
        raise ValueError("length field over 2048")
    if n != MIN_BODY + length:
        raise ValueError("length field does not match")
    if struct.unpack_from("<H", body, n - 2)[0] != crc16(memoryview(body)[:n - 2]):
        raise ValueError("CRC mismatch")
    return msg_type, bytes(body[3:n - 2])


class FrameReader:
    # Splits a byte stream at 00 delimiters. feed() returns a list of (type, payload) for
    # good frames and (None, reason) for bad ones; empty frames are ignored.

    def __init__(self):
        self.buf = bytearray()
        self.skipping = False

    def reset(self):
        self.buf = bytearray()
        self.skipping = False

    def feed(self, data):
        out = []
        buf = self.buf
        for b in data:
            if b:
                if not self.skipping:
                    buf.append(b)
                    if len(buf) > MAX_ENCODED:
                        self.skipping = True
                        buf = self.buf = bytearray()
                        out.append((None, "frame too long"))
                continue
            if self.skipping:
                self.skipping = False
            elif buf:
                try:
                    out.append(decode_body(cobs_decode(buf)))
                except ValueError as exc:
                    out.append((None, str(exc)))
                buf = self.buf = bytearray()
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
