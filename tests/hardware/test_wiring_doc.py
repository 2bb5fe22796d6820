"""The wiring guide's pin tables say what the profile and the firmware use."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from fake_gpio import BOARD_TO_BCM

from board_driver.hardware.backends import HardwareConfig, load_board

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


def test_one_led_supply_and_one_current_budget_everywhere():
    import fb_pins

    from board_driver.hardware.pi_leds import BUDGET_MA
    bom = (ROOT / "hardware" / "BOM.md").read_text()
    firmware = (ROOT / "hardware" / "firmware" / "README.md").read_text()
    guide = (ROOT / "docs" / "hardware.md").read_text()
    for name, text in (("WIRING.md", WIRING), ("BOM.md", bom), ("firmware/README.md", firmware)):
        assert "5 V 3 A" in text and "2.5 A" in text, name
        assert "4 A" not in text and "6 A" not in text, name
    for board in ("gpio-12x8", "pico-serial"):
        assert load_board(board).hardware.leds.budget_ma == BUDGET_MA == fb_pins.LED_BUDGET_MA == 1500
    assert "budget_ma: 1500" in guide and "budget_ma: 1500" in WIRING
    # the budget fits the fuse: 96 LEDs at 1 mA dark plus the budget's share
    assert BUDGET_MA < 2000


def test_the_reed_placement_is_never_flat_and_centred():
    text = section("## The switch matrix")
    assert "centre of the square, glass body flat" not in text
    for words in ("dead zone", "offset", "angled", "upright", "+-5 mm", "10 x 3 mm"):
        assert words in text, words
