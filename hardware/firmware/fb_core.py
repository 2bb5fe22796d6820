# fairyboard firmware logic: matrix scan, debounce, LEDs and the protocol state machine.
#
# Hardware comes in as objects (pins from `machine`, a strip from `neopixel`, a byte `io`
# and a `clock` with ticks_ms/ticks_diff), so the same code runs on the Pico (main.py
# passes the real modules) and under CPython in the tests (which pass fakes).
# MicroPython and CPython both: no f-strings, no dataclasses, no typing. The loops over every
# LED and every byte are in fb_fast (viper machine code on the Pico, plain Python in the tests).

from array import array

import fb_fast as F
import fb_proto as P
from fb_fast import micropython

TYPE_CHECKING = False
if TYPE_CHECKING:   # never run: the static check's view of the hardware (MicroPython's stubs)
    from typing import Any, Callable

    from machine import Pin
    from neopixel import NeoPixel

FIRMWARE_VERSION = (1, 2, 0)
# scan_period_ms, debounce_ms, periodic_ms, heartbeat_ms (see fb_proto.SETTING_RANGES)
DEFAULT_SETTINGS = (10, 30, 1000, 1000)

# The firmware's clock (uptime in ms) wraps at UPTIME_WRAP so that it stays a small integer
# on MicroPython (below 2**30: no heap allocation); a multiple of 1000, so blink phases run on
# across the wrap. Times are compared with wrapped differences (elapsed()).
UPTIME_WRAP = 500000000
# LED current model (the same as board_driver's): each LED draws LED_IDLE_MA dark and
# LED_CHANNEL_MA more per colour channel at 255 (60 mA at full white).
LED_IDLE_MA = 1
LED_CHANNEL_MA = 20
# bytes of the host's taken per round of the loop (one 96-LED frame is 397)
IN_LIMIT = 512
# WS2812 latch: the LEDs take a frame as ended only once the data line has rested low this
# long (us; newer WS2812B parts need 280, older ones 50), so a frame begun sooner after the
# last one ends runs on into it. Leds waits out what is left of it before writing.
LATCH_US = 300


def elapsed(now, then):
    # now - then on the wrapping uptime clock, in -UPTIME_WRAP/2 .. UPTIME_WRAP/2
    half = UPTIME_WRAP // 2
    return (now - then + half) % UPTIME_WRAP - half


# The RP2040's single-cycle IO block (SIO): all GPIO inputs in one word; writing a mask to
# OUT_SET / OUT_CLR drives those outputs high / low (RP2040 datasheet, section 2.3.1.7).
SIO_GPIO_IN = 0xD0000004
SIO_GPIO_OUT_SET = 0xD0000014
SIO_GPIO_OUT_CLR = 0xD0000018
# The GPIOs' pad controls (section 2.19.6.3): DRIVE in bits 5:4 (0: 2 mA, 1: 4, 2: 8, 3: 12 mA);
# +0x2000 / +0x3000 are the atomic set / clear aliases of every register.
PADS_BANK0_GPIO0 = 0x4001C004
PAD_DRIVE = {2: 0, 4: 1, 8: 2, 12: 3}


def set_drive(mem32, gpio, ma):
    # the output drive strength of one GPIO (ValueError for a strength the RP2040 has not)
    code = PAD_DRIVE[ma] if ma in PAD_DRIVE else -1
    if code < 0:
        raise ValueError("drive must be 2, 4, 8 or 12 mA")
    pad = PADS_BANK0_GPIO0 + 4 * gpio
    mem32[pad + 0x3000] = 0x30
    mem32[pad + 0x2000] = code << 4


class Matrix:
    # Columns are outputs idling high; a scan pulls one column low at a time and reads the
    # rows, which have pull-ups: a closed switch (its diode pointing to the column) pulls
    # its row low. Sensor index = row * len(columns) + col.
    #
    # The pins are set up as machine.Pin objects (build()); a scan drives and reads them
    # through the SIO registers (mem32: machine.mem32), one word for all eight rows: 12 column
    # steps instead of 120 Pin calls (0.5 ms a scan on the RP2040 instead of 4.3 ms).

    def __init__(self, columns, rows, column_gpios, row_gpios, mem32, settle=None):
        # type: (list[Pin], list[Pin], tuple[int, ...], tuple[int, ...], Any, Callable[[], None] | None) -> None
        self.columns = list(columns)        # the Pin objects, kept for their set-up
        self.rows = list(rows)
        self.count = len(self.columns) * len(self.rows)
        self.settle = settle
        self.mem32 = mem32
        self.col_masks = [1 << g for g in column_gpios]
        self.row_pins = bytearray(row_gpios)
        self.words = array("I", bytes(4 * len(self.columns)))

    @micropython.native
    def scan(self, into):
        mem = self.mem32
        settle = self.settle
        words = self.words
        c = 0
        for mask in self.col_masks:
            mem[SIO_GPIO_OUT_CLR] = mask
            if settle is not None:
                settle()
            words[c] = mem[SIO_GPIO_IN]
            mem[SIO_GPIO_OUT_SET] = mask
            c += 1
        F.matrix_bits(into, len(into), words, c, self.row_pins, len(self.row_pins))


class Debouncer:
    # A sensor's reported state follows its raw reading once the reading has differed from
    # the reported state at every scan for debounce_ms.

    def __init__(self, count):
        n = (count + 7) // 8
        self.stable = bytearray(n)
        self.pending = bytearray(n)
        self.since = [0] * (n * 8)

    def reset(self, raw):
        for k in range(len(self.stable)):
            self.stable[k] = raw[k]
            self.pending[k] = 0

    @micropython.native
    def update(self, raw, now, debounce_ms):
        # True if the stable state changed; now is in ms (uptime)
        changed = False
        stable = self.stable
        pending = self.pending
        since = self.since
        for k in range(len(stable)):
            diff = raw[k] ^ stable[k]
            pend = pending[k]
            if not diff and not pend:
                continue
            pend &= diff
            new = diff & ~pend & 0xFF
            base = k * 8
            for bit in range(8):
                m = 1 << bit
                if new & m:
                    since[base + bit] = now
                    pend |= m
                if pend & m and elapsed(now, since[base + bit]) >= debounce_ms:
                    stable[k] ^= m
                    pend &= ~m & 0xFF
                    changed = True
            pending[k] = pend
        return changed


class Leds:
    # Keeps the LED frame the host sent and shows it on the strip: brightness-scaled, each
    # LED on or off according to its blink pattern and the board's uptime. The strip is
    # written only when what it shows changes. The colours go straight into the NeoPixel's
    # buffer (strip.buf, in the strip's colour ORDER), through tables: brightness, then the
    # current budget. Two writes are at least LATCH_US apart (the end of one to the start of
    # the next) when the clock has ticks_us and sleep_us (MicroPython's time; not the tests'
    # CPython fakes of ticks_ms alone): only the part of it not yet past is waited.

    def __init__(self, strip, count, budget_ma=None, clock=None):
        # type: (NeoPixel, int, int | None, Any) -> None
        self.strip = strip
        # the clock of the latch wait: MicroPython's time (None: no wait)
        self.latch = clock if hasattr(clock, "ticks_us") and hasattr(clock, "sleep_us") else None
        self.written_us = 0                 # ticks_us when the last write ended
        self.written = False
        self.count = count
        self.budget_ma = budget_ma  # None: no limit
        self.rgb = bytearray(3 * count)
        self.blink = bytearray(count)
        self.brightness = 255
        self.blinking = False
        self.shown_phase = -1
        self.dirty = True
        self.table = bytearray(256)         # channel -> channel at self.table_for
        self.table_for = -1
        self.budget = bytearray(256)        # channel -> channel scaled into the budget
        order = getattr(strip, "ORDER", (1, 0, 2))
        self.at = (order[0], order[1], order[2])
        if len(strip.buf) < 3 * count:
            raise ValueError("the strip's buffer is not 3 bytes an LED")

    def set_frame(self, brightness, count, records):
        self.blinking = F.split_records(records, count, self.count, self.rgb, self.blink) > 0
        self.brightness = brightness
        self.dirty = True

    @staticmethod
    def phase(uptime):
        # bit 0: slow patterns in their on half; bit 1: fast patterns in their on half
        return (1 if uptime % 1000 < 500 else 0) | (2 if uptime % 250 < 125 else 0)

    def ms_until_change(self, uptime):
        if self.dirty:
            return 0
        if not self.blinking:
            return None
        return 125 - uptime % 125

    def write(self):
        # the buffer to the strip, once the line has rested low LATCH_US since the last write
        strip = self.strip
        latch = self.latch
        if latch is not None and self.written:
            wait = LATCH_US - latch.ticks_diff(latch.ticks_us(), self.written_us)
            if wait > 0:
                latch.sleep_us(wait)
        strip.write()
        if latch is not None:
            self.written_us = latch.ticks_us()
            self.written = True

    def update(self, uptime):
        phase = self.phase(uptime) if self.blinking else 0
        if not self.dirty and phase == self.shown_phase:
            return False
        slow = phase & 1
        # bit p of lit: LEDs with blink pattern p are on now (STEADY, SLOW, FAST, SLOW_INVERTED)
        lit = (1 << P.BLINK_STEADY) | (slow << P.BLINK_SLOW) | ((phase >> 1) << P.BLINK_FAST) \
            | ((slow ^ 1) << P.BLINK_SLOW_INVERTED)
        br = self.brightness
        if br != self.table_for:
            F.scale_table(self.table, br, 127, 255)     # (c * brightness + 127) // 255
            self.table_for = br
        strip = self.strip
        at = self.at
        total = F.render(self.rgb, self.blink, self.count, lit, self.table, strip.buf,
                         at[0], at[1], at[2])
        # The current budget: scale the whole frame down when it would draw more.
        if self.budget_ma is not None:
            allowed = max(0, self.budget_ma - LED_IDLE_MA * self.count) * 255 // LED_CHANNEL_MA
            if total > allowed:
                F.scale_table(self.budget, allowed, 0, total)   # c * allowed // total
                F.remap(strip.buf, 3 * self.count, self.budget)
        self.write()
        self.dirty = False
        self.shown_phase = phase
        return True


class Firmware:
    # The board: call start() once, then step() as often as possible (run() does both).

    def __init__(self, io, matrix, leds, clock, files, ranks, boot_id, settings=DEFAULT_SETTINGS,
                 version=FIRMWARE_VERSION):
        self.io = io
        self.matrix = matrix
        self.leds = leds
        self.clock = clock
        self.files = files
        self.ranks = ranks
        self.boot_id = boot_id & 0xFFFF
        self.version = version
        self.settings = list(settings)
        self.sensor_count = matrix.count
        # the frames the board takes, with their largest payloads: the USB port reads the
        # rest of such a frame in one block once its head has come (fb_usb)
        self.reader = P.FrameReader({P.REQUEST: 1, P.PING: 2, P.SET_SETTINGS: 8,
                                     P.LED_FRAME: 5 + 4 * leds.count})
        self.heard = getattr(io, "heard", None)
        self.raw = bytearray((self.sensor_count + 7) // 8)
        self.debouncer = Debouncer(self.sensor_count)
        self.next_seq = 0
        self.rx_errors = 0
        self.uptime = 0
        self.laps = 0
        self.owed = 0
        self.last_ticks = 0
        self.next_scan = 0
        self.last_occupancy_at = 0
        self.next_heartbeat = 0
        self.started = False

    # --- sending ---

    def send(self, msg_type, payload):
        # False when the link could not take the frame now (the io drops it whole and counts it)
        return self.io.write(P.encode_frame(msg_type, payload)) is not False

    def send_hello(self):
        self.send(P.HELLO, P.hello_payload(self.version, self.sensor_count, self.leds.count,
                                           self.files, self.ranks, self.boot_id))

    def send_occupancy(self, reason):
        # An occupancy the link cannot take now is owed: the current state goes out as soon
        # as it can (coalesced: one frame, whatever changed meanwhile). seq counts frames sent.
        if self.send(P.OCCUPANCY, P.occupancy_payload(self.next_seq, reason, self.sensor_count,
                                                      self.debouncer.stable)):
            self.next_seq = (self.next_seq + 1) & 0xFFFF
            self.owed = 0
        elif not self.owed or reason == P.REASON_CHANGE:
            self.owed = reason
        self.last_occupancy_at = self.uptime

    def uptime_ms(self):
        # milliseconds since boot, modulo 2**32 (for HEARTBEAT; allocates, once a heartbeat)
        return (self.laps * UPTIME_WRAP + self.uptime) & 0xFFFFFFFF

    def send_heartbeat(self):
        self.send(P.HEARTBEAT, P.heartbeat_payload(self.uptime_ms(), (self.next_seq - 1) & 0xFFFF,
                                                   self.rx_errors))

    def send_error(self, code, ref_type, detail, text):
        self.send(P.ERROR, P.error_payload(code, ref_type, detail, text))

    def send_settings(self):
        self.send(P.SETTINGS, P.settings_payload(self.settings))

    def report_crash(self, exc):
        try:
            self.send_error(P.E_INTERNAL, 0, 0, repr(exc))
            flush = getattr(self.io, "flush", None)
            if flush is not None:
                flush(200)  # give the host a moment to take it before the reset
        except Exception:
            pass

    # --- the loop ---

    def start(self):
        self.last_ticks = self.clock.ticks_ms()
        self.uptime = 0
        self.io.write(b"\x00")  # ends any partial frame the host holds
        self.send_hello()
        self.matrix.scan(self.raw)
        self.debouncer.reset(self.raw)
        self.send_occupancy(P.REASON_REFRESH)
        self.next_scan = self.settings[0]
        self.next_heartbeat = self.settings[3]
        self.leds.update(0)
        self.started = True

    def tick(self):
        now = self.clock.ticks_ms()
        up = self.uptime + self.clock.ticks_diff(now, self.last_ticks)
        if up >= UPTIME_WRAP:
            up -= UPTIME_WRAP
            self.laps += 1
        self.uptime = up
        self.last_ticks = now
        return up

    def step(self):
        up = self.tick()
        self.receive()
        scan_ms, debounce_ms, periodic_ms, heartbeat_ms = self.settings
        late = elapsed(up, self.next_scan)
        if late >= 0:
            # The scan counts at its scheduled time (the latest slot of the schedule not after
            # now), so a late scan does not push a change's report back by a whole period.
            slot = (self.next_scan + late - late % scan_ms) % UPTIME_WRAP
            self.matrix.scan(self.raw)
            if self.debouncer.update(self.raw, slot, debounce_ms):
                self.send_occupancy(P.REASON_CHANGE)
            self.next_scan = (slot + scan_ms) % UPTIME_WRAP
            if self.owed:
                self.send_occupancy(self.owed)
        if periodic_ms and elapsed(up, self.last_occupancy_at) >= periodic_ms:
            self.send_occupancy(P.REASON_REFRESH)
        if elapsed(up, self.next_heartbeat) >= 0:
            self.send_heartbeat()
            self.next_heartbeat = (up + heartbeat_ms) % UPTIME_WRAP
        self.leds.update(up)

    def receive(self):
        # What the host sent: the rest of a frame whose head has come in one read, else the
        # bytes waiting; at most IN_LIMIT bytes a round.
        io = self.io
        reader = self.reader
        left = IN_LIMIT
        while left > 0:
            need = reader.need()
            data = io.read(need if need < left else left) if need else io.read()
            if not data:
                return
            left -= len(data)
            for msg_type, payload in reader.feed(data):
                self.handle(msg_type, payload)

    def ms_until_due(self):
        # How long the loop may wait for input before step() has work to do.
        up = self.uptime
        wait = min(-elapsed(up, self.next_scan), -elapsed(up, self.next_heartbeat))
        if self.settings[2]:
            wait = min(wait, self.settings[2] - elapsed(up, self.last_occupancy_at))
        leds = self.leds.ms_until_change(up)
        if leds is not None and leds < wait:
            wait = leds
        return wait if wait > 0 else 0

    # --- receiving ---

    def handle(self, msg_type, payload):
        if msg_type is None:
            self.rx_errors = (self.rx_errors + 1) & 0xFFFF
            self.send_error(P.E_BAD_FRAME, 0, self.rx_errors, payload)
            return
        if self.heard is not None:
            self.heard()
        try:
            if msg_type == P.LED_FRAME:
                self.on_led_frame(payload)
            elif msg_type == P.REQUEST:
                self.on_request(P.parse_request(payload))
            elif msg_type == P.SET_SETTINGS:
                self.on_set_settings(P.parse_settings(payload))
            elif msg_type == P.PING:
                P.parse_u16(payload)                    # checks the size
                self.send(P.PONG, payload)              # the token, echoed
            else:
                self.send_error(P.E_UNKNOWN_TYPE, msg_type, msg_type, "unknown message type")
        except ValueError as exc:
            self.send_error(P.E_BAD_PAYLOAD, msg_type, len(payload), str(exc))

    def on_request(self, what):
        if what == P.WANT_HELLO:
            self.send_hello()
        elif what == P.WANT_SETTINGS:
            self.send_settings()
        elif what == P.WANT_OCCUPANCY:
            self.send_occupancy(P.REASON_REQUESTED)
        else:
            self.send_error(P.E_BAD_PAYLOAD, P.REQUEST, what, "unknown request")

    def on_led_frame(self, payload):
        seq, brightness, count, records = P.parse_led_frame(payload)
        if count > self.leds.count:
            self.send_error(P.E_LED_COUNT, P.LED_FRAME, count,
                            "board has %d LEDs" % self.leds.count)
            return
        i = F.first_above(records, count, 3, P.BLINK_MAX)
        if i >= 0:
            self.send_error(P.E_BAD_PAYLOAD, P.LED_FRAME, records[4 * i + 3],
                            "LED %d: unknown blink pattern" % i)
            return
        self.leds.set_frame(brightness, count, records)
        self.leds.update(self.uptime)
        self.send(P.LED_ACK, P.u16_payload(seq))

    def on_set_settings(self, values):
        bad = P.check_settings(values)
        if bad is not None:
            index, value = bad
            name, low, high = P.SETTING_RANGES[index]
            self.send_error(P.E_BAD_SETTING, P.SET_SETTINGS, value,
                            "%s must be %d..%d" % (name, low, high))
        else:
            self.settings = list(values)
            self.next_scan = self.uptime
            if elapsed(self.next_heartbeat, self.uptime) > values[3]:
                self.next_heartbeat = (self.uptime + values[3]) % UPTIME_WRAP
        self.send_settings()


def build(machine, neopixel, pins, io, clock, boot_id, settle=None):
    # The firmware on the board described by the pin map `pins` (see fb_pins.py), with the
    # machine and neopixel modules given (the tests' fakes; on the Pico fb_main.board() does
    # the same with the real ones).
    Pin = machine.Pin
    columns = [Pin(n, Pin.OUT, value=1) for n in pins.COLUMNS]
    rows = [Pin(n, Pin.IN, Pin.PULL_UP) for n in pins.ROWS]
    strip = neopixel.NeoPixel(Pin(pins.LED_DATA, Pin.OUT), pins.LED_COUNT)
    return assemble(columns, rows, strip, machine.mem32, pins, io, clock, boot_id, settle)


def assemble(columns, rows, strip, mem32, pins, io, clock, boot_id, settle=None):
    # type: (list[Pin], list[Pin], NeoPixel, Any, Any, Any, Any, int, Callable[[], None] | None) -> Firmware
    leds = Leds(strip, pins.LED_COUNT, getattr(pins, "LED_BUDGET_MA", None), clock)
    drive = getattr(pins, "COLUMN_DRIVE_MA", None)
    if drive is not None:
        for gpio in pins.COLUMNS:
            set_drive(mem32, gpio, drive)
    matrix = Matrix(columns, rows, pins.COLUMNS, pins.ROWS, mem32, settle)
    return Firmware(io, matrix, leds, clock, len(columns), len(rows), boot_id)


def run(fw, io, feed=None):
    # The main loop: never returns. feed is called every round (the watchdog).
    fw.start()
    while True:
        fw.step()
        if feed is not None:
            feed()
        io.wait(fw.ms_until_due())
