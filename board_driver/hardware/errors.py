"""Errors of the hardware backends, under :class:`board_driver.errors.BoardDriverError`."""

from __future__ import annotations

from board_driver.errors import BoardDriverError, ConfigError


class HardwareError(BoardDriverError, OSError):
    """A device misbehaves or cannot be reached (GPIO refused, port gone, LED driver failed)."""


class MissingLibraryError(BoardDriverError, ImportError):
    """An optional library a backend needs is not installed; the message says how to install it."""


class CalibrationError(BoardDriverError, ValueError):
    """A calibration cannot be completed or a calibration file is invalid."""


__all__ = ["BoardDriverError", "CalibrationError", "ConfigError", "HardwareError", "MissingLibraryError"]
