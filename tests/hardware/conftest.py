"""Fixtures for the hardware backends: a fake Pi (RPi.GPIO on a fake reed-switch board), the
Pico firmware's own logic behind a pty, and a virtual clock."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for extra in (ROOT / "hardware" / "firmware", ROOT / "tests" / "firmware_bridge"):
    if str(extra) not in sys.path:
        # the firmware's flat modules, and the bridge tests' fakes of the Pico (bridge_fakes);
        # appended, so that nothing there shadows a package or this folder's conftest
        sys.path.append(str(extra))

from fake_gpio import PI_COLUMNS, PI_ROWS, FakeGPIO, ReedBoard  # noqa: E402
from hw_fakes import VirtualClock  # noqa: E402


@pytest.fixture
def clock():
    return VirtualClock()


@pytest.fixture
def reed():
    return ReedBoard()


@pytest.fixture
def gpio(reed):
    return FakeGPIO(reed, rows=PI_ROWS, columns=PI_COLUMNS)
