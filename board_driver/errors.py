"""Errors of the board driver."""


class BoardDriverError(Exception):
    """Root of every error the board driver raises."""


class ConfigError(BoardDriverError, ValueError):
    """A configuration file, key or value is invalid."""
