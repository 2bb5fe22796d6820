"""Errors of the firmware bridge.

Every error raised by this package derives from :class:`BridgeError`; each family also
derives from the builtin a caller would naturally catch (``ValueError`` for bad bytes or
bad field values, ``OSError`` for ports, ``TimeoutError`` for waits).
"""

from __future__ import annotations


class BridgeError(Exception):
    """Root of every error the firmware bridge raises."""


class FrameError(BridgeError, ValueError):
    """The bytes between two delimiters are not a valid frame (COBS, length, size)."""


class CrcError(FrameError):
    """A frame's CRC-16 does not match its contents."""


class MessageError(BridgeError, ValueError):
    """A message is invalid: unknown type, malformed payload, or a field out of range."""


class PortError(BridgeError, OSError):
    """No candidate serial port could be opened, or an open port failed."""


class LinkTimeoutError(BridgeError, TimeoutError):
    """The board did not answer within the allowed time."""


class LinkClosedError(BridgeError, ConnectionError):
    """The link was used after it was closed."""


class IncompatibleBoardError(BridgeError, RuntimeError):
    """The board speaks a protocol version this host does not."""
