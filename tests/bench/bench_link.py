"""Benchmark of the board link: codec throughput and round-trip latency over a pty.

Run by hand from the repository root:

    .venv/bin/python tests/bench/bench_link.py [--seconds 1.0] [--round-trips 2000]

Prints frames/s through the codec (encode and decode; occupancy and LED frames) and the
round-trip time of PING -> PONG and LED_FRAME -> LED_ACK through a real pty to the
firmware's own logic running in a separate process on fake pins (p50, p99, max), next to a
baseline: the same pty with a process that only echoes bytes. What the link adds is the
difference. Goals: codec over 10,000 frames/s; the link adds under 2 ms at p99.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for extra in (REPO, REPO / "hardware" / "firmware", REPO / "tests" / "firmware_bridge"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from firmware_bridge import Blink, Decoder, LedFrame, Occupancy, Pong, encode  # noqa: E402
from firmware_bridge.link import Link, LinkTimings  # noqa: E402

# --- codec --------------------------------------------------------------------------------------

def best_of(measure, seconds: float, runs: int = 5) -> float:
    """The best of ``runs`` measurements of ``seconds / runs`` each (other load only slows runs)."""
    return max(measure(seconds / runs) for _ in range(runs))


def rate(fn, seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds``."""
    n, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(100):
            fn()
        n += 100
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def decode_rate(msg, seconds: float) -> float:
    """Frames per second through Decoder.feed, the stream fed in 4 KiB reads."""
    wire = encode(msg)
    per_chunk = max(1, 4096 // len(wire))
    chunk = wire * per_chunk
    decoder = Decoder()
    n, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        got = decoder.feed(chunk)
        assert len(got) == per_chunk
        n += per_chunk
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def bench_codec(seconds: float) -> None:
    typical = [(0, 0, 0)] * 96
    for i, colour in ((4, (255, 255, 0)), (20, (0, 255, 0)), (28, (0, 255, 0)), (40, (255, 0, 0))):
        typical[i] = colour
    cases = [
        ("occupancy, 96 sensors, 32 closed", Occupancy.from_closed(123, 96, range(0, 96, 3))),
        ("LED frame, 96 LEDs, all dark", LedFrame(7, [(0, 0, 0)] * 96)),
        ("LED frame, 96 LEDs, 4 lit, 1 blinking", LedFrame.build(7, typical, {4: Blink.SLOW}, 128)),
        ("LED frame, 96 LEDs, all lit", LedFrame(7, [(200, 120, 40)] * 96)),
    ]
    print("codec (frames/s, best of 5 runs; goal > 10,000)")
    print(f"  {'':40s} {'encode':>10s} {'decode':>10s} {'bytes':>6s}")
    for name, msg in cases:
        enc = best_of(lambda t: rate(lambda: encode(msg), t), seconds)
        dec = best_of(lambda t: decode_rate(msg, t), seconds)
        print(f"  {name:40s} {enc:10,.0f} {dec:10,.0f} {len(encode(msg)):6d}")


# --- round trips over a pty -------------------------------------------------------------------

def board_process() -> None:
    """Child process: the firmware on fake pins behind a pty; prints the port, runs until stdin closes."""
    from bridge_fakes import RealTicks, VirtualBoard

    board = VirtualBoard(Path(tempfile.mkdtemp(prefix="fairyboard-bench-")), ticks=RealTicks())
    board.cable.host_connected = True  # the host opens the port after this line is read
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    print(board.cable.path, flush=True)
    try:
        board.run_forever(stop)
    finally:
        board.close()


def echo_process() -> None:
    """Child process: a pty that echoes every byte back, to time the bare transport."""
    import pty
    import select
    import tty

    master, slave = pty.openpty()
    tty.setraw(slave)
    print(os.ttyname(slave), flush=True)
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.is_set():
        if select.select([master], [], [], 0.05)[0]:
            os.write(master, os.read(master, 4096))


def percentile(sorted_values: list[float], p: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[index]


def report(name: str, samples: list[float]) -> None:
    s = sorted(samples)
    ms = [x * 1000 for x in (percentile(s, 50), percentile(s, 99), s[-1], statistics.fmean(s))]
    print(f"  {name:40s} p50 {ms[0]:6.3f}  p99 {ms[1]:6.3f}  max {ms[2]:6.3f}  mean {ms[3]:6.3f}  (n={len(s)})")


def bench_bare_pty(round_trips: int) -> list[float]:
    """Round trips of a 9-byte frame through a pty to a process that only echoes it."""
    import serial

    child = subprocess.Popen([sys.executable, __file__, "--echo-process"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        port = serial.serial_for_url(child.stdout.readline().strip(), timeout=1.0)
        frame = encode(Pong(1))
        samples = []
        for i in range(round_trips + 50):
            start = time.perf_counter()
            port.write(frame)
            got = port.read(len(frame))
            assert got == frame, got
            if i >= 50:
                samples.append(time.perf_counter() - start)
        port.close()
    finally:
        child.stdin.close()
        child.wait(timeout=10)
    return samples


def bench_link(round_trips: int) -> None:
    child = subprocess.Popen([sys.executable, __file__, "--board-process"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        port = child.stdout.readline().strip()
        link = Link([port], timings=LinkTimings(read_timeout=0.05))
        link.open()
        link.wait_ready(5.0)

        def wait(condition, timeout=1.0):
            deadline = time.perf_counter() + timeout
            while not condition():
                link.service()
                if time.perf_counter() > deadline:
                    raise TimeoutError("no answer from the board process")

        pings = []
        for i in range(round_trips + 50):
            start = time.perf_counter()
            token = link.ping()
            wait(lambda: any(isinstance(r.message, Pong) and r.message.token == token for r in link.drain()))
            if i >= 50:  # warm-up
                pings.append(time.perf_counter() - start)

        leds = []
        colours = [(0, 0, 0)] * 96
        for i in range(round_trips // 2 + 20):
            colours[i % 96] = (i % 256, 255 - i % 256, 7)
            start = time.perf_counter()
            link.send_leds(colours)
            wait(lambda: link.health().leds_acked)
            if i >= 20:
                leds.append(time.perf_counter() - start)
        health = link.health()
        link.close()
    finally:
        child.stdin.close()
        child.wait(timeout=10)
    bare = bench_bare_pty(round_trips)
    print("round trip over a pty to the firmware logic in another process (ms)")
    report("bare pty echo, 9 bytes (baseline)", bare)
    report("PING -> PONG", pings)
    report("LED_FRAME (96 LEDs) -> LED_ACK", leds)
    b50, b99 = percentile(sorted(bare), 50), percentile(sorted(bare), 99)
    for name, samples in (("PING -> PONG", pings), ("LED_FRAME -> LED_ACK", leds)):
        s = sorted(samples)
        print(f"  link adds to the bare pty, {name:22s} p50 {1000 * (percentile(s, 50) - b50):6.3f}"
              f"  p99 {1000 * (percentile(s, 99) - b99):6.3f}  (goal p99 < 2)")
    print(f"  errors: crc {health.crc_errors}, framing {health.framing_errors}, "
          f"message {health.message_errors}, LED resends {health.led_resends}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per codec measurement")
    parser.add_argument("--round-trips", type=int, default=2000, help="PINGs to time (half as many LED frames)")
    parser.add_argument("--board-process", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--echo-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.board_process:
        board_process()
        return
    if args.echo_process:
        echo_process()
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Python {sys.version.split()[0]} on {os.uname().machine}, {os.cpu_count()} CPUs, load {load:.2f}")
    bench_codec(args.seconds)
    bench_link(args.round_trips)


if __name__ == "__main__":
    main()
