"""hardware/schematic.svg is drawn by scripts/schematic from the firmware's pin map: redrawn here,
it must be the committed file byte for byte (change a pin in fb_pins.py and this fails until
the picture is redrawn), and it must name every pin the firmware uses, as the README's table does."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SVG = REPO / "hardware" / "schematic.svg"


def schematic_module():
    pytest.importorskip("schemdraw", reason="schemdraw is a test extra: pip install -e '.[test]'")
    loader = importlib.machinery.SourceFileLoader("schematic", str(REPO / "scripts" / "schematic"))
    spec = importlib.util.spec_from_loader("schematic", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_the_committed_schematic_is_what_the_pin_map_draws():
    mod = schematic_module()
    drawn = mod.draw(mod.load_pins())
    assert drawn == SVG.read_bytes(), "hardware/schematic.svg is stale: run .venv/bin/python scripts/schematic"


def test_the_schematic_names_every_pin_as_the_firmware_readme_does():
    mod = schematic_module()
    pins = mod.load_pins()
    text = SVG.read_text()
    readme = (REPO / "hardware" / "firmware" / "README.md").read_text()
    table = dict(re.findall(r"^\| GP(\d+) +\| (\d+) +\|", readme, re.M))
    for gpio in (*pins.COLUMNS, *pins.ROWS, pins.LED_DATA, pins.SAFE_MODE):
        assert f"GP{gpio} ({mod.PICO_HEADER[gpio]})" in text
        assert table[str(gpio)] == str(mod.PICO_HEADER[gpio]), f"README: GP{gpio}"
    for part in ("74AHCT125", "1N4148", "10 kΩ", "330 Ω", "1000 µF", "100 nF", "2.5 A", "VBUS"):
        assert part in text, part
