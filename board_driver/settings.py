"""Driver settings: ``configs/defaults.yaml`` (timing, board profile, palette), read once; and
the one board-profile loader every command uses (:func:`board_name` gives the order)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from board_driver.config import configs_dir, read_yaml
from board_driver.errors import ConfigError
from board_driver.referee.layout import BoardProfile
from board_driver.referee.scene import Palette


@dataclass(frozen=True, slots=True)
class DriverSettings:
    board: str = "sim"
    debounce_ms: int = 40
    hold_ms: int = 350
    palette: Palette = field(default_factory=Palette)


def load_settings(path: Path | None = None) -> DriverSettings:
    """The settings in ``path`` (default ``configs/defaults.yaml``; defaults if it is absent)."""
    path = Path(path) if path is not None else configs_dir() / "defaults.yaml"
    if not path.exists():
        return DriverSettings()
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
    return DriverSettings(**out)


# The profile the installed service uses (written by `fairyboard install-service`).
SERVICE_BOARD = Path("/etc/fairyboard/board.yaml")


def board_name(name: str | os.PathLike | None = None, settings: DriverSettings | None = None) -> str:
    """Which board profile to use, in this order (the one documented order for every command):

    1. ``name``: a ``--board`` option (a profile name or a path);
    2. ``$FAIRYBOARD_BOARD``;
    3. ``/etc/fairyboard/board.yaml``, when it exists (the installed service's);
    4. ``driver.board`` in ``configs/defaults.yaml`` (``settings``, read when not given);
    5. ``sim``, the simulated board.
    """
    if name is not None and str(name):
        return str(name)
    env = os.environ.get("FAIRYBOARD_BOARD")
    if env:
        return env
    if SERVICE_BOARD.exists():
        return str(SERVICE_BOARD)
    board = (settings if settings is not None else load_settings()).board
    return board or "sim"


def board_path(name: str) -> Path:
    """The file of a board profile: ``name`` itself when it is a path (``.yaml``/``.yml`` or
    with a directory), else ``configs/boards/NAME.yaml``."""
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        return Path(name)
    return configs_dir() / "boards" / f"{name}.yaml"


def known_boards() -> list[str]:
    return sorted(p.stem for p in (configs_dir() / "boards").glob("*.yaml"))


def read_profile(name: str | os.PathLike | None = None, settings: DriverSettings | None = None) -> tuple[Path | None, Any]:
    """The resolved profile's file and its parsed YAML (``(None, {})`` for the built-in
    simulated board when no ``sim.yaml`` exists). Errors name the file."""
    name = board_name(name, settings)
    path = board_path(name)
    if not path.exists():
        if name == "sim":
            return None, {}
        raise ConfigError(f"board profile {name!r}: no file {path} (known: {', '.join(known_boards()) or 'none'})")
    return path, read_yaml(path)


def load_profile(name: str | os.PathLike | None = None, settings: DriverSettings | None = None) -> BoardProfile:
    """The board profile chosen by :func:`board_name`, validated (the driver's view of it: size,
    sensor map, LED order). :func:`board_driver.hardware.backends.load_board` reads the same
    file through this function and adds the devices."""
    path, data = read_profile(name, settings)
    if path is None:
        return BoardProfile()
    return BoardProfile.from_dict(data, str(path))
