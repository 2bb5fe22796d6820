"""The GPIO board where the GPIO cannot be used: one line saying why, never a traceback.

RPi.GPIO installed off a Raspberry Pi (an ARM computer, an emulated root) refuses to be
imported with "This module can only be run on a Raspberry Pi!"; on a Pi whose user is not in
the gpio group the device is there but cannot be opened. A fake /dev folder stands for the
machine's devices; the fake RPi.GPIO below behaves as the real one does off a Pi.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from board_driver.errors import HardwareError
from board_driver.hardware import backends
from board_driver.hardware.backends import gpio_device_problem, open_gpio

ROOT = Path(__file__).resolve().parents[2]


def test_no_gpio_device_is_named(tmp_path):
    text = gpio_device_problem(tmp_path)
    assert text is not None and "this machine has no GPIO" in text and "gpiomem" in text and "--board sim" in text


def test_a_gpio_device_the_user_may_open_is_no_problem(tmp_path):
    (tmp_path / "gpiomem").touch()
    assert gpio_device_problem(tmp_path) is None
    (tmp_path / "gpiomem").unlink()
    (tmp_path / "gpiochip0").touch()              # a Pi 5 (rpi-lgpio) has only gpiochips
    assert gpio_device_problem(tmp_path) is None


def test_a_gpio_device_the_user_may_not_open_names_the_group(tmp_path, monkeypatch):
    (tmp_path / "gpiomem").touch()
    monkeypatch.setattr(os, "access", lambda path, mode: False)   # as for a user outside the gpio group
    text = gpio_device_problem(tmp_path)
    assert text is not None and f"no access to {tmp_path / 'gpiomem'}" in text and "usermod -aG gpio" in text


def test_rpi_gpio_refusing_to_load_off_a_pi_says_there_is_no_gpio(tmp_path, monkeypatch):
    def refuse():
        raise HardwareError("RPi.GPIO cannot run here: This module can only be run on a Raspberry Pi!")
    monkeypatch.setattr(backends, "import_gpio", refuse)
    with pytest.raises(HardwareError, match="this machine has no GPIO"):
        open_gpio(tmp_path)
    (tmp_path / "gpiomem").touch()                 # a device after all: RPi.GPIO's own words
    with pytest.raises(HardwareError, match="can only be run on a Raspberry Pi"):
        open_gpio(tmp_path)


@pytest.mark.skipif(any(Path("/dev").glob("gpiomem*")) or any(Path("/dev").glob("gpiochip*")),
                    reason="this machine has GPIO devices")
def test_serve_on_the_gpio_board_off_a_pi_prints_one_line(tmp_path):
    fake = tmp_path / "lib" / "RPi"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "GPIO.py").write_text('raise RuntimeError("This module can only be run on a Raspberry Pi!")\n')
    env = dict(os.environ, FAIRYBOARD_DATA=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join([str(tmp_path / "lib"), str(ROOT)]))
    r = subprocess.run([sys.executable, "-m", "board_driver.cli", "serve", "--board", "gpio-12x8"],
                       capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "fairyboard serve: error: this machine has no GPIO (no /dev/gpiomem or /dev/gpiochip*): a board "
        "profile with gpio sensors or buttons runs on a Raspberry Pi (elsewhere: --board sim)"]
