"""Fixtures for the firmware bridge tests: the firmware's own modules, fakes of its hardware,
and a pty standing in for the USB cable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "hardware" / "firmware"
if str(FIRMWARE_DIR) not in sys.path:
    # The firmware's modules are flat files on the Pico; import them the same way here.
    sys.path.insert(0, str(FIRMWARE_DIR))

from bridge_fakes import VirtualBoard  # noqa: E402  (needs the path above)


@pytest.fixture
def board(tmp_path):
    """A virtual board (firmware logic + fake pins + fake LEDs) plugged in through a pty."""
    vb = VirtualBoard(tmp_path)
    yield vb
    vb.close()
