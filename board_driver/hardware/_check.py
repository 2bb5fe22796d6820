"""Validation of the ``hardware:`` section of a board profile: every error names the file, the
key (as a dotted path) and the bad value."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from board_driver.errors import ConfigError

_MISSING = object()

#: BCM GPIO numbers on the Pi's 40-pin header.
BCM_PINS = range(0, 28)


class Section:
    """One mapping of a config file, read key by key; ``where`` is its dotted path."""

    __slots__ = ("data", "source", "where")

    def __init__(self, data: Any, source: str, where: str) -> None:
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: {where}: {data!r}: must be a mapping")
        self.data, self.source, self.where = data, source, where

    def key(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, value: Any, why: str) -> ConfigError:
        return ConfigError(f"{self.source}: {self.key(key)}: {value!r}: {why}")

    def only(self, known: Sequence[str]) -> None:
        for k in self.data:
            if k not in known:
                raise ConfigError(f"{self.source}: {self.key(str(k))}: unknown key "
                                  f"(known: {', '.join(sorted(known))})")

    def has(self, key: str) -> bool:
        return key in self.data

    def section(self, key: str) -> "Section":
        return Section(self.data.get(key), self.source, self.key(key))

    def get(self, key: str, default: Any = _MISSING) -> Any:
        if key not in self.data:
            if default is _MISSING:
                raise ConfigError(f"{self.source}: {self.key(key)}: missing")
            return default
        return self.data[key]

    def integer(self, key: str, default: Any = _MISSING, lo: int | None = None, hi: int | None = None) -> int:
        v = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(key, v, "must be a whole number")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self.fail(key, v, f"must be from {lo} to {hi}")
        return v

    def number(self, key: str, default: Any = _MISSING, lo: float | None = None, hi: float | None = None) -> float:
        v = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail(key, v, "must be a number")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self.fail(key, v, f"must be from {lo} to {hi}")
        return float(v)

    def choice(self, key: str, choices: Sequence[str], default: Any = _MISSING) -> str:
        v = self.get(key, default)
        if v not in choices:
            raise self.fail(key, v, f"use one of {', '.join(choices)}")
        return v

    def text(self, key: str, default: Any = _MISSING) -> str:
        v = self.get(key, default)
        if not isinstance(v, str) or not v.strip():
            raise self.fail(key, v, "must be a non-empty string")
        return v

    def pin(self, key: str, default: Any = _MISSING) -> int:
        v = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v not in BCM_PINS:
            raise self.fail(key, v, f"must be a BCM GPIO number {BCM_PINS.start}..{BCM_PINS.stop - 1}")
        return v

    def pins(self, key: str, count: int | None = None) -> tuple[int, ...]:
        v = self.get(key)
        if not isinstance(v, (list, tuple)):
            raise self.fail(key, v, "must be a list of BCM GPIO numbers")
        if count is not None and len(v) != count:
            raise self.fail(key, v, f"must list {count} GPIO numbers, not {len(v)}")
        out = []
        for i, p in enumerate(v):
            if isinstance(p, bool) or not isinstance(p, int) or p not in BCM_PINS:
                raise ConfigError(f"{self.source}: {self.key(key)}[{i}]: {p!r}: must be a BCM GPIO number "
                                  f"{BCM_PINS.start}..{BCM_PINS.stop - 1}")
            if p in out:
                raise ConfigError(f"{self.source}: {self.key(key)}[{i}]: {p!r}: GPIO {p} is listed twice")
            out.append(p)
        return tuple(out)
