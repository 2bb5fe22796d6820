"""The serial protocol between the Pi and the sensor board's microcontroller: bytes, not chess.

Wire layout (all integers little-endian; full definition in ``hardware/PROTOCOL.md``)::

    ... 00 | COBS( type | length u16 | payload (length bytes) | crc16 u16 ) | 00 | COBS( ...
           '------------------------------ one frame ------------------------------'
    crc16 = CRC-16/CCITT-FALSE over type, length and payload

Layers, each usable alone:

* :mod:`firmware_bridge.framing` -- COBS, CRC-16, frame bodies;
* :mod:`firmware_bridge.messages` -- the messages as frozen values;
* :mod:`firmware_bridge.codec` -- ``encode(msg) -> bytes`` and an I/O-free :class:`Decoder`;
* :mod:`firmware_bridge.link` -- :class:`Link`, a board connection over ``serial.serial_for_url``
  that handshakes, tracks sequence numbers, re-sends the LED state after any resync and
  reconnects when the port vanishes and comes back.

Typical use::

    link = Link(["/dev/fairyboard", "/dev/ttyACM*"], settings=Settings(debounce_ms=30))
    link.start()                      # reader thread; or call link.service() from your loop
    hello = link.wait_ready(5.0)      # PortError / LinkTimeoutError / IncompatibleBoardError
    link.send_leds([(255, 0, 0)] + [(0, 0, 0)] * 95, blink={0: Blink.SLOW}, brightness=128)
    item = link.get(timeout=0.1)      # Received(message, at): Occupancy, Hello, LinkStatus, ...
    print(link.health().lines())      # counters for diagnostics
    link.close()
"""

from firmware_bridge.codec import Decoder, DecoderStats, body_of, decode, encode
from firmware_bridge.errors import (
    BridgeError, CrcError, FrameError, IncompatibleBoardError, LinkClosedError, LinkTimeoutError,
    MessageError, PortError,
)
from firmware_bridge.link import (
    BoardLink, Link, LinkHealth, LinkState, LinkStatus, LinkTimings, Received, SerialPort,
    open_serial, resolve_ports,
)
from firmware_bridge.messages import (
    BOARD_MESSAGES, HOST_MESSAGES, PROTOCOL_VERSION, Blink, BoardError, ErrorCode, Heartbeat,
    Hello, LedAck, LedFrame, Message, Occupancy, OccupancyReason, Ping, Pong, Request, RequestKind,
    SetSettings, Settings,
)

__all__ = [
    "BOARD_MESSAGES", "HOST_MESSAGES", "PROTOCOL_VERSION",
    "Blink", "BoardError", "ErrorCode", "Heartbeat", "Hello", "LedAck", "LedFrame", "Message",
    "Occupancy", "OccupancyReason", "Ping", "Pong", "Request", "RequestKind", "SetSettings",
    "Settings",
    "Decoder", "DecoderStats", "body_of", "decode", "encode",
    "BoardLink", "Link", "LinkHealth", "LinkState", "LinkStatus", "LinkTimings", "Received",
    "SerialPort", "open_serial", "resolve_ports",
    "BridgeError", "CrcError", "FrameError", "IncompatibleBoardError", "LinkClosedError",
    "LinkTimeoutError", "MessageError", "PortError",
]
