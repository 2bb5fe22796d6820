"""Benchmark: the firmware's speed on the emulated Pico, in the chip's simulated time (a script,
not a test; tests/firmware/test_pico_speed.py holds the goals as tests).

Boots the stock MicroPython for RPI_PICO on rp2040js with the firmware installed as its README
says (the working tree's, or that of git revision ``--rev`` for a before/after), and prints:

* LED_FRAME with 96 LEDs: the board's last byte in -> the first byte of LED_ACK (min/median/max)
* PING -> PONG, likewise
* USB packets per frame the board sent
* with LED frames arriving at 20 a second for 2 s and a magnet put down half-way: LED_ACKs,
  the longest gap between two scans (the scan period is 10 ms), when the change was reported
* the CPU's busy share, idle and under those LED frames

Simulated time does not depend on the machine running the emulator: the figures repeat.

    .venv/bin/python tests/bench/bench_pico.py [--rev c60acb1] [--frames 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path[:0] = [str(HERE.parents[1] / "firmware"), str(HERE.parents[1] / "firmware_bridge"), str(HERE.parents[2])]

import pico_emu  # noqa: E402
from firmware_bridge import LedAck, LedFrame, Occupancy, OccupancyReason, Ping, Pong, encode  # noqa: E402
from pico_emu import MS, board_frames, last_in  # noqa: E402


def firmware_at(rev: str | None, work: Path) -> Path:
    if rev is None:
        return pico_emu.FIRMWARE_DIR
    out = work / "firmware-src"
    out.mkdir()
    tar = subprocess.run(["git", "-C", str(pico_emu.REPO), "archive", rev, "hardware/firmware"],
                         capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=tar, check=True)
    return out / "hardware" / "firmware"


def answer_ms(pico, msg, kind, run_ms):
    pico.log()
    pico.send(b"\x00" + encode(msg))
    pico.run_ms(run_ms)
    log = pico.log()
    frames = board_frames(log)
    first = next(f for f in frames if isinstance(f[3], kind))
    return (first[0] - last_in(log)) / MS, frames


def spread(xs):
    return f"min {min(xs):.2f}  median {statistics.median(xs):.2f}  max {max(xs):.2f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", help="measure the firmware of this git revision instead of the working tree")
    ap.add_argument("--frames", type=int, default=10, help="LED frames and pings to time (default 10)")
    args = ap.parse_args()
    reason = pico_emu.why_not()
    if reason:
        print("bench_pico:", reason)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        image = pico_emu.build_filesystem(work / "fs", firmware_at(args.rev, work))
        pico = pico_emu.Pico(image, pty=False)
        try:
            pico.run_ms(400)
            pico.log()
            leds, pings, packets = [], [], []
            for k in range(args.frames):
                colours = [((i * 37 + k) % 256, (i * 91) % 256, (i * 13) % 256) for i in range(96)]
                took, frames = answer_ms(pico, LedFrame(k, colours, brightness=128), LedAck, 200)
                leds.append(took)
                took, frames = answer_ms(pico, Ping(k), Pong, 30)
                pings.append(took)
                packets += [f[2] for f in frames]
            pico.run_ms(1000)
            cpu = pico.log()["cpu"]
            idle_busy = cpu["busy_ns"] / (cpu["busy_ns"] + cpu["idle_ns"])
            start = pico.now()
            moved = None
            for k in range(40):
                colours = [((i + k) % 256, (3 * i) % 256, k % 256) for i in range(96)]
                pico.send(b"\x00" + encode(LedFrame(1000 + k, colours, brightness=40)))
                if k == 20:
                    pico.run_until(start + int((k * 50 + 25) * MS))
                    pico.set_closed({60})
                    moved = pico.now()
                pico.run_until(start + int((k + 1) * 50 * MS))
            log = pico.log()
        finally:
            pico.close()
    gaps = [(b - a) / MS for a, b in zip(log["scans"], log["scans"][1:])]
    frames = board_frames(log)
    acks = sum(isinstance(f[3], LedAck) for f in frames)
    change = [f for f in frames if isinstance(f[3], Occupancy) and f[3].reason == OccupancyReason.CHANGE]
    busy = log["cpu"]["busy_ns"] / (log["cpu"]["busy_ns"] + log["cpu"]["idle_ns"])
    print(f"firmware: {args.rev or 'working tree'} (simulated time on the emulated RP2040)")
    print(f"LED_FRAME, 96 LEDs -> LED_ACK: {spread(leds)}")
    print(f"PING -> PONG:                  {spread(pings)}")
    print(f"USB packets per frame sent:    max {max(packets)}, mean {statistics.mean(packets):.1f}")
    print(f"20 LED frames/s for 2 s:       {acks} of 40 acknowledged, longest gap between scans "
          f"{max(gaps):.1f} ms, change reported after "
          f"{(change[0][0] - moved) / MS:.1f} ms" if change else "change never reported")
    print(f"CPU busy:                      idle board {idle_busy:.0%}, 20 LED frames/s {busy:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
