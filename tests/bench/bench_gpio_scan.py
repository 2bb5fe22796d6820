"""Benchmark: the GPIO matrix scan: operations and scans per second, its period under a slow reader, its CPU.

Run by hand:  .venv/bin/python tests/bench/bench_gpio_scan.py [--scans N] [--seconds S]

* operations per scan: every call the scan makes into the RPi.GPIO module, counted by the fake
  Pi (tests/hardware/fake_gpio.py) that checks each one as a Pi would;
* scans/s on the fake Pi: the scan code plus the fake's checks and matrix model;
* scans/s on a null GPIO module (calls that do nothing): the scan code's own ceiling.

On a Pi each RPi.GPIO call costs about a microsecond or two (more through rpi-lgpio), so a
scan's time there is roughly operations x call cost + rows x settle_us; the figures here tell
how much of that is the scan's own Python.

Then the period, side by side over ``S`` seconds each, on the fake Pi's own record of when
every scan started (its first row driven high), with the default 25 us settle slept (the
scan's default, :func:`sleep_us`) unless said, at full rate (no idle slowdown):

* the scan in the reader's thread (``read`` scanning, as before the scan thread), the reader
  spending 10 ms on a commit after every frame;
* the scan thread with the same reader;
* the scan thread with a reader that has nothing to do (an idle service): the scan's own CPU,
  with the settle busy-waited and slept side by side.

Lateness is how long after its instant (``t0 + k * period``) a scan started; a scan a whole
period or more late has missed an instant. Goal: with the scan thread, no instant missed (late
by less than one period) under a 10 ms commit.
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

import collections  # noqa: E402
import threading  # noqa: E402

from board_driver.hardware.gpio_matrix import GpioMatrix, MatrixConfig, busy_wait_us, sleep_us  # noqa: E402


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


class NullRegisters:
    """The GPIO bank doing nothing: what a scan a register at a time costs by itself."""

    def set(self, mask):
        pass

    def clear(self, mask):
        pass

    def levels(self):
        return 0

    def close(self):
        pass


def rate(matrix: GpioMatrix, scans: int, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(scans):
            matrix.scan()
        best = min(best, time.perf_counter() - t)
    return scans / best


def commit(ms: float) -> None:
    """A commit's work: the CPU busy (and the interpreter's lock held) for ``ms``."""
    end = time.perf_counter() + ms / 1000
    n = 0
    while time.perf_counter() < end:
        n += sum(i * i for i in range(200))


def lateness(stamps: list[float], period: float) -> tuple[list[float], int]:
    """How late each scan started after the instant it served, and how many instants no
    scan served (a scan a period or more late serves the latest instant already passed)."""
    late, missed, k_prev = [], 0, 0
    s0 = stamps[0]
    for s in stamps[1:]:
        k = max(k_prev + 1, int((s - s0) / period))
        missed += k - k_prev - 1
        late.append(s - (s0 + k * period))
        k_prev = k
    return late, missed


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def period_run(threaded: bool, commit_ms: float, seconds: float, wait=sleep_us, registers: bool = False) -> dict:
    """Scans for ``seconds`` with a reader committing ``commit_ms`` after every frame, the
    settle waited by ``wait``, pin by pin or a register at a time; at full rate throughout
    (no idle slowdown)."""
    config = MatrixConfig(PI_ROWS, PI_COLUMNS, idle_scan_ms=0)
    reed = ReedBoard()
    reed.set_pieces(list(range(0, 24)) + list(range(72, 96)))
    fake = FakeGPIO(reed, rows=PI_ROWS, columns=PI_COLUMNS)
    fake.calls = collections.deque(maxlen=1000)      # type: ignore[assignment]
    m = GpioMatrix(config, gpio=fake, delay_us=lambda us: (wait(us), fake.delay_us(us)),
                   registers=fake.registers() if registers else None)
    if threaded:
        m.start()
    cpu0, t0 = time.process_time(), time.monotonic()
    end = t0 + seconds
    frames = 0
    flip = 0
    while time.monotonic() < end:
        if commit_ms:
            flip += 1
            reed.set_pieces([flip % 96])                # something moves: a frame every scan
        f = m.read(0.05)
        if f is not None:
            frames += 1
            if commit_ms:
                commit(commit_ms)
    cpu = time.process_time() - cpu0
    wall = time.monotonic() - t0
    m.close()
    period = config.scan_ms / 1000
    late, missed = lateness(fake.scan_times, period)
    return {"scans": len(fake.scan_times), "frames": frames, "late": late, "missed": missed,
            "cpu": cpu / wall, "period": period}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scans", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=5.0)
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
    fake = FakeGPIO(reed, rows=PI_ROWS, columns=PI_COLUMNS)
    m = GpioMatrix(config, gpio=fake, delay_us=lambda us: None, registers=fake.registers())
    before = len(fake.calls)
    assert len(m.scan()) == 48
    calls = fake.calls[before:]
    reg_ops = len(calls)
    print(f"a register at a time (/dev/gpiomem, Pi 1-4): {reg_ops} operations per scan "
          f"({sum(1 for c in calls if c[0] == 'set')} set, {sum(1 for c in calls if c[0] == 'clear')} clear, "
          f"{sum(1 for c in calls if c[0] == 'levels')} level reads): {ops / reg_ops:.1f}x fewer")
    fake.calls.clear()
    reg_rate = rate(m, args.scans)
    print(f"scans/s on the fake Pi's registers: {reg_rate:10.0f}  ({1e6 / reg_rate:7.1f} us/scan)")
    null = GpioMatrix(config, gpio=NullGPIO(), delay_us=lambda us: None, registers=NullRegisters())
    null_reg = rate(null, args.scans)
    print(f"scans/s on null registers:   {null_reg:10.0f}  ({1e6 / null_reg:7.1f} us/scan: "
          f"{null_reg / null_rate:.1f}x the pin-by-pin scan's ceiling)")
    settle = MatrixConfig(PI_ROWS, PI_COLUMNS).settle_us
    print(f"default settle: {settle} us x {len(PI_ROWS)} rows = {settle * len(PI_ROWS)} us per scan of waiting; "
          f"the default scan period is {MatrixConfig(PI_ROWS, PI_COLUMNS).scan_ms} ms")
    periods(args.seconds)



def periods(seconds: float) -> None:
    runs = [("scan in the reader's thread, 10 ms commits", period_run(False, 10, seconds)),
            ("scan thread, 10 ms commits", period_run(True, 10, seconds)),
            ("scan thread, idle reader, settle busy-waited", period_run(True, 0, seconds, busy_wait_us)),
            ("scan thread, idle reader, settle slept", period_run(True, 0, seconds)),
            ("scan thread, idle reader, slept, registers", period_run(True, 0, seconds, registers=True))]
    period_ms = runs[0][1]["period"] * 1000
    print(f"\nscan period {period_ms:.0f} ms, {seconds:.0f} s each, lateness of each scan after its instant (ms):")
    print(f"  {'':44} {'scans':>6} {'p50':>6} {'p99':>6} {'max':>6} {'missed':>7} {'CPU':>6}")
    for name, r in runs:
        late = [x * 1000 for x in r["late"]]
        print(f"  {name:44} {r['scans']:6d} {pct(late, .5):6.2f} {pct(late, .99):6.2f} {max(late):6.2f} "
              f"{r['missed']:7d} {100 * r['cpu']:5.1f}%")
    for name, r in runs[2:]:
        print(f"  the scan's own cost, idle, {name.split(', ', 2)[2]}: {100 * r['cpu']:.1f}% of a core "
              f"({1000 * r['cpu'] * seconds / max(1, r['scans']):.3f} ms CPU per scan)")
    print(f"  {threading.active_count()} threads left")


if __name__ == "__main__":
    main()
