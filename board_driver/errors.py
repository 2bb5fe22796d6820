"""Errors of the board driver: one root, and one class for each kind of trouble a user meets."""


class BoardDriverError(Exception):
    """Root of every error the board driver raises."""


class ConfigError(BoardDriverError, ValueError):
    """A configuration file, key or value is invalid."""


class HardwareError(BoardDriverError, OSError):
    """A device misbehaves or cannot be reached (GPIO refused, port gone, LED driver failed)."""


class MissingLibraryError(BoardDriverError, ImportError):
    """An optional library a backend needs is not installed; the message says how to install it."""
