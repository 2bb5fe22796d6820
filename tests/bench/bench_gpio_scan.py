"""Benchmark: the GPIO matrix scan, as GPIO operations per scan and scans per second.

Run by hand:  .venv/bin/python tests/bench/bench_gpio_scan.py [--scans N]

* operations per scan: every call the scan makes into the RPi.GPIO module, counted by the fake
  Pi (tests/hardware/fake_gpio.py) that checks each one as a Pi would;
* scans/s on the fake Pi: the scan code plus the fake's checks and matrix model;
* scans/s on a null GPIO module (calls that do nothing): the scan code's own ceiling.

On a Pi each RPi.GPIO call costs about a microsecond or two (more through rpi-lgpio), so a
scan's time there is roughly operations x call cost + rows x settle_us; the figures here tell
how much of that is the scan's own Python.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hardware"))

from fake_gpio import PI_COLUMNS, PI_ROWS, FakeGPIO, ReedBoard  # noqa: E402

from board_driver.hardware.gpio_matrix import GpioMatrix, MatrixConfig  # noqa: E402


class NullGPIO:
    """The RPi.GPIO API doing nothing: what the scan costs by itself."""

    BCM, BOARD, OUT, IN, HIGH, LOW, PUD_OFF, PUD_DOWN, PUD_UP = 11, 10, 0, 1, 1, 0, 20, 21, 22

    def __init__(self):
        self.mode = None

    def setmode(self, mode):
        self.mode = mode

    def getmode(self):
        return self.mode

    def setwarnings(self, flag):
        pass

    def setup(self, *a, **k):
        pass

    def output(self, channel, value):
        pass

    def input(self, channel):
        return 0

    def cleanup(self, channel=None):
        pass


def rate(matrix: GpioMatrix, scans: int, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(scans):
            matrix.scan()
        best = min(best, time.perf_counter() - t)
    return scans / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scans", type=int, default=2000)
    args = ap.parse_args()
    config = MatrixConfig(PI_ROWS, PI_COLUMNS, settle_us=0)
    reed = ReedBoard()
    reed.set_pieces(list(range(0, 24)) + list(range(72, 96)))      # a set-up 12x8 board: 48 pieces
    fake = FakeGPIO(reed, rows=PI_ROWS, columns=PI_COLUMNS)
    m = GpioMatrix(config, gpio=fake, delay_us=lambda us: None)
    before = len(fake.calls)
    assert len(m.scan()) == 48
    calls = fake.calls[before:]
    ops = len(calls)
    outputs = sum(1 for c in calls if c[0] == "output")
    inputs = sum(1 for c in calls if c[0] == "input")
    print(f"matrix: {len(PI_ROWS)} rows driven x {len(PI_COLUMNS)} columns read")
    print(f"GPIO operations per scan: {ops} ({outputs} output, {inputs} input)")
    fake.calls.clear()
    fake_rate = rate(m, args.scans)
    print(f"scans/s on the fake Pi:      {fake_rate:10.0f}  ({1e6 / fake_rate:7.1f} us/scan)")
    null = GpioMatrix(config, gpio=NullGPIO(), delay_us=lambda us: None)
    null_rate = rate(null, args.scans)
    print(f"scans/s on a null GPIO:      {null_rate:10.0f}  ({1e6 / null_rate:7.1f} us/scan, "
          f"{1e9 / null_rate / ops:5.0f} ns per operation)")
    settle = MatrixConfig(PI_ROWS, PI_COLUMNS).settle_us
    print(f"default settle: {settle} us x {len(PI_ROWS)} rows = {settle * len(PI_ROWS)} us per scan of waiting; "
          f"the default scan period is {MatrixConfig(PI_ROWS, PI_COLUMNS).scan_ms} ms")


if __name__ == "__main__":
    main()
