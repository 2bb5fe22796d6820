"""One board-profile loader: every command resolves the profile in the same documented order,
and a sensor map that misses squares is refused with the file, the key and the squares."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from board_driver.config import configs_dir
from board_driver.errors import ConfigError
from board_driver.hardware.backends import load_board
from board_driver.settings import DriverSettings, board_name, load_profile

ROOT = Path(__file__).resolve().parents[2]


def write_profile(path: Path, **changes) -> Path:
    data = yaml.safe_load((configs_dir() / "boards" / "sim.yaml").read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))
    return path


def test_order_option_then_environment_then_settings_then_sim(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRYBOARD_BOARD", raising=False)
    monkeypatch.setattr("board_driver.settings.SERVICE_BOARD", tmp_path / "absent.yaml")
    assert board_name(None, DriverSettings(board="sim")) == "sim"
    assert board_name(None, DriverSettings(board="pico-serial")) == "pico-serial"
    service = write_profile(tmp_path / "board.yaml", name="installed")
    monkeypatch.setattr("board_driver.settings.SERVICE_BOARD", service)
    assert board_name(None, DriverSettings(board="pico-serial")) == str(service)
    env = write_profile(tmp_path / "env.yaml", name="from-env")
    monkeypatch.setenv("FAIRYBOARD_BOARD", str(env))
    assert board_name(None, DriverSettings()) == str(env)
    assert board_name("gpio-12x8", DriverSettings()) == "gpio-12x8"


@pytest.mark.parametrize("chosen", ["env", "service"])
def test_play_and_the_hardware_commands_load_the_same_profile(tmp_path, monkeypatch, chosen):
    monkeypatch.delenv("FAIRYBOARD_BOARD", raising=False)
    path = write_profile(tmp_path / "mine.yaml", name="mine", leds={"order": "serpentine", "first": "l8"})
    if chosen == "env":
        monkeypatch.setenv("FAIRYBOARD_BOARD", str(path))
        monkeypatch.setattr("board_driver.settings.SERVICE_BOARD", tmp_path / "absent.yaml")
    else:
        monkeypatch.setattr("board_driver.settings.SERVICE_BOARD", path)
    profile = load_profile()
    board = load_board()
    assert profile.name == board.profile.name == "mine"
    assert profile.led_order == board.profile.led_order
    assert board.path == path


def test_sensor_map_missing_squares_names_file_key_and_squares(tmp_path):
    names = [f"{f}{r}" for r in range(1, 9) for f in "abcdefghijkl"]
    names.remove("c3")
    names.remove("k8")
    path = write_profile(tmp_path / "short.yaml", sensors=names)
    for load in (load_profile, load_board):
        with pytest.raises(ConfigError) as err:
            load(str(path))
        msg = str(err.value)
        assert str(path) in msg and "sensors" in msg and "c3" in msg and "k8" in msg
        assert "index" not in msg


def test_selftest_reports_a_broken_sensor_map_instead_of_all_fine(tmp_path):
    names = [f"{f}{r}" for r in range(1, 9) for f in "abcdefghijkl"][:-1]     # l8 forgotten
    path = write_profile(tmp_path / "short.yaml", sensors=names)
    run = lambda *extra: subprocess.run(
        [sys.executable, "-m", "board_driver.cli", "selftest", "--board", str(path), "--seconds", "0",
         "--no-leds", *extra], capture_output=True, text=True, cwd=ROOT, timeout=60,
        env={**os.environ, "FAIRYBOARD_DATA": str(tmp_path / "data")})
    r = run()
    assert r.returncode == 1, r.stderr
    assert "all fine" not in r.stdout
    assert "PROBLEM: config:" in r.stdout and "l8" in r.stdout and str(path) in r.stdout
    found = json.loads(run("--json").stdout)
    assert any("l8" in p for p in found["problems"])


def test_packaged_configs_are_found_without_the_environment(monkeypatch):
    monkeypatch.delenv("FAIRYBOARD_CONFIGS", raising=False)
    assert (configs_dir() / "variants" / "orthodox.yaml").is_file()
    assert (configs_dir() / "boards" / "sim.yaml").is_file()


def test_environment_overrides_the_packaged_configs(tmp_path, monkeypatch):
    (tmp_path / "variants").mkdir()
    (tmp_path / "variants" / "orthodox.yaml").write_text(
        (ROOT / "configs" / "variants" / "orthodox.yaml").read_text())
    monkeypatch.setenv("FAIRYBOARD_CONFIGS", str(tmp_path))
    from board_driver.config import variant_names
    assert variant_names() == ["orthodox"]
