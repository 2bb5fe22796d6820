"""Driver settings: ``configs/defaults.yaml`` (timing, board profile, palette), read once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .config import configs_dir, read_yaml
from .errors import ConfigError
from .layout import BoardProfile
from .leds import Palette


@dataclass(frozen=True, slots=True)
class Settings:
    board: str = "sim"
    debounce_ms: int = 40
    hold_ms: int = 350
    palette: Palette = field(default_factory=Palette)


def load_settings(path: Path | None = None) -> Settings:
    """The settings in ``path`` (default ``configs/defaults.yaml``; defaults if it is absent)."""
    path = Path(path) if path is not None else configs_dir() / "defaults.yaml"
    if not path.exists():
        return Settings()
    data = read_yaml(path) or {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: must be a mapping with driver and palette sections")
    for k in data:
        if k not in ("driver", "palette"):
            raise ConfigError(f"{path}: {k}: unknown key (known: driver, palette)")
    drv = data.get("driver", {}) or {}
    if not isinstance(drv, Mapping):
        raise ConfigError(f"{path}: driver: {drv!r}: must be a mapping")
    out: dict[str, Any] = {}
    for k, v in drv.items():
        if k == "board":
            if not isinstance(v, str) or not v:
                raise ConfigError(f"{path}: driver.board: {v!r}: must be a board profile name")
            out["board"] = v
        elif k in ("debounce_ms", "hold_ms"):
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 5000:
                raise ConfigError(f"{path}: driver.{k}: {v!r}: must be a whole number of milliseconds 0-5000")
            out[k] = v
        else:
            raise ConfigError(f"{path}: driver.{k}: unknown key (known: board, debounce_ms, hold_ms)")
    out["palette"] = Palette.from_dict(data.get("palette"), str(path))
    return Settings(**out)


def load_profile(name: str) -> BoardProfile:
    """A board profile by name (``configs/boards/NAME.yaml``) or path."""
    path = Path(name)
    if not (name.endswith((".yaml", ".yml")) and path.exists()):
        path = configs_dir() / "boards" / f"{name}.yaml"
    if not path.exists():
        if name == "sim":
            return BoardProfile()
        known = ", ".join(sorted(p.stem for p in (configs_dir() / "boards").glob("*.yaml"))) or "none"
        raise ConfigError(f"unknown board profile {name!r} (known: {known})")
    return BoardProfile.from_dict(read_yaml(path), str(path))
