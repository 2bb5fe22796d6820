"""main.py, unchanged, on the real MicroPython interpreter (the unix port), talked to by the
project's own host code -- firmware_bridge.Link and `fairyboard selftest` -- over a pty: what the
CPython fakes cannot show (MicroPython's own int, bytes, struct, select and viper), through the
protocol's behaviour. The rp2 tick period is shimmed to 2**30 and starts 1.5 s before its wrap,
so every test runs through one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from firmware_bridge import Hello, Link, LinkTimings, Occupancy, OccupancyReason, Pong
from firmware_bridge.link import LinkState

REPO = Path(__file__).resolve().parents[2]
R, G, B = 1, 0, 2          # where each colour sits in an LED's 3 bytes: WS2812s take G, R, B

pytestmark = pytest.mark.slow


def items_until(link, pred, timeout=5.0):
    got, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        item = link.get(timeout=0.05)
        if item is not None:
            got.append(item.message)
            if pred(item.message):
                return got
    raise AssertionError(f"not seen in {timeout} s; got {got}")


@pytest.fixture
def link(unix_board):
    lk = Link([unix_board.port], timings=LinkTimings(listen_first=0.3))
    lk.start()
    yield lk
    lk.close()
    assert "Traceback" not in unix_board.stderr(), unix_board.stderr()


def test_the_link_becomes_ready_and_the_board_tells_what_it_has(link, unix_board):
    hello = link.wait_ready(10.0)
    assert isinstance(hello, Hello) and (hello.sensor_count, hello.led_count, hello.files, hello.ranks) == (96, 96, 12, 8)
    assert hello.protocol_version == 1
    assert link.state is LinkState.READY


def test_occupancy_follows_the_magnets_across_the_tick_wrap(link, unix_board):
    unix_board.set_closed({0, 11, 95})
    link.wait_ready(10.0)
    items_until(link, lambda m: isinstance(m, Occupancy) and m.closed == {0, 11, 95})
    t0 = time.monotonic()
    unix_board.set_closed({0, 11, 94})                      # l8 -> k8
    got = items_until(link, lambda m: isinstance(m, Occupancy) and m.closed == {0, 11, 94})
    assert got[-1].reason == OccupancyReason.CHANGE
    assert time.monotonic() - t0 < 1.0
    time.sleep(max(0.0, 2.0 - (time.monotonic() - t0)))    # past the ticks wrap (1.5 s after boot)
    unix_board.set_closed(set())
    got = items_until(link, lambda m: isinstance(m, Occupancy) and m.closed == set())
    h = link.health()
    assert h.occupancy_lost == 0 and h.crc_errors == 0 and h.framing_errors == 0 and h.board_resets == 0


def test_led_frames_reach_the_strip_scaled_and_are_acknowledged(link, unix_board):
    link.wait_ready(10.0)
    colours = [(255, 0, 0), (0, 128, 0), (0, 0, 64)] + [(10, 20, 30)] * 93
    link.send_leds(colours, brightness=128)
    deadline = time.monotonic() + 5
    want = bytearray(3 * 96)
    for i, c in enumerate(colours):
        for k, off in enumerate((R, G, B)):
            want[3 * i + off] = (c[k] * 128 + 127) // 255
    while time.monotonic() < deadline and not (link.health().leds_acked and unix_board.strip_frames()[-1:] == [want]):
        time.sleep(0.05)
    assert unix_board.strip_frames()[-1] == want
    assert link.health().leds_acked


def test_ping_is_answered(link, unix_board):
    link.wait_ready(10.0)
    token = link.ping()
    items_until(link, lambda m: isinstance(m, Pong) and m.token == token)


def test_selftest_cli_checks_the_board(unix_board, tmp_path):
    unix_board.set_closed({26, 93})          # c3, j8 with the identity map and files a..l
    data = yaml.safe_load((REPO / "configs" / "boards" / "pico-serial.yaml").read_text())
    data["hardware"]["sensors"]["ports"] = [unix_board.port]
    profile = tmp_path / "board.yaml"
    profile.write_text(yaml.safe_dump(data, sort_keys=False))
    exe = Path(sys.executable).with_name("fairyboard")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "board_driver.cli"]
    r = subprocess.run(cmd + ["selftest", "--board", str(profile), "--seconds", "1", "--json"],
                       capture_output=True, text=True, timeout=120, cwd=REPO,
                       env={**os.environ, "FAIRYBOARD_DATA": str(tmp_path / "data")})
    assert r.returncode == 0, r.stdout + r.stderr
    found = json.loads(r.stdout)
    assert found["link"]["state"] == "LinkState.READY" and found["link"]["crc_errors"] == 0
    assert sorted(found["sensors"]["closed"]) == ["c3", "j8"]
    frames = unix_board.strip_frames()
    reds = [f for f in frames if f[R] and not f[G] and not f[B] and len(set(f[R::3])) == 1]
    assert reds, "the selftest's all-red pattern never reached the strip"
    assert "Traceback" not in unix_board.stderr(), unix_board.stderr()
