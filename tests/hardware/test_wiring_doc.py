"""The wiring guide's pin tables say what the profile and the firmware use."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from board_driver.hardware.backends import HardwareConfig, load_board
from fake_gpio import BOARD_TO_BCM

ROOT = Path(__file__).resolve().parents[2]
WIRING = (ROOT / "hardware" / "WIRING.md").read_text()
BCM_TO_PIN = {bcm: pin for pin, bcm in BOARD_TO_BCM.items()}
FILES = "abcdefghijkl"


def section(title: str) -> str:
    start = WIRING.index(title)
    nxt = WIRING.find("\n## ", start + 1)
    return WIRING[start:nxt if nxt > 0 else None]


def test_option_a_tables_match_the_gpio_profile_and_the_header():
    text = section("## Option A")
    hw = load_board("gpio-12x8").hardware
    for r, gpio in enumerate(hw.sensors.rows):
        assert f"| rank {r + 1} | GPIO {gpio} | {BCM_TO_PIN[gpio]} |" in text
    for c, gpio in enumerate(hw.sensors.columns):
        assert f"| file {FILES[c]} | GPIO {gpio} | {BCM_TO_PIN[gpio]} |" in text
    for b in hw.buttons.buttons:
        row = next(line for line in text.splitlines() if f"| GPIO {b.pin} | {BCM_TO_PIN[b.pin]} |" in line)
        assert f'"{b.command}"' in row and (b.hold is None or f'"{b.hold}"' in row)
    assert f"| GPIO {hw.leds.pin} (SPI0 MOSI) | {BCM_TO_PIN[hw.leds.pin]} |" in text


def test_option_b_tables_match_the_firmware_pin_map():
    import fb_pins
    text = section("## Option B")
    readme = (ROOT / "hardware" / "firmware" / "README.md").read_text()
    header = {int(g): int(p) for g, p in re.findall(r"\| GP(\d+) +\| (\d+) +\|", readme)}
    for c, gp in enumerate(fb_pins.COLUMNS):
        assert f"| file {FILES[c]} | GP{gp} | {header[gp]} |" in text
    for r, gp in enumerate(fb_pins.ROWS):
        assert f"| rank {r + 1} | GP{gp} | {header[gp]} |" in text
    assert f"| GP{fb_pins.LED_DATA} | {header[fb_pins.LED_DATA]} |" in text
    assert f"| GP{fb_pins.SAFE_MODE} | {header[fb_pins.SAFE_MODE]} |" in text


def test_the_profile_example_in_the_docs_is_valid():
    doc = (ROOT / "docs" / "hardware.md").read_text()
    block = re.search(r"```yaml\n(hardware:.*?)```", doc, re.S).group(1)
    hw = HardwareConfig.from_dict(yaml.safe_load(block)["hardware"], "docs/hardware.md")
    assert hw.sensor_backend == "gpio" and hw.led_backend == "pi" and len(hw.buttons.buttons) == 2
