"""Reading configuration files: variants (``configs/variants/*.yaml``) and the random variants.

Config is read once, validated into frozen values and passed down; YAML only through a safe
loader (libyaml's when PyYAML has it); errors name the file, the key and the bad value. The configs folder is
``$FAIRYBOARD_CONFIGS`` when set, else the ``configs`` data shipped inside the ``board_driver``
package (in a checkout, ``board_driver/configs`` links to the top-level ``configs/``).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from board_driver.errors import ConfigError
from engine.errors import VariantError
from engine.variant import Variant

# libyaml's safe loader when PyYAML was built with it (several times faster), else the Python one.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_RANDOM = re.compile(r"^random-([1-6])-([1-6])-([1-6])$")


def configs_dir() -> Path:
    """The folder holding ``defaults.yaml``, ``variants/`` and ``boards/``."""
    env = os.environ.get("FAIRYBOARD_CONFIGS")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent / "configs"
    if here.is_dir():       # installed as files (the usual case): no need for importlib.resources
        return here
    from importlib import resources

    return Path(str(resources.files("board_driver").joinpath("configs")))


MAX_YAML_BYTES = 1 << 20
"""The largest configuration file read (1 MiB): a variant or a board profile is a few KB, a
calibrated profile with its sensor map some tens; anything longer (``--board /dev/zero``) is
refused before it is held in memory."""


def read_yaml(path: Path) -> Any:
    """Parse one YAML file; ConfigError names the file and the line of a syntax error, and
    says when the path is no configuration file at all (a device, a folder, more than
    :data:`MAX_YAML_BYTES`, not UTF-8 text)."""
    try:
        with open(path, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                raise ConfigError(f"{path}: a device, not a YAML file (a board's serial port is named in its "
                                  f"profile: hardware.sensors.port, docs/hardware.md)")
            raw = f.read(MAX_YAML_BYTES + 1)
    except IsADirectoryError:
        raise ConfigError(f"{path}: a folder, not a YAML file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(f"{path}: longer than {MAX_YAML_BYTES >> 20} MiB: not a configuration file "
                          f"(a profile or a variant is a few KB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}): not a YAML file") from None
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}:{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None


def variant_names() -> list[str]:
    return sorted(p.stem for p in (configs_dir() / "variants").glob("*.yaml"))


def load_variant(name: str, rng=None) -> Variant:
    """A variant by name (``configs/variants/NAME.yaml``, or ``random-A-B-C`` for the dice
    outcome A-B-C, or ``random`` to throw the three dice now, with ``rng``), or by the path of
    a YAML file. The variant's name is always the resolved one (``random-1-3-6``)."""
    if name == "random":
        import random

        from engine import random_variant

        return random_variant_for(random_variant.roll(rng or random.Random()))
    m = _RANDOM.match(name)
    if m:
        return random_variant_for(tuple(int(x) for x in m.groups()))
    path = Path(name)
    if not (name.endswith((".yaml", ".yml")) and path.exists()):
        path = configs_dir() / "variants" / f"{name}.yaml"
        if not path.exists():
            known = ", ".join(variant_names())
            raise ConfigError(f"unknown variant {name!r} (known: {known}, random-A-B-C for dice A-B-C, "
                              "and random to throw the dice)")
    data = read_yaml(path)
    try:
        return Variant.from_dict(data, str(path))
    except VariantError as exc:
        raise ConfigError(str(exc)) from None


def random_variant_for(dice) -> Variant:
    """The Tomorrow's Chess array three dice select, with variant 1's rules (castling,
    scoring); its name is ``random-A-B-C`` with the dice sorted."""
    from engine import random_variant

    rv = random_variant.select(dice)
    base = read_yaml(configs_dir() / "variants" / "tomorrow-1.yaml")
    name = "random-" + "-".join(str(d) for d in rv.dice)
    data = dict(base)
    data.update(name=name, description=f"Random Variant Chess {'-'.join(map(str, rv.dice))}: {rv.description}",
                back_rank=list(rv.back_rank))
    data.pop("pieces", None)
    return Variant.from_dict(data, f"<dice {'-'.join(map(str, rv.dice))}>")
